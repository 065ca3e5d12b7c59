/**
 * protocol-errors against real fixture servers (SPEC section 5; case C12): unknown method, unknown
 * notifications, unknown tool, array params, each followed by a liveness request.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { audit } from '../../src/audit.js';
import { renderText } from '../../src/report/reporters/text.js';
import { configRegistry } from '../../src/config/defaults.js';
import { parseConfig } from '../../src/config/schema.js';
import { auditFixture, checkOf, findingsOf, fixture, graded, LATER_PACKS_OFF } from '../helpers/run.js';
import { runCli } from '../helpers/cli.js';
import { shellQuote } from '../../src/replay.js';
import type { Report } from '../../src/report/build.js';

/** robust-input off: only the protocol probes run. hang_ms also bounds each protocol request. */
const ONLY_PROTOCOL = { checks: { ...LATER_PACKS_OFF, 'robust-input': { enabled: false, hang_ms: 2000 }, 'strict-arguments': { enabled: false } } };

function probeCalls(r: Report): { probe: string; method: string; kind: string; raw: unknown; request: string }[] {
  return r.calls
    // The listings: the handshake's, and each further instance's own (many-tools.mjs has 25 tools).
    .filter((c) => c.probe !== 'tools-list' && c.probe !== 'instance-list')
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

describe('sdk/fallback-handler.mjs (real SDK 1.32.2 low-level Server, the author set fallbackRequestHandler)', () => {
  let r: Report;
  beforeAll(async () => {
    r = await auditFixture('sdk/fallback-handler.mjs', ONLY_PROTOCOL);
  });

  it('is detected as built on @modelcontextprotocol/sdk 1.32.2', () => {
    expect(r.target.sdk).toEqual([{ name: '@modelcontextprotocol/sdk', version: '1.32.2', from: 'package' }]);
    expect(checkOf(r, 'protocol-errors').verdict).toBe('partial');
    expect(graded(r, 'protocol-errors').sort()).toEqual(['no-reply', 'unknown-method-result']);
  });

  it('unknown-method-result is the author\'s: the SDK answers -32601, so the finding names no SDK, and it replays with --method', () => {
    const [f] = findingsOf(r, 'protocol-errors', 'unknown-method-result');
    expect(f!.sdkCause).toBeUndefined();
    expect(f!.data.sdk).toBe('');
    expect(f!.message).toBe('an unknown method was answered with a result instead of error -32601');
    expect(f!.evidence.quotes).toEqual(['{}']);
    expect(f!.request).toMatch(/"method":"sealmark\/no-such-method","params":\{\}/);
    expect(f!.replay).toBe(`sealmark call --method sealmark/no-such-method --raw-params '{}' -- ${shellQuote(process.execPath)} ${shellQuote(fixture('sdk/fallback-handler.mjs'))}`);
  });

  it('no-reply on array-params is the SDK\'s (its known reply): named with its version, no release to upgrade to, suppress and report upstream', () => {
    const [f] = findingsOf(r, 'protocol-errors', 'no-reply');
    expect(f!.data.probe).toBe('array-params');
    expect(f!.sdkCause).toEqual({ sdk: '@modelcontextprotocol/sdk', version: '1.32.2', dependency: '@modelcontextprotocol/sdk' });
    expect(f!.message).toContain('@modelcontextprotocol/sdk 1.32.2');
    expect(f!.message).toContain('no release of @modelcontextprotocol/sdk is known to answer otherwise');
    expect(f!.message).toContain('suppress: entry (check: protocol-errors, messageId: no-reply)');
    expect(f!.message).toContain('https://github.com/modelcontextprotocol/typescript-sdk/issues');
    expect(f!.message).not.toMatch(/upgrade/);
  });

  it('the --method replay line sends the same request and gets the same result', async () => {
    const out = await runCli(['call', '--method', 'sealmark/no-such-method', '--raw-params', '{}', '--', process.execPath, fixture('sdk/fallback-handler.mjs')]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^sent {5}\{"jsonrpc":"2\.0","id":\d+,"method":"sealmark\/no-such-method","params":\{\}\}$/m);
    expect(out.stdout).toMatch(/^reply {4}\{"result":\{\},/m);
  });

  it('--method without --raw-params is a usage error (exit 2)', async () => {
    const out = await runCli(['call', '--method', 'sealmark/no-such-method', '--', process.execPath, fixture('sdk/fallback-handler.mjs')]);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/--method takes --raw-params/);
  });
});

describe('sdk/plain-server.mjs (the same SDK, no fallback handler)', () => {
  it('answers the unknown method -32601 (no finding); only the SDK\'s no-reply on array-params, named', async () => {
    const r = await auditFixture('sdk/plain-server.mjs', ONLY_PROTOCOL);
    expect(graded(r, 'protocol-errors')).toEqual(['no-reply']);
    const unknown = r.calls.find((c) => c.probe === 'unknown-method')!;
    expect((unknown.reply.raw as { error: { code: number } }).error.code).toBe(-32601);
    expect(findingsOf(r, 'protocol-errors', 'no-reply')[0]!.sdkCause?.sdk).toBe('@modelcontextprotocol/sdk');
  });
});

describe('the array-params probe goes first, so its hang limit passes beside the other probes', () => {
  /** Transcript lines of a run: what was sent and received, in order. */
  const transcriptOf = (file: string) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { ms: number; dir: string; message: { id?: unknown; method?: string; params?: unknown } });

  it('a server that never answers it and answers the rest: sent before the robust-input probes, answered by none, judged as in its turn', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sealmark-early-'));
    try {
      const transcript = join(dir, 't.jsonl');
      const r = await audit({ command: process.execPath, args: [fixture('protocol/drops-array-params.mjs')], config: parseConfig({ checks: { ...LATER_PACKS_OFF, 'robust-input': { hang_ms: 2000 } } }, configRegistry()), transcriptPath: transcript });
      expect(graded(r, 'protocol-errors')).toEqual(['no-reply']);
      expect(findingsOf(r, 'protocol-errors', 'no-reply')[0]!.data.probe).toBe('array-params');
      const sent = transcriptOf(transcript).filter((x) => x.dir === 'send' && x.message.method === 'tools/call');
      // The first tools/call on the wire is the array-params probe; robust-input's probes follow while it waits.
      expect(Array.isArray(sent[0]!.message.params)).toBe(true);
      const rows = transcriptOf(transcript);
      const cancelled = rows.findIndex((x) => x.message.method === 'notifications/cancelled' && (x.message.params as { requestId?: unknown }).requestId === sent[0]!.message.id);
      const robust = rows.findIndex((x) => x.dir === 'send' && x.message.method === 'tools/call' && !Array.isArray(x.message.params));
      expect(robust).toBeGreaterThan(-1);
      expect(robust).toBeLessThan(cancelled);
      // Recorded after unknown-tool, with its liveness check after it.
      const probes = r.calls.filter((c) => ['unknown-method', 'unknown-tool', 'array-params'].includes(c.probe)).map((c) => c.probe);
      expect(probes).toEqual(['unknown-method', 'unknown-tool', 'array-params']);
      expect(r.calls.find((c) => c.probe === 'array-params')!.reply.kind).toBe('hang');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('the gatherers after protocol-errors do not wait for it: concurrency and oversized-input go while it waits, and it is recorded last', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sealmark-early-'));
    try {
      const transcript = join(dir, 't.jsonl');
      const raw = { checks: { ...LATER_PACKS_OFF, concurrency: { enabled: true }, 'oversized-input': { enabled: true }, 'robust-input': { hang_ms: 3000 } } };
      const r = await audit({ command: process.execPath, args: [fixture('protocol/drops-array-params.mjs')], config: parseConfig(raw, configRegistry()), transcriptPath: transcript });
      expect(graded(r, 'protocol-errors')).toEqual(['no-reply']);
      expect(checkOf(r, 'concurrency').verdict).toBe('pass');
      const rows = transcriptOf(transcript);
      const probe = rows.find((x) => x.dir === 'send' && Array.isArray(x.message.params))!;
      const cancelled = rows.findIndex((x) => x.message.method === 'notifications/cancelled' && (x.message.params as { requestId?: unknown }).requestId === probe.message.id);
      expect(cancelled).toBeGreaterThan(-1);
      expect(r.calls.filter((c) => c.probe === 'concurrent-call').length).toBeGreaterThan(1);
      expect(checkOf(r, 'oversized-input').verdict).toBe('pass');
      expect(r.calls.some((c) => c.tool === 'echo' && c.probe === 'oversized-string')).toBe(true);
      // Every other tools/call of the audit (the concurrency burst and the oversized values among
      // them) went on the wire before the probe's hang limit ran out.
      const calls = rows.map((x, i) => ({ x, i })).filter(({ x }) => x.dir === 'send' && x.message.method === 'tools/call' && !Array.isArray(x.message.params));
      expect(calls).toHaveLength(r.calls.filter((c) => c.method === 'tools/call').length - 1);
      for (const { i } of calls) expect(i).toBeLessThan(cancelled);
      // Recorded last: only its liveness check comes after it.
      const at = r.calls.findIndex((c) => c.probe === 'array-params');
      expect(r.calls.slice(at + 1).map((c) => c.probe)).toEqual(['liveness']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('a server that handles one request at a time: the probe goes again in its turn, nothing else is held up or blamed, and the verdict is a serial run’s', async () => {
    const raw = { checks: { ...LATER_PACKS_OFF, 'robust-input': { hang_ms: 2000 } } };
    const r = await auditFixture('protocol/one_at_a_time.py', raw);
    expect(graded(r, 'protocol-errors')).toEqual(['no-reply']);
    expect(findingsOf(r, 'protocol-errors', 'no-reply')[0]!.data.probe).toBe('array-params');
    const probes = r.calls.filter((c) => ['unknown-method', 'unknown-tool', 'array-params'].includes(c.probe)).map((c) => c.probe);
    expect(probes).toEqual(['unknown-method', 'unknown-tool', 'array-params']);
    expect(r.calls.filter((c) => c.reply.kind === 'hang').map((c) => c.probe)).toEqual(['array-params']);
    expect(checkOf(r, 'robust-input').verdict).toBe('pass');
    expect(r.restarts ?? []).toEqual([]);
  }, 60_000);

  it('a server the early probe leaves answering nothing is started again, says why, and is judged as in a serial run', async () => {
    const raw = { checks: { ...LATER_PACKS_OFF, 'robust-input': { hang_ms: 2000 } } };
    const r = await auditFixture('protocol/one_at_a_time.py', raw, ['--forever']);
    expect(r.restarts).toEqual([{ afterSeq: expect.any(Number), ok: true, why: "it answered nothing after sealmark's early array-params probe (it handles one request at a time); the probe was sent again in its turn" }]);
    // The tool is judged on the fresh start, as before the probe existed.
    expect(checkOf(r, 'robust-input').verdict).toBe('pass');
    expect(checkOf(r, 'strict-arguments').verdict).not.toBe('n/a');
    // In its turn the probe leaves the server answering nothing again: it died, as in a serial run.
    const died = findingsOf(r, 'protocol-errors', 'died');
    expect(died.map((f) => [f.data.how, f.data.probe])).toEqual([['stopped answering', 'array-params']]);
    expect(renderText(r, { color: false, verbose: false })).toContain("(once because it answered nothing after sealmark's early array-params probe");
  }, 90_000);
});
