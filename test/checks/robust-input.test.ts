/**
 * robust-input against real fixture servers (SPEC section 5, cases C1, C2, C13, C14), plus unit
 * tests of the planner (`planProbes`) and the wrong-type generator (`wrongTypeFor`).
 *
 * Every audit here is a real run: the fixture is started, listed, probed and ended. protocol-errors
 * is switched off where it is not under test (it only costs time here); hangs use a 500 ms limit.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { auditFixture, checkOf, findingsOf, fixture, graded } from '../helpers/run.js';
import { hangLimitMs, maxTools, planProbes } from '../../src/probes/robust-input.js';
import { INVALID_PROBES } from '../../src/checks/robust-input.js';
import { parseConfig } from '../../src/config/schema.js';
import { configRegistry } from '../../src/config/defaults.js';
import { WRONG_TYPE_CANDIDATES, wrongTypeFor } from '../../src/values.js';
import { compileSchema, propertiesOf, type PropertyInfo } from '../../src/schema.js';
import { shellQuote } from '../../src/replay.js';
import type { Report, ReportCall } from '../../src/report/build.js';
import type { ListedTool } from '../../src/types.js';

// --- helpers -------------------------------------------------------------------------------------

/** No protocol-errors and no limits pack: these tests are about robust-input only. */
const ONLY_ROBUST = {
  checks: {
    'protocol-errors': { enabled: false },
    'strict-arguments': { enabled: false },
    'bounded-limits': { enabled: false },
    'oversized-input': { enabled: false },
    concurrency: { enabled: false },
  },
};

const memo = new Map<string, Promise<Report>>();
/** One audit per (fixture, config, extra args), shared by the tests that read it. */
function run(name: string, raw: Record<string, unknown> = ONLY_ROBUST, extra: string[] = []): Promise<Report> {
  const key = JSON.stringify([name, raw, extra]);
  let p = memo.get(key);
  if (!p) {
    p = auditFixture(name, raw, extra);
    memo.set(key, p);
  }
  return p;
}

/** Probes of the effects pack (default and filler calls, made in the sandbox): not robust-input's. */
const EFFECT_PROBES = new Set(['default-call', 'filler-call']);

/** tools/call calls made to `tool` by robust-input, in order; other gatherers' probes left out. */
function toolCalls(r: Report, tool: string): ReportCall[] {
  return r.calls.filter((c) => c.tool === tool && c.method === 'tools/call' && (INVALID_PROBES.has(c.probe) || c.probe === 'read-only-no-args' || c.probe === 'user-probe'));
}

/** The `arguments` member of a call as it went out on the wire (undefined when omitted). */
function argsOf(c: ReportCall): unknown {
  return (JSON.parse(c.request) as { params: { arguments?: unknown } }).params.arguments;
}

function callOf(r: Report, seq: number | undefined): ReportCall {
  const c = r.calls.find((x) => x.seq === seq);
  if (!c) throw new Error(`no call #${String(seq)}`);
  return c;
}

function callByProbe(r: Report, tool: string, probe: string): ReportCall {
  const c = toolCalls(r, tool).find((x) => x.probe === probe);
  if (!c) throw new Error(`no ${probe} call to ${tool}`);
  return c;
}

/** The replay line sealmark must print for a fixture call (command as auditFixture starts it). */
function replayFor(name: string, tool: string, args: unknown): string {
  const cmd = name.endsWith('.py') ? ['python3', fixture(name)] : [process.execPath, fixture(name)];
  return `sealmark call --tool ${tool} --args '${JSON.stringify(args)}' -- ${cmd.map(shellQuote).join(' ')}`;
}

const CORE_PROBES = ['missing-required', 'wrong-types', 'nulls', 'extra-argument', 'string-as-object', 'nested-string', 'nested-item'];

// --- correct server ------------------------------------------------------------------------------

describe('correct-sdk.mjs (official v1 SDK, zod .strict())', () => {
  let r: Report;
  beforeAll(async () => {
    r = await run('correct-sdk.mjs');
  });

  it('passes robust-input with nothing graded and no stop', () => {
    const c = checkOf(r, 'robust-input');
    expect(c.verdict).toBe('pass');
    expect(graded(r, 'robust-input')).toEqual([]);
    expect(c.findings.filter((f) => f.messageId === 'three-hangs' || f.messageId === 'server-gone')).toEqual([]);
  });

  it('sends the applicable probes to each tool, and every core probe overall', () => {
    const set = (tool: string) => new Set(toolCalls(r, tool).map((c) => c.probe));
    expect(set('create_ticket')).toEqual(
      new Set(['missing-required', 'wrong-types', 'nulls', 'extra-argument', 'string-as-object']),
    );
    // rows is a required array of objects: nested-string and nested-item; no string argument, so no string-as-object.
    expect(set('import_rows')).toEqual(
      new Set(['missing-required', 'wrong-types', 'nulls', 'extra-argument', 'nested-string', 'nested-item']),
    );
    expect(set('set_mode')).toEqual(
      new Set(['missing-required', 'wrong-types', 'nulls', 'extra-argument', 'string-as-object']),
    );
    expect(set('store_stats')).toEqual(
      new Set(['missing-required', 'wrong-types', 'nulls', 'extra-argument', 'string-as-object']),
    );
    expect(set('ping_store')).toEqual(new Set(['read-only-no-args']));
    const sent = new Set(r.calls.map((c) => c.probe));
    for (const p of CORE_PROBES) expect(sent, p).toContain(p);
  });

  it('sends the exact invalid arguments, each with its Ajv proof, and every one is rejected', () => {
    expect(argsOf(callByProbe(r, 'create_ticket', 'wrong-types'))).toEqual({ title: 12345, priority: 'not-a-valid-value' });
    expect(argsOf(callByProbe(r, 'create_ticket', 'nulls'))).toEqual({ title: null, priority: null });
    expect(argsOf(callByProbe(r, 'create_ticket', 'extra-argument'))).toEqual({ title: 12345, priority: 'not-a-valid-value', sm_unexpected: 'sealmark' });
    expect(argsOf(callByProbe(r, 'create_ticket', 'string-as-object'))).toEqual({ title: { x: 1 } });
    expect(argsOf(callByProbe(r, 'import_rows', 'nested-string'))).toEqual({ rows: 'not-a-valid-value' });
    expect(argsOf(callByProbe(r, 'import_rows', 'nested-item'))).toEqual({ rows: [{}] });
    expect(callByProbe(r, 'import_rows', 'nested-item').invalidBecause).toEqual(["/rows/0 must have required property 'name'"]);
    // mode is an enum of strings and persist a boolean: both get 12345, the first candidate they do not allow.
    expect(argsOf(callByProbe(r, 'set_mode', 'wrong-types'))).toEqual({ mode: 12345, persist: 12345 });
    // robust-input's invalid probes only: the effects pack's default/filler calls send valid arguments.
    for (const c of r.calls.filter((x) => x.method === 'tools/call' && x.probe !== 'read-only-no-args' && !EFFECT_PROBES.has(x.probe))) {
      expect(c.invalidBecause?.length, `${c.tool} ${c.probe}`).toBeGreaterThan(0);
      expect(c.class, `${c.tool} ${c.probe}`).toBe('rejected');
    }
  });

  it('makes the read-only no-argument call to ping_store, which counts for coverage', () => {
    const c = callByProbe(r, 'ping_store', 'read-only-no-args');
    expect(argsOf(c)).toEqual({});
    expect(c.class).toBe('accepted');
    expect(c.invalidBecause).toBeUndefined();
    expect(r.coverage.tools.find((t) => t.name === 'ping_store')?.level).toBe('exercised');
    expect(r.coverage.tools.find((t) => t.name === 'create_ticket')?.level).toBe('hygiene-only');
    expect(r.coverage.level).toBe('exercised');
  });

  it('checks liveness after each probed tool', () => {
    const live = r.calls.filter((c) => c.probe === 'liveness').map((c) => c.tool);
    expect(live).toEqual(['create_ticket', 'import_rows', 'set_mode', 'ping_store', 'store_stats']);
  });
});

// --- partial: accepted, leak, lenient, internal errors ------------------------------------------------

describe('no-validation.mjs', () => {
  let r: Report;
  beforeAll(async () => {
    r = await run('no-validation.mjs');
  });

  it('is partial with one grouped `accepted` finding per tool', () => {
    expect(checkOf(r, 'robust-input').verdict).toBe('partial');
    expect(graded(r, 'robust-input')).toEqual(['accepted']);
    expect(findingsOf(r, 'robust-input', 'accepted').map((f) => f.tool)).toEqual(['send_report', 'tag_items']);
  });

  it('carries the Ajv proof of invalidity in each accepted call', () => {
    const wrong = callByProbe(r, 'send_report', 'wrong-types');
    expect(argsOf(wrong)).toEqual({ recipient: 12345, copies: 'not-a-valid-value' });
    expect(wrong.class).toBe('accepted');
    expect(wrong.invalidBecause).toEqual(['/recipient must be string', '/copies must be integer']);
    const item = callByProbe(r, 'tag_items', 'nested-item');
    expect(argsOf(item)).toEqual({ items: [{}] });
    expect(item.invalidBecause).toEqual(["/items/0 must have required property 'id'"]);
    expect(item.class).toBe('accepted');
  });

  it('points the finding at every accepted call, quotes the proof and replays the first', () => {
    const f = findingsOf(r, 'robust-input', 'accepted').find((x) => x.tool === 'send_report')!;
    const seqs = toolCalls(r, 'send_report').map((c) => c.seq);
    expect(f.evidence.calls).toEqual(seqs);
    expect(f.message).toBe("send_report: schema-invalid arguments were accepted (missing-required: (root) must have required property 'recipient')");
    expect(f.evidence.quotes).toContain('/recipient must be string');
    expect(f.replay).toBe(replayFor('no-validation.mjs', 'send_report', {}));
    expect(f.request).toBe(callOf(r, seqs[0]).request);
  });
});

describe('leaks-stack.mjs', () => {
  let r: Report;
  beforeAll(async () => {
    r = await run('leaks-stack.mjs');
  });

  it('is partial `leak` although every call was rejected', () => {
    expect(checkOf(r, 'robust-input').verdict).toBe('partial');
    expect(graded(r, 'robust-input')).toEqual(['leak']);
    for (const c of toolCalls(r, 'create_issue')) expect(c.class).toBe('rejected');
  });

  it('quotes the home-path frame and the node:internal frame', () => {
    const [f] = findingsOf(r, 'robust-input', 'leak');
    expect(f!.evidence.quotes).toContain('at handler (/home/runner/app/src/tools.js:42:13)');
    expect(f!.evidence.quotes).toContain('at node:internal/process/task_queues:95:5');
    expect(f!.evidence.quotes).toContain('at ZodObject.parse (/home/runner/app/node_modules/zod/lib/index.js:12:3)');
    expect(String(f!.data.pattern)).toContain('js-frame');
    expect(String(f!.data.pattern)).toContain('home-path-line');
    expect(f!.replay).toBe(replayFor('leaks-stack.mjs', 'create_issue', {}));
    const leakLines = callOf(r, f!.evidence.calls![0]).leaks!.map((l) => l.line);
    expect(leakLines).toContain('at handler (/home/runner/app/src/tools.js:42:13)');
  });
});

describe('text refusals (text-refusal.mjs, case C13)', () => {
  it('text-refusal.mjs: `text-refusal` info finding, verdict pass', async () => {
    const r = await run('text-refusal.mjs');
    expect(checkOf(r, 'robust-input').verdict).toBe('pass');
    expect(graded(r, 'robust-input')).toEqual([]);
    const [f] = findingsOf(r, 'robust-input', 'text-refusal');
    expect(f!.level).toBe('info');
    expect(f!.tool).toBe('create_repo');
    expect(f!.evidence.quotes).toContain('invalid input: owner is required');
    expect(f!.evidence.quotes).toContain('invalid input: owner must be a string, not number');
    for (const c of toolCalls(r, 'create_repo')) expect(c.class).toBe('text-refusal');
  });

  it('C13: "missing required parameter: owner" with isError:false is a text refusal, counted as a rejection', async () => {
    const r = await run('c13-text-refusal-owner.mjs');
    expect(checkOf(r, 'robust-input').verdict).toBe('pass');
    expect(graded(r, 'robust-input')).toEqual([]);
    const [f] = findingsOf(r, 'robust-input', 'text-refusal');
    expect(f!.level).toBe('info');
    expect(f!.message).toContain('a client that reads isError cannot tell it from success');
    expect(f!.evidence.quotes).toEqual(['missing required parameter: owner', 'parameter owner must be a string']);
    const missing = callByProbe(r, 'list_issues', 'missing-required');
    expect(missing.class).toBe('text-refusal');
    expect((missing.reply.raw as { result: { isError: unknown } }).result.isError).toBe(false);
  });
});

describe('lenient-downstream.mjs', () => {
  it('is partial `lenient-downstream` quoting the failed fetch', async () => {
    const r = await run('lenient-downstream.mjs');
    expect(checkOf(r, 'robust-input').verdict).toBe('partial');
    expect(graded(r, 'robust-input')).toEqual(['lenient-downstream']);
    const [f] = findingsOf(r, 'robust-input', 'lenient-downstream');
    expect(f!.evidence.quotes).toEqual(['fetch failed: connect ECONNREFUSED 127.0.0.1:9']);
    expect(callByProbe(r, 'fetch_page', 'wrong-types').class).toBe('lenient-downstream');
    expect(argsOf(callByProbe(r, 'fetch_page', 'wrong-types'))).toEqual({ url: 12345 });
  });
});

describe('internal errors', () => {
  it('python_keyerror.py: partial `internal-error` quoting KeyError, no leak (there is no traceback)', async () => {
    const r = await run('python_keyerror.py');
    expect(checkOf(r, 'robust-input').verdict).toBe('partial');
    expect(graded(r, 'robust-input')).toEqual(['internal-error']);
    const [f] = findingsOf(r, 'robust-input', 'internal-error');
    expect(f!.evidence.quotes).toContain("KeyError: 'user_id'");
    expect(f!.evidence.quotes).toContain("AttributeError: 'NoneType' object has no attribute 'strip'");
    expect(f!.replay).toBe(replayFor('python_keyerror.py', 'get_user', {}));
  });

  it('C1: a TypeError text is `internal-error` on every call, never a clean rejection', async () => {
    const r = await run('c1-route-typeerror.mjs');
    expect(checkOf(r, 'robust-input').verdict).toBe('partial');
    expect(graded(r, 'robust-input')).toEqual(['internal-error']);
    const calls = toolCalls(r, 'route');
    expect(calls.length).toBeGreaterThanOrEqual(5);
    for (const c of calls) expect(c.class, c.probe).toBe('internal-error');
    const [f] = findingsOf(r, 'robust-input', 'internal-error');
    expect(f!.evidence.quotes).toContain("TypeError: Cannot read properties of undefined (reading 'toLowerCase')");
    // Names `task`, but is still a crash, not a validation decision.
    expect(f!.evidence.quotes).toContain('TypeError: task.toLowerCase is not a function');
    expect(f!.data.probe).toBe('missing-required');
    expect(f!.replay).toBe(replayFor('c1-route-typeerror.mjs', 'route', {}));
  });

  it('C1, the same fault in the v1 SDK wording (no "TypeError: " prefix)', async () => {
    const r = await run('c1-route-typeerror.mjs', ONLY_ROBUST, ['--sdk-style']);
    expect(graded(r, 'robust-input')).toEqual(['internal-error']);
    for (const c of toolCalls(r, 'route')) expect(c.class, c.probe).toBe('internal-error');
    expect(findingsOf(r, 'robust-input', 'internal-error')[0]!.evidence.quotes).toContain('task.toLowerCase is not a function');
  });

  it('C2: the Python traceback is a quoted `leak`, partial', async () => {
    const r = await run('c2_traceback.py');
    expect(checkOf(r, 'robust-input').verdict).toBe('partial');
    expect(graded(r, 'robust-input')).toContain('leak');
    expect(graded(r, 'robust-input').every((id) => id === 'leak' || id === 'internal-error')).toBe(true);
    const [f] = findingsOf(r, 'robust-input', 'leak');
    const quotes = f!.evidence.quotes ?? [];
    expect(quotes).toContain('Traceback (most recent call last):');
    expect(quotes.some((q) => /^File ".*c2_traceback\.py", line \d+, in \w+$/.test(q))).toBe(true);
    expect(String(f!.data.pattern)).toBe('python-traceback, python-frame');
    const wrong = callByProbe(r, 'resize_image', 'wrong-types');
    expect(argsOf(wrong)).toEqual({ path: 12345, width: 'not-a-valid-value' });
    expect(wrong.leaks?.map((l) => l.pattern)).toContain('python-traceback');
  });

  it('C14: JSON-RPC -32603 "Internal error" is `internal-error`, partial', async () => {
    const r = await run('c14-internal-error.mjs');
    expect(checkOf(r, 'robust-input').verdict).toBe('partial');
    expect(graded(r, 'robust-input')).toEqual(['internal-error']);
    const [f] = findingsOf(r, 'robust-input', 'internal-error');
    expect(f!.evidence.quotes).toEqual(['Internal error']);
    const wrong = callByProbe(r, 'convert', 'wrong-types');
    expect(wrong.class).toBe('internal-error');
    expect((wrong.reply.raw as { error: { code: number } }).error.code).toBe(-32603);
    // amount is a number: 12345 is allowed, so the string comes next; currency is a string enum: 12345.
    expect(argsOf(wrong)).toEqual({ amount: 'not-a-valid-value', currency: 12345 });
    // -32603 is not a rejection, so no SEP-1303 error-channel note.
    expect(findingsOf(r, 'robust-input', 'sep-1303')).toEqual([]);
  });
});

// --- fail: exit and hang -------------------------------------------------------------------------

describe('exits-on-null.mjs', () => {
  let r: Report;
  beforeAll(async () => {
    r = await run('exits-on-null.mjs');
  });

  it('fails `exited` on the nulls probe', () => {
    expect(checkOf(r, 'robust-input').verdict).toBe('fail');
    expect(graded(r, 'robust-input')).toEqual(['exited']);
    const [f] = findingsOf(r, 'robust-input', 'exited');
    expect(f!.message).toBe('lookup: the server exited on the nulls call (exit code 1)');
    const c = callOf(r, f!.evidence.calls![0]);
    expect(c.probe).toBe('nulls');
    expect(argsOf(c)).toEqual({ id: null });
    expect(c.reply.kind).toBe('exited');
    expect(f!.replay).toBe(replayFor('exits-on-null.mjs', 'lookup', { id: null }));
  });

  // SPEC section 3 step 3: a server that exited is started again for the remaining probes.
  it('starts the server again and sends the rest of the probes; the exit stays the nulls finding', () => {
    // Two calls were answered just before the exit: the one it was seen on is replayed alone after
    // the restart, exits the server again and is the cause (the server is started once more).
    expect(r.calls.filter((c) => c.method === 'tools/call').map((c) => c.probe)).toEqual(['missing-required', 'wrong-types', 'nulls', 'exit-replay', 'extra-argument', 'string-as-object']);
    const replay = r.calls.find((c) => c.probe === 'exit-replay')!;
    expect([replay.tool, argsOf(replay), replay.reply.kind]).toEqual(['lookup', { id: null }, 'exited']);
    expect(findingsOf(r, 'robust-input', 'exited')[0]!.evidence.calls).toEqual([callOf(r, findingsOf(r, 'robust-input', 'exited')[0]!.evidence.calls![0]).seq, replay.seq]);
    expect(r.calls.filter((c) => c.probe === 'extra-argument' || c.probe === 'string-as-object').map((c) => c.class)).toEqual(['rejected', 'rejected']);
    // The liveness check after the tool's last probe went to the new server, which answered.
    expect(r.calls.filter((c) => c.probe === 'liveness').map((c) => c.reply.kind)).toEqual(['response']);
    expect(findingsOf(r, 'robust-input', 'exited')).toHaveLength(1);
    expect(findingsOf(r, 'robust-input', 'server-gone')).toEqual([]);
    expect(findingsOf(r, 'robust-input', 'stopped-answering')).toEqual([]);
  });

  it('runs every later check on the restarted server: none is n/a because of the exit', async () => {
    const all = await run('exits-on-null.mjs', {});
    expect(checkOf(all, 'protocol-errors').verdict).not.toBe('n/a');
    expect(checkOf(all, 'oversized-input').verdict).not.toBe('n/a');
    expect(checkOf(all, 'concurrency').verdict).not.toBe('n/a');
    expect(all.calls.some((c) => c.probe === 'unknown-method')).toBe(true);
  });
});

describe('hangs-on-wrong-type.mjs (hang_ms 500)', () => {
  let r: Report;
  beforeAll(async () => {
    r = await run('hangs-on-wrong-type.mjs', { checks: { 'robust-input': { hang_ms: 500 } } });
  });

  it('fails `hang`, one finding with the three unanswered calls', () => {
    expect(checkOf(r, 'robust-input').verdict).toBe('fail');
    expect(graded(r, 'robust-input')).toEqual(['hang']);
    const [f] = findingsOf(r, 'robust-input', 'hang');
    expect(f!.message).toBe('count: no reply to the wrong-types call within 500 ms');
    const hung = f!.evidence.calls!.map((s) => callOf(r, s));
    expect(hung.map((c) => c.probe)).toEqual(['wrong-types', 'nulls', 'extra-argument']);
    for (const c of hung) {
      expect(c.reply.kind).toBe('hang');
      expect(c.class).toBe('hang');
    }
    expect(argsOf(hung[0]!)).toEqual({ n: 'not-a-valid-value' });
    expect(f!.replay).toBe(replayFor('hangs-on-wrong-type.mjs', 'count', { n: 'not-a-valid-value' }));
  });

  it('stops probing after the third hang; protocol-errors sends nothing and fails as not judged (never n/a, never blamed on a probe)', () => {
    // Three hangs stop robust-input at once, without the per-tool liveness check. protocol-errors does not run after such a stop: its requests would
    // only wait out the hang limit and blame the wrong probe.
    expect(toolCalls(r, 'count').map((c) => c.probe)).toEqual(['missing-required', 'wrong-types', 'nulls', 'extra-argument']);
    expect(r.calls.filter((c) => c.probe === 'liveness' && c.tool === 'count')).toEqual([]);
    expect(findingsOf(r, 'robust-input', 'stopped-answering')).toEqual([]);
    expect(checkOf(r, 'protocol-errors').verdict).toBe('fail');
    expect(checkOf(r, 'protocol-errors').findings.map((f) => f.messageId)).toEqual(['server-gone-before']);
    expect(checkOf(r, 'protocol-errors').notes).toEqual(['not run: robust-input stopped after three hangs before the protocol probes']);
    expect(r.calls.some((c) => c.probe === 'unknown-method')).toBe(false);
  });

  // SPEC section 3 step 3: "After three hangs, stop probing and mark what was not reached".
  it('marks that probing stopped after three hangs (what was not reached)', () => {
    const f = findingsOf(r, 'robust-input', 'three-hangs');
    expect(f).toHaveLength(1);
    // count's remaining probe after the third hang was never sent, and is named.
    // The second tool was never reached.
    expect(f[0]!.data.tools).toBe('label');
    expect(checkOf(r, 'robust-input').coverage).toEqual({ judged: ['count'], notJudged: [{ tool: 'label', why: 'not reached: probing stopped after three hangs' }] });
  });
});

// --- config: max_tools, skip_tools, probes -----------------------------------------------------------

describe('config honoured (many-tools.mjs, 25 tools t01..t25)', () => {
  it('max_tools 3: only t01..t03 probed, 22 tools in `beyond-max-tools`, run non-standard', async () => {
    const r = await run('many-tools.mjs', { checks: { 'robust-input': { max_tools: 3 }, 'protocol-errors': { enabled: false }, 'strict-arguments': { enabled: false } } });
    const probed = [...new Set(r.calls.filter((c) => c.method === 'tools/call').map((c) => c.tool))];
    expect(probed).toEqual(['t01', 't02', 't03']);
    const [f] = findingsOf(r, 'robust-input', 'beyond-max-tools');
    expect(f!.level).toBe('info');
    expect(f!.data.count).toBe(22);
    expect(f!.data.max).toBe(3);
    expect(f!.message.startsWith('22 tools beyond max_tools (3) were not probed: t04, t05,')).toBe(true);
    expect(checkOf(r, 'robust-input').verdict).toBe('pass');
    // Coverage is honest: 3 of 25 judged, the 22 others listed as not judged.
    const cov = checkOf(r, 'robust-input').coverage!;
    expect(cov.judged).toEqual(['t01', 't02', 't03']);
    expect(cov.notJudged).toHaveLength(22);
    expect(cov.notJudged[0]).toEqual({ tool: 't04', why: 'beyond max_tools (3)' });
    expect(r.standard).toBe(false);
    expect(r.nonStandardKeys).toContain('checks.robust-input.max_tools');
  });

  it('skip_tools: skipped tools get no call; the next ones fill max_tools', async () => {
    const r = await run('many-tools.mjs', {
      skip_tools: ['t02', 't04'],
      checks: { 'robust-input': { max_tools: 3 }, 'protocol-errors': { enabled: false }, 'strict-arguments': { enabled: false } },
    });
    const probed = [...new Set(r.calls.filter((c) => c.method === 'tools/call').map((c) => c.tool))];
    expect(probed).toEqual(['t01', 't03', 't05']);
    expect(r.calls.some((c) => c.tool === 't02' || c.tool === 't04')).toBe(false);
    expect(findingsOf(r, 'robust-input', 'beyond-max-tools')[0]!.data.count).toBe(20);
    expect(checkOf(r, 'robust-input').coverage!.notJudged.slice(0, 3)).toEqual([
      { tool: 't02', why: 'in skip_tools' },
      { tool: 't04', why: 'in skip_tools' },
      { tool: 't06', why: 'beyond max_tools (3)' },
    ]);
  });

  it('a default run is standard', async () => {
    const r = await run('many-tools.mjs', { checks: { 'strict-arguments': { enabled: false } } });
    expect(r.standard).toBe(true);
    expect(r.nonStandardKeys).toEqual([]);
    expect(checkOf(r, 'robust-input').verdict).toBe('pass');
    expect(findingsOf(r, 'robust-input', 'beyond-max-tools')).toEqual([]);
    expect(new Set(r.calls.filter((c) => c.method === 'tools/call' && c.tool?.startsWith('t')).map((c) => c.tool)).size).toBe(25);
  });

  it('a user `probes:` entry is sent as written (probe user-probe) and counts for coverage', async () => {
    const r = await run('many-tools.mjs', {
      probes: [{ tool: 't05', arguments: { q: 'hello' } }],
      // strict-arguments' valid controls would exercise every tool (they are valid calls too): off here.
      checks: { 'robust-input': { max_tools: 1 }, 'protocol-errors': { enabled: false }, 'strict-arguments': { enabled: false } },
    });
    const up = r.calls.filter((c) => c.probe === 'user-probe');
    expect(up).toHaveLength(1);
    expect(up[0]!.tool).toBe('t05');
    expect(argsOf(up[0]!)).toEqual({ q: 'hello' });
    expect(up[0]!.class).toBe('accepted');
    expect(up[0]!.invalidBecause).toBeUndefined();
    expect(r.coverage.level).toBe('exercised');
    expect(r.coverage.tools.find((t) => t.name === 't05')?.level).toBe('exercised');
    expect(r.coverage.tools.find((t) => t.name === 't01')?.level).toBe('hygiene-only');
    expect(checkOf(r, 'robust-input').verdict).toBe('pass');
    expect(findingsOf(r, 'robust-input', 'user-probe-unexpected')).toEqual([]);
  });

  it('a user probe whose `expect` is not met is reported (info), and does not cover the tool when it fails', async () => {
    const r = await run('many-tools.mjs', {
      probes: [
        { tool: 't05', arguments: { q: 'hello' }, expect: 'error' },
        { tool: 't06', arguments: { q: 7 } },
      ],
      // strict-arguments' valid controls would exercise every tool (they are valid calls too): off here.
      checks: { 'robust-input': { max_tools: 1 }, 'protocol-errors': { enabled: false }, 'strict-arguments': { enabled: false } },
    });
    const f = findingsOf(r, 'robust-input', 'user-probe-unexpected');
    expect(f.map((x) => [x.tool, x.data.expect, x.data.class, x.level])).toEqual([
      ['t05', 'error', 'accepted', 'info'],
      ['t06', 'ok', 'rejected', 'info'],
    ]);
    expect(r.coverage.tools.find((t) => t.name === 't06')?.level).toBe('hygiene-only');
    expect(r.coverage.tools.find((t) => t.name === 't05')?.level).toBe('exercised');
  });
});

describe('user probe replies are scanned for leaks too', () => {
  it('leaks-stack.mjs: a probes: entry that gets the stack-trace error is quoted as a leak', async () => {
    const r = await run('leaks-stack.mjs', {
      probes: [{ tool: 'create_issue', arguments: { title: 5 }, expect: 'error' }],
      checks: { 'protocol-errors': { enabled: false } },
    });
    const up = r.calls.find((c) => c.probe === 'user-probe')!;
    expect(argsOf(up)).toEqual({ title: 5 });
    expect(up.leaks?.map((l) => l.line)).toContain('at handler (/home/runner/app/src/tools.js:42:13)');
    const [f] = findingsOf(r, 'robust-input', 'leak');
    expect(f!.evidence.calls).toContain(up.seq);
    // expect: error was met, so no user-probe-unexpected note.
    expect(findingsOf(r, 'robust-input', 'user-probe-unexpected')).toEqual([]);
  });
});

describe('hang limit and max_tools from config', () => {
  const cfg = (raw: Record<string, unknown>) => parseConfig(raw, configRegistry());
  it('hang_ms, else max(2000, timeout_probe_sec × 1000)', () => {
    expect(hangLimitMs(cfg({}))).toBe(10_000);
    expect(hangLimitMs(cfg({ timeout_probe_sec: 1 }))).toBe(2000);
    expect(hangLimitMs(cfg({ timeout_probe_sec: 5 }))).toBe(5000);
    expect(hangLimitMs(cfg({ timeout_probe_sec: 5, checks: { 'robust-input': { hang_ms: 500 } } }))).toBe(500);
  });
  it('max_tools defaults to 25', () => {
    expect(maxTools(cfg({}))).toBe(25);
    expect(maxTools(cfg({ checks: { 'robust-input': { max_tools: 3 } } }))).toBe(3);
  });
});

// --- unit: planner and wrong-type generator --------------------------------------------------------

function prop(name: string, schema: Record<string, unknown>): PropertyInfo {
  const p = propertiesOf({ type: 'object', properties: { [name]: schema } })[0];
  if (!p) throw new Error('no property');
  return p;
}

function tool(inputSchema: unknown, annotations?: Record<string, unknown>): ListedTool {
  return { index: 0, name: 't', raw: { name: 't', inputSchema }, inputSchema, annotations };
}

describe('wrongTypeFor: candidate order and the enum rule', () => {
  it('keeps the seed order 12345, "not-a-valid-value", true, ["x"], {"x": 1}', () => {
    expect(WRONG_TYPE_CANDIDATES).toEqual([12345, 'not-a-valid-value', true, ['x'], { x: 1 }]);
  });

  it.each([
    ['string', { type: 'string' }, 12345],
    ['number', { type: 'number' }, 'not-a-valid-value'],
    ['integer', { type: 'integer' }, 'not-a-valid-value'],
    ['boolean', { type: 'boolean' }, 12345],
    ['array', { type: 'array', items: { type: 'string' } }, 12345],
    ['string|number (12345 is a number)', { type: ['string', 'number'] }, true],
    ['string|integer|boolean', { type: ['string', 'integer', 'boolean'] }, ['x']],
    ['string|number|boolean|array', { type: ['string', 'number', 'boolean', 'array'] }, { x: 1 }],
    ['anyOf string|number', { anyOf: [{ type: 'string' }, { type: 'number' }] }, true],
    ['a string enum containing "not-a-valid-value"', { type: 'string', enum: ['not-a-valid-value', 'x'] }, 12345],
  ])('%s → first violating candidate', (_label, schema, expected) => {
    expect(wrongTypeFor(prop('p', schema))).toEqual(expected);
  });

  it('skips a candidate that is one of the enum values even when its type is not declared', () => {
    // 12345 is an integer (allowed); "not-a-valid-value" violates the type but is an enum value: true is next.
    expect(wrongTypeFor(prop('p', { type: 'integer', enum: [1, 2, 'not-a-valid-value'] }))).toBe(true);
    // Types derived from the enum values: string and integer, so 12345 and the string are allowed.
    expect(wrongTypeFor(prop('p', { enum: ['not-a-valid-value', 12345] }))).toBe(true);
  });

  it('has nothing for a property that allows every candidate type, or declares none', () => {
    expect(wrongTypeFor(prop('p', { type: ['string', 'number', 'boolean', 'array', 'object'] }))).toBeUndefined();
    expect(wrongTypeFor(prop('p', {}))).toBeUndefined();
    expect(wrongTypeFor(prop('p', { description: 'anything' }))).toBeUndefined();
  });
});

describe('planProbes', () => {
  it('plans the probes in the seed order, each proven invalid by Ajv', () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        rows: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
      },
      required: ['name', 'rows'],
      additionalProperties: false,
    };
    const { plan, skipped } = planProbes(tool(schema));
    expect(skipped).toBeUndefined();
    expect(plan.map((p) => p.probe)).toEqual([
      'missing-required',
      'wrong-types',
      'nulls',
      'extra-argument',
      'string-as-object',
      'nested-string',
      'nested-item',
    ]);
    const byProbe = Object.fromEntries(plan.map((p) => [p.probe, p.args]));
    expect(byProbe['wrong-types']).toEqual({ name: 12345, rows: 12345 });
    expect(byProbe['nested-string']).toEqual({ name: 'sealmark', rows: 'not-a-valid-value' });
    expect(byProbe['nested-item']).toEqual({ name: 'sealmark', rows: [{}] });
    const v = compileSchema(schema);
    if (!v.ok) throw new Error('schema should compile');
    for (const p of plan) {
      expect(p.invalidBecause.length, p.probe).toBeGreaterThan(0);
      expect(v.validate(p.args === undefined ? {} : p.args), p.probe).toEqual(p.invalidBecause);
    }
  });

  it('never probes an untyped property', () => {
    const { plan } = planProbes(tool({ type: 'object', properties: { free: {}, also: { description: 'x' }, s: { type: 'string' } } }));
    expect(plan.length).toBeGreaterThan(0);
    for (const p of plan) {
      expect(Object.keys(p.args as object), p.probe).not.toContain('free');
      expect(Object.keys(p.args as object), p.probe).not.toContain('also');
    }
    expect(plan.find((p) => p.probe === 'wrong-types')?.args).toEqual({ s: 12345 });
  });

  it('skips a tool with only untyped properties and says it needs a probes: entry', () => {
    expect(planProbes(tool({ type: 'object', properties: { a: {}, b: {} } }))).toEqual({
      plan: [],
      skipped: 'only untyped properties (any value might be valid)',
      needsProbe: true,
    });
  });

  it('never plans a value Ajv accepts (nullable: true makes null valid: no nulls probe)', () => {
    const { plan } = planProbes(tool({ type: 'object', properties: { a: { type: 'string', nullable: true } } }));
    expect(plan.map((p) => p.probe)).toEqual(['wrong-types', 'extra-argument', 'string-as-object']);
  });

  it('does not send null to a property that allows null', () => {
    const { plan } = planProbes(tool({ type: 'object', properties: { a: { type: ['string', 'null'] }, b: { type: 'integer' } } }));
    expect(plan.find((p) => p.probe === 'nulls')?.args).toEqual({ b: null });
    expect(plan.find((p) => p.probe === 'wrong-types')?.args).toEqual({ a: 12345, b: 'not-a-valid-value' });
  });

  it('no arguments: read-only gets the valid {} call, otherwise it needs a probes: entry', () => {
    expect(planProbes(tool({ type: 'object', properties: {} }, { readOnlyHint: true }))).toEqual({ plan: [], readOnlyNoArgs: true });
    expect(planProbes(tool({ type: 'object', properties: {} }))).toEqual({
      plan: [],
      skipped: 'no arguments and not declared readOnlyHint: true',
      needsProbe: true,
    });
  });

  it('plans only schema-invalid calls: never missing-required without required, never no-arguments or extra-only (strict-arguments sends those)', () => {
    const loose = planProbes(tool({ type: 'object', properties: { s: { type: 'string' } } })).plan.map((p) => p.probe);
    expect(loose).not.toContain('missing-required');
    const strict = planProbes(tool({ type: 'object', properties: { s: { type: 'string' } }, required: ['s'], additionalProperties: false })).plan.map((p) => p.probe);
    expect(strict).toEqual(['missing-required', 'wrong-types', 'nulls', 'extra-argument', 'string-as-object']);
  });
});

// --- case C7: an undeclared key that reaches the downstream call ------------------------------------

describe('C7: create_app forwards every argument downstream (cases/c7-create-app.mjs)', () => {
  it('is partial `accepted`, and the evidence shows sm_unexpected in the curl the call set off', async () => {
    const r = await run('cases/c7-create-app.mjs');
    expect(checkOf(r, 'robust-input').verdict).toBe('partial');
    expect(graded(r, 'robust-input')).toEqual(['accepted']);
    const [f] = findingsOf(r, 'robust-input', 'accepted');
    expect(f!.evidence.quotes).toContain('effect: shim: curl -sS --max-time 2 -X POST -d {"client_id":12345,"name":12345,"sm_unexpected":"sealmark"} http://127.0.0.1:9/apps');
    const extra = callByProbe(r, 'create_app', 'extra-argument');
    expect(extra.class).toBe('accepted');
    expect(extra.effects).toEqual([{ kind: 'shim', detail: 'curl -sS --max-time 2 -X POST -d {"client_id":12345,"name":12345,"sm_unexpected":"sealmark"} http://127.0.0.1:9/apps' }]);
  });
});
