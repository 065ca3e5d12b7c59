/**
 * jsonHead: the head of a reply's JSON text, as the report keeps it (`reply.rawText`, 4,096
 * characters), written without serialising the whole reply.
 */
import { describe, expect, it } from 'vitest';
import { jsonHead } from '../../src/report/build.js';

const values: unknown[] = [
  null,
  true,
  -1.5e-7,
  'plain',
  'quote " backslash \\ newline \n tab \t control \u0001 unicode é ✓',
  [],
  {},
  [1, 'two', null, { three: [3, { deep: 'x'.repeat(50) }] }],
  { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'ok' }], isError: false }, 'odd "key"': { '': 0 } },
  { a: undefined, b: [undefined], c: 1 },
];

describe('jsonHead', () => {
  it('is JSON.stringify’s text cut at every length, and says whether it was cut', () => {
    for (const v of values) {
      const whole = JSON.stringify(v) ?? 'null';
      for (let max = 0; max <= whole.length + 1; max++) {
        expect(jsonHead(v, max), `${whole} at ${max}`).toEqual({ text: whole.slice(0, max), cut: whole.length > max });
      }
    }
  });

  it('takes the head of a long string without the rest', () => {
    const v = { error: { code: -32603, message: 'E'.repeat(1024 * 1024) } };
    const head = jsonHead(v, 4096);
    expect(head).toEqual({ text: JSON.stringify(v).slice(0, 4096), cut: true });
  });
});
