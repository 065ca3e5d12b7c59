/**
 * oversized-input (pack limits, scored; SPEC section 5) against real fixture servers: a parser that
 * exits on a deeply nested object (in and out of the sandbox), a tool that never answers a 1 MiB
 * string, the clean control and a server whose only tool has no typed property (n/a).
 *
 * The audits run together in one beforeAll. The hang fixture uses a 2000 ms hang limit
 * (`checks.robust-input.hang_ms`, which bounds every probe) to keep the run short.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { auditFixture, checkOf, findingsOf, fixtureCommand, graded } from '../helpers/run.js';
import { BIG_ARRAY_ITEMS, BIG_STRING_BYTES, DEEP_OBJECT_LEVELS, deepObject } from '../../src/probes/oversized.js';
import { shellQuote } from '../../src/replay.js';
import type { Report, ReportCall } from '../../src/report/build.js';

// --- helpers -------------------------------------------------------------------------------------

const ID = 'oversized-input';
const HANG_MS = 2000;
const FAST_HANGS = { checks: { 'robust-input': { hang_ms: HANG_MS } } };
const OVERSIZED = ['oversized-string', 'oversized-array', 'deep-object'];
/**
 * A schema-valid oversized value goes only to a read-only tool: not in the sandbox (it does not stop
 * writes outside its scratch folders), not with a probes: entry (that vouches for its own arguments).
 */
const NAME_NOT_SENT = 'save_tree: oversized-string not sent: the schema admits it and save_tree may write: sent only to a read-only tool';
const TREE_PROBE = { probes: [{ tool: 'save_tree', arguments: { tree: { label: 'root' } } }] };

/** The single element of `xs` (fails the test when there is not exactly one). */
/** The seq of protocol-errors' array-params probe (judged after every gatherer), or Infinity. */
function arrayParamsSeq(r: Report): number {
  return r.calls.find((c) => c.probe === 'array-params')?.seq ?? Infinity;
}

function one<T>(xs: T[]): T {
  expect(xs).toHaveLength(1);
  return xs[0] as T;
}

function callOf(r: Report, seq: number | undefined): ReportCall {
  const c = r.calls.find((x) => x.seq === seq);
  if (!c) throw new Error(`no call #${String(seq)}`);
  return c;
}

/** The oversized probes of a report, in order. */
function oversizedCalls(r: Report): ReportCall[] {
  return r.calls.filter((c) => OVERSIZED.includes(c.probe));
}

/** The `arguments` member of a call as it went out on the wire (the whole request must be in the report). */
function argsOf(c: ReportCall): Record<string, unknown> {
  return (JSON.parse(c.request) as { params: { arguments: Record<string, unknown> } }).params.arguments;
}

/** Levels of nesting of `{"a":{"a":…{}}}` (the innermost `{}` counts as one). */
function depthOf(v: unknown): number {
  let n = 0;
  let cur = v;
  while (typeof cur === 'object' && cur !== null) {
    n++;
    cur = (cur as { a?: unknown }).a;
  }
  return n;
}

/** The text of a reply's first content block. */
function textOf(c: ReportCall): string {
  return (c.reply.raw as { result: { content: { text: string }[] } }).result.content[0]!.text;
}

/** A tools/call request line as the report keeps it: whole up to 4,096 characters, else cut with `…`. */
function reportedRequest(id: number, tool: string, args: unknown): string {
  const line = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: args } });
  return line.length > 4096 ? `${line.slice(0, 4096)}…` : line;
}

/** The JSON-RPC id of a (possibly cut) request line. */
function idOf(c: ReportCall): number {
  return Number(/^\{"jsonrpc":"2\.0","id":(\d+),/.exec(c.request)![1]);
}

function replayFor(name: string, tool: string, args: unknown): string {
  const { command, args: cmdArgs } = fixtureCommand(name);
  return `sealmark call --tool ${tool} --args ${shellQuote(JSON.stringify(args))} -- ${[command, ...cmdArgs].map(shellQuote).join(' ')}`;
}

// --- the runs ------------------------------------------------------------------------------------

const runs: Record<string, Report> = {};

beforeAll(async () => {
  const jobs: Record<string, () => Promise<Report>> = {
    deep: () => auditFixture('limits/deep_recursion.mjs'),
    deepNoSandbox: () => auditFixture('limits/deep_recursion.mjs', {}, [], { sandbox: false }),
    deepNoSandboxAllowed: () => auditFixture('limits/deep_recursion.mjs', {}, [], { sandbox: false, allowEffects: true }),
    deepProbes: () => auditFixture('limits/deep_recursion.mjs', TREE_PROBE),
    hang: () => auditFixture('limits/hangs_on_big_string.mjs', FAST_HANGS),
    clean: () => auditFixture('limits/clean_limits.mjs'),
    untyped: () => auditFixture('effects/dashboard-fixed.mjs'),
  };
  const done = await Promise.all(Object.entries(jobs).map(async ([k, f]) => [k, await f()] as const));
  for (const [k, r] of done) runs[k] = r;
}, 120_000);

// --- fail ----------------------------------------------------------------------------------------

describe('deep_recursion.mjs (a recursive walk that exits past 32 levels)', () => {
  it('fails with `exited` on the 64-level object in tree; the liveness check goes to the restarted server', () => {
    const r = runs.deep!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['exited']);
    const f = one(c.findings);
    expect(f.level).toBe('fail');
    expect(f.tool).toBe('save_tree');
    expect(f.data).toEqual({ tool: 'save_tree', what: 'a 64-level nested object', param: 'tree' });
    expect(f.message).toBe('save_tree: the server exited on a 64-level nested object in tree');
    // The server was started again for the liveness check (SPEC section 3 step 3): nothing unreached.
    expect(c.notes).toEqual([NAME_NOT_SENT]);
    // Once on the call, once more on its replay alone (the calls answered just before were candidates too).
    expect(r.stderrTail.split('\n').filter((l) => l !== '')).toEqual(['save_tree: nesting deeper than 32 levels, aborting', 'save_tree: nesting deeper than 32 levels, aborting']);
    expect(r.calls.filter((c) => c.probe === 'exit-replay').map((c) => [c.tool, c.reply.kind])).toEqual([['save_tree', 'exited']]);
  });

  it('points at the deep-object call, whose exact request and replay carry the 64-level object', () => {
    const r = runs.deep!;
    const f = one(findingsOf(r, ID, 'exited'));
    const call = callOf(r, one(f.evidence.calls!));
    expect([call.probe, call.tool, call.target, call.class, call.reply]).toEqual(['deep-object', 'save_tree', 'tree', 'exited', { kind: 'exited' }]);
    expect(call.invalidBecause).toEqual(['/tree must NOT have additional properties (a)']);
    const args = argsOf(call);
    // save_tree's only required argument is tree, so the valid base is empty: tree alone.
    expect(Object.keys(args)).toEqual(['tree']);
    expect(depthOf(args.tree)).toBe(DEEP_OBJECT_LEVELS);
    expect(args.tree).toEqual(deepObject(64));
    expect(f.request).toBe(call.request);
    expect(f.replay).toBe(replayFor('limits/deep_recursion.mjs', 'save_tree', args));
  });

  it('sent the array to tree before that, but not the 1 MiB string: it fits name, so it is valid and save_tree may write', () => {
    const r = runs.deep!;
    const calls = oversizedCalls(r);
    expect(calls.map((c) => [c.probe, c.target, c.class])).toEqual([
      ['oversized-array', 'tree', 'rejected'],
      ['deep-object', 'tree', 'exited'],
    ]);
    expect(calls[0]!.invalidBecause).toEqual(['/tree must be object']);
    expect(textOf(calls[0]!)).toBe('Invalid arguments for tool save_tree: parameter "tree" must be of type object, got array');
    // The liveness tools/list after the tool went to the server started again, which answered.
    expect(r.calls.filter((c) => c.probe === 'liveness' && c.tool === 'save_tree' && c.seq > calls[1]!.seq).map((c) => c.reply.kind)).toEqual(['response']);
  });

  it('without the sandbox, save_tree (which may write) gets nothing: your files are not protected', () => {
    const r = runs.deepNoSandbox!;
    expect(r.sandbox.kind).toBe('none');
    expect(oversizedCalls(r)).toEqual([]);
    const c = checkOf(r, ID);
    expect(c.notes).toContain("save_tree: not probed: it may write (it states no readOnlyHint: true), and no sandbox (--no-sandbox): a tool that acted on invalid input would change your files (--allow-effects sends these calls)");
  });

  it('without the sandbox but with --allow-effects, as in it: the schema-valid string is not sent, the invalid 64-level object is, and kills the server', () => {
    const r = runs.deepNoSandboxAllowed!;
    expect(r.sandbox.kind).toBe('none');
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['exited']);
    expect(oversizedCalls(r).map((x) => [x.probe, x.target, x.class])).toEqual([
      ['oversized-array', 'tree', 'rejected'],
      ['deep-object', 'tree', 'exited'],
    ]);
    // The server was started again for the liveness check (SPEC section 3 step 3): nothing unreached.
    expect(c.notes).toEqual([NAME_NOT_SENT]);
  });
});

describe('deep_recursion.mjs with a probes: entry for save_tree', () => {
  it('still does not send the schema-valid 1 MiB string; the probes: arguments are the base of the invalid ones', () => {
    const r = runs.deepProbes!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['exited']);
    // The server was started again for the liveness check (SPEC section 3 step 3): nothing unreached.
    expect(c.notes).toEqual([NAME_NOT_SENT]);
    const calls = oversizedCalls(r);
    expect(calls.map((x) => [x.probe, x.target, x.class])).toEqual([
      ['oversized-array', 'tree', 'rejected'],
      ['deep-object', 'tree', 'exited'],
    ]);
    // Each probe replaces tree, the only member of the probes: arguments.
    expect(Object.keys(argsOf(calls[1]!))).toEqual(['tree']);
    expect(r.calls.filter((x) => x.request.includes('"name":"xxxx'))).toEqual([]);
  });
});

describe('hangs_on_big_string.mjs (summarize never answers a text over 100,000 characters)', () => {
  it('fails with `no-answer` on the 1 MiB string, waited the hang limit (2000 ms)', () => {
    const r = runs.hang!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['no-answer']);
    const f = one(c.findings);
    expect(f.data).toEqual({ tool: 'summarize', what: 'a 1 MiB string', param: 'text', waited: HANG_MS });
    expect(f.message).toBe('summarize: a 1 MiB string in text got no reply within 2000 ms');
    expect(c.notes).toEqual([]);
    // The changed hang limit makes the run non-standard.
    expect([r.standard, r.nonStandardKeys]).toEqual([false, ['checks.robust-input.hang_ms']]);
  });

  it('its evidence is the oversized-string call; a request that long is quoted by its start and not replayed', () => {
    const r = runs.hang!;
    const f = one(findingsOf(r, ID, 'no-answer'));
    const call = callOf(r, one(f.evidence.calls!));
    expect([call.probe, call.tool, call.target, call.class, call.reply]).toEqual(['oversized-string', 'summarize', 'text', 'hang', { kind: 'hang', waitedMs: HANG_MS }]);
    expect(call.request).toHaveLength(4097);
    expect(call.request).toBe(reportedRequest(idOf(call), 'summarize', { text: 'x'.repeat(BIG_STRING_BYTES) }));
    expect(f.request).toBe(call.request);
    expect(f.replay).toBeUndefined();
  });

  it('the array and the object were rejected at once and the server still answered tools/list', () => {
    const r = runs.hang!;
    const calls = oversizedCalls(r);
    expect(calls.map((c) => [c.probe, c.target, c.class])).toEqual([
      ['oversized-string', 'text', 'hang'],
      ['oversized-array', 'text', 'rejected'],
      ['deep-object', 'text', 'rejected'],
    ]);
    expect(textOf(calls[1]!)).toBe('Invalid arguments for tool summarize: parameter "text" must be of type string, got array');
    // (protocol-errors' array-params probe and its liveness check are judged after every gatherer.)
    const live = r.calls.filter((c) => c.probe === 'liveness' && c.seq > calls[2]!.seq && c.seq < arrayParamsSeq(r));
    expect(live.map((c) => [c.tool, c.method, c.reply.kind])).toEqual([['summarize', 'tools/list', 'response']]);
    expect(findingsOf(r, ID, 'not-alive')).toEqual([]);
  });
});

// --- pass and n/a ----------------------------------------------------------------------------------

describe('clean_limits.mjs (the control)', () => {
  it('passes: each oversized value was answered (rejected) and the server lived', () => {
    const r = runs.clean!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('pass');
    expect(c.findings).toEqual([]);
    expect(c.notes).toEqual([]);
    const calls = oversizedCalls(r);
    // search_docs has no array or object property: every probe goes into the first typed one, query.
    expect(calls.map((x) => [x.probe, x.tool, x.target, x.class, x.reply.kind])).toEqual([
      ['oversized-string', 'search_docs', 'query', 'rejected', 'response'],
      ['oversized-array', 'search_docs', 'query', 'rejected', 'response'],
      ['deep-object', 'search_docs', 'query', 'rejected', 'response'],
    ]);
    expect(textOf(calls[0]!)).toBe('Invalid arguments for tool search_docs: parameter "query" must be 1 to 1000 characters');
    expect(calls[0]!.invalidBecause).toEqual(['/query must NOT have more than 1000 characters']);
    expect(calls[1]!.invalidBecause).toEqual(['/query must be string']);
    expect(depthOf(argsOf(calls[2]!).query)).toBe(DEEP_OBJECT_LEVELS);
    const live = r.calls.filter((x) => x.probe === 'liveness' && x.seq > calls[2]!.seq && x.seq < arrayParamsSeq(r));
    expect(live.map((x) => [x.tool, x.reply.kind])).toEqual([['search_docs', 'response']]);
  });

  it('sends the sizes the methodology names: 1 MiB of x and 100,000 items', () => {
    expect(BIG_STRING_BYTES).toBe(1_048_576);
    expect(BIG_ARRAY_ITEMS).toBe(100_000);
    const calls = oversizedCalls(runs.clean!);
    // The report cuts these requests; the start shows the value's shape. The other arguments are
    // the valid base ({query: "sealmark"}), whose query each probe replaced.
    expect(calls[0]!.request).toBe(reportedRequest(idOf(calls[0]!), 'search_docs', { query: 'x'.repeat(BIG_STRING_BYTES) }));
    expect(calls[1]!.request).toBe(reportedRequest(idOf(calls[1]!), 'search_docs', { query: Array.from({ length: BIG_ARRAY_ITEMS }, () => 'x') }));
    expect(calls[2]!.request).toBe(reportedRequest(idOf(calls[2]!), 'search_docs', { query: deepObject(DEEP_OBJECT_LEVELS) }));
  });
});

describe('dashboard-fixed.mjs (its only tool has no properties)', () => {
  it('is n/a: no typed property to put an oversized value in, and nothing was sent', () => {
    const r = runs.untyped!;
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('n/a');
    expect(c.findings).toEqual([]);
    expect(c.notes).toEqual(['no tool has a typed property to put an oversized value in', 'show_dashboard: no typed property to put an oversized value in']);
    expect(oversizedCalls(r)).toEqual([]);
  });
});
