/**
 * `sealmark lint <tools.json>` and the library's `lint()` (SPEC sections 2 and 9, issue 7): the
 * checks with a static half (`meta.lint`) judge a saved tools/list result; no server is started
 * or called. The others are n/a, with the reason. Verdicts are those of the static half of a live
 * audit of the same listing: the same judges read the same artifacts, minus the calls.
 */
import { judgeAll, toListedTool } from './audit.js';
import { checks as allChecks } from './checks/index.js';
import type { Artifacts } from './checks/check.js';
import { defaultConfig } from './config/defaults.js';
import type { ResolvedConfig } from './config/schema.js';
import { UsageError } from './errors.js';
import { buildReport, type Report } from './report/build.js';
import type { CheckResult } from './types.js';

/** Why the dynamic checks are n/a in a lint run. */
export const LINT_REASON = 'sealmark lint read a saved tools/list; no server was called';

/** Options of {@link lint}. */
export interface LintOptions {
  /** Validated config (checks enabled, severities, hidden_params …); defaults when absent. */
  config?: ResolvedConfig;
  /** The file the listing came from, for the report. */
  file?: string;
}

/**
 * The tools of a saved listing: a bare array of tools, a tools/list result (`{ tools, nextCursor? }`)
 * or a whole JSON-RPC response (`{ jsonrpc, id, result: { tools } }`). Throws UsageError naming
 * what was found instead.
 */
export function toolsOf(listing: unknown): unknown[] {
  if (Array.isArray(listing)) return listing;
  if (typeof listing === 'object' && listing !== null) {
    const o = listing as Record<string, unknown>;
    if (Array.isArray(o.tools)) return o.tools;
    const result = o.result as Record<string, unknown> | undefined;
    if (typeof result === 'object' && result !== null && Array.isArray(result.tools)) return result.tools;
  }
  const what = Array.isArray(listing) ? 'an array' : listing === null ? 'null' : typeof listing === 'object' ? `an object with keys ${Object.keys(listing as object).slice(0, 5).join(', ') || '(none)'}` : typeof listing;
  throw new UsageError(`expected a tools array, a tools/list result { tools: [...] } or a JSON-RPC response with result.tools; found ${what}`);
}

/** Lints a saved listing (see {@link toolsOf}) and returns the report. Pure but for the clock. */
export function lint(listing: unknown, options: LintOptions = {}): Report {
  const config = options.config ?? defaultConfig();
  const started = Date.now();
  const tools = toolsOf(listing).map(toListedTool);
  const artifacts: Artifacts = {
    listExchanges: [],
    tools,
    noise: { count: 0, bytes: 0, lines: [] },
    stderrTail: '',
    exit: null,
    calls: [],
    strays: [],
    config,
    offline: LINT_REASON,
    ...(tools.length === 0 ? { listProblem: 'the saved listing has no tools' } : {}),
  };
  const enabled = allChecks.filter((c) => config.checks[c.meta.id]?.enabled !== false);
  const judged = new Map(judgeAll(enabled.filter((c) => c.meta.lint), artifacts, () => '').map((r) => [r.id, r]));
  const results: CheckResult[] = enabled.map(
    (c) => judged.get(c.meta.id) ?? { id: c.meta.id, verdict: 'n/a', findings: [], notes: [`a dynamic check: ${LINT_REASON}`] },
  );
  return buildReport({ target: { kind: 'tools-file', command: [], ...(options.file ? { file: options.file } : {}) }, config, artifacts, results, startedAt: started });
}
