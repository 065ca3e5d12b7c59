/**
 * `sealmark audit --url` and `sealmark call --url` end to end, through the real binary
 * `node bin/sealmark.js` (needs a fresh dist/: `npm run build`), against the HTTP fixture servers
 * of test/fixtures/servers/http/ started on loopback by this file:
 *
 * 1. parity: the same tool set over stdio, Streamable HTTP (SSE replies and `--json` replies), the
 *    legacy HTTP+SSE transport and the 2026-07-28 stateless server gets the same verdicts and the
 *    same finding fingerprints on the checks that judge the tools; each legitimate difference
 *    (effects, protocol-errors' array-params, secret-echo, the raw limit values) is asserted with
 *    its reason;
 * 2. what each report says it negotiated, and how (the transcript, and the HTTP requests seen by a
 *    recording proxy placed between sealmark and the fixture);
 * 3. the Streamable HTTP session id on every request after initialize; the 2026-07-28 headers;
 * 4. bearer tokens and headers (401, 403, the right token; the token printed nowhere; replays);
 *    usage errors of --url, --header and --bearer-token-env;
 * 5. failures: a closed port, TLS to a plain HTTP server, a server that dies mid-audit;
 * 6. a raw (not-JSON) probe over HTTP and its replay.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from '../helpers/run.js';
import { TOOL_CHECKS, startHttpFixture, type HttpFixture } from '../helpers/http.js';
import { concurrencyLimit, runCli, type CliRun } from '../helpers/cli.js';
import { replayLine } from '../../src/replay.js';
import type { Report, ReportCall, ReportCheck } from '../../src/report/build.js';

/** Two cores shared by a dozen audits: generous. */
const SLOW = 240_000;
/** The stdio baseline, as a path relative to the repository root (the runs' cwd). */
const STDIO_FIXTURE = 'test/fixtures/servers/http/stdio.mjs';
/**
 * The value of SEALMARK_CANARY_TOKEN in the HTTP fixtures' environment (tools.mjs `whoami` echoes
 * it): a GitHub token by its shape (`ghp_` + 36 alphanumerics), so that secret-echo's credential
 * patterns catch it, since sealmark cannot plant its own canary in a server it did not start.
 */
const CANARY_TOKEN = 'ghp_Zq8Lw3Nt6Vb1Xc4Rd7Hs2Jk5Mf9Pg0Ya3Ue8';
/** The bearer fixture's token (random per run: it must be found nowhere in sealmark's output). */
const BEARER_TOKEN = `tok-${randomBytes(16).toString('hex')}`;
/** The environment variable the token is handed to sealmark in. */
const TOKEN_VAR = 'SEALMARK_TEST_BEARER';


/** `runCli`, at most two at once (see {@link limited}), in the repository root. */
function run(args: string[], opts: { shell?: string; env?: Record<string, string | undefined> } = {}): Promise<CliRun> {
  return limited(() => runCli(args, opts));
}

/** At most two sealmark processes at once (two cores; a starved server would look like a hang). */
const limited = concurrencyLimit(2);

const tmpDirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sealmark-http-test-'));
  tmpDirs.push(d);
  return d;
}

/** An audit run with its JSON report (and transcript / SARIF when asked for). */
interface Audited {
  run: CliRun;
  report: Report;
  /** The raw text of the JSON report file. */
  json: string;
  transcript?: string;
  sarif?: string;
}

/** `sealmark audit …args --format json --output <tmp>`, plus a transcript and SARIF when asked. */
async function auditRun(args: string[], opts: { transcript?: boolean; sarif?: boolean; env?: Record<string, string | undefined> } = {}): Promise<Audited> {
  const dir = tempDir();
  const out = ['--format', 'json', '--output', join(dir, 'report.json')];
  if (opts.sarif) out.push('--format', 'sarif', '--output', join(dir, 'report.sarif'));
  if (opts.transcript) out.push('--transcript', join(dir, 't.jsonl'));
  // Options go before `--` (a stdio command ends the option list).
  const dash = args.indexOf('--');
  const argv = dash < 0 ? ['audit', ...args, ...out] : ['audit', ...args.slice(0, dash), ...out, ...args.slice(dash)];
  const r = await run(argv, { env: opts.env });
  const file = join(dir, 'report.json');
  if (!existsSync(file)) throw new Error(`no report written (exit ${r.code})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  const json = readFileSync(file, 'utf8');
  return {
    run: r,
    report: JSON.parse(json) as Report,
    json,
    transcript: opts.transcript ? readFileSync(join(dir, 't.jsonl'), 'utf8') : undefined,
    sarif: opts.sarif ? readFileSync(join(dir, 'report.sarif'), 'utf8') : undefined,
  };
}

function checkOf(report: Report, id: string): ReportCheck {
  const c = report.checks.find((x) => x.id === id);
  if (!c) throw new Error(`check ${id} not in report`);
  return c;
}

/** `messageId:tool` of a check's fail/partial findings, sorted. */
function graded(report: Report, id: string): string[] {
  return checkOf(report, id)
    .findings.filter((f) => f.level !== 'info')
    .map((f) => `${f.level} ${f.messageId}:${f.tool ?? '-'}`)
    .sort();
}

/** Fingerprints of a check's fail/partial findings, sorted. */
function fingerprints(report: Report, id: string): string[] {
  return checkOf(report, id)
    .findings.filter((f) => f.level !== 'info')
    .map((f) => f.fingerprint)
    .sort();
}

/** `checkId/messageId/tool` of each fail/partial fingerprint, sorted (what follows is the location detail). */
function fingerprintHeads(report: Report, id: string): string[] {
  return fingerprints(report, id).map((f) => f.split('/').slice(0, 3).join('/'));
}

/** The one call of a report with this probe (and tool); throws when there is not exactly one. */
function callOf(report: Report, probe: string, tool?: string): ReportCall {
  const found = report.calls.filter((c) => c.probe === probe && (tool === undefined || c.tool === tool));
  if (found.length !== 1) throw new Error(`${found.length} calls of ${probe}${tool ? ` on ${tool}` : ''}`);
  return found[0]!;
}

/** Transcript lines (JSON lines written by --transcript). */
function transcriptLines(text: string): { dir: 'send' | 'recv'; ms: number; message: Record<string, unknown> }[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { dir: 'send' | 'recv'; ms: number; message: Record<string, unknown> });
}

/** A replay line run through the shell with the real binary in place of `sealmark`. */
function runReplay(line: string, env?: Record<string, string | undefined>): Promise<CliRun> {
  expect(line).toMatch(/^sealmark call /);
  return run([], { shell: line, env });
}

/** One HTTP request a {@link RecordingProxy} passed on, and the status it got. */
interface Seen {
  method: string;
  /** Path and query, e.g. /messages?sessionId=… */
  path: string;
  headers: IncomingHttpHeaders;
  /** The JSON-RPC method, id and tool name of a POST body (read with patterns: raw probes are not JSON). */
  rpcMethod?: string;
  rpcId?: number | string;
  toolName?: string;
  status?: number;
  responseHeaders?: IncomingHttpHeaders;
}

/**
 * A transparent HTTP proxy on loopback in front of a fixture, recording every request's method,
 * path, headers and JSON-RPC method, and the status it got: what sealmark's HTTP client really put
 * on the wire (the session id, the version headers, the legacy GET stream), which neither the
 * report nor the transcript (JSON-RPC messages only) shows. Responses are streamed through
 * unchanged (the legacy transport's event stream stays open).
 */
interface RecordingProxy {
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

function startProxy(fixtureUrl: string): Promise<RecordingProxy> {
  const target = new URL(fixtureUrl);
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const text = body.toString('utf8');
      const entry: Seen = { method: req.method!, path: req.url!, headers: req.headers };
      const method = /"method"\s*:\s*"([^"]+)"/.exec(text)?.[1];
      if (method) entry.rpcMethod = method;
      const id = /"id"\s*:\s*(\d+|"[^"]*")/.exec(text)?.[1];
      if (id !== undefined) entry.rpcId = id.startsWith('"') ? (JSON.parse(id) as string) : Number(id);
      const name = /"params"\s*:\s*\{\s*"name"\s*:\s*"([^"]+)"/.exec(text)?.[1];
      if (method === 'tools/call' && name) entry.toolName = name;
      seen.push(entry);
      const up = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (ur) => {
        entry.status = ur.statusCode;
        entry.responseHeaders = ur.headers;
        res.writeHead(ur.statusCode!, ur.rawHeaders);
        ur.pipe(res);
      });
      up.on('error', () => res.destroy());
      res.on('close', () => up.destroy());
      up.end(body);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      resolve({
        url: `http://127.0.0.1:${port}${target.pathname}`,
        seen,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Fixtures and runs, started once.

const fixtures: Record<string, HttpFixture> = {};
const proxies: Record<string, RecordingProxy> = {};
/** The runs, started in beforeAll and awaited by the tests that need them. */
const runs: Record<string, Promise<Audited>> = {};
/** URL of a fixture that was started and stopped again: nothing listens there. */
let closedUrl: string;

beforeAll(async () => {
  if (!existsSync(join(root, 'dist', 'cli.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test builds first)');
  const canary = { SEALMARK_CANARY_TOKEN: CANARY_TOKEN };
  const started = await Promise.all([
    startHttpFixture('streamable.mjs', [], canary),
    startHttpFixture('streamable.mjs', ['--json'], canary),
    startHttpFixture('legacy-sse.mjs', [], canary),
    startHttpFixture('stateless.mjs', [], canary),
    startHttpFixture('stateless.mjs', ['--modern-only'], canary),
    startHttpFixture('bearer.mjs', ['--echo-headers'], { FIXTURE_TOKEN: BEARER_TOKEN }),
    startHttpFixture('dies.mjs', ['--after', '20']),
    startHttpFixture('streamable.mjs', []),
    startHttpFixture('streamable.mjs', []),
  ]);
  [fixtures.streamable, fixtures.json, fixtures.legacy, fixtures.stateless, fixtures.modernOnly, fixtures.bearer, fixtures.dies, fixtures.raw] = started;
  const closed = started[8]!;
  closedUrl = closed.url;
  await closed.stop();
  // The proxies record what sealmark sends; the parity runs of these three go through them.
  proxies.streamable = await startProxy(fixtures.streamable!.url);
  proxies.legacy = await startProxy(fixtures.legacy!.url);
  proxies.stateless = await startProxy(fixtures.stateless!.url);
  proxies.raw = await startProxy(fixtures.raw!.url);

  // The stdio baseline first: it spends most of its time waiting (the v1 stdio server never
  // answers a line it cannot parse), so it overlaps well with the HTTP runs.
  runs.stdio = auditRun(['--', 'node', STDIO_FIXTURE], { transcript: true });
  runs.streamable = auditRun(['--url', proxies.streamable.url], { transcript: true });
  runs.json = auditRun(['--url', fixtures.json!.url]);
  runs.legacy = auditRun(['--url', proxies.legacy.url], { transcript: true });
  runs.stateless = auditRun(['--url', proxies.stateless.url], { transcript: true });
  runs.modernOnly = auditRun(['--url', fixtures.modernOnly!.url]);
  runs.raw = auditRun(['--url', proxies.raw.url, '--only', 'bounded-limits']);
  runs.dies = auditRun(['--url', fixtures.dies!.url]);
  // Whatever a test does not await must not become an unhandled rejection.
  for (const p of Object.values(runs)) p.catch(() => {});
}, SLOW);

afterAll(async () => {
  await Promise.allSettled(Object.values(runs));
  await Promise.all(Object.values(proxies).map((p) => p.close()));
  await Promise.all(Object.values(fixtures).map((f) => f.stop()));
  for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
}, SLOW);

/** The parity runs, by transport. */
const HTTP_RUNS = ['streamable', 'json', 'legacy', 'stateless', 'modernOnly'] as const;

// ---------------------------------------------------------------------------------------------

describe('1. parity: the same tools get the same verdicts over every transport', () => {
  let reports: Record<'stdio' | (typeof HTTP_RUNS)[number], Report>;
  beforeAll(async () => {
    const names = ['stdio', ...HTTP_RUNS] as const;
    const done = await Promise.all(names.map((n) => runs[n]!));
    reports = Object.fromEntries(names.map((n, i) => [n, done[i]!.report])) as typeof reports;
    // Each was audited (exit 1: secret-echo and bounded-limits fail at severity error).
    for (const [i, n] of names.entries()) {
      expect(done[i]!.report.status, n).toBe('audited');
      expect(done[i]!.run.code, `${n}: ${done[i]!.run.stderr}`).toBe(1);
    }
  }, SLOW);

  it('the checks that judge the tools: the same verdict and the same fail/partial fingerprints everywhere', () => {
    for (const id of TOOL_CHECKS) {
      const base = { verdict: checkOf(reports.stdio, id).verdict, fingerprints: fingerprints(reports.stdio, id) };
      for (const n of HTTP_RUNS) {
        expect({ verdict: checkOf(reports[n], id).verdict, fingerprints: fingerprints(reports[n], id) }, `${id} over ${n}`).toEqual(base);
      }
    }
  });

  it('those verdicts are the planted faults (not all n/a)', () => {
    for (const r of Object.values(reports)) {
      expect(r.tools.map((t) => t.name)).toEqual(['get_item', 'add_item', 'list_items', 'whoami']);
      const v = (id: string) => checkOf(r, id).verdict;
      expect(v('robust-input')).toBe('partial');
      expect(graded(r, 'robust-input')).toEqual(['partial accepted:add_item', 'partial internal-error:get_item']);
      expect(fingerprintHeads(r, 'robust-input')).toEqual(['robust-input/accepted/add_item', 'robust-input/internal-error/get_item']);
      expect(v('bounded-limits')).toBe('fail');
      expect(graded(r, 'bounded-limits')).toEqual([
        'fail admitted:add_item',
        'fail zero-unlimited:list_items',
        'partial no-maximum:add_item',
        'partial no-maximum:list_items',
        'partial no-minimum:add_item',
      ]);
      expect(fingerprintHeads(r, 'bounded-limits')).toContain('bounded-limits/zero-unlimited/list_items');
      expect(v('annotations')).toBe('partial');
      expect(graded(r, 'annotations')).toEqual(['partial no-read-only-hint:add_item']);
      // add_item states no idempotentHint: annotations scores the missing hints, idempotency-key only notes the key.
      expect(v('idempotency-key')).toBe('pass');
      expect(checkOf(r, 'idempotency-key').findings.filter((f) => f.messageId === 'no-key').map((f) => [f.tool, f.level])).toEqual([['add_item', 'info']]);
      for (const id of ['tool-schemas', 'armed-flags', 'hidden-params', 'oversized-input', 'concurrency', 'tool-naming']) expect(v(id), id).toBe('pass');
      expect(v('two-step-writes')).toBe('n/a');
      expect(v('handshake')).toBe('pass');
    }
  });

  it('the evidence is the same text: get_item crashes on id.trim, add_item adds anything, list_items limit 0 lists all', () => {
    for (const [n, r] of Object.entries(reports)) {
      const ie = checkOf(r, 'robust-input').findings.find((f) => f.messageId === 'internal-error')!;
      expect(ie.message, n).toBe("get_item: an unhandled runtime error came back instead of a validation error (missing-required): Cannot read properties of undefined (reading 'trim')");
      expect(callOf(r, 'missing-required', 'add_item').reply.raw, n).toMatchObject({ result: { content: [{ type: 'text', text: 'added item-4: undefined x1' }] } });
      const zero = checkOf(r, 'bounded-limits').findings.find((f) => f.messageId === 'zero-unlimited')!;
      expect(zero.message, n).toMatch(/^list_items: limit = 0 returned \d+ items, more than limit = 1 \(1\): zero means unlimited$/);
    }
  });

  it('default-call-effects and filler-call-effects: judged in the stdio sandbox, n/a over HTTP (no sandbox, no --allow-effects)', () => {
    // stdio: the sandbox watches the default calls ({} to list_items and whoami, the tools with no
    // required argument) and sees no effect. HTTP: sealmark cannot see a remote server's side
    // effects, so without --allow-effects it does not make those calls at all.
    expect(checkOf(reports.stdio, 'default-call-effects').verdict).toBe('pass');
    expect(reports.stdio.calls.filter((c) => c.probe === 'default-call').map((c) => c.tool)).toEqual(['list_items', 'whoami']);
    // No tool has a property a filler would arm: n/a on stdio for that reason.
    expect(checkOf(reports.stdio, 'filler-call-effects')).toMatchObject({ verdict: 'n/a', notes: ['no tool has a property a filler would arm'] });
    for (const n of HTTP_RUNS) {
      const r = reports[n];
      expect(r.calls.filter((c) => c.probe === 'default-call' || c.probe === 'filler-call'), n).toEqual([]);
      for (const id of ['default-call-effects', 'filler-call-effects']) {
        const c = checkOf(r, id);
        expect(c.verdict, `${id} over ${n}`).toBe('n/a');
        expect(c.notes.join(' '), `${id} over ${n}`).toMatch(/^a server reached by URL runs outside any sandbox and no --allow-effects/);
      }
    }
  });

  it('over HTTP the effects and design notes say why without blaming --no-sandbox, which was never given', () => {
    for (const n of HTTP_RUNS) {
      for (const id of ['default-call-effects', 'filler-call-effects', 'idempotency-key']) {
        expect(checkOf(reports[n], id).notes.join(' '), `${id} over ${n}`).not.toContain('--no-sandbox');
      }
    }
  });

  it('protocol-errors: array-params is never answered by the v1 stdio server, and answered with a 400 over every HTTP transport', () => {
    // stdio: the v1 SDK's stdio transport drops a message its schema refuses (params: []) without
    // a word, so the request waits out the hang limit: partial no-reply.
    expect(checkOf(reports.stdio, 'protocol-errors').verdict).toBe('partial');
    expect(fingerprintHeads(reports.stdio, 'protocol-errors')).toEqual(['protocol-errors/no-reply/-']);
    const noReply = checkOf(reports.stdio, 'protocol-errors').findings.find((f) => f.messageId === 'no-reply')!;
    expect(noReply.evidence.calls).toEqual([callOf(reports.stdio, 'array-params').seq]);
    expect(callOf(reports.stdio, 'array-params').reply.kind).toBe('hang');
    // HTTP: the transport answers the POST itself, so the request is answered.
    for (const n of HTTP_RUNS) {
      expect(checkOf(reports[n], 'protocol-errors').verdict, n).toBe('pass');
      expect(callOf(reports[n], 'array-params').reply.kind, n).toBe('response');
    }
    // On the wire, each HTTP server refused that POST with status 400 (the recording proxies).
    for (const n of ['streamable', 'legacy', 'stateless'] as const) {
      const id = (JSON.parse(callOf(reports[n], 'array-params').request) as { id: number }).id;
      expect(proxies[n]!.seen.filter((s) => s.rpcId === id).map((s) => `${s.method} ${s.status}`), n).toEqual(['POST 400']);
    }
    // v1 Streamable HTTP: 400 with a JSON-RPC parse error, id null (it answers the POST it came in).
    for (const n of ['streamable', 'json'] as const) {
      expect(callOf(reports[n], 'array-params').reply.raw, n).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON-RPC message' }, id: null });
    }
    // Legacy HTTP+SSE: the SDK's POST handler refuses it with 400 and a text body: an error reply
    // whose code is the status (wire.ts onRejected).
    const legacy = callOf(reports.legacy, 'array-params').reply.raw as { httpStatus: number; body: string };
    expect(legacy.httpStatus).toBe(400);
    expect(legacy.body).toMatch(/^Invalid message: \{"jsonrpc":"2\.0","id":\d+,"method":"tools\/call","params":\[\]\}$/);
    // 2026-07-28 stateless (v2 server): -32600 under the request's own id.
    for (const n of ['stateless', 'modernOnly'] as const) {
      const c = callOf(reports[n], 'array-params');
      expect(c.reply.raw, n).toMatchObject({ jsonrpc: '2.0', error: { code: -32600, message: 'Bad Request: the request body is not a valid JSON-RPC message' } });
      expect((c.reply.raw as { id: unknown }).id, n).toBe(JSON.parse(c.request).id);
    }
  });

  it('secret-echo: the env canary over stdio; over HTTP the token only by its credential pattern, never in clear', () => {
    // stdio: sealmark plants SEALMARK_CANARY_TOKEN (and its other canaries) in the environment of
    // the server it starts; whoami echoes it. Over HTTP sealmark did not start the server and can
    // plant nothing: the fixtures were started with a GitHub-shaped token, caught by its pattern.
    expect(checkOf(reports.stdio, 'secret-echo').verdict).toBe('fail');
    expect(graded(reports.stdio, 'secret-echo')).toEqual(['fail env-canary:whoami']);
    for (const n of HTTP_RUNS) {
      expect(checkOf(reports[n], 'secret-echo').verdict, n).toBe('fail');
      expect(graded(reports[n], 'secret-echo'), n).toEqual(['fail pattern:whoami']);
      expect(fingerprintHeads(reports[n], 'secret-echo'), n).toEqual(['secret-echo/pattern/whoami']);
      expect(JSON.stringify(reports[n]), n).not.toContain(CANARY_TOKEN);
      expect(JSON.stringify(callOf(reports[n], 'read-only-no-args', 'whoami').reply.raw), n).toContain('token: [redacted:github-token]');
    }
  });

  it('the raw limit values (NaN, ±Infinity): dropped unanswered over stdio, refused with 400 over HTTP; same verdict', () => {
    // The v1 stdio transport drops a line that is not JSON (no reply: bounded-limits' info
    // `dropped`); every HTTP server answers the POST with 400 (streamable, stateless: a JSON-RPC
    // -32700 body; legacy: the SDK's text "Invalid message: <body>", which repeats the request and
    // so names the parameter: `rejected` rather than `rejected-unnamed`).
    for (const probe of ['raw-nan', 'raw-infinity', 'raw-minus-infinity']) {
      for (const tool of ['add_item', 'list_items']) {
        expect(callOf(reports.stdio, probe, tool).reply.kind, `${probe} ${tool}`).toBe('hang');
        for (const n of ['streamable', 'json', 'stateless', 'modernOnly'] as const) {
          const c = callOf(reports[n], probe, tool);
          expect(c.class, `${probe} ${tool} ${n}`).toBe('rejected-unnamed');
          expect(c.reply.raw, `${probe} ${tool} ${n}`).toMatchObject({ error: { code: -32700 }, id: null });
        }
        const l = callOf(reports.legacy, probe, tool);
        expect(l.class, `${probe} ${tool} legacy`).toBe('rejected');
        expect(l.reply.raw, `${probe} ${tool} legacy`).toMatchObject({ httpStatus: 400, body: expect.stringMatching(/^Invalid message: /) });
      }
    }
    expect(graded(reports.stdio, 'bounded-limits')).toEqual(graded(reports.streamable, 'bounded-limits'));
    expect(checkOf(reports.stdio, 'bounded-limits').findings.filter((f) => f.messageId === 'dropped').map((f) => f.tool)).toEqual(['add_item', 'list_items']);
  });
});

describe('2. each report says what it negotiated, over which transport', () => {
  it('Streamable HTTP (SSE and JSON replies): 2025-11-25, legacy era; target http; no sandbox, with its note', async () => {
    for (const name of ['streamable', 'json'] as const) {
      const { report } = await runs[name]!;
      const url = name === 'streamable' ? proxies.streamable!.url : fixtures.json!.url;
      expect(report.protocol).toEqual({ version: '2025-11-25', era: 'legacy', server: { name: 'http-tools-fixture', version: '1.0.0' } });
      expect(report.target).toMatchObject({ kind: 'http', command: [], url });
      expect(report.sandbox).toEqual({ kind: 'none', network: 'host', filesystem: 'none', protected: [], unprotected: [], note: 'a server reached by URL: sealmark cannot isolate it or see its side effects' });
      expect(checkOf(report, 'handshake').findings.map((f) => f.message)).toEqual(['negotiated 2025-11-25 (initialize handshake) with http-tools-fixture 1.0.0']);
    }
    // The stdio baseline, for contrast: a command, in the sandbox.
    const { report } = await runs.stdio!;
    expect(report.target).toMatchObject({ kind: 'stdio', command: ['node', STDIO_FIXTURE] });
    expect(report.sandbox.kind).toBe('sandbox');
  }, SLOW);

  it('stateless 2026-07-28 server (and --modern-only): 2026-07-28, modern era, through server/discover alone', async () => {
    for (const name of ['stateless', 'modernOnly'] as const) {
      const { report } = await runs[name]!;
      expect(report.protocol, name).toEqual({ version: '2026-07-28', era: 'modern', server: { name: 'http-tools-fixture', version: '1.0.0' } });
      expect(report.target, name).toMatchObject({ kind: 'http', url: name === 'stateless' ? proxies.stateless!.url : fixtures.modernOnly!.url });
      expect(report.sandbox.kind, name).toBe('none');
    }
    const { transcript } = await runs.stateless!;
    const lines = transcriptLines(transcript!);
    expect(lines[0]).toMatchObject({ dir: 'send', message: { method: 'server/discover' } });
    expect(lines[1]).toMatchObject({ dir: 'recv', message: { result: { supportedVersions: ['2026-07-28'] } } });
    expect(lines.some((l) => l.message.method === 'initialize')).toBe(false);
    // Every request after discovery carries the 2026-07-28 envelope in _meta.
    // (Raw lines and array params, which cannot carry it, aside.)
    for (const l of lines.filter((x) => x.dir === 'send' && 'id' in x.message && x.message.method !== 'server/discover')) {
      if (Array.isArray(l.message.params)) continue;
      expect((l.message.params as { _meta?: Record<string, unknown> })?._meta?.['io.modelcontextprotocol/protocolVersion'], JSON.stringify(l.message).slice(0, 200)).toBe('2026-07-28');
    }
  }, SLOW);

  it('legacy HTTP+SSE: 2025-11-25, legacy era, reached through the fallback: the POST refused with 405, then the GET event stream', async () => {
    const { report, transcript } = await runs.legacy!;
    expect(report.status).toBe('audited');
    expect(report.protocol).toEqual({ version: '2025-11-25', era: 'legacy', server: { name: 'http-tools-fixture', version: '1.0.0' } });
    expect(report.target).toMatchObject({ kind: 'http', url: proxies.legacy!.url });
    // Transcript: the Streamable HTTP attempt's discovery probe got the 405 body, then (a second
    // attempt, over the event stream) initialize and everything else.
    const lines = transcriptLines(transcript!);
    expect(lines[0]).toMatchObject({ dir: 'send', message: { method: 'server/discover' } });
    expect(lines[1]).toMatchObject({ dir: 'recv', message: { error: { code: -32000, message: 'Method not allowed.' }, id: null } });
    expect(lines[2]).toMatchObject({ dir: 'send', message: { method: 'initialize', params: { protocolVersion: '2025-11-25' } } });
    expect(lines[3]).toMatchObject({ dir: 'recv', message: { result: { protocolVersion: '2025-11-25' } } });
    expect(lines.filter((l) => l.message.method === 'server/discover')).toHaveLength(1);
    // The wire (the recording proxy): one POST to the URL (405, Allow: GET), then a GET of the URL
    // that became the event stream, and every later message POSTed to the endpoint it named.
    const seen = proxies.legacy!.seen;
    expect(seen[0]).toMatchObject({ method: 'POST', path: '/mcp', rpcMethod: 'server/discover', status: 405 });
    expect(seen[1]).toMatchObject({ method: 'GET', path: '/mcp', status: 200 });
    expect(seen[1]!.headers.accept).toBe('text/event-stream');
    expect(seen[1]!.responseHeaders?.['content-type']).toMatch(/^text\/event-stream/);
    const rest = seen.slice(2);
    expect(rest.length).toBeGreaterThan(50);
    expect(rest[0]).toMatchObject({ method: 'POST', rpcMethod: 'initialize' });
    const endpoint = rest[0]!.path;
    expect(endpoint).toMatch(/^\/messages\?sessionId=[0-9a-f-]{36}$/);
    for (const s of rest) expect(`${s.method} ${s.path}`).toBe(`POST ${endpoint}`);
    // The SDK's legacy POST handler accepts with 202; the replies come on the stream. Only the
    // raw probes and array-params (not valid JSON-RPC) are refused, with 400.
    const refused = rest.filter((s) => s.status !== 202);
    expect(refused.every((s) => s.status === 400)).toBe(true);
    expect(refused.map((s) => s.rpcMethod)).toEqual(refused.map(() => 'tools/call'));
  }, SLOW);
});

describe('3. session id and version headers on the wire', () => {
  it('Streamable HTTP (stateful): every request after initialize carries the session id the server gave, and MCP-Protocol-Version', async () => {
    const { report, transcript } = await runs.streamable!;
    // The fixture refuses a request without a valid session id (400 "No valid session ID
    // provided"): an audited report is already proof that the id went out.
    expect(report.status).toBe('audited');
    const lines = transcriptLines(transcript!);
    expect(lines[0]).toMatchObject({ dir: 'send', message: { method: 'server/discover' } });
    expect(lines[1]).toMatchObject({ dir: 'recv', message: { error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null } });
    const seen = proxies.streamable!.seen;
    // The 2026-07-28 probe first (no session yet: 400), then initialize, which gets the id.
    expect(seen[0]).toMatchObject({ method: 'POST', rpcMethod: 'server/discover', status: 400 });
    expect(seen[0]!.headers['mcp-session-id']).toBeUndefined();
    const init = seen.findIndex((s) => s.rpcMethod === 'initialize');
    expect(init).toBe(1);
    expect(seen[init]!.headers['mcp-session-id']).toBeUndefined();
    expect(seen[init]!.status).toBe(200);
    const sid = seen[init]!.responseHeaders?.['mcp-session-id'];
    expect(sid).toMatch(/^[0-9a-f-]{36}$/);
    const after = seen.slice(init + 1);
    expect(after.length).toBeGreaterThan(50);
    for (const s of after) {
      const what = `${s.method} ${s.rpcMethod ?? ''} ${s.rpcId ?? ''}`;
      expect(s.headers['mcp-session-id'], what).toBe(sid);
      expect(s.headers['mcp-protocol-version'], what).toBe('2025-11-25');
      expect(s.headers['mcp-method'], what).toBeUndefined();
      expect(s.status, what).not.toBe(404);
    }
    expect(after[0]).toMatchObject({ method: 'POST', rpcMethod: 'notifications/initialized', status: 202 });
    // At the end, the session is ended with DELETE (MCP 2025-11-25: the client SHOULD).
    expect(after.at(-1)).toMatchObject({ method: 'DELETE', status: 200 });
    expect(after.filter((s) => s.method !== 'POST')).toHaveLength(1);
  }, SLOW);

  it('2026-07-28 stateless: every request is a POST with MCP-Protocol-Version, Mcp-Method and (tools/call) Mcp-Name; no session id', async () => {
    await runs.stateless!;
    const seen = proxies.stateless!.seen;
    expect(seen.length).toBeGreaterThan(50);
    for (const s of seen) {
      const what = `${s.method} ${s.rpcMethod ?? ''} ${s.rpcId ?? ''}`;
      expect(s.method, what).toBe('POST');
      expect(s.headers['mcp-session-id'], what).toBeUndefined();
      expect(s.headers['mcp-protocol-version'], what).toBe('2026-07-28');
      expect(s.headers['mcp-method'], what).toBe(s.rpcMethod);
      if (s.rpcMethod === 'tools/call' && s.toolName) expect(s.headers['mcp-name'], what).toBe(s.toolName);
    }
    // Header and body agree, so the server never refuses one for a mismatch (-32020).
    expect(seen.filter((s) => s.status === 400).map((s) => s.rpcMethod)).toEqual(seen.filter((s) => s.status === 400).map(() => 'tools/call'));
  }, SLOW);
});

describe('4. bearer tokens, headers, and the usage errors of --url', () => {
  const tokenEnv = { [TOKEN_VAR]: BEARER_TOKEN };
  let none: Audited;
  let wrong: Audited;
  let ok: Audited;
  /** The token given the other way the 401 message suggests: --header 'Authorization: Bearer …'. */
  let viaHeader: Audited;
  beforeAll(async () => {
    const url = fixtures.bearer!.url;
    [none, wrong, ok, viaHeader] = await Promise.all([
      auditRun(['--url', url]),
      auditRun(['--url', url, '--bearer-token-env', TOKEN_VAR], { env: { [TOKEN_VAR]: 'not-the-token-at-all' } }),
      auditRun(['--url', url, '--bearer-token-env', TOKEN_VAR, '--header', 'X-Fixture-One: a'], { env: tokenEnv, transcript: true, sarif: true }),
      auditRun(['--url', url, '--header', `Authorization: Bearer ${BEARER_TOKEN}`, '--only', 'robust-input'], { transcript: true }),
    ]);
  }, SLOW);

  it('no token: exit 3, unauthorized; the message names --bearer-token-env and shows the WWW-Authenticate challenge', () => {
    expect(none.run.code).toBe(3);
    expect(none.report.status).toBe('not-audited');
    expect(none.report.notAudited?.reason).toBe('unauthorized');
    const msg = none.report.notAudited!.message;
    expect(msg).toContain('the server answered 401');
    expect(msg).toContain('WWW-Authenticate: Bearer realm="fixture"');
    expect(msg).toContain('--bearer-token-env VAR');
    expect(none.run.stderr).toContain(`sealmark: the target could not be audited: ${msg}`);
    expect(checkOf(none.report, 'handshake')).toMatchObject({ verdict: 'fail', findings: [{ messageId: 'unauthorized' }] });
  });

  it('a wrong token: 403, unauthorized, "the Authorization header was sent and refused"', () => {
    expect(wrong.run.code).toBe(3);
    expect(wrong.report.notAudited?.reason).toBe('unauthorized');
    expect(wrong.report.notAudited!.message).toContain('the server answered 403');
    expect(wrong.report.notAudited!.message).toContain('WWW-Authenticate: Bearer realm="fixture", error="invalid_token"');
    expect(wrong.report.notAudited!.message).toContain('the Authorization header was sent and refused');
    expect(wrong.json + wrong.run.stdout + wrong.run.stderr).not.toContain('not-the-token-at-all');
  });

  it('the right token through --bearer-token-env: audited, the same faults as without a token check', () => {
    expect(ok.report.status).toBe('audited');
    expect(ok.run.code).toBe(1);
    // --echo-headers adds a fifth tool.
    expect(ok.report.tools.map((t) => t.name)).toEqual(['get_item', 'add_item', 'list_items', 'whoami', 'headers']);
    expect(graded(ok.report, 'robust-input')).toEqual(['partial accepted:add_item', 'partial internal-error:get_item']);
    // The Authorization header went out on every request (MCP 2025-11-25 authorization: "MUST be
    // included in every HTTP request"): the fixture answers 401/403 to any request without it, so
    // no call may show such a refusal.
    expect(ok.report.calls.filter((c) => /HTTP 40[13]/.test(JSON.stringify(c.reply)))).toEqual([]);
  });

  it('the token is printed nowhere: stdout, stderr, the JSON report, the transcript, the SARIF', () => {
    for (const [what, text] of Object.entries({ stdout: ok.run.stdout, stderr: ok.run.stderr, json: ok.json, transcript: ok.transcript!, sarif: ok.sarif! })) {
      expect(text, what).not.toContain(BEARER_TOKEN);
    }
    expect(ok.transcript!.length).toBeGreaterThan(1000);
    expect(JSON.parse(ok.sarif!)).toMatchObject({ version: '2.1.0' });
  });

  it('replay lines name --url, the --header and --bearer-token-env VAR (not the token); one of them reproduces the class', async () => {
    const url = fixtures.bearer!.url;
    const withReplay = ok.report.checks.flatMap((c) => c.findings).filter((f) => f.replay);
    expect(withReplay.length).toBeGreaterThan(3);
    for (const f of withReplay) {
      expect(f.replay, f.fingerprint).toMatch(new RegExp(`^sealmark call --url ${url.replace(/[.]/g, '\\.')} --header 'X-Fixture-One: a' --bearer-token-env ${TOKEN_VAR} --tool `));
      expect(f.replay, f.fingerprint).not.toContain(' -- ');
    }
    const ie = checkOf(ok.report, 'robust-input').findings.find((f) => f.messageId === 'internal-error')!;
    expect(ie.replay).toBe(`sealmark call --url ${url} --header 'X-Fixture-One: a' --bearer-token-env ${TOKEN_VAR} --tool get_item --args '{}'`);
    const r = await runReplay(ie.replay!, tokenEnv);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('class    internal-error');
    expect(r.stdout).toContain("Cannot read properties of undefined (reading 'trim')");
    expect(r.stdout).toContain('sandbox  none (a server reached by URL)');
    expect(r.stdout + r.stderr).not.toContain(BEARER_TOKEN);
    // Without the variable set, the replay is a usage error naming it.
    const unset = await runReplay(ie.replay!, { [TOKEN_VAR]: undefined });
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain(`--bearer-token-env ${TOKEN_VAR}: the variable is not set`);
  }, SLOW);

  it("--header 'Authorization: Bearer …' works too, and the token is printed nowhere", () => {
    expect(viaHeader.report.status).toBe('audited');
    expect(graded(viaHeader.report, 'robust-input')).toEqual(['partial accepted:add_item', 'partial internal-error:get_item']);
    for (const [what, text] of Object.entries({ stdout: viaHeader.run.stdout, stderr: viaHeader.run.stderr, json: viaHeader.json, transcript: viaHeader.transcript! })) {
      expect(text, what).not.toContain(BEARER_TOKEN);
    }
  });

  it("a replay line of an audit made with --header 'Authorization: Bearer …' shows the value redacted, and call says to give it again instead of sending the placeholder", async () => {
    const ie = checkOf(viaHeader.report, 'robust-input').findings.find((f) => f.messageId === 'internal-error')!;
    expect(ie.replay).toContain("--header 'Authorization: [redacted:Authorization]'");
    const r = await runReplay(ie.replay!);
    expect(r.code, `${ie.replay}\n${r.stderr}`).toBe(2);
    expect(r.stderr).toContain('--header Authorization: the value is the placeholder a report prints for a secret; give the real value again, or pass a token with --bearer-token-env VAR');
    // With the value given again, the same line reproduces the class.
    const again = await runReplay(ie.replay!.replace('[redacted:Authorization]', `Bearer ${BEARER_TOKEN}`));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('class    internal-error');
    expect(again.stdout + again.stderr).not.toContain(BEARER_TOKEN);
  }, SLOW);

  it("--header 'X-Fixture-One: a' reaches the server (the fixture's headers tool answers it)", async () => {
    const r = await run(['call', '--url', fixtures.bearer!.url, '--bearer-token-env', TOKEN_VAR, '--header', 'X-Fixture-One: a', '--header', 'x-fixture-two: bee', '--tool', 'headers', '--args', '{}'], { env: tokenEnv });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('protocol 2025-11-25');
    expect(r.stdout).toContain(String.raw`"text":"{\"x-fixture-one\":\"a\",\"x-fixture-two\":\"bee\"}"`);
    expect(r.stdout).toContain('class    accepted');
    // Without --header, none.
    const bare = await run(['call', '--url', fixtures.bearer!.url, '--bearer-token-env', TOKEN_VAR, '--tool', 'headers', '--args', '{}'], { env: tokenEnv });
    expect(bare.stdout).toContain(String.raw`"text":"{}"`);
  }, SLOW);

  it('call --url without the token: exit 3 with the same unauthorized message', async () => {
    const r = await run(['call', '--url', fixtures.bearer!.url, '--tool', 'headers', '--args', '{}']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('the server answered 401 (WWW-Authenticate: Bearer realm="fixture"): set the Authorization header: --bearer-token-env VAR');
  }, SLOW);

  it('usage errors exit 2: an unset token variable (named), a header without a colon, --url with a command, a URL that is not http(s)', async () => {
    const url = fixtures.bearer!.url;
    const cases: [string[], RegExp][] = [
      [['audit', '--url', url, '--bearer-token-env', 'SEALMARK_TEST_UNSET_VAR'], /--bearer-token-env SEALMARK_TEST_UNSET_VAR: the variable is not set/],
      [['call', '--url', url, '--bearer-token-env', 'SEALMARK_TEST_UNSET_VAR', '--tool', 'headers'], /--bearer-token-env SEALMARK_TEST_UNSET_VAR: the variable is not set/],
      [['audit', '--url', url, '--header', 'nocolon'], /--header "nocolon": expected 'Name: value'/],
      [['call', '--url', url, '--header', 'nocolon', '--tool', 'headers'], /--header "nocolon": expected 'Name: value'/],
      [['audit', '--url', url, '--', 'node', STDIO_FIXTURE], /--url takes no server command/],
      [['call', '--url', url, '--tool', 'headers', '--', 'node', STDIO_FIXTURE], /--url takes no server command/],
      [['audit', '--url', 'ftp://x'], /--url ftp:\/\/x: only http: and https: URLs/],
      [['audit', '--url', 'not a url'], /--url "not a url": not a URL/],
      [['audit', '--header', 'X-A: b', '--', 'node', STDIO_FIXTURE], /--header and --bearer-token-env go with --url/],
    ];
    const results = await Promise.all(cases.map(([args]) => run(args, { env: { SEALMARK_TEST_UNSET_VAR: undefined } })));
    for (const [i, [args, message]] of cases.entries()) {
      expect(results[i]!.code, args.join(' ')).toBe(2);
      expect(results[i]!.stderr, args.join(' ')).toMatch(message);
      expect(results[i]!.stdout, args.join(' ')).toBe('');
    }
  }, SLOW);
});

describe('5. failures: not reachable, TLS, and a server that dies mid-audit', () => {
  let closed: Audited;
  let tls: Audited;
  let httpsUrl: string;
  beforeAll(async () => {
    httpsUrl = fixtures.streamable!.url.replace(/^http:/, 'https:');
    [closed, tls] = await Promise.all([auditRun(['--url', closedUrl]), auditRun(['--url', httpsUrl])]);
  }, SLOW);

  it('a closed port: exit 3, connect-failed', () => {
    expect(closed.run.code).toBe(3);
    expect(closed.report.status).toBe('not-audited');
    expect(closed.report.notAudited?.reason).toBe('connect-failed');
    expect(closed.report.notAudited!.message).toBe(`cannot connect to ${closedUrl}: ECONNREFUSED`);
    expect(closed.run.stderr).toContain(`sealmark: the target could not be audited: cannot connect to ${closedUrl}: ECONNREFUSED`);
    expect(checkOf(closed.report, 'handshake').verdict).toBe('fail');
    // Every other check: n/a, named in notChecked.
    expect(closed.report.checks.filter((c) => c.id !== 'handshake').every((c) => c.verdict === 'n/a')).toBe(true);
    expect(closed.report.notAudited!.notChecked).toContain('robust-input');
    expect(closed.report.target).toMatchObject({ kind: 'http', url: closedUrl });
  });

  it('https:// to a plain HTTP server: exit 3, tls-error, "TLS error"', () => {
    expect(tls.run.code).toBe(3);
    expect(tls.report.notAudited?.reason).toBe('tls-error');
    expect(tls.report.notAudited!.message).toMatch(new RegExp(`^TLS error reaching ${httpsUrl.replace(/[.]/g, '\\.')}: ERR_SSL_`));
    expect(tls.run.stderr).toContain('sealmark: the target could not be audited: TLS error reaching');
    expect(tls.report.target).toMatchObject({ kind: 'http', url: httpsUrl });
  });

  it('the handshake finding of a URL failure has the reason as its message id (connect-failed, tls-error)', () => {
    expect(checkOf(closed.report, 'handshake').findings.map((f) => f.messageId)).toEqual(['connect-failed']);
    expect(checkOf(closed.report, 'handshake').findings[0]!.message).toMatch(/^the server could not be reached: cannot connect to /);
    expect(checkOf(tls.report, 'handshake').findings.map((f) => f.messageId)).toEqual(['tls-error']);
    expect(checkOf(tls.report, 'handshake').findings[0]!.message).toMatch(/^the TLS connection failed: TLS error reaching /);
  });

  it('a server that dies on its 20th request: the report is still written, audited; its last call exited; no start again (nothing listens); nothing sent after', async () => {
    const { run: r, report } = await runs.dies!;
    expect(fixtures.dies!.stderr()).toContain('dies.mjs: exiting on request 20 (POST)');
    expect(report.status).toBe('audited');
    // robust-input fails at severity error: exit 1, not 3 (the server was audited).
    expect(r.code, r.stderr).toBe(1);
    // Requests 1-3 were the handshake (discover probe, initialize, initialized); 4 and 5 the early
    // array-params probe and its tools/list guard (sent first, not calls until their turn); 6-19
    // the calls 1-14; call 15 (request 20) lost its connection. The reconnect sealmark tries (SPEC section 3
    // step 3) finds nothing listening, and is not a call.
    const last = report.calls.at(-1)!;
    expect(report.calls).toHaveLength(15);
    expect(last).toMatchObject({ seq: 15, probe: 'nulls', tool: 'list_items', reply: { kind: 'exited' }, class: 'exited' });
    expect(report.calls.slice(0, -1).every((c) => c.reply.kind === 'response')).toBe(true);
    const ri = checkOf(report, 'robust-input');
    expect(ri.verdict).toBe('fail');
    // It dies on its 20th request, whatever it is; calls answered just before are candidates too,
    // and with nothing listening none can be replayed alone: no call is blamed (case B10).
    const exited = ri.findings.find((f) => f.messageId === 'exited-unattributed')!;
    expect(exited).toMatchObject({ level: 'fail' });
    expect(exited.tool).toBeUndefined();
    expect(exited.message).toMatch(/^the server exited during the audit \(connection lost: .*\) and no call is blamed: \d+ calls could have caused it, and they were not replayed alone \(the server could not be started again\); candidates: 15 \(list_items nulls\), /);
    expect(exited.replay).toBeUndefined();
    // What was found before still stands; what was not reached is named.
    expect(graded(report, 'robust-input')).toEqual(['fail exited-unattributed:-', 'partial accepted:add_item', 'partial internal-error:get_item']);
    expect(ri.findings.filter((f) => f.level === 'info').map((f) => f.message)).toEqual(['probing stopped because the server is gone; not reached: list_items (extra-argument), whoami']);
    // The later gatherers say why they did not run.
    // ... and, the server being gone for good (the reconnect failed), they fail rather than being
    // n/a (SPEC section 3 step 3: dying must not raise the grade).
    for (const [id, note] of [
      ['protocol-errors', 'not run: the server was gone before the protocol probes'],
      ['strict-arguments', 'not run: the server was gone'],
      ['concurrency', 'the burst was not sent (the server was gone)'],
      ['oversized-input', 'the oversized values were not sent (the server was gone)'],
    ] as const) {
      expect(checkOf(report, id), id).toMatchObject({ verdict: 'fail', notes: [note] });
      expect(checkOf(report, id).findings[0]!.messageId, id).toBe('server-gone-before');
    }
    expect(report.restarts).toMatchObject([{ ok: false }]);
    expect(checkOf(report, 'bounded-limits').notes).toContain('the limit values were not sent (the server was gone); only the schemas were read');
  }, SLOW);

  it('the dead HTTP server is described as a lost connection, not with an exit code it never had', async () => {
    const { report } = await runs.dies!;
    const exited = checkOf(report, 'robust-input').findings.find((f) => f.messageId === 'exited-unattributed')!;
    // A server reached by URL has no exit status sealmark could know: the connection was lost.
    expect(exited.message).not.toContain('exit code null');
    expect(exited.message).toMatch(/\(connection lost: /);
  }, SLOW);
});

describe('6. a raw (not-JSON) probe over HTTP: bounded-limits NaN against Streamable HTTP', () => {
  it('sent as raw text, answered with HTTP 400 and a -32700 parse error (id null): rejected-unnamed', async () => {
    const { report } = await runs.raw!;
    expect(report.status).toBe('audited');
    expect(report.checks.map((c) => c.id)).toEqual(['bounded-limits']);
    const c = callOf(report, 'raw-nan', 'list_items');
    expect(c.rawArguments).toBe('{"limit":NaN}');
    expect(c.value).toBe('NaN');
    expect(c.request).toMatch(/^\{"jsonrpc":"2\.0","id":\d+,"method":"tools\/call","params":\{"name":"list_items","arguments":\{"limit":NaN\}\}\}$/);
    expect(c.reply).toEqual({ kind: 'response', raw: { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON' }, id: null } });
    expect(c.class).toBe('rejected-unnamed');
    expect(c.invalidBecause).toEqual(['NaN is not a finite JSON number']);
    // On the wire: the POST of that request got 400 (the proxy saw it).
    const id = JSON.parse(c.request.replace('NaN', 'null')).id as number;
    const post = proxies.raw!.seen.find((s) => s.rpcId === id)!;
    expect(post).toMatchObject({ method: 'POST', rpcMethod: 'tools/call', toolName: 'list_items', status: 400 });
  }, SLOW);

  it('its replay line uses --url and --raw-args, and reproduces the class', async () => {
    const { report } = await runs.raw!;
    const c = callOf(report, 'raw-nan', 'list_items');
    // A rejected NaN is not a finding, so the report has no replay line for this call: this is the
    // line sealmark writes for a raw call (src/replay.ts, with the report's URL as the flags).
    const line = replayLine('list_items', undefined, report.target.command, ['--url', report.target.url!], c.rawArguments);
    expect(line).toBe(`sealmark call --url ${proxies.raw!.url} --tool list_items --raw-args '{"limit":NaN}'`);
    const r = await runReplay(line);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^sent {5}\{"jsonrpc":"2\.0","id":\d+,"method":"tools\/call","params":\{"name":"list_items","arguments":\{"limit":NaN\}\}\}$/m);
    expect(r.stdout).toContain('reply    {"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: Invalid JSON"},"id":null}');
    expect(r.stdout).toContain('class    rejected-unnamed');
    // The report's own replay lines (the findings' ones) over HTTP carry --url too, and reproduce.
    const zero = checkOf(report, 'bounded-limits').findings.find((f) => f.messageId === 'zero-unlimited')!;
    expect(zero.replay).toBe(`sealmark call --url ${proxies.raw!.url} --tool list_items --args '{"limit":0}'`);
    const z = await runReplay(zero.replay!);
    expect(z.code, z.stderr).toBe(0);
    expect(z.stdout).toContain('class    accepted');
    expect(z.stdout).toMatch(/"text":"item-1: apple x3\\nitem-2: pear x1\\nitem-3: plum x12\\n/);
  }, SLOW);
});
