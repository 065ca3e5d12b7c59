/**
 * What a recorded reply keeps (recorder.ts): a liveness listing keeps its tool count only, and a
 * string past KEPT_STRING_CHARS is cut with a marker, after the reply was read whole.
 */
import { describe, expect, it } from 'vitest';
import { capReplyStrings, elideListing, KEPT_STRING_CHARS } from '../../src/probes/recorder.js';
import { readResponse, type Exchange } from '../../src/target/wire.js';

const exchange = (message: Record<string, unknown>): Exchange => ({ id: 1, method: 'tools/call', sent: '{}', reply: readResponse({ jsonrpc: '2.0', id: 1, ...message }), startedAtMs: 0, durationMs: 1 });

describe('elideListing', () => {
  it('keeps the shape and the count of a listing, not its tools', () => {
    const ex = exchange({ result: { tools: [{ name: 'a' }, { name: 'b' }], nextCursor: 'x' } });
    elideListing(ex);
    expect(ex.reply).toMatchObject({ kind: 'response', result: { tools: [], toolsNotKept: 2, nextCursor: 'x' }, raw: { id: 1, result: { tools: [], toolsNotKept: 2 } } });
  });

  it('leaves an error, a malformed reply and an empty listing as they are', () => {
    for (const m of [{ error: { code: -32601, message: 'no' } }, { result: { tools: [] } }, { result: 'odd' }]) {
      const ex = exchange(m);
      const before = JSON.stringify(ex.reply);
      elideListing(ex);
      expect(JSON.stringify(ex.reply)).toBe(before);
    }
  });
});

describe('capReplyStrings', () => {
  it('cuts a long error message and a long text in a result, saying how much was not kept', () => {
    const big = 'E'.repeat(KEPT_STRING_CHARS + 10);
    const err = exchange({ error: { code: -32603, message: big } });
    capReplyStrings(err);
    const cut = `${'E'.repeat(KEPT_STRING_CHARS)}…[sealmark: 10 more characters not kept]`;
    expect(err.reply.kind === 'response' && err.reply.error?.message).toBe(cut);
    expect(err.reply.kind === 'response' && (err.reply.raw as { error: { message: string } }).error.message).toBe(cut);
    const res = exchange({ result: { content: [{ type: 'text', text: big }, { type: 'text', text: 'short' }], isError: true } });
    capReplyStrings(res);
    const r = res.reply.kind === 'response' ? (res.reply.result as { content: { text: string }[]; isError: boolean }) : undefined;
    expect(r?.content.map((c) => c.text)).toEqual([cut, 'short']);
    expect(r?.isError).toBe(true);
  });

  it('leaves a reply with no long string untouched (the same objects)', () => {
    const ex = exchange({ result: { content: [{ type: 'text', text: 'x'.repeat(KEPT_STRING_CHARS) }] } });
    const before = ex.reply;
    capReplyStrings(ex);
    expect(ex.reply).toBe(before);
  });
});
