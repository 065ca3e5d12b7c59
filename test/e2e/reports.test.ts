/**
 * Report formats and gates end to end (SPEC sections 2 and 8, issue 6), all through the real
 * binary `node bin/sealmark.js` (needs a fresh dist/: `npm run build`):
 *
 * - one `audit --demo` writing all five formats at once, then each format checked: SARIF against
 *   the official 2.1.0 schema (Ajv) and Microsoft's validator (Sarif.Multitool), JUnit as XML;
 * - `sealmark report <saved.json>`: re-rendering, gates on a saved report, bad inputs (exit 2);
 * - output planning (`--format`/`--output` pairing) errors, exit 2 before any server runs;
 * - `--baseline` with a fixture whose faults are switched by an environment variable;
 * - the progress line under a pseudo-terminal (util-linux `script`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from '../helpers/run.js';
import { validateSarifSchema } from '../helpers/sarif.js';
import { BIN, collectOutput, runCli, type CliRun } from '../helpers/cli.js';
import { sarifText } from '../../src/report/reporters/sarif.js';
import { checkById, checks as allChecks } from '../../src/checks/index.js';
import { renderCheckDoc } from '../../src/docs.js';
import { packs } from '../../src/packs.js';
import type { Report, ReportFinding } from '../../src/report/build.js';
import { fingerprintHash } from '../../src/report/fingerprint.js';
import { FINGERPRINT_KEY } from '../../src/report/reporters/sarif.js';

const require = createRequire(import.meta.url);
const DEMO = join(root, 'demo', 'server.mjs');
/** The fixture of the baseline tests, as a path relative to the repository root (the runs' cwd). */
const FAULTS_FIXTURE = 'test/fixtures/servers/reports/switchable-faults.mjs';
const C14_FIXTURE = 'test/fixtures/servers/c14-internal-error.mjs';
/** Generous: two cores shared with other test runs. */
const SLOW = 180_000;

/** Runs a shell command line under a pseudo-terminal: `script -qefc <line> /dev/null` (stdout and stderr both go to the pty). */
function runPty(line: string): Promise<CliRun> {
  return collectOutput(spawn('script', ['-qefc', line, '/dev/null'], { cwd: root, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] }));
}

const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const readJson = <T = unknown>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;
const failing = (r: Report): ReportFinding[] => r.checks.flatMap((c) => c.findings.filter((f) => f.level !== 'info'));

let tmp: string;
beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'cli.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test builds first)');
  tmp = mkdtempSync(join(tmpdir(), 'sealmark-reports-test-'));
});
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// SARIF validators: the official schema (Ajv 2020-12) and Microsoft's Sarif.Multitool.


/** Runs `Sarif.Multitool validate <file>`; resolves to its exit code and its `warning|error SARIFnnnn` lines. */
async function multitoolValidate(file: string): Promise<{ code: number | null; errors: string[]; warnings: string[]; output: string }> {
  const tool = require('@microsoft/sarif-multitool-linux') as string;
  try {
    accessSync(tool, constants.X_OK);
  } catch {
    throw new Error(`${tool} is not executable: run \`npm rebuild @microsoft/sarif-multitool-linux\` once (its postinstall sets the bit)`);
  }
  const out = join(tmp, `multitool-${Math.random().toString(36).slice(2)}.sarif`);
  const r = await collectOutput(spawn(tool, ['validate', file, '--output', out], { env: { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1' } }));
  const output = r.stdout + r.stderr;
  const lines = output.split('\n');
  return {
    code: r.code,
    errors: lines.filter((l) => /\berror SARIF\d+/.test(l)),
    warnings: lines.filter((l) => /\bwarning SARIF\d+/.test(l)),
    output,
  };
}

// SARIF types, as far as the tests read them.
interface SarifResult {
  ruleId: string;
  ruleIndex: number;
  level: string;
  message: { text: string };
  baselineState?: string;
  partialFingerprints: Record<string, string>;
  locations: {
    physicalLocation?: { artifactLocation: { uri: string; uriBaseId?: string }; region?: { startLine: number } };
    logicalLocations?: { name?: string; fullyQualifiedName?: string; kind?: string }[];
  }[];
}
interface SarifLog {
  version: string;
  runs: {
    tool: { driver: { name: string; rules: { id: string; help?: { markdown: string }; defaultConfiguration: { level: string } }[] } };
    originalUriBaseIds?: Record<string, { uri: string }>;
    results: SarifResult[];
  }[];
}

/** The SARIF level a finding must have (sarif.ts): fail → the check's severity; partial → warning (note for a note-severity check). */
function sarifLevel(severity: string, level: ReportFinding['level']): string {
  if (level === 'fail') return severity;
  return severity === 'note' ? 'note' : 'warning';
}

// ---------------------------------------------------------------------------------------------
// JUnit parsing.

interface JCase {
  '@_name': string;
  '@_classname': string;
  failure?: { '@_type': string; '@_message': string; '#text'?: string };
  skipped?: { '@_message': string } | string;
  'system-out'?: string;
}
interface JSuite {
  '@_name': string;
  '@_tests': string;
  '@_failures': string;
  '@_errors': string;
  '@_skipped': string;
  testcase: JCase[];
}
interface JUnit {
  testsuites: { '@_tests': string; '@_failures': string; '@_errors': string; '@_skipped': string; testsuite: JSuite[] };
}

function parseJunit(xml: string): JUnit {
  const parser = new XMLParser({
    ignoreAttributes: false,
    parseAttributeValue: false,
    parseTagValue: false,
    isArray: (name) => name === 'testsuite' || name === 'testcase' || name === 'property',
  });
  return parser.parse(xml) as JUnit;
}

// =============================================================================================
// 1. One demo run, all five formats.

describe('audit --demo writing five formats in one run', () => {
  let demo: CliRun;
  let report: Report;
  const out = (name: string) => join(tmp, 'demo', name);

  beforeAll(async () => {
    rmSync(join(tmp, 'demo'), { recursive: true, force: true });
    mkdirSync(join(tmp, 'demo'));
    demo = await runCli([
      'audit', '--demo',
      '--format', 'json', '--output', out('r.json'),
      '--format', 'sarif', '--output', out('r.sarif'),
      '--format', 'junit', '--output', out('r.xml'),
      '--format', 'html', '--output', out('r.html'),
      '--format', 'text',
    ]);
    if (demo.code !== 0) throw new Error(`audit --demo exited ${demo.code}: ${demo.stderr}`);
    report = readJson<Report>(out('r.json'));
  }, SLOW);

  it('writes every file, and the text report (with its grade line) to stdout', () => {
    for (const f of ['r.json', 'r.sarif', 'r.xml', 'r.html']) expect(existsSync(out(f)), f).toBe(true);
    expect(report.schemaVersion).toBe(1);
    expect(report.status).toBe('audited');
    expect(demo.stdout).toMatch(/^grade [A-F] \d+(\.\d+)?% · (exercised|hygiene-only)/m);
    expect(demo.stdout).toContain(`grade ${report.grade.letter} ${report.grade.percent}%`);
    expect(readFileSync(out('r.html'), 'utf8')).toMatch(/^<!DOCTYPE html>/i);
  });

  it('piped: stderr carries no progress line and no escape sequence, stdout no escape sequence', () => {
    expect(demo.stderr).not.toContain('\u001b');
    expect(demo.stderr).not.toMatch(/\d+ calls?\b/);
    expect(demo.stderr).not.toContain('\r');
    expect(demo.stdout).not.toContain('\u001b');
  });

  // -------------------------------------------------------------------------------------------
  describe('SARIF', () => {
    let sarif: SarifLog;
    beforeAll(() => {
      sarif = readJson<SarifLog>(out('r.sarif'));
    });

    it('is valid against the official SARIF 2.1.0 schema (Ajv 2020-12)', () => {
      const errors = validateSarifSchema(sarif);
      expect(errors, JSON.stringify(errors, null, 2)).toEqual([]);
      expect(sarif.version).toBe('2.1.0');
      expect(sarif.runs).toHaveLength(1);
      expect(sarif.runs[0]!.tool.driver.name).toBe('sealmark');
    });

    it('passes Microsoft Sarif.Multitool validate with no error (warnings allowed)', async () => {
      // Only `error SARIFnnnn` lines and a non-zero exit fail this test.
      const v = await multitoolValidate(out('r.sarif'));
      expect(v.errors, v.output).toEqual([]);
      expect(v.code, v.output).toBe(0);
    }, SLOW);

    it('has one rule per check of the JSON report, in order, with the check doc as help and its severity as level', () => {
      const rules = sarif.runs[0]!.tool.driver.rules;
      expect(rules.map((r) => r.id)).toEqual(report.checks.map((c) => c.id));
      for (const c of report.checks) {
        const rule = rules.find((r) => r.id === c.id)!;
        const meta = checkById(c.id)!.meta;
        expect(rule.help?.markdown, c.id).toBe(renderCheckDoc(meta));
        expect(rule.defaultConfiguration.level, c.id).toBe(c.severity);
      }
    });

    it('has one result per fail/partial finding (info excluded), in order, with rule, level, message and fingerprint', () => {
      const results = sarif.runs[0]!.results;
      const rules = sarif.runs[0]!.tool.driver.rules;
      const expected = report.checks.flatMap((c) => c.findings.filter((f) => f.level !== 'info').map((f) => ({ c, f })));
      expect(expected.length).toBeGreaterThan(0);
      expect(report.checks.some((c) => c.findings.some((f) => f.level === 'info'))).toBe(true);
      expect(results).toHaveLength(expected.length);
      expected.forEach(({ c, f }, i) => {
        const r = results[i]!;
        const what = `${f.checkId}/${f.messageId}/${f.tool ?? '-'}`;
        expect(r.ruleId, what).toBe(c.id);
        expect(rules[r.ruleIndex]?.id, what).toBe(c.id);
        expect(r.level, what).toBe(sarifLevel(c.severity, f.level));
        // The message as SARIF plain text: braces doubled, brackets escaped (SARIF §3.11.5-6).
        expect(r.message.text.startsWith(sarifText(f.message)), `${what}: ${r.message.text}`).toBe(true);
        if (f.replay?.includes('{')) expect(r.message.text).toContain(`Replay: ${f.replay.replace(/[{}]/g, (c) => c + c)}`);
        expect(r.partialFingerprints, what).toEqual({ [FINGERPRINT_KEY]: fingerprintHash(f.fingerprint) });
        expect(r.baselineState, what).toBeUndefined();
      });
      // Both mappings occur in the demo: a fail at its check's severity and a partial as warning.
      expect(expected.some(({ f }) => f.level === 'fail')).toBe(true);
      expect(expected.some(({ f }) => f.level === 'partial')).toBe(true);
    });

    it("points robust-input internal-error on get_note at the line of demo/server.mjs that names 'get_note'", () => {
      const lines = readFileSync(DEMO, 'utf8').split('\n');
      const line = lines.findIndex((l) => l.includes("'get_note'") || l.includes('"get_note"')) + 1;
      expect(line).toBeGreaterThan(0);
      const ri = report.checks.find((c) => c.id === 'robust-input')!;
      const f = ri.findings.find((x) => x.messageId === 'internal-error' && x.tool === 'get_note')!;
      expect(f).toBeDefined();
      const run0 = sarif.runs[0]!;
      const r = run0.results.find((x) => x.partialFingerprints[FINGERPRINT_KEY] === fingerprintHash(f.fingerprint) && x.ruleId === 'robust-input')!;
      expect(r).toBeDefined();
      const loc = r.locations[0]!;
      const artifact = loc.physicalLocation!.artifactLocation;
      // The runs' cwd is the repository root, which holds demo/: a %SRCROOT%-relative path.
      expect(artifact).toEqual({ uri: 'demo/server.mjs', uriBaseId: 'SRCROOT' });
      expect(run0.originalUriBaseIds?.SRCROOT?.uri).toBe(pathToFileURL(root.endsWith('/') ? root : `${root}/`).href);
      expect(new URL(artifact.uri, run0.originalUriBaseIds!.SRCROOT!.uri).href).toBe(pathToFileURL(DEMO).href);
      expect(loc.physicalLocation!.region!.startLine).toBe(line);
      expect(loc.logicalLocations).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'get_note', kind: 'function' })]));
    });

    it('re-rendered from a saved report whose cwd does not hold the server: an absolute file URI', async () => {
      const edited = readJson<Report>(out('r.json'));
      edited.target.cwd = join(tmp, 'elsewhere');
      edited.target.root = join(tmp, 'elsewhere');
      writeFileSync(out('elsewhere.json'), JSON.stringify(edited));
      const r = await runCli(['report', out('elsewhere.json'), '--format', 'sarif', '--output', out('elsewhere.sarif')]);
      expect([0, 1], r.stderr).toContain(r.code);
      const log = readJson<SarifLog>(out('elsewhere.sarif'));
      const located = log.runs[0]!.results.filter((x) => x.locations[0]?.physicalLocation);
      expect(located.length).toBeGreaterThan(0);
      for (const x of located) expect(x.locations[0]!.physicalLocation!.artifactLocation).toEqual({ uri: pathToFileURL(DEMO).href });
      expect(validateSarifSchema(log)).toEqual([]);
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('JUnit', () => {
    let xml: string;
    let junit: JUnit;
    beforeAll(() => {
      xml = readFileSync(out('r.xml'), 'utf8');
      junit = parseJunit(xml);
    });

    it('is well-formed XML with one testsuite per check, named by check id, and totals that add up', () => {
      expect(XMLValidator.validate(xml)).toBe(true);
      const suites = junit.testsuites.testsuite;
      expect(suites.map((s) => s['@_name'])).toEqual(report.checks.map((c) => c.id));
      const sum = (k: '@_tests' | '@_failures' | '@_skipped' | '@_errors') => suites.reduce((n, s) => n + Number(s[k]), 0);
      for (const k of ['@_tests', '@_failures', '@_skipped', '@_errors'] as const) expect(Number(junit.testsuites[k]), k).toBe(sum(k));
      for (const s of suites) {
        expect(Number(s['@_tests']), s['@_name']).toBe(s.testcase.length);
        expect(Number(s['@_failures']), s['@_name']).toBe(s.testcase.filter((c) => c.failure !== undefined).length);
        expect(Number(s['@_skipped']), s['@_name']).toBe(s.testcase.filter((c) => c.skipped !== undefined).length);
      }
      expect(Number(junit.testsuites['@_failures'])).toBeGreaterThan(0);
      expect(Number(junit.testsuites['@_skipped'])).toBeGreaterThan(0);
    });

    it('has a case per check per listed tool, plus (server), plus any unlisted tool a finding names; a tool a check did not judge is <skipped> with why', () => {
      const toolNames = report.tools.map((t) => t.name);
      expect(toolNames.length).toBeGreaterThan(0);
      for (const c of report.checks) {
        const suite = junit.testsuites.testsuite.find((s) => s['@_name'] === c.id)!;
        const names = suite.testcase.map((tc) => tc['@_name']);
        const unlisted = c.findings.flatMap((f) => (f.tool === undefined || toolNames.includes(f.tool) ? [] : [f.tool]));
        expect(names, c.id).toEqual(['(server)', ...toolNames, ...new Set(unlisted)]);
        for (const n of c.coverage?.notJudged ?? []) {
          const tc = suite.testcase.find((x) => x['@_name'] === n.tool)!;
          if (c.findings.some((f) => f.tool === n.tool && f.level !== 'info')) continue;
          expect((tc.skipped as { '@_message': string } | undefined)?.['@_message'], `${c.id}/${n.tool}`).toBe(`not judged: ${n.why}`);
          expect(tc.failure, `${c.id}/${n.tool}`).toBeUndefined();
        }
      }
      // The demo's strict-arguments leaves out tools that may write: they are skipped, not passed.
      expect(report.checks.find((c) => c.id === 'strict-arguments')!.coverage!.notJudged.length).toBeGreaterThan(0);
    });

    it('gives every case with a fail finding a <failure>, keeps partial ones in <system-out> (no gate failed), skips n/a checks, and leaves passing checks alone', () => {
      for (const c of report.checks) {
        const suite = junit.testsuites.testsuite.find((s) => s['@_name'] === c.id)!;
        for (const tc of suite.testcase) {
          const what = `${c.id}/${tc['@_name']}`;
          const mine = c.findings.filter((f) => (f.tool ?? '(server)') === tc['@_name'] && f.level !== 'info');
          if (c.verdict === 'n/a') {
            expect(tc.skipped, what).toBeDefined();
            expect(tc.failure, what).toBeUndefined();
          } else if (!mine.some((f) => f.level === 'fail')) {
            // Partial findings are failures only when the run failed its --fail-under gate (not here).
            expect(tc.failure, what).toBeUndefined();
          } else {
            expect(tc.failure?.['@_type'], what).toBe('fail');
          }
          if (c.verdict === 'pass') expect(tc.failure, what).toBeUndefined();
        }
      }
      expect(report.checks.some((c) => c.verdict === 'n/a')).toBe(true);
      expect(report.checks.some((c) => c.verdict === 'pass')).toBe(true);
    });

    it('robust-input get_note\'s partial finding is in <system-out> with the replay line; below a --fail-under gate it is a failure; secret-echo server_info a fail', async () => {
      const suite = (id: string, j = junit) => j.testsuites.testsuite.find((s) => s['@_name'] === id)!;
      const getNote = suite('robust-input').testcase.find((tc) => tc['@_name'] === 'get_note')!;
      const f = report.checks.find((c) => c.id === 'robust-input')!.findings.find((x) => x.messageId === 'internal-error' && x.tool === 'get_note')!;
      expect(getNote.failure).toBeUndefined();
      expect(f.replay).toBeDefined();
      expect(String(getNote['system-out'])).toContain(f.replay!);
      // The same report under a gate it fails: the partial finding is part of why, so a failure.
      const gated = await runCli(['report', out('r.json'), '--fail-under', 'A', '--format', 'junit', '--output', out('gated.xml')]);
      expect(gated.code, gated.stderr).toBe(1);
      const g = parseJunit(readFileSync(out('gated.xml'), 'utf8'));
      expect(suite('robust-input', g).testcase.find((tc) => tc['@_name'] === 'get_note')!.failure?.['@_type']).toBe('partial');
      const serverInfo = suite('secret-echo').testcase.find((tc) => tc['@_name'] === 'server_info')!;
      expect(serverInfo.failure?.['@_type']).toBe('fail');
    });

    it('escapes a tool name with markup and control characters (re-rendered with sealmark report)', async () => {
      const NAME = `a<b>&"c'\u0000d\u0007`;
      const edited = readJson<Report>(out('r.json'));
      for (const t of edited.tools) if (t.name === 'get_note') t.name = NAME;
      for (const c of edited.checks) {
        for (const f of c.findings) {
          if (f.tool === 'get_note') f.tool = NAME;
          for (const [k, v] of Object.entries(f.data)) if (v === 'get_note') f.data[k] = NAME;
        }
      }
      writeFileSync(out('edited.json'), JSON.stringify(edited));
      const r = await runCli(['report', out('edited.json'), '--format', 'junit', '--output', out('e.xml')]);
      expect([0, 1], r.stderr).toContain(r.code);
      const text = readFileSync(out('e.xml'), 'utf8');
      expect(XMLValidator.validate(text)).toBe(true);
      // XML 1.0 cannot carry NUL or BEL at all: they are written as a visible \u0000 and \u0007.
      expect(text).not.toMatch(/[\u0000\u0007]/);
      const names = parseJunit(text).testsuites.testsuite.flatMap((s) => s.testcase.map((tc) => tc['@_name']));
      expect(names).toContain(`a<b>&"c'\\u0000d\\u0007`);
      expect(names).not.toContain('get_note');
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('sealmark report <saved.json>', () => {
    it('re-renders the JSON report to a deep-equal object, and the SARIF to the same log the audit wrote', async () => {
      const [asJson, asSarif] = await Promise.all([
        runCli(['report', out('r.json'), '--format', 'json']),
        runCli(['report', out('r.json'), '--format', 'sarif', '--output', out('again.sarif')]),
      ]);
      expect(asJson.stderr).toBe('');
      expect(JSON.parse(asJson.stdout)).toEqual(readJson(out('r.json')));
      expect(readJson(out('again.sarif'))).toEqual(readJson(out('r.sarif')));
      // No gate given: the default one (SPEC section 2: a failed check at severity error exits 1);
      // the demo's own exit-0 exception belongs to `audit --demo`, not to a saved report.
      expect(report.checks.some((c) => c.severity === 'error' && c.verdict === 'fail')).toBe(true);
      expect(asJson.code).toBe(1);
      expect(asSarif.code).toBe(1);
    }, SLOW);

    it('gates a saved report with --fail-under, by letter and by percent, both ways', async () => {
      const letter = report.grade.letter!;
      const percent = report.grade.percent!;
      expect(letter).not.toBe('A');
      expect(percent).toBeLessThan(100);
      const [atLetter, aboveLetter, atPercent, abovePercent] = await Promise.all([
        runCli(['report', out('r.json'), '--format', 'json', '--fail-under', letter]),
        runCli(['report', out('r.json'), '--format', 'json', '--fail-under', 'A']),
        runCli(['report', out('r.json'), '--format', 'json', '--fail-under', String(Math.floor(percent))]),
        runCli(['report', out('r.json'), '--format', 'json', '--fail-under', `${Math.floor(percent) + 1}%`]),
      ]);
      expect(atLetter.code, atLetter.stderr).toBe(0);
      expect(aboveLetter.code, aboveLetter.stderr).toBe(1);
      expect(atPercent.code, atPercent.stderr).toBe(0);
      expect(abovePercent.code, abovePercent.stderr).toBe(1);
    }, SLOW);

    it('exits 2 naming the problem for a missing file, a non-JSON file, a JSON file that is no report, and schemaVersion 2', async () => {
      const missing = out('no-such-report.json');
      writeFileSync(out('not.json'), 'this is not JSON\n');
      writeFileSync(out('bare.json'), '{"schemaVersion":1}');
      const v2 = readJson<Record<string, unknown>>(out('r.json'));
      v2.schemaVersion = 2;
      writeFileSync(out('v2.json'), JSON.stringify(v2));
      const [a, b, c, d, e] = await Promise.all([
        runCli(['report', missing]),
        runCli(['report', out('not.json')]),
        runCli(['report', out('bare.json')]),
        runCli(['report', out('v2.json')]),
        runCli(['report', out('r.json'), '--baseline', missing]),
      ]);
      for (const r of [a, b, c, d, e]) {
        expect(r.code, r.stderr).toBe(2);
        expect(r.stdout).toBe('');
      }
      expect(a.stderr).toContain(missing);
      expect(a.stderr).toMatch(/cannot read|ENOENT/);
      expect(b.stderr).toContain(out('not.json'));
      expect(b.stderr).toContain('not JSON');
      expect(c.stderr).toContain(out('bare.json'));
      expect(c.stderr).toContain('not a sealmark JSON report');
      // The first field that is wrong is named.
      expect(c.stderr).toMatch(/: (methodologyVersion|cliVersion|generatedAt|durationMs|status|target|grade|checks|tools|calls): /);
      expect(d.stderr).toContain(out('v2.json'));
      expect(d.stderr).toMatch(/schemaVersion: /);
      expect(e.stderr).toContain('--baseline');
      expect(e.stderr).toContain(missing);
    }, SLOW);

    it('a hand-edited report is a usage error naming the field, in every format, never an internal error', async () => {
      const edits: [string, (r: Record<string, any>) => void, RegExp][] = [
        ['baseline', (r) => (r.baseline = {}), /baseline\.file/],
        ['no coverage', (r) => delete r.coverage, /coverage/],
        ['no sandbox', (r) => delete r.sandbox, /sandbox/],
        ['no stderrTail', (r) => delete r.stderrTail, /stderrTail/],
        ['a call without reply', (r) => delete r.calls[0].reply, /calls\.0\.reply/],
        ['a numeric tool', (r) => (r.checks[1].findings[0].tool = 123), /checks\.1\.findings\.0\.tool/],
        ['a numeric request', (r) => (r.checks[1].findings[0].request = 5), /checks\.1\.findings\.0\.request/],
        ['no check title', (r) => delete r.checks[0].title, /checks\.0\.title/],
        ['a numeric cwd', (r) => (r.target.cwd = 5), /target\.cwd/],
        ['an entry without toolLines', (r) => (r.target.entry = { file: '/x.js' }), /target\.entry\.toolLines/],
      ];
      for (const [name, edit, field] of edits) {
        const r = readJson<Record<string, any>>(out('r.json'));
        edit(r);
        const file = out(`edited-${name.replace(/\W+/g, '-')}.json`);
        writeFileSync(file, JSON.stringify(r));
        for (const format of ['text', 'sarif', 'junit', 'html']) {
          const res = await runCli(['report', file, '--format', format]);
          expect(res.code, `${name} as ${format}: ${res.stderr}`).toBe(2);
          expect(res.stderr, name).toMatch(field);
          expect(res.stderr, name).not.toContain('internal error');
        }
      }
    }, SLOW * 4);

    it('a report saved without fingerprints (an older sealmark) renders as SARIF with the fingerprints computed', async () => {
      const r = readJson<Report>(out('r.json'));
      for (const c of r.checks) for (const f of c.findings) delete (f as Partial<typeof f>).fingerprint;
      writeFileSync(out('old.json'), JSON.stringify(r));
      const res = await runCli(['report', out('old.json'), '--format', 'sarif']);
      expect(res.code, res.stderr).not.toBe(2);
      const again = await runCli(['report', out('r.json'), '--format', 'sarif']);
      expect(JSON.parse(res.stdout)).toEqual(JSON.parse(again.stdout));
    }, SLOW);
  });
});

// =============================================================================================
// 2 (relative paths) and 5 (format from the extension): one run of a fixture from the repository
// root with a relative server path and a lone `--output r.sarif`.

describe('audit --output r.sarif of a server given by a relative path', () => {
  let r: CliRun;
  let sarif: SarifLog;
  beforeAll(async () => {
    r = await runCli(['audit', '--output', join(tmp, 'c14.sarif'), '--', 'node', C14_FIXTURE]);
    sarif = readJson<SarifLog>(join(tmp, 'c14.sarif'));
  }, SLOW);

  it('writes SARIF (the format from the extension) and nothing to stdout', () => {
    expect([0, 1], r.stderr).toContain(r.code);
    expect(r.stdout).toBe('');
    expect(sarif.version).toBe('2.1.0');
    expect(validateSarifSchema(sarif)).toEqual([]);
  });

  it('locates results at the relative path under %SRCROOT%, the file URL of the cwd', () => {
    const run0 = sarif.runs[0]!;
    expect(run0.originalUriBaseIds).toEqual({ SRCROOT: { uri: pathToFileURL(root.endsWith('/') ? root : `${root}/`).href } });
    expect(run0.originalUriBaseIds!.SRCROOT!.uri.endsWith('/')).toBe(true);
    const located = run0.results.filter((x) => x.locations[0]?.physicalLocation);
    expect(located.length).toBeGreaterThan(0);
    const lines = readFileSync(join(root, C14_FIXTURE), 'utf8').split('\n');
    const line = lines.findIndex((l) => l.includes("'convert'") || l.includes('"convert"')) + 1;
    for (const x of located) {
      expect(x.locations[0]!.physicalLocation!.artifactLocation).toEqual({ uri: C14_FIXTURE, uriBaseId: 'SRCROOT' });
    }
    const ri = located.find((x) => x.ruleId === 'robust-input')!;
    expect(ri.locations[0]!.physicalLocation!.region!.startLine).toBe(line);
  });
});

describe('SARIF locations when the interpreter is given by its path', () => {
  // `-- /usr/bin/node server.mjs` (or `.venv/bin/python server.py`): the server's entry is the
  // script, not the interpreter binary.
  it('points at the script, not at the interpreter', async () => {
    const r = await runCli(['audit', '--only', 'robust-input', '--format', 'json', '--output', join(tmp, 'abs.json'), '--format', 'sarif', '--output', join(tmp, 'abs.sarif'), '--', process.execPath, C14_FIXTURE]);
    expect([0, 1], r.stderr).toContain(r.code);
    const rep = readJson<Report>(join(tmp, 'abs.json'));
    expect(rep.target.entry?.file).toBe(join(root, C14_FIXTURE));
    const located = readJson<SarifLog>(join(tmp, 'abs.sarif')).runs[0]!.results.filter((x) => x.locations[0]?.physicalLocation);
    expect(located.length).toBeGreaterThan(0);
    for (const x of located) expect(x.locations[0]!.physicalLocation!.artifactLocation).toEqual({ uri: C14_FIXTURE, uriBaseId: 'SRCROOT' });
  }, SLOW);
});

// =============================================================================================
// 5. Output planning errors: exit 2 with a message, and no output file left behind.

describe('output planning errors (exit 2 before the audit)', () => {
  let dir: string;
  beforeAll(() => {
    dir = join(tmp, 'plan');
    mkdirSync(dir);
  });

  const cases: { name: string; args: (d: string) => string[]; files: string[]; message: (d: string) => RegExp }[] = [
    {
      name: 'two formats to stdout',
      args: (d) => ['--format', 'json', '--output', join(d, 'one.json'), '--format', 'sarif', '--format', 'text'],
      files: ['one.json'],
      message: () => /--format sarif, text: only one report can go to stdout/,
    },
    {
      name: 'an output whose extension names no format',
      args: (d) => ['--output', join(d, 'r.dat')],
      files: ['r.dat'],
      message: (d) => new RegExp(`--output ${reEscape(join(d, 'r.dat'))}: no --format for it, and its extension names none`),
    },
    {
      name: 'the same output twice',
      args: (d) => ['--format', 'json', '--output', join(d, 'x.json'), '--format', 'sarif', '--output', `${d}/./x.json`],
      files: ['x.json'],
      message: (d) => new RegExp(`--output ${reEscape(`${d}/./x.json`)}: the same file as --output ${reEscape(join(d, 'x.json'))}`),
    },
    {
      name: 'the transcript and an output are one file',
      args: (d) => ['--format', 'json', '--output', join(d, 't.json'), '--transcript', join(d, 't.json')],
      files: ['t.json'],
      message: (d) => new RegExp(`--transcript ${reEscape(join(d, 't.json'))}: the same file as --output`),
    },
    {
      name: 'two outputs that are one file through a symlink',
      args: (d) => {
        writeFileSync(join(d, 'real.json'), '');
        if (!existsSync(join(d, 'link.sarif'))) symlinkSync(join(d, 'real.json'), join(d, 'link.sarif'));
        return ['--format', 'json', '--output', join(d, 'real.json'), '--format', 'sarif', '--output', join(d, 'link.sarif')];
      },
      files: [],
      message: (d) => new RegExp(`--output ${reEscape(join(d, 'link.sarif'))}: the same file as --output ${reEscape(join(d, 'real.json'))}`),
    },
    {
      name: 'a FIFO (a write would block, and Ctrl-C with it)',
      args: (d) => {
        if (!existsSync(join(d, 'pipe.json'))) spawnSync('mkfifo', [join(d, 'pipe.json')]);
        return ['--format', 'json', '--output', join(d, 'pipe.json')];
      },
      files: [],
      message: (d) => new RegExp(`--output ${reEscape(join(d, 'pipe.json'))}: cannot write there \\(not a regular file\\)`),
    },
    {
      name: 'an unknown format',
      args: (d) => ['--format', 'yaml', '--output', join(d, 'r.yaml')],
      files: ['r.yaml'],
      message: () => /--format "yaml": expected one of text, json, sarif, junit, html/,
    },
    {
      name: 'an output in a missing directory (after a good one)',
      args: (d) => ['--format', 'json', '--output', join(d, 'good.json'), '--format', 'sarif', '--output', join(d, 'missing', 'r.sarif')],
      files: ['good.json', 'missing'],
      message: (d) => new RegExp(`--output ${reEscape(join(d, 'missing', 'r.sarif'))}: cannot write there \\(ENOENT\\)`),
    },
  ];

  for (const c of cases) {
    it(`${c.name}`, async () => {
      const r = await runCli(['audit', '--demo', ...c.args(dir)]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(c.message(dir));
      for (const f of c.files) expect(existsSync(join(dir, f)), `${f} was left behind`).toBe(false);
    }, SLOW);
  }

  it('a usage error does not truncate a report already at an --output path', async () => {
    const keep = join(dir, 'keep.json');
    writeFileSync(keep, '{"keep":true}\n');
    const r = await runCli(['audit', '--demo', '--format', 'json', '--output', keep, '--format', 'sarif', '--output', join(dir, 'missing', 'r.sarif')]);
    expect(r.code, r.stderr).toBe(2);
    expect(readFileSync(keep, 'utf8')).toBe('{"keep":true}\n');
  }, SLOW);
});

function reEscape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// =============================================================================================
// 6. --baseline, with a fixture whose faults are switched by FAULTS.

describe('--baseline: only new findings fail', () => {
  const p = (name: string) => join(tmp, 'baseline', name);
  /** Audits the fixture with FAULTS=<faults>. protocol-errors is skipped: the v1 SDK drops a
   * tools/call with array params unanswered, and each run would wait out the hang limit for it. */
  const auditFaults = (faults: string, extra: string[]) => runCli(['audit', '--skip', 'protocol-errors', '--env', `FAULTS=${faults}`, ...extra, '--', 'node', FAULTS_FIXTURE]);
  let base: CliRun;
  let reordered: CliRun;
  let leak: CliRun;
  let fixed: CliRun;
  let baseReport: Report;
  let reorderedReport: Report;
  let leakReport: Report;
  let fixedReport: Report;

  beforeAll(async () => {
    mkdirSync(p(''));
    base = await auditFaults('crash', ['--format', 'json', '--output', p('base.json')]);
    if (base.code !== 0) throw new Error(`baseline run exited ${base.code}: ${base.stderr}`);
    [reordered, leak] = await Promise.all([
      auditFaults('crash,reverse', ['--baseline', p('base.json'), '--format', 'json', '--output', p('reordered.json'), '--format', 'text']),
      auditFaults('crash,leak', ['--baseline', p('base.json'), '--format', 'json', '--output', p('leak.json'), '--format', 'sarif', '--output', p('leak.sarif'), '--format', 'text']),
    ]);
    fixed = await auditFaults('', ['--baseline', p('leak.json'), '--format', 'json', '--output', p('fixed.json'), '--format', 'text']);
    baseReport = readJson<Report>(p('base.json'));
    reorderedReport = readJson<Report>(p('reordered.json'));
    leakReport = readJson<Report>(p('leak.json'));
    fixedReport = readJson<Report>(p('fixed.json'));
  }, SLOW);

  const crashOf = (r: Report) => r.checks.find((c) => c.id === 'robust-input')!.findings.find((f) => f.messageId === 'internal-error' && f.tool === 'get_record');
  const leakOf = (r: Report) => r.checks.find((c) => c.id === 'secret-echo')!.findings.find((f) => f.messageId === 'env-canary' && f.tool === 'get_status');

  it('the baseline run has the planted crash (robust-input internal-error partial) and no leak', () => {
    expect(baseReport.baseline).toBeUndefined();
    expect(crashOf(baseReport)?.level).toBe('partial');
    expect(leakOf(baseReport)).toBeUndefined();
    expect(failing(baseReport).every((f) => f.baselineState === undefined)).toBe(true);
  });

  it('the same faults in a reversed listing: 0 new, 0 fixed, every compared finding unchanged, exit 0', () => {
    expect(reordered.code, reordered.stderr).toBe(0);
    expect(reorderedReport.tools.map((t) => t.name)).toEqual(baseReport.tools.map((t) => t.name).reverse());
    expect(reorderedReport.tools.map((t) => t.name)).not.toEqual(baseReport.tools.map((t) => t.name));
    const compared = failing(reorderedReport);
    expect(compared.length).toBeGreaterThan(0);
    expect(crashOf(reorderedReport)).toBeDefined();
    for (const f of compared) expect(f.baselineState, f.fingerprint).toBe('unchanged');
    for (const f of reorderedReport.checks.flatMap((c) => c.findings.filter((x) => x.level === 'info'))) expect(f.baselineState).toBeUndefined();
    expect(reorderedReport.baseline).toMatchObject({ file: p('base.json'), generatedAt: baseReport.generatedAt, new: [], fixed: [], unchanged: compared.length });
    expect(reordered.stdout).not.toMatch(/\bNEW\b/);
    expect(reordered.stdout).toMatch(/^baseline .*0 new, \d+ unchanged, 0 fixed/m);
  });

  it('a new leak: the secret-echo finding is new (and only it), the crash unchanged, exit 1, text marks NEW', () => {
    expect(leak.code, leak.stderr).toBe(1);
    const f = leakOf(leakReport)!;
    expect(f).toBeDefined();
    expect(f.level).toBe('fail');
    expect(leakReport.checks.find((c) => c.id === 'secret-echo')!.severity).toBe('error');
    expect(f.baselineState).toBe('new');
    expect(crashOf(leakReport)?.baselineState).toBe('unchanged');
    expect(leakReport.baseline!.new).toEqual([{ fingerprint: f.fingerprint, checkId: 'secret-echo', messageId: 'env-canary', level: 'fail', tool: 'get_status', message: f.message }]);
    expect(leakReport.baseline!.fixed).toEqual([]);
    const newLines = leak.stdout.split('\n').filter((l) => /\bNEW\b/.test(l));
    expect(newLines).toHaveLength(1);
    expect(newLines[0]).toMatch(/NEW fail env-canary: get_status/);
  });

  it('SARIF written with a baseline carries baselineState on its results (and stays valid)', () => {
    const log = readJson<SarifLog>(p('leak.sarif'));
    expect(validateSarifSchema(log)).toEqual([]);
    const results = log.runs[0]!.results;
    const compared = failing(leakReport);
    expect(results).toHaveLength(compared.length);
    compared.forEach((f, i) => {
      expect(results[i]!.partialFingerprints[FINGERPRINT_KEY]).toBe(fingerprintHash(f.fingerprint));
      expect(results[i]!.baselineState, f.fingerprint).toBe(f.baselineState);
    });
    expect(results.find((r) => r.ruleId === 'secret-echo')?.baselineState).toBe('new');
    expect(results.find((r) => r.ruleId === 'robust-input')?.baselineState).toBe('unchanged');
  });

  it('all faults gone: the earlier findings are listed as fixed, text says fixed, exit 0', () => {
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(failing(fixedReport)).toEqual([]);
    expect(fixedReport.baseline!.new).toEqual([]);
    expect(fixedReport.baseline!.unchanged).toBe(0);
    const gone = fixedReport.baseline!.fixed.map((f) => `${f.checkId}/${f.messageId}/${f.tool}`).sort();
    expect(gone).toEqual(['robust-input/internal-error/get_record', 'secret-echo/env-canary/get_status']);
    const byFp = new Map(failing(leakReport).map((f) => [f.fingerprint, f]));
    for (const ref of fixedReport.baseline!.fixed) expect(byFp.get(ref.fingerprint)?.message).toBe(ref.message);
    expect(fixed.stdout).toMatch(/^ *fixed secret-echo env-canary: /m);
    expect(fixed.stdout).toMatch(/^ *fixed robust-input internal-error: /m);
    expect(fixed.stdout).toMatch(/^baseline .*0 new, 0 unchanged, 2 fixed/m);
  });

  it('`sealmark report current.json --baseline base.json` makes the same comparison as the audit did', async () => {
    const r = await runCli(['report', p('leak.json'), '--baseline', p('base.json'), '--format', 'json', '--output', p('leak-again.json')]);
    expect(r.code, r.stderr).toBe(leak.code);
    const again = readJson<Report>(p('leak-again.json'));
    expect(again.baseline).toEqual(leakReport.baseline);
    expect(again.checks).toEqual(leakReport.checks);
  }, SLOW);
});

// =============================================================================================
// 7. The progress line on a terminal.

describe('progress line', () => {
  const PHASES = new Set<string>([...allChecks.map((c) => c.meta.id), ...packs.map((p) => p.id)]);
  const PROBES = new Set(allChecks.flatMap((c) => c.meta.probes.map((p) => p.id)));
  const DEMO_TOOLS = new Set(['search_notes', 'get_note', 'add_note', 'list_tags', 'list_recent', 'server_info', 'open_dashboard', 'render_note']);
  const LINE = /^(?<phase>[a-z][a-z/-]*) · tool (?:\d+\/\d+ )?(?<tool>\S+) · (?<probe>[a-z][a-z.-]*) · (?<calls>\d+) calls?$/;
  let tty: CliRun;
  let quiet: CliRun;

  beforeAll(async () => {
    const cmd = (extra: string, file: string) => `${sh(process.execPath)} ${sh(BIN)} audit --demo${extra} --format json --output ${sh(join(tmp, file))}`;
    tty = await runPty(cmd('', 'tty.json'));
    quiet = await runPty(cmd(' --quiet', 'quiet.json'));
  }, SLOW);

  it('on a TTY: redrawn lines with a phase, the tool, a probe id and the calls made, cleared with ESC[2K', () => {
    expect(tty.code, tty.stdout + tty.stderr).toBe(0);
    expect(existsSync(join(tmp, 'tty.json'))).toBe(true);
    expect(tty.stdout).toContain('\r\u001b[2K');
    // The report went to the file: once the line is cleared, one summary line says where (SPEC section 8).
    const summary = /\r\u001b\[2Ksealmark: grade [A-F] \([\d.]+%\) · \d+ failing, \d+ partial findings · written to \S+tty\.json\r?\n$/;
    expect(tty.stdout).toMatch(summary);
    const progress = tty.stdout.replace(summary, '\r\u001b[2K');
    const drawn = progress.split('\r').map((s) => s.replace(/^\u001b\[2K/, '')).filter((s) => s.includes(' · '));
    expect(drawn.length, JSON.stringify(tty.stdout.slice(0, 500))).toBeGreaterThan(0);
    const matched = drawn.map((s) => LINE.exec(s)?.groups).filter((g) => g !== undefined);
    expect(matched.length, `no progress line matched; first lines: ${JSON.stringify(drawn.slice(0, 5))}`).toBeGreaterThan(0);
    for (const g of matched) {
      expect(PHASES.has(g.phase!), g.phase).toBe(true);
      expect(DEMO_TOOLS.has(g.tool!), g.tool).toBe(true);
      expect(PROBES.has(g.probe!), g.probe).toBe(true);
    }
    // Every drawn line ends with its call count.
    for (const s of drawn) expect(s, JSON.stringify(s)).toMatch(/ · \d+ calls?$/);
    // The report went to the file, not to the terminal; the last thing written clears the line.
    expect(tty.stdout).not.toMatch(/^grade [A-F]/m);
    expect(progress.endsWith('\r\u001b[2K')).toBe(true);
  });

  it('with --quiet: no progress line and no escape sequence', () => {
    expect(quiet.code, quiet.stdout + quiet.stderr).toBe(0);
    expect(existsSync(join(tmp, 'quiet.json'))).toBe(true);
    expect(quiet.stdout).not.toContain('\u001b');
    expect(quiet.stdout).not.toMatch(/ · \d+ calls?/);
  });
});
