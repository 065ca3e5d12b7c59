/**
 * bounded-limits (pack limits, scored; SPEC section 5, seed on the Boolean limit) against real
 * fixture servers: the seed's run_batch (unsafe, with and without a `probes:` entry, and
 * repaired), zero meaning unlimited, SQLite's negative LIMIT, cases C3, C4 and C5 (and C5
 * repaired), a clean control, a count with no maximum that kills its server (with a probes:
 * entry; without one, in or out of the sandbox, the value is not sent: the safety rule), the bundled
 * demo, and tools whose retried upstream request the sandbox refuses (firecrawl_map's shape).
 *
 * Every audit is a real run with the default config and the default sandbox unless a test says
 * otherwise; they are started together in one beforeAll (two cores: most of the time is spent
 * waiting on the servers and the 250 ms effect grace).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { auditFixture, checkOf, findingsOf, fixture, fixtureCommand, graded, root } from '../helpers/run.js';
import { audit } from '../../src/audit.js';
import { configRegistry } from '../../src/config/defaults.js';
import { parseConfig } from '../../src/config/schema.js';
import { shellQuote } from '../../src/replay.js';
import { networkNamespaceAvailable } from '../../src/target/sandbox.js';
import { upstreamFailureLine } from '../../src/classify.js';
import { valueLabel } from '../../src/probes/limits.js';
import type { Report, ReportCall } from '../../src/report/build.js';
import type { Finding } from '../../src/types.js';

// --- helpers -------------------------------------------------------------------------------------

const ID = 'bounded-limits';
/** The seed's valid call; the design pack's repeat of it is switched off so the admission trace is the limits pack's alone. */
const SEED_PROBES = { probes: [{ tool: 'run_batch', arguments: { max_calls: 2 } }], checks: { 'idempotency-key': { enabled: false }, 'two-step-writes': { enabled: false } } };

/** The limits probes of the gatherer, in the order they are sent. */
const ALL_VALUES = [
  'limit-false', 'limit-true', 'limit-zero', 'limit-one', 'limit-negative', 'limit-minus-five', 'limit-string',
  'limit-fraction', 'limit-over-max', 'raw-one-point-zero', 'raw-nan', 'raw-infinity', 'raw-minus-infinity', 'raw-huge', 'raw-duplicate',
];
/** Without a valid call, 0, 1 and -5 (sent only for the item comparison) are left out. */
const WITHOUT_VALID_CALL = ALL_VALUES.filter((p) => !['limit-zero', 'limit-one', 'limit-minus-five'].includes(p));
/**
 * Why a value the schema admits was not sent to a tool that may write (not read-only, no probes:
 * entry): in the sandbox too, since the sandbox does not stop writes outside its scratch folders.
 */
const NOT_SENT = 'not sent: the schema admits this value and the tool may write: sent only to a read-only tool or one with a probes: entry';
const LIMIT_PROBES = new Set(ALL_VALUES);

const PARSE_ERROR = { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } };
const NO_VALID_CALL = 'item counts not compared: no valid call (give the tool a probes: entry, or it is not read-only)';
const ALLOC_PROBES = { probes: [{ tool: 'generate_rows', arguments: { count: 1 } }] };

/** The single element of `xs` (fails the test when there is not exactly one). */
function one<T>(xs: T[]): T {
  expect(xs).toHaveLength(1);
  return xs[0] as T;
}

function callOf(r: Report, seq: number | undefined): ReportCall {
  const c = r.calls.find((x) => x.seq === seq);
  if (!c) throw new Error(`no call #${String(seq)}`);
  return c;
}

/** The limits calls of a report (liveness left out), in order. */
function limitCalls(r: Report): ReportCall[] {
  return r.calls.filter((c) => LIMIT_PROBES.has(c.probe));
}

function probeCall(r: Report, probe: string, tool?: string): ReportCall {
  const c = r.calls.find((x) => x.probe === probe && (tool === undefined || x.tool === tool));
  if (!c) throw new Error(`no ${probe} call${tool ? ` to ${tool}` : ''}`);
  return c;
}

/** The `arguments` member of a call as it went out on the wire. */
function argsOf(c: ReportCall): unknown {
  return (JSON.parse(c.request) as { params: { arguments?: unknown } }).params.arguments;
}

/** The JSON-RPC id of a request line (read with a pattern: raw probes are not JSON). */
function idOf(c: ReportCall): number {
  return Number(/^\{"jsonrpc":"2\.0","id":(\d+),/.exec(c.request)![1]);
}

/** The text of a reply's first content block. */
function textOf(c: ReportCall): string {
  return (c.reply.raw as { result: { content: { text: string }[] } }).result.content[0]!.text;
}

/** A call's evidence seqs mapped to [probe, value, class, items]. */
function evidenceOf(r: Report, f: Finding): [string, string | undefined, string | undefined, number | undefined][] {
  return (f.evidence.calls ?? []).map((s) => {
    const c = callOf(r, s);
    return [c.probe, c.value, c.class, c.items];
  });
}

/** The replay line sealmark prints for a call to a server started as `command`. */
function replayFor(command: string[], tool: string, args: unknown): string {
  return `sealmark call --tool ${tool} --args ${shellQuote(JSON.stringify(args))} -- ${command.map(shellQuote).join(' ')}`;
}

function rawReplayFor(command: string[], tool: string, rawArgs: string): string {
  return `sealmark call --tool ${tool} --raw-args ${shellQuote(rawArgs)} -- ${command.map(shellQuote).join(' ')}`;
}

/** The command a fixture is started with by auditFixture, as replay lines show it. */
function commandOf(name: string, extra: string[] = []): string[] {
  const { command, args } = fixtureCommand(name);
  return [command, ...args, ...extra];
}

const ALLOC_ARGS = ['--max-old-space-size=64', fixture('limits/unbounded_alloc.mjs')];
function auditAlloc(raw: Record<string, unknown>, sandbox: boolean): Promise<Report> {
  return audit({ command: process.execPath, args: ALLOC_ARGS, config: parseConfig(raw, configRegistry()), sandbox });
}

// --- the runs ------------------------------------------------------------------------------------

const runs: Record<string, Report> = {};

beforeAll(async () => {
  const jobs: Record<string, () => Promise<Report>> = {
    seed: () => auditFixture('limits/seed_batch.py', SEED_PROBES),
    seedNoProbes: () => auditFixture('limits/seed_batch.py'),
    seedRepaired: () => auditFixture('limits/seed_batch.py', SEED_PROBES, ['--repaired']),
    zero: () => auditFixture('limits/zero_unlimited.mjs'),
    sqlite: () => auditFixture('limits/sqlite_negative.mjs'),
    c3: () => auditFixture('limits/c3_isinstance.py'),
    c4: () => auditFixture('limits/c4_slice.py'),
    c5: () => auditFixture('limits/c5_wait_nan.py'),
    c5strict: () => auditFixture('limits/c5_wait_strict.py'),
    slowNan: () => auditFixture('limits/slow_nan.mjs'),
    clean: () => auditFixture('limits/clean_limits.mjs'),
    alloc: () => auditAlloc(ALLOC_PROBES, true),
    allocNoProbes: () => auditAlloc({}, true),
    allocNoSandbox: () => auditAlloc({}, false),
    allocProbesNoSandbox: () => auditAlloc(ALLOC_PROBES, false),
    demo: () => audit({ command: process.execPath, args: [`${root}demo/server.mjs`] }),
  };
  const done = await Promise.all(Object.entries(jobs).map(async ([k, f]) => [k, await f()] as const));
  for (const [k, r] of done) runs[k] = r;
}, 120_000);

// --- the seed: run_batch -------------------------------------------------------------------------

describe('seed_batch.py (the seed\'s run_batch, max_calls integer 0..3) with a probes: entry', () => {
  const SEED = commandOf('limits/seed_batch.py');

  it('fails with `admitted` (false -> 5 items, true -> 1) and `zero-unlimited` (0 -> 5, 1 -> 1), nothing else', () => {
    const r = runs.seed!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['admitted', 'zero-unlimited']);
    expect(c.findings.map((f) => f.messageId)).toEqual(['admitted', 'zero-unlimited']);
    expect(c.notes).toEqual([]);
  });

  it('`admitted` names both Booleans with their item counts, points at both calls and replays false', () => {
    const r = runs.seed!;
    const f = one(findingsOf(r, ID, 'admitted'));
    expect(f.level).toBe('fail');
    expect(f.tool).toBe('run_batch');
    expect(f.data).toEqual({ tool: 'run_batch', param: 'max_calls', kind: 'count', values: 'false (5 items), true (1 item)', them: 'them' });
    expect(f.message).toBe('run_batch: max_calls = false (5 items), true (1 item) accepted though the schema forbids them');
    expect(evidenceOf(r, f)).toEqual([
      ['limit-false', 'false', 'accepted', 5],
      ['limit-true', 'true', 'accepted', 1],
    ]);
    expect(f.evidence.quotes).toEqual(['/max_calls must be integer', '/max_calls must be integer']);
    const falseCall = callOf(r, f.evidence.calls![0]);
    expect(argsOf(falseCall)).toEqual({ max_calls: false });
    expect(falseCall.reply.raw).toEqual({
      jsonrpc: '2.0',
      id: idOf(falseCall),
      result: { content: [{ type: 'text', text: '["a", "b", "c", "d", "e"]' }], structuredContent: { admitted: ['a', 'b', 'c', 'd', 'e'] } },
    });
    expect(f.request).toBe(falseCall.request);
    expect(f.replay).toBe(replayFor(SEED, 'run_batch', { max_calls: false }));
  });

  it('`zero-unlimited` compares 0 (5 items) with 1 (1 item), both as evidence', () => {
    const r = runs.seed!;
    const f = one(findingsOf(r, ID, 'zero-unlimited'));
    expect(f.level).toBe('fail');
    expect(f.data).toEqual({ tool: 'run_batch', param: 'max_calls', kind: 'count', zero: 5, one: 1 });
    expect(f.message).toBe('run_batch: max_calls = 0 returned 5 items, more than max_calls = 1 (1): zero means unlimited');
    expect(evidenceOf(r, f)).toEqual([
      ['limit-zero', '0', 'accepted', 5],
      ['limit-one', '1', 'accepted', 1],
    ]);
    expect(argsOf(callOf(r, f.evidence.calls![0]))).toEqual({ max_calls: 0 });
    expect(f.replay).toBe(replayFor(SEED, 'run_batch', { max_calls: 0 }));
  });

  it('the valid call is the probes: entry (2 items); every limit value is sent, the invalid ones rejected', () => {
    const r = runs.seed!;
    const up = one(r.calls.filter((c) => c.probe === 'user-probe'));
    expect([up.tool, argsOf(up), up.class, up.items]).toEqual(['run_batch', { max_calls: 2 }, 'accepted', 2]);
    const calls = limitCalls(r);
    expect(calls.map((c) => c.probe)).toEqual(ALL_VALUES);
    expect(calls.map((c) => [c.probe, c.value, c.class, c.items])).toEqual([
      ['limit-false', 'false', 'accepted', 5],
      ['limit-true', 'true', 'accepted', 1],
      ['limit-zero', '0', 'accepted', 5],
      ['limit-one', '1', 'accepted', 1],
      ['limit-negative', '-1', 'rejected', undefined],
      ['limit-minus-five', '-5', 'rejected', undefined],
      ['limit-string', '"1"', 'rejected', undefined],
      ['limit-fraction', '1.5', 'rejected', undefined],
      ['limit-over-max', '4', 'rejected', undefined],
      ['raw-one-point-zero', '1.0', 'rejected', undefined],
      // The unsafe path decodes with plain json.loads: NaN and the infinities are floats, rejected by isinstance.
      ['raw-nan', 'NaN', 'rejected', undefined],
      ['raw-infinity', 'Infinity', 'rejected', undefined],
      ['raw-minus-infinity', '-Infinity', 'rejected', undefined],
      ['raw-huge', '1e309', 'rejected', undefined],
      ['raw-duplicate', '1,"max_calls":4', 'rejected', undefined],
    ]);
    for (const c of calls) expect([c.tool, c.target], c.probe).toEqual(['run_batch', 'max_calls']);
    // In the sandbox every limits call had its effects read; the trace is in memory, so none were seen.
    for (const c of calls) expect(c.effects, c.probe).toEqual([]);
    expect(probeCall(r, 'raw-duplicate').rawArguments).toBe('{"max_calls":1,"max_calls":4}');
    // The server's own effect trace (stderr): the probes: entry, false, true, 0 and 1 admitted work.
    expect(r.stderrTail).toBe(
      'admitted: a,b (trace 2)\nadmitted: a,b,c,d,e (trace 7)\nadmitted: a (trace 8)\nadmitted: a,b,c,d,e (trace 13)\nadmitted: a (trace 14)\n',
    );
  });
});

describe('seed_batch.py without a probes: entry (run_batch is not read-only: no valid call)', () => {
  it('fails with `admitted` only (false -> 5 items) and says the item counts were not compared', () => {
    const r = runs.seedNoProbes!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['admitted']);
    expect(c.findings.map((f) => f.messageId)).toEqual(['admitted']);
    const f = one(findingsOf(r, ID, 'admitted'));
    expect(f.data.values).toBe('false (5 items), true (1 item)');
    expect(evidenceOf(r, f)).toEqual([
      ['limit-false', 'false', 'accepted', 5],
      ['limit-true', 'true', 'accepted', 1],
    ]);
    // 1.0 is the integer 1 to JSON Schema, so valid: not sent to run_batch (it may write), sandbox or not.
    expect(c.notes).toEqual([`run_batch.max_calls: raw-one-point-zero ${NOT_SENT}`, `run_batch.max_calls: ${NO_VALID_CALL}`]);
    expect(findingsOf(r, ID, 'zero-unlimited')).toEqual([]);
  });

  it('sends neither 0, 1 nor -5 (they only serve the item comparison) nor the valid 1.0, and makes no user-probe call', () => {
    const r = runs.seedNoProbes!;
    expect(r.sandbox.kind).toBe('sandbox');
    expect(limitCalls(r).map((c) => c.probe)).toEqual(WITHOUT_VALID_CALL.filter((p) => p !== 'raw-one-point-zero'));
    expect(r.calls.filter((c) => c.probe === 'user-probe')).toEqual([]);
  });
});

describe('seed_batch.py --repaired (the seed\'s repaired path) with the probes: entry', () => {
  it('passes with no finding and no note', () => {
    const r = runs.seedRepaired!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('pass');
    expect(c.findings).toEqual([]);
    expect(c.notes).toEqual([]);
  });

  it('rejects every invalid value, reads 0 as no items, and answers the non-JSON lines with -32700', () => {
    const r = runs.seedRepaired!;
    const calls = limitCalls(r);
    expect(calls.map((c) => [c.probe, c.class, c.items])).toEqual([
      ['limit-false', 'rejected', undefined],
      ['limit-true', 'rejected', undefined],
      ['limit-zero', 'accepted', 0],
      ['limit-one', 'accepted', 1],
      ['limit-negative', 'rejected', undefined],
      ['limit-minus-five', 'rejected', undefined],
      ['limit-string', 'rejected', undefined],
      ['limit-fraction', 'rejected', undefined],
      ['limit-over-max', 'rejected', undefined],
      ['raw-one-point-zero', 'rejected', undefined],
      ['raw-nan', 'rejected-unnamed', undefined],
      ['raw-infinity', 'rejected-unnamed', undefined],
      ['raw-minus-infinity', 'rejected-unnamed', undefined],
      ['raw-huge', 'rejected', undefined],
      ['raw-duplicate', 'rejected-unnamed', undefined],
    ]);
    for (const p of ['raw-nan', 'raw-infinity', 'raw-minus-infinity', 'raw-duplicate']) {
      const c = probeCall(r, p);
      expect(c.reply, p).toEqual({ kind: 'response', raw: PARSE_ERROR });
    }
    expect(probeCall(r, 'raw-nan').rawArguments).toBe('{"max_calls":NaN}');
    expect(textOf(probeCall(r, 'limit-false'))).toBe('Invalid arguments for run_batch: max_calls must be an integer token from 0 to 3');
    const zero = probeCall(r, 'limit-zero');
    expect(zero.reply.raw).toEqual({ jsonrpc: '2.0', id: idOf(zero), result: { content: [{ type: 'text', text: '[]' }], structuredContent: { admitted: [] } } });
    const up = one(r.calls.filter((c) => c.probe === 'user-probe'));
    expect([up.class, up.items]).toEqual(['accepted', 2]);
    for (const c of calls) expect(c.effects, c.probe).toEqual([]);
    // Only the probes: entry, 0 and 1 reached the batch: the effect trace holds a, b, then a.
    expect(r.stderrTail).toBe('admitted: a,b (trace 2)\nadmitted: - (trace 2)\nadmitted: a (trace 3)\n');
  });
});

// --- zero, negatives ------------------------------------------------------------------------------

describe('zero_unlimited.mjs (list_events: `args.limit || events.length`)', () => {
  it('fails with exactly `zero-unlimited`: 0 -> 12 items, 1 -> 1; no static finding', () => {
    const r = runs.zero!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['zero-unlimited']);
    expect(c.findings.map((f) => f.messageId)).toEqual(['zero-unlimited']);
    expect(c.findings.filter((f) => f.evidence.schemaPaths)).toEqual([]);
    expect(c.notes).toEqual([]);
    const f = one(c.findings);
    expect(f.data).toEqual({ tool: 'list_events', param: 'limit', kind: 'count', zero: 12, one: 1 });
    expect(f.message).toBe('list_events: limit = 0 returned 12 items, more than limit = 1 (1): zero means unlimited');
    expect(evidenceOf(r, f)).toEqual([
      ['limit-zero', '0', 'accepted', 12],
      ['limit-one', '1', 'accepted', 1],
    ]);
    expect(f.replay).toBe(replayFor(commandOf('limits/zero_unlimited.mjs'), 'list_events', { limit: 0 }));
  });

  it('read-only tool: every value was sent; -1 and -5 were rejected; 1.0 was read as 1 (1 item, not a finding)', () => {
    const r = runs.zero!;
    expect(limitCalls(r).map((c) => c.probe)).toEqual(ALL_VALUES);
    expect(['limit-negative', 'limit-minus-five'].map((p) => probeCall(r, p).class)).toEqual(['rejected', 'rejected']);
    const onePointZero = probeCall(r, 'raw-one-point-zero');
    expect([onePointZero.class, onePointZero.items, onePointZero.invalidBecause]).toEqual(['accepted', 1, undefined]);
    for (const p of ['raw-nan', 'raw-infinity', 'raw-minus-infinity']) expect(probeCall(r, p).reply.raw, p).toEqual(PARSE_ERROR);
  });
});

describe('sqlite_negative.mjs (SQLite reads a negative LIMIT as no limit)', () => {
  it('fails with `negative-slices` (-1 and -5 -> 30 items each, 1 -> 1) and the static `no-minimum`', () => {
    const r = runs.sqlite!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['negative-slices', 'no-minimum']);
    const f = one(findingsOf(r, ID, 'negative-slices'));
    expect(f.level).toBe('fail');
    expect(f.data).toEqual({ tool: 'recent_orders', param: 'limit', kind: 'count', value: '-1 and -5', negative: '30 and 30', one: 1 });
    expect(f.message).toBe('recent_orders: limit = -1 and -5 returned 30 and 30 items, more than limit = 1 (1): a negative count admits more work, not less');
    expect(evidenceOf(r, f)).toEqual([
      ['limit-negative', '-1', 'accepted', 30],
      ['limit-minus-five', '-5', 'accepted', 30],
      ['limit-one', '1', 'accepted', 1],
    ]);
    expect(f.evidence.quotes).toEqual(['limit = -1: 30 items; limit = 1: 1 item', 'limit = -5: 30 items; limit = 1: 1 item']);
    expect(f.replay).toBe(replayFor(commandOf('limits/sqlite_negative.mjs'), 'recent_orders', { limit: -1 }));
    const s = one(findingsOf(r, ID, 'no-minimum'));
    expect(s.level).toBe('partial');
    expect(s.data).toEqual({ tool: 'recent_orders', param: 'limit', kind: 'count', lower: 'no minimum' });
    expect(s.evidence.schemaPaths).toEqual(['tools[0].inputSchema.properties.limit']);
  });

  it('reads 0 as no rows (no zero-unlimited)', () => {
    const r = runs.sqlite!;
    const zero = probeCall(r, 'limit-zero');
    expect([zero.class, zero.items]).toEqual(['accepted', 0]);
    expect(findingsOf(r, ID, 'zero-unlimited')).toEqual([]);
  });
});

// --- cases C3, C4, C5 -----------------------------------------------------------------------------

describe('c3_isinstance.py (case C3: isinstance(limit, int) lets Booleans through)', () => {
  it('fails with `admitted` for true (1 row) and false (10 rows, the falsy default); the schema is fine', () => {
    const r = runs.c3!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['admitted']);
    expect(c.findings.map((f) => f.messageId)).toEqual(['admitted']);
    const f = one(c.findings);
    expect(f.data).toEqual({ tool: 'query', param: 'limit', kind: 'count', values: 'false (10 items), true (1 item)', them: 'them' });
    expect(evidenceOf(r, f)).toEqual([
      ['limit-false', 'false', 'accepted', 10],
      ['limit-true', 'true', 'accepted', 1],
    ]);
    const falseCall = callOf(r, f.evidence.calls![0]);
    // The other argument is sampled valid: query "sealmark".
    expect(argsOf(falseCall)).toEqual({ query: 'sealmark', limit: false });
    expect(f.replay).toBe(replayFor(commandOf('limits/c3_isinstance.py'), 'query', { query: 'sealmark', limit: false }));
    expect(c.notes).toEqual([`query.limit: raw-one-point-zero ${NOT_SENT}`, `query.limit: ${NO_VALID_CALL}`]);
  });
});

describe('c4_slice.py (case C4: items[offset:offset+limit] with a negative limit)', () => {
  it('fails with `negative-slices`: -1 -> 99 items and -5 -> 95 items against 1 -> 1', () => {
    const r = runs.c4!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['negative-slices', 'no-maximum', 'no-minimum']);
    const f = one(findingsOf(r, ID, 'negative-slices'));
    expect(f.data).toEqual({ tool: 'list_items', param: 'limit', kind: 'count', value: '-1 and -5', negative: '99 and 95', one: 1 });
    // The case asks for the counts of -5 and 1 as evidence.
    expect(evidenceOf(r, f)).toEqual([
      ['limit-negative', '-1', 'accepted', 99],
      ['limit-minus-five', '-5', 'accepted', 95],
      ['limit-one', '1', 'accepted', 1],
    ]);
    expect(f.evidence.quotes).toEqual(['limit = -1: 99 items; limit = 1: 1 item', 'limit = -5: 95 items; limit = 1: 1 item']);
    const minusFive = callOf(r, f.evidence.calls![1]);
    const items = (minusFive.reply.raw as { result: { structuredContent: { items: string[] } } }).result.structuredContent.items;
    expect([items.length, items[0], items[94]]).toEqual([95, 'item-001', 'item-095']);
    expect(textOf(callOf(r, f.evidence.calls![2]))).toBe('item-001');
    expect(f.replay).toBe(replayFor(commandOf('limits/c4_slice.py'), 'list_items', argsOf(callOf(r, f.evidence.calls![0]))));
    expect((argsOf(callOf(r, f.evidence.calls![0])) as { limit: number }).limit).toBe(-1);
  });

  it('is partial on the schema: limit has neither a minimum nor a maximum', () => {
    const r = runs.c4!;
    const min = one(findingsOf(r, ID, 'no-minimum'));
    const max = one(findingsOf(r, ID, 'no-maximum'));
    expect([min.level, max.level]).toEqual(['partial', 'partial']);
    expect(min.data).toEqual({ tool: 'list_items', param: 'limit', kind: 'count', lower: 'no minimum' });
    expect(max.data).toEqual({ tool: 'list_items', param: 'limit', kind: 'count' });
    expect(max.evidence.schemaPaths).toEqual(['tools[0].inputSchema.properties.limit']);
  });

  it('10^9 (allowed: no maximum) returned all 100 items and is not a finding; the duplicate was read last-wins (5)', () => {
    const r = runs.c4!;
    const over = probeCall(r, 'limit-over-max');
    expect([over.value, over.class, over.items, over.invalidBecause]).toEqual(['1000000000', 'accepted', 100, undefined]);
    const dup = probeCall(r, 'raw-duplicate');
    expect([dup.value, dup.class, dup.items]).toEqual(['1,"limit":5', 'accepted', 5]);
    expect(findingsOf(r, ID, 'admitted')).toEqual([]);
    expect(findingsOf(r, ID, 'zero-unlimited')).toEqual([]);
    expect(probeCall(r, 'limit-zero').items).toBe(0);
  });
});

describe('c5_wait_nan.py (case C5: NaN passes `seconds < 0 or seconds > 60`)', () => {
  it('fails with `admitted` for the raw NaN line, replayed with --raw-args', () => {
    const r = runs.c5!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['admitted']);
    const f = one(c.findings);
    expect(f.data).toEqual({ tool: 'wait', param: 'seconds', kind: 'duration', values: 'NaN', them: 'it' });
    expect(f.evidence.quotes).toEqual(['NaN is not a finite JSON number']);
    const call = callOf(r, one(f.evidence.calls!));
    // A duration admits time, not items: no item count is read.
    expect([call.probe, call.value, call.class, call.items]).toEqual(['raw-nan', 'NaN', 'accepted', undefined]);
    expect(call.rawArguments).toBe('{"seconds":NaN}');
    expect(call.request).toBe(`{"jsonrpc":"2.0","id":${idOf(call)},"method":"tools/call","params":{"name":"wait","arguments":{"seconds":NaN}}}`);
    expect(textOf(call)).toBe('waited nan seconds');
    expect(f.replay).toContain(`--raw-args '{"seconds":NaN}'`);
    expect(f.replay).toBe(rawReplayFor(commandOf('limits/c5_wait_nan.py'), 'wait', '{"seconds":NaN}'));
    expect(c.notes).toEqual([`wait.seconds: limit-fraction ${NOT_SENT}`, `wait.seconds: raw-one-point-zero ${NOT_SENT}`]);
  });

  it('Infinity, -Infinity and 1e309 fail the range check; 1.5 and 1.0 (valid durations) are not sent to a tool that may write', () => {
    const r = runs.c5!;
    expect(limitCalls(r).map((c) => [c.probe, c.class])).toEqual([
      ['limit-false', 'rejected'],
      ['limit-true', 'rejected'],
      ['limit-negative', 'rejected'],
      ['limit-string', 'rejected'],
      ['limit-over-max', 'rejected'],
      ['raw-nan', 'accepted'],
      ['raw-infinity', 'rejected'],
      ['raw-minus-infinity', 'rejected'],
      ['raw-huge', 'rejected'],
      ['raw-duplicate', 'rejected'],
    ]);
    expect(textOf(probeCall(r, 'raw-huge'))).toBe('Invalid arguments: seconds must be from 0 to 60');
    expect(probeCall(r, 'limit-over-max').value).toBe('61');
  });
});

describe('slow_nan.mjs (accepts NaN, but answers it only after 800 ms)', () => {
  it('adopts the late reply: `admitted` NaN, never `dropped`', () => {
    const r = runs.slowNan!;
    expect(checkOf(r, ID).verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['admitted']);
    expect(findingsOf(r, ID, 'dropped')).toEqual([]);
    const f = one(findingsOf(r, ID, 'admitted'));
    expect(f.data.values).toBe('NaN (3 items)');
    // sealmark stopped waiting 300 ms after the tools/list sent behind the NaN line was answered;
    // the reply came at about 800 ms and replaced the "no reply" record before judging.
    const call = callOf(r, one(f.evidence.calls!));
    expect([call.probe, call.class, call.reply.kind, call.items]).toEqual(['raw-nan', 'accepted', 'response', 3]);
    expect(call.durationMs).toBeGreaterThanOrEqual(800);
    expect(textOf(call)).toBe('row-1\nrow-2\nrow-3');
    // Infinity and -Infinity are rejected at once (a finite range check catches them).
    expect(['raw-infinity', 'raw-minus-infinity'].map((p) => probeCall(r, p).class)).toEqual(['rejected', 'rejected']);
    // The late answer is not a stray.
    expect(findingsOf(r, 'protocol-errors', 'stray-response')).toEqual([]);
  });
});

describe('c5_wait_strict.py (case C5 repaired: parse_constant and object_pairs_hook raise)', () => {
  it('passes; the NaN and duplicate lines get -32700 with id null', () => {
    const r = runs.c5strict!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('pass');
    expect(c.findings).toEqual([]);
    expect(c.notes).toEqual([`wait.seconds: limit-fraction ${NOT_SENT}`, `wait.seconds: raw-one-point-zero ${NOT_SENT}`]);
    for (const p of ['raw-nan', 'raw-infinity', 'raw-minus-infinity', 'raw-duplicate']) {
      const call = probeCall(r, p);
      expect([call.class, call.reply], p).toEqual(['rejected-unnamed', { kind: 'response', raw: PARSE_ERROR }]);
    }
    expect(probeCall(r, 'raw-duplicate').rawArguments).toBe('{"seconds":1,"seconds":61}');
    const huge = probeCall(r, 'raw-huge');
    expect([huge.class, textOf(huge)]).toEqual(['rejected', 'Invalid arguments: seconds must be a finite number from 0 to 60']);
  });
});

// --- control -------------------------------------------------------------------------------------

describe('clean_limits.mjs (the well-behaved control)', () => {
  it('passes bounded-limits, oversized-input and concurrency with no finding', () => {
    const r = runs.clean!;
    for (const id of [ID, 'oversized-input', 'concurrency']) {
      expect(checkOf(r, id).verdict, id).toBe('pass');
      expect(checkOf(r, id).findings, id).toEqual([]);
      expect(checkOf(r, id).notes, id).toEqual([]);
    }
  });

  it('accepts only limit 1 (1 item); rejects 0, 1.0 and every other value; -32700 for the non-JSON and duplicate lines', () => {
    const r = runs.clean!;
    const calls = limitCalls(r);
    expect(calls.map((c) => c.probe)).toEqual(ALL_VALUES);
    expect(calls.filter((c) => c.class === 'accepted').map((c) => [c.probe, c.items])).toEqual([['limit-one', 1]]);
    expect(calls.filter((c) => c.class === 'rejected-unnamed').map((c) => c.probe)).toEqual(['raw-nan', 'raw-infinity', 'raw-minus-infinity', 'raw-duplicate']);
    expect(calls.filter((c) => c.class === 'rejected').map((c) => c.probe)).toEqual([
      'limit-false', 'limit-true', 'limit-zero', 'limit-negative', 'limit-minus-five', 'limit-string', 'limit-fraction',
      'limit-over-max', 'raw-one-point-zero', 'raw-huge',
    ]);
    expect(probeCall(r, 'limit-over-max').value).toBe('51');
  });
});

// --- no maximum: the server dies on 10^9 ------------------------------------------------------------

describe('unbounded_alloc.mjs (count: integer, minimum 1, no maximum; 10^9 exhausts a 64 MB heap)', () => {
  it('with a probes: entry: fails `exited` on count = 1000000000, plus the static partial `no-maximum`', () => {
    const r = runs.alloc!;
    expect(r.sandbox.kind).toBe('sandbox');
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['exited', 'no-maximum']);
    const f = one(findingsOf(r, ID, 'exited'));
    expect(f.level).toBe('fail');
    expect(f.data).toEqual({ tool: 'generate_rows', param: 'count', kind: 'count', value: '1000000000', what: 'count = 1000000000' });
    expect(f.message).toBe('generate_rows: the server exited on count = 1000000000');
    const call = callOf(r, one(f.evidence.calls!));
    expect([call.probe, call.value, call.class, call.items, call.reply]).toEqual(['limit-over-max', '1000000000', 'exited', undefined, { kind: 'exited' }]);
    expect(argsOf(call)).toEqual({ count: 1_000_000_000 });
    expect(f.replay).toBe(replayFor([process.execPath, ...ALLOC_ARGS], 'generate_rows', { count: 1_000_000_000 }));
    expect(r.stderrTail).toContain('JavaScript heap out of memory');
    const max = one(findingsOf(r, ID, 'no-maximum'));
    expect([max.level, max.data.param]).toEqual(['partial', 'count']);
    // The server was started again after 10^9 (SPEC section 3 step 3): nothing is left unsent.
    expect(c.notes).toEqual([]);
    // The probes: entry is the valid call ({count: 1}, one row); the raw values after 10^9 went to the restarted server.
    const up = one(r.calls.filter((x) => x.probe === 'user-probe'));
    expect([up.tool, argsOf(up), up.class, up.items]).toEqual(['generate_rows', { count: 1 }, 'accepted', 1]);
    expect(limitCalls(r).map((x) => [x.probe, x.class, x.items])).toEqual([
      ['limit-false', 'rejected', undefined],
      ['limit-true', 'rejected', undefined],
      ['limit-zero', 'rejected', undefined],
      ['limit-one', 'accepted', 1],
      ['limit-negative', 'rejected', undefined],
      ['limit-minus-five', 'rejected', undefined],
      ['limit-string', 'rejected', undefined],
      ['limit-fraction', 'rejected', undefined],
      ['limit-over-max', 'exited', undefined],
      ['raw-one-point-zero', 'accepted', 1],
      ['raw-nan', 'rejected-unnamed', undefined],
      ['raw-infinity', 'rejected-unnamed', undefined],
      ['raw-minus-infinity', 'rejected-unnamed', undefined],
      ['raw-huge', 'rejected', undefined],
      ['raw-duplicate', 'accepted', 1],
    ]);
  });

  // SPEC section 3 step 3: no check is n/a because an earlier probe took the server down.
  it('with a probes: entry: oversized-input and concurrency still run, on the restarted server, and pass', () => {
    const r = runs.alloc!;
    expect(checkOf(r, 'oversized-input').verdict).toBe('pass');
    expect(checkOf(r, 'concurrency').verdict).toBe('pass');
    expect(r.calls.filter((c) => c.probe === 'concurrent-call')).toHaveLength(16);
    expect(r.calls.filter((c) => ['oversized-string', 'oversized-array', 'deep-object'].includes(c.probe)).length).toBeGreaterThan(0);
  });

  it('without a probes: entry and without the sandbox, generate_rows (which may write) gets no value at all: your files are not protected; only the static partial remains', () => {
    const r = runs.allocNoSandbox!;
    expect(r.sandbox.kind).toBe('none');
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('partial');
    expect(graded(r, ID)).toEqual(['no-maximum']);
    expect(limitCalls(r)).toEqual([]);
    expect(c.notes).toEqual([
      'generate_rows.count: not probed: it may write (it states no readOnlyHint: true), and no sandbox (--no-sandbox): a tool that acted on invalid input would change your files (--allow-effects sends these calls)',
    ]);
    expect(r.calls.filter((x) => x.request.includes('1000000000'))).toEqual([]);
  });

  // Found by a breaker (server-memory, SEALMARK_NO_OVERLAY=1): the entry licensed the limit values sealmark put in it.
  it('with a probes: entry but without the sandbox, generate_rows still gets no value of sealmark’s: the entry itself is the only call', () => {
    const r = runs.allocProbesNoSandbox!;
    expect(r.sandbox.kind).toBe('none');
    expect(limitCalls(r)).toEqual([]);
    expect(checkOf(r, ID).notes).toEqual([
      'generate_rows.count: not probed: it may write (it states no readOnlyHint: true), and no sandbox (--no-sandbox): a tool that acted on invalid input would change your files (--allow-effects sends these calls)',
    ]);
    expect(r.calls.filter((c) => c.probe === 'user-probe').map((c) => c.tool)).toEqual(['generate_rows']);
    expect(r.calls.filter((x) => x.request.includes('1000000000'))).toEqual([]);
    // robust-input says the entry went out, and that what it wrote was real.
    expect(JSON.stringify(checkOf(r, 'robust-input'))).toContain('its probes: entries were sent as written, and what they wrote was real');
  });

  it.each([['in the sandbox', 'allocNoProbes', 'sandbox']])('without a probes: entry, %s: 10^9 is NOT sent (schema-valid, and the tool may write); only the static partial remains', (_label, key, kind) => {
    const r = runs[key]!;
    expect(r.sandbox.kind).toBe(kind);
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('partial');
    expect(graded(r, ID)).toEqual(['no-maximum']);
    expect(findingsOf(r, ID, 'exited')).toEqual([]);
    expect(c.notes).toEqual([
      `generate_rows.count: limit-over-max ${NOT_SENT}`,
      `generate_rows.count: raw-one-point-zero ${NOT_SENT}`,
      `generate_rows.count: raw-duplicate ${NOT_SENT}`,
      `generate_rows.count: ${NO_VALID_CALL}`,
    ]);
    expect(r.calls.filter((x) => x.value === '1000000000' || x.request.includes('1000000000'))).toEqual([]);
    expect(r.calls.filter((x) => x.probe === 'user-probe')).toEqual([]);
    expect(limitCalls(r).map((x) => [x.probe, x.class])).toEqual([
      ['limit-false', 'rejected'],
      ['limit-true', 'rejected'],
      ['limit-negative', 'rejected'],
      ['limit-string', 'rejected'],
      ['limit-fraction', 'rejected'],
      ['raw-nan', 'rejected-unnamed'],
      ['raw-infinity', 'rejected-unnamed'],
      ['raw-minus-infinity', 'rejected-unnamed'],
      ['raw-huge', 'rejected'],
    ]);
    // The server lived, so the other two checks ran and passed.
    expect([checkOf(r, 'oversized-input').verdict, checkOf(r, 'concurrency').verdict]).toEqual(['pass', 'pass']);
  });
});

// --- the bundled demo ------------------------------------------------------------------------------

describe('demo/server.mjs (list_recent: `count || notes.size`)', () => {
  it('fails with `zero-unlimited` on list_recent.count: 0 lists every note, 1 lists one', () => {
    const r = runs.demo!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['zero-unlimited']);
    const f = one(c.findings);
    expect(f.tool).toBe('list_recent');
    const zero = callOf(r, f.evidence.calls![0]);
    // 3 seeded notes plus one per add_note call the earlier probes made (add_note saves anything).
    const added = r.calls.filter((x) => x.tool === 'add_note' && x.seq < zero.seq && /^added note n\d+:/.test(JSON.stringify(x.reply.raw ?? null).match(/"text":"([^"]*)/)?.[1] ?? '')).length;
    expect(f.data).toEqual({ tool: 'list_recent', param: 'count', kind: 'count', zero: 3 + added, one: 1 });
    expect(f.data.zero).toBe(9);
    expect(evidenceOf(r, f)).toEqual([
      ['limit-zero', '0', 'accepted', 9],
      ['limit-one', '1', 'accepted', 1],
    ]);
    expect(textOf(zero).split('\n').map((l) => l.split(':')[0])).toEqual(['n9', 'n8', 'n7', 'n6', 'n5', 'n4', 'n3', 'n2', 'n1']);
    expect(f.replay).toBe(replayFor([process.execPath, `${root}demo/server.mjs`], 'list_recent', { count: 0 }));
  });
});

// --- upstream requests refused by the sandbox (effects-real) ---------------------------------------

describe('effects-real/upstream-limits.mjs (firecrawl_map: the tool runs and its retried request is refused by the sandbox)', () => {
  const ns = networkNamespaceAvailable();
  const ONLY_LIMITS = { checks: Object.fromEntries(['robust-input', 'strict-arguments', 'protocol-errors', 'default-call-effects', 'filler-call-effects', 'oversized-input', 'concurrency', 'annotations', 'idempotency-key', 'two-step-writes', 'secret-echo'].map((id) => [id, { enabled: false }])) };
  const CONNECT = 'network: proxy: CONNECT api.example.com:443 HTTP/1.1 (3 times during the call)';
  const FAILED = "Tool 'map_site' execution failed: Request failed with status code 502";
  let r: Report;
  beforeAll(async () => {
    if (ns.ok) r = await auditFixture('effects-real/upstream-limits.mjs', ONLY_LIMITS);
  }, 60_000);

  it.skipIf(!ns.ok)(`map_site: the forbidden numbers were used, not rejected: one \`used-upstream\` finding, no \`effect-on-rejected\`${ns.ok ? '' : ` — skipped: ${ns.why}`}`, () => {
    expect(r.sandbox.network).toBe('namespace');
    const mine = checkOf(r, ID).findings.filter((f) => f.tool === 'map_site');
    expect(mine.map((f) => [f.messageId, f.level])).toEqual([
      ['used-upstream', 'fail'],
      ['zero-not-compared', 'info'],
    ]);
    const f = mine[0]!;
    expect(f.data.values).toBe('-1, -5, 1.5, 101, 1e309, a duplicate "limit" member (1 then 101)');
    expect(f.data.effect).toBe(CONNECT);
    expect(f.message).toBe(`map_site: limit = -1, -5, 1.5, 101, 1e309, a duplicate "limit" member (1 then 101) not rejected before an effect, though the schema forbids them: the tool connected out (${CONNECT}) and its reply reports the upstream failure (${FAILED})`);
    expect(f.evidence.quotes).toEqual([FAILED, 'proxy: CONNECT api.example.com:443 HTTP/1.1 (×3)']);
    expect(evidenceOf(r, f).map(([probe, value, cls]) => [probe, value, cls])).toEqual([
      ['limit-negative', '-1', 'rejected-unnamed'],
      ['limit-minus-five', '-5', 'rejected-unnamed'],
      ['limit-fraction', '1.5', 'rejected-unnamed'],
      ['limit-over-max', '101', 'rejected-unnamed'],
      ['raw-huge', '1e309', 'rejected-unnamed'],
      ['raw-duplicate', '1,"limit":101', 'rejected-unnamed'],
    ]);
    // false, true and "1" were rejected by the handler's type check before any request.
    for (const p of ['limit-false', 'limit-true', 'limit-string']) expect(probeCall(r, p, 'map_site').effects ?? [], p).toEqual([]);
  });

  it.skipIf(!ns.ok)('map_site: 0 and 1 are valid calls; both failed upstream, so the zero comparison is not judged (`zero-not-compared`, info)', () => {
    const f = one(findingsOf(r, ID, 'zero-not-compared'));
    expect(f.message).toBe(`map_site: whether limit = 0 means unlimited is not judged: limit = 0 and limit = 1 both failed upstream (${FAILED}), so no items came back to compare`);
    expect(evidenceOf(r, f)).toEqual([
      ['limit-zero', '0', 'rejected-unnamed', undefined],
      ['limit-one', '1', 'rejected-unnamed', undefined],
    ]);
    expect(probeCall(r, 'limit-zero', 'map_site').effects).toHaveLength(3);
    expect(checkOf(r, ID).notes.filter((n) => n.startsWith('map_site.'))).toEqual([]);
  });

  it.skipIf(!ns.ok)('fetch_feed: rejected after its request: one `effect-on-rejected` per call, never one per retry; none for the valid 0, 1 and 1.0', () => {
    const fs = findingsOf(r, ID, 'effect-on-rejected');
    expect(fs.every((f) => f.tool === 'fetch_feed')).toBe(true);
    expect(fs.map((f) => f.data.what)).toEqual(['limit = false', 'limit = true', 'limit = -1', 'limit = -5', 'limit = "1"', 'limit = 1.5', 'limit = 101', 'limit = 1e309', 'a duplicate "limit" member (1 then 101)']);
    for (const f of fs) {
      expect(f.evidence.calls).toHaveLength(1);
      expect(f.evidence.quotes).toEqual(['proxy: CONNECT feeds.example.com:443 HTTP/1.1 (×3)']);
      expect(f.data.effect).toBe('network: proxy: CONNECT feeds.example.com:443 HTTP/1.1 (3 times during the call)');
    }
    expect(new Set(fs.map((f) => f.evidence.calls![0])).size).toBe(fs.length);
    expect(fs.at(-1)!.message).toBe('fetch_feed: a duplicate "limit" member (1 then 101) was rejected, but the sandbox saw an effect during the call: network: proxy: CONNECT feeds.example.com:443 HTTP/1.1 (3 times during the call)');
    // The valid calls had the same effect; it is expected, and their items compare cleanly.
    expect(['limit-zero', 'limit-one', 'raw-one-point-zero'].map((p) => [p, probeCall(r, p, 'fetch_feed').class, probeCall(r, p, 'fetch_feed').effects?.length])).toEqual([
      ['limit-zero', 'accepted', 3],
      ['limit-one', 'accepted', 3],
      ['raw-one-point-zero', 'accepted', 3],
    ]);
    expect(checkOf(r, ID).findings.filter((f) => f.tool === 'fetch_feed').map((f) => f.messageId)).toEqual(Array(9).fill('effect-on-rejected'));
    expect(checkOf(r, ID).verdict).toBe('fail');
  });
});

describe('limits/rate_limited.mjs (a limiter of one search per 500 ms, as server-brave-search has, over a tool that never checks count)', () => {
  it('makes each call refused for the rate limit once more, and judges every value on the call that ran', async () => {
    const r = await auditFixture('limits/rate_limited.mjs');
    const limits = r.calls.filter((c) => c.tool === 'search' && (c.probe.startsWith('limit-') || c.probe.startsWith('raw-')));
    const text = (c: ReportCall) => JSON.stringify(c.reply.raw ?? c.reply.rawText ?? '');
    const limited = limits.filter((c) => text(c).includes('Rate limit exceeded'));
    // The calls come faster than the limiter allows: most are refused once.
    expect(limited.length).toBeGreaterThan(5);
    for (const c of limited) {
      const next = r.calls.find((x) => x.seq > c.seq && x.tool === 'search')!;
      expect([next.probe, next.value], `after call ${c.seq}`).toEqual([c.probe, c.value]);
      expect(text(next), `after call ${c.seq}`).not.toContain('Rate limit exceeded');
    }
    const f = checkOf(r, ID).findings.filter((x) => x.messageId === 'admitted');
    expect(f).toHaveLength(1);
    expect(f[0]!.message).toBe('search: count = false (5 items), true (1 item), 0 (5 items), -1 (5 items), -5 (5 items), "1" (1 item), 1.5 (1 item), 21 (21 items), 1e309 (5 items), a duplicate "count" member (1 then 21) (21 items) accepted though the schema forbids them');
    expect(checkOf(r, ID).verdict).toBe('fail');
  }, 90_000);
});

// --- unit: the upstream failure line and the value label --------------------------------------------

describe('upstreamFailureLine and valueLabel', () => {
  it.each([
    ["Tool 'firecrawl_map' execution failed: Request failed with status code 502", true],
    ['Alexandria request failed (HTTP 502)', true],
    ['502 Server Error: Bad Gateway for url: https://api.example.com/v1', true],
    ['Tunnel connection failed: 502 Bad Gateway', true],
    ['limit must be <= 500', false],
    ['Request failed with status code 404', false],
  ])('%s -> %s', (text, found) => {
    expect(upstreamFailureLine(`first line\n${text}`) === text).toBe(found);
  });
  it('names the duplicate member readably, every other value as `param = value`', () => {
    expect(valueLabel('limit', 'raw-duplicate', '1,"limit":5')).toBe('a duplicate "limit" member (1 then 5)');
    expect(valueLabel('max_calls', 'limit-false', 'false')).toBe('max_calls = false');
  });
});
