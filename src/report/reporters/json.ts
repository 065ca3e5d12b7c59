/** The JSON reporter: the report object as documented in docs/report-schema.md (SPEC section 8). */
import type { Report } from '../build.js';

/** Renders the report as pretty-printed JSON with a trailing newline. */
export function renderJson(report: Report): string {
  return JSON.stringify(report, null, 2) + '\n';
}
