/**
 * How a server's tools are shared among its instances (probes/instances.ts, SPEC section 3 step 3):
 * how many instances there are, what each tool is estimated to take, and where the listing is cut.
 */
import { describe, expect, it } from 'vitest';
import { toListedTool } from '../../src/audit.js';
import { EFFECT_QUIET_MS, LATE_WINDOW_MS } from '../../src/probes/watch.js';
import { DROPPED_LINE_GRACE_MS } from '../../src/probes/limits.js';
import { estimatedMs, instanceCount, shareTools } from '../../src/probes/instances.js';
import type { ListedTool } from '../../src/types.js';

const tool = (name: string, properties: Record<string, unknown>, extra: Record<string, unknown> = {}): ListedTool =>
  toListedTool({ name, description: `Does ${name}.`, inputSchema: { type: 'object', properties, required: Object.keys(properties).slice(0, 1) }, ...extra }, 0);

/** A read-only tool with one required string: its estimate has no limits and no effects calls but the filler's. */
const plain = (name: string) => tool(name, { q: { type: 'string' } }, { annotations: { readOnlyHint: true } });
/** A tool with a count: the limits pack sends it a dozen values, three of them lines that are not JSON. */
const counted = (name: string) => tool(name, { q: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 50 } });

describe('instanceCount', () => {
  it('is one below twice TOOLS_PER_INSTANCE, then one per 6 tools and one more, at most 5', () => {
    expect([1, 11, 12, 17, 18, 24, 25, 28, 3000].map(instanceCount)).toEqual([1, 1, 3, 3, 4, 5, 5, 5, 5]);
  });
});

describe('estimatedMs', () => {
  it('weighs a tool by the waits its probes make: a count adds a judged call per value and the dropped-line grace for each line that is not JSON', () => {
    const a = estimatedMs(plain('read'));
    const b = estimatedMs(counted('list'));
    // At least the three lines that are not JSON (NaN, Infinity, -Infinity) and the late window of the `{}`-less tool's filler.
    expect(b - a).toBeGreaterThan(3 * DROPPED_LINE_GRACE_MS + 6 * EFFECT_QUIET_MS);
    // A tool with no required argument gets a `{}` call, which waits out the late window first.
    const open = tool('ping_all', {});
    expect(estimatedMs(open)).toBeGreaterThanOrEqual(LATE_WINDOW_MS + EFFECT_QUIET_MS);
  });

  it('gives a schema it cannot read the calls it can still make, never throws', () => {
    const odd = toListedTool({ name: 'odd', inputSchema: { type: 'object', properties: { limit: { $ref: '#/nowhere' } } } }, 0);
    expect(estimatedMs(odd)).toBeGreaterThan(0);
  });
});

describe('shareTools', () => {
  /** The estimate of each run of `share` over `tools`. */
  const runs = (tools: ListedTool[], share: Map<string, number>) => {
    const out: number[] = [];
    for (const t of tools) out[share.get(t.name)!] = (out[share.get(t.name)!] ?? 0) + estimatedMs(t);
    return out;
  };

  it('cuts the listing into runs of neighbours, numbered in order without gaps', () => {
    const tools = [...Array.from({ length: 10 }, (_, i) => plain(`p${i}`)), ...Array.from({ length: 4 }, (_, i) => counted(`c${i}`))];
    const share = shareTools(tools, 3);
    const order = tools.map((t) => share.get(t.name)!);
    expect(order).toEqual([...order].sort((x, y) => x - y));
    expect(new Set(order)).toEqual(new Set([0, 1, 2]));
  });

  it('puts the heavy tools on more instances than their count alone would: the heaviest run is the lightest a cut can make', () => {
    // Ten light tools, then four heavy ones: cutting by count (5, 5, 4) would give one instance all the heavy tools.
    const tools = [...Array.from({ length: 10 }, (_, i) => plain(`p${i}`)), ...Array.from({ length: 4 }, (_, i) => counted(`c${i}`))];
    const share = shareTools(tools, 3);
    const heavy = tools.filter((t) => t.name.startsWith('c')).map((t) => share.get(t.name)!);
    expect(new Set(heavy).size).toBeGreaterThan(1);
    // No cut of the listing into three runs has a lighter heaviest run (all cuts tried).
    const w = tools.map(estimatedMs);
    const sum = (a: number, b: number) => w.slice(a, b).reduce((x, y) => x + y, 0);
    let best = Infinity;
    for (let i = 1; i < tools.length - 1; i++) for (let j = i + 1; j < tools.length; j++) best = Math.min(best, Math.max(sum(0, i), sum(i, j), sum(j, tools.length)));
    expect(Math.max(...runs(tools, share))).toBe(best);
  });

  it('gives every instance a tool when the tools are few, and one instance for one tool', () => {
    const tools = [counted('a'), plain('b'), plain('c')];
    expect(tools.map((t) => shareTools(tools, 3).get(t.name))).toEqual([0, 1, 2]);
    expect([...shareTools([plain('only')], 4).values()]).toEqual([0]);
  });
});
