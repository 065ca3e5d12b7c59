/**
 * `suppress:` end to end (SPEC section 7) through the real binary (needs a fresh dist/), on the
 * fixture reports/sourcemapped (robust-input partial: a bare -32603 for invalid calls) with
 * reports/sourcemapped/suppress.config.json: one live entry for that finding, one that matches
 * nothing, one expired. Checked: verdict and grade change, the finding is kept and marked in the
 * JSON, text, SARIF, JUnit and HTML reports, the warnings, `--no-suppress`, and config errors (exit 2).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliRun } from '../helpers/cli.js';
import { multitoolValidate, validateSarifSchema } from '../helpers/sarif.js';
import { renderText } from '../../src/report/reporters/text.js';
import type { Report } from '../../src/report/build.js';

const FIXTURE = 'test/fixtures/servers/reports/sourcemapped';
const SERVER = ['node', `${FIXTURE}/build/server.mjs`];
const CONFIG = `${FIXTURE}/suppress.config.json`;
const ONLY = ['--only', 'robust-input,tool-naming,annotations'];
const SLOW = 180_000;
const REASON = 'the SDK answers -32603 for every invalid call; fixed in the next release';

let tmp: string;
const out = (f: string) => join(tmp, f);
const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sealmark-suppress-test-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const internalError = (r: Report) => r.checks.find((c) => c.id === 'robust-input')!.findings.find((f) => f.messageId === 'internal-error' && f.tool === 'convert');

describe('an audit with suppress: entries', () => {
  let run: CliRun;
  let report: Report;
  let plain: Report;
  beforeAll(async () => {
    const files = ['--format', 'json', '--output', out('s.json'), '--format', 'sarif', '--output', out('s.sarif'), '--format', 'junit', '--output', out('s.xml'), '--format', 'text', '--output', out('s.txt'), '--format', 'html', '--output', out('s.html')];
    [run] = await Promise.all([
      runCli(['audit', '--config', CONFIG, ...ONLY, ...files, '--', ...SERVER]),
      runCli(['audit', '--config', CONFIG, '--no-suppress', ...ONLY, '--format', 'json', '--output', out('plain.json'), '--', ...SERVER]),
    ]);
    report = readJson<Report>(out('s.json'));
    plain = readJson<Report>(out('plain.json'));
  }, SLOW);

  it('without --no-suppress: robust-input passes and the grade rises; with it, the partial counts', () => {
    expect(run.code, run.stderr).toBe(0);
    expect(plain.checks.find((c) => c.id === 'robust-input')!.verdict).toBe('partial');
    expect(report.checks.find((c) => c.id === 'robust-input')!.verdict).toBe('pass');
    expect(report.grade.percent!).toBeGreaterThan(plain.grade.percent!);
    expect(report.grade.packs.find((p) => p.pack === 'core')!.percent).toBe(100);
  });

  it('JSON: the finding is kept with suppressed {reason, until}; the record says what each entry did', () => {
    expect(internalError(report)!.suppressed).toEqual({ reason: REASON, until: '2099-12-31' });
    expect(internalError(report)!.level).toBe('partial');
    expect(report.suppressions.applied).toBe(true);
    expect(report.suppressions.entries.map((e) => [e.index, e.status, e.matched])).toEqual([
      [0, 'applied', 1],
      [1, 'unused', 0],
      [2, 'expired', expect.any(Number)],
    ]);
    expect(internalError(plain)!.suppressed).toBeUndefined();
    expect(plain.suppressions.applied).toBe(false);
    expect(plain.suppressions.entries.every((e) => e.status === 'ignored')).toBe(true);
  });

  it('text: a suppressed: line under the finding, not counted among failures, and both warnings', () => {
    const text = readFileSync(out('s.txt'), 'utf8');
    expect(text).toContain(`suppressed: ${REASON} (until 2099-12-31)`);
    expect(text).toMatch(/0 failing and 0 partial findings, 1 suppressed/);
    // The verdict line says the pass is one by suppression.
    expect(text).toMatch(/^ {2}✓ pass {3} {2}robust-input \(1 suppressed\) · /m);
    expect(text).not.toMatch(/tool-naming \(\d+ suppressed\)/);
    expect(text).toMatch(/warning: suppress\[1\] \(tool-naming, tool no_such_tool\) matched no finding/);
    expect(text).toMatch(/warning: suppress\[2\] \(robust-input\) expired on 2020-01-01 and no longer applies/);
    // Every report went to a file: the warnings and the summary line go to stderr.
    expect(run.stderr).toMatch(/sealmark: warning: .*suppress\.config\.json: suppress\[2\] \(robust-input\) expired on 2020-01-01/);
    expect(run.stderr).toMatch(/0 failing, 0 partial findings, 1 suppressed/);
  });

  it('text --no-suppress: the count of matched findings is of the findings the report shows, as the entries say (an info finding is left out)', () => {
    const shownMatched = plain.checks.flatMap((c) => c.findings).filter((f) => f.level !== 'info' && f.checkId === 'robust-input').length;
    expect(shownMatched).toBeGreaterThan(0);
    expect(plain.suppressions.entries.map((e) => e.matched)).toEqual([1, 0, shownMatched]);
    // The shared info finding a check gets when the server was gone (hidden without --verbose) is no match.
    const withInfo = structuredClone(plain);
    withInfo.checks.find((c) => c.id === 'robust-input')!.findings.push({ ...internalError(plain)!, level: 'info', messageId: 'server-gone-before', message: 'the server was gone', fingerprint: 'x' });
    for (const r of [plain, withInfo]) {
      expect(renderText(r, { color: false, verbose: false })).toContain(`suppressions not applied (--no-suppress): 3 in the config, matching ${shownMatched} finding${shownMatched === 1 ? '' : 's'}\n`);
    }
  });

  it('SARIF: the result carries an external suppression with the reason as justification', () => {
    const log = readJson<{ runs: { results: { ruleId: string; suppressions?: unknown[]; properties: { checkVerdict: string } }[]; properties: { suppressions: { applied: boolean } } }[] }>(out('s.sarif'));
    expect(validateSarifSchema(log)).toEqual([]);
    const r = log.runs[0]!.results.find((x) => x.ruleId === 'robust-input')!;
    expect(r.suppressions).toEqual([{ kind: 'external', status: 'accepted', justification: REASON, properties: { until: '2099-12-31' } }]);
    expect(r.properties.checkVerdict).toBe('pass');
    expect(log.runs[0]!.properties.suppressions.applied).toBe(true);
  });

  it('SARIF: Sarif.Multitool validates the log with suppressions, no error, no warning', async () => {
    const v = await multitoolValidate(out('s.sarif'), tmp);
    expect(v.code, v.output).toBe(0);
    expect([...v.errors, ...v.warnings], v.output).toEqual([]);
  }, SLOW);

  it('JUnit: robust-input has no failure; the finding is in system-out with its reason', () => {
    const xml = new XMLParser({ ignoreAttributes: false, isArray: (n) => n === 'testsuite' || n === 'testcase' }).parse(readFileSync(out('s.xml'), 'utf8')) as {
      testsuites: { testsuite: { '@_name': string; '@_failures': string; testcase: { '@_name': string; failure?: unknown; 'system-out'?: string }[] }[] };
    };
    const suite = xml.testsuites.testsuite.find((s) => s['@_name'] === 'robust-input')!;
    expect(suite['@_failures']).toBe('0');
    const tc = suite.testcase.find((c) => c['@_name'] === 'convert')!;
    expect(tc.failure).toBeUndefined();
    expect(tc['system-out']).toContain(`suppressed: ${REASON}`);
  });
});

describe('suppress: in the HTML report', () => {
  it('tags the finding suppressed with its reason, counts it apart, and shows the warnings', () => {
    const html = readFileSync(out('s.html'), 'utf8');
    expect(html).toMatch(/<span class="tag suppressed">suppressed<\/span> <code>internal-error<\/code>/);
    expect(html).toContain(`<dt>suppressed</dt><dd>${REASON} (until 2099-12-31)</dd>`);
    expect(html).toMatch(/0 failing · 0 partial findings · 1 suppressed/);
    expect(html).toMatch(/suppress\[2\] \(robust-input\) expired on 2020-01-01/);
  });
});

describe('suppress: entries that do not apply', () => {
  it('an expired entry suppresses nothing: the verdict stays partial, and the report says it expired', async () => {
    writeFileSync(out('expired.json'), JSON.stringify({ suppress: [{ check: 'robust-input', tool: 'convert', reason: 'old', until: '2021-03-04' }] }));
    const r = await runCli(['audit', '--config', out('expired.json'), '--only', 'robust-input', '--format', 'json', '--', ...SERVER]);
    expect([0, 1], r.stderr).toContain(r.code);
    const rep = JSON.parse(r.stdout) as Report;
    expect(rep.checks.find((c) => c.id === 'robust-input')!.verdict).toBe('partial');
    expect(internalError(rep)!.suppressed).toBeUndefined();
    expect(rep.suppressions.entries[0]).toMatchObject({ status: 'expired', matched: 1 });
    // The JSON went to stdout: the warning goes to stderr.
    expect(r.stderr).toMatch(/suppress\[0\] \(robust-input, tool convert\) expired on 2021-03-04/);
  }, SLOW);

  it('a bad entry is a config error naming the key: exit 2 before any server starts', async () => {
    writeFileSync(out('bad.yaml'), 'suppress:\n  - check: robust-inputs\n    reason: ""\n    until: soon\n    scope: all\n');
    const r = await runCli(['audit', '--config', out('bad.yaml'), '--', ...SERVER]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/suppress\[0\]\.check: unknown check id "robust-inputs" \(did you mean robust-input\?\)/);
    expect(r.stderr).toMatch(/suppress\[0\]\.reason: expected a non-empty string/);
    expect(r.stderr).toMatch(/suppress\[0\]\.until: expected an ISO date/);
    expect(r.stderr).toMatch(/suppress\[0\]\.scope: unknown key/);
    expect(r.stdout).toBe('');
  }, SLOW);
});
