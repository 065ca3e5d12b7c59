/**
 * The real binary, `node bin/sealmark.js`, end to end (SPEC section 2): exit codes, formats, the
 * demo, config errors, explain / list-checks, `call`, transcripts, and replay lines that really
 * reproduce their findings. Needs a built dist/ (`npm test` builds before vitest).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, root } from '../helpers/run.js';
import { cliLine, runCli, type CliRun } from '../helpers/cli.js';
import { startNpmRegistry, type NpmRegistry } from '../helpers/registries.js';
import type { Report } from '../../src/report/build.js';

const tmpDirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sealmark-cli-test-'));
  tmpDirs.push(d);
  return d;
}

/** The independent runs, started together once (each CLI start costs about a second of CPU). */
let runs: Record<string, Promise<CliRun>>;
const configDirs: Record<string, string> = {};
let transcriptFile: string;

beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'cli.js'))) throw new Error('dist/ is missing: run `npx tsc -p .` (npm test builds first)');
  configDirs.boolean = tempDir();
  writeFileSync(join(configDirs.boolean, 'sealmark.config.json'), '{"timeout_probe_sec": true}');
  configDirs.unknown = tempDir();
  writeFileSync(join(configDirs.unknown, 'sealmark.config.json'), '{"timeout_probe_secs": 5}');
  runs = {
    text: runCli(['audit', '--demo']),
    json: runCli(['audit', '--demo', '--format', 'json']),
    failUnder: runCli(['audit', '--demo', '--fail-under', 'A']),
    missing: runCli(['audit', '--', '/nonexistent/sealmark-no-such-server']),
    exitsJson: runCli(['audit', '--format', 'json', '--', process.execPath, fixture('exits-during-init.mjs')]),
    configBoolean: runCli(['audit', '--demo'], { cwd: configDirs.boolean }),
    configUnknown: runCli(['audit', '--demo'], { cwd: configDirs.unknown }),
    noCommand: runCli(['audit']),
    explain: runCli(['explain', 'robust-input']),
    listChecks: runCli(['list-checks']),
    call: runCli(['call', '--tool', 'get_note', '--args', '{}', '--', 'node', 'demo/server.mjs']),
    transcript: runCli(['audit', '--demo', '--transcript', (transcriptFile = join(tempDir(), 't.jsonl'))]),
  };
});

afterAll(() => {
  for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
});

describe('sealmark audit --demo', () => {
  let text: CliRun;
  let json: CliRun;
  let report: Report;
  beforeAll(async () => {
    [text, json] = await Promise.all([runs.text!, runs.json!]);
    report = JSON.parse(json.stdout) as Report;
  });

  it('exits 0 and prints a grade line and the planted findings, without colour when piped', () => {
    expect(text.code).toBe(0);
    expect(text.stderr).toBe('');
    expect(text.stdout).toMatch(/^grade [A-F] \d+(\.\d+)?% · (exercised|hygiene-only)/m);
    expect(text.stdout).toContain("partial internal-error: get_note: an unhandled runtime error came back instead of a validation error (missing-required): TypeError: Cannot read properties of undefined (reading 'toLowerCase')");
    expect(text.stdout).toContain("partial accepted: add_note: schema-invalid arguments were accepted (missing-required: (root) must have required property 'title')");
    expect(text.stdout).toContain('partial leak: render_note: the reply to wrong-types leaks internals');
    expect(text.stdout).toContain('at renderNote (/home/demo/notes/render.js:12:7)');
    expect(text.stdout).toContain("replay  sealmark call --tool get_note --args '{}' -- node ");
    expect(text.stdout).not.toContain('\u001b[');
  });

  it('--format json parses, schemaVersion 1, protocol 2025-11-25, the same findings', () => {
    expect(json.code).toBe(0);
    expect(report.schemaVersion).toBe(1);
    expect(report.protocol?.version).toBe('2025-11-25');
    expect(report.status).toBe('audited');
    const ri = report.checks.find((c) => c.id === 'robust-input')!;
    const kinds = ri.findings.filter((f) => f.level !== 'info').map((f) => `${f.messageId}:${f.tool}`);
    expect(kinds).toEqual(expect.arrayContaining(['internal-error:get_note', 'accepted:add_note', 'leak:render_note']));
  });

  it('--fail-under A exits 1 (the demo grades below A)', async () => {
    expect(report.grade.letter).not.toBe('A');
    const r = await runs.failUnder!;
    expect(r.code).toBe(1);
  });

  it('each kind of finding replays to the same reply class', async () => {
    const ri = report.checks.find((c) => c.id === 'robust-input')!;
    const wanted = [
      ['internal-error', 'get_note'],
      ['accepted', 'add_note'],
      ['leak', 'render_note'],
    ] as const;
    const checks = wanted.map(async ([messageId, tool]) => {
      const f = ri.findings.find((x) => x.messageId === messageId && x.tool === tool)!;
      expect(f.replay, messageId).toMatch(/^sealmark call --tool \S+ --args '[^']*' -- node \S+\/demo\/server\.mjs$/);
      const call = report.calls.find((c) => c.seq === f.evidence.calls![0])!;
      expect(f.replay).toContain(`--args '${JSON.stringify((JSON.parse(call.request) as { params: { arguments: unknown } }).params.arguments)}'`);
      const line = cliLine(f.replay!);
      const r = await runCli([], { shell: line });
      expect(r.code, `${line}\n${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^class {4}${call.class}$`, 'm'));
      const sent = /^sent {5}(.*)$/m.exec(r.stdout)?.[1];
      expect(sent?.replace(/"id":\d+/, '"id":0')).toBe(call.request.replace(/"id":\d+/, '"id":0'));
      if (messageId === 'leak') expect(r.stdout).toContain('leak     js-frame: at renderNote (/home/demo/notes/render.js:12:7)');
      return call.class;
    });
    // internal-error, accepted, and a rejected call that leaks.
    expect(await Promise.all(checks)).toEqual(['internal-error', 'accepted', 'rejected']);
  });

  it("the demo's planted limit fault: list_recent count 0 returns every note, and its replay does too", async () => {
    const bl = report.checks.find((c) => c.id === 'bounded-limits')!;
    expect(bl.verdict).toBe('fail');
    const [f] = bl.findings.filter((x) => x.messageId === 'zero-unlimited');
    expect([f!.tool, f!.data.param, f!.data.one]).toEqual(['list_recent', 'count', 1]);
    // Three notes to start with, plus those add_note saved while being probed: more than one.
    expect(f!.data.zero as number).toBeGreaterThan(3);
    expect(f!.replay).toMatch(/^sealmark call --tool list_recent --args '\{"count":0\}' -- node \S+\/demo\/server\.mjs$/);
    const r = await runCli([], { shell: f!.replay! });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^class {4}accepted$/m);
    // A fresh demo holds three notes: count 0 lists all three.
    expect(r.stdout).toContain('n3: Book ideas\\nn2: Release checklist\\nn1: Groceries');
  });
});

describe('raw JSON replays (bounded-limits, case C5)', () => {
  it('an audit finds NaN admitted, and `call --raw-args` puts the same bytes on the wire', async () => {
    const server = ['python3', fixture('limits/c5_wait_nan.py')];
    const audited = await runCli(['audit', '--format', 'json', '--only', 'bounded-limits', '--', ...server]);
    const rep = JSON.parse(audited.stdout) as Report;
    const [f] = rep.checks.find((c) => c.id === 'bounded-limits')!.findings.filter((x) => x.messageId === 'admitted');
    expect(f!.data.values).toBe('NaN');
    expect(f!.replay).toBe(`sealmark call --tool wait --raw-args '{"seconds":NaN}' -- python3 ${fixture('limits/c5_wait_nan.py')}`);
    const call = rep.calls.find((c) => c.seq === f!.evidence.calls![0])!;
    const r = await runCli([], { shell: f!.replay! });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^class {4}accepted$/m);
    const sent = /^sent {5}(.*)$/m.exec(r.stdout)?.[1];
    expect(sent?.replace(/"id":\d+/, '"id":0')).toBe(call.request.replace(/"id":\d+/, '"id":0'));
    expect(r.stdout).toContain('waited nan seconds');
    // The repaired server answers the same bytes with a parse error.
    const strict = await runCli([], { shell: `sealmark call --tool wait --raw-args '{"seconds":NaN}' -- python3 ${fixture('limits/c5_wait_strict.py')}` });
    expect(strict.stdout).toContain('"error":{"code":-32700');
  });

  it('--args and --raw-args together are a usage error', async () => {
    const r = await runCli(['call', '--tool', 'wait', '--args', '{}', '--raw-args', '{}', '--', 'python3', fixture('limits/c5_wait_nan.py')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('give --args or --raw-args, not both');
  });
});

describe('exit code 3: the target could not be audited', () => {
  it('a missing command: exit 3 and a one-line reason on stderr', async () => {
    const r = await runs.missing!;
    expect(r.code).toBe(3);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toEqual(['sealmark: the target could not be audited: cannot start "/nonexistent/sealmark-no-such-server": command not found']);
  });

  it('--format json for a server that exits during init: exit 3 and a not-audited JSON report', async () => {
    const r = await runs.exitsJson!;
    expect(r.code).toBe(3);
    const rep = JSON.parse(r.stdout) as Report;
    expect(rep.status).toBe('not-audited');
    expect(rep.notAudited?.reason).toBe('exited-during-init');
    // Every check but handshake, in pack order: core, effects, limits, design, secrets.
    expect(rep.notAudited?.notChecked).toEqual(['robust-input', 'strict-arguments', 'protocol-errors', 'tool-schemas', 'armed-flags', 'default-call-effects', 'filler-call-effects', 'hidden-params', 'bounded-limits', 'oversized-input', 'concurrency', 'annotations', 'tool-naming', 'idempotency-key', 'two-step-writes', 'secret-echo']);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});

describe('exit code 2: config and usage errors', () => {
  it('a Boolean where a number is expected names the key', async () => {
    const r = await runs.configBoolean!;
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('timeout_probe_sec');
    expect(r.stderr).toMatch(/got true/);
    expect(r.stdout).toBe('');
  });

  it('an unknown key is named', async () => {
    const r = await runs.configUnknown!;
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('timeout_probe_secs');
    expect(r.stderr).toContain('unknown key');
  });

  it('audit with no command is a usage error', async () => {
    const r = await runs.noCommand!;
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no server command given');
  });
});

describe('explain, list-checks, call', () => {
  it('explain robust-input prints its probes', async () => {
    const r = await runs.explain!;
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith('# robust-input')).toBe(true);
    for (const p of ['missing-required', 'wrong-types', 'nulls', 'extra-argument', 'string-as-object', 'nested-string', 'nested-item', 'read-only-no-args']) {
      expect(r.stdout, p).toContain(`\`${p}\``);
    }
  });

  it('list-checks lists the seventeen checks of the core, effects, limits, design and secrets packs', async () => {
    const r = await runs.listChecks!;
    expect(r.code).toBe(0);
    const ids = r.stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(/\s+/)[0]);
    expect(ids).toEqual(['handshake', 'robust-input', 'strict-arguments', 'protocol-errors', 'tool-schemas', 'armed-flags', 'default-call-effects', 'filler-call-effects', 'hidden-params', 'bounded-limits', 'oversized-input', 'concurrency', 'annotations', 'tool-naming', 'idempotency-key', 'two-step-writes', 'secret-echo']);
    expect(r.stdout).toMatch(/^tool-naming\s+design\s+scored\s+Names say read or write, as the annotations do$/m);
    expect(r.stdout).toMatch(/^secret-echo\s+secrets\s+capping\s+No reply carries a secret$/m);
    expect(r.stdout).toMatch(/^bounded-limits\s+limits\s+scored\s+Counts and durations are bounded/m);
    expect(r.stdout).toMatch(/^robust-input\s+core\s+scored\s+Survives malformed tool input$/m);
    expect(r.stdout).toMatch(/^default-call-effects\s+effects\s+scored\s+A call with no arguments has no side effect$/m);
  });

  it("call --tool get_note --args '{}' prints class internal-error", async () => {
    const r = await runs.call!;
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^class {4}internal-error$/m);
    expect(r.stdout).toMatch(/^sent {5}\{"jsonrpc":"2\.0","id":\d+,"method":"tools\/call","params":\{"name":"get_note","arguments":\{\}\}\}$/m);
    expect(r.stdout).toContain("TypeError: Cannot read properties of undefined (reading 'toLowerCase')");
  });
});

describe('--transcript', () => {
  it('writes every message both ways as JSON lines with t, ms, dir, message', async () => {
    const r = await runs.transcript!;
    expect(r.code).toBe(0);
    const lines = readFileSync(transcriptFile, 'utf8').trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(20);
    const entries = lines.map((l) => JSON.parse(l) as { t: string; ms: number; dir: string; message: Record<string, unknown> });
    for (const e of entries) {
      expect(Object.keys(e).sort()).toEqual(['dir', 'message', 'ms', 't']);
      expect(new Date(e.t).toISOString()).toBe(e.t);
      expect(typeof e.ms).toBe('number');
      expect(['send', 'recv']).toContain(e.dir);
    }
    expect(entries.some((e) => e.dir === 'send')).toBe(true);
    expect(entries.some((e) => e.dir === 'recv')).toBe(true);
    const init = entries.find((e) => e.dir === 'send' && e.message.method === 'initialize');
    expect(init).toBeDefined();
    const initId = init!.message.id;
    expect(entries.some((e) => e.dir === 'recv' && e.message.id === initId && typeof e.message.result === 'object')).toBe(true);
    // The probes are there too.
    expect(entries.some((e) => e.dir === 'send' && e.message.method === 'tools/call')).toBe(true);
    // ms never goes backwards.
    for (let i = 1; i < entries.length; i++) expect(entries[i]!.ms).toBeGreaterThanOrEqual(entries[i - 1]!.ms);
  });
});

describe('a published server through npx', () => {
  // The real package, fetched through npx from a loopback registry that mirrors it (and its whole
  // dependency closure) from this repository's node_modules, into a sealmark cache of this test's
  // own: the fetch phase runs for real and nothing leaves 127.0.0.1.
  const PKG = '@modelcontextprotocol/server-everything';
  const VERSION = '2026.8.31';
  let registry: NpmRegistry | undefined;
  afterAll(async () => {
    await registry?.close();
  });

  it(`audit --format json -- npx -y ${PKG}@${VERSION} from a loopback registry: a report that names the negotiated version`, async () => {
    registry = await startNpmRegistry({ folders: [], mirror: [PKG] });
    expect(registry.mirrored.find((p) => p.name === PKG)?.version).toBe(VERSION);
    const cacheDir = tempDir();
    const r = await runCli(['audit', '--format', 'json', '--timeout-probe', '3', '--', 'npx', '-y', `${PKG}@${VERSION}`], {
      env: { ...registry.env(), SEALMARK_CACHE: cacheDir },
      cwd: tempDir(),
    });
    expect(r.stderr).toBe('');
    const report = JSON.parse(r.stdout) as Report;
    expect(report.target.package).toEqual({ ecosystem: 'npm', name: PKG, version: VERSION, launcher: 'npx', reused: false });
    // Fetched from the loopback registry: its packument and tarball, and every dependency found there.
    expect(registry.requests).toContain(`GET /@modelcontextprotocol%2fserver-everything`);
    expect(registry.requests).toContain(`GET /${PKG}/-/server-everything-${VERSION}.tgz`);
    expect(registry.requests.filter((q) => q.endsWith('.tgz')).length).toBeGreaterThan(50);
    // The only 404s: optional peers that are not installed here either (npm asks for them anyway).
    for (const miss of registry.notFound) {
      expect(registry.mirrorStats!.absentOptional.map((n) => `GET /${n.replace('/', '%2f')}`)).toContain(miss);
    }
    expect(existsSync(join(cacheDir, 'npm', `@modelcontextprotocol+server-everything@${VERSION}`))).toBe(true);
    expect(report.status).toBe('audited');
    expect(report.protocol).toMatchObject({ version: '2025-11-25', era: 'legacy', server: { name: 'mcp-servers/everything' } });
    expect(report.tools.length).toBeGreaterThan(10);
    // --timeout-probe changes a locked threshold: the run says so.
    expect(report.standard).toBe(false);
    expect(report.nonStandardKeys).toEqual(['timeout_probe_sec']);
    // Exit 1 with no --fail-under: a check at severity error failed. It is the effects pack's, and
    // rightly so: gzip-file-as-resource's declared default `data` is a raw.githubusercontent.com URL,
    // so its `{}` call makes the server fetch it; inside the sandbox's network namespace the fetch
    // fails and the reply says "fetch failed" (see real-servers.test.ts). The filler call's fetch is
    // the same effect, so it is default-call-effects' finding only (one cause, one finding).
    expect(report.sandbox).toMatchObject({ kind: 'sandbox', network: 'namespace' });
    // The limits pack's too: trigger-long-running-operation takes `steps` and `duration` (seconds)
    // with no maximum. steps = 10^9 is still running when the 3 s hang limit passes, and so is the
    // duplicate member {"duration":1,"duration":5}: the server reads the later 5 and waits 5 s.
    const failedErrors = report.checks.filter((c) => c.severity === 'error' && c.verdict === 'fail').map((c) => c.id);
    // And secret-echo: get-env returns the whole environment, sealmark's canaries included.
    expect(failedErrors).toEqual(['default-call-effects', 'bounded-limits', 'secret-echo']);
    expect(report.checks.find((c) => c.id === 'filler-call-effects')!.verdict).toBe('pass');
    expect(report.grade.caps).toEqual([{ check: 'secret-echo', letter: 'D' }]);
    expect(r.stdout).not.toMatch(/smk_env_[0-9a-f]{24}/);
    const bounded = report.checks.find((c) => c.id === 'bounded-limits')!.findings.filter((f) => f.level === 'fail');
    expect(bounded.map((f) => [f.messageId, f.tool, f.data.param, f.data.value])).toEqual([
      ['no-answer', 'trigger-long-running-operation', 'duration', '1,"duration":5'],
      ['no-answer', 'trigger-long-running-operation', 'steps', '1000000000'],
    ]);
    expect(report.checks.find((c) => c.id === 'default-call-effects')!.findings.map((f) => f.tool)).toEqual(['gzip-file-as-resource']);
    expect(r.code).toBe(1);
  }, 180_000);
});
