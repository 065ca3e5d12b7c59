/**
 * What a new user sees around the report (SPEC section 8): one summary line on stderr when every
 * format goes to a file, and an interrupted run that says what it had done, stopped its server
 * and removed its scratch folders. Real binary, the bundled demo server.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, collectOutput, endLeftoverProcesses, runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/run.js';
import type { Report } from '../../src/report/build.js';

const dir = mkdtempSync(join(tmpdir(), 'sealmark-newcomer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('every format to a file', () => {
  it('one summary line on stderr: grade, findings and the files', async () => {
    const json = join(dir, 'report.json');
    const sarif = join(dir, 'report.sarif');
    const r = await runCli(['audit', '--demo', '--format', 'json', '--output', json, '--format', 'sarif', '--output', sarif]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    const rep = JSON.parse(readFileSync(json, 'utf8')) as Report;
    const fails = rep.checks.flatMap((c) => c.findings).filter((f) => f.level === 'fail').length;
    const partial = rep.checks.flatMap((c) => c.findings).filter((f) => f.level === 'partial').length;
    expect(r.stderr).toBe(`sealmark: grade ${rep.grade.letter} (${rep.grade.percent}%) · ${fails} failing, ${partial} partial findings · written to ${json}, ${sarif}\n`);
    expect(existsSync(sarif)).toBe(true);
  }, 120_000);

  it('--quiet: nothing on stderr; a report on stdout: no summary line', async () => {
    const quiet = await runCli(['audit', '--demo', '--quiet', '--format', 'json', '--output', join(dir, 'q.json')]);
    expect(quiet.stderr).toBe('');
    const piped = await runCli(['audit', '--demo', '--format', 'json']);
    expect(piped.stderr).toBe('');
  }, 120_000);
});

describe('temporary files', () => {
  it("a server that writes to its temporary folder writes into the sandbox's, and nothing is left in the user's", async () => {
    const tmp = join(dir, 'tmp-writes');
    mkdirSync(tmp);
    const r = await runCli(['call', '--tool', 'scratch', '--args', '{}', '--', 'node', fixture('writes-tmp.mjs')], { env: { TMPDIR: tmp } });
    expect(r.code, r.stderr).toBe(0);
    // The server was told a folder inside the sandbox's scratch folder, under the user's TMPDIR.
    expect(r.stdout).toMatch(new RegExp(`^reply .*${tmp.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/sealmark-sandbox-[^/]+/tmp/writes-tmp-fixture-`, 'm'));
    expect(readdirSync(tmp)).toEqual([]);
  }, 60_000);
});

describe('replay lines run the server as the audit did', () => {
  it.each([
    [['--network', 'on'], '--network on'],
    [['--no-sandbox'], '--no-sandbox'],
  ])('audit %j: every replay line carries %s, and one replays', async (flags, flag) => {
    const r = await runCli(['audit', '--demo', '--format', 'json', '--only', 'robust-input', ...flags], { cwd: dir });
    const rep = JSON.parse(r.stdout) as Report;
    const replays = rep.checks.flatMap((c) => c.findings).flatMap((f) => (f.replay ? [f.replay] : []));
    expect(replays.length).toBeGreaterThan(0);
    for (const line of replays) expect(line).toContain(` ${flag} `);
    const again = await runCli([], { shell: replays[0]!, cwd: dir });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^class +\S/m);
  }, 120_000);
});

describe('a test that leaves sealmark running', () => {
  it('endLeftoverProcesses (run after every test file) ends it, and sealmark removes its scratch folders', async () => {
    const tmp = join(dir, 'tmp-leftover');
    mkdirSync(tmp);
    // Not awaited, as a test that timed out leaves it.
    const pending = runCli(['audit', '--demo', '--format', 'json'], { env: { TMPDIR: tmp } });
    for (let i = 0; i < 400 && readdirSync(tmp).length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(readdirSync(tmp).some((n) => n.startsWith('sealmark-sandbox-'))).toBe(true);
    expect(await endLeftoverProcesses()).toBe(1);
    const r = await pending;
    expect(r.code).toBe(143);
    expect(readdirSync(tmp)).toEqual([]);
  }, 60_000);
});

describe('an interrupted run', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s: says what it was doing, stops the server, removes its scratch folders, exits %i', async (signal, code) => {
    // A temp folder of this run's own: what the audit makes there, and leaves, is its alone.
    const tmp = join(dir, `tmp-${signal}`);
    mkdirSync(tmp);
    const child = spawn(process.execPath, [BIN, 'audit', '--demo', '--format', 'json'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', TMPDIR: tmp } });
    const done = collectOutput(child);
    // Wait until the audit is under way: its sandbox folders exist.
    for (let i = 0; i < 400 && readdirSync(tmp).length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(readdirSync(tmp).some((n) => n.startsWith('sealmark-sandbox-'))).toBe(true);
    await new Promise((r) => setTimeout(r, 800));
    child.kill(signal);
    const r = await done;
    expect(r.code).toBe(code);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^sealmark: interrupted \\(${signal}\\) during \\S.* after \\d+ calls? made; every process it started was stopped and its scratch folders removed; no report was written\\n$`));
    expect(readdirSync(tmp)).toEqual([]);
  }, 60_000);
});
