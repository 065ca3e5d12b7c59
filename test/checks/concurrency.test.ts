/**
 * concurrency (pack limits, scored; SPEC section 5; JSON-RPC 2.0 section 5: one response per
 * request, under its id) against real fixture servers: a server that drops calls beyond four in
 * flight, one that answers every invalid call twice, the clean control, and a server with no tool
 * that can be given an invalid call (the burst goes to an unknown tool).
 *
 * The audits run together in one beforeAll. serial_drops uses a 2000 ms hang limit
 * (`checks.robust-input.hang_ms`, which bounds each reply of the burst) to keep the run short.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { auditFixture, checkOf, findingsOf, fixture, graded } from '../helpers/run.js';
import { shellQuote } from '../../src/replay.js';
import { CONCURRENT_CALLS, NO_SUCH_TOOL } from '../../src/probes/concurrency.js';
import type { Report, ReportCall } from '../../src/report/build.js';

// --- helpers -------------------------------------------------------------------------------------

const ID = 'concurrency';
const HANG_MS = 2000;
const FAST_HANGS = { checks: { 'robust-input': { hang_ms: HANG_MS } } };

/** The single element of `xs` (fails the test when there is not exactly one). */
function one<T>(xs: T[]): T {
  expect(xs).toHaveLength(1);
  return xs[0] as T;
}

/** The JSON-RPC id of a request line. */
function idOf(c: ReportCall): number {
  return (JSON.parse(c.request) as { id: number }).id;
}

function argsOf(c: ReportCall): unknown {
  return (JSON.parse(c.request) as { params: { arguments?: unknown } }).params.arguments;
}

/** The burst: the 16 concurrent calls (in request-id order) and the one tools/list. */
function burstOf(r: Report): { calls: ReportCall[]; list: ReportCall } {
  const calls = r.calls.filter((c) => c.probe === 'concurrent-call').sort((a, b) => idOf(a) - idOf(b));
  return { calls, list: one(r.calls.filter((c) => c.probe === 'concurrent-list')) };
}

/** The liveness tools/list that follows the burst (the first liveness call after every burst call). */
function livenessAfterBurst(r: Report): ReportCall {
  const { calls, list } = burstOf(r);
  const last = Math.max(list.seq, ...calls.map((c) => c.seq));
  const c = r.calls.find((x) => x.probe === 'liveness' && x.seq > last);
  if (!c) throw new Error('no liveness call after the burst');
  return c;
}

/** The text of a reply's first content block. */
function textOf(c: ReportCall): string {
  return (c.reply.raw as { result: { content: { text: string }[] } }).result.content[0]!.text;
}

// --- the runs ------------------------------------------------------------------------------------

const runs: Record<string, Report> = {};

beforeAll(async () => {
  const jobs: Record<string, () => Promise<Report>> = {
    drops: () => auditFixture('limits/serial_drops.mjs', FAST_HANGS),
    double: () => auditFixture('limits/double_reply.mjs'),
    clean: () => auditFixture('limits/clean_limits.mjs'),
    noTools: () => auditFixture('effects/dashboard-fixed.mjs'),
  };
  const done = await Promise.all(Object.entries(jobs).map(async ([k, f]) => [k, await f()] as const));
  for (const [k, r] of done) runs[k] = r;
}, 120_000);

// --- fail ----------------------------------------------------------------------------------------

describe('serial_drops.mjs (a call that arrives with more than 4 in flight is dropped)', () => {
  it('fails with `no-answer`: 11 of the 17 requests got no reply within 2000 ms', () => {
    const r = runs.drops!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['no-answer']);
    const f = one(c.findings);
    expect(f.data).toEqual({ count: 11, total: 17, waited: HANG_MS, example: 'tools/call lookup_user' });
    expect(f.message).toBe('11 of the 17 requests sent together got no reply within 2000 ms (first: tools/call lookup_user)');
    expect(c.notes).toEqual([]);
  });

  it('the first five calls and the tools/list were answered; the last eleven call ids never were', () => {
    const r = runs.drops!;
    const { calls, list } = burstOf(r);
    expect(calls).toHaveLength(CONCURRENT_CALLS);
    expect(calls.map((x) => x.class)).toEqual([...Array(5).fill('rejected'), ...Array(11).fill('hang')]);
    for (const x of calls.slice(0, 5)) {
      expect(x.tool).toBe('lookup_user');
      expect((x.reply.raw as { id: number }).id).toBe(idOf(x));
      expect(textOf(x)).toBe('Invalid arguments for tool lookup_user: missing required parameter "user_id"');
    }
    for (const x of calls.slice(5)) expect(x.reply).toEqual({ kind: 'hang', waitedMs: HANG_MS });
    const f = one(findingsOf(r, ID, 'no-answer'));
    expect(f.evidence.calls).toEqual(calls.slice(5).map((x) => x.seq).sort((a, b) => a - b));
    // The evidence call is one of the burst's invalid calls: missing-required, {}.
    expect(argsOf(calls[5]!)).toEqual({});
    // Replayed alone, that call is answered (after 300 ms): the fault needs the burst.
    expect(f.replay).toBe(`sealmark call --tool lookup_user --args '{}' -- ${[process.execPath, fixture('limits/serial_drops.mjs')].map(shellQuote).join(' ')}`);
    expect([list.method, list.reply.kind]).toEqual(['tools/list', 'response']);
    expect((list.reply.raw as { id: number }).id).toBe(idOf(list));
  });

  it('the server stayed alive: the tools/list after the burst was answered (no not-alive)', () => {
    const r = runs.drops!;
    const live = livenessAfterBurst(r);
    expect([live.method, live.reply.kind]).toEqual(['tools/list', 'response']);
    expect(findingsOf(r, ID, 'not-alive')).toEqual([]);
    expect(findingsOf(r, ID, 'exited')).toEqual([]);
  });
});

describe('double_reply.mjs (every invalid tools/call is answered twice)', () => {
  it('fails with `duplicate`: 16 of the 17 requests answered more than once (the tools/list once)', () => {
    const r = runs.double!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['duplicate']);
    const f = one(c.findings);
    const { calls } = burstOf(r);
    expect(f.data).toEqual({ count: 16, total: 17, id: idOf(calls[0]!), times: 2 });
    expect(f.message).toBe(`16 of the 17 requests sent together were answered more than once (first: id ${idOf(calls[0]!)}, 2 answers)`);
    expect([...f.evidence.calls!].sort((a, b) => a - b)).toEqual(calls.map((x) => x.seq).sort((a, b) => a - b));
    // The second answers are quoted: the same isError result under the same id as the first.
    expect(f.evidence.quotes).toEqual(calls.slice(0, 3).map((x) => JSON.stringify(x.reply.raw).slice(0, 200)));
    expect(c.notes).toEqual([]);
  });

  it('the first answers are ordinary rejections, each under its own id', () => {
    const r = runs.double!;
    const { calls, list } = burstOf(r);
    for (const x of calls) {
      expect([x.tool, x.class]).toEqual(['set_volume', 'rejected']);
      expect((x.reply.raw as { id: number }).id).toBe(idOf(x));
    }
    expect(new Set(calls.map(idOf)).size).toBe(CONCURRENT_CALLS);
    expect((list.reply.raw as { id: number }).id).toBe(idOf(list));
    expect(livenessAfterBurst(r).reply.kind).toBe('response');
  });

  it('protocol-errors reports only the second answers outside the burst as `stray-response`, none from the burst', () => {
    const r = runs.double!;
    const { calls } = burstOf(r);
    const burstIds = new Set(calls.map(idOf));
    // Invalid tools/call requests of the other phases (robust-input, oversized-input) were answered twice too.
    const others = r.calls.filter((x) => x.method === 'tools/call' && x.tool === 'set_volume' && x.probe !== 'concurrent-call' && x.class === 'rejected');
    expect(others.map((x) => x.probe)).toEqual(['missing-required', 'wrong-types', 'nulls', 'extra-argument', 'no-arguments', 'oversized-string', 'oversized-array', 'deep-object']);
    expect(checkOf(r, 'protocol-errors').verdict).toBe('partial');
    expect(graded(r, 'protocol-errors')).toEqual(['stray-response']);
    const s = one(findingsOf(r, 'protocol-errors', 'stray-response'));
    expect(s.data.count).toBe(others.length);
    expect(s.data.count).toBe(8);
    expect(s.data.example).toBe(JSON.stringify(others[0]!.reply.raw).slice(0, 200));
    expect(s.evidence.quotes).toEqual(others.slice(0, 3).map((x) => JSON.stringify(x.reply.raw).slice(0, 200)));
    const quotedIds = s.evidence.quotes!.map((q) => Number(/"id":(\d+)/.exec(q)![1]));
    expect(quotedIds).toEqual(others.slice(0, 3).map(idOf));
    for (const id of quotedIds) expect(burstIds.has(id)).toBe(false);
  });
});

// --- pass ----------------------------------------------------------------------------------------

describe('clean_limits.mjs (the control)', () => {
  it('passes: 16 concurrent calls and one tools/list, each a distinct id answered once under its own id', () => {
    const r = runs.clean!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('pass');
    expect(c.findings).toEqual([]);
    expect(c.notes).toEqual([]);
    const { calls, list } = burstOf(r);
    expect(calls).toHaveLength(16);
    const ids = [...calls.map(idOf), idOf(list)];
    expect(new Set(ids).size).toBe(17);
    for (const x of calls) {
      expect([x.tool, x.method, x.class, x.reply.kind]).toEqual(['search_docs', 'tools/call', 'rejected', 'response']);
      expect((x.reply.raw as { id: number }).id).toBe(idOf(x));
      // The burst's calls are each tool's first robust-input probe: missing-required, {}.
      expect(argsOf(x)).toEqual({});
      expect(x.invalidBecause).toEqual(["(root) must have required property 'query'"]);
    }
    expect([list.method, list.reply.kind, (list.reply.raw as { id: number }).id]).toEqual(['tools/list', 'response', idOf(list)]);
    expect(livenessAfterBurst(r).reply.kind).toBe('response');
    // Answered once: no second answer anywhere in the run.
    expect(findingsOf(r, 'protocol-errors', 'stray-response')).toEqual([]);
  });
});

describe('dashboard-fixed.mjs (no tool can be given an invalid call)', () => {
  it(`passes with a note: the burst called the unknown tool ${NO_SUCH_TOOL}, each answered once`, () => {
    const r = runs.noTools!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('pass');
    expect(c.findings).toEqual([]);
    expect(c.notes).toEqual([`no tool could be given an invalid call: the burst called the unknown tool ${NO_SUCH_TOOL}`]);
    const { calls, list } = burstOf(r);
    expect(calls).toHaveLength(16);
    for (const x of calls) {
      expect([x.tool, argsOf(x), x.reply.kind]).toEqual([NO_SUCH_TOOL, {}, 'response']);
      expect(x.reply.raw).toEqual({ jsonrpc: '2.0', id: idOf(x), error: { code: -32602, message: `Unknown tool: ${NO_SUCH_TOOL}` } });
    }
    expect(list.reply.kind).toBe('response');
  });
});
