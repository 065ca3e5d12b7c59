/**
 * protocol-errors against real fixture servers (SPEC section 5; case C12): unknown method, unknown
 * notifications, unknown tool, array params, each followed by a liveness request.
 */
import { describe, expect, it } from 'vitest';
import { auditFixture, checkOf, findingsOf, fixture, graded, LATER_PACKS_OFF } from '../helpers/run.js';
import { runCli } from '../helpers/cli.js';
import { shellQuote } from '../../src/replay.js';
import type { Report } from '../../src/report/build.js';

/** robust-input off: only the protocol probes run. hang_ms also bounds each protocol request. */
const ONLY_PROTOCOL = { checks: { ...LATER_PACKS_OFF, 'robust-input': { enabled: false, hang_ms: 2000 }, 'strict-arguments': { enabled: false } } };

function probeCalls(r: Report): { probe: string; method: string; kind: string; raw: unknown; request: string }[] {
  return r.calls
    .filter((c) => c.probe !== 'tools-list')
    .map((c) => ({ probe: c.probe, method: c.method, kind: c.reply.kind, raw: c.reply.raw, request: c.request }));
}

describe('C12: notifications answered with an error object', () => {
  it('is partial `notification-answered`, quoting the error object, and the server keeps answering', async () => {
    const r = await auditFixture('c12-notification-reply.mjs', ONLY_PROTOCOL);
    expect(checkOf(r, 'protocol-errors').verdict).toBe('partial');
    expect(graded(r, 'protocol-errors')).toEqual(['notification-answered']);
    const f = findingsOf(r, 'protocol-errors', 'notification-answered');
    expect(f.map((x) => x.data.method)).toEqual(['notifications/sealmark_unknown', 'notifications/roots/list_changed']);
    const roots = f[1]!;
    const quoted = '{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found: notifications/roots/list_changed"}}';
    expect(roots.evidence.quotes).toEqual([quoted]);
    expect(roots.message).toBe(`the notification notifications/roots/list_changed was answered: ${quoted}`);
    expect(roots.request).toBe('{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}');
    // The evidence call is the follow-up ping, which was answered: the server did not stop.
    const follow = r.calls.find((c) => c.seq === roots.evidence.calls![0])!;
    expect(follow.probe).toBe('notification-follow-up');
    expect(follow.method).toBe('ping');
    expect(follow.reply.kind).toBe('response');
    expect(findingsOf(r, 'protocol-errors', 'died')).toEqual([]);
    // Answers to notifications are not counted a second time as stray responses.
    expect(findingsOf(r, 'protocol-errors', 'stray-response')).toEqual([]);
  });
});

describe('a server that gets everything right', () => {
  it('many-tools.mjs passes; each probe got the right kind of error and every liveness check was answered', async () => {
    const r = await auditFixture('many-tools.mjs', ONLY_PROTOCOL);
    expect(checkOf(r, 'protocol-errors').verdict).toBe('pass');
    expect(checkOf(r, 'protocol-errors').findings).toEqual([]);
    const calls = probeCalls(r);
    expect(calls.map((c) => c.probe)).toEqual([
      'unknown-method',
      'liveness',
      'notification-follow-up',
      'notification-follow-up',
      'unknown-tool',
      'liveness',
      'array-params',
      'liveness',
    ]);
    expect(calls.every((c) => c.kind === 'response')).toBe(true);
    expect((calls[0]!.raw as { error: { code: number } }).error.code).toBe(-32601);
    expect(calls[0]!.method).toBe('sealmark/no-such-method');
    expect((calls[4]!.raw as { error: { code: number } }).error.code).toBe(-32602);
    expect(calls[6]!.request).toContain('"params":[]');
    expect((calls[6]!.raw as { error?: unknown }).error).toBeDefined();
  });

  it('c13-text-refusal-owner.mjs passes too', async () => {
    const r = await auditFixture('c13-text-refusal-owner.mjs', ONLY_PROTOCOL);
    expect(checkOf(r, 'protocol-errors').verdict).toBe('pass');
    expect(graded(r, 'protocol-errors')).toEqual([]);
  });
});

describe('correct-sdk.mjs (official v1 SDK)', () => {
  // The v1 SDK (1.32) drops a tools/call whose params are an array: its stdio transport parses each
  // line with JSONRPCMessageSchema (params must be an object), the parse throws, the error goes to
  // onerror, and the request never reaches the router, so no error goes back. The server still
  // answers the next tools/list. JSON-RPC 2.0 requires an error reply to a request, so a silently dropped
  // request with the server alive is `no-reply` → partial (a crash or lasting silence would fail).
  it('is partial `no-reply` on array-params, with the server alive after it', async () => {
    const r = await auditFixture('correct-sdk.mjs', ONLY_PROTOCOL);
    expect(checkOf(r, 'protocol-errors').verdict).toBe('partial');
    expect(graded(r, 'protocol-errors')).toEqual(['no-reply']);
    const [f] = findingsOf(r, 'protocol-errors', 'no-reply');
    expect(f!.message).toBe('the array-params request got no reply within 2000 ms (the server lives, but dropped it; JSON-RPC requires an error)');
    const dropped = r.calls.find((c) => c.seq === f!.evidence.calls![0])!;
    expect(dropped.probe).toBe('array-params');
    expect(dropped.reply.kind).toBe('hang');
    expect(f!.request).toBe(dropped.request);
    expect(dropped.request).toMatch(/"method":"tools\/call","params":\[\]\}$/);
    const after = r.calls.find((c) => c.seq === dropped.seq + 1)!;
    expect(after.probe).toBe('liveness');
    expect(after.reply.kind).toBe('response');
    // Everything else right: -32601 for the unknown method, an isError result for the unknown tool.
    const unknown = r.calls.find((c) => c.probe === 'unknown-method')!;
    expect((unknown.reply.raw as { error: { code: number } }).error.code).toBe(-32601);
    const tool = r.calls.find((c) => c.probe === 'unknown-tool')!;
    expect((tool.reply.raw as { result: { isError: boolean } }).result.isError).toBe(true);
    // The fixture's own package names no SDK among its dependencies: no SDK is blamed.
    expect(r.target.sdk).toBeUndefined();
    expect(f!.replay).toBe(`sealmark call --raw-params '[]' -- ${shellQuote(process.execPath)} ${shellQuote(fixture('correct-sdk.mjs'))}`);
  });

  it('the replay line sends the same params: [] and gets the same silence', async () => {
    const r = await runCli(['call', '--raw-params', '[]', '--timeout-probe', '1', '--', process.execPath, fixture('correct-sdk.mjs')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^sent {5}\{"jsonrpc":"2\.0","id":\d+,"method":"tools\/call","params":\[\]\}$/m);
    expect(r.stdout).toMatch(/^class {4}hang$/m);
  });

  it('--raw-params and --raw-args must be one line: a newline would smuggle a second request (exit 2)', async () => {
    for (const flag of ['--raw-params', '--raw-args']) {
      const extra = flag === '--raw-args' ? ['--tool', 'x'] : [];
      const r = await runCli(['call', ...extra, flag, '{}}\n{"jsonrpc":"2.0","id":7,"method":"tools/list"}', '--', process.execPath, fixture('correct-sdk.mjs')]);
      expect(r.code, flag).toBe(2);
      expect(r.stderr, flag).toContain(`${flag}: the text must be one line`);
    }
  });

  it('--raw-params stands alone: with --tool it is a usage error (exit 2)', async () => {
    const r = await runCli(['call', '--raw-params', '[]', '--tool', 'x', '--', process.execPath, fixture('correct-sdk.mjs')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--raw-params is the whole params member');
  });
});

describe('exits-on-null.mjs (exits on a robust-input probe)', () => {
  // SPEC section 3 step 3: the server robust-input took down is started again, and protocol-errors
  // judges that one; it is never n/a because another check crashed the server.
  it('runs on the restarted server and passes', async () => {
    const r = await auditFixture('exits-on-null.mjs');
    expect(checkOf(r, 'robust-input').verdict).toBe('fail');
    const pe = checkOf(r, 'protocol-errors');
    expect(pe.verdict).toBe('pass');
    expect(pe.findings).toEqual([]);
    expect(r.calls.some((c) => c.probe === 'unknown-method')).toBe(true);
  });
});
