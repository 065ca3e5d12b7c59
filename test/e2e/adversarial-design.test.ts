/**
 * Adversarial servers for the design and secrets packs (test/fixtures/servers/adversarial-design/,
 * written by a tester; what each does and what sealmark SHOULD say is in its header comment and the
 * folder's README). Each test pins a bug those fixtures exposed and that was fixed, against a real
 * audit: secrets under sealmark's own key names, nested deeper than the walk went, given as numbers,
 * cut short before redaction, or holding characters JSON escapes; an execute step that kills the
 * server on a made-up proposal (and the design pack running last so later checks are still judged);
 * a credential-looking variable name that is not one (AUTH_MODE); `--only secret-echo` still calling
 * the tools; and `sealmark call` redacting the initialize error it prints on stderr.
 * Fixture settings reach the server only through the audit's `env` option.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit } from '../../src/audit.js';
import { checks as allChecks } from '../../src/checks/index.js';
import { configRegistry } from '../../src/config/defaults.js';
import { parseConfig } from '../../src/config/schema.js';
import type { Report } from '../../src/report/build.js';
import { renderText } from '../../src/report/reporters/text.js';
import { checkOf, findingsOf, fixture, root } from '../helpers/run.js';
import { runCli, type CliRun } from '../helpers/cli.js';

const TOKEN = 'hunter2-very-secret-value';
const PIN = '83749201';
const PASSWORD = 's3cr"et\\pass-2024';
const CANARY = /smk_env_[0-9a-f]{24}/;

/** Config that leaves only secret-echo on (what `--only secret-echo` does). */
const ONLY_SECRET_ECHO = {
  checks: Object.fromEntries(allChecks.filter((c) => c.meta.id !== 'secret-echo').map((c) => [c.meta.id, { enabled: false }])),
};

interface Spec {
  /** Path under test/fixtures/servers/. */
  file: string;
  env?: Record<string, string>;
  raw?: Record<string, unknown>;
  /** Write a transcript (to a temp dir; its path is in `transcripts`). */
  transcript?: boolean;
}

/** Every audit of this file, by label; started together in beforeAll, awaited by the tests. */
const SPECS = {
  ownKeys: { file: 'adversarial-design/own-keys-leak.mjs', env: { API_TOKEN: TOKEN }, transcript: true },
  deep: { file: 'adversarial-design/deep-nesting-leak.mjs', env: { API_TOKEN: TOKEN }, transcript: true },
  numeric: { file: 'adversarial-design/numeric-secret.mjs', env: { ACCOUNT_PIN_SECRET: PIN }, transcript: true },
  truncated: { file: 'adversarial-design/truncated-secret.mjs', env: { API_TOKEN: TOKEN } },
  escaped: { file: 'adversarial-design/escaped-secret.mjs', env: { DB_PASSWORD: PASSWORD } },
  executeCrash: { file: 'adversarial-design/execute-crash.mjs' },
  correctSdk: { file: 'correct-sdk.mjs', env: { AUTH_MODE: 'required', KEYSPACE: 'validation' } },
  onlySecretEcho: { file: 'effects/c16-env-dump.mjs', raw: ONLY_SECRET_ECHO },
} satisfies Record<string, Spec>;
type Label = keyof typeof SPECS;

const tmp = mkdtempSync(join(tmpdir(), 'sealmark-adv-design-'));
const transcripts = new Map<Label, string>();

/** Audits one spec once; later calls get the same run. */
const runs = new Map<Label, Promise<Report>>();
function run(label: Label): Promise<Report> {
  let p = runs.get(label);
  if (!p) {
    const s: Spec = SPECS[label];
    const transcriptPath = s.transcript ? join(tmp, `${label}.jsonl`) : undefined;
    if (transcriptPath) transcripts.set(label, transcriptPath);
    p = audit({ command: process.execPath, args: [fixture(s.file)], env: s.env, config: parseConfig(s.raw ?? {}, configRegistry()), transcriptPath });
    // Awaited by its test; this only keeps an early rejection from counting as unhandled.
    p.catch(() => {});
    runs.set(label, p);
  }
  return p;
}

/** The transcript an audit wrote (read after the audit resolved). */
async function transcriptOf(label: Label): Promise<string> {
  await run(label);
  const path = transcripts.get(label);
  if (!path) throw new Error(`${label} has no transcript`);
  return readFileSync(path, 'utf8');
}

let callRuns: { short: Promise<CliRun>; long: Promise<CliRun> };

beforeAll(() => {
  for (const label of Object.keys(SPECS) as Label[]) void run(label);
  if (!existsSync(join(root, 'dist', 'cli.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test builds first)');
  const callArgs = (extra: string[]) => ['call', ...extra, '--env', 'API_TOKEN', '--tool', 'x', '--args', '{}', '--', process.execPath, fixture('adversarial-design/init-error-secret.mjs')];
  callRuns = {
    short: runCli(callArgs(['--env', 'MODE=short']), { env: { API_TOKEN: TOKEN } }),
    long: runCli(callArgs([]), { env: { API_TOKEN: TOKEN } }),
  };
  callRuns.short.catch(() => {});
  callRuns.long.catch(() => {});
});

afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

/** Every `n`-character piece of `s`. */
const pieces = (s: string, n: number): string[] => Array.from({ length: s.length - n + 1 }, (_, i) => s.slice(i, i + n));

describe('secrets under sealmark\'s own key names (own-keys-leak)', () => {
  it('prints neither the token nor a canary in the report or the transcript, and secret-echo fails', async () => {
    const r = await run('ownKeys');
    const json = JSON.stringify(r);
    expect(json).not.toContain(TOKEN);
    expect(json).not.toMatch(CANARY);
    const t = await transcriptOf('ownKeys');
    expect(t.length).toBeGreaterThan(0);
    expect(t).not.toContain(TOKEN);
    expect(t).not.toMatch(CANARY);
    const se = checkOf(r, 'secret-echo');
    expect(se.verdict).toBe('fail');
    expect(findingsOf(r, 'secret-echo', 'env-canary').length).toBeGreaterThan(0);
    expect(findingsOf(r, 'secret-echo', 'user-secret').map((f) => f.data.name)).toContain('API_TOKEN');
  });
});

describe('a secret 210 levels deep (deep-nesting-leak)', () => {
  it('prints the token nowhere in the report or the transcript', async () => {
    const r = await run('deep');
    const json = JSON.stringify(r);
    expect(json).not.toContain(TOKEN);
    expect(json).not.toMatch(CANARY);
    const t = await transcriptOf('deep');
    expect(t.length).toBeGreaterThan(0);
    expect(t).not.toContain(TOKEN);
    expect(t).not.toMatch(CANARY);
    expect(checkOf(r, 'secret-echo').verdict).toBe('fail');
  });
});

describe('a secret echoed as a JSON number (numeric-secret)', () => {
  it('fails secret-echo with user-secret and prints the number nowhere', async () => {
    const r = await run('numeric');
    expect(JSON.stringify(r)).not.toContain(PIN);
    expect(await transcriptOf('numeric')).not.toContain(PIN);
    expect(checkOf(r, 'secret-echo').verdict).toBe('fail');
    expect(findingsOf(r, 'secret-echo', 'user-secret').map((f) => f.data.name)).toContain('ACCOUNT_PIN_SECRET');
  });
});

describe('a secret across a cut (truncated-secret)', () => {
  it('leaves no 10-character piece of the token in the JSON or the text report', async () => {
    const r = await run('truncated');
    const json = JSON.stringify(r);
    const text = renderText(r, { color: false, verbose: true });
    // Not vacuous: the token's places are in the report, redacted (the stderr tail starts with one).
    expect(json).toContain('[redacted:API_TOKEN]');
    expect(r.stderrTail.startsWith('[redacted:API_TOKEN]')).toBe(true);
    expect(text).toContain('[redacted:API_TOKEN]');
    for (const piece of ['hunter2-ve', 'secret-val', ...pieces(TOKEN, 10)]) {
      expect(json, `JSON report holds ${piece}`).not.toContain(piece);
      expect(text, `text report holds ${piece}`).not.toContain(piece);
    }
  });
});

describe('a secret with characters JSON escapes (escaped-secret)', () => {
  it('fails secret-echo with user-secret DB_PASSWORD and prints the password in no form', async () => {
    const r = await run('escaped');
    expect(checkOf(r, 'secret-echo').verdict).toBe('fail');
    expect(findingsOf(r, 'secret-echo', 'user-secret').map((f) => f.data.name)).toContain('DB_PASSWORD');
    const json = JSON.stringify(r);
    const escaped = JSON.stringify(PASSWORD).slice(1, -1);
    const twice = JSON.stringify(escaped).slice(1, -1);
    expect(json).not.toContain(PASSWORD);
    expect(json).not.toContain(escaped);
    expect(json).not.toContain(twice);
    expect(json).toContain('connected with password [redacted:DB_PASSWORD]');
  });
});

describe('an execute step that exits on a made-up proposal (execute-crash)', () => {
  it('is no pass for two-step-writes, and the checks after it are still judged', async () => {
    const r = await run('executeCrash');
    const ts = checkOf(r, 'two-step-writes');
    expect(ts.verdict).not.toBe('pass');
    const noAnswer = findingsOf(r, 'two-step-writes', 'made-up-proposal-no-answer');
    expect(noAnswer.map((f) => f.tool)).toContain('delete_account');
    expect(noAnswer.find((f) => f.tool === 'delete_account')!.data.what).toBe('the server exited');
    for (const id of ['protocol-errors', 'oversized-input', 'concurrency']) {
      expect(checkOf(r, id).verdict, id).not.toBe('n/a');
    }
  });
});

describe('a correct server with credential-looking variable names that are not credentials (correct-sdk)', () => {
  it('passes secret-echo and is not capped', async () => {
    const r = await run('correctSdk');
    expect(checkOf(r, 'secret-echo').verdict).toBe('pass');
    expect(r.grade.caps).toEqual([]);
  });
});

describe('only secret-echo enabled (c16-env-dump)', () => {
  it('still calls the tools and fails secret-echo', async () => {
    const r = await run('onlySecretEcho');
    expect(r.calls.some((c) => c.tool === 'show_env')).toBe(true);
    const se = checkOf(r, 'secret-echo');
    expect(se.verdict).toBe('fail');
    expect(findingsOf(r, 'secret-echo', 'env-canary').map((f) => f.tool)).toContain('show_env');
    expect(JSON.stringify(r)).not.toMatch(CANARY);
  });
});

describe('sealmark call on an initialize error that quotes the token (init-error-secret)', () => {
  it('redacts the whole token on stderr (MODE=short)', async () => {
    const c = await callRuns.short;
    expect(c.code).toBe(3);
    expect(c.stderr).toContain('sealmark: no call was made:');
    expect(c.stderr).toContain('[redacted:API_TOKEN]');
    expect(c.stderr).not.toContain(TOKEN);
    expect(c.stdout).not.toContain(TOKEN);
  });
  it('prints no token on stderr for the long message either', async () => {
    const c = await callRuns.long;
    expect(c.code).toBe(3);
    expect(c.stderr).toContain('sealmark: no call was made:');
    expect(c.stderr).not.toContain(TOKEN);
    expect(c.stdout).not.toContain(TOKEN);
  });
});
