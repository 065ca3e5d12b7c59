/**
 * The GitHub Action (action.yml, issue 6), exercised the way a runner runs it: the composite
 * steps' `run` scripts are executed with bash, with their `env:` expressions evaluated from the
 * test's inputs and the earlier steps' outputs (read back from $GITHUB_OUTPUT), against the demo
 * server copied into a folder whose name has a space. The install step is not run (the test runs
 * from this checkout, already built); the upload step is checked for what it would upload.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { root } from '../helpers/run.js';
import { startHttpFixture, type HttpFixture } from '../helpers/http.js';

/** The bearer fixture's token (a made-up value long enough to be redacted). */
const TOKEN = 'fixture-token-5b1e0c9d7a';
import type { Report } from '../../src/report/build.js';

interface Step {
  name: string;
  id?: string;
  if?: string;
  run?: string;
  uses?: string;
  shell?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
}

interface Action {
  inputs: Record<string, { default?: string; required?: boolean }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
}

const action = parse(readFileSync(join(root, 'action.yml'), 'utf8')) as Action;
const step = (name: string) => action.runs.steps.find((s) => s.name === name)!;

/** Evaluates the `${{ … }}` expressions this action uses: inputs, steps.<id>.outputs and github.action_path. */
function expand(text: string, ctx: { inputs: Record<string, string>; outputs: Record<string, Record<string, string>> }): string {
  return text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_m, expr: string) => {
    const input = /^inputs\.([\w-]+)$/.exec(expr);
    if (input) return ctx.inputs[input[1]!] ?? action.inputs[input[1]!]?.default ?? '';
    const out = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expr);
    if (out) return ctx.outputs[out[1]!]?.[out[2]!] ?? '';
    if (expr === 'github.action_path') return root.replace(/\/$/, '');
    throw new Error(`the test cannot evaluate \${{ ${expr} }}`);
  });
}

interface ActionRun {
  outputs: Record<string, string>;
  auditLog: string;
  gateCode: number | null;
  gateLog: string;
  sarifFile: string;
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A working directory holding the demo server under `my server/server.mjs`. */
function workspace(): string {
  const d = mkdtempSync(join(tmpdir(), 'sealmark-action-'));
  dirs.push(d);
  mkdirSync(join(d, 'my server'));
  copyFileSync(join(root, 'demo', 'server.mjs'), join(d, 'my server', 'server.mjs'));
  return d;
}

/** Runs the audit step, then the gate step, as a runner would, with `inputs` (defaults from action.yml). */
function runAction(inputs: Record<string, string>, outputDir = inputs['working-directory']!): ActionRun {
  const ctx = { inputs, outputs: {} as Record<string, Record<string, string>> };
  const audit = step('Audit the server');
  const githubOutput = join(outputDir, '.github-output');
  writeFileSync(githubOutput, '');
  const env = (s: Step) => ({
    PATH: process.env.PATH!,
    HOME: process.env.HOME!,
    ...(process.env.FIXTURE_TOKEN_FOR_TEST ? { FIXTURE_TOKEN_FOR_TEST: process.env.FIXTURE_TOKEN_FOR_TEST } : {}),
    NO_COLOR: '1',
    GITHUB_OUTPUT: githubOutput,
    ...Object.fromEntries(Object.entries(s.env ?? {}).map(([k, v]) => [k, expand(v, ctx)])),
  });
  expect(audit.shell).toBe('bash');
  const a = spawnSync('bash', ['-e', '-c', audit.run!], { env: env(audit), encoding: 'utf8', timeout: 120_000 });
  expect(a.status, `audit step failed:\n${a.stdout}\n${a.stderr}`).toBe(0);
  const outputs = Object.fromEntries(
    readFileSync(githubOutput, 'utf8')
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  ctx.outputs.audit = outputs;
  const upload = step('Upload SARIF to code scanning');
  const gate = step('Apply the gate');
  const g = spawnSync('bash', ['-e', '-c', gate.run!], { env: env(gate), encoding: 'utf8' });
  return { outputs, auditLog: a.stdout + a.stderr, gateCode: g.status, gateLog: g.stdout + g.stderr, sarifFile: expand(upload.with!.sarif_file!, ctx) };
}

describe('action.yml', () => {
  it('is a composite action whose inputs and outputs are the ones its steps use', () => {
    expect(action.runs.using).toBe('composite');
    for (const k of ['command', 'url', 'client-config']) expect(action.inputs[k]?.default, k).toBe('');
    const used = new Set([...JSON.stringify(action).matchAll(/inputs\.([\w-]+)/g)].map((m) => m[1]));
    expect([...used].sort()).toEqual(Object.keys(action.inputs).sort());
    for (const [name, o] of Object.entries(action.outputs)) expect(o.value, name).toBe(`\${{ steps.audit.outputs.${name} }}`);
    const install = step('Install sealmark');
    expect(install.run).toContain('npm ci');
    expect(install.run).toContain('npm run build');
    const upload = step('Upload SARIF to code scanning');
    expect(upload.uses).toMatch(/^github\/codeql-action\/upload-sarif@v\d+$/);
    expect(upload.if).toContain("inputs.upload-sarif == 'true'");
  });

  it('on the demo without a gate: writes JSON and SARIF, sets the outputs, and the gate step fails the job (a check at severity error failed)', () => {
    const ws = workspace();
    const r = runAction({ command: `node "my server/server.mjs"`, 'working-directory': ws });
    expect(r.outputs['exit-code']).toBe('1');
    const report = JSON.parse(readFileSync(join(ws, 'sealmark.json'), 'utf8')) as Report;
    expect(r.outputs.json).toBe(join(ws, 'sealmark.json'));
    expect(r.outputs.grade).toBe(report.grade.letter);
    expect(r.outputs.percent).toBe(String(report.grade.percent));
    // The space in the folder name survived the command's splitting.
    expect(report.target.command).toEqual(['node', 'my server/server.mjs']);
    expect(r.auditLog).toMatch(/^grade [A-F] /m);
    // What the upload step would upload is this run's SARIF, pointing at the server file.
    expect(r.sarifFile).toBe(join(ws, 'sealmark.sarif'));
    const sarif = JSON.parse(readFileSync(r.sarifFile, 'utf8')) as { version: string; runs: { results: { locations: { physicalLocation?: { artifactLocation: { uri: string; uriBaseId?: string } } }[] }[] }[] };
    expect(sarif.version).toBe('2.1.0');
    expect(sarif.runs[0]!.results.length).toBeGreaterThan(0);
    expect(sarif.runs[0]!.results[0]!.locations[0]!.physicalLocation?.artifactLocation).toEqual({ uri: 'my%20server/server.mjs', uriBaseId: 'SRCROOT' });
    expect(r.gateCode).toBe(1);
    expect(r.gateLog).toContain('::error title=sealmark::the server is below the gate');
  }, 180_000);

  it('with fail-under, args and a baseline: the gate passes when nothing is new', () => {
    const ws = workspace();
    const first = runAction({ command: `node "my server/server.mjs"`, 'working-directory': ws, json: 'base.json', 'fail-under': 'F', args: '--only handshake,robust-input,secret-echo' });
    expect(first.outputs['exit-code']).toBe('0');
    expect(first.gateCode).toBe(0);
    const base = JSON.parse(readFileSync(join(ws, 'base.json'), 'utf8')) as Report;
    expect(base.checks.map((c) => c.id)).toEqual(['handshake', 'robust-input', 'secret-echo']);
    // secret-echo fails at severity error in both runs: with the baseline it is not new.
    expect(base.checks.find((c) => c.id === 'secret-echo')!.verdict).toBe('fail');
    const second = runAction({ command: `node "my server/server.mjs"`, 'working-directory': ws, baseline: 'base.json', args: '--only handshake,robust-input,secret-echo' });
    const report = JSON.parse(readFileSync(join(ws, 'sealmark.json'), 'utf8')) as Report;
    expect(report.baseline?.new).toEqual([]);
    expect(second.outputs['exit-code']).toBe('0');
    expect(second.gateCode).toBe(0);
    expect(second.gateLog).toContain('sealmark: passed');
  }, 180_000);

  it('a server that cannot start: exit code 3 and the gate step fails with "could not be audited"', () => {
    const ws = workspace();
    const r = runAction({ command: 'no-such-server-binary --stdio', 'working-directory': ws });
    expect(r.outputs['exit-code']).toBe('3');
    expect(r.outputs.grade).toBe('');
    expect(r.gateCode).toBe(1);
    expect(r.gateLog).toContain('could not be audited');
  }, 60_000);
});

describe('action.yml inputs are data, never shell', () => {
  it('a command with a substitution or a second command is refused, and nothing of it runs', () => {
    const ws = workspace();
    const marker = join(ws, 'PWNED');
    for (const command of [`node x.mjs $(touch ${marker})`, `node x.mjs; touch ${marker}`, `node x.mjs \`touch ${marker}\``, `node "x $(touch ${marker})"`]) {
      const r = runAction({ command, 'working-directory': ws });
      expect(r.outputs['exit-code'], command).toBe('2');
      expect(r.auditLog, command).toMatch(/the command input has/);
      expect(r.gateCode, command).toBe(1);
    }
    expect(existsSync(marker)).toBe(false);
  });

  it('a command and args over several lines are split into words', () => {
    const ws = workspace();
    const r = runAction({ command: 'node\n  "my server/server.mjs"\n', args: '--only handshake\n--fail-under F\n', 'working-directory': ws });
    const report = JSON.parse(readFileSync(join(ws, 'sealmark.json'), 'utf8')) as Report;
    expect(report.target.command).toEqual(['node', 'my server/server.mjs']);
    expect(report.checks.map((c) => c.id)).toEqual(['handshake']);
    expect(r.outputs['exit-code']).toBe('0');
  }, 60_000);

  it('an invalid option in a later line of args is seen (exit 2), and stale reports are not read as this run\'s', () => {
    const ws = workspace();
    writeFileSync(join(ws, 'sealmark.json'), JSON.stringify({ status: 'audited', grade: { letter: 'A', percent: 100 } }));
    writeFileSync(join(ws, 'sealmark.sarif'), '{}');
    const r = runAction({ command: 'node "my server/server.mjs"', args: '--only handshake\n--fail-under Z', 'working-directory': ws });
    expect(r.outputs['exit-code']).toBe('2');
    expect(r.outputs.grade ?? '').toBe('');
    expect(existsSync(join(ws, 'sealmark.json'))).toBe(false);
    expect(existsSync(join(ws, 'sealmark.sarif'))).toBe(false);
    expect(r.gateCode).toBe(1);
  });

  it('a working-directory that does not exist: exit code 2 with the reason, and the gate fails', () => {
    const r = runAction({ command: 'node x.mjs', 'working-directory': join(tmpdir(), 'sealmark-no-such-dir') }, workspace());
    expect(r.outputs['exit-code']).toBe('2');
    expect(r.auditLog).toContain('does not exist');
    expect(r.gateCode).toBe(1);
  });

  it("workflow commands a server prints are not obeyed: sealmark's output runs between stop-commands and its resume token", () => {
    const ws = workspace();
    const r = runAction({ command: `node ${join(root, 'test/fixtures/servers/adversarial-reports/workflow-commands.mjs')}`, 'working-directory': ws });
    const stop = /^::stop-commands::(sealmark-[0-9a-f]{32})$/m.exec(r.auditLog);
    expect(stop, r.auditLog).not.toBeNull();
    const token = stop![1]!;
    const from = r.auditLog.indexOf(stop![0]);
    const to = r.auditLog.indexOf(`::${token}::`);
    const injected = r.auditLog.indexOf('::error title=sealmark::fake annotation');
    expect(injected).toBeGreaterThan(from);
    expect(to).toBeGreaterThan(injected);
  }, 60_000);
});

describe('action.yml with a URL or a client configuration', () => {
  let fixture: HttpFixture;
  beforeAll(async () => {
    fixture = await startHttpFixture('bearer.mjs', [], { FIXTURE_TOKEN: TOKEN });
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  it('url with bearer-token: audits over HTTP, the token reaches the server and is printed nowhere', () => {
    const ws = workspace();
    const r = runAction({ url: fixture.url, 'bearer-token': TOKEN, 'working-directory': ws, 'fail-under': 'F' });
    const raw = readFileSync(join(ws, 'sealmark.json'), 'utf8');
    const report = JSON.parse(raw) as Report;
    expect(report.status).toBe('audited');
    expect(report.target).toMatchObject({ kind: 'http', url: fixture.url });
    expect(r.outputs['exit-code']).toBe('0');
    expect(r.outputs.grade).toBe(report.grade.letter);
    for (const text of [raw, readFileSync(join(ws, 'sealmark.sarif'), 'utf8'), r.auditLog]) expect(text).not.toContain(TOKEN);
    // Replays name the variable the action put the token in, never the token.
    expect(report.checks.flatMap((c) => c.findings).find((f) => f.replay)?.replay).toContain('--bearer-token-env SEALMARK_BEARER_TOKEN');
  }, 180_000);

  it('url without the token: exit code 3 and the gate step says the server could not be audited', () => {
    const ws = workspace();
    const r = runAction({ url: fixture.url, 'working-directory': ws });
    expect(r.outputs['exit-code']).toBe('3');
    expect(r.auditLog).toMatch(/the server answered 401/);
    expect(r.gateCode).toBe(1);
  }, 60_000);

  it('client-config: every server of the file, the worst grade as the output', () => {
    const ws = workspace();
    writeFileSync(join(ws, 'mcp.json'), JSON.stringify({ mcpServers: { notes: { command: 'node', args: ['my server/server.mjs'] }, remote: { url: fixture.url, headers: { Authorization: `Bearer \${env:FIXTURE_TOKEN_FOR_TEST}` } } } }));
    process.env.FIXTURE_TOKEN_FOR_TEST = TOKEN;
    const r = runAction({ 'client-config': 'mcp.json', 'working-directory': ws, 'fail-under': 'F' });
    const multi = JSON.parse(readFileSync(join(ws, 'sealmark.json'), 'utf8')) as { kind: string; servers: { name: string; report: Report }[] };
    expect(multi.kind).toBe('client-config');
    expect(multi.servers.map((x) => [x.name, x.report.status])).toEqual([
      ['notes', 'audited'],
      ['remote', 'audited'],
    ]);
    const letters = multi.servers.map((x) => x.report.grade.letter!).sort();
    expect(r.outputs.grade).toBe(letters.at(-1));
    expect(r.outputs['exit-code']).toBe('0');
    expect(readFileSync(join(ws, 'sealmark.json'), 'utf8')).not.toContain(TOKEN);
  }, 180_000);

  it('two of command, url and client-config: the step reports a usage error and the gate fails', () => {
    const ws = workspace();
    const r = runAction({ command: 'node x.js', url: fixture.url, 'working-directory': ws });
    expect(r.outputs['exit-code']).toBe('2');
    expect(r.auditLog).toContain('give exactly one of the inputs command, url and client-config');
    expect(r.gateCode).toBe(1);
  });
});

describe('the README workflow', () => {
  it('uses this action with inputs it has', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const block = /## In CI[\s\S]*?```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block, 'README.md has a "## In CI" section with a yaml block').toBeDefined();
    const wf = parse(block!) as { jobs: Record<string, { steps: { uses?: string; with?: Record<string, unknown> }[] }> };
    const uses = Object.values(wf.jobs).flatMap((j) => j.steps).filter((s) => s.uses?.startsWith('sealmark/sealmark'));
    expect(uses.length).toBe(1);
    for (const key of Object.keys(uses[0]!.with ?? {})) expect(Object.keys(action.inputs), key).toContain(key);
    expect(uses[0]!.with?.command).toBeTruthy();
  });
});
