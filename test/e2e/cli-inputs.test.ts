/**
 * The CLI with awkward input: unwritable paths, a YAML alias bomb, a reader that goes away, secrets
 * in --env, and replay lines that carry what the server needed. Real binary, real servers.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fixture } from '../helpers/run.js';
import { BIN, runCli, type CliRun } from '../helpers/cli.js';
import type { Report } from '../../src/report/build.js';

const dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), 'sealmark-inputs-'));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Runs a shell line from the repository root (a leading `sealmark ` is this checkout's binary). */
const sh = (line: string, env: Record<string, string> = {}): Promise<CliRun> => runCli([], { shell: line, env });
const node = JSON.stringify(process.execPath);
const sm = `${node} ${JSON.stringify(BIN)}`;

describe('paths are checked before the server starts', () => {
  it('--output into a missing folder: exit 2 naming the flag, no stack trace', async () => {
    const r = await sh(`${sm} audit --output /nonexistent-dir/r.txt --demo`);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^sealmark: --output \/nonexistent-dir\/r.txt: cannot write there \(ENOENT\)\n$/);
  });

  it('--transcript pointing at a directory: exit 2 naming the flag', async () => {
    const r = await sh(`${sm} audit --transcript ${temp()} --demo`);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^sealmark: --transcript .*: cannot write there \(EISDIR\)\n$/);
  });
});

describe('a URL where the command goes', () => {
  it('audit and call say to give it as --url (exit 2), not "command not found"', async () => {
    for (const cmd of ['audit', 'call']) {
      const r = await sh(`${sm} ${cmd} http://127.0.0.1:9/mcp`);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('sealmark: http://127.0.0.1:9/mcp is a URL, not a command: give it as --url http://127.0.0.1:9/mcp');
    }
  });
});

describe('config files that attack the parser', () => {
  it('a YAML alias bomb is a config error (exit 2), not a crash', async () => {
    const d = temp();
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 0; i < 9; i++) lines.push(`${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9).fill(`*${String.fromCharCode(97 + i)}`).join(',')}]`);
    writeFileSync(join(d, 'bomb.yaml'), lines.join('\n') + '\n');
    const r = await sh(`${sm} audit --config ${join(d, 'bomb.yaml')} --demo`);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/invalid YAML: .*alias/i);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('output to a reader that goes away', () => {
  it('audit --format json | head -c 10 ends quietly, without an EPIPE error', async () => {
    const r = await sh(`${sm} audit --format json -- ${node} ${JSON.stringify(fixture('many-tools.mjs'))} | head -c 10`);
    expect(r.stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(r.stdout.startsWith('{\n  "schem')).toBe(true);
  });
});

describe('secrets given to the server are redacted (SPEC section 8)', () => {
  it('--env values never reach the JSON report, the text report or the transcript', async () => {
    const d = temp();
    const transcript = join(d, 't.jsonl');
    const server = JSON.stringify(fixture('adversarial/env-echo.mjs'));
    const json = await sh(`${sm} audit --format json --transcript ${transcript} --env API_KEY=supersecret-XYZ -- ${node} ${server}`);
    expect(json.stdout).not.toContain('supersecret-XYZ');
    expect(json.stdout).toContain('[redacted:API_KEY]');
    const t = readFileSync(transcript, 'utf8');
    expect(t).not.toContain('supersecret-XYZ');
    expect(t).toContain('[redacted:API_KEY]');
    const text = await sh(`${sm} audit --verbose --env API_KEY=supersecret-XYZ -- ${node} ${server}`);
    expect(text.stdout).not.toContain('supersecret-XYZ');
  });
});

describe('replay lines carry what the server needed', () => {
  it('a server that needs --env MODE=lenient (no secret): the replay carries the value and reproduces the reply in a shell without MODE', async () => {
    const server = fixture('adversarial/needs-env.mjs');
    const r = await sh(`${sm} audit --format json --env MODE=lenient -- ${node} ${JSON.stringify(server)}`);
    const report = JSON.parse(r.stdout) as Report;
    const f = report.checks.flatMap((c) => c.findings).find((x) => x.replay);
    expect(f?.replay).toMatch(/^sealmark call --env MODE=lenient --tool echo --args /);
    const replayed = await sh(f!.replay!);
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toMatch(/^class {4}accepted$/m);
  });

  it('--env KEY without a value and without KEY in the environment is a usage error', async () => {
    const r = await sh(`${sm} audit --env SEALMARK_SURELY_UNSET --demo`);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--env SEALMARK_SURELY_UNSET: not set in this environment');
  });

  it('a config file with env: the replay names --config, and call --config reproduces', async () => {
    const d = temp();
    mkdirSync(join(d, 'proj'));
    const cfg = join(d, 'proj', 'sealmark.config.json');
    writeFileSync(cfg, JSON.stringify({ env: { MODE: 'lenient' } }));
    const r = await sh(`cd ${join(d, 'proj')} && ${sm} audit --format json -- ${node} ${JSON.stringify(fixture('adversarial/needs-env.mjs'))}`);
    const report = JSON.parse(r.stdout) as Report;
    const f = report.checks.flatMap((c) => c.findings).find((x) => x.replay)!;
    expect(f.replay).toContain(`--config ${cfg}`);
    const replayed = await sh(f.replay!);
    expect(replayed.stdout).toMatch(/^class {4}accepted$/m);
  });
});
