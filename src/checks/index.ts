/**
 * The registry of checks, in report order. Adding a check: one file in src/checks named after its
 * id, an entry here and in src/packs.ts, a test, and `npm run docs` (a test fails otherwise).
 */
import type { Check } from './check.js';
import { registerOwnIdentifiers } from '../redact.js';
import { packs } from '../packs.js';
import { check as handshake } from './handshake.js';
import { check as robustInput } from './robust-input.js';
import { check as strictArguments } from './strict-arguments.js';
import { check as protocolErrors } from './protocol-errors.js';
import { check as toolSchemas } from './tool-schemas.js';
import { check as armedFlags } from './armed-flags.js';
import { check as defaultCallEffects } from './default-call-effects.js';
import { check as fillerCallEffects } from './filler-call-effects.js';
import { check as hiddenParams } from './hidden-params.js';
import { check as boundedLimits } from './bounded-limits.js';
import { check as oversizedInput } from './oversized-input.js';
import { check as concurrency } from './concurrency.js';
import { check as annotations } from './annotations.js';
import { check as toolNaming } from './tool-naming.js';
import { check as idempotencyKey } from './idempotency-key.js';
import { check as twoStepWrites } from './two-step-writes.js';
import { check as secretEcho } from './secret-echo.js';

/** Every check sealmark has, keyed by nothing: order is report order. */
export const checks: readonly Check[] = [handshake, robustInput, strictArguments, protocolErrors, toolSchemas, armedFlags, defaultCallEffects, fillerCallEffects, hiddenParams, boundedLimits, oversizedInput, concurrency, annotations, toolNaming, idempotencyKey, twoStepWrites, secretEcho];

/**
 * The message every check but handshake can give when the server did not stay up long enough for it
 * (SPEC section 3 step 3: a check never becomes n/a because an earlier check crashed the server):
 * see `judgeAll` in src/audit.ts.
 */
export const SERVER_GONE_MESSAGE = 'server-gone-before';
for (const c of checks) if (c.meta.id !== 'handshake') c.meta.messages[SERVER_GONE_MESSAGE] = 'not judged: {why}; a check the server did not stay up for counts as failed, not as not applicable';

/** The check with this id, or undefined. */
export function checkById(id: string): Check | undefined {
  return checks.find((c) => c.meta.id === id);
}

// Every identifier sealmark writes into a report, so that redaction never garbles one (src/redact.ts).
registerOwnIdentifiers([
  ...checks.flatMap((c) => [c.meta.id, c.meta.pack, c.meta.weight, c.meta.severity, ...Object.keys(c.meta.messages), ...c.meta.probes.map((p) => p.id)]),
  ...packs.map((p) => p.id),
  ...['pass', 'partial', 'fail', 'n/a', 'info', 'error', 'warning', 'note', 'A', 'B', 'C', 'D', 'F', 'audited', 'not-audited'],
  ...['rejected', 'rejected-unnamed', 'text-refusal', 'lenient-downstream', 'internal-error', 'accepted', 'hang', 'exited', 'protocol-error'],
  ...['response', 'malformed', 'shim', 'network', 'file', 'env-canary', 'argument-canary', 'user-secret', 'pattern', 'result'],
  ...['liveness', 'tools-list', 'user-probe', 'read-only-no-args', 'no-arguments', 'extra-only', 'empty-arguments', 'valid-arguments', 'unknown-method', 'notification-follow-up', 'unknown-tool', 'array-params'],
  ...['initialize', 'tools/list', 'tools/call', 'ping', 'server/discover'],
]);
