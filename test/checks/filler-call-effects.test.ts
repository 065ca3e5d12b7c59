/**
 * filler-call-effects (pack effects, scored, sidechannel; SPEC section 5) against real fixture
 * servers: the seed's three-tool server (its audit output reproduced: post_update's filler call
 * posts the webhook, export is flagged but not armed, show_dashboard is not a flagged tool), case
 * C8, and a control.
 *
 * robust-input and protocol-errors are off here: they only cost time and add calls.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { auditFixture, checkOf, findingsOf, fixture, graded, LATER_PACKS_OFF } from '../helpers/run.js';
import { shellQuote } from '../../src/replay.js';
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

function argsOf(c: ReportCall): unknown {
  return (JSON.parse(c.request) as { params: { arguments?: unknown } }).params.arguments;
}

function callOf(r: Report, seq: number | undefined): ReportCall {
  const c = r.calls.find((x) => x.seq === seq);
  if (!c) throw new Error(`no call #${String(seq)}`);
  return c;
}

/** Effect-pack calls (default and filler) of a report, as [probe, tool, arguments sent]. */
function effectCalls(r: Report): [string, string | undefined, unknown][] {
  return r.calls.filter((c) => c.probe === 'default-call' || c.probe === 'filler-call').map((c) => [c.probe, c.tool, argsOf(c)]);
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
  it('fails with `created ./payments.log` for {"payment_id":…,"confirm":true}', async () => {
    const r = await run('c8-cancel-payment.mjs');
    expect(checkOf(r, ID).verdict).toBe('fail');
    const fs = findingsOf(r, ID, 'effect');
    expect(fs).toHaveLength(1);
    expect(fs[0]!.evidence.quotes).toEqual(['created ./payments.log']);
    const call = callOf(r, fs[0]!.evidence.calls?.[0]);
    expect(call.probe).toBe('filler-call');
    const sent = argsOf(call) as Record<string, unknown>;
    expect(Object.keys(sent)).toEqual(['payment_id', 'confirm']);
    expect(sent.confirm).toBe(true);
    expect(typeof sent.payment_id).toBe('string');
    expect(fs[0]!.data.args).toBe(JSON.stringify(sent));
    expect(fs[0]!.message).toBe(`cancel_payment: the filler arguments ${JSON.stringify(sent)} caused a side effect: file: created ./payments.log`);
    // the {} call is rejected (payment_id is required) and does nothing
    const empty = r.calls.find((c) => c.probe === 'default-call' && c.tool === 'cancel_payment');
    expect(argsOf(empty!)).toEqual({});
    expect((empty?.reply.raw as { result?: { isError?: boolean } }).result?.isError).toBe(true);
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
