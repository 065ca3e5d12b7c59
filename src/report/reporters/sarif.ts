/**
 * The SARIF 2.1.0 reporter (SPEC section 8; OASIS SARIF 2.1.0) for code-scanning upload.
 *
 * - One rule per check in the report, its help rendered from the check's own meta (the same text
 *   as `sealmark explain`), its default level from the check's severity.
 * - One result per failing or partial finding (info findings stay in the JSON report). A `fail`
 *   finding takes the check's level (error | warning | note); a `partial` one is a warning, or a
 *   note when the check's severity is note.
 * - Locations: the entry's source file (through a source map) or the entry file, at the line where
 *   the tool's name appears, else the config file, else the package manifest, as paths relative to
 *   `%SRCROOT%` (the repository root, else the directory sealmark ran in) when they lie inside it;
 *   logical locations name the tool and the schema paths. A result with no file at all keeps only
 *   its logical locations. A finding an SDK causes (`sdkCause`, SPEC section 5) is never placed in
 *   the author's code: it points at the line of the server's package.json that declares the
 *   dependency bringing the SDK in, and without such a line it has no physical location, only a
 *   logical one naming the SDK (`npm:@modelcontextprotocol/sdk@1.32.2`, `rmcp@1.1.1`).
 * - The driver's `informationUri` and each rule's `helpUri` point at sealmark's home page.
 * - A finding a `suppress:` entry matched carries `suppressions: [{ kind: 'external', status:
 *   'accepted', justification: <reason> }]`; `run.properties.suppressions` records whether they
 *   were applied and what each entry did.
 * - `partialFingerprints` carry the finding's fingerprint hash; `baselineState` is set after
 *   `--baseline`.
 */
import { isAbsolute, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkById } from '../../checks/index.js';
import { renderCheckDoc } from '../../docs.js';
import type { Severity } from '../../types.js';
import { targetLabel, type Report, type ReportCheck, type ReportFinding } from '../build.js';
import { fingerprintHash } from '../fingerprint.js';
import { safeText } from './text.js';
import type { MultiReport } from '../multi.js';

type Level = 'error' | 'warning' | 'note';

const LEVEL_OF: Record<Severity, Level> = { error: 'error', warning: 'warning', note: 'note' };

/** sealmark's home page: the driver's `informationUri`; each rule's `helpUri` is its doc page there. */
export const HOMEPAGE = 'https://github.com/sealmark/sealmark';

/** The key of sealmark's fingerprint in `partialFingerprints` (versioned with the fingerprint rule). */
export const FINGERPRINT_KEY = 'sealmarkFinding/v1';

/** Renders the report as a SARIF 2.1.0 log with one run (pretty-printed JSON, trailing newline). */
export function renderSarif(report: Report): string {
  return sarifLog([sarifRun(report)]);
}

/**
 * Renders several reports (a `--client-config` run) as one SARIF log with a run per server;
 * each run's `automationDetails.id` is `sealmark/<server>/`, so code scanning keeps them apart.
 */
export function renderSarifMulti(m: MultiReport): string {
  return sarifLog(m.servers.map(({ name, report }) => ({ ...sarifRun(report), automationDetails: { id: `sealmark/${name}/` } })));
}

function sarifLog(runs: Record<string, unknown>[]): string {
  const log = { $schema: 'https://json.schemastore.org/sarif-2.1.0.json', version: '2.1.0', runs };
  return JSON.stringify(log, null, 2) + '\n';
}

/** One SARIF run for one report. */
function sarifRun(report: Report): Record<string, unknown> {
  const rules = report.checks.map(ruleOf);
  const index = new Map(report.checks.map((c, i) => [c.id, i]));
  const results = report.checks.flatMap((c) =>
    c.findings.filter((f) => f.level !== 'info').map((f) => resultOf(report, c, f, index.get(c.id)!)),
  );
  const invocation: Record<string, unknown> = { executionSuccessful: report.status === 'audited' };
  if (report.notAudited) {
    invocation.toolExecutionNotifications = [{ level: 'error', message: { text: `the target could not be audited: ${report.notAudited.message}` } }];
  }
  const run: Record<string, unknown> = {
    tool: { driver: { name: 'sealmark', version: report.cliVersion, semanticVersion: report.cliVersion, informationUri: HOMEPAGE, rules } },
    invocations: [invocation],
    results,
    properties: {
      methodologyVersion: report.methodologyVersion,
      target: targetLabel(report.target),
      protocol: report.protocol,
      grade: { letter: report.grade.letter, percent: report.grade.percent, caps: report.grade.caps },
      packs: report.grade.packs.map((p) => ({ pack: p.pack, letter: p.letter, percent: p.percent })),
      coverage: report.coverage.level,
      standard: report.standard,
      sandbox: report.sandbox.note,
      ...(report.suppressions ? { suppressions: report.suppressions } : {}),
      ...(report.baseline ? { baseline: { file: report.baseline.file, new: report.baseline.new.length, unchanged: report.baseline.unchanged, fixed: report.baseline.fixed.length, fixedFindings: report.baseline.fixed } } : {}),
    },
  };
  const base = report.target.root ?? report.target.cwd;
  if (base) run.originalUriBaseIds = { SRCROOT: { uri: pathToFileURL(base.endsWith(sep) ? base : base + sep).href } };
  return run;
}

function ruleOf(c: ReportCheck): Record<string, unknown> {
  const meta = checkById(c.id)?.meta;
  // SARIF 3.49.7: a `name` equal to the id (ignoring case) is left out.
  const name = c.id.replace(/(^|-)([a-z])/g, (_m, _d: string, ch: string) => ch.toUpperCase());
  const rule: Record<string, unknown> = {
    id: c.id,
    ...(name.toLowerCase() !== c.id.toLowerCase() ? { name } : {}),
    shortDescription: { text: c.title },
    defaultConfiguration: { level: LEVEL_OF[c.severity] ?? 'warning' },
    properties: { tags: ['mcp', c.pack], pack: c.pack, weight: c.weight },
  };
  // A saved report may name a check this version no longer has: its rule then has no help.
  if (meta) {
    rule.fullDescription = { text: meta.docs.summary };
    rule.help = { text: meta.docs.fix, markdown: renderCheckDoc(meta) };
    rule.helpUri = `${HOMEPAGE}/blob/main/docs/checks/${encodeURIComponent(c.id)}.md`;
  }
  return rule;
}

function resultOf(report: Report, c: ReportCheck, f: ReportFinding, ruleIndex: number): Record<string, unknown> {
  const level: Level = f.level === 'fail' ? (LEVEL_OF[c.severity] ?? 'warning') : c.severity === 'note' ? 'note' : 'warning';
  const text = sarifText(f.replay ? `${f.message}\nReplay: ${f.replay}` : f.message);
  const result: Record<string, unknown> = {
    ruleId: c.id,
    ruleIndex,
    level,
    message: { text },
    locations: [locationOf(report, f)],
    partialFingerprints: { [FINGERPRINT_KEY]: fingerprintHash(f.fingerprint) },
    properties: {
      messageId: f.messageId,
      findingLevel: f.level,
      checkVerdict: c.verdict,
      ...(f.tool !== undefined ? { tool: f.tool } : {}),
      ...(f.evidence.quotes?.length ? { quotes: f.evidence.quotes } : {}),
      ...(f.request !== undefined ? { request: f.request } : {}),
      ...(f.replay !== undefined ? { replay: f.replay } : {}),
    },
  };
  if (f.baselineState) result.baselineState = f.baselineState;
  // SARIF 2.1.0 §3.35: a suppression the config declares, outside the code (`external`).
  if (f.suppressed) {
    result.suppressions = [{ kind: 'external', status: 'accepted', justification: f.suppressed.reason, ...(f.suppressed.until ? { properties: { until: f.suppressed.until } } : {}) }];
  }
  return result;
}

function locationOf(report: Report, f: ReportFinding): Record<string, unknown> {
  const loc: Record<string, unknown> = {};
  const t = report.target;
  const place = f.sdkCause ? dependencyOf(t, f.sdkCause) : fileOf(t, f.tool);
  if (place) {
    const physical: Record<string, unknown> = { artifactLocation: artifactOf(place.file, t.root ?? t.cwd) };
    physical.region = { startLine: place.line ?? 1 };
    loc.physicalLocation = physical;
  }
  const logical: Record<string, unknown>[] = [];
  // Names a viewer shows: control characters and bidi overrides as escapes.
  if (f.tool !== undefined) logical.push({ name: safeText(f.tool), fullyQualifiedName: `tools/${safeText(f.tool)}`, kind: 'function' });
  for (const p of f.evidence.schemaPaths ?? []) logical.push({ fullyQualifiedName: safeText(p), kind: 'property' });
  if (f.sdkCause) {
    const ns = f.sdkCause.dependency !== undefined ? 'npm:' : '';
    logical.push({ name: safeText(f.sdkCause.sdk), fullyQualifiedName: safeText(`${ns}${f.sdkCause.sdk}@${f.sdkCause.version}`), kind: 'module' });
  }
  if (logical.length > 0) loc.logicalLocations = logical;
  if (!place && logical.length === 0) loc.message = { text: 'the server as a whole' };
  return loc;
}

/**
 * Where a finding an SDK causes points: the line of the manifest (the server's package.json) that
 * declares `cause.dependency`, or nothing (then only the logical location names the SDK).
 */
function dependencyOf(t: Report['target'], cause: NonNullable<ReportFinding['sdkCause']>): { file: string; line?: number } | undefined {
  const line = cause.dependency !== undefined && t.dependencyLines && Object.hasOwn(t.dependencyLines, cause.dependency) ? t.dependencyLines[cause.dependency] : undefined;
  return t.manifest !== undefined && Number.isInteger(line) && line! > 0 ? { file: t.manifest, line: line! } : undefined;
}

/**
 * The file a result points at (SPEC section 8): the entry's source (through its source map), the
 * entry, the config file, the package manifest, in that order; the first that lies inside the
 * repository (`root`, else `cwd`) wins, else the first there is. `line`: where the tool is named.
 */
function fileOf(t: Report['target'], tool: string | undefined): { file: string; line?: number } | undefined {
  const lineIn = (lines: Record<string, number> | undefined): number | undefined => {
    const own = tool !== undefined && lines && Object.hasOwn(lines, tool) ? lines[tool] : undefined;
    return Number.isInteger(own) && own! > 0 ? own : undefined;
  };
  const candidates: { file: string; line?: number }[] = [];
  if (t.entry?.source) candidates.push({ file: t.entry.source.file, line: lineIn(t.entry.source.toolLines) });
  if (t.entry) candidates.push({ file: t.entry.file, line: lineIn(t.entry.toolLines) });
  if (t.configFile) candidates.push({ file: t.configFile });
  if (t.manifest) candidates.push({ file: t.manifest });
  const base = t.root ?? t.cwd;
  return candidates.find((c) => base !== undefined && relativeUri(c.file, base) !== undefined) ?? candidates[0];
}

/**
 * Server text made safe for a SARIF plain-text message (SARIF 2.1.0 §3.11.5 and §3.11.6): control
 * characters and bidirectional overrides shown as escapes (as in the text report), `{` and `}`
 * doubled so no viewer reads a placeholder, and `\`, `[` and `]` escaped so none reads a link.
 */
export function sarifText(s: string): string {
  return safeText(s.replace(/\n/g, '\u2028'))
    .replace(/\u2028/g, '\n')
    .replace(/[\\[\]]/g, (c) => `\\${c}`)
    .replace(/[{}]/g, (c) => c + c);
}

/** A file inside `base` (the repository root) as a `%SRCROOT%`-relative URI (what code scanning needs), else a file URI. */
function artifactOf(file: string, base: string | undefined): Record<string, unknown> {
  const rel = base === undefined ? undefined : relativeUri(file, base);
  return rel !== undefined ? { uri: rel, uriBaseId: 'SRCROOT' } : { uri: pathToFileURL(file).href };
}

/** `file` relative to `base` as a URI reference (segments percent-encoded), or undefined outside it. */
function relativeUri(file: string, base: string): string | undefined {
  const rel = relative(base, file);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return undefined;
  return rel.split(sep).map(encodeURIComponent).join('/');
}
