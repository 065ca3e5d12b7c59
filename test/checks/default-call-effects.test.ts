/**
 * default-call-effects (pack effects, scored, sidechannel; SPEC section 5) against real fixture
 * servers: case C17 and its fixed version (the seed's July bug and the fix that held), a tool that
 * writes under HOME on `{}`, a tool that fetches its declared default url in-process (caught only by
 * the network namespace), case C6, a control, `--all`, and runs without the sandbox (with and
 * without --allow-effects), and a tool whose API client retries (three identical CONNECTs, one
 * finding).
 *
 * robust-input and protocol-errors are off here: they only cost time and add calls.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { auditFixture, checkOf, findingsOf, fixture, graded, LATER_PACKS_OFF } from '../helpers/run.js';
import { audit } from '../../src/audit.js';
import { configRegistry } from '../../src/config/defaults.js';
import { parseConfig } from '../../src/config/schema.js';
import { shellQuote } from '../../src/replay.js';
import { networkNamespaceAvailable } from '../../src/target/sandbox.js';
import type { Report, ReportCall } from '../../src/report/build.js';

// --- helpers -------------------------------------------------------------------------------------

const OFF = { checks: { ...LATER_PACKS_OFF, 'robust-input': { enabled: false }, 'strict-arguments': { enabled: false }, 'protocol-errors': { enabled: false } } };
const ID = 'default-call-effects';

const memo = new Map<string, Promise<Report>>();
function run(name: string): Promise<Report> {
  let p = memo.get(name);
  if (!p) {
    p = auditFixture(`effects/${name}`, OFF);
    memo.set(name, p);
  }
  return p;
}

/** audit() with the options auditFixture does not pass (`all`, `allowEffects`). */
function auditWith(name: string, opts: { all?: boolean; allowEffects?: boolean; sandbox?: boolean }): Promise<Report> {
  return audit({ command: process.execPath, args: [fixture(`effects/${name}`)], config: parseConfig(OFF, configRegistry()), ...opts });
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

/** The default-call probes of a report, as `tool` → arguments sent. */
function defaultCalls(r: Report): [string | undefined, unknown][] {
  return r.calls.filter((c) => c.probe === 'default-call').map((c) => [c.tool, argsOf(c)]);
}

function replayFor(name: string, tool: string, args: unknown): string {
  return `sealmark call --tool ${tool} --args '${JSON.stringify(args)}' -- ${[process.execPath, fixture(`effects/${name}`)].map(shellQuote).join(' ')}`;
}

const NO_SANDBOX_NOTE = 'no sandbox (--no-sandbox) and no --allow-effects: tools were not called with default or filler arguments';

// --- C17 and its fix -------------------------------------------------------------------------------

describe('c17-dashboard.mjs (case C17, the seed\'s show_dashboard)', () => {
  let r: Report;
  beforeAll(async () => {
    r = await run('c17-dashboard.mjs');
  });

  it('fails `effect`: the {} call ran xdg-open http://127.0.0.1:8767', () => {
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['effect']);
    const fs = findingsOf(r, ID, 'effect');
    expect(fs).toHaveLength(1);
    const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
    expect(fs[0]!.tool).toBe('show_dashboard');
    expect(fs[0]!.evidence.quotes).toEqual([`${opener} http://127.0.0.1:8767`]);
    expect(fs[0]!.message).toBe(`show_dashboard: the {} call caused a side effect: shim: ${opener} http://127.0.0.1:8767`);
  });

  it('gives the {} call as evidence, its exact request and a replay line', () => {
    const f = one(findingsOf(r, ID, 'effect'));
    const call = callOf(r, f.evidence.calls?.[0]);
    expect(call.probe).toBe('default-call');
    expect(call.tool).toBe('show_dashboard');
    expect(argsOf(call)).toEqual({});
    expect(f.request).toBe(call.request);
    expect(f.replay).toBe(replayFor('c17-dashboard.mjs', 'show_dashboard', {}));
  });
});

describe('dashboard-fixed.mjs (the seed\'s fixed version)', () => {
  it('passes: show_dashboard {} was called and opened nothing', async () => {
    const r = await run('dashboard-fixed.mjs');
    expect(checkOf(r, ID).verdict).toBe('pass');
    expect(checkOf(r, ID).findings).toEqual([]);
    expect(defaultCalls(r)).toEqual([['show_dashboard', {}]]);
    expect(r.sandbox.kind).toBe('sandbox');
  });
});

// --- files and network -----------------------------------------------------------------------------

describe('writes-on-empty.mjs', () => {
  it('fails with `created ~/.notes/last.txt` for note {}', async () => {
    const r = await run('writes-on-empty.mjs');
    expect(checkOf(r, ID).verdict).toBe('fail');
    const fs = findingsOf(r, ID, 'effect');
    expect(fs.map((f) => f.evidence.quotes)).toEqual([['created ~/.notes/last.txt']]);
    expect(fs[0]!.message).toBe('note: the {} call caused a side effect: file: created ~/.notes/last.txt');
    const call = callOf(r, fs[0]!.evidence.calls?.[0]);
    expect([call.probe, call.tool, argsOf(call)]).toEqual(['default-call', 'note', {}]);
  });
});

describe('remote-fetch-default.mjs (in-process fetch of a declared default url)', () => {
  const ns = networkNamespaceAvailable();
  it.skipIf(!ns.ok)(`fails with a network effect: the reply reports a failed connection${ns.ok ? '' : ` — skipped: ${ns.why}`}`, async () => {
    const r = await run('remote-fetch-default.mjs');
    expect(r.sandbox.network).toBe('namespace');
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    const fs = findingsOf(r, ID, 'effect');
    expect(fs).toHaveLength(1);
    expect(fs[0]!.tool).toBe('sync_feed');
    expect(fs[0]!.message).toMatch(/^sync_feed: the \{\} call caused a side effect: network: the reply reports a failed connection: /);
    expect(fs[0]!.evidence.quotes?.[0]).toMatch(/^the reply reports a failed connection: .*(feeds\.example\.com|EAI_AGAIN|ENOTFOUND|ENETUNREACH|ECONNREFUSED)/);
    const call = callOf(r, fs[0]!.evidence.calls?.[0]);
    expect([call.probe, call.tool, argsOf(call)]).toEqual(['default-call', 'sync_feed', {}]);
  });
});

describe('proxy_fetch.py (a Python server whose urllib honours the proxy variables)', () => {
  const ns = networkNamespaceAvailable();
  it.skipIf(!ns.ok)(`fails: the request reached the catch-all proxy listener inside the namespace${ns.ok ? '' : ` — skipped: ${ns.why}`}`, async () => {
    const r = await run('proxy_fetch.py');
    expect(r.sandbox.network).toBe('namespace');
    expect(graded(r, ID)).toEqual(['effect']);
    const fs = findingsOf(r, ID, 'effect');
    expect(fs.map((f) => [f.tool, f.evidence.quotes?.[0]])).toEqual([['check_updates', 'proxy: GET http://updates.example.com/check HTTP/1.1']]);
  });
});

describe('erases-log.mjs (a server that empties the effect log to hide its curl)', () => {
  it('still fails: a log that shrank during the call is reported as erased evidence', async () => {
    const r = await run('erases-log.mjs');
    expect(graded(r, ID)).toEqual(['effect']);
    const quotes = findingsOf(r, ID, 'effect').map((f) => f.evidence.quotes?.[0]);
    expect(quotes).toContain('the effect log was truncated during the call: evidence was erased');
  });

  it('still fails when the log is overwritten in place (same size): lines sealmark did not write are altered evidence', async () => {
    const r = await run('erases-log.mjs');
    const quietly = findingsOf(r, ID, 'effect').filter((f) => f.tool === 'sync_quietly').map((f) => f.evidence.quotes?.[0]);
    expect(quietly).toContain('the effect log holds lines sealmark did not write: evidence was altered');
  });
});

describe('rate-limited.mjs (a limiter of one search a second over two tools, as server-brave-search has)', () => {
  it('makes a {} call refused for a rate limit once more, 1.1 s later: both tools fail with their own curl, whatever the pace', async () => {
    const r = await run('rate-limited.mjs');
    const fs = findingsOf(r, ID, 'effect');
    expect(fs.map((f) => [f.tool, f.evidence.quotes?.[0]])).toEqual([
      ['search_web', 'curl -s https://search.example/search_web'],
      ['search_local', 'curl -s https://search.example/search_local'],
    ]);
    // The refused call is kept beside the one judged; each has its own place in the report.
    const local = r.calls.filter((c) => c.probe === 'default-call' && c.tool === 'search_local');
    expect(local.map((c) => [c.class, (c.effects ?? []).length])).toEqual([
      ['rejected-unnamed', 0],
      ['accepted', 1],
    ]);
  });
});

// --- C6 and the control ----------------------------------------------------------------------------

describe('c6-maintain.mjs (case C6)', () => {
  it('fails with `changed ./store.json` for maintain {}', async () => {
    const r = await run('c6-maintain.mjs');
    expect(checkOf(r, ID).verdict).toBe('fail');
    const fs = findingsOf(r, ID, 'effect');
    expect(fs.map((f) => f.evidence.quotes)).toEqual([['changed ./store.json']]);
    expect(fs[0]!.message).toBe('maintain: the {} call caused a side effect: file: changed ./store.json');
    expect(argsOf(callOf(r, fs[0]!.evidence.calls?.[0]))).toEqual({});
    expect(fs[0]!.replay).toBe(replayFor('c6-maintain.mjs', 'maintain', {}));
  });
});

describe('clean-effects.mjs (control)', () => {
  it('passes; only the tools with no required argument got {}', async () => {
    const r = await run('clean-effects.mjs');
    expect(checkOf(r, ID).verdict).toBe('pass');
    expect(checkOf(r, ID).findings).toEqual([]);
    expect(defaultCalls(r)).toEqual([
      ['list_items', {}],
      ['preview_export', {}],
    ]);
  });
});

// --- --all -----------------------------------------------------------------------------------------

describe('--all (audit option all: true)', () => {
  it('sends {} to tools with required arguments too (clean-effects: get_weather), still pass', async () => {
    const r = await auditWith('clean-effects.mjs', { all: true });
    expect(defaultCalls(r)).toEqual([
      ['get_weather', {}],
      ['list_items', {}],
      ['preview_export', {}],
    ]);
    // get_weather's {} is rejected (city is required) and causes nothing
    const weather = r.calls.find((x) => x.probe === 'default-call' && x.tool === 'get_weather');
    expect((weather?.reply.raw as { result?: { isError?: boolean } }).result?.isError).toBe(true);
    expect(checkOf(r, ID).verdict).toBe('pass');
  });
});

// --- without the sandbox ---------------------------------------------------------------------------

describe('without the sandbox', () => {
  it('no --allow-effects: n/a with the note, and no default-call probe is sent', async () => {
    const r = await auditFixture('effects/dashboard-fixed.mjs', OFF, [], { sandbox: false });
    expect(r.sandbox.kind).toBe('none');
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('n/a');
    expect(c.notes).toEqual([NO_SANDBOX_NOTE]);
    expect(c.findings).toEqual([]);
    expect(r.calls.filter((x) => x.probe === 'default-call' || x.probe === 'filler-call')).toEqual([]);
    expect(r.calls.filter((x) => x.method === 'tools/call')).toEqual([]);
    expect(checkOf(r, 'filler-call-effects').notes).toEqual([NO_SANDBOX_NOTE]);
  });

  it('with --allow-effects: the {} calls happen (dashboard-fixed opens nothing on {})', async () => {
    const r = await auditWith('dashboard-fixed.mjs', { sandbox: false, allowEffects: true });
    expect(r.sandbox.kind).toBe('none');
    expect(defaultCalls(r)).toEqual([['show_dashboard', {}]]);
    const call = r.calls.find((x) => x.probe === 'default-call');
    expect(call?.reply.kind).toBe('response');
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('pass');
    expect(c.notes).toEqual([]);
  });
});

// --- one call, one finding (effects-real) ---------------------------------------------------------

describe('effects-real/retrying-client.mjs (firecrawl_credit_usage: an API client that retries three times)', () => {
  const ns = networkNamespaceAvailable();
  it.skipIf(!ns.ok)(`one finding for the three identical CONNECTs of one {} call, with the count${ns.ok ? '' : ` — skipped: ${ns.why}`}`, async () => {
    const r = await auditFixture('effects-real/retrying-client.mjs', OFF);
    expect(r.sandbox.network).toBe('namespace');
    expect(checkOf(r, ID).verdict).toBe('fail');
    const f = one(findingsOf(r, ID, 'effect'));
    expect(f.tool).toBe('credit_usage');
    expect(f.data.effect).toBe('network: proxy: CONNECT api.example.com:443 HTTP/1.1 (3 times during the call)');
    expect(f.message).toBe('credit_usage: the {} call caused a side effect: network: proxy: CONNECT api.example.com:443 HTTP/1.1 (3 times during the call)');
    expect(f.evidence.quotes).toEqual(['proxy: CONNECT api.example.com:443 HTTP/1.1 (×3)']);
    // The call's own record keeps every line of the effect log: three connections were made.
    const call = callOf(r, f.evidence.calls?.[0]);
    expect([call.probe, call.tool, argsOf(call)]).toEqual(['default-call', 'credit_usage', {}]);
    expect(call.effects).toEqual(Array(3).fill({ kind: 'network', detail: 'proxy: CONNECT api.example.com:443 HTTP/1.1' }));
  });
});
