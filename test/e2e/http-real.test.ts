/**
 * Streamable HTTP as real servers speak it, through the real binary `node bin/sealmark.js audit
 * --url` (needs a fresh dist/: `npm run build`). Nothing leaves loopback.
 *
 * 1. Event streams (test/fixtures/servers/http/priming.mjs): the priming event (an event id and
 *    empty data, MCP 2025-11-25 § Sending Messages to the Server), comments, keep-alive comments
 *    and events are no messages and no noise; the notifications and server requests before a
 *    reply are all delivered, in order. The same in the legacy HTTP+SSE stream. The verdicts are
 *    those of the same JSON-RPC core with plain JSON replies (adversarial-http/clean-raw.mjs).
 * 2. Streams that end before the reply (test/fixtures/servers/http/drops-stream.mjs): resumed
 *    with GET + Last-Event-ID (§ Resumability and Redelivery), also during the handshake and when
 *    the first resume brings nothing; without resumption (GET 405) or without any event id, the
 *    request is a broken reply at once, naming the ended stream: not a hang, not a crash.
 * 3. The official @modelcontextprotocol/server-everything (a devDependency) in `streamableHttp`
 *    mode (which primes every stream: it has an InMemoryEventStore) and in `sse` mode, each
 *    started by this file on a free port, audited over --url and compared with its stdio audit;
 *    each difference is asserted with its reason.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report, ReportCall, ReportCheck } from '../../src/report/build.js';
import { concurrencyLimit, runCli, type CliRun } from '../helpers/cli.js';
import { TOOL_CHECKS, startHttpFixture, type HttpFixture } from '../helpers/http.js';
import { root } from '../helpers/run.js';

/** A dozen audits on two cores, three of them of a 13-tool server: generous. */
const SLOW = 420_000;
const EVERYTHING = join(root, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
/**
 * In the environment of the server-everything processes started here (its get-env tool returns
 * the whole environment): a GitHub token by its shape, so that secret-echo's patterns can catch
 * it over HTTP, where sealmark cannot plant its own canaries.
 */
const CANARY_TOKEN = 'ghp_Zq8Lw3Nt6Vb1Xc4Rd7Hs2Jk5Mf9Pg0Ya3Ue8';
/**
 * server-everything's gzip-file-as-resource fetches any http(s) URL it is given (its default is a
 * raw.githubusercontent.com URL). This allow-list makes it refuse every host but loopback, on
 * every transport: the HTTP servers run on the host network, and the stdio one must not depend on
 * the sandbox's network namespace being available.
 */
const GZIP_ENV = { GZIP_ALLOWED_DOMAINS: '127.0.0.1' };
const EVERYTHING_TOOLS = [
  'echo',
  'get-annotated-message',
  'get-env',
  'get-resource-links',
  'get-resource-reference',
  'get-structured-content',
  'get-sum',
  'get-tiny-image',
  'gzip-file-as-resource',
  'toggle-simulated-logging',
  'toggle-subscriber-updates',
  'trigger-long-running-operation',
  'simulate-research-query',
];

/** At most two sealmark processes at once (two cores; a starved server would look like a hang). */
const limited = concurrencyLimit(2);

const dir = mkdtempSync(join(tmpdir(), 'sealmark-http-real-'));
let files = 0;

interface Audited {
  run: CliRun;
  report: Report;
  transcript: { dir: 'send' | 'recv'; message: Record<string, unknown> }[];
}

/** `sealmark audit …args --format json --output <tmp> --transcript <tmp>` (options before a `--`). */
async function audit(args: string[]): Promise<Audited> {
  const n = ++files;
  const out = join(dir, `r${n}.json`);
  const transcript = join(dir, `t${n}.jsonl`);
  const mine = ['--format', 'json', '--output', out, '--transcript', transcript];
  const dash = args.indexOf('--');
  const argv = dash < 0 ? ['audit', ...args, ...mine] : ['audit', ...args.slice(0, dash), ...mine, ...args.slice(dash)];
  const run = await limited(() => runCli(argv));
  if (!existsSync(out)) throw new Error(`no report written (exit ${run.code})\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  return {
    run,
    report: JSON.parse(readFileSync(out, 'utf8')) as Report,
    transcript: readFileSync(transcript, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Audited['transcript'][number]),
  };
}

function checkOf(report: Report, id: string): ReportCheck {
  const c = report.checks.find((x) => x.id === id);
  if (!c) throw new Error(`check ${id} not in report`);
  return c;
}

/** Fingerprints of a check's fail/partial findings, sorted. */
function fingerprints(report: Report, id: string): string[] {
  return checkOf(report, id)
    .findings.filter((f) => f.level !== 'info')
    .map((f) => f.fingerprint)
    .sort();
}

/** `level messageId:tool` of a check's fail/partial findings, sorted. */
function graded(report: Report, id: string): string[] {
  return checkOf(report, id)
    .findings.filter((f) => f.level !== 'info')
    .map((f) => `${f.level} ${f.messageId}:${f.tool ?? '-'}`)
    .sort();
}

/** Every check's verdict and fail/partial fingerprints. */
function verdicts(report: Report): Record<string, { verdict: string; fingerprints: string[] }> {
  return Object.fromEntries(report.checks.map((c) => [c.id, { verdict: c.verdict, fingerprints: fingerprints(report, c.id) }]));
}

function toolCalls(report: Report): ReportCall[] {
  return report.calls.filter((c) => c.method === 'tools/call');
}

/** The one call of a report with this probe (and tool). */
function callOf(report: Report, probe: string, tool?: string): ReportCall {
  const found = report.calls.filter((c) => c.probe === probe && (tool === undefined || c.tool === tool));
  if (found.length !== 1) throw new Error(`${found.length} calls of ${probe}${tool ? ` on ${tool}` : ''}`);
  return found[0]!;
}

// ---------------------------------------------------------------------------------------------
// server-everything over HTTP: started here on a free port.

interface Everything {
  url: string;
  stderr(): string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts `node dist/index.js <mode>` with PORT set to a free port and waits for the line it writes
 * to stderr once it listens. Its environment is PATH, PORT, the token and the gzip allow-list only.
 * (It listens on every interface, as it is written; sealmark reaches it on 127.0.0.1.)
 */
async function startEverything(mode: 'streamableHttp' | 'sse'): Promise<Everything> {
  let last = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child: ChildProcess = spawn(process.execPath, [EVERYTHING, mode], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PORT: String(port), SEALMARK_CANARY_TOKEN: CANARY_TOKEN, ...GZIP_ENV },
      // stdout carries a log line per request: not read, not kept.
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const killOnExit = (): void => void child.kill('SIGKILL');
    process.once('exit', killOnExit);
    const stop = async (): Promise<void> => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(timer);
      }
      process.removeListener('exit', killOnExit);
    };
    const ready = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 20_000);
      child.stderr!.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
        if (/listening on port \d+|running on port \d+/.test(stderr)) {
          clearTimeout(timer);
          resolve(true);
        }
      });
      child.once('exit', () => {
        clearTimeout(timer);
        resolve(false);
      });
    });
    if (ready) return { url: `http://127.0.0.1:${port}${mode === 'sse' ? '/sse' : '/mcp'}`, stderr: () => stderr, stop };
    last = stderr;
    await stop(); // the port was taken meanwhile, say: another one
  }
  throw new Error(`server-everything ${mode} did not start: ${last}`);
}

// ---------------------------------------------------------------------------------------------
// Everything is started once; the runs go in the background and the tests await what they need.

const fixtures: Record<string, HttpFixture> = {};
const servers: Record<string, Everything> = {};
const runs: Record<string, Promise<Audited>> = {};

beforeAll(async () => {
  if (!existsSync(join(root, 'dist', 'cli.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test builds first)');
  const adv = (name: string) => join(root, 'test', 'fixtures', 'servers', 'adversarial-http', name);
  const [clean, priming, legacy, resume, flaky, noResume, noId, streamable, sse] = await Promise.all([
    startHttpFixture(adv('clean-raw.mjs')),
    startHttpFixture('priming.mjs'),
    startHttpFixture('priming.mjs', ['--legacy']),
    startHttpFixture('drops-stream.mjs', ['resume', '--drop', 'all']),
    startHttpFixture('drops-stream.mjs', ['flaky', '--drop', 'all']),
    startHttpFixture('drops-stream.mjs', ['no-resume']),
    startHttpFixture('drops-stream.mjs', ['no-id']),
    startEverything('streamableHttp'),
    startEverything('sse'),
  ]);
  Object.assign(fixtures, { clean, priming, legacy, resume, flaky, noResume, noId });
  Object.assign(servers, { streamable, sse });
  // The long runs first (two at a time): the stdio baseline spends most of its time waiting.
  const probe = ['--timeout-probe', '3'];
  runs.stdio = audit([...probe, '--env', `GZIP_ALLOWED_DOMAINS=${GZIP_ENV.GZIP_ALLOWED_DOMAINS}`, '--', 'node', EVERYTHING, 'stdio']);
  runs.streamable = audit([...probe, '--url', streamable.url]);
  runs.sse = audit([...probe, '--url', sse.url]);
  const fast = ['--timeout-probe', '5'];
  runs.clean = audit([...fast, '--url', clean.url]);
  runs.priming = audit([...fast, '--url', priming.url]);
  runs.legacy = audit([...fast, '--url', legacy.url]);
  runs.resume = audit([...fast, '--url', resume.url]);
  runs.flaky = audit([...fast, '--url', flaky.url, '--only', 'handshake,robust-input']);
  runs.noResume = audit([...fast, '--url', noResume.url]);
  runs.noId = audit([...fast, '--url', noId.url, '--only', 'handshake,robust-input']);
  for (const p of Object.values(runs)) p.catch(() => {});
}, SLOW);

afterAll(async () => {
  await Promise.allSettled(Object.values(runs));
  await Promise.all([...Object.values(fixtures), ...Object.values(servers)].map((f) => f.stop()));
  rmSync(dir, { recursive: true, force: true });
}, SLOW);

/**
 * The first tool call sent after the early array-params probe (params an array) was answered, as
 * its JSON-RPC id and its index in the transcript. The early probe runs beside the first calls on
 * its own event stream, so until its reply the streams' events interleave.
 */
function firstQuietCall(transcript: Audited['transcript'], report: Report): { id: number; at: number } {
  const early = transcript.find((l) => l.dir === 'send' && Array.isArray(l.message.params));
  expect(early, 'the early array-params probe').toBeDefined();
  const earlyDone = transcript.findIndex((l) => l.dir === 'recv' && l.message.id === early!.message.id && !('method' in l.message));
  expect(earlyDone).toBeGreaterThan(0);
  for (const c of toolCalls(report)) {
    const id = (JSON.parse(c.request) as { id: number }).id;
    const at = transcript.findIndex((l) => l.dir === 'send' && l.message.id === id);
    if (at > earlyDone) return { id, at };
  }
  throw new Error('no tool call was sent after the early probe was answered');
}

/** The fixture's stderr lines that start with `prefix`. */
function logLines(f: HttpFixture, prefix: string): string[] {
  return f
    .stderr()
    .split('\n')
    .filter((l) => l.startsWith(prefix));
}

// ---------------------------------------------------------------------------------------------

describe('1. event streams with priming events, comments and keep-alives', () => {
  it('priming.mjs is audited with the verdicts of the same core answering plain JSON (clean-raw.mjs)', async () => {
    const [{ report: clean }, { report, run }] = await Promise.all([runs.clean!, runs.priming!]);
    expect(report.status, run.stderr).toBe('audited');
    expect(run.code, run.stderr).toBe(0);
    expect(report.tools.map((t) => t.name)).toEqual(['get_note']);
    expect(verdicts(report)).toEqual(verdicts(clean));
    expect(checkOf(report, 'handshake').verdict).toBe('pass');
    // Not noise: the handshake says what it negotiated and nothing else (no reply-noise finding).
    expect(checkOf(report, 'handshake').findings.map((f) => f.message)).toEqual(['negotiated 2025-11-25 (initialize handshake) with priming-fixture 1.0.0']);
    // Every call got its reply (none taken for a malformed one by the empty priming event).
    expect(toolCalls(report).length).toBeGreaterThan(20);
    for (const c of toolCalls(report)) expect(c.reply.kind, c.request).toBe('response');
  }, SLOW);

  it('the notification and the server ping before each reply are delivered, in order, and the ping is answered', async () => {
    const { transcript, report } = await runs.priming!;
    // robust-input's probes go one at a time: what came back after the first quiet call was sent.
    const { id, at } = firstQuietCall(transcript, report);
    const after = transcript.slice(at + 1).filter((l) => l.dir === 'recv');
    expect(after[0]!.message).toMatchObject({ method: 'notifications/message', params: { logger: 'priming', data: 'working on tools/call' } });
    expect(after[1]!.message).toMatchObject({ method: 'ping', id: expect.stringMatching(/^srv-\d+$/) });
    // The reply (the core refuses the probe's arguments with a JSON-RPC error).
    expect(after[2]!.message).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32602 } });
    // sealmark's client answered the server's ping (a POST, which got 202).
    const pingId = after[1]!.message.id;
    expect(transcript.some((l) => l.dir === 'send' && l.message.id === pingId && 'result' in l.message)).toBe(true);
    // No empty message anywhere in the transcript: the priming and ping events were skipped.
    for (const l of transcript.filter((x) => x.dir === 'recv')) expect(l.message.jsonrpc, JSON.stringify(l)).toBe('2.0');
  }, SLOW);

  it('the legacy HTTP+SSE stream: empty-data events, comments and ping events are skipped there too', async () => {
    const [{ report: clean }, { report, run }] = await Promise.all([runs.clean!, runs.legacy!]);
    expect(report.status, run.stderr).toBe('audited');
    expect(checkOf(report, 'handshake').findings.map((f) => f.message)).toEqual(['negotiated 2025-11-25 (initialize handshake) with priming-fixture 1.0.0']);
    expect(report.tools.map((t) => t.name)).toEqual(['get_note']);
    for (const c of toolCalls(report)) expect(c.reply.kind, c.request).toBe('response');
    expect(verdicts(report)).toEqual(verdicts(clean));
  }, SLOW);
});

describe('2. a stream that ends before its reply', () => {
  it('is resumed with GET + Last-Event-ID, during the handshake too: the audit is that of clean-raw.mjs', async () => {
    const [{ report: clean }, { report, run, transcript }] = await Promise.all([runs.clean!, runs.resume!]);
    expect(report.status, run.stderr).toBe('audited');
    expect(checkOf(report, 'handshake').verdict).toBe('pass');
    expect(checkOf(report, 'handshake').findings.map((f) => f.message)).toEqual(['negotiated 2025-11-25 (initialize handshake) with drops-stream-fixture 1.0.0']);
    expect(report.tools.map((t) => t.name)).toEqual(['get_note']);
    expect(verdicts(report)).toEqual(verdicts(clean));
    for (const c of toolCalls(report)) expect(c.reply.kind, c.request).toBe('response');
    // The notification sent before each drop was delivered, before the reply.
    const { id, at } = firstQuietCall(transcript, report);
    const after = transcript.slice(at + 1).filter((l) => l.dir === 'recv');
    expect(after[0]!.message).toMatchObject({ method: 'notifications/message', params: { data: 'dropping tools/call' } });
    expect(after[1]!.message).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32602 } });
  }, SLOW);

  it('each dropped stream was resumed once, with the last event id, the session and the version; the GET stream is closed once the reply came', async () => {
    await runs.resume!;
    const f = fixtures.resume!;
    const dropped = logLines(f, 'dropped ');
    const gets = logLines(f, 'GET last-event-id=');
    // server/discover, initialize, tools/list and every call: all dropped, all resumed.
    expect(dropped[0]).toBe('dropped 0 server/discover');
    expect(dropped[1]).toBe('dropped 1 initialize');
    expect(dropped.length).toBeGreaterThan(20);
    expect(gets).toHaveLength(dropped.length);
    const session = /session=([0-9a-f-]{36})/.exec(gets[0]!)![1];
    for (const [i, g] of gets.entries()) {
      const m = /^GET last-event-id=(\d+)-1 session=(\S+) version=(\S+) accept=(.+) -> 200$/.exec(g);
      expect(m, g).not.toBeNull();
      expect(m![2], g).toBe(session);
      expect(m![4], g).toBe('text/event-stream');
      // Before the handshake is done there is no negotiated version to send.
      if (i >= 2) expect(m![3], g).toBe('2025-11-25');
    }
    expect(new Set(gets.map((g) => /last-event-id=(\d+)-/.exec(g)![1])).size).toBe(gets.length);
    // The fixture keeps a resumed stream open after the reply (as the SDK's replayEvents does);
    // sealmark closes it once its reply came, well before the audit ends.
    const closed = logLines(f, 'GET closed ');
    expect(closed).toHaveLength(gets.length);
    const ms = closed.map((l) => Number(/after (\d+) ms/.exec(l)![1]));
    expect(Math.max(...ms), closed.join('\n')).toBeLessThan(3000);
  }, SLOW);

  it('a resume that brings nothing is tried again: the replies come on the second GET', async () => {
    const { report, run } = await runs.flaky!;
    expect(report.status, run.stderr).toBe('audited');
    expect(checkOf(report, 'handshake').verdict).toBe('pass');
    expect(toolCalls(report).length).toBeGreaterThanOrEqual(5);
    for (const c of toolCalls(report)) expect(c.reply.kind, c.request).toBe('response');
    const f = fixtures.flaky!;
    expect(logLines(f, 'GET last-event-id=')).toHaveLength(2 * logLines(f, 'dropped ').length);
  }, SLOW);

  it('without resumption (GET 405): each call is a broken reply at once, naming the ended stream and the refused GET', async () => {
    const { report, run } = await runs.noResume!;
    expect(report.status, run.stderr).toBe('audited');
    expect(checkOf(report, 'handshake').verdict).toBe('pass');
    expect(report.tools.map((t) => t.name)).toEqual(['get_note']);
    const calls = toolCalls(report);
    expect(calls.length).toBeGreaterThan(20);
    for (const c of calls) {
      expect(c.reply.kind, c.request).toBe('malformed');
      if (c.class !== undefined) expect(c.class, c.request).toBe('protocol-error');
      expect(c.reply.problem).toMatch(/^HTTP 200: the event stream ended without a reply to this request; resuming it \(GET with Last-Event-ID \d+-1\) was answered HTTP 405$/);
      // Not a hang: settled as soon as the GET was refused (the probe limit is 5 s).
      expect(c.durationMs, c.request).toBeLessThan(2500);
    }
    // The findings carry it as evidence.
    const ri = checkOf(report, 'robust-input').findings.find((f) => f.messageId === 'protocol-error')!;
    expect(ri.message).toMatch(/^get_note: the reply to \S+ is not valid JSON-RPC \(HTTP 200: the event stream ended without a reply to this request; resuming it \(GET with Last-Event-ID \d+-1\) was answered HTTP 405\)$/);
    expect(checkOf(report, 'robust-input').verdict).toBe('partial');
    // One GET per dropped stream, no retry after a 405.
    const f = fixtures.noResume!;
    expect(logLines(f, 'GET last-event-id=')).toHaveLength(logLines(f, 'dropped ').length);
    for (const g of logLines(f, 'GET ')) expect(g).toMatch(/ -> 405$/);
  }, SLOW);

  it('a stream that carried no event id is not resumed: a broken reply at once, as before', async () => {
    const { report, run } = await runs.noId!;
    expect(report.status, run.stderr).toBe('audited');
    const calls = toolCalls(report);
    expect(calls.length).toBeGreaterThanOrEqual(5);
    for (const c of calls) {
      expect(c.reply.kind, c.request).toBe('malformed');
      expect(c.reply.problem).toBe('HTTP 200: the event stream ended without a reply to this request');
      expect(c.durationMs, c.request).toBeLessThan(2500);
    }
    expect(logLines(fixtures.noId!, 'GET ')).toEqual([]);
  }, SLOW);
});

describe('3. the official server-everything over Streamable HTTP and HTTP+SSE, against its stdio audit', () => {
  let stdio: Report;
  let http: Record<'streamable' | 'sse', Report>;
  beforeAll(async () => {
    const [a, b, c] = await Promise.all([runs.stdio!, runs.streamable!, runs.sse!]);
    stdio = a.report;
    http = { streamable: b.report, sse: c.report };
    for (const [n, r] of [['stdio', a], ['streamable', b], ['sse', c]] as const) {
      expect(r.report.status, `${n}: ${r.run.stderr}`).toBe('audited');
      // secret-echo and bounded-limits fail at severity error (see below).
      expect(r.run.code, `${n}: ${r.run.stderr}`).toBe(1);
    }
  }, SLOW);

  it('audited: the same 13 tools, protocol 2025-11-25, a clean handshake (the priming events are not noise)', () => {
    for (const r of [stdio, http.streamable, http.sse]) {
      expect(r.tools.map((t) => t.name)).toEqual(EVERYTHING_TOOLS);
      expect(r.protocol).toEqual({ version: '2025-11-25', era: 'legacy', server: { name: 'mcp-servers/everything', version: '2.0.0' } });
      expect(checkOf(r, 'handshake').verdict).toBe('pass');
      expect(checkOf(r, 'handshake').findings.map((f) => f.message)).toEqual(['negotiated 2025-11-25 (initialize handshake) with mcp-servers/everything 2.0.0']);
    }
    expect(http.streamable.target).toMatchObject({ kind: 'http', url: servers.streamable!.url });
    expect(http.sse.target).toMatchObject({ kind: 'http', url: servers.sse!.url });
  });

  it('the checks that judge the tools: the same verdict and fail/partial fingerprints over every transport', () => {
    for (const id of TOOL_CHECKS) {
      const base = { verdict: checkOf(stdio, id).verdict, fingerprints: fingerprints(stdio, id) };
      for (const n of ['streamable', 'sse'] as const) {
        expect({ verdict: checkOf(http[n], id).verdict, fingerprints: fingerprints(http[n], id) }, `${id} over ${n}`).toEqual(base);
      }
    }
    // Not all n/a: what the server really has.
    expect(checkOf(stdio, 'bounded-limits').verdict).toBe('fail');
    expect(graded(stdio, 'bounded-limits')).toContain('fail no-answer:trigger-long-running-operation');
    expect(checkOf(stdio, 'idempotency-key').verdict).toBe('partial');
    for (const id of ['robust-input', 'tool-schemas', 'oversized-input', 'concurrency', 'annotations']) expect(checkOf(stdio, id).verdict, id).toBe('pass');
  });

  it('protocol-errors: array-params is dropped unanswered over stdio, answered with a 400 over HTTP', () => {
    // stdio: the v1 SDK's stdio transport drops a message its schema refuses (params: []) without
    // a word, so the request waits out the 3 s limit: partial no-reply. Over HTTP the transport
    // answers the POST itself: Streamable HTTP with 400 and a JSON-RPC parse error (id null),
    // the legacy POST handler with 400 and a text body (an error reply whose code is the status).
    expect(checkOf(stdio, 'protocol-errors').verdict).toBe('partial');
    expect(graded(stdio, 'protocol-errors')).toEqual(['partial no-reply:-']);
    expect(callOf(stdio, 'array-params').reply.kind).toBe('hang');
    for (const n of ['streamable', 'sse'] as const) {
      expect(checkOf(http[n], 'protocol-errors').verdict, n).toBe('pass');
      expect(callOf(http[n], 'array-params').reply.kind, n).toBe('response');
    }
    expect(callOf(http.streamable, 'array-params').reply.raw).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON-RPC message' }, id: null });
    expect(callOf(http.sse, 'array-params').reply.raw).toMatchObject({ httpStatus: 400, body: expect.stringMatching(/^Invalid message: /) });
  });

  it('the raw limit values (NaN, ±Infinity): dropped over stdio, refused with 400 over HTTP; the same bounded-limits verdict', () => {
    // Same reason: the stdio transport drops a line that is not JSON (bounded-limits' info
    // `dropped`); the HTTP servers refuse the POST with 400.
    for (const probe of ['raw-nan', 'raw-infinity', 'raw-minus-infinity']) {
      for (const c of stdio.calls.filter((x) => x.probe === probe)) expect(c.reply.kind, `${probe} ${c.tool}`).toBe('hang');
      for (const n of ['streamable', 'sse'] as const) {
        for (const c of http[n].calls.filter((x) => x.probe === probe)) expect(c.class, `${probe} ${c.tool} ${n}`).toMatch(/^rejected/);
      }
    }
    expect(checkOf(stdio, 'bounded-limits').findings.some((f) => f.messageId === 'dropped')).toBe(true);
    for (const n of ['streamable', 'sse'] as const) expect(checkOf(http[n], 'bounded-limits').findings.some((f) => f.messageId === 'dropped'), n).toBe(false);
  });

  it('default-call-effects and filler-call-effects: judged in the stdio sandbox, n/a over HTTP (no sandbox, no --allow-effects)', () => {
    // stdio: the sandbox watches the {} and filler calls. gzip-file-as-resource's fetch is refused
    // by the allow-list before any connection, so no call has an effect.
    expect(checkOf(stdio, 'default-call-effects').verdict).toBe('pass');
    expect(checkOf(stdio, 'filler-call-effects').verdict).toBe('pass');
    expect(stdio.calls.filter((c) => c.probe === 'default-call').length).toBeGreaterThan(5);
    // HTTP: sealmark cannot see a remote server's side effects, so it makes no such call at all.
    for (const n of ['streamable', 'sse'] as const) {
      expect(http[n].calls.filter((c) => c.probe === 'default-call' || c.probe === 'filler-call'), n).toEqual([]);
      for (const id of ['default-call-effects', 'filler-call-effects']) {
        expect(checkOf(http[n], id).verdict, `${id} ${n}`).toBe('n/a');
        expect(checkOf(http[n], id).notes.join(' '), `${id} ${n}`).toMatch(/^a server reached by URL runs outside any sandbox and no --allow-effects/);
      }
    }
  });

  it('secret-echo: get-env hands out the environment; the planted canaries over stdio, the token by its pattern over HTTP', () => {
    // stdio: sealmark plants its canaries in the environment of the server it starts. Over HTTP
    // it started nothing and can plant nothing; the servers were started with a GitHub-shaped
    // token in their environment, caught by its credential pattern (and redacted).
    expect(checkOf(stdio, 'secret-echo').verdict).toBe('fail');
    expect(graded(stdio, 'secret-echo')).toEqual(['fail env-canary:get-env']);
    for (const n of ['streamable', 'sse'] as const) {
      expect(checkOf(http[n], 'secret-echo').verdict, n).toBe('fail');
      expect(graded(http[n], 'secret-echo'), n).toEqual(['fail pattern:get-env']);
      expect(JSON.stringify(http[n]), n).not.toContain(CANARY_TOKEN);
    }
  });

  it('the remaining checks agree, and the grades differ only by the effects pack', () => {
    const explained = new Set(['protocol-errors', 'default-call-effects', 'filler-call-effects', 'secret-echo']);
    for (const c of stdio.checks) {
      if (explained.has(c.id) || (TOOL_CHECKS as readonly string[]).includes(c.id)) continue;
      for (const n of ['streamable', 'sse'] as const) expect(checkOf(http[n], c.id).verdict, `${c.id} ${n}`).toBe(c.verdict);
    }
    // The HTTP runs grade alike; against stdio, only the packs with an explained difference move.
    expect(http.sse.grade).toEqual(http.streamable.grade);
    const packs = (r: Report) => Object.fromEntries(r.grade.packs.map((p) => [p.pack, p.percent]));
    expect(packs(http.streamable).limits).toBe(packs(stdio).limits);
    expect(packs(http.streamable).design).toBe(packs(stdio).design);
    expect(packs(http.streamable).secrets).toBe(packs(stdio).secrets);
    // secret-echo caps every one at D.
    for (const r of [stdio, http.streamable, http.sse]) expect(r.grade.caps).toEqual([{ check: 'secret-echo', letter: 'D' }]);
  });
});
