/**
 * The limit recogniser, bounds reader, item counter and probe values of src/limits.ts and
 * src/probes/limits.ts, each rule with a case that matches and one that must not.
 */
import { describe, expect, it } from 'vitest';
import { boundsOf, countItems, limitProperties } from '../../src/limits.js';
import { NO_MAXIMUM_PROBE, limitValues } from '../../src/probes/limits.js';
import type { ListedTool } from '../../src/types.js';

function tool(properties: Record<string, unknown>): ListedTool {
  return { index: 0, name: 't', raw: {}, inputSchema: { type: 'object', properties }, annotations: undefined };
}

const recognised = (properties: Record<string, unknown>) => limitProperties(tool(properties)).map((l) => `${l.property.name}:${l.kind}`);

describe('limitProperties', () => {
  it.each([
    ['limit', 'count'],
    ['count', 'count'],
    ['n', 'count'],
    ['depth', 'count'],
    ['top_k', 'count'],
    ['topK', 'count'],
    ['page_size', 'count'],
    ['pageSize', 'count'],
    ['per-page', 'count'],
    ['max_results', 'count'],
    ['maxResults', 'count'],
    ['max.items', 'count'],
    ['num_beams', 'count'],
    ['batchSize', 'count'],
    ['row_limit', 'count'],
    ['retryCount', 'count'],
    ['seconds', 'duration'],
    ['timeout_ms', 'duration'],
    ['delaySeconds', 'duration'],
    ['timeout_after', 'duration'],
    ['duration', 'duration'],
    // A duration word last wins over a count word first (firecrawl-mcp 3.26.0's maxAge is a cache age in ms).
    ['maxAge', 'duration'],
    ['max_delay', 'duration'],
    ['minInterval', 'duration'],
  ])('recognises %s as a %s', (name, kind) => {
    expect(recognised({ [name]: { type: 'integer' } })).toEqual([`${name}:${kind}`]);
  });

  it.each(['offset', 'page', 'min_score', 'query', 'max', 'num', 'maximal', 'counter', 'limited', 'id'])('does not take %s for a limit', (name) => {
    expect(recognised({ [name]: { type: 'integer' } })).toEqual([]);
  });

  it('reads only numeric or untyped properties', () => {
    expect(recognised({ limit: { type: 'string' }, count: { type: 'boolean' }, n: {}, depth: { type: ['integer', 'null'] } })).toEqual(['n:count', 'depth:count']);
  });

  it('recognises a count by its description whatever its name (server-filesystem head/tail)', () => {
    const found = limitProperties(tool({ head: { type: 'number', description: 'If provided, returns only the first N lines of the file' }, path: { type: 'string', description: 'first N' } }));
    expect(found.map((l) => [l.property.name, l.kind, l.because, l.path])).toEqual([['head', 'count', 'description ("first N")', 'properties.head']]);
    expect(recognised({ steps: { type: 'number', description: 'Number of steps in the operation' } })).toEqual(['steps:count']);
    expect(recognised({ resourceId: { type: 'number', description: 'ID of the text resource to fetch' } })).toEqual([]);
  });
});

describe('boundsOf', () => {
  const bounds = (schema: Record<string, unknown>) => boundsOf(limitProperties(tool({ limit: schema }))[0]!);

  it('reads minimum and maximum', () => {
    expect(bounds({ type: 'integer', minimum: 1, maximum: 50 })).toEqual({ types: ['integer'], min: 1, max: 50 });
    expect(bounds({ type: 'integer' })).toEqual({ types: ['integer'] });
  });

  it('reads 2019+ numeric exclusive bounds as the nearest integers for an integer', () => {
    expect(bounds({ type: 'integer', exclusiveMinimum: -1, exclusiveMaximum: 101 })).toEqual({ types: ['integer'], min: 0, max: 100 });
  });

  it('reads draft-04 Boolean exclusive bounds', () => {
    expect(bounds({ type: 'integer', minimum: 0, exclusiveMinimum: true, maximum: 10, exclusiveMaximum: true })).toEqual({ types: ['integer'], min: 1, max: 9 });
  });

  it('ignores bounds that are not finite numbers', () => {
    expect(bounds({ type: 'integer', minimum: '0', maximum: true })).toEqual({ types: ['integer'] });
  });
});

describe('countItems', () => {
  it('counts a structuredContent array, or its longest array member', () => {
    expect(countItems({ structuredContent: [1, 2, 3], content: [] })).toBe(3);
    expect(countItems({ structuredContent: { items: [1, 2], tags: ['a', 'b', 'c'], total: 9 }, content: [{ type: 'text', text: 'x' }] })).toBe(3);
  });

  it('falls back to content blocks when structuredContent has no array', () => {
    expect(countItems({ structuredContent: { content: 'a\nb' }, content: [{ type: 'text', text: 'a\nb' }] })).toBe(2);
    expect(countItems({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }, { type: 'resource_link', uri: 'x' }] })).toBe(3);
    expect(countItems({ content: [] })).toBe(0);
  });

  it('reads one text block as a JSON array, an object with an array, or its non-empty lines', () => {
    expect(countItems({ content: [{ type: 'text', text: '["a","b"]' }] })).toBe(2);
    expect(countItems({ content: [{ type: 'text', text: '{"rows":[1,2,3,4]}' }] })).toBe(4);
    expect(countItems({ content: [{ type: 'text', text: 'one\n\ntwo\nthree\n' }] })).toBe(3);
    expect(countItems({ content: [{ type: 'text', text: '[not json' }] })).toBe(1);
    expect(countItems({ content: [{ type: 'text', text: '   ' }] })).toBe(0);
    expect(countItems({ content: [{ type: 'image', data: '', mimeType: 'image/png' }] })).toBe(1);
  });

  it('cannot tell without content', () => {
    expect(countItems(null)).toBeUndefined();
    expect(countItems({ isError: false })).toBeUndefined();
  });
});

describe('limitValues', () => {
  const values = (schema: Record<string, unknown>, name = 'limit') => limitValues(limitProperties(tool({ [name]: schema }))[0]!);

  it('sends one past the maximum, in JSON and as the later duplicate member', () => {
    const v = values({ type: 'integer', minimum: 0, maximum: 50 });
    expect(v.find((x) => x.probe === 'limit-over-max')?.json).toBe(51);
    expect(v.find((x) => x.probe === 'raw-duplicate')?.raw).toBe('1,"limit":51');
  });

  it('sends 10^9 without a maximum, and the seed\'s 5 as the later duplicate', () => {
    const v = values({ type: 'integer' }, 'max"calls');
    expect(v.find((x) => x.probe === 'limit-over-max')?.json).toBe(NO_MAXIMUM_PROBE);
    expect(v.find((x) => x.probe === 'raw-duplicate')?.raw).toBe('1,"max\\"calls":5');
  });

  it('covers every value SPEC section 5 lists, raw tokens marked when they are not JSON', () => {
    const v = values({ type: 'integer', maximum: 3 });
    expect(v.filter((x) => x.json !== undefined).map((x) => x.json)).toEqual([false, true, 0, 1, -1, -5, '1', 1.5, 4]);
    expect(v.filter((x) => x.raw !== undefined).map((x) => `${x.raw}${x.notJson ? '!' : ''}`)).toEqual(['1.0', 'NaN!', 'Infinity!', '-Infinity!', '1e309', '1,"limit":4']);
  });
});
