/**
 * filler-call-effects (pack effects, scored, sidechannel; SPEC section 5) against real fixture
 * servers: the seed's three-tool server (its audit output reproduced: post_update's filler call
 * posts the webhook, export is flagged but not armed, show_dashboard is not a flagged tool), case
 * C8 (its write is what any valid call does: the control call has it too), a tool set whose `{}`
 * calls are all refused (firecrawl_monitor_check: the control call with the required arguments),
 * and a control.
 *
 * robust-input and protocol-errors are off here: they only cost time and add calls.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { auditFixture, checkOf, findingsOf, fixture, graded, LATER_PACKS_OFF } from '../helpers/run.js';
import { shellQuote } from '../../src/replay.js';
import { networkNamespaceAvailable } from '../../src/target/sandbox.js';
import { fillerArgs } from '../../src/flags.js';
import { controlArgs } from '../../src/probes/effects.js';
import type { ListedTool } from '../../src/types.js';
import type { Report, ReportCall } from '../../src/report/build.js';

// --- helpers -------------------------------------------------------------------------------------

const OFF = { checks: { ...LATER_PACKS_OFF, 'robust-input': { enabled: false }, 'strict-arguments': { enabled: false }, 'protocol-errors': { enabled: false } } };
const ID = 'filler-call-effects';

const memo = new Map<string, Promise<Report>>();
function run(name: string): Promise<Report> {
  let p = memo.get(name);
  if (!p) {
    p = auditFixture(`effects/${name}`, OFF);
    memo.set(name, p);
  }
  return p;
}

/** The single element of `xs` (fails the test when there is not exactly one). */
function one<T>(xs: T[]): T {
  expect(xs).toHaveLength(1);
  return xs[0] as T;
}

function argsOf(c: ReportCall): unknown {
  return (JSON.parse(c.request) as { params: { arguments?: unknown } }).params.arguments;
}

function callOf(r: Report, seq: number | undefined): ReportCall {
  const c = r.calls.find((x) => x.seq === seq);
  if (!c) throw new Error(`no call #${String(seq)}`);
  return c;
}

/** Effect-pack calls (default, filler and control) of a report, as [probe, tool, arguments sent]. */
function effectCalls(r: Report): [string, string | undefined, unknown][] {
  return r.calls.filter((c) => c.probe === 'default-call' || c.probe === 'filler-call' || c.probe === 'filler-control').map((c) => [c.probe, c.tool, argsOf(c)]);
}

function replayFor(name: string, tool: string, args: unknown): string {
  return `sealmark call --tool ${tool} --args '${JSON.stringify(args)}' -- ${[process.execPath, fixture(`effects/${name}`)].map(shellQuote).join(' ')}`;
}

// --- the seed's three-tool server -------------------------------------------------------------------

describe('seed-three-tools.mjs (reproduces the seed\'s audit)', () => {
  let r: Report;
  beforeAll(async () => {
    r = await run('seed-three-tools.mjs');
  });

  it('calls each flagged tool with {} and with the filler arguments; show_dashboard gets only {}', () => {
    expect(effectCalls(r)).toEqual([
      ['default-call', 'post_update', {}],
      ['filler-call', 'post_update', { notify_channel: true }],
      ['default-call', 'show_dashboard', {}],
      ['default-call', 'export', {}],
      ['filler-call', 'export', { mode: 'send', dry_run: false }],
    ]);
  });

  it('fails: post_update {"notify_channel":true} -> curl -s https://hooks.example/notify', () => {
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['effect']);
    const fs = findingsOf(r, ID, 'effect');
    expect(fs).toHaveLength(1);
    const f = fs[0]!;
    expect(f.tool).toBe('post_update');
    expect(f.evidence.quotes).toEqual(['curl -s https://hooks.example/notify']);
    expect(f.data.args).toBe('{"notify_channel":true}');
    expect(f.message).toBe('post_update: the filler arguments {"notify_channel":true} caused a side effect: shim: curl -s https://hooks.example/notify');
    const call = callOf(r, f.evidence.calls?.[0]);
    expect(call.probe).toBe('filler-call');
    expect(argsOf(call)).toEqual({ notify_channel: true });
    expect(f.request).toBe(call.request);
    expect(f.replay).toBe(replayFor('seed-three-tools.mjs', 'post_update', { notify_channel: true }));
  });

  it('does not judge show_dashboard: it is not a flagged tool (its open is default-call-effects\' finding)', () => {
    expect(checkOf(r, ID).findings.filter((f) => f.tool === 'show_dashboard')).toEqual([]);
    expect(r.calls.some((c) => c.probe === 'filler-call' && c.tool === 'show_dashboard')).toBe(false);
    expect(findingsOf(r, 'default-call-effects', 'effect').map((f) => f.tool)).toEqual(['show_dashboard']);
  });

  it('export {"mode":"send","dry_run":false} causes nothing: a flag tells where to look, only the call tells whether it is armed', () => {
    expect(checkOf(r, ID).findings.filter((f) => f.tool === 'export')).toEqual([]);
    expect(checkOf(r, 'armed-flags').findings.filter((f) => f.tool === 'export').map((f) => f.data.property)).toEqual(['mode', 'dry_run']);
    const call = r.calls.find((c) => c.probe === 'filler-call' && c.tool === 'export');
    const text = JSON.stringify(call?.reply.raw);
    expect(text).toContain('nothing was sent');
  });

  it('post_update {} causes nothing', () => {
    const call = r.calls.find((c) => c.probe === 'default-call' && c.tool === 'post_update');
    expect(checkOf(r, ID).findings.some((f) => f.evidence.calls?.includes(call!.seq))).toBe(false);
  });
});

// --- C8 ----------------------------------------------------------------------------------------------

describe('c8-cancel-payment.mjs (case C8)', () => {
  // C8 cancels when confirm is absent too: the write is what any valid call does, not what the
  // filler's confirm: true added (SPEC section 5, one cause is one finding): two-step-writes fails it.
  it('passes: the control {"payment_id":…} writes ./payments.log as the filler call does (info `control-effect`)', async () => {
    const r = await run('c8-cancel-payment.mjs');
    expect(checkOf(r, ID).verdict).toBe('pass');
    expect(findingsOf(r, ID, 'effect')).toEqual([]);
    const f = one(findingsOf(r, ID, 'control-effect'));
    expect(f.level).toBe('info');
    expect(f.data.effect).toBe('file: created ./payments.log');
    const [filler, control] = (f.evidence.calls ?? []).map((s) => callOf(r, s));
    expect(filler!.probe).toBe('filler-call');
    const sent = argsOf(filler!) as Record<string, unknown>;
    expect(Object.keys(sent)).toEqual(['payment_id', 'confirm']);
    expect(sent.confirm).toBe(true);
    expect(control!.probe).toBe('filler-control');
    expect(argsOf(control!)).toEqual({ payment_id: sent.payment_id });
    expect(control!.effects?.map((e) => ({ kind: e.kind, detail: e.detail }))).toEqual([{ kind: 'file', detail: 'changed ./payments.log' }]);
    expect(f.data.control).toBe(JSON.stringify({ payment_id: sent.payment_id }));
    // the {} call is rejected (payment_id is required) and does nothing
    const empty = r.calls.find((c) => c.probe === 'default-call' && c.tool === 'cancel_payment');
    expect(argsOf(empty!)).toEqual({});
    expect((empty?.reply.raw as { result?: { isError?: boolean } }).result?.isError).toBe(true);
    expect(checkOf(r, ID).coverage).toEqual({ judged: ['cancel_payment'], notJudged: [] });
  });
});

// --- a refused {} call: the control call (effects-real) ------------------------------------------------

describe('effects-real/filler-control.mjs (firecrawl_monitor_check: every tool requires arguments, so {} is refused)', () => {
  const ns = networkNamespaceAvailable();
  let r: Report;
  beforeAll(async () => {
    if (ns.ok) r = await auditFixture('effects-real/filler-control.mjs', OFF);
  });

  it.skipIf(!ns.ok)(`makes a control call with the required arguments and no flagged property after each filler call that had an effect${ns.ok ? '' : ` — skipped: ${ns.why}`}`, () => {
    expect(r.sandbox.network).toBe('namespace');
    expect(effectCalls(r)).toEqual([
      ['default-call', 'monitor_check', {}],
      ['filler-call', 'monitor_check', { id: 'sealmark', checkId: 'sealmark', onChange: 'notify' }],
      ['filler-control', 'monitor_check', { id: 'sealmark', checkId: 'sealmark' }],
      ['default-call', 'monitor_create', {}],
      ['filler-call', 'monitor_create', { url: 'sealmark', notify: true }],
      ['filler-control', 'monitor_create', { url: 'sealmark' }],
      ['default-call', 'purge_page', {}],
      ['filler-call', 'purge_page', { page: 'sealmark', mode: 'delete' }],
    ]);
    for (const c of r.calls.filter((x) => x.probe === 'default-call')) expect(c.class, c.tool).toBe('rejected');
  });

  it.skipIf(!ns.ok)('blames only what the flagged property added: notify: true ran notify-send; the CONNECTs and the failed fetch are any valid call\'s', () => {
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['effect']);
    const f = one(findingsOf(r, ID, 'effect'));
    expect(f.tool).toBe('monitor_create');
    expect(f.evidence.quotes).toEqual(['notify-send monitor created']);
    expect(f.message).toBe('monitor_create: the filler arguments {"url":"sealmark","notify":true} caused a side effect: shim: notify-send monitor created');
    expect(callOf(r, f.evidence.calls?.[0]).probe).toBe('filler-call');
    expect(c.findings.filter((x) => x.tool === 'monitor_check' && x.level !== 'info')).toEqual([]);
  });

  it.skipIf(!ns.ok)('notes the effects the control call had too (`control-effect`), with both calls as evidence', () => {
    const fs = findingsOf(r, ID, 'control-effect');
    expect(fs.map((f) => [f.tool, f.level, f.data.control, f.data.effect])).toEqual([
      ['monitor_check', 'info', '{"id":"sealmark","checkId":"sealmark"}', "network: the reply reports a failed connection: Tool 'monitor_check' execution failed: fetch failed"],
      ['monitor_create', 'info', '{"url":"sealmark"}', 'network: proxy: CONNECT api.example.com:443 HTTP/1.1 (3 times during the call)'],
    ]);
    for (const f of fs) expect((f.evidence.calls ?? []).map((s) => callOf(r, s).probe)).toEqual(['filler-call', 'filler-control']);
    expect(fs[1]!.evidence.quotes).toEqual(['proxy: CONNECT api.example.com:443 HTTP/1.1 (×3)']);
  });

  it.skipIf(!ns.ok)('does not judge purge_page: its {} call was refused and no value of its required mode is unarmed (coverage)', () => {
    const c = checkOf(r, ID);
    expect(c.findings.filter((f) => f.tool === 'purge_page')).toEqual([]);
    expect(c.coverage?.judged).toEqual(['monitor_check', 'monitor_create']);
    expect(c.coverage?.notJudged.map((n) => n.tool)).toEqual(['purge_page']);
    expect(c.coverage?.notJudged[0]!.why).toBe('its {} call was refused (rejected), so it cannot tell what the filler arguments added, and no control call is possible: mode is required and every value of its enum is a side-effect verb, so no call leaves it unarmed');
    // (Notes on folders the overlay could not cover, e.g. this machine's /mnt, come after.)
    expect(c.notes.filter((n) => !n.startsWith('writes under '))).toEqual([`purge_page: not judged: ${c.coverage?.notJudged[0]!.why}`]);
  });
});

// --- control -----------------------------------------------------------------------------------------

describe('clean-effects.mjs (control)', () => {
  it('is n/a: no tool has a flagged property, so no filler call', async () => {
    const r = await run('clean-effects.mjs');
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('n/a');
    expect(c.notes).toEqual(['no tool has a property a filler would arm']);
    expect(r.calls.filter((x) => x.probe === 'filler-call')).toEqual([]);
  });
});

// --- unit: the control arguments ----------------------------------------------------------------------

describe('controlArgs', () => {
  const tool = (properties: Record<string, unknown>, required: string[]): ListedTool => ({ index: 0, name: 't', raw: {}, inputSchema: { type: 'object', properties, required }, annotations: undefined });
  it('leaves out optional flagged properties, unarms required switches, keeps the rest as filled', () => {
    const t = tool({ id: { type: 'string' }, notify: { type: 'boolean' }, approved: { type: 'boolean' }, verbose: { type: 'boolean' }, status: { type: 'string', enum: ['remove', 'keep'] } }, ['id', 'approved', 'status']);
    const filled = fillerArgs(t);
    expect(filled).toEqual({ id: 'sealmark', notify: true, approved: true, verbose: true, status: 'remove' });
    expect(controlArgs(t, filled)).toEqual({ args: { id: 'sealmark', approved: false, verbose: true, status: 'keep' } });
  });
  it('says why when a required enum has only side-effect values', () => {
    const t = tool({ mode: { type: 'string', enum: ['delete', 'remove'] } }, ['mode']);
    expect(controlArgs(t, fillerArgs(t))).toEqual({ why: 'mode is required and every value of its enum is a side-effect verb, so no call leaves it unarmed' });
  });
});
