/**
 * The wire's request layer against a scripted inner transport: raw text spliced into a request,
 * a parse-error reply (id null) matched to the one raw request waiting, and replies to requests
 * sealmark stopped waiting for kept as late answers, never as strays (JSON-RPC 2.0 section 5).
 */
import { describe, expect, it } from 'vitest';
import { WireTransport } from '../../src/target/wire.js';
import type { AuditStdioTransport } from '../../src/target/stdio-transport.js';

/** A stand-in for the stdio transport: records written lines, delivers scripted messages. */
class FakeInner {
  lines: string[] = [];
  taps: ((direction: 'send' | 'recv', message: unknown, at: number) => void)[] = [];
  onmessage?: (m: unknown) => void;
  onclose?: () => void;
  onerror?: (e: Error) => void;
  onOversized?: (id: number, bytes: number) => boolean;
  onUnparsed?: (text: string) => void;
  exit = null;
  stderr = null;
  pid: number | null = null;
  private readonly t0 = Date.now();
  now(): number {
    return Date.now() - this.t0;
  }
  async writeLine(line: string): Promise<void> {
    this.lines.push(line);
  }
  async send(m: unknown): Promise<void> {
    this.lines.push(JSON.stringify(m));
  }
  async start(): Promise<void> {}
  async close(): Promise<void> {}
  deliver(m: unknown): void {
    this.onmessage?.(m);
  }
}

function wire(): { w: WireTransport; inner: FakeInner } {
  const inner = new FakeInner();
  const w = new WireTransport(inner as unknown as AuditStdioTransport);
  w.handshakeDone = true;
  return { w, inner };
}

const idOf = (line: string) => Number(/"id":(\d+)/.exec(line)![1]);

describe('WireTransport.request', () => {
  it('splices raw text in place of the marker, verbatim', async () => {
    const { w, inner } = wire();
    const p = w.request('tools/call', { name: 'wait', arguments: { seconds: 'MARK' } }, 1000, { splice: { marker: 'MARK', text: 'NaN' } });
    const line = inner.lines[0]!;
    expect(line).toBe(`{"jsonrpc":"2.0","id":${idOf(line)},"method":"tools/call","params":{"name":"wait","arguments":{"seconds":NaN}}}`);
    inner.deliver({ jsonrpc: '2.0', id: idOf(line), result: { content: [] } });
    expect((await p).sent).toBe(line);
  });

  it('throws (a bug in the caller) when the marker is missing', async () => {
    const { w } = wire();
    await expect(w.request('tools/call', { name: 'x' }, 1000, { splice: { marker: 'MARK', text: '1' } })).rejects.toThrow(/marker/);
  });

  it('takes an id-null parse error as the reply of the one raw request waiting', async () => {
    const { w, inner } = wire();
    const p = w.request('tools/call', { name: 'wait', arguments: { seconds: 'MARK' } }, 1000, { splice: { marker: 'MARK', text: 'NaN' } });
    const error = { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } };
    inner.deliver(error);
    const ex = await p;
    expect(ex.reply).toEqual({ kind: 'response', error: { code: -32700, message: 'Parse error', data: undefined }, raw: error });
    expect(w.strayResponses).toEqual([]);
  });

  it('keeps an id-null error a stray when no raw request waits', async () => {
    const { w, inner } = wire();
    const p = w.request('tools/list', {}, 50);
    const error = { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } };
    inner.deliver(error);
    expect((await p).reply.kind).toBe('hang');
    expect(w.strayResponses.map((s) => s.message)).toEqual([error]);
  });

  it('keeps a reply after the hang limit as a late answer, not a stray', async () => {
    const { w, inner } = wire();
    const ex = await w.request('tools/call', { name: 'slow' }, 30);
    expect(ex.reply).toEqual({ kind: 'hang', waitedMs: 30 });
    // The wire told the server it gave up.
    expect(JSON.parse(inner.lines[1]!)).toMatchObject({ method: 'notifications/cancelled', params: { requestId: ex.id } });
    const late = { jsonrpc: '2.0', id: ex.id, result: { content: [] } };
    inner.deliver(late);
    expect(w.lateResponses.map((l) => l.message)).toEqual([late]);
    expect(w.strayResponses).toEqual([]);
    // A second answer to the same id is a stray: the id was answered once already.
    inner.deliver(late);
    expect(w.strayResponses.map((s) => s.message)).toEqual([late]);
  });

  // Seen on server-everything under a full test run: trigger-long-running-operation answers its
  // default 10 s job about 10 ms after the 10 s hang limit; when the event loop woke with both due,
  // the reply was read before the limit's timer ran and the call counted as answered.
  it('takes a reply read after the hang limit ran out as late, even before the limit’s timer has run', async () => {
    const { w, inner } = wire();
    const p = w.request('tools/call', { name: 'slow' }, 30);
    const id = idOf(inner.lines[0]!);
    const busyUntil = Date.now() + 60;
    while (Date.now() < busyUntil) {
      /* the event loop is held past the limit: the timer cannot run */
    }
    const late = { jsonrpc: '2.0', id, result: { content: [] } };
    inner.deliver(late);
    expect((await p).reply).toEqual({ kind: 'hang', waitedMs: 30 });
    expect(w.lateResponses.map((l) => l.message)).toEqual([late]);
    expect(w.strayResponses).toEqual([]);
  });

  // Seen on server-filesystem under load: the reply to the 100,000-path oversized probe, 23.8 MB,
  // came after the hang limit and was counted as stdout noise (handshake partial).
  it('takes a late reply past the line limit as that request\'s late answer, not stdout noise', async () => {
    const { w, inner } = wire();
    const ex = await w.request('tools/call', { name: 'slow' }, 30);
    expect(ex.reply.kind).toBe('hang');
    expect(inner.onOversized!(ex.id, 23_800_099)).toBe(true);
    expect(w.lateOversized).toEqual([{ atMs: expect.any(Number), id: ex.id, bytes: 23_800_099 }]);
    expect(w.strayResponses).toEqual([]);
    // An oversized line naming an id never sent (or answered already) is still the transport's noise.
    expect(inner.onOversized!(ex.id, 100)).toBe(false);
    expect(inner.onOversized!(9999, 100)).toBe(false);
  });

  it('stops waiting when the signal aborts, and keeps the later reply as late', async () => {
    const { w, inner } = wire();
    const stop = new AbortController();
    const p = w.request('tools/call', { name: 'slow' }, 10_000, { signal: stop.signal });
    stop.abort();
    const ex = await p;
    expect(ex.reply.kind).toBe('hang');
    expect((ex.reply as { waitedMs: number }).waitedMs).toBeLessThan(1000);
    inner.deliver({ jsonrpc: '2.0', id: ex.id, result: { content: [] } });
    expect(w.lateResponses).toHaveLength(1);
    expect(w.strayResponses).toEqual([]);
  });
});

describe('WireTransport id-null parse errors', () => {
  const parseError = { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } };

  it('takes only parse errors (-32700, -32600): an id-null -32601 is a stray, never a raw reply', async () => {
    const { w, inner } = wire();
    const p = w.request('tools/call', { name: 'wait', arguments: { seconds: 'MARK' } }, 50, { splice: { marker: 'MARK', text: 'NaN' } });
    const notFound = { jsonrpc: '2.0', id: null, error: { code: -32601, message: 'Method not found' } };
    inner.deliver(notFound);
    expect((await p).reply.kind).toBe('hang');
    expect(w.strayResponses.map((s) => s.message)).toEqual([notFound]);
  });

  it('gives a late parse error to the raw request abandoned first, not to the one now waiting', async () => {
    const { w, inner } = wire();
    const stop = new AbortController();
    const first = w.request('tools/call', { name: 'a', arguments: { n: 'MARK' } }, 10_000, { splice: { marker: 'MARK', text: 'NaN' }, signal: stop.signal });
    stop.abort();
    const abandoned = await first;
    expect(abandoned.reply.kind).toBe('hang');
    const second = w.request('tools/call', { name: 'a', arguments: { n: 'MARK' } }, 1000, { splice: { marker: 'MARK', text: 'Infinity' } });
    // The first line's parse error arrives now: it is the first request's late answer.
    inner.deliver(parseError);
    expect(w.lateResponses.map((l) => [l.id, l.message])).toEqual([[abandoned.id, parseError]]);
    // The second line's own parse error then settles the second request.
    inner.deliver(parseError);
    const ex = await second;
    expect(ex.reply).toMatchObject({ kind: 'response', error: { code: -32700 } });
    expect(w.strayResponses).toEqual([]);
  });
});
