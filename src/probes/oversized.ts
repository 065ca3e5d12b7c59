/**
 * The oversized-input gatherer (SPEC section 5, oversized-input): a 1 MiB string, a 100,000-item
 * array and a 64-level nested object, each in place of one typed argument of each tool, the other
 * arguments valid where sealmark can make them so. What is asked of the server is only that it
 * answers within the hang limit and lives.
 */
import type { ResolvedConfig } from '../config/schema.js';
import { compileSchema, propertiesOf, type PropertyInfo } from '../schema.js';
import { sampleValid } from '../values.js';
import type { ListedTool } from '../types.js';
import { uncallable } from './callable.js';
import type { Recorder } from './recorder.js';
import { MAX_HANGS, hangLimitMs, maxTools, validArgs } from './robust-input.js';
import { claimNotEnough, mayWriteUnprotected } from './watch.js';

/** Size of the long string (1 MiB of ASCII, so 1,048,576 bytes on the wire). */
export const BIG_STRING_BYTES = 1024 * 1024;
/** Items of the long array. */
export const BIG_ARRAY_ITEMS = 100_000;
/** Longest JSON text of one array item (characters); a longer sampled item is replaced by `"x"`. */
const MAX_ITEM_CHARS = 40;
/** Levels of the nested object (`{"a":{"a":…{}}}`, the innermost `{}` is level 64). */
export const DEEP_OBJECT_LEVELS = 64;

/** One oversized probe: its id, the JSON type it fits, and how its value is built. */
interface OversizedProbe {
  probe: 'oversized-string' | 'oversized-array' | 'deep-object';
  fits: 'string' | 'array' | 'object';
  build: (target: PropertyInfo) => unknown;
}

const PROBES: readonly OversizedProbe[] = [
  { probe: 'oversized-string', fits: 'string', build: () => 'x'.repeat(BIG_STRING_BYTES) },
  {
    probe: 'oversized-array',
    fits: 'array',
    build: (p) => {
      // A sampled item only when it is small: 100,000 copies of a large one would make a request of
      // gigabytes (and exhaust sealmark's own memory) where 1 MB is meant.
      const sampled = p.types.includes('array') ? sampleValid(p.schema.items) : 'x';
      const item = (JSON.stringify(sampled) ?? '').length <= MAX_ITEM_CHARS ? sampled : 'x';
      return Array.from({ length: BIG_ARRAY_ITEMS }, () => item);
    },
  },
  { probe: 'deep-object', fits: 'object', build: () => deepObject(DEEP_OBJECT_LEVELS) },
];

/** `{"a": {"a": … {}}}` with `levels` objects in all. */
export function deepObject(levels: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) v = { a: v };
  return v;
}

/** What the oversized gatherer did besides its calls. */
export interface OversizedRun {
  /** Tools probed, with the property each probe filled. */
  tools: { tool: string; targets: Record<string, string> }[];
  /** Tools not probed and why (no typed property, cannot be called). */
  skipped: { tool: string; why: string }[];
  /** Tools not probed because they may write and the user's files were not protected, and why. */
  guarded: { tool: string; why: string }[];
  beyondMaxTools: string[];
  /** Probes not sent: a schema-valid oversized value to a tool that may write, outside the sandbox. */
  notSent: { tool: string; probe: string; why: string }[];
  stopped?: { reason: 'three-hangs' | 'server-gone'; notReached: string[] };
  /** The liveness tools/list after each tool's calls: its call seq and whether it was answered. */
  liveness: { tool: string; seq: number; alive: boolean }[];
}

/**
 * Sends the three oversized values to each callable tool with a typed property (up to
 * `checks.robust-input.max_tools`), each in place of the first property of the type it fits (else
 * the first typed property), then a liveness `tools/list` per tool. A value the schema accepts (a
 * long string where no `maxLength` is declared) is sent only to a read-only tool, and not even
 * there when `unprotected` (probes/watch.ts unprotectedFiles) says the user's files are not
 * protected, where a tool that may write gets nothing at all: it is a real call (a `probes:` entry vouches for its own arguments, not for 1 MiB in them).
 */
export async function gatherOversized(rec: Recorder, tools: ListedTool[], config: ResolvedConfig, unprotected?: string): Promise<OversizedRun> {
  const hangMs = hangLimitMs(config);
  const skip = new Set(config.skip_tools);
  const run: OversizedRun = { tools: [], skipped: [], guarded: [], beyondMaxTools: [], notSent: [], liveness: [] };
  const eligible: { tool: ListedTool; typed: PropertyInfo[] }[] = [];
  for (const tool of tools) {
    if (skip.has(tool.name)) continue;
    const cannot = uncallable(tool);
    let typed: PropertyInfo[] = [];
    try {
      typed = propertiesOf(tool.inputSchema).filter((p) => p.types.length > 0);
    } catch {
      typed = [];
    }
    if (cannot) run.skipped.push({ tool: tool.name, why: cannot });
    else if (typed.length === 0) run.skipped.push({ tool: tool.name, why: 'no typed property to put an oversized value in' });
    else eligible.push({ tool, typed });
  }
  const cap = maxTools(config);
  run.beyondMaxTools = eligible.slice(cap).map((e) => e.tool.name);
  // Another instance calls the tools this one does not own (SPEC section 3 step 3, --instances).
  const chosen = eligible.slice(0, cap).filter((e) => rec.owns(e.tool.name));
  let hangs = 0;
  for (const [i, { tool, typed }] of chosen.entries()) {
    rec.progress({ phase: 'oversized-input', tool: tool.name, toolIndex: i + 1, toolCount: chosen.length });
    const compiled = compileSchema(tool.inputSchema);
    const base = config.probes.find((p) => p.tool === tool.name && p.expect === 'ok')?.arguments ?? validArgs(tool) ?? {};
    const readOnly = tool.annotations?.readOnlyHint === true;
    if (unprotected && !readOnly) {
      run.guarded.push({ tool: tool.name, why: mayWriteUnprotected(unprotected) });
      continue;
    }
    const mayCallValid = readOnly && !unprotected;
    const declared = typed.map((p) => p.name);
    const entry = { tool: tool.name, targets: {} as Record<string, string> };
    run.tools.push(entry);
    for (const [k, p] of PROBES.entries()) {
      const target = typed.find((t) => t.types.includes(p.fits)) ?? typed[0]!;
      const args = { ...base };
      Object.defineProperty(args, target.name, { value: p.build(target), enumerable: true, writable: true, configurable: true });
      const invalidBecause = compiled.ok ? compiled.validate(args) : [];
      if (invalidBecause.length === 0 && !mayCallValid) {
        const why = readOnly && unprotected ? `the schema admits it, and ${claimNotEnough(unprotected)}` : `the schema admits it and ${tool.name} may write: sent only to a read-only tool`;
        run.notSent.push({ tool: tool.name, probe: p.probe, why });
        continue;
      }
      entry.targets[p.probe] = target.name;
      const call = await rec.toolCall(p.probe, tool.name, args, hangMs, declared, {
        target: target.name,
        invalidBecause: invalidBecause.length > 0 ? invalidBecause.slice(0, 3) : undefined,
      });
      const cls = call.classification?.class;
      const rest = [`${tool.name} (${PROBES.slice(k + 1).map((x) => x.probe).join(', ') || 'liveness'})`, ...chosen.slice(i + 1).map((e) => e.tool.name)];
      if (!(await rec.revive())) {
        run.stopped = { reason: 'server-gone', notReached: rest };
        return run;
      }
      if (cls === 'hang' && ++hangs >= MAX_HANGS) {
        run.stopped = { reason: 'three-hangs', notReached: rest };
        return run;
      }
      // A server still at work on the value it got no answer for would make the next probe wait
      // behind it and be blamed for its time, more so the more the machine is loaded: it is started
      // again. One not at work goes on once it answers a tools/list.
      const settled = cls === 'hang' ? await rec.restartIfAtWork(call, `still at work on the ${p.probe} call to ${tool.name}`) : 'idle';
      if (settled === 'gone') {
        run.stopped = { reason: 'server-gone', notReached: rest };
        return run;
      }
      if (cls === 'hang' && settled === 'idle' && k < PROBES.length - 1) {
        const { alive, exchange } = await rec.session.alive(hangMs);
        const seq = rec.add('liveness', exchange, { tool: tool.name }).seq;
        if (!alive) {
          run.liveness.push({ tool: tool.name, seq, alive });
          if (!(await rec.restartIfGone())) {
            run.stopped = { reason: 'server-gone', notReached: rest };
            return run;
          }
        }
      }
    }
    const { alive, exchange } = await rec.session.alive(hangMs);
    const seq = rec.add('liveness', exchange, { tool: tool.name }).seq;
    run.liveness.push({ tool: tool.name, seq, alive });
    if (!alive && !(await rec.restartIfGone())) {
      run.stopped = { reason: 'server-gone', notReached: chosen.slice(i + 1).map((e) => e.tool.name) };
      return run;
    }
  }
  return run;
}
