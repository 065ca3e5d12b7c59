/**
 * Adversarial servers for the report features (test/fixtures/servers/adversarial-reports/, written
 * by a tester; what each attacks is in its header comment). Each test pins a bug those fixtures
 * exposed and that was fixed, through the real binary `node bin/sealmark.js` (needs a fresh dist/:
 * `npm run build`):
 *
 * - hostile-text.mjs: SARIF valid with tools named `__proto__`/`constructor`/`toString`; SARIF
 *   message text, JUnit and HTML escape server text;
 * - init-reject-ansi.mjs: the "could not be audited" stderr line escapes ESC, CR/LF and bidi;
 * - leak-moves.mjs: `--baseline` lists as fixed only what was looked for again, and a leak found
 *   through another first call keeps its fingerprint;
 * - `sealmark report` on hand-edited reports: a usage error, never an internal error;
 * - `--output -` and a failed write (`/dev/full`): stdout holds exactly one document;
 * - hangs-forever.mjs: the progress line fits a 40-column pseudo-terminal and SIGINT clears it;
 * - huge-listing.mjs (TOOLS=300): the audit finishes and writes every format.
 *
 * Two further tests pin residual bugs found while writing these (they fail until src/ is fixed):
 * the `__proto__` tool's source line is lost, and a deeply nested unknown field of a saved report
 * makes `sealmark report --format json` an internal error.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from '../helpers/run.js';
import { validateSarifSchema } from '../helpers/sarif.js';
import { BIN, collectOutput, runCli, type CliRun } from '../helpers/cli.js';
import type { Report, ReportFinding } from '../../src/report/build.js';

/** Fixture paths relative to the repository root (the runs' cwd). */
const FIX = 'test/fixtures/servers/adversarial-reports';
const HOSTILE = `${FIX}/hostile-text.mjs`;
const INIT_REJECT = `${FIX}/init-reject-ansi.mjs`;
const LEAK_MOVES = `${FIX}/leak-moves.mjs`;
const HANGS = `${FIX}/hangs-forever.mjs`;
const HUGE = `${FIX}/huge-listing.mjs`;
/** Generous: two cores shared with other test runs. */
const SLOW = 180_000;

/** Characters that must never reach a terminal or a viewer raw: C0 (but \n), DEL, C1, bidi embeddings/overrides/isolates. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const BIDI = /[\u202a-\u202e\u2066-\u2069]/;

/** Runs `node bin/sealmark.js …args` from `cwd` (default: the repository root), stdin /dev/null, stdout and stderr piped. */
const run = (args: string[], opts: { cwd?: string } = {}): Promise<CliRun> => runCli(args, { ...opts, stdin: 'ignore' });

const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const readJson = <T = unknown>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;
const failing = (r: Report): ReportFinding[] => r.checks.flatMap((c) => c.findings.filter((f) => f.level !== 'info'));

let tmp: string;
beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'cli.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test builds first)');
  tmp = mkdtempSync(join(tmpdir(), 'sealmark-adv-reports-'));
});
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});
const at = (...parts: string[]) => join(tmp, ...parts);

// ---------------------------------------------------------------------------------------------
// SARIF: the official 2.1.0 schema (Ajv 2020-12 + formats), as in reports.test.ts.


interface SarifResult {
  ruleId: string;
  message: { text: string };
  locations: {
    physicalLocation?: { artifactLocation: { uri: string; uriBaseId?: string }; region?: { startLine?: unknown } };
    logicalLocations?: { name?: string; fullyQualifiedName?: string; kind?: string }[];
  }[];
}
interface SarifLog {
  version: string;
  runs: { results: SarifResult[] }[];
}

/**
 * What a SARIF viewer shows for a plain-text message (SARIF 2.1.0 §3.11.5-6), reading it strictly
 * the way sealmark writes it: `{{`/`}}` are literal braces, `\\`, `\[`, `\]` a literal backslash
 * and brackets. Throws on anything a viewer could read as a placeholder (`{0}`) or an embedded
 * link (`[x](y)`), and on a backslash sealmark left unescaped.
 */
function sarifDisplayed(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === '\\') {
      if (next !== '\\' && next !== '[' && next !== ']') throw new Error(`unescaped \\ at ${i}: ${JSON.stringify(text.slice(Math.max(0, i - 20), i + 20))}`);
      out += next;
      i++;
    } else if (c === '{' || c === '}') {
      if (next !== c) throw new Error(`single ${c} at ${i}: ${JSON.stringify(text.slice(Math.max(0, i - 20), i + 20))}`);
      out += c;
      i++;
    } else if (c === '[' || c === ']') {
      throw new Error(`unescaped ${c} at ${i}: ${JSON.stringify(text.slice(Math.max(0, i - 20), i + 20))}`);
    } else {
      out += c;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// JUnit parsing.

interface JCase {
  '@_name': string;
}
interface JUnit {
  testsuites: { testsuite: { '@_name': string; testcase: JCase[] }[] };
}
function parseJunit(xml: string): JUnit {
  const parser = new XMLParser({ ignoreAttributes: false, parseAttributeValue: false, parseTagValue: false, isArray: (n) => n === 'testsuite' || n === 'testcase' || n === 'property' });
  return parser.parse(xml) as JUnit;
}

// ---------------------------------------------------------------------------------------------
// Display width, counted here independently of the string-width package sealmark uses:
// per grapheme, 0 for a control or a lone combining mark, 2 for East Asian wide/fullwidth
// characters and emoji, 1 otherwise.

const WIDE = /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]|[\u{20000}-\u{3fffd}]|\p{Extended_Pictographic}/u;
function displayWidth(s: string): number {
  let w = 0;
  for (const { segment } of new Intl.Segmenter().segment(s)) {
    if (/^[\p{Cc}\p{Mn}\p{Me}\u200b-\u200f\u2028\u2029]+$/u.test(segment)) continue;
    w += WIDE.test(segment) ? 2 : 1;
  }
  return w;
}

// =============================================================================================
// hostile-text.mjs: one audit writing every format.

describe('hostile-text.mjs: server text in every report format', () => {
  let audited: CliRun;
  let report: Report;
  let sarif: SarifLog;
  const PROTO_NAMES = ['__proto__', 'constructor', 'toString'];

  beforeAll(async () => {
    mkdirSync(at('hostile'));
    audited = await run([
      'audit',
      '--format', 'json', '--output', at('hostile', 'r.json'),
      '--format', 'sarif', '--output', at('hostile', 'r.sarif'),
      '--format', 'junit', '--output', at('hostile', 'r.xml'),
      '--format', 'html', '--output', at('hostile', 'r.html'),
      '--format', 'text',
      '--', 'node', HOSTILE,
    ]);
    if (!existsSync(at('hostile', 'r.json'))) throw new Error(`hostile-text audit wrote no report (exit ${audited.code}): ${audited.stderr}`);
    report = readJson<Report>(at('hostile', 'r.json'));
    sarif = readJson<SarifLog>(at('hostile', 'r.sarif'));
  }, SLOW);

  /** The SARIF results about tool `name`. */
  const resultsFor = (name: string) => sarif.runs[0]!.results.filter((r) => r.locations.some((l) => l.logicalLocations?.some((x) => x.name === name)));

  it('tools named __proto__, constructor and toString give SARIF valid against the official schema, with an integer startLine or none', () => {
    expect([0, 1], audited.stderr).toContain(audited.code);
    expect(report.status).toBe('audited');
    for (const name of PROTO_NAMES) expect(report.tools.map((t) => t.name)).toContain(name);
    const errors = validateSarifSchema(sarif);
    expect(errors, JSON.stringify(errors, null, 2).slice(0, 4000)).toEqual([]);
    expect(sarif.version).toBe('2.1.0');
    for (const name of PROTO_NAMES) expect(resultsFor(name).length, name).toBeGreaterThan(0);
    // Every region (those tools' included): none, or a positive integer line.
    for (const r of sarif.runs[0]!.results) {
      for (const l of r.locations) {
        const region = l.physicalLocation?.region;
        if (region === undefined) continue;
        expect(Number.isInteger(region.startLine), JSON.stringify(l)).toBe(true);
        expect(region.startLine as number).toBeGreaterThanOrEqual(1);
      }
    }
    // `constructor` and `toString` point at the lines of the fixture that quote them, not at
    // Object.prototype's members.
    const lines = readFileSync(join(root, HOSTILE), 'utf8').split('\n');
    for (const name of ['constructor', 'toString']) {
      const line = lines.findIndex((l) => l.includes(`"${name}"`) || l.includes(`'${name}'`)) + 1;
      expect(line, name).toBeGreaterThan(0);
      for (const r of resultsFor(name)) expect(r.locations[0]!.physicalLocation?.region?.startLine, name).toBe(line);
    }
  });

  it('SARIF message text escapes server text (braces doubled, [ ] \\ escaped, controls and bidi as \\uXXXX); JUnit escapes bidi; HTML carries no raw payload', () => {
    const results = sarif.runs[0]!.results;
    expect(results.length).toBeGreaterThan(0);
    const shown: string[] = [];
    for (const r of results) {
      const t = r.message.text;
      expect(t, JSON.stringify(t)).not.toMatch(RAW_CONTROL);
      shown.push(sarifDisplayed(t)); // throws on a placeholder, a link, or a bare backslash
    }
    // The hostile text was kept, readable: what a viewer shows is the server's text with the
    // controls and bidi overrides as visible escapes, its brackets and braces literal.
    const boom = shown.find((s) => s.includes('boom '));
    expect(boom, 'no SARIF message quotes the error text').toBeDefined();
    expect(boom).toContain('[click](https://evil.example/x) {0} {{1}} *bold*');
    expect(boom).toContain('\\u0000 nul');
    expect(boom).toContain('\\u202eevil\\u202c');
    expect(boom).toContain('\\u001b[31mred\\u001b[0m');
    // In the raw text, the placeholder and the link are escaped.
    const raw = results.map((r) => r.message.text).find((t) => t.includes('boom '))!;
    expect(raw).toContain('\\[click\\](https://evil.example/x) {{0}} {{{{1}}}}');
    expect(raw).toContain('\\\\u202eevil\\\\u202c');

    // JUnit: well-formed, no raw bidi override or control character, the override visible.
    const xml = readFileSync(at('hostile', 'r.xml'), 'utf8');
    expect(XMLValidator.validate(xml)).toBe(true);
    expect(xml).not.toMatch(BIDI);
    expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/);
    expect(xml).toContain('\\u202eevil\\u202c');

    // HTML: the payloads are shown as text, never as markup.
    const html = readFileSync(at('hostile', 'r.html'), 'utf8');
    expect(html).toMatch(/^<!DOCTYPE html>/i);
    expect(html).not.toContain('<script>alert(1)');
    expect(html).not.toContain('alert(1)</script>');
    expect(html).not.toMatch(/<img\b/i);
    expect(html).not.toMatch(/<a\b[^>]*evil\.example/i);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&lt;img src=https://evil.example/i.png&gt;');

    // The text report on stdout (piped, NO_COLOR): nothing raw either.
    expect(audited.stdout).not.toMatch(RAW_CONTROL);
  });

  it('JUnit keeps the server case apart from a tool named "(server)": one case for the server plus one per tool, names unique', () => {
    const junit = parseJunit(readFileSync(at('hostile', 'r.xml'), 'utf8'));
    const toolNames = report.tools.map((t) => t.name);
    expect(toolNames).toContain('(server)');
    for (const s of junit.testsuites.testsuite) {
      const check = report.checks.find((c) => c.id === s['@_name'])!;
      expect(check, s['@_name']).toBeDefined();
      const unlisted = new Set(check.findings.flatMap((f) => (f.tool === undefined || toolNames.includes(f.tool) ? [] : [f.tool])));
      const names = s.testcase.map((c) => c['@_name']);
      // Merged into the tool's case, the server's own case would be missing: one case short.
      expect(names.length, `${s['@_name']}: ${JSON.stringify(names)}`).toBe(1 + toolNames.length + unlisted.size);
      expect(new Set(names).size, `${s['@_name']}: ${JSON.stringify(names)}`).toBe(names.length);
      expect(names, s['@_name']).toContain('(server)');
    }
  });

  // Residual bug (fails until src/ is fixed): the fixture quotes "__proto__" on the same line as
  // "constructor", and report/source.ts finds that line, but Redactor.walk (src/redact.ts) copies
  // the report into a plain object with `out[k] = …`, where `__proto__` is the prototype setter:
  // the key is dropped from target.entry.toolLines, and SARIF falls back to line 1.
  it('the tool named __proto__ keeps its source line in the JSON report and in SARIF (like constructor)', () => {
    const lines = readFileSync(join(root, HOSTILE), 'utf8').split('\n');
    const line = lines.findIndex((l) => l.includes('"__proto__"')) + 1;
    expect(line).toBeGreaterThan(0);
    expect(Object.hasOwn(report.target.entry?.toolLines ?? {}, '__proto__'), JSON.stringify(report.target.entry?.toolLines)).toBe(true);
    expect(report.target.entry!.toolLines['__proto__']).toBe(line);
    for (const r of resultsFor('__proto__')) expect(r.locations[0]!.physicalLocation?.region?.startLine).toBe(line);
  });
});

// =============================================================================================
// init-reject-ansi.mjs: the one stderr line of a target that cannot be audited.

describe('init-reject-ansi.mjs: the "could not be audited" line', () => {
  it('escapes ESC, CR/LF and bidi: no raw ESC or U+202E on stderr, and the fake "grade A" line is not a line of its own (audit and call)', async () => {
    const [a, c] = await Promise.all([
      run(['audit', '--', 'node', INIT_REJECT]),
      run(['call', '--tool', 'x', '--args', '{}', '--', 'node', INIT_REJECT]),
    ]);
    for (const [name, r] of [['audit', a], ['call', c]] as const) {
      expect(r.code, `${name}: ${r.stderr}`).toBe(3);
      expect(r.stderr, name).toContain(name === 'audit' ? 'could not be audited' : 'no call was made');
      for (const out of [r.stderr, r.stdout]) {
        expect(out, name).not.toContain('\u001b');
        expect(out, name).not.toContain('\u202e');
        expect(out, name).not.toContain('\r');
        for (const line of out.split('\n')) expect(line.trimStart(), `${name}: ${JSON.stringify(line)}`).not.toMatch(/^grade A\b/);
      }
      // One line, and the server's text is still there, shown as escapes.
      const lines = r.stderr.split('\n').filter((l) => l !== '');
      expect(lines, name).toHaveLength(1);
      expect(lines[0]).toMatch(name === 'audit' ? /^sealmark: the target could not be audited: / : /^sealmark: no call was made: /);
      expect(lines[0]).toContain('nope\\u001b[2J\\u001b[H\\u001b[32m\\r\\ngrade A 100% · exercised\\u001b[0m\\n\\u202eevil');
    }
  }, SLOW);
});

// =============================================================================================
// leak-moves.mjs and --baseline.

describe('--baseline against leak-moves.mjs', () => {
  const p = (name: string) => at('baseline', name);
  /** Audits leak-moves.mjs with MODE=<mode> (the fixture reads MODE from its environment). */
  const auditMode = (mode: string, extra: string[]) => run(['audit', '--env', `MODE=${mode}`, ...extra, '--', 'node', LEAK_MOVES]);
  let base: Report;

  beforeAll(async () => {
    mkdirSync(p(''));
    const r = await auditMode('all', ['--format', 'json', '--output', p('all.json')]);
    if (!existsSync(p('all.json'))) throw new Error(`baseline run wrote no report (exit ${r.code}): ${r.stderr}`);
    base = readJson<Report>(p('all.json'));
  }, SLOW);

  it('fixes only what was looked for again: --only handshake and a not-audited run list nothing as fixed', async () => {
    // The baseline has findings of checks other than handshake (the leak, the accepted input).
    expect(failing(base).map((f) => f.checkId).sort()).toEqual(expect.arrayContaining(['robust-input', 'secret-echo']));
    expect(failing(base).some((f) => f.checkId === 'handshake')).toBe(false);

    const [only, gone] = await Promise.all([
      auditMode('all', ['--only', 'handshake', '--baseline', p('all.json'), '--format', 'json', '--output', p('only.json'), '--format', 'text']),
      // The server's file went away: the run is not audited.
      run(['audit', '--baseline', p('all.json'), '--format', 'json', '--output', p('gone.json'), '--format', 'text', '--', 'node', `${FIX}/no-such-server.mjs`]),
    ]);
    expect(only.code, only.stderr).toBe(0);
    const onlyReport = readJson<Report>(p('only.json'));
    expect(onlyReport.status).toBe('audited');
    expect(onlyReport.checks.filter((c) => c.verdict !== 'n/a').map((c) => c.id)).toEqual(['handshake']);
    expect(onlyReport.baseline).toMatchObject({ new: [], fixed: [], unchanged: 0 });
    expect(only.stdout).toMatch(/^baseline .*0 new, 0 unchanged, 0 fixed/m);
    expect(only.stdout).not.toMatch(/^ *fixed /m);

    expect(gone.code, gone.stderr).toBe(3);
    const goneReport = readJson<Report>(p('gone.json'));
    expect(goneReport.status).toBe('not-audited');
    expect(goneReport.baseline!.fixed).toEqual([]);
    expect(gone.stdout).toMatch(/^baseline .* 0 fixed/m);

    // `sealmark report … --baseline` makes the same comparison.
    const again = await run(['report', p('only.json'), '--baseline', p('all.json'), '--format', 'json']);
    expect(again.code, again.stderr).toBe(0);
    expect((JSON.parse(again.stdout) as Report).baseline!.fixed).toEqual([]);
  }, SLOW);

  it('the same leak found through a different first call (MODE=all, then valid-only and rename) keeps its fingerprint: 0 new, exit 0', async () => {
    const [valid, rename] = await Promise.all([
      auditMode('valid-only', ['--baseline', p('all.json'), '--format', 'json', '--output', p('valid.json'), '--format', 'text']),
      auditMode('rename', ['--baseline', p('all.json'), '--format', 'json', '--output', p('rename.json')]),
    ]);
    const leakOf = (r: Report) => r.checks.find((c) => c.id === 'secret-echo')!.findings.find((f) => f.messageId === 'env-canary' && f.tool === 'get_status');
    const firstProbe = (r: Report, f: ReportFinding) => r.calls.find((c) => c.seq === f.evidence.calls?.[0])?.probe;
    const before = leakOf(base)!;
    expect(before, 'the baseline run has the leak').toBeDefined();
    expect(before.level).toBe('fail');

    for (const [name, r, file] of [['valid-only', valid, p('valid.json')], ['rename', rename, p('rename.json')]] as const) {
      expect(r.code, `${name}: ${r.stderr}`).toBe(0);
      const now = readJson<Report>(file);
      const after = leakOf(now)!;
      expect(after, name).toBeDefined();
      // The attack took place: the first call that showed the leak is another probe now.
      expect(firstProbe(now, after), name).not.toBe(firstProbe(base, before));
      expect(after.fingerprint, name).toBe(before.fingerprint);
      expect(after.baselineState, name).toBe('unchanged');
      expect(now.baseline!.new, name).toEqual([]);
      expect(now.baseline!.unchanged, name).toBeGreaterThanOrEqual(1);
      // What the server did fix (it rejects invalid input now) is fixed; the leak is not.
      expect(now.baseline!.fixed.map((f) => f.checkId), name).not.toContain('secret-echo');
    }
    expect(valid.stdout).toMatch(/^baseline .*: 0 new, \d+ unchanged/m);
    expect(valid.stdout).not.toMatch(/\bNEW\b/);
  }, SLOW);
});

// =============================================================================================
// `sealmark report` on hand-edited reports.

describe('sealmark report <hand-edited.json>', () => {
  let saved: string;
  beforeAll(async () => {
    mkdirSync(at('edited'));
    saved = at('edited', 'r.json');
    const r = await run(['audit', '--env', 'MODE=all', '--format', 'json', '--output', saved, '--', 'node', LEAK_MOVES]);
    if (!existsSync(saved)) throw new Error(`audit wrote no report (exit ${r.code}): ${r.stderr}`);
  }, SLOW);

  it('a hand-edited report is a usage error naming the field, as a report and as --baseline, never an internal error', async () => {
    const withFinding = (r: Record<string, any>) => r.checks.find((c: { findings: unknown[] }) => c.findings.length > 0).findings[0];
    const edits: [string, (r: Record<string, any>) => void, RegExp][] = [
      ['grade.caps not an array', (r) => (r.grade.caps = 'none'), /grade\.caps/],
      ['grade.caps holding a string', (r) => (r.grade.caps = ['secret-echo']), /grade\.caps\.0/],
      ['tools[0].index a string', (r) => (r.tools[0].index = '0'), /tools\.0\.index/],
      ['calls[0].seq a string', (r) => (r.calls[0].seq = '1'), /calls\.0\.seq/],
      ['a tool line a string', (r) => (r.target.entry = { file: '/x.js', toolLines: { get_status: '7' } }), /target\.entry\.toolLines\.get_status/],
      ['checks an object', (r) => (r.checks = {}), /checks/],
      ['finding data null', (r) => (withFinding(r).data = null), /checks\.\d+\.findings\.0\.data/],
      ['an unknown verdict', (r) => (r.checks[0].verdict = 'great'), /checks\.0\.verdict/],
    ];
    for (const [name, edit, field] of edits) {
      const r = readJson<Record<string, any>>(saved);
      edit(r);
      const file = at('edited', `${name.replace(/\W+/g, '-')}.json`);
      writeFileSync(file, JSON.stringify(r));
      for (const args of [...['text', 'json', 'sarif', 'junit', 'html'].map((f) => ['report', file, '--format', f]), ['report', saved, '--baseline', file, '--format', 'json']]) {
        const res = await run(args);
        const what = `${name}: ${args.slice(2).join(' ')}`;
        expect(res.code, `${what}: ${res.stderr}`).toBe(2);
        expect(res.stdout, what).toBe('');
        expect(res.stderr, what).toMatch(field);
        expect(res.stderr, what).toContain('not a sealmark JSON report');
        expect(res.stderr, what).not.toContain('internal error');
      }
    }
  }, SLOW * 2);

  // Residual bug (fails until src/ is fixed): fields sealmark does not know are kept as they are
  // (load.ts, looseObject), and JSON.stringify in reporters/json.ts overflows the stack on one
  // nested ~5,000 levels deep (JSON.parse reads it fine): "sealmark: internal error: RangeError".
  it('an unknown field nested 10,000 levels deep is no internal error in any format', async () => {
    const depth = 10_000;
    const text = readFileSync(saved, 'utf8').trimEnd();
    const file = at('edited', 'deep.json');
    writeFileSync(file, `${text.slice(0, -1)},"extra":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`);
    expect(() => JSON.parse(readFileSync(file, 'utf8'))).not.toThrow();
    for (const format of ['json', 'text', 'sarif', 'junit', 'html']) {
      const res = await run(['report', file, '--format', format]);
      expect(res.stderr, format).not.toContain('internal error');
      expect([0, 1, 2], `${format}: ${res.stderr.slice(0, 300)}`).toContain(res.code);
    }
  }, SLOW);
});

// =============================================================================================
// Output edge cases.

describe('outputs: stdout holds exactly one document', () => {
  /** A quick audit (handshake only) of leak-moves.mjs, given by its absolute path so that any cwd works. */
  const quick = (extra: string[], cwd?: string) => run(['audit', '--only', 'handshake', ...extra, '--', 'node', join(root, LEAK_MOVES)], { cwd });

  it('`--output -` writes to stdout, and a failed write (/dev/full) never adds a second document to stdout', async () => {
    mkdirSync(at('out'));
    const dash = await quick(['--format', 'json', '--output', '-'], at('out'));
    expect(dash.code, dash.stderr).toBe(0);
    expect((JSON.parse(dash.stdout) as Report).schemaVersion).toBe(1);
    expect(existsSync(at('out', '-')), 'a file named "-" was written').toBe(false);
    // `-` is stdout, so it counts as one: two of them are a usage error before the audit.
    const twice = await quick(['--format', 'json', '--output', '-', '--format', 'sarif', '--output', '-']);
    expect(twice.code).toBe(2);
    expect(twice.stdout).toBe('');
    expect(twice.stderr).toMatch(/only one report can go to stdout/);

    // The race-free failing write: /dev/full passes the pre-check (a writable character device)
    // and every write to it fails with ENOSPC.
    if (!existsSync('/dev/full')) {
      console.warn('no /dev/full here: the failed-write half of this test was skipped');
      return;
    }
    const [taken, free] = await Promise.all([
      quick(['--format', 'json', '--output', '/dev/full', '--format', 'sarif']),
      quick(['--format', 'json', '--output', '/dev/full']),
    ]);
    // stdout already carries the SARIF: it stays that one document, the JSON goes to stderr.
    expect(taken.code, taken.stderr).toBe(0);
    const log = JSON.parse(taken.stdout) as SarifLog;
    expect(log.version).toBe('2.1.0');
    expect(taken.stderr).toContain('sealmark: cannot write --output /dev/full (ENOSPC); the json report follows on stderr\n');
    const onStderr = taken.stderr.slice(taken.stderr.indexOf('follows on stderr\n') + 'follows on stderr\n'.length);
    expect((JSON.parse(onStderr) as Report).schemaVersion).toBe(1);
    // Nothing else on stdout: the JSON report goes there as the only document.
    expect(free.code, free.stderr).toBe(0);
    expect((JSON.parse(free.stdout) as Report).schemaVersion).toBe(1);
    expect(free.stderr).toContain('sealmark: cannot write --output /dev/full (ENOSPC); the json report follows on stdout');
  }, SLOW);
});

// =============================================================================================
// hangs-forever.mjs: the progress line on a 40-column pseudo-terminal.

describe('hangs-forever.mjs: the progress line on a narrow terminal', () => {
  /**
   * Runs the audit under util-linux `script` on a 40-column pty. The shell prints its pid and
   * `exec`s node, so that pid is sealmark's. With `interruptAfter`, SIGINT goes to sealmark once a
   * drawn frame contains that text.
   */
  function ptyAudit(output: string, interruptAfter?: string): Promise<CliRun & { interrupted: boolean }> {
    const cmd = `stty cols 40; echo PID=$$; exec ${sh(process.execPath)} ${sh(BIN)} audit --timeout-probe 1 --only robust-input --format json --output ${sh(output)} -- node ${sh(HANGS)}`;
    const child = spawn('script', ['-qefc', cmd, '/dev/null'], { cwd: root, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let interrupted = false;
    let seen = '';
    if (interruptAfter !== undefined) {
      child.stdout!.on('data', (d: Buffer) => {
        seen += d.toString('utf8');
        const pid = /PID=(\d+)/.exec(seen);
        if (!interrupted && pid && seen.split('PID=')[1]!.includes(interruptAfter)) {
          interrupted = true;
          process.kill(Number(pid[1]), 'SIGINT');
        }
      });
    }
    return collectOutput(child).then((r) => ({ ...r, interrupted }));
  }

  /** The frames drawn: the pty output after the PID line, split at CR, each without its leading clear. */
  const framesOf = (out: string) =>
    out
      .slice(out.indexOf('\n') + 1)
      .split('\r')
      .map((s) => s.replace(/^\u001b\[2K/, ''))
      .filter((s) => s !== '');

  it('every frame fits 39 display columns (wide characters count two), and SIGINT leaves the line cleared with \\r ESC[2K', async () => {
    mkdirSync(at('pty'));
    const full = await ptyAudit(at('pty', 'full.json'));
    expect(full.stdout).toMatch(/^PID=\d+\r?\n/);
    // Every report went to a file: after the cleared line, one summary line (SPEC section 8).
    const summary = /\r\u001b\[2Ksealmark: grade F \(0%\) · \d+ failing, \d+ partial findings · written to \S+full\.json\r?\n$/;
    expect(full.stdout).toMatch(summary);
    const progress = full.stdout.replace(summary, '\r\u001b[2K');
    const frames = framesOf(progress);
    expect(frames.length, JSON.stringify(full.stdout.slice(0, 500))).toBeGreaterThan(0);
    // A frame naming the 60-character CJK tool was drawn, and cut.
    const wide = frames.filter((f) => f.includes('宽'));
    expect(wide.length, JSON.stringify(frames)).toBeGreaterThan(0);
    for (const f of wide) expect(f).not.toContain('宽'.repeat(20));
    for (const f of frames) {
      expect(f, JSON.stringify(f)).not.toMatch(/[\u0000-\u001f\u2028\u2029]/);
      expect(displayWidth(f), JSON.stringify(f)).toBeLessThanOrEqual(39);
    }
    expect(progress.endsWith('\r\u001b[2K'), JSON.stringify(progress.slice(-80))).toBe(true);
    expect(existsSync(at('pty', 'full.json'))).toBe(true);

    // Interrupted once the wide tool's frame is up: the process ends (130), the progress line is
    // cleared, and no report is left behind.
    const cut = await ptyAudit(at('pty', 'cut.json'), '宽');
    expect(cut.interrupted, JSON.stringify(cut.stdout.slice(0, 500))).toBe(true);
    expect(cut.code, cut.stdout + cut.stderr).toBe(130);
    // After the cleared line, one line says what had been done (SPEC section 8: an interrupted run).
    const said = /\r\u001b\[2Ksealmark: interrupted \(SIGINT\) during \S[^\r\n]* after \d+ calls? made; every process it started was stopped and its scratch folders removed; no report was written\r?\n(?:\r\u001b\[2K)?$/;
    expect(cut.stdout).toMatch(said);
    // The tool's name in that line is cut, as in the progress line.
    expect(cut.stdout).not.toContain('宽'.repeat(40));
    const cutProgress = cut.stdout.replace(said, '\r\u001b[2K');
    for (const f of framesOf(cutProgress)) expect(displayWidth(f), JSON.stringify(f)).toBeLessThanOrEqual(39);
    expect(cutProgress.endsWith('\r\u001b[2K'), JSON.stringify(cutProgress.slice(-80))).toBe(true);
    expect(existsSync(at('pty', 'cut.json'))).toBe(false);
  }, SLOW);
});

// =============================================================================================
// huge-listing.mjs: a 1 MB tool name and 1 MB error replies (300 tools; TOOLS in the fixture).

describe('huge-listing.mjs', () => {
  it('the audit finishes and writes every report format, SARIF valid and JUnit well-formed', async () => {
    mkdirSync(at('huge'));
    const r = await run([
      'audit', '--env', 'TOOLS=300',
      '--format', 'json', '--output', at('huge', 'r.json'),
      '--format', 'sarif', '--output', at('huge', 'r.sarif'),
      '--format', 'junit', '--output', at('huge', 'r.xml'),
      '--format', 'html', '--output', at('huge', 'r.html'),
      '--format', 'text', '--output', at('huge', 'r.txt'),
      '--', 'node', HUGE,
    ]);
    expect([0, 1], r.stderr.slice(0, 2000)).toContain(r.code);
    expect(r.stderr).not.toContain('internal error');
    const report = readJson<Report>(at('huge', 'r.json'));
    expect(report.status).toBe('audited');
    expect(report.tools).toHaveLength(301);
    expect(report.tools.some((t) => t.name.length === 1024 * 1024)).toBe(true);
    // The 1 MB error texts are internal errors, as read before they were cut to 64 KiB; the liveness
    // listings kept only their tool count (recorder.ts elideListing, capReplyStrings).
    expect(report.calls.filter((c) => c.class === 'internal-error').length).toBeGreaterThan(0);
    const liveness = report.calls.filter((c) => c.probe === 'liveness' && c.reply.kind === 'response');
    expect(liveness.length).toBeGreaterThan(0);
    for (const c of liveness) expect(c.reply.raw).toMatchObject({ result: { tools: [], toolsNotKept: 301 } });
    const errors = validateSarifSchema(readJson(at('huge', 'r.sarif')));
    expect(errors, JSON.stringify(errors).slice(0, 2000)).toEqual([]);
    expect(XMLValidator.validate(readFileSync(at('huge', 'r.xml'), 'utf8'))).toBe(true);
    expect(readFileSync(at('huge', 'r.html'), 'utf8')).toMatch(/^<!DOCTYPE html>/i);
    expect(readFileSync(at('huge', 'r.txt'), 'utf8')).toMatch(/^grade [A-F] /m);
  }, SLOW * 2);
});
