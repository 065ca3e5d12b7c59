/**
 * sealmark's library entry (SPEC section 9): the same engine as the CLI, typed, returning the
 * JSON report object so a server's own test suite can assert on it. `audit()` takes the config as
 * the CLI does: an object it validates (`config`), a file (`configFile`), or the file it finds
 * upward from the working directory.
 *
 * ```ts
 * import { audit } from 'sealmark';
 * const report = await audit({ command: 'node', args: ['server.js'], config: { skip_tools: ['wipe'] } });
 * ```
 */
export { audit, type LibraryAuditOptions as AuditOptions } from './library.js';
export { lint, toolsOf, type LintOptions } from './lint.js';
export { checks, checkById } from './checks/index.js';
export type { Check, CheckMeta } from './checks/check.js';
export { classifyReply, scanLeaks } from './classify.js';
export { defaultConfig } from './config/defaults.js';
export { loadConfig, type LoadConfigOptions } from './config/load.js';
export { ConfigError, type ConfigInput, type ConfigProblem, type ResolvedConfig, type SuppressEntry } from './config/schema.js';
export type { Suppressions, SuppressionState } from './report/suppress.js';
export { UsageError } from './errors.js';
export { REPORT_SCHEMA_VERSION, type Report, type ReportCheck, type ReportCall, type ReportFinding, type BaselineComparison } from './report/build.js';
export { compareWithBaseline } from './report/baseline.js';
export { fingerprintOf } from './report/fingerprint.js';
export { renderText } from './report/reporters/text.js';
export { renderJson } from './report/reporters/json.js';
export { renderSarif } from './report/reporters/sarif.js';
export { renderJunit } from './report/reporters/junit.js';
export { renderHtml } from './report/reporters/html.js';
export type { Classification, Finding, ReplyClass, Verdict, CheckResult, PackId, Weight } from './types.js';
export { VERSION, METHODOLOGY_VERSION } from './version.js';
