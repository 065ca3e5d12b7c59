/**
 * Reads a saved JSON report (`sealmark report <saved.json>`, `--baseline <saved.json>`). Every
 * field the reporters and the baseline comparison read is checked for its type, so a hand-edited
 * report is a usage error naming the field, never a crash; the rest is kept as it is
 * (docs/report-schema.md: readers ignore fields they do not know).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { UsageError } from '../errors.js';
import { REPORT_SCHEMA_VERSION, type Report } from './build.js';
import { isMultiReport, type MultiReport } from './multi.js';
import { fingerprintOf } from './fingerprint.js';

const str = z.string();
const num = z.number();
const strings = z.array(z.string());

const finding = z.looseObject({
  checkId: str,
  messageId: str,
  message: str,
  data: z.record(z.string(), z.union([z.string(), z.number()])),
  level: z.enum(['fail', 'partial', 'info']),
  tool: str.optional(),
  evidence: z.looseObject({ calls: z.array(num).optional(), schemaPaths: strings.optional(), quotes: strings.optional() }),
  replay: str.optional(),
  request: str.optional(),
  fingerprint: str.optional(),
  baselineState: z.enum(['new', 'unchanged']).optional(),
  suppressed: z.looseObject({ reason: str, until: str.optional() }).optional(),
});

const findingRef = z.looseObject({ fingerprint: str, checkId: str, messageId: str, level: z.enum(['fail', 'partial', 'info']), tool: str.optional(), message: str });

const call = z.looseObject({
  seq: num,
  probe: str,
  tool: str.optional(),
  method: str,
  request: str,
  reply: z.looseObject({ kind: str, rawText: str.optional(), problem: str.optional(), waitedMs: num.optional(), runDelayMs: num.optional() }),
  class: str.optional(),
  leaks: z.array(z.looseObject({ pattern: str, line: str })).optional(),
  invalidBecause: strings.optional(),
  effects: z.array(z.looseObject({ kind: str, detail: str })).optional(),
  target: str.optional(),
  value: str.optional(),
  rawArguments: str.optional(),
  items: num.optional(),
  secrets: z.array(z.looseObject({ kind: str, name: str, where: str })).optional(),
  durationMs: num,
});

/**
 * Every field a reporter or the baseline comparison reads (docs/report-schema.md), with its type;
 * fields this version does not know are kept as they are.
 */
const savedReport = z.looseObject({
  schemaVersion: z.literal(REPORT_SCHEMA_VERSION),
  methodologyVersion: str,
  cliVersion: str,
  generatedAt: str,
  durationMs: num,
  target: z.looseObject({
    kind: str,
    command: strings,
    url: str.optional(),
    file: str.optional(),
    cwd: str.optional(),
    configFile: str.optional(),
    root: str.optional(),
    manifest: str.optional(),
    entry: z
      .looseObject({
        file: str,
        toolLines: z.record(z.string(), z.number().int().positive()),
        source: z.looseObject({ file: str, toolLines: z.record(z.string(), z.number().int().positive()) }).optional(),
      })
      .optional(),
  }),
  status: z.enum(['audited', 'not-audited']),
  notAudited: z.looseObject({ reason: str, message: str, notChecked: strings }).optional(),
  protocol: z.looseObject({ version: str.nullable(), era: str.nullable(), server: z.looseObject({ name: str.nullable(), version: str.nullable() }) }).nullable(),
  sandbox: z.looseObject({ kind: str, network: str, note: str }),
  standard: z.boolean(),
  nonStandardKeys: strings,
  coverage: z.looseObject({ level: str, tools: z.array(z.looseObject({ name: str, level: str })) }),
  grade: z.looseObject({
    letter: str.nullable(),
    percent: num.nullable(),
    packs: z.array(z.looseObject({ pack: str, percent: num.nullable(), letter: str.nullable(), counted: num })),
    caps: z.array(z.looseObject({ check: str, letter: str })),
  }),
  checks: z.array(
    z.looseObject({
      id: str,
      verdict: z.enum(['pass', 'partial', 'fail', 'n/a']),
      title: str,
      pack: str,
      weight: str,
      severity: str,
      findings: z.array(finding),
      notes: strings,
      needsProbe: strings.optional(),
    }),
  ),
  tools: z.array(z.looseObject({ name: str, index: num })),
  calls: z.array(call),
  stderrTail: str,
  baseline: z.looseObject({ file: str, generatedAt: str, new: z.array(findingRef), fixed: z.array(findingRef), unchanged: num }).optional(),
  // Absent from reports written before suppress: existed (they applied none).
  suppressions: z
    .looseObject({
      applied: z.boolean(),
      entries: z.array(
        z.looseObject({
          index: num,
          check: str,
          tool: str.optional(),
          messageId: str.optional(),
          reason: str,
          until: str.optional(),
          status: z.enum(['applied', 'unused', 'expired', 'ignored']),
          matched: num,
        }),
      ),
    })
    .optional(),
});

/**
 * Reads a saved single report or `--client-config` multi-report (each server's report checked as
 * {@link parseSavedReport} does). Throws UsageError (exit 2) naming `flag`, the file and the problem.
 */
export function loadSaved(path: string, flag: string): Report | MultiReport {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(code ? `${flag} ${path}: cannot read it (${code})` : `${flag} ${path}: not JSON (${(err as Error).message})`);
  }
  const depth = depthOf(raw);
  if (depth > MAX_SAVED_DEPTH) throw new UsageError(`${flag} ${path}: nested more than ${MAX_SAVED_DEPTH} levels deep; no sealmark report is`);
  if (isMultiReport(raw)) return { ...raw, servers: raw.servers.map((s, i) => ({ name: s.name, report: parseSavedReport(s.report, `${flag} ${path} (servers[${i}])`) })) };
  return parseSavedReport(raw, `${flag} ${path}`);
}

/** Deepest nesting a saved report may have (a report's own data is far shallower; the redactor cuts at 200). */
const MAX_SAVED_DEPTH = 1000;

/** How deep `v` is nested (without recursion, so any depth is measured). */
function depthOf(v: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[v, 1]];
  while (stack.length > 0) {
    const [x, d] = stack.pop()!;
    if (typeof x !== 'object' || x === null) continue;
    if (d > max) max = d;
    if (max > MAX_SAVED_DEPTH) return max;
    for (const y of Object.values(x)) stack.push([y, d + 1]);
  }
  return max;
}

/**
 * Reads and checks the report saved at `path` (`flag` names where it came from in errors).
 * Throws UsageError (exit 2) when the file cannot be read, is not JSON, or is not a sealmark JSON
 * report of schemaVersion 1, naming the first field that is wrong.
 */
export function loadSavedReport(path: string, flag: string): Report {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`${flag} ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${flag} ${path}: not JSON (${(err as Error).message})`);
  }
  return parseSavedReport(raw, `${flag} ${path}`);
}

/** Checks a parsed saved report (see {@link loadSavedReport}); `label` names it in the UsageError. */
export function parseSavedReport(raw: unknown, label: string): Report {
  if (depthOf(raw) > MAX_SAVED_DEPTH) throw new UsageError(`${label}: nested more than ${MAX_SAVED_DEPTH} levels deep; no sealmark report is`);
  const parsed = savedReport.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? issue.path.join('.') : '(top level)';
    throw new UsageError(`${label}: not a sealmark JSON report (schemaVersion ${REPORT_SCHEMA_VERSION}): ${where}: ${issue.message}`);
  }
  const report = parsed.data as unknown as Report;
  report.suppressions ??= { applied: true, entries: [] };
  // A report saved before findings had fingerprints (or with one removed) gets them computed.
  for (const c of report.checks) for (const f of c.findings) f.fingerprint ??= fingerprintOf(f, report);
  return report;
}
