/**
 * Every finding that comes from a tools/call carries a `replay` line (SPEC sections 2 and 8:
 * "every finding carries enough to replay it"). This file audits a few fixtures through the real
 * binary, takes the first replayable finding of each check that produces them, runs its replay
 * line through a shell, and holds the replay to the audit: the same request on the wire, the same
 * reply class, the same effects in the sandbox, the same secrets found (and none printed).
 *
 * The last two tests keep the list honest: the checks covered here are exactly the checks whose
 * findings carried a replay in these audits (a new replayable check without a case fails), and a
 * finding without a replay had nothing to replay (no tools/call, or a request too long for a
 * command line).
 *
 * Needs a built dist/ (`npm test` builds before vitest), python3, and the sandbox.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, LATER_PACKS_OFF, root } from '../helpers/run.js';
import { runCli, type CliRun } from '../helpers/cli.js';
import { shellQuote } from '../../src/replay.js';
import type { Report, ReportCall } from '../../src/report/build.js';
import type { Finding } from '../../src/types.js';

const NODE = process.execPath;

/**
 * A credential-named variable handed to the demo with `--env NAME`: its replay lines must name it
 * (`--env SEALMARK_REPLAY_SECRET`) and read it from the environment, and no output may print it.
 */
const SECRET_NAME = 'SEALMARK_REPLAY_SECRET';
const SECRET_VALUE = `rp-${randomBytes(12).toString('hex')}`;
/** The environment of every run (on top of this process's and NO_COLOR). */
const ENV = { [SECRET_NAME]: SECRET_VALUE };

const dir = mkdtempSync(join(tmpdir(), 'sealmark-replay-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A user's data folder for overlay/data-writer.mjs: each of its tools changes it in one way on `{}`. */
const DATA = join(dir, 'data');
mkdirSync(join(DATA, 'cache'), { recursive: true });
writeFileSync(join(DATA, 'notes.txt'), 'first note\n');
writeFileSync(join(DATA, 'cache', 'old.bin'), 'bin\n');
writeFileSync(join(DATA, 'app.log'), 'log\n');

/**
 * A plain variable handed to the demo as `--env NAME=value` (a path, with a quote to shell-quote):
 * not in {@link ENV}, so its replay lines must carry the value (`--env 'NAME=…'`); a bare `--env
 * NAME` would take it from the replaying shell, where it is not set.
 */
const PLAIN_ENV = `SEALMARK_REPLAY_FILE_PATH=${join(dir, "it's", 'memory.jsonl')}`;

/** Runs `node bin/sealmark.js …args`, or a shell line, from the repository root. */
const run = (args: string[], opts: { shell?: string } = {}): Promise<CliRun> => runCli(args, { ...opts, env: ENV });

/**
 * A server that answers a tools/call of ANY name with a success result, so that protocol-errors'
 * unknown-tool probe succeeds: `unknown-tool-succeeded` is a protocol-errors finding on a
 * tools/call, so it gets a replay line. (No fixture under test/fixtures does this.)
 */
const ANY_TOOL = join(dir, 'any-tool.mjs');
writeFileSync(
  ANY_TOOL,
  `import { serve, ok, text, STRTOOL, validEcho } from ${JSON.stringify(pathToFileURL(fixture('adversarial/lib.mjs')).href)};\n` +
    `serve({ name: 'any-tool', tools: [STRTOOL], anyTool: true, call: (m) => ok(m.id, m.params.name === 'echo' ? validEcho(m.params.arguments) : text('ran ' + m.params.name)) });\n`,
);

// --- the audits ----------------------------------------------------------------------------------

interface AuditSpec {
  /** The server command after `--` (absent: `--demo`). */
  server?: string[];
  /** Written to a config file and given as `--config <file>` (the replay must name it too). */
  config?: Record<string, unknown>;
  flags?: string[];
}

/** As few audits as cover every check that produces replayable findings. */
const AUDITS = {
  // robust-input, default-call-effects, bounded-limits (zero-unlimited), oversized-input, secret-echo;
  // with --env, so that every demo replay carries `--env SEALMARK_REPLAY_SECRET` (a credential: by
  // name) and `--env 'SEALMARK_REPLAY_FILE_PATH=…'` (a path: with its value, quoted).
  demo: { flags: ['--env', SECRET_NAME, '--env', PLAIN_ENV] },
  // bounded-limits' raw JSON probes: `{"seconds":NaN}` admitted, replayed with --raw-args.
  nan: { server: ['python3', fixture('limits/c5_wait_nan.py')] },
  // filler-call-effects (approved_by_user: true executes) and two-step-writes (a made-up proposal executes).
  anyProposal: { server: [NODE, fixture('design/execute_any_proposal.mjs')] },
  // annotations: a read-only tool that writes a file, through a probes: entry (replay: --config).
  readonlyWriter: {
    server: [NODE, fixture('design/readonly_writer.mjs')],
    config: { probes: [{ tool: 'replace_symbol', arguments: { file: 'a.txt', symbol: 'x', replacement: 'y' } }] },
  },
  // idempotency-key: the same valid call twice, two effects (replay: --config).
  mailer: {
    server: [NODE, fixture('design/mailer_twice.mjs')],
    config: { probes: [{ tool: 'send_message', arguments: { inbox: 'ops', to: ['a@example.invalid'], subject: 's', text: 't' } }] },
  },
  // tool-schemas: structuredContent that contradicts outputSchema (case C15).
  outputSchema: { server: [NODE, fixture('c15-output-schema.mjs')] },
  // concurrency: every call of the burst answered twice.
  doubleReply: { server: [NODE, fixture('limits/double_reply.mjs')] },
  // protocol-errors: a tools/call of a tool that does not exist succeeds.
  unknownTool: { server: [NODE, ANY_TOOL] },
  // secret-echo, the argument canary: login quotes its arguments, password included.
  echoPassword: { server: [NODE, fixture('secrets/echo_password.mjs')] },
  // strict-arguments: a call without `arguments` refused by a zero-argument read tool.
  strict: { server: [NODE, fixture('strict/strict-arguments.mjs')] },
  // default-call-effects, a network effect read from the reply: an in-process fetch the namespace
  // refused, which no proxy sees (issue 14: the replay printed "0 side effects seen").
  remoteFetch: { server: [NODE, fixture('effects/remote-fetch-default.mjs')] },
  // default-call-effects on writes to the user's data by absolute path, one finding per kind of
  // write seen through the overlay (changed, created, removed, renamed, and a late one).
  dataWriter: {
    server: [NODE, fixture('overlay/data-writer.mjs'), '--data', DATA],
    config: { checks: { ...LATER_PACKS_OFF, 'robust-input': { enabled: false }, 'strict-arguments': { enabled: false }, 'protocol-errors': { enabled: false } } },
  },
} satisfies Record<string, AuditSpec>;
type AuditKey = keyof typeof AUDITS;

const reports = {} as Record<AuditKey, Report>;
const configFiles: Partial<Record<AuditKey, string>> = {};

async function auditOne(key: AuditKey): Promise<void> {
  const spec: AuditSpec = AUDITS[key];
  const out = join(dir, `${key}.json`);
  const args = ['audit', '--format', 'json', '--output', out];
  if (spec.config) {
    const file = join(dir, `${key}.config.json`);
    writeFileSync(file, JSON.stringify(spec.config));
    configFiles[key] = file;
    args.push('--config', file);
  }
  args.push(...(spec.flags ?? []));
  args.push(...(spec.server ? ['--', ...spec.server] : ['--demo']));
  const r = await run(args);
  // 0 or 1 (the grade gate); never a usage error (2) or a target that could not be audited (3).
  if (r.code !== 0 && r.code !== 1) throw new Error(`audit ${key} exited ${String(r.code)}: ${r.stderr}`);
  const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
  if (report.status !== 'audited') throw new Error(`audit ${key}: ${report.status}`);
  reports[key] = report;
}

beforeAll(async () => {
  if (!existsSync(join(root, 'dist', 'cli.js'))) throw new Error('dist/ is missing: run `npx tsc -p .` (npm test builds first)');
  // Two at a time: each audit is a CLI start plus a server, and the machine is shared.
  const queue = Object.keys(AUDITS) as AuditKey[];
  const worker = async () => {
    for (let key = queue.shift(); key; key = queue.shift()) await auditOne(key);
  };
  await Promise.all([worker(), worker()]);
}, 240_000);

// --- the cases -----------------------------------------------------------------------------------

interface Case {
  check: string;
  audit: AuditKey;
  /** The messageId of the first replayable finding of `check` in that audit (that `pick` accepts). */
  messageId: string;
  pick?: (f: Finding) => boolean;
  /** An effect finding: what it quotes from the effect log must show in the replay too. */
  effect?: boolean;
  /** More to compare for this case. */
  extra?: (replay: Replayed, call: ReportCall, f: Finding) => void;
}

const CASES: Case[] = [
  { check: 'robust-input', audit: 'demo', messageId: 'internal-error' },
  {
    check: 'strict-arguments',
    audit: 'strict',
    messageId: 'refused-no-arguments',
    // The replay omits --args, so `call` sends params without `arguments`, as the probe did.
    extra: ({ line }) => expect(line).not.toContain('--args'),
  },
  { check: 'default-call-effects', audit: 'demo', messageId: 'effect', effect: true },
  {
    check: 'default-call-effects',
    audit: 'remoteFetch',
    messageId: 'effect',
    effect: true,
    extra: ({ effects }) => expect(effects.map(([k, d]) => `${k}: ${d.replace(/:.*/, ':')}`)).toEqual(['network: the reply reports a failed connection:']),
  },
  // Findings drawn from more than one call replay their first: here count 0 (count 1 is the second).
  { check: 'bounded-limits', audit: 'demo', messageId: 'zero-unlimited' },
  { check: 'bounded-limits', audit: 'nan', messageId: 'admitted', pick: (f) => f.replay!.includes(' --raw-args ') },
  { check: 'oversized-input', audit: 'demo', messageId: 'internal-error' },
  {
    check: 'secret-echo',
    audit: 'demo',
    messageId: 'env-canary',
    extra: ({ stdout }, call) => {
      // Found again, under the same names, and redacted where the reply quotes them.
      for (const s of call.secrets ?? []) if (s.kind !== 'pattern') expect(stdout).toContain(`[redacted:${s.name}]`);
      expect(call.secrets?.map((s) => s.name)).toEqual(expect.arrayContaining(['SEALMARK_CANARY_TOKEN', 'SEALMARK_CANARY_API_KEY', SECRET_NAME]));
    },
  },
  // (A file created during its call is write_tmp's, whose name holds the server's pid; debounced_save's below is created late.)
  ...(['changed', 'removed', 'renamed'] as const).map(
    (action): Case => ({
      check: 'default-call-effects',
      audit: 'dataWriter',
      messageId: 'effect',
      effect: true,
      // The first write of that kind that arrived during its call (append_note, delete_cache, rotate_log).
      pick: (f) => f.evidence.quotes?.[0]?.startsWith(`${action} `) === true && !f.message.endsWith('(after the reply)'),
      extra: ({ effects }) => expect(effects.map(([k, d]) => `${k}: ${d.split(' ')[0]}`)).toEqual([`file: ${action}`]),
    }),
  ),
  {
    check: 'default-call-effects',
    audit: 'dataWriter',
    messageId: 'effect',
    effect: true,
    // debounced_save writes 400 ms after its reply: the replay shows it late, as the audit did.
    pick: (f) => f.tool === 'debounced_save',
    extra: ({ effects, late }, call) => {
      expect(call.effects!.map((e) => e.lateMs !== undefined)).toEqual([true]);
      expect(effects.map(([, d]) => d)).toEqual([`created ${DATA}/saved.json`]);
      expect(late).toEqual([`created ${DATA}/saved.json`]);
    },
  },
  { check: 'filler-call-effects', audit: 'anyProposal', messageId: 'effect', effect: true },
  // refunds.log: changed in the audit (the filler call had created it), created in the replay (see sameWrite).
  { check: 'two-step-writes', audit: 'anyProposal', messageId: 'made-up-proposal-accepted', effect: true },
  { check: 'annotations', audit: 'readonlyWriter', messageId: 'read-only-effect', effect: true },
  // The name says a write and a call wrote: behaviour confirms the name, so tool-naming fails and replays.
  { check: 'tool-naming', audit: 'readonlyWriter', messageId: 'confirmed', effect: true },
  // The first of the two identical calls; the audit saw it change ./outbox.log (created by an
  // earlier call of the run), the replay's empty scratch directory sees it created (see sameWrite).
  { check: 'idempotency-key', audit: 'mailer', messageId: 'double-effect', effect: true },
  {
    check: 'tool-schemas',
    audit: 'outputSchema',
    messageId: 'structured-content-mismatch',
    extra: ({ reply }, call) => {
      const structured = (r: unknown) => (r as { result?: { structuredContent?: unknown } }).result?.structuredContent;
      expect(structured(call.reply.raw)).toBeDefined();
      expect(structured(reply)).toEqual(structured(call.reply.raw));
    },
  },
  // One call of the burst, replayed alone: the same request and class; the second answer itself
  // needs the burst and cannot show in a single call.
  { check: 'concurrency', audit: 'doubleReply', messageId: 'duplicate' },
  {
    check: 'protocol-errors',
    audit: 'unknownTool',
    messageId: 'unknown-tool-succeeded',
    // The probe sends {"name":"sealmark_no_such_tool","arguments":{}}: the replay must keep `--args '{}'`.
  },
  {
    check: 'secret-echo',
    audit: 'echoPassword',
    messageId: 'argument-canary',
    // The report shows the canary redacted; `call` sends its own canary in the placeholder's place.
  },
];

interface Replayed extends CliRun {
  line: string;
  sent: string | undefined;
  cls: string | undefined;
  /** The JSON-RPC reply `call` printed, parsed. */
  reply: unknown;
  /** `effect   kind: detail` lines, as [kind, detail]. */
  effects: [string, string][];
  /** The details of the effect lines marked late (`(late: N ms after the reply)`). */
  late: string[];
  secrets: string[];
}

/** The request with its JSON-RPC id set to 0 (a replay numbers its one request afresh). */
const withoutId = (request: string | undefined) => request?.replace(/^\{"jsonrpc":"2\.0","id":\d+,/, '{"jsonrpc":"2.0","id":0,');

/**
 * An effect's detail, with a file's `created` and `changed` made one word: an audit quotes
 * `changed ./outbox.log` when an earlier call of the same run had created the file, while a replay
 * starts from an empty scratch directory and sees it `created`. The file is the effect.
 */
const sameWrite = (detail: string) => detail.replace(/^(created|changed) (?=\S)/, 'wrote ');

async function replay(line: string): Promise<Replayed> {
  const r = await run([], { shell: line });
  const field = (name: string) => new RegExp(`^${name} +(.*)$`, 'm').exec(r.stdout)?.[1];
  const replyText = field('reply');
  let reply: unknown;
  try {
    reply = replyText === undefined ? undefined : JSON.parse(replyText);
  } catch {
    reply = replyText;
  }
  // A write seen through the overlay ends with its summary in parentheses (sizes, first change): the file is the effect.
  const lines = [...r.stdout.matchAll(/^effect {3}([^:]+): (.*?)(?: \((?:\d+ bytes?|\d+ → \d+ bytes[^)]*|a folder|an empty folder|a file it had made|a link to [^)]*)\))?( \(late: \d+ ms after the reply\))?$/gm)];
  const effects = lines.map((m): [string, string] => [m[1]!, m[2]!]);
  const late = lines.filter((m) => m[3] !== undefined).map((m) => m[2]!);
  const secrets = [...r.stdout.matchAll(/^secret {3}(.*)$/gm)].map((m) => m[1]!);
  return { ...r, line, sent: field('sent'), cls: field('class'), reply, effects, late, secrets };
}

/** The first replayable finding of the case's check (that its `pick` accepts), and its first evidence call. */
function findingOf(c: Case): { f: Finding; call: ReportCall; report: Report } {
  const report = reports[c.audit];
  const check = report.checks.find((x) => x.id === c.check);
  if (!check) throw new Error(`${c.check} not in the ${c.audit} report`);
  const f = check.findings.find((x) => x.replay && (c.pick?.(x) ?? true));
  if (!f) throw new Error(`no ${c.check} finding with a replay in the ${c.audit} audit`);
  const call = report.calls.find((x) => x.seq === f.evidence.calls?.[0]);
  if (!call) throw new Error(`the ${c.check} finding's first evidence call is not in the ${c.audit} report`);
  return { f, call, report };
}

/** The replay line the finding should carry: derived from the call it quotes, not from replayLine. */
function expectedLine(c: Case, call: ReportCall, report: Report): string {
  const flags = [...(configFiles[c.audit] ? ['--config', configFiles[c.audit]!] : []), ...((AUDITS[c.audit] as AuditSpec).flags ?? [])];
  const args =
    call.rawArguments !== undefined
      ? ['--raw-args', call.rawArguments]
      : (() => {
          const params = (JSON.parse(call.request) as { params: { arguments?: unknown } }).params;
          return 'arguments' in params ? ['--args', JSON.stringify(params.arguments)] : [];
        })();
  return ['sealmark', 'call', ...flags, '--tool', call.tool!, ...args, '--', ...report.target.command].map((w, i) => (i < 2 ? w : shellQuote(w))).join(' ');
}

async function expectReproduces(c: Case): Promise<void> {
  const { f, call, report } = findingOf(c);
  expect(f.messageId).toBe(c.messageId);
  expect([call.method, typeof call.tool]).toEqual(['tools/call', 'string']);
  // The line quotes the call: its tool, its arguments (raw text for raw probes), the flags the server needed.
  expect(f.replay).toBe(expectedLine(c, call, report));
  expect(f.request).toBe(call.request);

  const r = await replay(f.replay!);
  expect(r.code, `${r.line}\n${r.stderr}`).toBe(0);
  // The same bytes on the wire (ids aside) and the same reply class.
  expect(withoutId(r.sent), r.stdout).toBe(withoutId(call.request));
  expect(call.class, 'the audit classified the call').toBeDefined();
  expect(r.cls, r.stdout).toBe(call.class);
  // The same leaks.
  for (const l of call.leaks ?? []) expect(r.stdout).toContain(`leak     ${l.pattern}: ${l.line}`);
  // The same effects, when the audit watched the call for them (effects pack, design pack, sandboxed calls).
  if (call.effects) {
    const norm = (e: [string, string][]) => e.map(([k, d]) => `${k}: ${sameWrite(d)}`).sort();
    expect(norm(r.effects), r.stdout).toEqual(norm(call.effects.map((e): [string, string] => [e.kind, e.detail])));
  }
  if (c.effect) {
    // What the finding quotes from the effect log (a shim line, a file) the replay saw too.
    expect(f.evidence.quotes?.length).toBeGreaterThan(0);
    for (const q of f.evidence.quotes!) expect(r.effects.map(([, d]) => sameWrite(d))).toContain(sameWrite(q));
  }
  // The same secrets found, under their names; none printed in clear.
  expect([...r.secrets].sort(), r.stdout).toEqual((call.secrets ?? []).map((s) => `${s.kind} ${s.name} in the ${s.where}`).sort());
  for (const out of [r.stdout, r.stderr]) {
    expect(out).not.toMatch(/smk_env_[0-9a-f]{24}|smk_arg_[0-9a-f]{24}/);
    expect(out).not.toContain(SECRET_VALUE);
  }
  c.extra?.(r, call, f);
}

describe('a replay line reproduces its finding: same request, same reply class, same effects and secrets', () => {
  for (const c of CASES) {
    const title = `${c.check}: ${c.messageId} (${c.audit})${c.check === 'bounded-limits' && c.pick ? ', a --raw-args replay' : ''}`;
    it(title, () => expectReproduces(c));
  }
});

describe('the --env flags of a replay line', () => {
  it('a path is written with its value, shell-quoted; a credential-named variable by its name only', () => {
    const lines = reports.demo.checks.flatMap((c) => c.findings).map((f) => f.replay).filter((l): l is string => l !== undefined);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(line).toContain(` --env ${SECRET_NAME} --env ${shellQuote(PLAIN_ENV)} `);
      expect(line).toContain(`--env 'SEALMARK_REPLAY_FILE_PATH=${dir}/it'\\''s/memory.jsonl'`);
      expect(line).not.toContain(SECRET_VALUE);
    }
  });
});

describe('a replay that cannot reach its server', () => {
  it('says no call was made (exit 3), not that a target could not be audited', async () => {
    const r = await run(['call', '--url', 'http://127.0.0.1:1/mcp', '--raw-params', '[]']);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe('sealmark: no call was made: cannot connect to http://127.0.0.1:1/mcp: bad port\n');
    expect(r.stdout).toBe('');
  });
});

describe('the cases cover every replayable check', () => {
  it('the checks covered here are exactly those whose findings carried a replay in these audits', () => {
    const replayable = new Set(Object.values(reports).flatMap((r) => r.checks.filter((c) => c.findings.some((f) => f.replay)).map((c) => c.id)));
    expect([...new Set(CASES.map((c) => c.check))].sort()).toEqual([...replayable].sort());
  });

  it('a finding without a replay had nothing to replay: no call, not a tools/call of a named tool, or a request too long to replay (cut)', () => {
    const unexplained: string[] = [];
    let cut = 0;
    for (const [key, report] of Object.entries(reports)) {
      for (const check of report.checks) {
        for (const f of check.findings) {
          if (f.replay) continue;
          const call = report.calls.find((x) => x.seq === f.evidence.calls?.[0]);
          if (!call || call.method !== 'tools/call' || !call.tool) continue;
          // MAX_REQUEST_CHARS (4096) and an ellipsis: the start of the request only.
          if (f.request?.length === 4097 && f.request.endsWith('…')) {
            cut++;
            continue;
          }
          unexplained.push(`${key} ${check.id} ${f.messageId}: ${f.request ?? call.request}`);
        }
      }
    }
    expect(unexplained).toEqual([]);
    // The demo's 100,000-item array to get_note (an oversized-input finding) is one of them.
    const ov = reports.demo.checks.find((c) => c.id === 'oversized-input')!.findings.filter((f) => !f.replay);
    expect(ov.length).toBeGreaterThan(0);
    expect(ov.every((f) => f.request?.endsWith('…'))).toBe(true);
    expect(cut).toBeGreaterThanOrEqual(ov.length);
  });

  it('protocol-errors findings on other methods carry no replay (the concurrency burst left a stray answer)', () => {
    const pe = reports.doubleReply.checks.find((c) => c.id === 'protocol-errors')!;
    expect(pe.findings.map((f) => f.messageId)).toEqual(['stray-response']);
    expect(pe.findings.every((f) => f.replay === undefined)).toBe(true);
  });
});
