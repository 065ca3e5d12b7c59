/**
 * sealmark against the published reference servers, pinned in package.json:
 * @modelcontextprotocol/server-everything, server-filesystem and server-memory 2026.8.31, all on
 * @modelcontextprotocol/sdk 1.32.2 (SPEC sections 4–6).
 *
 * Every verdict asserted below was checked against the real replies (report.calls and the
 * transcript): the comment next to each assertion says what the server actually answered and why
 * that earns the verdict. Each server gets ONE standard run (default config, so `standard: true`);
 * it takes ~12 s because the SDK 1.x servers silently drop a tools/call whose params are an array,
 * and protocol-errors waits the full 10 s hang limit for it once. The three runs go in parallel.
 * A second, fast run per server adds valid `probes:` calls (with protocol-errors disabled, which
 * keeps the run standard: neither key is locked) to exercise outputSchema conformance, coverage
 * and the filesystem server's confinement.
 *
 * Surprises are replayed by fixtures under test/fixtures/servers/real-*.mjs (last describe block).
 */
import { INVALID_PROBES } from '../../src/checks/robust-input.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { audit } from '../../src/audit.js';
import { audit as libraryAudit } from '../../src/index.js';
import { classifyReply } from '../../src/classify.js';
import { configRegistry } from '../../src/config/defaults.js';
import { parseConfig } from '../../src/config/schema.js';
import type { Report, ReportCall } from '../../src/report/build.js';
import { checkById } from '../../src/checks/index.js';
import { LATER_PACKS_OFF, auditFixture, checkOf, findingsOf, graded, root } from '../helpers/run.js';

// --- helpers ------------------------------------------------------------------------------------

const PKG = join(root, 'node_modules', '@modelcontextprotocol');
const entry = (pkg: string) => join(PKG, pkg, 'dist', 'index.js');
const CORE = ['handshake', 'robust-input', 'strict-arguments', 'protocol-errors', 'tool-schemas'];
/** robust-input's schema-invalid probes (src/checks/robust-input.ts INVALID_PROBES). */
const INVALID = INVALID_PROBES;
const MARKER_VAR = 'SEALMARK_E2E_MARKER';

interface Proc {
  pid: number;
  state: string;
  cmd: string;
}

/** Processes (Linux /proc) started for this run: the marker in their environment, or cwd under `dir`. */
function processesOf(dir: string): Proc[] {
  if (process.platform !== 'linux') return [];
  const out: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${name}/environ`, 'latin1');
      let cwd = '';
      try {
        cwd = readlinkSync(`/proc/${name}/cwd`);
      } catch {
        // no cwd to read
      }
      if (!environ.includes(`${MARKER_VAR}=${dir}\0`) && !cwd.startsWith(dir)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '?';
      out.push({ pid: Number(name), state, cmd: readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0').join(' ').trim() });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

/** Every path under `dir`, relative, sorted. */
function tree(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).map(String).sort();
}

interface Run {
  report: Report;
  /** The folder the server was confined to / started in. */
  dir: string;
  /** Tree of `home` (the run's whole temp folder) before and after. */
  before: string[];
  after: string[];
  /** Server processes seen while the audit ran, and those left after it returned. */
  seen: Proc[];
  leftover: Proc[];
  /** Every JSON-RPC message both ways (the report truncates replies past 4 KiB). */
  transcript: { dir: 'send' | 'recv'; instance?: number; message: Record<string, unknown> }[];
  ms: number;
}

interface RunSpec {
  args: (dir: string) => string[];
  env?: (dir: string) => Record<string, string>;
  raw?: Record<string, unknown> | ((dir: string) => Record<string, unknown>);
  /** Prepares the temp folder before the audit (home = the run's temp folder, dir = the server's). */
  setup?: (home: string, dir: string) => void;
  useLibraryEntry?: boolean;
}

/** Temp folders made by {@link run}, removed after the file. */
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

async function run(name: string, spec: RunSpec): Promise<Run> {
  const home = realpathSync(mkdtempSync(join(tmpdir(), `sealmark-e2e-${name}-`)));
  made.push(home);
  const dir = join(home, 'allowed');
  mkdirSync(dir);
  spec.setup?.(home, dir);
  const transcriptDir = realpathSync(mkdtempSync(join(tmpdir(), `sealmark-e2e-transcript-`)));
  made.push(transcriptDir);
  const transcriptPath = join(transcriptDir, `${name}.jsonl`);
  const before = tree(home);
  const seen = new Map<number, Proc>();
  const raw = typeof spec.raw === 'function' ? spec.raw(dir) : (spec.raw ?? {});
  const started = Date.now();
  const report = await (spec.useLibraryEntry ? libraryAudit : audit)({
    command: process.execPath,
    args: spec.args(dir),
    env: { [MARKER_VAR]: home, ...(spec.env?.(dir) ?? {}) },
    cwd: dir,
    transcriptPath,
    config: parseConfig(raw, configRegistry()),
    onProgress: () => {
      if (seen.size === 0) for (const p of processesOf(home)) seen.set(p.pid, p);
    },
  });
  const ms = Date.now() - started;
  const transcript = readFileSync(transcriptPath, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Run['transcript'][number]);
  return { report, dir, before, after: tree(home), seen: [...seen.values()], leftover: processesOf(home), transcript, ms };
}

/** The raw JSON-RPC reply of a call (fails on a reply the report truncated). */
function rawOf(c: ReportCall): { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } } {
  expect(typeof c.reply.raw, `reply of call #${c.seq} was truncated`).toBe('object');
  return c.reply.raw as never;
}
/** The first text content of a tools/call result. */
function textOf(c: ReportCall): string {
  const content = rawOf(c).result?.content as { text?: string }[] | undefined;
  return content?.[0]?.text ?? '';
}
const toolCalls = (r: Report) => r.calls.filter((c) => c.method === 'tools/call' && c.tool !== undefined);
/** The effects pack's calls (made in the sandbox): `[probe, tool, arguments, effects]`, in order. */
const effectCalls = (r: Report) =>
  toolCalls(r)
    .filter((c) => c.probe === 'default-call' || c.probe === 'filler-call')
    .map((c) => [c.probe, c.tool, JSON.parse(c.request).params.arguments, c.effects ?? []] as const);
/** Effects-pack verdicts by check id. */
const EFFECTS = ['armed-flags', 'default-call-effects', 'filler-call-effects', 'hidden-params'];
const effectVerdicts = (r: Report) => Object.fromEntries(r.checks.filter((c) => EFFECTS.includes(c.id)).map((c) => [c.id, c.verdict]));
const invalidCalls = (r: Report) => toolCalls(r).filter((c) => INVALID.has(c.probe));
/** Core verdicts by check id (a disabled check is absent from the report, and from this). */
const verdicts = (r: Report) => Object.fromEntries(r.checks.filter((c) => CORE.includes(c.id)).map((c) => [c.id, c.verdict]));
const gradedAll = (r: Report) => Object.fromEntries(CORE.map((id) => [id, graded(r, id)]));
const classCounts = (calls: ReportCall[]) => calls.reduce<Record<string, number>>((m, c) => ({ ...m, [c.class ?? '-']: (m[c.class ?? '-'] ?? 0) + 1 }), {});

/** The full tools/list result, from the transcript. */
function listedTools(r: Run): { name: string; inputSchema: { properties?: Record<string, unknown> }; outputSchema?: unknown }[] {
  const msg = r.transcript.find((t) => t.dir === 'recv' && Array.isArray((t.message.result as { tools?: unknown } | undefined)?.tools));
  return (msg!.message.result as { tools: never[] }).tools;
}

/**
 * Re-reads every schema-invalid call's reply with the classifier and compares the parameters it
 * names with those the zod issue text names (`… at <param>` or `at <param>[0].field`).
 */
function namedCheck(r: Run): { seq: number; tool: string; probe: string; cls: string; named: string[]; zod: string[] }[] {
  const tools = listedTools(r);
  return invalidCalls(r.report).map((c) => {
    const declared = Object.keys(tools.find((t) => t.name === c.tool)?.inputSchema.properties ?? {});
    const raw = rawOf(c);
    const cl = classifyReply({ reply: { kind: 'response', result: raw.result, error: raw.error as never, raw }, declaredParams: declared, protocolVersion: r.report.protocol?.version ?? undefined });
    const zodNames = [...textOf(c).matchAll(/ at ([A-Za-z_$][\w$]*)/g)].map((m) => m[1]!);
    return { seq: c.seq, tool: c.tool!, probe: c.probe, cls: cl.class, named: cl.named, zod: declared.filter((d) => zodNames.includes(d)) };
  });
}

/** The protocol-errors calls, in order: probe → what came back. */
function protocolCalls(r: Report) {
  const first = r.calls.findIndex((c) => c.probe === 'unknown-method');
  return r.calls.slice(first).map((c) => ({ probe: c.probe, method: c.method, kind: c.reply.kind, raw: c.reply.raw as Record<string, unknown> | undefined, request: c.request }));
}

/** Assertions shared by every standard run: what the SDK 1.32.2 protocol layer answers. */
function expectSdk1ProtocolBehaviour(r: Report) {
  const p = protocolCalls(r);
  // sealmark/no-such-method → {"code":-32601,"message":"Method not found"}: exactly JSON-RPC 5.1.
  expect(p[0]).toMatchObject({ probe: 'unknown-method', kind: 'response', raw: { error: { code: -32601, message: 'Method not found' } } });
  // Both notifications were ignored; the ping after each was answered {} (server alive, nothing stray).
  expect(p.filter((c) => c.probe === 'notification-follow-up').map((c) => [c.method, c.raw?.result])).toEqual([
    ['ping', {}],
    ['ping', {}],
  ]);
  // tools/call of sealmark_no_such_tool → an isError RESULT (SDK 1.21+ wraps McpError -32602):
  // an error a client sees as such, so protocol-errors accepts it.
  const unknownTool = p.find((c) => c.probe === 'unknown-tool')!;
  expect(unknownTool.raw?.result).toEqual({ content: [{ type: 'text', text: 'MCP error -32602: Tool sealmark_no_such_tool not found' }], isError: true });
  // tools/call with "params":[] → NO reply at all within 10 s (the SDK's JSONRPCMessageSchema rejects
  // the message in the transport and drops it); the tools/list right after is answered, so the
  // server lives: a dropped request, which the check grades partial ("no-reply"), not a crash.
  const arrayAt = p.findIndex((c) => c.probe === 'array-params');
  expect(p[arrayAt]!.request).toContain('"params":[]');
  expect(p[arrayAt]!.kind).toBe('hang');
  expect(p[arrayAt + 1]).toMatchObject({ probe: 'liveness', method: 'tools/list', kind: 'response' });
  const [noReply] = findingsOf(r, 'protocol-errors', 'no-reply');
  expect(noReply!.level).toBe('partial');
  expect(noReply!.data.probe).toBe('array-params');
  expect(noReply!.data.ms as number).toBeGreaterThanOrEqual(10_000);
  // SPEC section 5: the finding an SDK causes names it, read from the server's package, and replays.
  expect(r.target.sdk).toEqual([{ name: '@modelcontextprotocol/sdk', version: '1.32.2', from: 'package' }]);
  // Named because the reply (none) is the one the SDK's table row records for array params (sdk.ts).
  expect(noReply!.sdkCause).toEqual({ sdk: '@modelcontextprotocol/sdk', version: '1.32.2', dependency: '@modelcontextprotocol/sdk' });
  expect(noReply!.message).toContain("; @modelcontextprotocol/sdk 1.32.2 drops this request unanswered before the server's own code runs, the same on every server on @modelcontextprotocol/sdk 1.32.2; no release of @modelcontextprotocol/sdk is known to answer otherwise");
  // `--env NAME=value` for a plain value (the marker's and MEMORY_FILE_PATH's paths), bare `--env NAME` for a secret.
  expect(noReply!.replay).toMatch(/^sealmark call (--env '?[A-Z0-9_]+(=\S*)? )+--raw-params '\[\]' -- /);
  // Nothing answered a notification and no response carried an unknown id.
  expect(findingsOf(r, 'protocol-errors', 'notification-answered')).toEqual([]);
  expect(findingsOf(r, 'protocol-errors', 'stray-response')).toEqual([]);
}

/** Assertions shared by every standard run: robust-input's liveness checks and the leak scan. */
function expectAliveAndNoLeaks(r: Report) {
  // After every tool's probes, tools/list was answered: the server never stopped answering.
  // (robust-input's liveness checks: those before the protocol probes; later packs judge their own.)
  const protocolStart = r.calls.find((c) => c.probe === 'unknown-method')!.seq;
  const liveness = r.calls.filter((c) => c.probe === 'liveness' && c.seq < protocolStart);
  expect(liveness.length).toBeGreaterThan(0);
  expect(liveness.every((c) => c.reply.kind === 'response')).toBe(true);
  // No reply carried a stack frame, a traceback or a home path with a line number.
  expect(r.calls.filter((c) => c.leaks !== undefined)).toEqual([]);
  // Validation errors are isError results (SEP-1303 style), never JSON-RPC -32602: no advisory note.
  expect(findingsOf(r, 'robust-input', 'sep-1303')).toEqual([]);
  // Not one schema-invalid call was ACCEPTED, and none came back as an internal error or a hang.
  expect(invalidCalls(r).filter((c) => !['rejected', 'rejected-unnamed'].includes(c.class ?? ''))).toEqual([]);
}

/** The run ended every process it started and left nothing behind (SPEC section 3, step 4). */
function expectNoProcessLeft(r: Run) {
  if (process.platform !== 'linux') return;
  // The detection works: the server process was seen while the audit ran …
  expect(r.seen.length).toBeGreaterThanOrEqual(1);
  // … and none of it (nor any child started in its folder) remains, not even as a zombie.
  expect(r.leftover).toEqual([]);
  for (const p of r.seen) expect(existsSync(`/proc/${p.pid}`), `pid ${p.pid} (${p.cmd}) still exists`).toBe(false);
}

// --- the standard runs ----------------------------------------------------------------------------

const runs: Record<'everything' | 'filesystem' | 'memory', Run> = {} as never;

beforeAll(async () => {
  const [everything, filesystem, memory] = await Promise.all([
    run('everything', { args: () => [entry('server-everything'), 'stdio'] }),
    run('filesystem', { args: (dir) => [entry('server-filesystem'), dir] }),
    // The library entry (SPEC section 9) runs this one.
    run('memory', { args: () => [entry('server-memory')], env: (dir) => ({ MEMORY_FILE_PATH: join(dir, 'memory.jsonl') }), useLibraryEntry: true }),
  ]);
  Object.assign(runs, { everything, filesystem, memory });
}, 120_000);

describe('library entry', () => {
  it('src/index.ts exports an audit() that runs the engine the CLI runs, and it audits a real server', () => {
    // `import { audit } from 'sealmark'` is src/index.ts: src/library.ts, which validates the
    // config as the CLI does and then calls src/audit.ts (test/unit/library.test.ts).
    expect(libraryAudit).not.toBe(audit);
    // The memory server's standard run below went through it.
    expect(runs.memory.report.status).toBe('audited');
    expect(runs.memory.report.schemaVersion).toBeGreaterThanOrEqual(1);
  });
});

describe('every standard run', () => {
  it('is a standard run, inside the sandbox', () => {
    for (const [name, r] of Object.entries(runs)) {
      // Default config: every locked threshold at its default.
      expect(r.report.standard, name).toBe(true);
      expect(r.report.nonStandardKeys, name).toEqual([]);
      // The sandbox is on by default: scratch HOME and cwd, and a loopback-only network namespace
      // (the effects verdicts below depend on it: a fetch fails instead of reaching the internet).
      expect(r.report.sandbox, name).toMatchObject({ kind: 'sandbox', network: 'namespace' });
      // ≥ 10 s: the dropped array-params request waits the full hang limit once. (How long a run
      // takes is measured by `npm run bench`, not asserted here.)
      expect(r.ms, name).toBeGreaterThanOrEqual(10_000);
    }
  });

  // strict-arguments on the official SDK servers: the SDK fills a missing `arguments` with {} before
  // zod runs, so a tool that requires nothing answers it and one that requires something refuses it
  // naming the parameter; zod strips undeclared keys, but no listed schema says
  // additionalProperties: false at the root of a read-only tool, so extra-only is never sent.
  it('strict-arguments pass: no-arguments answered where nothing is required, refused where something is; nothing valid sent to a tool that may write', () => {
    const expected = {
      everything: { judged: 8, answered: ['get-env', 'get-resource-links', 'get-resource-reference', 'get-tiny-image'], refused: 4 },
      filesystem: { judged: 14, answered: ['list_allowed_directories'], refused: 13 },
      memory: { judged: 9, answered: ['read_graph'], refused: 8 },
    } as const;
    for (const [name, r] of Object.entries(runs)) {
      const c = checkOf(r.report, 'strict-arguments');
      expect(c.verdict, name).toBe('pass');
      const calls = r.report.calls.filter((x) => x.probe === 'no-arguments');
      for (const x of calls) expect('arguments' in (JSON.parse(x.request) as { params: object }).params, name).toBe(false);
      const want = expected[name as keyof typeof expected];
      expect(calls.filter((x) => x.class === 'accepted').map((x) => x.tool).sort(), name).toEqual([...want.answered]);
      expect(calls.filter((x) => x.class === 'rejected').length, name).toBe(want.refused);
      expect(c.coverage!.judged.length, name).toBe(want.judged);
      // Valid calls (the controls and extra-only) went only to read-only tools.
      const listed = listedTools(r) as { name: string; annotations?: { readOnlyHint?: unknown } }[];
      const readOnly = new Set(listed.filter((t) => t.annotations?.readOnlyHint === true).map((t) => t.name));
      for (const x of r.report.calls.filter((y) => y.probe === 'empty-arguments' || y.probe === 'valid-arguments' || y.probe === 'extra-only')) expect(readOnly.has(x.tool!), `${name} ${x.tool}`).toBe(true);
    }
  });

  it('filesystem and memory leave no process behind', () => {
    expectNoProcessLeft(runs.filesystem);
    expectNoProcessLeft(runs.memory);
  });

  // everything's default calls to toggle-simulated-logging and toggle-subscriber-updates start
  // interval timers, so the server no longer exits when its stdin closes: the close must end it.
  // In the sandbox the shell stays PID 1 of the pid namespace and passes SIGTERM on to the server.
  it('everything leaves no process behind, though its timers keep it from exiting on stdin EOF', () => {
    expectNoProcessLeft(runs.everything);
  });

  it('grades: core 90 % everywhere; effects 75 / 75 / 100 %; limits 66.7 / 50 / 100 %; design 83.3 / 83.3 / 75 %; secrets 0 / 100 / 100 %; overall the mean of the packs', () => {
    // core, each server: handshake 1 + robust-input 1 + strict-arguments 1 + protocol-errors 0.5 + tool-schemas 1 = 4.5 / 5 = 90 %.
    // effects, everything: armed-flags 1 + default-call-effects 0 + filler-call-effects 1 (the filler's
    //   fetch is the `{}` call's: one cause, one finding) + hidden-params 1 = 3 / 4 = 75 %;
    // effects, filesystem: armed-flags 0 + default-call-effects 1 + filler-call-effects 1 + hidden-params 1 = 3 / 4 = 75 %;
    // effects, memory: armed-flags 1 + default-call-effects 1 + hidden-params 1 = 3 / 3 = 100 % (filler-call-effects n/a).
    // limits, everything: bounded-limits 0 + oversized-input 1 + concurrency 1 = 2 / 3 = 66.7 %;
    // limits, filesystem: bounded-limits 0.5 + oversized-input 0 + concurrency 1 = 1.5 / 3 = 50 %;
    // limits, memory: oversized-input 1 + concurrency 1 = 2 / 2 = 100 % (bounded-limits n/a: no count).
    // secrets, everything: secret-echo fails (get-env returns the environment, canaries included): 0 %,
    //   and the grade is capped at D; filesystem and memory: pass, 100 %.
    // design: annotations 1 + tool-naming 1 everywhere (every tool states its hints, the names agree
    //   with them, no read-only tool was seen to act); idempotency-key 0.5 everywhere (tools that
    //   state readOnlyHint and idempotentHint false offer no key: everything's toggles and
    //   simulate-research-query, filesystem's edit_file and move_file, memory's create/add tools);
    //   two-step-writes n/a on everything and filesystem (no irreversible name), 0.5 on memory (the
    //   three delete_ tools act in one step). everything and filesystem 2.5 / 3 = 83.3 %, memory 3 / 4 = 75 %.
    // overall (the mean of the packs as shown): everything (90 + 75 + 66.7 + 83.3 + 0) / 5 = 63 → D
    //   (the D cap does not lower it); filesystem (90 + 75 + 50 + 83.3 + 100) / 5 = 79.66 → 79.7 → C;
    //   memory (90 + 100 + 100 + 75 + 100) / 5 = 93 → A.
    const expected = { everything: [75, 66.7, 83.3, 0, 63, 'D'], filesystem: [75, 50, 83.3, 100, 79.7, 'C'], memory: [100, 100, 75, 100, 93, 'A'] } as const;
    for (const [name, r] of Object.entries(runs)) {
      const [effects, limits, design, secrets, percent, letter] = expected[name as keyof typeof expected];
      expect(r.report.grade.packs.map((p) => [p.pack, p.percent]), name).toEqual([
        ['core', 90],
        ['effects', effects],
        ['limits', limits],
        ['design', design],
        ['secrets', secrets],
      ]);
      expect(r.report.grade.percent, name).toBe(percent);
      expect(r.report.grade.letter, name).toBe(letter);
      expect(r.report.grade.caps, name).toEqual(name === 'everything' ? [{ check: 'secret-echo', letter: 'D' }] : []);
    }
  });
});

describe('sealmark lint on the saved tools/list of each reference server (issue 7)', () => {
  /** The tools of the run's tools/list pages, read from the transcript (the report cuts long replies). */
  function savedListing(r: Run): unknown[] {
    const ids = new Set(r.report.calls.filter((c) => c.probe === 'tools-list').map((c) => (JSON.parse(c.request) as { id: number }).id));
    // The first instance's lines (request ids start again in each instance of the server).
    const pages = r.transcript.filter((m) => m.dir === 'recv' && m.instance === undefined && ids.has(m.message.id as number));
    expect(pages.length, 'tools/list pages in the transcript').toBe(ids.size);
    return pages.flatMap((m) => (m.message.result as { tools: unknown[] }).tools);
  }

  const lintOf = (r: Run): Report => {
    const file = join(r.dir, '..', 'tools-list.json');
    writeFileSync(file, JSON.stringify({ tools: savedListing(r) }));
    const out = join(r.dir, '..', 'lint.json');
    const cli = spawnSync(process.execPath, [join(root, 'bin', 'sealmark.js'), 'lint', file, '--format', 'json', '--output', out], { encoding: 'utf8' });
    expect([0, 1], cli.stderr).toContain(cli.status);
    return JSON.parse(readFileSync(out, 'utf8')) as Report;
  };

  for (const name of ['everything', 'filesystem', 'memory'] as const) {
    it(`${name}: the static findings and verdicts of the live audit, and the dynamic checks n/a with the reason`, () => {
      const live = runs[name].report;
      const linted = lintOf(runs[name]);
      expect(linted.target).toMatchObject({ kind: 'tools-file' });
      expect(linted.tools).toEqual(live.tools);
      const key = (f: { fingerprint: string; level: string; message: string }) => `${f.level} ${f.fingerprint} ${f.message}`;
      let compared = 0;
      for (const c of linted.checks) {
        const l = live.checks.find((x) => x.id === c.id)!;
        if (!checkById(c.id)!.meta.lint) {
          expect(c.verdict, c.id).toBe('n/a');
          expect(c.notes, c.id).toEqual(['a dynamic check: sealmark lint read a saved tools/list; no server was called']);
          continue;
        }
        // A static finding is one with no call behind it: lint must find exactly those (info
        // findings aside: "not repeated" and the like report on calls, made or not).
        const scoredOnly = (fs: typeof l.findings) => fs.filter((f) => f.level !== 'info');
        const staticFindings = l.findings.filter((f) => !f.evidence.calls?.length);
        expect(scoredOnly(c.findings).map(key).sort(), c.id).toEqual(scoredOnly(staticFindings).map(key).sort());
        // Where the live verdict rests on static findings alone, lint gives the same verdict.
        if (staticFindings.length === l.findings.length) {
          expect(c.verdict, c.id).toBe(l.verdict);
          compared++;
        }
      }
      expect(compared, 'checks whose verdicts were compared').toBeGreaterThanOrEqual(4);
    });
  }
});

describe('@modelcontextprotocol/server-everything 2026.8.31', () => {
  const r = () => runs.everything.report;

  it('negotiates 2025-11-25 over the initialize handshake and lists 13 tools', () => {
    // server/discover got -32601 (an SDK 1.x server), so sealmark fell back to initialize; the
    // server answered 2025-11-25, serverInfo {"name":"mcp-servers/everything","version":"2.0.0"}.
    expect(r().protocol).toEqual({ version: '2025-11-25', era: 'legacy', server: { name: 'mcp-servers/everything', version: '2.0.0' } });
    // 12 tools registered at start plus simulate-research-query, registered in oninitialized (the
    // server's notifications/tools/list_changed arrives before the tools/list reply). The sampling,
    // elicitation and roots tools are NOT listed: sealmark declares none of those capabilities.
    expect(r().tools.map((t) => t.name)).toEqual([
      'echo', 'get-annotated-message', 'get-env', 'get-resource-links', 'get-resource-reference', 'get-structured-content',
      'get-sum', 'get-tiny-image', 'gzip-file-as-resource', 'toggle-simulated-logging', 'toggle-subscriber-updates',
      'trigger-long-running-operation', 'simulate-research-query',
    ]);
    const recv = runs.everything.transcript.filter((t) => t.dir === 'recv').map((t) => t.message.method);
    expect(recv).toContain('notifications/tools/list_changed');
  });

  it('core verdicts: handshake pass, robust-input pass, strict-arguments pass, protocol-errors partial, tool-schemas pass', () => {
    expect(verdicts(r())).toEqual({ handshake: 'pass', 'robust-input': 'pass', 'strict-arguments': 'pass', 'protocol-errors': 'partial', 'tool-schemas': 'pass' });
    // handshake: a known version, serverInfo, capabilities.tools, 13 tools, and stdout carried only
    // JSON-RPC ("Starting default (STDIO) server..." goes to stderr).
    // robust-input: all 33 schema-invalid calls came back as isError results and the server stayed up.
    // protocol-errors: only the dropped array-params request is wrong.
    // tool-schemas: 13 draft-07 schemas compile, names match [A-Za-z0-9_.-], one outputSchema compiles.
    expect(gradedAll(r())).toEqual({ handshake: [], 'robust-input': [], 'strict-arguments': [], 'protocol-errors': ['no-reply'], 'tool-schemas': [] });
    expect(r().stderrTail).toContain('Starting default (STDIO) server...');
    expect(findingsOf(r(), 'handshake', 'negotiated')[0]!.message).toBe('negotiated 2025-11-25 (initialize handshake) with mcp-servers/everything 2.0.0');
    expect(checkOf(r(), 'tool-schemas').findings).toEqual([]);
  });

  it('robust-input: every invalid call rejected by zod, naming the parameter the text names', () => {
    const calls = invalidCalls(r());
    // 33 invalid calls, all rejected with the parameter named (simulate-research-query is not probed:
    // next test). None accepted: the listing below is what sealmark read as accepted.
    expect(classCounts(calls)).toEqual({ rejected: 33 });
    expect(calls.filter((c) => c.class === 'accepted').map((c) => `${c.tool}/${c.probe}`)).toEqual([]);
    // The classifier names exactly the parameters zod's "… at <param>" lines name (re-read here from
    // the raw replies): e.g. get-sum's `a` and `b`, ordinary words that need zod's "at a" context.
    for (const n of namedCheck(runs.everything).filter((x) => x.tool !== 'simulate-research-query')) {
      expect(n.cls, `#${n.seq} ${n.tool}/${n.probe}`).toBe('rejected');
      expect(n.named, `#${n.seq} ${n.tool}/${n.probe}`).toEqual(n.zod);
    }
    const nulls = calls.find((c) => c.tool === 'get-sum' && c.probe === 'nulls')!;
    expect(JSON.parse(nulls.request).params.arguments).toEqual({ a: null, b: null });
    expect(rawOf(nulls).result).toEqual({
      content: [{ type: 'text', text: 'MCP error -32602: Input validation error: Invalid arguments for tool get-sum: Invalid input: expected number, received null at a\nInvalid input: expected number, received null at b' }],
      isError: true,
    });
    // The enum is enforced too: 12345 for messageType is "Invalid option: expected one of …".
    const enumCall = calls.find((c) => c.tool === 'get-annotated-message' && c.probe === 'wrong-types')!;
    expect(textOf(enumCall)).toBe('MCP error -32602: Input validation error: Invalid arguments for tool get-annotated-message: Invalid option: expected one of "error"|"success"|"debug" at messageType\nInvalid input: expected boolean, received number at includeImage');
    expectAliveAndNoLeaks(r());
  });

  it('robust-input: simulate-research-query is not probed (it must be called as a task)', () => {
    // The listing says "execution":{"taskSupport":"required"}: the server must refuse every plain
    // tools/call before it reads the arguments (MCP 2025-11-25 tasks), so a rejection would say
    // nothing about validation. sealmark lists the tool as skipped and sends it nothing.
    expect(toolCalls(r()).filter((c) => c.tool === 'simulate-research-query')).toEqual([]);
    const skipped = findingsOf(r(), 'robust-input', 'skipped').filter((f) => f.tool === 'simulate-research-query');
    expect(skipped).toHaveLength(1);
    expect(skipped[0]!.message).toMatch(/must be called as a task/);
    // The two toggles take no arguments and are not read-only: never called, listed as needing a probe.
    expect(findingsOf(r(), 'robust-input', 'needs-probe').map((f) => f.tool)).toEqual(['toggle-simulated-logging', 'toggle-subscriber-updates']);
    expect(checkOf(r(), 'robust-input').needsProbe).toEqual(['toggle-simulated-logging', 'toggle-subscriber-updates']);
    expect(new Set(checkOf(r(), 'robust-input').findings.map((f) => f.messageId))).toEqual(new Set(['skipped', 'needs-probe']));
  });

  it('coverage: the tools called validly and answered without error are exercised', () => {
    // get-env and get-tiny-image declare readOnlyHint: true and no arguments: `{}` is a valid call
    // (robust-input's read-only-no-args). The toggles and the resource tools require nothing either:
    // the effects pack's `{}` call to them (and strict-arguments' `{}` control) is valid too, and was
    // answered (SPEC section 1: any valid call answered without error).
    expect(r().coverage.level).toBe('exercised');
    expect(r().coverage.tools.filter((t) => t.level === 'exercised').map((t) => t.name)).toEqual(['get-env', 'get-resource-links', 'get-resource-reference', 'get-tiny-image', 'toggle-simulated-logging', 'toggle-subscriber-updates']);
    const env = toolCalls(r()).find((c) => c.tool === 'get-env')!;
    expect(env.class).toBe('accepted');
    // get-env prints the server's whole environment: it shows the environment was scrubbed. The
    // marker we passed is there, the test runner's own VITEST variable is not.
    const printed = JSON.parse(textOf(env)) as Record<string, string>;
    expect(printed[MARKER_VAR]).toBe(realpathSync(join(runs.everything.dir, '..')));
    expect(printed).toHaveProperty('PATH');
    expect(printed).not.toHaveProperty('VITEST');
    // PATH entries like /root/.cargo/bin:/usr/bin are a bare home path: no ":line" suffix, no leak.
    expect(env.leaks).toBeUndefined();
  });

  it('protocol-errors partial: the SDK drops array params; everything else is answered correctly', () => {
    expectSdk1ProtocolBehaviour(r());
    expect(graded(r(), 'protocol-errors')).toEqual(['no-reply']);
  });

  it('leaves its temp folder empty', () => {
    // Every robust-input probe was rejected before any tool ran, and the effects calls ran with the
    // sandbox's scratch HOME and cwd (gzip-file-as-resource's fetch failed, see below): nothing was
    // written here (no gzip resource, no file).
    expect(runs.everything.after).toEqual(runs.everything.before);
  });

  it('effects: the {} and filler calls to gzip-file-as-resource try the network, one cause and so one failed check; nothing else has an effect', () => {
    expect(effectVerdicts(r())).toEqual({ 'armed-flags': 'pass', 'default-call-effects': 'fail', 'filler-call-effects': 'pass', 'hidden-params': 'pass' });
    // Who was called: `{}` to every tool with no required argument (get-env, get-tiny-image, the two
    // toggles) and to every tool with a flagged property, which also got a filler call. The flagged
    // properties here are all plain declared defaults. echo, get-sum and get-structured-content need
    // an argument and flag nothing: not called; simulate-research-query must be called as a task.
    const calls = effectCalls(r());
    expect(calls.map(([probe, tool]) => `${probe} ${tool}`)).toEqual([
      'default-call get-annotated-message', 'filler-call get-annotated-message', 'default-call get-env',
      'default-call get-resource-links', 'filler-call get-resource-links', 'default-call get-resource-reference',
      'filler-call get-resource-reference', 'default-call get-tiny-image', 'default-call gzip-file-as-resource',
      'filler-call gzip-file-as-resource', 'default-call toggle-simulated-logging', 'default-call toggle-subscriber-updates',
      'default-call trigger-long-running-operation', 'filler-call trigger-long-running-operation',
    ]);
    // default-call-effects FAIL is right (SPEC 5, effects: any network attempt during a `{}` call
    // fails it): gzip-file-as-resource's `data` defaults to a raw.githubusercontent.com URL, so `{}`
    // makes the server fetch it. In the sandbox's loopback-only namespace the fetch fails and the
    // reply says so ("fetch failed", isError): a network attempt, logged against that call.
    const FETCH = [{ kind: 'network', detail: 'the reply reports a failed connection: fetch failed' }];
    const gzip = toolCalls(r()).filter((c) => c.tool === 'gzip-file-as-resource' && (c.probe === 'default-call' || c.probe === 'filler-call'));
    for (const c of gzip) {
      expect(c.effects, c.probe).toEqual(FETCH);
      expect(rawOf(c).result, c.probe).toEqual({ content: [{ type: 'text', text: 'fetch failed' }], isError: true });
    }
    // The filler sends the declared defaults, the same URL: the same effect as the `{}` call.
    expect(JSON.parse(gzip[1]!.request).params.arguments).toEqual({
      name: 'README.md.gz', data: 'https://raw.githubusercontent.com/modelcontextprotocol/servers/refs/heads/main/README.md', outputType: 'resourceLink',
    });
    expect(graded(r(), 'default-call-effects')).toEqual(['effect']);
    expect(checkOf(r(), 'default-call-effects').findings.map((f) => f.tool)).toEqual(['gzip-file-as-resource']);
    // SPEC section 5, one cause is one finding: the filler arguments added no effect of their own,
    // so filler-call-effects passes and only notes that the `{}` call's effect is default-call-effects'.
    expect(checkOf(r(), 'filler-call-effects').findings.map((f) => [f.level, f.messageId, f.tool])).toEqual([['info', 'default-effect', 'gzip-file-as-resource']]);
    // No other call had an effect: the toggles only start notification timers, get-env and
    // get-tiny-image only read.
    expect(calls.filter(([, tool, , effects]) => tool !== 'gzip-file-as-resource' && effects.length > 0)).toEqual([]);
    // trigger-long-running-operation runs for its declared default of 10 s: both calls wait out the
    // 10 s hang limit (no effect; this is why the run takes ~20 s longer than before the pack).
    expect(toolCalls(r()).filter((c) => c.tool === 'trigger-long-running-operation' && (c.probe === 'default-call' || c.probe === 'filler-call')).map((c) => c.class)).toEqual(['hang', 'hang']);
    // armed-flags PASS is right: no side-effect switch (no side-effect verb in a name or enum value,
    // no inverted guard, no approval Boolean); the plain defaults are listed as information only.
    expect(graded(r(), 'armed-flags')).toEqual([]);
    expect(new Set(checkOf(r(), 'armed-flags').findings.map((f) => f.messageId))).toEqual(new Set(['default-only']));
    // hidden-params PASS is right: no credential-like property name in any schema.
    expect(checkOf(r(), 'hidden-params').findings).toEqual([]);
  });
});

describe('@modelcontextprotocol/server-filesystem 2026.8.31', () => {
  const r = () => runs.filesystem.report;

  it('negotiates 2025-11-25 and lists 14 tools', () => {
    // server/discover → -32601, then initialize → 2025-11-25 with serverInfo secure-filesystem-server 0.2.0.
    expect(r().protocol).toEqual({ version: '2025-11-25', era: 'legacy', server: { name: 'secure-filesystem-server', version: '0.2.0' } });
    // One page of 14 tools (no nextCursor), in the server's registration order.
    expect(r().tools.map((t) => t.name)).toEqual([
      'read_file', 'read_text_file', 'read_media_file', 'read_multiple_files', 'write_file', 'edit_file', 'create_directory',
      'list_directory', 'list_directory_with_sizes', 'directory_tree', 'move_file', 'search_files', 'get_file_info', 'list_allowed_directories',
    ]);
  });

  it('core verdicts: handshake pass, robust-input pass, strict-arguments pass, protocol-errors partial, tool-schemas pass', () => {
    expect(verdicts(r())).toEqual({ handshake: 'pass', 'robust-input': 'pass', 'strict-arguments': 'pass', 'protocol-errors': 'partial', 'tool-schemas': 'pass' });
    // robust-input: 66 invalid calls, all isError results naming the parameter; nothing else to report
    // (every tool has arguments or is read-only). tool-schemas: all 14 tools declare an outputSchema
    // that compiles, and the one successful call's structuredContent conforms (no finding at all).
    expect(gradedAll(r())).toEqual({ handshake: [], 'robust-input': [], 'strict-arguments': [], 'protocol-errors': ['no-reply'], 'tool-schemas': [] });
    expect(checkOf(r(), 'robust-input').findings).toEqual([]);
    expect(checkOf(r(), 'tool-schemas').findings).toEqual([]);
    expect(r().stderrTail).toContain('Secure MCP Filesystem Server running on stdio');
  });

  it('robust-input: every invalid call rejected, nested items included', () => {
    const calls = invalidCalls(r());
    expect(classCounts(calls)).toEqual({ rejected: 66 });
    for (const n of namedCheck(runs.filesystem)) expect([n.cls, n.named], `#${n.seq} ${n.tool}/${n.probe}`).toEqual(['rejected', n.zod]);
    // edit_file's edits[0] without oldText is caught item-deep ("at edits[0].oldText"): the nested
    // validation works, and the classifier names the top-level `edits`.
    const item = calls.find((c) => c.tool === 'edit_file' && c.probe === 'nested-item')!;
    expect(JSON.parse(item.request).params.arguments).toEqual({ path: 'sealmark', edits: [{ newText: 'sealmark' }] });
    expect(textOf(item)).toBe('MCP error -32602: Input validation error: Invalid arguments for tool edit_file: Invalid input: expected string, received undefined at edits[0].oldText');
    expectAliveAndNoLeaks(r());
  });

  it('coverage: list_allowed_directories answered with the temp folder, structuredContent conforming', () => {
    const call = toolCalls(r()).find((c) => c.probe === 'read-only-no-args')!;
    expect(call.tool).toBe('list_allowed_directories');
    expect(call.class).toBe('accepted');
    const text = `Allowed directories:\n${runs.filesystem.dir}`;
    expect(rawOf(call).result).toEqual({ content: [{ type: 'text', text }], structuredContent: { content: text } });
    expect(r().coverage.tools.filter((t) => t.level === 'exercised').map((t) => t.name)).toEqual(['list_allowed_directories']);
  });

  it('protocol-errors partial; the roots/list request it sends on roots/list_changed is answered -32601', () => {
    expectSdk1ProtocolBehaviour(r());
    // On notifications/roots/list_changed the server does not answer the notification: it sends the
    // CLIENT a request, {"method":"roots/list","id":0} (id 0 again, like initialize). sealmark, which
    // declared no roots, answered -32601 and did not count it as an answered notification (right:
    // it is a request, not a response). The server logged it and went on serving.
    const t = runs.filesystem.transcript;
    const asked = t.findIndex((m) => m.dir === 'recv' && m.message.method === 'roots/list');
    expect(t[asked]!.message).toMatchObject({ method: 'roots/list', id: 0 });
    expect(t.slice(asked).find((m) => m.dir === 'send' && m.message.id === 0)!.message).toMatchObject({ error: { code: -32601, message: 'Method not found' } });
    expect(r().stderrTail).toContain('Failed to request roots from client: MCP error -32601: Method not found');
  });

  it('wrote nothing, inside or outside its folder', () => {
    // The standard run sends schema-invalid calls (all rejected), list_allowed_directories, and the
    // effects calls below (rejected or ENOENT): the temp folder (allowed/ and its parent) is exactly
    // as before.
    expect(runs.filesystem.before).toEqual(['allowed']);
    expect(runs.filesystem.after).toEqual(runs.filesystem.before);
  });

  it('effects: edit_file.dryRun defaults to false (armed); no default or filler call had an effect', () => {
    expect(effectVerdicts(r())).toEqual({ 'armed-flags': 'fail', 'default-call-effects': 'pass', 'filler-call-effects': 'pass', 'hidden-params': 'pass' });
    // armed-flags FAIL is right (SPEC 5: a Boolean named like an inverted guard, `dry_run`, is armed
    // by false, and a switch whose declared default arms it fails): edit_file declares
    // dryRun: {type: boolean, default: false}, so a default populator writes the edits.
    expect(graded(r(), 'armed-flags')).toEqual(['armed']);
    expect(findingsOf(r(), 'armed-flags', 'armed').map((f) => f.tool)).toEqual(['edit_file']);
    // Who was called: `{}` to list_allowed_directories (the one tool without a required argument),
    // and `{}` plus a filler call to the four tools with a flagged property (dryRun, and the declared
    // defaults sortBy and excludePatterns).
    const calls = effectCalls(r());
    expect(calls.map(([probe, tool, args]) => [probe, tool, args])).toEqual([
      ['default-call', 'edit_file', {}],
      ['filler-call', 'edit_file', { path: 'sealmark', edits: [], dryRun: false }],
      ['default-call', 'list_directory_with_sizes', {}],
      ['filler-call', 'list_directory_with_sizes', { path: 'sealmark', sortBy: 'name' }],
      ['default-call', 'directory_tree', {}],
      ['filler-call', 'directory_tree', { path: 'sealmark', excludePatterns: [] }],
      ['default-call', 'search_files', {}],
      ['filler-call', 'search_files', { path: 'sealmark', pattern: 'sealmark', excludePatterns: [] }],
      ['default-call', 'list_allowed_directories', {}],
    ]);
    // default-call-effects and filler-call-effects PASS are right: every `{}` to a tool with required
    // arguments was rejected by zod before the handler ran; the filler's path "sealmark" resolves in
    // the allowed folder, where it does not exist, so each filler call is an ENOENT error (edit_file
    // with dryRun: false never got to write); list_allowed_directories only reads. No effect was
    // logged, and the previous test shows independently that nothing was written (the allowed folder
    // is outside the sandbox's scratch folders, so the effect log alone could not have seen a write there).
    expect(calls.filter(([, , , effects]) => effects.length > 0)).toEqual([]);
    const filler = toolCalls(r()).filter((c) => c.probe === 'filler-call');
    for (const c of filler) expect(textOf(c), c.tool).toBe(`ENOENT: no such file or directory, ${c.tool === 'edit_file' ? 'open' : 'scandir'} '${join(runs.filesystem.dir, 'sealmark')}'`);
    expect(checkOf(r(), 'default-call-effects').findings).toEqual([]);
    expect(checkOf(r(), 'filler-call-effects').findings).toEqual([]);
    expect(checkOf(r(), 'hidden-params').findings).toEqual([]);
  });
});

describe('@modelcontextprotocol/server-memory 2026.8.31', () => {
  const r = () => runs.memory.report;

  it('negotiates 2025-11-25 and lists 9 tools', () => {
    // server/discover → -32601, then initialize → 2025-11-25 with serverInfo memory-server 0.6.3.
    expect(r().protocol).toEqual({ version: '2025-11-25', era: 'legacy', server: { name: 'memory-server', version: '0.6.3' } });
    // One page of 9 tools (no nextCursor), in the server's registration order.
    expect(r().tools.map((t) => t.name)).toEqual([
      'create_entities', 'create_relations', 'add_observations', 'delete_entities', 'delete_observations', 'delete_relations', 'read_graph', 'search_nodes', 'open_nodes',
    ]);
  });

  it('core verdicts: handshake pass, robust-input pass, strict-arguments pass, protocol-errors partial, tool-schemas pass', () => {
    expect(verdicts(r())).toEqual({ handshake: 'pass', 'robust-input': 'pass', 'strict-arguments': 'pass', 'protocol-errors': 'partial', 'tool-schemas': 'pass' });
    // robust-input: 43 invalid calls rejected (arrays of objects checked item-deep); read_graph's
    // valid {} call answered. tool-schemas: 9 outputSchemas compile; read_graph's structuredContent
    // {"entities":[],"relations":[]} conforms.
    expect(gradedAll(r())).toEqual({ handshake: [], 'robust-input': [], 'strict-arguments': [], 'protocol-errors': ['no-reply'], 'tool-schemas': [] });
    expect(checkOf(r(), 'robust-input').findings).toEqual([]);
    expect(checkOf(r(), 'tool-schemas').findings).toEqual([]);
    expect(r().stderrTail).toContain('Knowledge Graph MCP Server running on stdio');
  });

  it('robust-input: every invalid call rejected; nested-item names the array', () => {
    const calls = invalidCalls(r());
    expect(classCounts(calls)).toEqual({ rejected: 43 });
    for (const n of namedCheck(runs.memory)) expect([n.cls, n.named], `#${n.seq} ${n.tool}/${n.probe}`).toEqual(['rejected', n.zod]);
    // The five array-of-object tools each got nested-string and nested-item (one required field of
    // the first item left out); delete_entities (an array of strings) did not.
    expect(calls.filter((c) => c.probe === 'nested-item').map((c) => [c.tool, textOf(c).replace(/^.*? for tool [\w-]+: /, '')])).toEqual([
      ['create_entities', 'Invalid input: expected string, received undefined at entities[0].name'],
      ['create_relations', 'Invalid input: expected string, received undefined at relations[0].from'],
      ['add_observations', 'Invalid input: expected string, received undefined at observations[0].entityName'],
      ['delete_observations', 'Invalid input: expected string, received undefined at deletions[0].entityName'],
      ['delete_relations', 'Invalid input: expected string, received undefined at relations[0].from'],
    ]);
    expectAliveAndNoLeaks(r());
  });

  it('coverage: read_graph answered an empty graph', () => {
    const call = toolCalls(r()).find((c) => c.probe === 'read-only-no-args')!;
    expect(call.tool).toBe('read_graph');
    expect(call.class).toBe('accepted');
    expect(rawOf(call).result?.structuredContent).toEqual({ entities: [], relations: [] });
  });

  it('protocol-errors partial: the SDK drops array params', () => {
    expectSdk1ProtocolBehaviour(r());
  });

  it('created no memory file: nothing valid was written', () => {
    // MEMORY_FILE_PATH points into the temp folder; every write probe was rejected and read_graph on
    // a missing file (robust-input's call and the effects pack's `{}`) does not create it.
    expect(runs.memory.after).toEqual(runs.memory.before);
  });

  it('effects: only read_graph is called, with no effect; no tool flags a property', () => {
    expect(effectVerdicts(r())).toEqual({ 'armed-flags': 'pass', 'default-call-effects': 'pass', 'filler-call-effects': 'n/a', 'hidden-params': 'pass' });
    // armed-flags PASS and filler-call-effects n/a are right: no property has a default, a side-effect
    // verb in its name (`deletions` is not the word "delete"), an inverted guard or an approval Boolean,
    // so there is nothing for a filler to arm and no filler call to make.
    expect(checkOf(r(), 'armed-flags').findings).toEqual([]);
    // default-call-effects PASS is right: read_graph is the only tool callable with `{}` (the create,
    // add and delete tools all require their array), so no write tool was ever called by the pack.
    // The memory file would be outside the sandbox's scratch folders (MEMORY_FILE_PATH is in the test's
    // temp folder), so the effect log could not have seen it; the previous test shows it was not made.
    expect(effectCalls(r())).toEqual([['default-call', 'read_graph', {}, []]]);
    expect(rawOf(toolCalls(r()).find((c) => c.probe === 'default-call')!).result?.structuredContent).toEqual({ entities: [], relations: [] });
    expect(checkOf(r(), 'hidden-params').findings).toEqual([]);
  });
});

// --- the limits pack on the standard runs -------------------------------------------------------

/** The limits pack's findings of a report at fail/partial, as `messageId tool.param`. */
const limitFindings = (r: Report, id: string) =>
  checkOf(r, id)
    .findings.filter((f) => f.level !== 'info')
    .map((f) => `${f.messageId} ${f.tool ?? ''}${f.data.param !== undefined ? `.${String(f.data.param)}` : ''}`);

describe('the secrets pack on the reference servers', () => {
  it("everything: secret-echo fails on get-env, which returns the server's environment, canaries included", () => {
    const r = runs.everything.report;
    expect(checkOf(r, 'secret-echo').verdict).toBe('fail');
    const found = checkOf(r, 'secret-echo').findings;
    expect(found.map((f) => [f.messageId, f.tool, f.data.name, f.data.where])).toEqual([['env-canary', 'get-env', 'SEALMARK_CANARY_TOKEN, SEALMARK_CANARY_API_KEY', 'result']]);
    // robust-input's read-only call, strict-arguments' `{}` and no-arguments calls, and the effects
    // pack's {} call all got the dump.
    expect(found[0]!.evidence.calls!.map((s) => r.calls.find((c) => c.seq === s)!.probe)).toEqual(['read-only-no-args', 'empty-arguments', 'no-arguments', 'default-call']);
    // The dump is in the report, with the canaries' values redacted, and in no output in clear.
    const env = JSON.parse(textOf(toolCalls(r).find((c) => c.tool === 'get-env')!)) as Record<string, string>;
    expect(env.SEALMARK_CANARY_TOKEN).toBe('[redacted:SEALMARK_CANARY_TOKEN]');
    expect(JSON.stringify(r)).not.toMatch(/smk_env_[0-9a-f]{24}/);
    for (const t of runs.everything.transcript) expect(JSON.stringify(t)).not.toMatch(/smk_env_[0-9a-f]{24}/);
  });

  it('filesystem and memory: secret-echo passes (no reply carried a canary or a credential)', () => {
    for (const r of [runs.filesystem.report, runs.memory.report]) {
      expect(checkOf(r, 'secret-echo').verdict).toBe('pass');
      expect(r.calls.filter((c) => c.secrets)).toEqual([]);
    }
  });
});

describe('the limits pack on the reference servers', () => {
  it('everything: bounded-limits fail (steps = 10^9 runs past the hang limit); oversized-input and concurrency pass', () => {
    const r = runs.everything.report;
    expect(Object.fromEntries(r.checks.filter((c) => c.pack === 'limits').map((c) => [c.id, c.verdict]))).toEqual({ 'bounded-limits': 'fail', 'oversized-input': 'pass', concurrency: 'pass' });
    // Three limits: get-resource-links.count (number 1..10: only the type is loose), and
    // trigger-long-running-operation's duration (seconds) and steps ("Number of steps", a count by
    // its description), both `number` with no bounds at all.
    expect(limitFindings(r, 'bounded-limits')).toEqual([
      'number-type get-resource-links.count',
      'no-minimum trigger-long-running-operation.duration',
      'no-maximum trigger-long-running-operation.duration',
      'number-type trigger-long-running-operation.steps',
      'no-minimum trigger-long-running-operation.steps',
      'no-maximum trigger-long-running-operation.steps',
      'no-answer trigger-long-running-operation.steps',
    ]);
    // The fail: with duration 1 (sealmark fills a duration with its smallest sampled value), steps =
    // 10^9 makes the server loop a billion steps; no reply within the 10 s hang limit. Schema-valid
    // (no maximum), sent because the tool states readOnlyHint: true.
    const [hang] = findingsOf(r, 'bounded-limits', 'no-answer');
    const call = r.calls.find((c) => c.seq === hang!.evidence.calls![0])!;
    expect([call.probe, call.value, call.reply.kind, JSON.parse(call.request).params.arguments]).toEqual(['limit-over-max', '1000000000', 'hang', { duration: 1, steps: 1_000_000_000 }]);
    // Everything else a count must refuse was refused by zod: false, true, "1", and 11 for count.
    for (const probe of ['limit-false', 'limit-true', 'limit-string']) {
      expect(r.calls.filter((c) => c.probe === probe).map((c) => c.class), probe).toEqual(['rejected', 'rejected', 'rejected']);
    }
    expect(r.calls.find((c) => c.tool === 'get-resource-links' && c.probe === 'limit-over-max')!.class).toBe('rejected');
    // NaN, Infinity and -Infinity are not JSON: the SDK's transport logs the parse error and drops
    // the line, with no reply (JSON-RPC asks for -32700): noted, not failed.
    const dropped = findingsOf(r, 'bounded-limits', 'dropped');
    expect(dropped.map((f) => [f.tool, f.data.param, f.data.values])).toEqual([
      ['get-resource-links', 'count', 'NaN, Infinity, -Infinity'],
      ['trigger-long-running-operation', 'duration', 'NaN, Infinity, -Infinity'],
      ['trigger-long-running-operation', 'steps', 'NaN, Infinity, -Infinity'],
    ]);
    // get-resource-links: 0 and -1 are below its minimum 1 and rejected, 1 returned one item; so
    // nothing admitted more for 0 than for 1.
    const links = (probe: string) => r.calls.find((c) => c.tool === 'get-resource-links' && c.probe === probe)!;
    expect([links('limit-zero').class, links('limit-negative').class, links('limit-one').class]).toEqual(['rejected', 'rejected', 'accepted']);
    // concurrency: 16 invalid calls and a tools/list at once, each answered once.
    const burst = r.calls.filter((c) => c.probe === 'concurrent-call' || c.probe === 'concurrent-list');
    expect(burst.map((c) => c.reply.kind)).toEqual(Array(17).fill('response'));
  });

  it('filesystem: bounded-limits partial (head/tail typed number, unbounded); oversized-input fail on 100,000 paths', () => {
    const r = runs.filesystem.report;
    expect(Object.fromEntries(r.checks.filter((c) => c.pack === 'limits').map((c) => [c.id, c.verdict]))).toEqual({ 'bounded-limits': 'partial', 'oversized-input': 'fail', concurrency: 'pass' });
    // head and tail ("the first N lines", "the last N lines") are counts by their description, typed
    // number with no bounds, on read_file and read_text_file.
    const gaps = (tool: string, param: string) => [`number-type ${tool}.${param}`, `no-minimum ${tool}.${param}`, `no-maximum ${tool}.${param}`];
    expect(limitFindings(r, 'bounded-limits')).toEqual([...gaps('read_file', 'tail'), ...gaps('read_file', 'head'), ...gaps('read_text_file', 'tail'), ...gaps('read_text_file', 'head')]);
    // Without a real file no item count can be compared (the sampled path "sealmark" does not
    // exist); the run below gives it one.
    expect(checkOf(r, 'bounded-limits').notes.filter((n) => /item counts not compared/.test(n))).toHaveLength(4);
    // oversized-input: read_multiple_files (read-only, `paths` with no maxItems) is sent 100,000
    // paths and works through them one by one: no reply within the 10 s hang limit (about 30 s when
    // measured unsandboxed). The server keeps answering tools/list meanwhile.
    // The abandoned request keeps the server's file-system threads busy for half a minute. On an idle
    // machine that is the only finding; on a loaded one the calls queued behind it (the liveness
    // tools/list, the tools probed after it, which touch the file system too) can miss the 10 s as
    // well. Those, and only those, may follow: no-answer or not-alive on read_multiple_files or a
    // tool listed after it.
    const over = checkOf(r, 'oversized-input').findings.filter((f) => f.level !== 'info');
    expect([over[0]!.messageId, over[0]!.tool, over[0]!.data.param]).toEqual(['no-answer', 'read_multiple_files', 'paths']);
    const order = r.tools.map((t) => t.name);
    const after = (tool: string | undefined) => order.indexOf(tool ?? '') >= order.indexOf('read_multiple_files');
    for (const f of over.slice(1)) expect([f.messageId, after(f.tool)], f.message).toSatisfy(([id, later]: [string, boolean]) => (id === 'no-answer' || id === 'not-alive') && later);
    const [f] = findingsOf(r, 'oversized-input', 'no-answer');
    expect(f!.data.what).toBe('a 100,000-item array');
    expect(f!.request!.length).toBeLessThanOrEqual(4097);
    expect(f!.replay).toBeUndefined();
    // The write tools get no schema-valid oversized value (a 1 MiB `content` would be a real write).
    // write_file shares an instance with read_multiple_files and comes after it: on a loaded machine
    // (above) that instance may stop before it, and then says so instead.
    const notes = checkOf(r, 'oversized-input').notes;
    const notSent = 'write_file: oversized-string not sent: the schema admits it and write_file may write: sent only to a read-only tool';
    const stoppedBefore = notes.some((n) => /^probing stopped \(server-gone\); not reached: .*\bwrite_file\b/.test(n));
    expect(notes.includes(notSent) || stoppedBefore, notes.join('\n')).toBe(true);
    expect(notes.includes(notSent) && stoppedBefore).toBe(false);
  });

  it('memory: no count to bound (n/a); oversized-input and concurrency pass', () => {
    const r = runs.memory.report;
    expect(Object.fromEntries(r.checks.filter((c) => c.pack === 'limits').map((c) => [c.id, c.verdict]))).toEqual({ 'bounded-limits': 'n/a', 'oversized-input': 'pass', concurrency: 'pass' });
    expect(checkOf(r, 'bounded-limits').notes).toEqual(['no tool has a count-like or duration-like property']);
    // Every oversized value was rejected by zod (or, for read-only search_nodes, answered).
    const over = r.calls.filter((c) => ['oversized-string', 'oversized-array', 'deep-object'].includes(c.probe));
    expect(over.every((c) => c.reply.kind === 'response')).toBe(true);
  });
});

describe('server-filesystem read_text_file with a real file: head = 0 and tail = 0 return the whole file', () => {
  let r: Report;
  let dir: string;
  beforeAll(async () => {
    const fs = await run('filesystem-limits', {
      args: (dir) => [entry('server-filesystem'), dir],
      setup: (_home, dir) => writeFileSync(join(dir, 'ten.txt'), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n')),
      raw: (dir) => ({
        probes: [{ tool: 'read_text_file', arguments: { path: join(dir, 'ten.txt') } }],
        checks: { 'protocol-errors': { enabled: false }, 'oversized-input': { enabled: false }, concurrency: { enabled: false } },
      }),
    });
    r = fs.report;
    dir = fs.dir;
  }, 120_000);

  it('fails bounded-limits with `zero-unlimited` for head and tail, the counts as evidence', () => {
    // The server reads `if (args.tail) … else if (args.head) …`: 0 is falsy, so head: 0 and tail: 0
    // fall through to reading the whole file (10 lines) instead of none. -1 reads nothing.
    const zero = findingsOf(r, 'bounded-limits', 'zero-unlimited').filter((f) => f.tool === 'read_text_file');
    expect(zero.map((f) => [f.data.param, f.data.zero, f.data.one])).toEqual([
      ['tail', 10, 1],
      ['head', 10, 1],
    ]);
    const calls = (param: string, probe: string) => r.calls.find((c) => c.tool === 'read_text_file' && c.target === param && c.probe === probe)!;
    expect(textOf(calls('head', 'limit-one'))).toBe('line 1');
    expect(textOf(calls('tail', 'limit-one'))).toBe('line 10');
    expect(calls('head', 'limit-zero').items).toBe(10);
    expect([calls('head', 'limit-negative').items, calls('tail', 'limit-negative').items]).toEqual([0, 0]);
    expect(findingsOf(r, 'bounded-limits', 'negative-slices')).toEqual([]);
    // The replay sends the same call: the file, tail 0.
    expect(zero[0]!.replay).toContain(`--tool read_text_file --args '{"path":"${join(dir, 'ten.txt')}","tail":0}'`);
  });
});

// --- valid calls: outputSchema conformance, coverage, confinement --------------------------------

const probed: Record<'everything' | 'filesystem' | 'memory', Run> = {} as never;
/** Fast runs: protocol-errors (the 10 s hang) off; neither that nor probes: is a locked key. */
const fast = (probes: unknown[]) => ({ probes, checks: { ...LATER_PACKS_OFF, 'protocol-errors': { enabled: false } } });


const userProbes = (r: Report) => toolCalls(r).filter((c) => c.probe === 'user-probe');

describe('with valid probes: calls, outputSchema and confinement', () => {
  beforeAll(async () => {
    const [everything, filesystem, memory] = await Promise.all([
      run('everything-probes', {
        args: () => [entry('server-everything'), 'stdio'],
        raw: fast([
          { tool: 'toggle-simulated-logging' },
          { tool: 'toggle-subscriber-updates' },
          { tool: 'echo', arguments: { message: 'hello' } },
          { tool: 'get-sum', arguments: { a: 2, b: 3 } },
          { tool: 'get-structured-content', arguments: { location: 'Chicago' } },
          // messageType "error" is left out on purpose: see the fixture real-everything-annotated-error.
          { tool: 'get-annotated-message', arguments: { messageType: 'success' } },
          { tool: 'get-resource-links', arguments: { count: 2 } },
          { tool: 'get-resource-reference', arguments: { resourceType: 'Text', resourceId: 1 } },
          { tool: 'trigger-long-running-operation', arguments: { duration: 0.2, steps: 1 } },
          { tool: 'gzip-file-as-resource', arguments: { name: 'x.gz', data: 'data:text/plain;base64,aGVsbG8=', outputType: 'resource' } },
          { tool: 'toggle-simulated-logging' },
          { tool: 'toggle-subscriber-updates' },
        ]),
      }),
      run('filesystem-probes', {
        args: (dir) => [entry('server-filesystem'), dir],
        // allowed/link → ../outside: a symlink out of the allowed folder.
        setup: (home, dir) => {
          mkdirSync(join(home, 'outside'));
          symlinkSync(join(home, 'outside'), join(dir, 'link'));
        },
        raw: (dir) =>
          fast([
            { tool: 'write_file', arguments: { path: join(dir, 'a.txt'), content: 'one\ntwo\n' } },
            { tool: 'read_text_file', arguments: { path: join(dir, 'a.txt'), head: 1 } },
            { tool: 'read_file', arguments: { path: join(dir, 'a.txt') } },
            { tool: 'read_media_file', arguments: { path: join(dir, 'a.txt') } },
            { tool: 'read_multiple_files', arguments: { paths: [join(dir, 'a.txt')] } },
            { tool: 'edit_file', arguments: { path: join(dir, 'a.txt'), edits: [{ oldText: 'two', newText: 'three' }], dryRun: true } },
            { tool: 'create_directory', arguments: { path: join(dir, 'sub') } },
            { tool: 'move_file', arguments: { source: join(dir, 'a.txt'), destination: join(dir, 'sub', 'b.txt') } },
            { tool: 'list_directory', arguments: { path: dir } },
            { tool: 'list_directory_with_sizes', arguments: { path: dir, sortBy: 'size' } },
            { tool: 'directory_tree', arguments: { path: dir } },
            { tool: 'search_files', arguments: { path: dir, pattern: '**/*.txt' } },
            { tool: 'get_file_info', arguments: { path: join(dir, 'sub', 'b.txt') } },
            { tool: 'write_file', arguments: { path: 'relative.txt', content: 'r' } },
            // Escape attempts: a sibling path, a ../ traversal (string not normalised), a symlink out.
            { tool: 'write_file', arguments: { path: join(dir, '..', 'escape.txt'), content: 'x' }, expect: 'error' },
            { tool: 'write_file', arguments: { path: `${dir}/../escape2.txt`, content: 'x' }, expect: 'error' },
            { tool: 'write_file', arguments: { path: join(dir, 'link', 'pwned.txt'), content: 'x' }, expect: 'error' },
            { tool: 'read_text_file', arguments: { path: '/etc/hostname' }, expect: 'error' },
          ]),
      }),
      run('memory-probes', {
        args: () => [entry('server-memory')],
        env: (dir) => ({ MEMORY_FILE_PATH: join(dir, 'memory.jsonl') }),
        raw: fast([
          { tool: 'create_entities', arguments: { entities: [{ name: 'Ada', entityType: 'person', observations: ['writes code'] }, { name: 'Bob', entityType: 'person', observations: [] }] } },
          { tool: 'create_relations', arguments: { relations: [{ from: 'Ada', to: 'Bob', relationType: 'knows' }] } },
          { tool: 'add_observations', arguments: { observations: [{ entityName: 'Ada', contents: ['likes tea'] }] } },
          { tool: 'add_observations', arguments: { observations: [{ entityName: 'Nobody', contents: ['x'] }] }, expect: 'error' },
          { tool: 'search_nodes', arguments: { query: 'tea' } },
          { tool: 'open_nodes', arguments: { names: ['Ada', 'Zed'] } },
          { tool: 'delete_observations', arguments: { deletions: [{ entityName: 'Ada', observations: ['likes tea'] }] } },
          { tool: 'delete_relations', arguments: { relations: [{ from: 'Ada', to: 'Bob', relationType: 'knows' }] } },
          { tool: 'delete_entities', arguments: { entityNames: ['Bob'] } },
        ]),
      }),
    ]);
    Object.assign(probed, { everything, filesystem, memory });
  }, 60_000);

  it('the runs stay standard; filesystem and memory leave no process', () => {
    for (const [name, r] of Object.entries(probed)) {
      // probes: and checks.<id>.enabled are free keys: still a standard run.
      expect(r.report.standard, name).toBe(true);
      expect(verdicts(r.report)['protocol-errors'], name).toBeUndefined();
      if (name !== 'everything') expectNoProcessLeft(r);
    }
  });

  // As in the standard run: the toggles keep the server running after stdin closes; the close ends it.
  it('everything leaves no process behind', () => {
    expectNoProcessLeft(probed.everything);
  });

  it('everything: every valid call succeeds; get-structured-content conforms to its outputSchema', () => {
    const r = probed.everything.report;
    expect(verdicts(r)).toMatchObject({ handshake: 'pass', 'robust-input': 'pass', 'tool-schemas': 'pass' });
    // All 12 answered as plain successes (the toggles start and stop timers that emit
    // notifications/message; sealmark ignores them: no stdout noise, no stray).
    expect(userProbes(r).map((c) => [c.tool, c.class])).toEqual([
      ['toggle-simulated-logging', 'accepted'], ['toggle-subscriber-updates', 'accepted'], ['echo', 'accepted'], ['get-sum', 'accepted'],
      ['get-structured-content', 'accepted'], ['get-annotated-message', 'accepted'], ['get-resource-links', 'accepted'],
      ['get-resource-reference', 'accepted'], ['trigger-long-running-operation', 'accepted'], ['gzip-file-as-resource', 'accepted'],
      ['toggle-simulated-logging', 'accepted'], ['toggle-subscriber-updates', 'accepted'],
    ]);
    expect(textOf(userProbes(r).find((c) => c.tool === 'get-sum')!)).toBe('The sum of 2 and 3 is 5.');
    // structuredContent {temperature, conditions, humidity} validated against the declared
    // outputSchema (draft-07, additionalProperties: false): no structured-content-* finding.
    const sc = rawOf(userProbes(r).find((c) => c.tool === 'get-structured-content')!).result!.structuredContent as Record<string, unknown>;
    expect(Object.keys(sc).sort()).toEqual(['conditions', 'humidity', 'temperature']);
    expect(checkOf(r, 'tool-schemas').findings).toEqual([]);
    expect(findingsOf(r, 'robust-input', 'user-probe-unexpected')).toEqual([]);
    // With probes for them, the toggles are no longer "needs a probe", only "not probed".
    expect(findingsOf(r, 'robust-input', 'needs-probe')).toEqual([]);
    // …and the task-required tool is skipped too.
    expect(findingsOf(r, 'robust-input', 'skipped').map((f) => f.tool)).toEqual(['toggle-simulated-logging', 'toggle-subscriber-updates', 'simulate-research-query']);
    expect(findingsOf(r, 'handshake', 'stdout-noise')).toEqual([]);
    expect(r.coverage.tools.filter((t) => t.level === 'hygiene-only').map((t) => t.name)).toEqual(['simulate-research-query']);
  });

  it('filesystem: writes land inside the allowed folder only; escapes are refused', () => {
    const run = probed.filesystem;
    const r = run.report;
    expect(verdicts(r)).toMatchObject({ handshake: 'pass', 'robust-input': 'pass', 'tool-schemas': 'pass' });
    const calls = userProbes(r);
    // 14 valid calls succeed; each carries structuredContent {content: …} that conforms to its
    // outputSchema (read_media_file's is an array of resource blocks): tool-schemas has no finding.
    expect(calls.slice(0, 14).map((c) => c.class)).toEqual(Array(14).fill('accepted'));
    expect(checkOf(r, 'tool-schemas').findings).toEqual([]);
    expect(rawOf(calls[1]!).result).toEqual({ content: [{ type: 'text', text: 'one' }], structuredContent: { content: 'one' } });
    // The four escape attempts: isError "Access denied - …", naming no parameter → rejected-unnamed,
    // which is what `expect: error` wanted (no user-probe-unexpected finding).
    const home = join(run.dir, '..');
    expect(calls.slice(14).map((c) => [c.class, textOf(c)])).toEqual([
      ['rejected-unnamed', `Access denied - path outside allowed directories: ${join(home, 'escape.txt')} not in ${run.dir}`],
      ['rejected-unnamed', `Access denied - path outside allowed directories: ${join(home, 'escape2.txt')} not in ${run.dir}`],
      ['rejected-unnamed', `Access denied - symlink target outside allowed directories: ${join(home, 'outside')} not in ${run.dir}`],
      ['rejected-unnamed', `Access denied - path outside allowed directories: /etc/hostname not in ${run.dir}`],
    ]);
    expect(findingsOf(r, 'robust-input', 'user-probe-unexpected')).toEqual([]);
    // The sandbox's overlay (issue 14): the probes' writes landed in the overlay, every one of them
    // inside allowed/ (a.txt was moved to sub/b.txt; the relative path resolved against the allowed
    // folder), each an effect of the call that made it; the real folders are exactly as before.
    const effects = r.calls.filter((c) => c.effects?.length).map((c) => [c.probe, c.tool, c.effects!.map((e) => `${e.detail.replace(run.dir, '<allowed>')} (${e.summary})`)]);
    expect(effects).toEqual([
      ['user-probe', 'write_file', ['created <allowed>/a.txt (8 bytes)']],
      ['user-probe', 'create_directory', ['created <allowed>/sub (an empty folder)']],
      ['user-probe', 'move_file', ['created <allowed>/sub/b.txt (8 bytes)', 'removed <allowed>/a.txt (a file it had made)']],
      ['user-probe', 'write_file', ['created <allowed>/relative.txt (1 byte)']],
    ]);
    // The dryRun edit changed nothing.
    expect(calls.filter((c) => c.tool === 'edit_file').map((c) => c.effects)).toEqual(calls.filter((c) => c.tool === 'edit_file').map(() => []));
    expect(run.before).toEqual(['allowed', 'allowed/link', 'outside']);
    expect(run.after).toEqual(run.before);
    expect(readdirSync(join(home, 'outside'))).toEqual([]);
  });

  it('memory: the graph lives in the memory file inside the temp folder', () => {
    const run = probed.memory;
    const r = run.report;
    expect(verdicts(r)).toMatchObject({ handshake: 'pass', 'robust-input': 'pass', 'tool-schemas': 'pass' });
    // Every write and read tool's structuredContent conforms to its outputSchema.
    expect(checkOf(r, 'tool-schemas').findings).toEqual([]);
    const calls = userProbes(r);
    expect(calls.map((c) => c.class)).toEqual(['accepted', 'accepted', 'accepted', 'rejected-unnamed', 'accepted', 'accepted', 'accepted', 'accepted', 'accepted']);
    // An unknown entity is an isError result that names no parameter.
    expect(textOf(calls[3]!)).toBe('Entity with name Nobody not found');
    expect(findingsOf(r, 'robust-input', 'user-probe-unexpected')).toEqual([]);
    expect(r.coverage.tools.every((t) => t.level === 'exercised')).toBe(true);
    // The graph lives in allowed/memory.jsonl: written through the overlay by each write tool (and
    // by none of the reads), shrinking as Bob, the relation and the observation are deleted; the real
    // folder is as before (issue 14: an audit never changes the user's data).
    const effects = r.calls.filter((c) => c.effects?.length).map((c) => [c.tool, c.effects!.map((e) => `${e.detail.replace(run.dir, '<allowed>')} (${e.summary})`)]);
    expect(effects).toEqual([
      ['create_entities', ['created <allowed>/memory.jsonl (154 bytes)']],
      ['create_relations', ['changed <allowed>/memory.jsonl (154 → 221 bytes)']],
      ['add_observations', ['changed <allowed>/memory.jsonl (221 → 233 bytes)']],
      ['delete_observations', ['changed <allowed>/memory.jsonl (233 → 221 bytes)']],
      ['delete_relations', ['changed <allowed>/memory.jsonl (221 → 154 bytes)']],
      ['delete_entities', ['changed <allowed>/memory.jsonl (154 → 83 bytes)']],
    ]);
    expect(run.after).toEqual(run.before);
  });
});

// --- replayed real replies (fixtures) -------------------------------------------------------------

describe('replayed real replies', () => {
  it('real-filesystem-roots-request: a server→client roots/list request mid-session is answered -32601, not graded', async () => {
    const r = await auditFixture('real-filesystem-roots-request.mjs');
    // The fixture sends {"method":"roots/list","id":0} on notifications/roots/list_changed, as the
    // real server does. It is a request, not an answer to the notification: protocol-errors passes,
    // and sealmark answered it with -32601 (it declared no roots), which the fixture logs.
    expect(verdicts(r)).toEqual({ handshake: 'pass', 'robust-input': 'pass', 'strict-arguments': 'pass', 'protocol-errors': 'pass', 'tool-schemas': 'pass' });
    expect(findingsOf(r, 'protocol-errors', 'notification-answered')).toEqual([]);
    expect(r.stderrTail).toContain('Failed to request roots from client: MCP error -32601: Method not found');
    expect(r.coverage.tools).toEqual([{ name: 'list_allowed_directories', level: 'exercised' }]);
  });

  it('real-everything-annotated-error: invalid calls rejected, as by the real server', async () => {
    const r = await auditFixture('real-everything-annotated-error.mjs');
    expect(verdicts(r)).toMatchObject({ 'robust-input': 'pass' });
    expect(classCounts(invalidCalls(r))).toEqual({ rejected: 5 });
  });

  // A VALID call {"messageType":"error"} gets a normal success whose text is "Error: Operation
  // failed" (a demo of content annotations). SPEC section 4 makes a normal result `text-refusal`
  // only when its text refuses the input ("invalid input", "is required", "must be" …); this one
  // refuses nothing, so it is `accepted` and the tool is covered.
  it('real-everything-annotated-error: a success that says "Error: Operation failed" is accepted (SPEC 4)', async () => {
    const r = await auditFixture('real-everything-annotated-error.mjs', { probes: [{ tool: 'get-annotated-message', arguments: { messageType: 'error' } }] });
    const call = toolCalls(r).find((c) => c.probe === 'user-probe')!;
    expect(textOf(call)).toBe('Error: Operation failed');
    expect(call.class).toBe('accepted');
    expect(findingsOf(r, 'robust-input', 'user-probe-unexpected')).toEqual([]);
    expect(r.coverage.tools).toEqual([{ name: 'get-annotated-message', level: 'exercised' }]);
    expect(checkOf(r, 'robust-input').verdict).toBe('pass');
  });

  // A tool listed with "execution":{"taskSupport":"required"} MUST be called as a task (MCP
  // 2025-11-25), and the server refuses every plain call before reading the arguments. Probing it
  // would blame correct behaviour, so it is listed as not probed; with no other tool, robust-input
  // has nothing to judge: n/a.
  it('real-everything-task-required: a task-required tool is listed as not probed, not as rejected-unnamed', async () => {
    const r = await auditFixture('real-everything-task-required.mjs');
    expect(findingsOf(r, 'robust-input', 'rejected-unnamed')).toEqual([]);
    const notProbed = checkOf(r, 'robust-input').findings.filter((f) => ['skipped', 'needs-probe'].includes(f.messageId) && f.tool === 'simulate-research-query');
    expect(notProbed).toHaveLength(1);
    expect(notProbed[0]!.message).toMatch(/task/);
    expect(checkOf(r, 'robust-input').verdict).toBe('n/a');
  });
});
