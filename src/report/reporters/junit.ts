/**
 * The JUnit XML reporter (issue 6), for CI systems that show test results.
 *
 * - One `<testsuite>` per check, named by its id, with pack, weight, severity and verdict as
 *   properties.
 * - Test cases: one per listed tool (and per tool a finding names that was not listed, such as
 *   protocol-errors' made-up tool), plus `(server)` for what the check says of the server as a
 *   whole: the findings that name no tool.
 * - A case with `fail` findings (not suppressed) gets one `<failure>` whose body is the evidence:
 *   messages, quotes, schema paths, the request sent and the replay line. `partial` findings are
 *   failures (type `partial`) only when the run failed its gate (`--fail-under`), so the page is
 *   red exactly when the run is; otherwise they go to `<system-out>` with the info findings and the
 *   findings a `suppress:` entry matched (with a `suppressed: <reason>` line).
 * - The cases of an n/a check are `<skipped>` with the reason, and so are the tools a check did not
 *   judge (its `coverage.notJudged`: beyond max_tools, may write …), with why: an unjudged tool is
 *   never a passing case. Time attributes are seconds.
 * - Text from the server is escaped, and characters XML 1.0 cannot carry (NUL, other control
 *   characters, lone surrogates) are written as `\uXXXX`.
 */
import type { Report, ReportCheck, ReportFinding } from '../build.js';
import type { MultiReport } from '../multi.js';

const SERVER_CASE = '(server)';

/**
 * Renders the report as JUnit XML (UTF-8, trailing newline). `gateFailed`: the run failed its gate,
 * so partial findings are failures too; otherwise only `fail` findings are.
 */
export function renderJunit(report: Report, gateFailed = false): string {
  return document(report.checks.map((c) => suiteOf(report, c, '', gateFailed)), report.durationMs, report.generatedAt);
}

/** Renders a `--client-config` run: the suites of every server, named `<server>/<check>`. */
export function renderJunitMulti(m: MultiReport, gateFailed = false): string {
  const suites = m.servers.flatMap(({ name, report }) => report.checks.map((c) => suiteOf(report, c, `${name}/`, gateFailed)));
  return document(suites, m.servers.reduce((t, s) => t + s.report.durationMs, 0), m.generatedAt);
}

function document(suites: Suite[], durationMs: number, generatedAt: string): string {
  const count = (k: 'tests' | 'failures' | 'skipped') => suites.reduce((s, x) => s + x[k], 0);
  const head = `<testsuites name="sealmark" tests="${count('tests')}" failures="${count('failures')}" errors="0" skipped="${count('skipped')}" time="${seconds(durationMs)}" timestamp="${xml(generatedAt)}">`;
  return ['<?xml version="1.0" encoding="UTF-8"?>', head, ...suites.map((s) => s.xml), '</testsuites>', ''].join('\n');
}

interface Suite {
  xml: string;
  tests: number;
  failures: number;
  skipped: number;
}

function suiteOf(report: Report, c: ReportCheck, prefix: string, gateFailed: boolean): Suite {
  // The server's own case keeps its name apart from any tool's (a tool may be named "(server)").
  const names = new Set([...report.tools.map((t) => t.name), ...c.findings.flatMap((f) => (f.tool === undefined ? [] : [f.tool]))]);
  let server = SERVER_CASE;
  while (names.has(server)) server += '*';
  const byCase = new Map<string, ReportFinding[]>([[server, []]]);
  for (const t of report.tools) byCase.set(t.name, []);
  for (const f of c.findings) {
    const name = f.tool ?? server;
    byCase.set(name, [...(byCase.get(name) ?? []), f]);
  }
  const classname = `sealmark.${c.pack}.${c.id}`;
  let failures = 0;
  let skipped = 0;
  const cases: string[] = [];
  // A tool the check did not judge is skipped, with why, never a passing case (SPEC section 5).
  const notJudged = new Map((c.coverage?.notJudged ?? []).map((n) => [n.tool, n.why]));
  for (const [name, findings] of byCase) {
    const open = `    <testcase classname="${xml(classname)}" name="${xml(name)}" time="0">`;
    const body: string[] = [];
    // A suppressed finding is no failure (SPEC section 7): it is written out with the info ones. A
    // partial one is a failure only when the run failed its gate.
    const counts = (f: ReportFinding) => !f.suppressed && (f.level === 'fail' || (f.level === 'partial' && gateFailed));
    const failing = findings.filter(counts);
    if (c.verdict === 'n/a') {
      skipped++;
      body.push(`      <skipped message="${xml(c.notes[0] ?? 'not applicable')}"/>`);
    } else if (failing.length === 0 && notJudged.has(name) && !findings.some((f) => f.level !== 'info' && !f.suppressed)) {
      skipped++;
      body.push(`      <skipped message="${xml(`not judged: ${notJudged.get(name)!}`)}"/>`);
    } else {
      if (failing.length > 0) {
        failures++;
        const type = failing.some((f) => f.level === 'fail') ? 'fail' : 'partial';
        const first = failing[0]!;
        body.push(`      <failure type="${type}" message="${xml(`${first.messageId}: ${first.message}`)}">${xml(failing.map(evidenceText).join('\n\n'))}</failure>`);
      }
      const rest = findings.filter((f) => !counts(f));
      if (rest.length > 0) body.push(`      <system-out>${xml(rest.map(evidenceText).join('\n\n'))}</system-out>`);
    }
    cases.push(body.length === 0 ? open.replace(/>$/, '/>') : [open, ...body, '    </testcase>'].join('\n'));
  }
  const props = [
    ['pack', c.pack],
    ['weight', c.weight],
    ['severity', c.severity],
    ['verdict', c.verdict],
    // How the server was isolated (`network on` among it), so that no report hides it.
    ['sandbox', report.sandbox.note],
    ...(report.target.package ? [['package', `${report.target.package.ecosystem}:${report.target.package.name}@${report.target.package.version ?? '?'}`]] : []),
  ]
    .map(([k, v]) => `      <property name="${k}" value="${xml(v!)}"/>`)
    .join('\n');
  const head = `  <testsuite name="${xml(prefix + c.id)}" tests="${cases.length}" failures="${failures}" errors="0" skipped="${skipped}" time="0">`;
  return { xml: [head, '    <properties>', props, '    </properties>', ...cases, '  </testsuite>'].join('\n'), tests: cases.length, failures, skipped };
}

/** A finding as plain text: level, message id and message, then each kind of evidence on its own line. */
function evidenceText(f: ReportFinding): string {
  const lines = [`[${f.level}] ${f.messageId}: ${f.message}`];
  for (const q of f.evidence.quotes ?? []) lines.push(`  | ${q}`);
  if (f.evidence.schemaPaths?.length) lines.push(`  at ${f.evidence.schemaPaths.join(', ')}`);
  if (f.request) lines.push(`  sent ${f.request}`);
  if (f.replay) lines.push(`  replay ${f.replay}`);
  if (f.baselineState) lines.push(`  baseline: ${f.baselineState}`);
  if (f.suppressed) lines.push(`  suppressed: ${f.suppressed.reason}${f.suppressed.until ? ` (until ${f.suppressed.until})` : ''}`);
  return lines.join('\n');
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

/**
 * Escapes text for an XML 1.0 attribute or element: the five markup characters as entities;
 * characters XML 1.0 does not allow at all, other control characters and bidirectional overrides
 * (which would reorder what a CI page shows) as a visible `\uXXXX`.
 */
export function xml(s: string): string {
  return s
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}
