/**
 * secret-echo (pack secrets, capping; SPEC sections 5, 6 and 8) against real fixture servers: the
 * environment dump of case C16 and its fix, a bearer token quoted in an error, a hard-coded cloud
 * key, a request echoed with the password in it. Every audit also writes a transcript, and no
 * report format nor the transcript may carry a canary or the user's token.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit } from '../../src/audit.js';
import { configRegistry } from '../../src/config/defaults.js';
import { parseConfig } from '../../src/config/schema.js';
import { renderText } from '../../src/report/reporters/text.js';
import { ARGUMENT_CANARY, CREDENTIAL_PATTERNS, scanSecrets } from '../../src/secrets.js';
import { Redactor } from '../../src/redact.js';
import type { Report } from '../../src/report/build.js';
import { checkOf, findingsOf, fixture } from '../helpers/run.js';

const ID = 'secret-echo';
const TOKEN = 'tok_live_8f3a9c2e77d14b6a';
const dir = mkdtempSync(join(tmpdir(), 'sealmark-secret-echo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  report: Report;
  transcript: string;
  json: string;
  text: string;
}

async function run(name: string, raw: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<Run> {
  const transcriptPath = join(dir, `${name.replace(/\W/g, '_')}.jsonl`);
  const report = await audit({ command: process.execPath, args: [fixture(name)], config: parseConfig(raw, configRegistry()), env, transcriptPath });
  return { report, transcript: readFileSync(transcriptPath, 'utf8'), json: JSON.stringify(report), text: renderText(report, { color: false, verbose: true }) };
}

const runs: Record<string, Run> = {};
beforeAll(async () => {
  const [c16, fixed, bearer, password] = await Promise.all([
    run('effects/c16-env-dump.mjs'),
    run('secrets/env_names_only.mjs'),
    // fetch_report needs a valid call to reach its upstream error: a probes: entry gives it one.
    run('secrets/bearer_in_error.mjs', { probes: [{ tool: 'fetch_report', arguments: { report_id: 'r-1' }, expect: 'error' }] }, { API_TOKEN: TOKEN }),
    run('secrets/echo_password.mjs'),
  ]);
  Object.assign(runs, { c16, fixed, bearer, password });
}, 120_000);

/** Every place a run could print a secret. */
const outputs = (r: Run) => [r.json, r.text, r.transcript];

describe('C16: a tool that returns the whole environment', () => {
  it('fails with `env-canary` naming both canaries, on every call that got the dump', () => {
    const r = runs.c16!.report;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    const [f] = findingsOf(r, ID, 'env-canary');
    expect(c.findings).toHaveLength(1);
    expect(f!.message).toBe('show_env: the result carries the environment canaries SEALMARK_CANARY_TOKEN, SEALMARK_CANARY_API_KEY: the server hands out its environment');
    // robust-input's read-only no-argument call, strict-arguments' `{}` and no-arguments calls and
    // the effects pack's {} call all got it.
    const calls = f!.evidence.calls!.map((s) => r.calls.find((x) => x.seq === s)!);
    expect(calls.map((x) => [x.probe, x.tool])).toEqual([
      ['read-only-no-args', 'show_env'],
      ['empty-arguments', 'show_env'],
      ['no-arguments', 'show_env'],
      ['default-call', 'show_env'],
    ]);
    for (const x of calls) expect(x.secrets).toEqual([
      { kind: 'env-canary', name: 'SEALMARK_CANARY_TOKEN', where: 'result' },
      { kind: 'env-canary', name: 'SEALMARK_CANARY_API_KEY', where: 'result' },
    ]);
    expect(f!.replay).toMatch(/^sealmark call --tool show_env --args '\{\}' -- /);
  });

  it('caps the grade at D, and pack secrets scores 0', () => {
    const g = runs.c16!.report.grade;
    expect(g.caps).toEqual([{ check: ID, letter: 'D' }]);
    expect(g.packs.find((p) => p.pack === 'secrets')?.percent).toBe(0);
    // Capped: D when the mean would have earned D or better, F when it is below D anyway.
    expect(g.letter).toBe(g.percent! >= 60 ? 'D' : 'F');
    expect(g.percent!).toBeGreaterThanOrEqual(60);
  });

  it('never prints a canary: the reply is shown with the values redacted', () => {
    for (const out of outputs(runs.c16!)) {
      expect(out).not.toMatch(/smk_env_[0-9a-f]{24}/);
      expect(out).not.toContain(ARGUMENT_CANARY);
    }
    expect(runs.c16!.json).toContain('[redacted:SEALMARK_CANARY_TOKEN]');
    expect(runs.c16!.transcript).toContain('[redacted:SEALMARK_CANARY_API_KEY]');
  });

  it('the fix (names only, no values) passes', () => {
    const r = runs.fixed!.report;
    expect(checkOf(r, ID).verdict).toBe('pass');
    expect(checkOf(r, ID).findings).toEqual([]);
    expect(r.grade.caps).toEqual([]);
    // The names are there; that is not a leak.
    const env = r.calls.find((c) => c.probe === 'read-only-no-args')!;
    expect(JSON.stringify(env.reply.raw)).toContain('SEALMARK_CANARY_TOKEN');
  });
});

describe('a bearer token quoted in an error, and a hard-coded cloud key', () => {
  it('fails with `user-secret` for API_TOKEN (given with --env) and `pattern` aws-access-key', () => {
    const r = runs.bearer!.report;
    expect(checkOf(r, ID).verdict).toBe('fail');
    expect(checkOf(r, ID).findings.map((f) => f.messageId).sort()).toEqual(['pattern', 'user-secret']);
    const user = findingsOf(r, ID, 'user-secret');
    expect(user.map((f) => [f.tool, f.data.name, f.data.where])).toEqual([['fetch_report', 'API_TOKEN', 'result']]);
    expect(user[0]!.message).toBe('fetch_report: the result carries the value of API_TOKEN, which you gave the server as a credential');
    const userCall = r.calls.find((c) => c.seq === user[0]!.evidence.calls![0])!;
    expect(userCall.probe).toBe('user-probe');
    const pattern = findingsOf(r, ID, 'pattern');
    expect(pattern.map((f) => [f.tool, f.data.name])).toEqual([['upstream_status', 'aws-access-key']]);
    expect(pattern[0]!.message).toBe('upstream_status: the result carries an AWS access key id (AKIA… / ASIA…)');
  });

  it('prints neither the token nor the key anywhere', () => {
    for (const out of outputs(runs.bearer!)) {
      expect(out).not.toContain(TOKEN);
      expect(out).not.toContain('AKIAZ7EXAMPLE3KQ2B4X');
    }
    expect(runs.bearer!.json).toContain('Authorization: Bearer [redacted:API_TOKEN]');
    expect(runs.bearer!.json).toContain('credentials [redacted:aws-access-key]');
  });
});

describe('a request echoed in an error, password included', () => {
  it('fails with `argument-canary`: the extra-only probe carried the canary in `password`', () => {
    const r = runs.password!.report;
    expect(checkOf(r, ID).verdict).toBe('fail');
    const [f] = findingsOf(r, ID, 'argument-canary');
    expect(f!.message).toBe('login: the result repeats the canary sealmark passed in a credential-like argument');
    const call = r.calls.find((c) => c.seq === f!.evidence.calls![0])!;
    expect(call.probe).toBe('extra-only');
    // The request and the reply both show the placeholder, never the canary.
    expect(call.request).toContain('"password":"[redacted:sealmark-argument-canary]"');
    for (const out of outputs(runs.password!)) expect(out).not.toContain(ARGUMENT_CANARY);
  });
});

describe('scanSecrets and the redactor', () => {
  const none = { env: {}, user: {} };
  it.each([
    ['aws-access-key', 'key AKIAIOSFODNN7EXAMPLE here'],
    ['github-token', `ghp_${'a1B2'.repeat(9)}`],
    ['slack-token', 'xoxb-1234567890-abcdefghij'],
    ['openai-key', `sk-proj-${'Ab1_'.repeat(6)}`],
    ['stripe-key', `sk_live_${'x'.repeat(24)}`],
    ['google-api-key', `AIza${'B'.repeat(35)}`],
    ['private-key', '-----BEGIN RSA PRIVATE KEY-----\nMIIE'],
    ['jwt', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'],
  ])('finds %s in a result and redacts it', (id, text) => {
    expect(scanSecrets({ result: { content: [{ type: 'text', text }] } }, none)).toEqual([{ kind: 'pattern', name: id, where: 'result' }]);
    expect(new Redactor().text(text)).toContain(`[redacted:${id}]`);
  });

  it.each([
    'task-management-system-for-everyone',
    'AKIA is a prefix, AKIA123 too short',
    'eyJhbGciOi is half a token',
    'the skeleton key sk- is not one',
    'BEGIN PUBLIC KEY',
  ])('finds nothing in %j', (text) => {
    expect(scanSecrets({ error: { code: -32602, message: text } }, none)).toEqual([]);
  });

  it('says where: a JSON-RPC error is `error`, user secrets need a credential name', () => {
    expect(scanSecrets({ error: { code: 1, message: 'token abcdefgh1234' } }, { env: {}, user: { API_TOKEN: 'abcdefgh1234' } })).toEqual([{ kind: 'user-secret', name: 'API_TOKEN', where: 'error' }]);
    expect(CREDENTIAL_PATTERNS.map((p) => p.id)).toEqual(['aws-access-key', 'github-token', 'slack-token', 'openai-key', 'stripe-key', 'google-api-key', 'private-key', 'jwt']);
  });

  it('reads the reply’s strings as they are: a key after a newline, a secret as a key or a number, one with a quote', () => {
    // In the reply's JSON text the newline is `\n`, and "nAKIA…" has no word boundary: the text is read, not its JSON.
    expect(scanSecrets({ result: { content: [{ type: 'text', text: 'env:\nAKIAIOSFODNN7EXAMPLE' }] } }, none)).toEqual([{ kind: 'pattern', name: 'aws-access-key', where: 'result' }]);
    expect(scanSecrets({ result: { env: { abcdefgh1234: 'API_TOKEN' } } }, { env: {}, user: { API_TOKEN: 'abcdefgh1234' } })).toEqual([{ kind: 'user-secret', name: 'API_TOKEN', where: 'result' }]);
    expect(scanSecrets({ result: { pin: 12345678 } }, { env: {}, user: { ACCOUNT_PIN: '12345678' } })).toEqual([{ kind: 'user-secret', name: 'ACCOUNT_PIN', where: 'result' }]);
    expect(scanSecrets({ result: { text: 'pass: a"b\\c-secret' } }, { env: {}, user: { DB_PASSWORD: 'a"b\\c-secret' } })).toEqual([{ kind: 'user-secret', name: 'DB_PASSWORD', where: 'result' }]);
    // Two strings never make one secret.
    expect(scanSecrets({ result: ['abcdef', 'gh1234'] }, { env: {}, user: { API_TOKEN: 'abcdefgh1234' } })).toEqual([]);
  });
});

describe('namedLikeCredential', () => {
  it('reads variable names as words: a credential word anywhere, or key/pat/pin/auth as the last word', async () => {
    const { namedLikeCredential } = await import('../../src/secrets.js');
    for (const n of ['API_TOKEN', 'DB_PASSWORD', 'AWS_SECRET_ACCESS_KEY', 'GITHUB_PAT', 'stripeApiKey', 'ACCOUNT_PIN']) expect(namedLikeCredential(n), n).toBe(true);
    for (const n of ['AUTH_MODE', 'KEYSPACE', 'SESSION_TIMEOUT', 'MODE', 'MEMORY_FILE_PATH', 'PRIVATE_NETWORK']) expect(namedLikeCredential(n), n).toBe(false);
  });
});

describe('a secret in the initialize reply (adversarial-design/notification-leak.mjs)', () => {
  it('fails on the instructions, under the name initialize, and prints no canary', async () => {
    const r = await audit({ command: process.execPath, args: [fixture('adversarial-design/notification-leak.mjs')], config: parseConfig({}, configRegistry()), env: { API_TOKEN: TOKEN } });
    expect(checkOf(r, ID).verdict).toBe('fail');
    const init = checkOf(r, ID).findings.filter((f) => f.data.tool === 'initialize');
    expect(init.map((f) => [f.messageId, f.data.where])).toEqual([
      ['env-canary', 'result'],
      ['user-secret', 'result'],
    ]);
    expect(init[0]!.data.name).toBe('SEALMARK_CANARY_TOKEN');
    expect(JSON.stringify(r)).not.toMatch(/smk_env_[0-9a-f]{24}/);
    expect(JSON.stringify(r)).not.toContain(TOKEN);
  });
});
