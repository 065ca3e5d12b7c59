/** sealmark's own version (from package.json) and the methodology version its verdicts follow. */
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

/** The CLI and library version, e.g. `0.1.0`. */
export const VERSION: string = pkg.version;

/**
 * Version of the grading rules (SPEC). Bumped when a verdict can change for the same replies, so
 * that grades from different methodology versions are never compared silently.
 */
export const METHODOLOGY_VERSION = '0.1';
