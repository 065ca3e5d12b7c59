/**
 * `sealmark audit --client-config <file> [--server <name>]` end to end, with the real binary
 * (`node bin/sealmark.js`; needs a built dist/, `npm test` builds first), on client configuration
 * files this test writes to a temp folder:
 *
 * 1. A Claude Desktop file (`mcpServers`, in an `Application Support/Claude` folder as on macOS,
 *    given by a relative path with a space in it): the demo server, a fixture that echoes the
 *    API_KEY of its `env` (redaction), a command that does not exist, and a URL entry for the
 *    bearer-protected Streamable HTTP fixture whose Authorization header is `Bearer ${env:FIXTURE_TOKEN}`.
 *    One report per server in file order, the summary table, `kind: 'client-config'`, the exit code.
 * 2. A VS Code `.vscode/mcp.json` (comments, trailing commas, `type`, `${workspaceFolder}`,
 *    `${env:HOME}`, `${input:x}`, an unset `${NOPE_VAR}`, `${NOPE_VAR:-fallback}`, `disabled`).
 * 3. `--server`, and the usage errors (exit 2).
 * 4. json, SARIF (official schema), JUnit and HTML written by the run of 1.
 * 5. Replay lines (`sealmark call --client-config … --server …`) reproduce their reply class.
 * 6. `sealmark report` on the saved multi JSON: re-render, `--fail-under`, `--baseline`.
 * 7. `--transcript run.jsonl` with two servers writes `run.<name>.jsonl` per server.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, root } from '../helpers/run.js';
import { startHttpFixture, type HttpFixture } from '../helpers/http.js';
import { runCli, type CliRun } from '../helpers/cli.js';
import type { Report, ReportFinding } from '../../src/report/build.js';
import type { MultiReport } from '../../src/report/multi.js';

const require = createRequire(import.meta.url);
const DEMO = join(root, 'demo', 'server.mjs');
/** Audits start several servers each; generous for a loaded two-core machine. */
const SLOW = 180_000;

/** The secrets handed to servers: they must never be printed or written. */
const API_KEY = `sk-live-${randomBytes(12).toString('hex')}`;
const TOKEN = `tok-${randomBytes(12).toString('hex')}`;

/** The environment of every CLI run: FIXTURE_TOKEN set (for `${env:FIXTURE_TOKEN}`), NOPE_VAR unset. */
const CLI_ENV = { FIXTURE_TOKEN: TOKEN, NOPE_VAR: undefined };

/** Runs `node bin/sealmark.js …args` (or a shell line) in `cwd` and collects its output. */
function run(args: string[], opts: { cwd: string; shell?: string; env?: Record<string, string> }): Promise<CliRun> {
  return runCli(args, { ...opts, env: { ...CLI_ENV, ...opts.env } });
}

const readJson = <T = unknown>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;
const compared = (r: Report): ReportFinding[] => r.checks.flatMap((c) => c.findings.filter((f) => f.level === 'fail' || f.level === 'partial'));
const byName = (m: MultiReport, name: string): Report => {
  const s = m.servers.find((x) => x.name === name);
  if (!s) throw new Error(`no server ${name} in ${m.servers.map((x) => x.name).join(', ')}`);
  return s.report;
};

let tmp: string;
let bearer: HttpFixture;
let streamable: HttpFixture;

// The Claude Desktop file (1, 3, 4, 5, 6).
let claudeDir: string;
const CLAUDE_REL = 'Application Support/Claude/claude_desktop_config.json';
const CLAUDE_NAMES = ['demo notes', 'key-echo', 'ghost', 'remote'];
const GHOST = '/nonexistent/sealmark-no-such-server';

// The VS Code workspace (2).
let vsDir: string;
let workspace: string;
const VSCODE_REL = 'ws/.vscode/mcp.json';

// Two servers, both audited (6, 7).
let pairDir: string;
const PAIR_NAMES = ['remote', 'key echo'];

let runs: { claude: Promise<CliRun>; vscode: Promise<CliRun>; pair: Promise<CliRun> };

beforeAll(async () => {
  if (!existsSync(join(root, 'dist', 'cli.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test builds first)');
  tmp = realpathSync(mkdtempSync(join(tmpdir(), 'sealmark-client-config-test-')));
  [bearer, streamable] = await Promise.all([startHttpFixture('bearer.mjs', [], { FIXTURE_TOKEN: TOKEN }), startHttpFixture('streamable.mjs')]);

  // 1. Claude Desktop: {"mcpServers": {…}}, in a folder with a space in its name.
  claudeDir = join(tmp, 'claude');
  mkdirSync(dirname(join(claudeDir, CLAUDE_REL)), { recursive: true });
  writeFileSync(
    join(claudeDir, CLAUDE_REL),
    JSON.stringify(
      {
        mcpServers: {
          'demo notes': { command: 'node', args: [DEMO] },
          'key-echo': { command: 'node', args: [fixture('adversarial/env-echo.mjs')], env: { API_KEY } },
          ghost: { command: GHOST, args: ['--stdio'] },
          remote: { url: bearer.url, headers: { Authorization: 'Bearer ${env:FIXTURE_TOKEN}' } },
        },
      },
      null,
      2,
    ),
  );

  // 2. VS Code: .vscode/mcp.json, JSONC.
  vsDir = join(tmp, 'vscode');
  workspace = join(vsDir, 'ws');
  mkdirSync(join(workspace, '.vscode'), { recursive: true });
  // The stdio server lives in the workspace: found only if ${workspaceFolder} is the folder holding .vscode.
  writeFileSync(join(workspace, 'srv.mjs'), `import ${JSON.stringify(fixture('correct-sdk.mjs'))};\n`);
  writeFileSync(
    join(vsDir, VSCODE_REL),
    `// VS Code: this workspace's MCP servers
{
  /* servers, VS Code's key */
  "servers": {
    "local": {
      "type": "stdio",
      "command": "node",
      "args": ["\${workspaceFolder}/srv.mjs", "--home=\${env:HOME}", "--mode=\${NOPE_VAR:-fallback}",], // trailing comma
    },
    "web": { "type": "http", "url": ${JSON.stringify(streamable.url)}, },
    "asks": { "type": "stdio", "command": "node", "args": ["--token", "\${input:x}"] },
    "unset": { "type": "stdio", "command": "node", "args": ["\${NOPE_VAR}"] },
    "off": { "type": "stdio", "command": "node", "args": ["\${workspaceFolder}/srv.mjs"], "disabled": true, },
  },
  "inputs": [{ "type": "promptString", "id": "x", "description": "a token", "password": true },],
}
`,
  );

  // 6, 7: two servers that are both audited (the remote one first).
  pairDir = join(tmp, 'pair');
  mkdirSync(pairDir);
  writeFileSync(
    join(pairDir, 'pair.json'),
    JSON.stringify({
      mcpServers: {
        remote: { type: 'http', url: bearer.url, headers: { Authorization: 'Bearer ${env:FIXTURE_TOKEN}' } },
        'key echo': { command: 'node', args: [fixture('adversarial/env-echo.mjs')], env: { API_KEY } },
      },
    }),
  );

  runs = {
    // 1 and 4: every format of one run; text to stdout.
    claude: run(
      ['audit', '--client-config', CLAUDE_REL, '--format', 'json', '--output', 'm.json', '--format', 'sarif', '--output', 'm.sarif', '--format', 'junit', '--output', 'm.xml', '--format', 'html', '--output', 'm.html', '--format', 'text'],
      { cwd: claudeDir },
    ),
    // 2: from the folder above the workspace; --fail-under D, which both live servers pass.
    vscode: run(['audit', '--client-config', VSCODE_REL, '--format', 'json', '--fail-under', 'D'], { cwd: vsDir }),
    // 6 and 7.
    pair: run(['audit', '--client-config', 'pair.json', '--format', 'json', '--output', 'pair-m.json', '--transcript', 'run.jsonl'], { cwd: pairDir }),
  };
}, SLOW);

afterAll(async () => {
  await Promise.all([bearer?.stop(), streamable?.stop()]);
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

// =============================================================================================
// 1. The Claude Desktop file.

describe('a Claude Desktop file: demo, an env secret, a missing command, a URL with a ${env:} header', () => {
  let r: CliRun;
  let m: MultiReport;
  beforeAll(async () => {
    r = await runs.claude;
    if (!existsSync(join(claudeDir, 'm.json'))) throw new Error(`no m.json; exit ${r.code}\n${r.stderr}`);
    m = readJson<MultiReport>(join(claudeDir, 'm.json'));
  }, SLOW);

  it("the JSON is a multi-report: kind 'client-config', the file as given, one report per server in file order", () => {
    expect(m.kind).toBe('client-config');
    expect(m.schemaVersion).toBe(1);
    expect(m.file).toBe(CLAUDE_REL);
    expect(Number.isNaN(Date.parse(m.generatedAt))).toBe(false);
    expect(m.servers.map((s) => s.name)).toEqual(CLAUDE_NAMES);
    for (const s of m.servers) expect(s.report.schemaVersion, s.name).toBe(1);
  });

  it('each server has the right status, target and reason', () => {
    const demo = byName(m, 'demo notes');
    expect(demo.status).toBe('audited');
    expect(demo.notAudited).toBeUndefined();
    expect(demo.target).toMatchObject({ kind: 'stdio', command: ['node', DEMO] });
    expect(demo.protocol?.server.name).toBe('sealmark-demo-notes');
    expect(demo.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['get_note', 'add_note', 'render_note', 'list_recent']));

    const keyEcho = byName(m, 'key-echo');
    expect(keyEcho.status).toBe('audited');
    expect(keyEcho.target).toMatchObject({ kind: 'stdio', command: ['node', fixture('adversarial/env-echo.mjs')] });

    const ghost = byName(m, 'ghost');
    expect(ghost.status).toBe('not-audited');
    expect(ghost.notAudited?.reason).toBe('spawn-failed');
    expect(ghost.notAudited?.message).toContain(GHOST);
    expect(ghost.notAudited?.message).toContain('command not found');
    expect(ghost.target).toMatchObject({ kind: 'stdio', command: [GHOST, '--stdio'] });
    expect(ghost.checks.find((c) => c.id === 'handshake')?.findings.map((f) => f.messageId)).toContain('spawn-failed');

    const remote = byName(m, 'remote');
    expect(remote.status).toBe('audited');
    expect(remote.target).toMatchObject({ kind: 'http', url: bearer.url });
    expect(remote.tools.length).toBeGreaterThan(0);
  });

  it('the missing command does not stop the entries after it: remote, after ghost, was audited with its tools called', () => {
    expect(CLAUDE_NAMES.indexOf('remote')).toBeGreaterThan(CLAUDE_NAMES.indexOf('ghost'));
    const remote = byName(m, 'remote');
    expect(remote.status).toBe('audited');
    expect(remote.calls.some((c) => c.request.includes('"tools/call"'))).toBe(true);
  });

  it('the text output: a section per server in file order, then a summary table of grades', () => {
    const heads = [...r.stdout.matchAll(/^━━ (.+) ━━$/gm)].map((x) => x[1]);
    expect(heads).toEqual(CLAUDE_NAMES);
    const summary = r.stdout.slice(r.stdout.lastIndexOf(`summary of ${CLAUDE_REL}\n`));
    expect(summary.length).toBeGreaterThan(0);
    const lines = summary.trimEnd().split('\n');
    expect(lines[1]).toMatch(/^server\s+grade\s+percent\s+status\s+fail\s+partial$/);
    expect(lines).toHaveLength(2 + CLAUDE_NAMES.length);
    for (const [i, s] of m.servers.entries()) {
      const f = compared(s.report);
      const fail = f.filter((x) => x.level === 'fail').length;
      const partial = f.filter((x) => x.level === 'partial').length;
      const grade = s.report.status === 'audited' ? `${s.report.grade.letter}\\s+${s.report.grade.percent}%` : '–\\s+n/a';
      const esc = s.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      expect(lines[2 + i], s.name).toMatch(new RegExp(`^${esc}\\s+${grade}\\s+${s.report.status}\\s+${fail}\\s+${partial}$`));
    }
    // The grades, spelled out: the demo grades below A, ghost has none.
    expect(lines[2]).toMatch(/^demo notes\s+[BCDF]\s/);
    expect(lines[4]).toMatch(/^ghost\s+–\s+n\/a\s+not-audited\s+1\s+0$/);
  });

  it('exit code: 1, as a server (the demo) fails a check at severity error; that wins over ghost not being audited (3)', () => {
    const failsError = (x: Report) => x.status === 'audited' && x.checks.some((c) => c.severity === 'error' && c.verdict === 'fail');
    expect(failsError(byName(m, 'demo notes'))).toBe(true);
    expect(r.code).toBe(1);
  });

  it('stderr names the one server that could not be audited, and nothing else', () => {
    expect(r.stderr).toBe(`sealmark: ghost could not be audited: ${byName(m, 'ghost').notAudited!.message}\n`);
  });

  it('the API_KEY of an env entry and the ${env:FIXTURE_TOKEN} of a header appear in no output', () => {
    const outputs: Record<string, string> = { stdout: r.stdout, stderr: r.stderr, ...Object.fromEntries(['m.json', 'm.sarif', 'm.xml', 'm.html'].map((f) => [f, readFileSync(join(claudeDir, f), 'utf8')])) };
    for (const [where, text] of Object.entries(outputs)) {
      expect(text.includes(API_KEY), `API_KEY in ${where}`).toBe(false);
      expect(text.includes(TOKEN), `FIXTURE_TOKEN in ${where}`).toBe(false);
    }
    // The key really was handed to the server and echoed back (else the check above proves nothing).
    const se = byName(m, 'key-echo').checks.find((c) => c.id === 'secret-echo')!;
    expect(se.verdict).toBe('fail');
    expect(se.findings.some((f) => f.messageId === 'user-secret' && JSON.stringify(f.data).includes('API_KEY'))).toBe(true);
    expect(outputs['m.json']).toContain('[redacted:API_KEY]');
    // The token really was sent: without it the bearer fixture answers 401 and nothing is audited.
    expect(byName(m, 'remote').status).toBe('audited');
  });
});

// =============================================================================================
// 2. VS Code's .vscode/mcp.json.

describe('a VS Code .vscode/mcp.json: JSONC, type stdio/http, variables, ${input:…}, disabled', () => {
  let r: CliRun;
  let m: MultiReport;
  beforeAll(async () => {
    r = await runs.vscode;
    try {
      m = JSON.parse(r.stdout) as MultiReport;
    } catch {
      throw new Error(`stdout is not JSON; exit ${r.code}\n${r.stderr}\n${r.stdout.slice(0, 2000)}`);
    }
  }, SLOW);

  it('reads the file with its comments and trailing commas; one report per entry in file order', () => {
    expect(m.kind).toBe('client-config');
    expect(m.file).toBe(VSCODE_REL);
    // A disabled entry is not audited at all (stderr says so); the others are, in file order.
    expect(m.servers.map((s) => s.name)).toEqual(['local', 'web', 'asks', 'unset']);
  });

  it('type stdio: ${workspaceFolder} is the folder holding .vscode (not the cwd), ${env:HOME} and ${NOPE_VAR:-fallback} are filled', () => {
    expect(process.env.HOME).toBeTruthy();
    const local = byName(m, 'local');
    expect(local.target).toMatchObject({ kind: 'stdio', command: ['node', join(workspace, 'srv.mjs'), `--home=${process.env.HOME}`, '--mode=fallback'] });
    // It started from there: the workspace's server was found and audited.
    expect(local.status).toBe('audited');
    expect(local.tools.length).toBeGreaterThan(0);
  });

  it('type http: audited at its URL', () => {
    const web = byName(m, 'web');
    expect(web.status).toBe('audited');
    expect(web.target).toMatchObject({ kind: 'http', url: streamable.url });
  });

  it('${input:x} is invalid-entry, saying VS Code asks for it', () => {
    const asks = byName(m, 'asks');
    expect(asks.status).toBe('not-audited');
    expect(asks.notAudited?.reason).toBe('invalid-entry');
    expect(asks.notAudited?.message).toContain('${input:x}');
    expect(asks.notAudited?.message).toMatch(/VS Code/);
    expect(asks.notAudited?.message).toMatch(/asks/);
    expect(asks.checks.find((c) => c.id === 'handshake')?.findings.map((f) => f.messageId)).toContain('invalid-entry');
  });

  it('an unset ${NOPE_VAR} is invalid-entry naming the variable', () => {
    const unset = byName(m, 'unset');
    expect(unset.status).toBe('not-audited');
    expect(unset.notAudited?.reason).toBe('invalid-entry');
    expect(unset.notAudited?.message).toContain('NOPE_VAR');
    expect(unset.notAudited?.message).toMatch(/not set/);
  });

  it('disabled: true is left out of the run, and stderr says so', () => {
    expect(m.servers.some((x) => x.name === 'off')).toBe(false);
    expect(r.stderr).toMatch(/^sealmark: not audited, disabled in \S*mcp\.json: off$/m);
  });

  it('exit 3: both live servers pass --fail-under D, two entries could not be used', () => {
    for (const name of ['local', 'web']) expect(['A', 'B', 'C', 'D'], name).toContain(byName(m, name).grade.letter);
    expect(r.code).toBe(3);
    const lines = r.stderr.trimEnd().split('\n').filter((l) => l.includes('could not be audited'));
    expect(lines.map((l) => /^sealmark: (\S+) could not be audited: /.exec(l)?.[1])).toEqual(['asks', 'unset']);
    // An entry that could not be used shows what it would have started.
    expect(byName(m, 'asks').target.command.join(' ')).toContain('${input:');
  });
});

// =============================================================================================
// 3. --server, and usage errors.

describe('--server and the usage errors of --client-config', () => {
  it('--server <name> audits that one only (a single-server multi-report; --transcript keeps its name)', async () => {
    const r = await run(['audit', '--client-config', CLAUDE_REL, '--server', 'remote', '--format', 'json', '--transcript', 'one.jsonl'], { cwd: claudeDir });
    const m = JSON.parse(r.stdout) as MultiReport;
    expect(m.kind).toBe('client-config');
    expect(m.servers.map((s) => s.name)).toEqual(['remote']);
    expect(m.servers[0]!.report.status).toBe('audited');
    // The fixture fails bounded-limits, a check at severity error.
    expect(r.code).toBe(1);
    expect(existsSync(join(claudeDir, 'one.jsonl'))).toBe(true);
    expect(existsSync(join(claudeDir, 'one.remote.jsonl'))).toBe(false);
  }, SLOW);

  it('--server of an entry that cannot start exits 3, the others are not started', async () => {
    const r = await run(['audit', '--client-config', CLAUDE_REL, '--server', 'ghost', '--format', 'json'], { cwd: claudeDir });
    expect(r.code).toBe(3);
    const m = JSON.parse(r.stdout) as MultiReport;
    expect(m.servers.map((s) => [s.name, s.report.status, s.report.notAudited?.reason])).toEqual([['ghost', 'not-audited', 'spawn-failed']]);
  });

  it('an unknown --server exits 2 listing the names', async () => {
    const r = await run(['audit', '--client-config', CLAUDE_REL, '--server', 'nope'], { cwd: claudeDir });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('"nope"');
    expect(r.stderr).toContain(CLAUDE_NAMES.map((n) => JSON.stringify(n)).join(', '));
  });

  it('--client-config with a server command, --url or --demo exits 2; --server without --client-config exits 2', async () => {
    const [cmd, url, demo, server] = await Promise.all([
      run(['audit', '--client-config', CLAUDE_REL, '--', 'node', DEMO], { cwd: claudeDir }),
      run(['audit', '--client-config', CLAUDE_REL, '--url', bearer.url], { cwd: claudeDir }),
      run(['audit', '--client-config', CLAUDE_REL, '--demo'], { cwd: claudeDir }),
      run(['audit', '--server', 'remote', '--demo'], { cwd: claudeDir }),
    ]);
    for (const [what, r] of Object.entries({ cmd, url, demo, server })) {
      expect(r.code, `${what}: ${r.stderr}`).toBe(2);
      expect(r.stdout, what).toBe('');
      expect(r.stderr, what).toMatch(/--client-config/);
    }
  });

  it('a file with neither mcpServers nor servers, a non-JSON file, an empty mcpServers, a missing file: exit 2 naming the file', async () => {
    const dir = join(tmp, 'bad');
    mkdirSync(dir, { recursive: true });
    const files = {
      'neither.json': JSON.stringify({ mcpServer: { x: { command: 'node' } } }),
      'not-json.json': '{"mcpServers": {"x": {"command": "node"}',
      'empty.json': JSON.stringify({ mcpServers: {} }),
    };
    for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
    const [neither, notJson, empty, missing] = await Promise.all(
      [...Object.keys(files), 'missing.json'].map((f) => run(['audit', '--client-config', f], { cwd: dir })),
    );
    for (const [what, r, file] of [
      ['neither', neither!, 'neither.json'],
      ['not JSON', notJson!, 'not-json.json'],
      ['empty', empty!, 'empty.json'],
      ['missing', missing!, 'missing.json'],
    ] as const) {
      expect(r.code, `${what}: ${r.stderr}`).toBe(2);
      expect(r.stdout, what).toBe('');
      expect(r.stderr, what).toContain(`--client-config ${file}`);
    }
    expect(neither!.stderr).toMatch(/mcpServers.*servers/);
    expect(notJson!.stderr).toMatch(/not JSON/);
    expect(empty!.stderr).toMatch(/no servers/);
    expect(missing!.stderr).toMatch(/ENOENT/);
  });

  it("VS Code's settings.json shape (mcp.servers) is read too", async () => {
    const dir = join(tmp, 'settings');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'settings.json'), `{\n  "editor.tabSize": 2, // other settings\n  "mcp": { "servers": { "gone": { "command": ${JSON.stringify(GHOST)} } } },\n}\n`);
    const r = await run(['audit', '--client-config', 'settings.json', '--format', 'json'], { cwd: dir });
    expect(r.code).toBe(3);
    const m = JSON.parse(r.stdout) as MultiReport;
    expect(m.servers.map((s) => [s.name, s.report.notAudited?.reason])).toEqual([['gone', 'spawn-failed']]);
  });
});

// =============================================================================================
// 4. Every format of the run of 1.

describe('json, SARIF, JUnit and HTML from one client-config run', () => {
  let m: MultiReport;
  beforeAll(async () => {
    await runs.claude;
    m = readJson<MultiReport>(join(claudeDir, 'm.json'));
  }, SLOW);

  type ValidateFn = ((data: unknown) => boolean) & { errors?: unknown[] | null };
  function sarifValidator(): ValidateFn {
    const pkg = dirname(require.resolve('@microsoft/sarif-multitool-linux/package.json'));
    const schema = readJson<object>(join(pkg, 'sarif-2.1.0.json'));
    const Ajv2020 = require('ajv/dist/2020.js').default as new (o: object) => { compile: (s: object) => ValidateFn };
    const addFormats = require('ajv-formats') as (a: unknown) => void;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    return ajv.compile(schema);
  }

  it('SARIF: valid against the official 2.1.0 schema, one run per server with distinct automationDetails ids', () => {
    const log = readJson<{ version: string; runs: { automationDetails?: { id?: string }; results: { ruleId: string; level: string }[]; tool: { driver: { name: string } } }[] }>(join(claudeDir, 'm.sarif'));
    const validate = sarifValidator();
    expect(validate(log), JSON.stringify(validate.errors?.slice(0, 5), null, 2)).toBe(true);
    expect(log.version).toBe('2.1.0');
    expect(log.runs).toHaveLength(CLAUDE_NAMES.length);
    const ids = log.runs.map((x) => x.automationDetails?.id);
    expect(ids).toEqual(CLAUDE_NAMES.map((n) => `sealmark/${n}/`));
    expect(new Set(ids).size).toBe(ids.length);
    for (const x of log.runs) expect(x.tool.driver.name).toBe('sealmark');
    // Each run holds its own server's findings: ghost's run has the handshake failure, the demo's its robust-input findings.
    const ghostRun = log.runs[CLAUDE_NAMES.indexOf('ghost')]!;
    expect(ghostRun.results.map((x) => x.ruleId)).toContain('handshake');
    expect(ghostRun.results.some((x) => x.ruleId === 'robust-input')).toBe(false);
    expect(log.runs[0]!.results.some((x) => x.ruleId === 'robust-input')).toBe(true);
  });

  it('JUnit: well-formed, a suite per server per check named <server>/<check>', () => {
    const xml = readFileSync(join(claudeDir, 'm.xml'), 'utf8');
    expect(XMLValidator.validate(xml)).toBe(true);
    const parsed = new XMLParser({ ignoreAttributes: false, isArray: (n) => n === 'testsuite' || n === 'testcase' }).parse(xml) as {
      testsuites: { testsuite: { '@_name': string; '@_failures': string }[] };
    };
    const names = parsed.testsuites.testsuite.map((s) => s['@_name']);
    expect(names).toEqual(m.servers.flatMap((s) => s.report.checks.map((c) => `${s.name}/${c.id}`)));
    // ghost's handshake suite fails; remote's (after it) is there and passes.
    const suite = (n: string) => parsed.testsuites.testsuite.find((s) => s['@_name'] === n)!;
    expect(Number(suite('ghost/handshake')['@_failures'])).toBeGreaterThan(0);
    expect(suite('remote/handshake')['@_failures']).toBe('0');
  });

  it('HTML: a summary table with a row per server (name, grade, status) and a section per server', () => {
    const page = readFileSync(join(claudeDir, 'm.html'), 'utf8');
    expect(page.startsWith('<!doctype html>')).toBe(true);
    const table = /<table class="summary">([\s\S]*?)<\/table>/.exec(page)?.[1];
    expect(table).toBeDefined();
    const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(table!)![1]!;
    const rows = [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((x) => [...x[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((c) => c[1]!.replace(/<[^>]+>/g, '')));
    expect(rows).toHaveLength(CLAUDE_NAMES.length);
    for (const [i, s] of m.servers.entries()) {
      const [name, , grade, percent, status] = rows[i]!;
      expect(name).toBe(s.name);
      expect(status).toBe(s.report.status);
      expect(grade).toBe(s.report.status === 'audited' ? s.report.grade.letter : '–');
      expect(percent).toBe(s.report.status === 'audited' ? `${s.report.grade.percent}%` : 'n/a');
      expect(page).toContain(`<section class="server" id="server-${i}"><h1>${s.name}</h1>`);
    }
    expect(rows.map((x) => x[1])).toEqual([`node ${DEMO}`, `node ${fixture('adversarial/env-echo.mjs')}`, `${GHOST} --stdio`, bearer.url]);
  });
});

// =============================================================================================
// 5. Replay lines.

describe('replay lines of a client-config run', () => {
  let m: MultiReport;
  beforeAll(async () => {
    await runs.claude;
    m = readJson<MultiReport>(join(claudeDir, 'm.json'));
  }, SLOW);

  /** Runs a finding's replay line from the audit's cwd; returns the `call` output and the call the finding names. */
  async function replay(server: string, checkId: string, messageId: string, tool: string) {
    const report = byName(m, server);
    const f = report.checks.find((c) => c.id === checkId)?.findings.find((x) => x.messageId === messageId && x.tool === tool);
    expect(f, `${server}: ${checkId} ${messageId} ${tool}`).toBeDefined();
    const q = (s: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s}'`);
    expect(f!.replay).toMatch(new RegExp(`^sealmark call --client-config ${q(CLAUDE_REL).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} --server ${q(server)} --tool ${tool} --args '[^']*'$`));
    const call = report.calls.find((c) => c.seq === f!.evidence.calls![0])!;
    const r = await run([], { cwd: claudeDir, shell: f!.replay! });
    expect(r.code, `${f!.replay}\n${r.stderr}`).toBe(0);
    const sent = /^sent {5}(.*)$/m.exec(r.stdout)?.[1];
    expect(sent?.replace(/"id":\d+/, '"id":0')).toBe(call.request.replace(/"id":\d+/, '"id":0'));
    return { out: r, call };
  }

  it("the demo entry's findings replay to the same reply class", async () => {
    const wanted = [
      ['internal-error', 'get_note'],
      ['accepted', 'add_note'],
      ['leak', 'render_note'],
    ] as const;
    const classes = await Promise.all(
      wanted.map(async ([messageId, tool]) => {
        const { out, call } = await replay('demo notes', 'robust-input', messageId, tool);
        expect(out.stdout).toMatch(new RegExp(`^class {4}${call.class}$`, 'm'));
        if (messageId === 'leak') expect(out.stdout).toContain('leak     js-frame: at renderNote (/home/demo/notes/render.js:12:7)');
        return call.class;
      }),
    );
    expect(classes).toEqual(['internal-error', 'accepted', 'rejected']);
  }, SLOW);

  it("the env entry's secret-echo replays with the entry's env, and the key stays redacted", async () => {
    const { out, call } = await replay('key-echo', 'secret-echo', 'user-secret', 'echo');
    expect(out.stdout).toMatch(new RegExp(`^class {4}${call.class}$`, 'm'));
    expect(out.stdout).toMatch(/^secret {3}user-secret API_KEY in the result$/m);
    expect(out.stdout).toContain('[redacted:API_KEY]');
    expect(out.stdout + out.stderr).not.toContain(API_KEY);
  }, SLOW);

  it("the URL entry's finding replays through its ${env:FIXTURE_TOKEN} header", async () => {
    const { out, call } = await replay('remote', 'robust-input', 'internal-error', 'get_item');
    expect(out.stdout).toMatch(new RegExp(`^class {4}${call.class}$`, 'm'));
    expect(out.stdout + out.stderr).not.toContain(TOKEN);
  }, SLOW);
});

// =============================================================================================
// 6. sealmark report on a saved multi JSON.

describe('sealmark report <multi.json>', () => {
  let m: MultiReport;
  let claudeText: CliRun;
  let pair: MultiReport;
  beforeAll(async () => {
    claudeText = await runs.claude;
    m = readJson<MultiReport>(join(claudeDir, 'm.json'));
    const p = await runs.pair;
    if (!existsSync(join(pairDir, 'pair-m.json'))) throw new Error(`no pair-m.json; exit ${p.code}\n${p.stderr}`);
    pair = readJson<MultiReport>(join(pairDir, 'pair-m.json'));
  }, SLOW);

  it('--format json re-renders it unchanged (deep-equal); the text is the audit’s text', async () => {
    const [json, text] = await Promise.all([run(['report', 'm.json', '--format', 'json'], { cwd: claudeDir }), run(['report', 'm.json'], { cwd: claudeDir })]);
    expect(JSON.parse(json.stdout)).toEqual(m);
    expect(text.stdout).toBe(claudeText.stdout);
    // Without a gate: the same exit code as the audit.
    expect(json.code).toBe(claudeText.code);
  });

  it('--fail-under applies to every server (the pair: both audited, the first graded higher)', async () => {
    expect(pair.servers.map((s) => s.name)).toEqual(PAIR_NAMES);
    expect(pair.servers.every((s) => s.report.status === 'audited')).toBe(true);
    const [first, second] = pair.servers.map((s) => s.report.grade.percent!);
    expect(first!).toBeGreaterThan(second!);
    // At the second's percent both pass; just above it only the second is below; above the first, both.
    const gates = [String(second), String(second! + 0.1), String(first! + 0.1), 'F'];
    const codes = await Promise.all(gates.map((g) => run(['report', 'pair-m.json', '--fail-under', g], { cwd: pairDir }).then((r) => r.code)));
    expect(codes).toEqual([0, 1, 1, 0]);
  });

  it('--fail-under on a run with a server not audited: 3 when every audited one passes, 1 when one is below', async () => {
    const [f, a] = await Promise.all([run(['report', 'm.json', '--fail-under', 'F'], { cwd: claudeDir }), run(['report', 'm.json', '--fail-under', 'A'], { cwd: claudeDir })]);
    expect(f.code).toBe(3);
    expect(a.code).toBe(1);
  });

  it('--baseline itself: every finding of every server unchanged, exit 0 (all servers audited)', async () => {
    const r = await run(['report', 'pair-m.json', '--baseline', 'pair-m.json', '--format', 'json'], { cwd: pairDir });
    expect(r.code, r.stderr).toBe(0);
    const b = JSON.parse(r.stdout) as MultiReport;
    expect(b.servers.map((s) => s.name)).toEqual(PAIR_NAMES);
    for (const s of b.servers) {
      const f = compared(s.report);
      expect(f.length, s.name).toBeGreaterThan(0);
      for (const x of f) expect(x.baselineState, `${s.name}: ${x.checkId} ${x.messageId}`).toBe('unchanged');
      expect(s.report.baseline, s.name).toMatchObject({ file: 'pair-m.json', new: [], fixed: [], unchanged: f.length });
    }
  });

  it('--baseline of the run with ghost: every finding unchanged, exit 3 (ghost still not audited)', async () => {
    const r = await run(['report', 'm.json', '--baseline', 'm.json', '--format', 'json'], { cwd: claudeDir });
    expect(r.code, r.stderr).toBe(3);
    const b = JSON.parse(r.stdout) as MultiReport;
    for (const s of b.servers) for (const x of compared(s.report)) expect(x.baselineState, `${s.name}: ${x.checkId} ${x.messageId}`).toBe('unchanged');
  });

  it('--baseline of a single report for a multi-report exits 2', async () => {
    writeFileSync(join(claudeDir, 'single.json'), JSON.stringify(m.servers[0]!.report));
    const r = await run(['report', 'm.json', '--baseline', 'single.json'], { cwd: claudeDir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--baseline single.json');
  });
});

// =============================================================================================
// 7. Transcripts.

describe('--transcript run.jsonl with two servers', () => {
  let r: CliRun;
  beforeAll(async () => {
    r = await runs.pair;
  }, SLOW);

  it('writes run.<n>-<name>.jsonl per server (a name made safe for a file), not run.jsonl', () => {
    const files = readdirSync(pairDir).filter((f) => f.endsWith('.jsonl')).sort();
    expect(files, r.stderr).toEqual(['run.1-remote.jsonl', 'run.2-key_echo.jsonl']);
    for (const f of files) {
      const text = readFileSync(join(pairDir, f), 'utf8');
      const lines = text.trimEnd().split('\n').map((l) => JSON.parse(l) as { dir: string; message: { method?: string } });
      expect(lines.length, f).toBeGreaterThan(0);
      expect(lines.some((l) => l.dir === 'send' && l.message.method === 'initialize'), f).toBe(true);
      expect(lines.some((l) => l.dir === 'send' && l.message.method === 'tools/call'), f).toBe(true);
      // Neither secret is written to a transcript.
      expect(text.includes(API_KEY), f).toBe(false);
      expect(text.includes(TOKEN), f).toBe(false);
    }
    // Each transcript is its own server's: the remote one lists the HTTP fixture's tools, the other env-echo's.
    expect(readFileSync(join(pairDir, 'run.1-remote.jsonl'), 'utf8')).toContain('"get_item"');
    expect(readFileSync(join(pairDir, 'run.2-key_echo.jsonl'), 'utf8')).toContain('[redacted:API_KEY]');
  });
});

// =============================================================================================
// 8. An entry's `cwd` (README: "command and URL entries, their env, cwd and headers").

describe('an entry with a relative command and a cwd', () => {
  it('runs in the sandbox like any other entry (scratch HOME), as its report says', async () => {
    const dir = join(tmp, 'cwd');
    mkdirSync(join(dir, 'project'), { recursive: true });
    // The server says on stderr which HOME it was started with (a file it wrote would land in the
    // sandbox's overlay, never on disk), then is correct-sdk.mjs.
    const script = join(dir, 'project', 'run.sh');
    writeFileSync(script, `#!/bin/sh\nprintf 'home=%s\\n' "$HOME" >&2\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(fixture('correct-sdk.mjs'))}\n`, { mode: 0o755 });
    writeFileSync(
      join(dir, 'cc.json'),
      JSON.stringify({
        mcpServers: {
          // Relative to its cwd, as a project's own .mcp.json would write it (there is no ./run.sh in the folder sealmark runs in).
          relative: { command: './run.sh', cwd: 'project' },
          // The same server by its absolute path: the control.
          absolute: { command: script },
        },
      }),
    );
    const r = await run(['audit', '--client-config', 'cc.json', '--only', 'handshake', '--format', 'json'], { cwd: dir });
    const m = JSON.parse(r.stdout) as MultiReport;
    expect(m.servers.map((s) => [s.name, s.report.status])).toEqual([
      ['relative', 'audited'],
      ['absolute', 'audited'],
    ]);
    const home = (name: string) => /^home=(.*)$/m.exec(byName(m, name).stderrTail ?? '')?.[1];
    // The control: a sandboxed server gets a scratch HOME, and its report says it was sandboxed.
    expect(byName(m, 'absolute').sandbox.kind).toBe('sandbox');
    expect(home('absolute')).toMatch(/sealmark-sandbox-/);
    expect(home('absolute')).not.toBe(process.env.HOME);
    // The entry with a cwd: its report says sandbox too, so it must have run in one.
    expect(byName(m, 'relative').sandbox.kind).toBe('sandbox');
    expect(home('relative'), 'the ./run.sh entry ran with the real HOME, outside the sandbox').toMatch(/sealmark-sandbox-/);
  }, SLOW);
});

describe('what variables and files put into an entry', () => {
  let dir: string;
  let m: MultiReport;
  let r: CliRun;
  const SECRET = `k-${randomBytes(10).toString('hex')}`;
  beforeAll(async () => {
    dir = join(tmp, 'vars');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, '.env'), 'MODE=lenient\n');
    writeFileSync(
      join(dir, 'mcp.json'),
      JSON.stringify({
        servers: {
          // A key put into an argument by a variable: the report must not print it.
          'arg key': { type: 'stdio', command: 'node', args: [fixture('correct-sdk.mjs'), '--api-key', '${env:SEALMARK_TEST_ARG_KEY}'] },
          // The same file-safe name as the entry above: their transcripts must not collide.
          arg_key: { type: 'stdio', command: 'node', args: [fixture('correct-sdk.mjs'), '--mode=${EMPTY_FOR_TEST:-fallback}'] },
          // VS Code's envFile: needs-env.mjs starts only with MODE set.
          'env file': { type: 'stdio', command: 'node', args: [fixture('adversarial/needs-env.mjs')], envFile: '${workspaceFolder}/.env' },
        },
      }),
    );
    r = await run(['audit', '--client-config', 'mcp.json', '--only', 'handshake,robust-input', '--transcript', 't.jsonl', '--format', 'json', '--output', 'm.json', '--format', 'text'], {
      cwd: dir,
      env: { SEALMARK_TEST_ARG_KEY: SECRET, EMPTY_FOR_TEST: '' },
    });
    m = readJson<MultiReport>(join(dir, 'm.json'));
  }, SLOW);

  it('a value a variable put into the command line is redacted everywhere', () => {
    expect(byName(m, 'arg key').status).toBe('audited');
    expect(byName(m, 'arg key').target.command.join(' ')).toContain('[redacted:SEALMARK_TEST_ARG_KEY]');
    for (const text of [r.stdout, r.stderr, readFileSync(join(dir, 'm.json'), 'utf8'), ...readdirSync(dir).filter((f) => f.endsWith('.jsonl')).map((f) => readFileSync(join(dir, f), 'utf8'))]) {
      expect(text.includes(SECRET)).toBe(false);
    }
  });

  it('${NAME:-default} takes the default for an empty value, as a shell does', () => {
    expect(byName(m, 'arg_key').target.command).toContain('--mode=fallback');
  });

  it('envFile is read as a dotenv file', () => {
    expect(byName(m, 'env file').status, JSON.stringify(byName(m, 'env file').notAudited)).toBe('audited');
  });

  it('two names that read the same as file names get transcripts of their own', () => {
    expect(readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort()).toEqual(['t.1-arg_key.jsonl', 't.2-arg_key.jsonl', 't.3-env_file.jsonl']);
  });

  it('a replay line carries the --env names of the audit', async () => {
    writeFileSync(join(dir, 'needs.json'), JSON.stringify({ mcpServers: { needs: { command: 'node', args: [fixture('adversarial/needs-env.mjs')] } } }));
    const a = await run(['audit', '--client-config', 'needs.json', '--env', 'MODE', '--only', 'handshake,robust-input', '--format', 'json'], { cwd: dir, env: { MODE: 'lenient' } });
    const rep = (JSON.parse(a.stdout) as MultiReport).servers[0]!.report;
    expect(rep.status).toBe('audited');
    const f = rep.checks.flatMap((c) => c.findings).find((x) => x.replay);
    // MODE=lenient is no secret: the line carries its value, so a shell without MODE replays it.
    expect(f?.replay).toMatch(/^sealmark call --client-config needs\.json --server needs --env MODE=lenient --tool /);
    const replayed = await run([], { cwd: dir, shell: f!.replay! });
    expect(replayed.code, replayed.stderr).toBe(0);
  }, SLOW);
});
