/**
 * The registry of checks, in report order. Adding a check: one file in src/checks named after its
 * id, an entry here and in src/packs.ts, a test, and `npm run docs` (a test fails otherwise).
 */
import type { Check } from './check.js';
import { check as handshake } from './handshake.js';
import { check as robustInput } from './robust-input.js';
import { check as protocolErrors } from './protocol-errors.js';
import { check as toolSchemas } from './tool-schemas.js';

/** Every check sealmark has, keyed by nothing: order is report order. */
export const checks: readonly Check[] = [handshake, robustInput, protocolErrors, toolSchemas];

/** The check with this id, or undefined. */
export function checkById(id: string): Check | undefined {
  return checks.find((c) => c.meta.id === id);
}
