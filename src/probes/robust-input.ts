/**
 * The robust-input gatherer: sends schema-invalid arguments to each tool, the way a model that
 * guesses does, and records every call (seed "Survives malformed tool input"; SPEC section 5).
 *
 * Each probe's arguments are re-validated with Ajv against the tool's own inputSchema before they
 * are sent; a value the schema would accept is never sent, so a server is never called lenient for
 * accepting valid input (STYLE, the Schemathesis lesson).
 */
import { compileSchema, propertiesOf, requiredOf, type PropertyInfo } from '../schema.js';
import {
  OBJECT_FOR_STRING,
  UNEXPECTED_KEY,
  UNEXPECTED_VALUE,
  sampleValid,
  wrongTypeFor,
} from '../values.js';
import type { ResolvedConfig } from '../config/schema.js';
import type { ListedTool } from '../types.js';
import type { Recorder } from './recorder.js';
import { uncallable } from './callable.js';
import { countItems } from '../limits.js';
import type { Sandbox } from '../target/sandbox.js';
import { claimNotEnough, mayWriteUnprotected, watched } from './watch.js';

/** Per-tool bookkeeping of the robust-input gatherer. */
export interface RobustToolRun {
  tool: string;
  /** Probes sent to this tool, by probe id. */
  probes: string[];
  /** Why the tool got no invalid call (no typed properties, untyped only …). */
  skipped?: string;
  /** Tool has no arguments and no `readOnlyHint: true`: needs a `probes:` entry. */
  needsProbe?: boolean;
}

/** What the robust-input gatherer recorded beyond its calls. */
export interface RobustRun {
  tools: RobustToolRun[];
  /** Tools beyond `max_tools`, not probed. */
  beyondMaxTools: string[];
  /** Set when probing stopped early (three hangs, server gone). */
  stopped?: { reason: 'three-hangs' | 'server-gone'; notReached: string[] };
  /** Call seqs of robust-input's own liveness tools/list requests. */
  liveness: number[];
}


/** One planned invalid call. `args` undefined = the `arguments` member is omitted. */
interface PlannedProbe {
  probe: string;
  args: unknown;
  /** What the probe breaks: a property name, or `(root)`. */
  target: string;
}

/** Hangs after which probing stops (SPEC section 3, step 3). */
export const MAX_HANGS = 3;

/** The hang limit in ms: `checks.robust-input.hang_ms`, else max(2000, timeout_probe_sec × 1000). */
export function hangLimitMs(config: ResolvedConfig): number {
  const own = config.checks['robust-input']?.hang_ms;
  if (typeof own === 'number') return own;
  return Math.max(2000, config.timeout_probe_sec * 1000);
}

/** Most tools probed: `checks.robust-input.max_tools` (25 by default). */
export function maxTools(config: ResolvedConfig): number {
  const own = config.checks['robust-input']?.max_tools;
  return typeof own === 'number' ? own : 25;
}

/**
 * Plans the invalid calls for one tool, in the seed's order, each proven invalid by Ajv.
 * Returns the plan and, for a tool that gets none, why.
 */
export function planProbes(tool: ListedTool): { plan: (PlannedProbe & { invalidBecause: string[] })[]; skipped?: string; needsProbe?: boolean; readOnlyNoArgs?: boolean } {
  const compiled = compileSchema(tool.inputSchema);
  const props = propertiesOf(tool.inputSchema);
  if (!compiled.ok) return { plan: [], skipped: `inputSchema does not compile: ${compiled.error}` };
  const cannot = uncallable(tool);
  if (cannot) return { plan: [], skipped: cannot };
  if (props.length === 0) {
    if (tool.annotations?.readOnlyHint === true) return { plan: [], readOnlyNoArgs: true };
    return { plan: [], skipped: 'no arguments and not declared readOnlyHint: true', needsProbe: true };
  }
  const typed = props.filter((p) => p.types.length > 0);
  const required = requiredOf(tool.inputSchema);
  const wrong = assign(typed, wrongTypeFor);
  const nulls = assign(typed.filter((p) => !p.types.includes('null')), () => null);
  const strings = typed.filter((p) => p.types.includes('string') && !p.types.includes('object'));
  const nestedArrays = props.filter((p) => p.required && p.itemObject);
  const candidates: PlannedProbe[] = [];
  if (required.length > 0) candidates.push({ probe: 'missing-required', args: {}, target: required.join(',') });
  if (Object.keys(wrong).length > 0) candidates.push({ probe: 'wrong-types', args: wrong, target: Object.keys(wrong).join(',') });
  if (Object.keys(nulls).length > 0) candidates.push({ probe: 'nulls', args: nulls, target: Object.keys(nulls).join(',') });
  if (Object.keys(wrong).length > 0) {
    candidates.push({ probe: 'extra-argument', args: { ...wrong, [UNEXPECTED_KEY]: UNEXPECTED_VALUE }, target: `${Object.keys(wrong).join(',')},${UNEXPECTED_KEY}` });
  }
  if (strings.length > 0) {
    candidates.push({ probe: 'string-as-object', args: assign(strings, () => OBJECT_FOR_STRING), target: strings.map((p) => p.name).join(',') });
  }
  const valid = validArgs(tool);
  if (nestedArrays.length > 0) {
    candidates.push({
      probe: 'nested-string',
      args: { ...(valid ?? {}), ...assign(nestedArrays, () => 'not-a-valid-value') },
      target: nestedArrays.map((p) => p.name).join(','),
    });
    const withItemRequired = nestedArrays.filter((p) => requiredOf(p.itemObject).length > 0);
    if (withItemRequired.length > 0) {
      const args: Record<string, unknown> = { ...(valid ?? {}) };
      for (const p of withItemRequired) {
        const item = sampleValid(p.itemObject) as Record<string, unknown>;
        delete item[requiredOf(p.itemObject)[0]!];
        Object.defineProperty(args, p.name, { value: [item], enumerable: true, writable: true, configurable: true });
      }
      candidates.push({ probe: 'nested-item', args, target: withItemRequired.map((p) => `${p.name}[0]`).join(',') });
    }
  }
  const plan = candidates
    .map((c) => ({ ...c, invalidBecause: compiled.validate(c.args === undefined ? {} : c.args) }))
    .filter((c) => c.invalidBecause.length > 0);
  if (plan.length === 0) {
    const untypedOnly = typed.length === 0;
    return {
      plan,
      skipped: untypedOnly ? 'only untyped properties (any value might be valid)' : 'no invalid value could be built',
      needsProbe: true,
    };
  }
  return { plan };
}

/**
 * {@link planProbes}, never throwing: a schema sealmark cannot read (or a tool it cannot call) is
 * a skipped tool with the reason, never a lost run.
 */
export function planSafely(tool: ListedTool): ReturnType<typeof planProbes> {
  const cannot = uncallable(tool);
  if (cannot) return { plan: [], skipped: cannot };
  try {
    return planProbes(tool);
  } catch (err) {
    return { plan: [], skipped: `sealmark could not read its inputSchema (${err instanceof Error ? err.message : String(err)})` };
  }
}

/** Valid arguments for the tool (required properties sampled), if Ajv accepts them. */
export function validArgs(tool: ListedTool): Record<string, unknown> | undefined {
  const compiled = compileSchema(tool.inputSchema);
  if (!compiled.ok) return undefined;
  const v = sampleValid({ ...(tool.inputSchema as object), type: 'object' });
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  return compiled.validate(v).length === 0 ? (v as Record<string, unknown>) : undefined;
}

function assign(props: PropertyInfo[], value: (p: PropertyInfo) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of props) {
    const v = value(p);
    // defineProperty, not assignment: a property named `__proto__` must become a key of its own.
    if (v !== undefined) Object.defineProperty(out, p.name, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * Runs robust-input over the listed tools: the planned invalid calls, a liveness `tools/list`
 * after each tool's last probe and after any protocol error, the read-only no-argument valid call,
 * then the user's `probes:` entries. The valid calls are watched for effects when `sandbox` is given. Stops after {@link MAX_HANGS} hangs or when the server is gone.
 * `unprotected` (probes/watch.ts unprotectedFiles): why the user's files are not protected here;
 * then the read-only no-argument call is not sent, nor any invalid input to a tool that may write,
 * and those tools are listed as not probed (the user's `probes:` entries are still sent).
 */
export async function gatherRobustInput(rec: Recorder, tools: ListedTool[], config: ResolvedConfig, sandbox?: Sandbox, unprotected?: string): Promise<RobustRun> {
  const hangMs = hangLimitMs(config);
  const skip = new Set(config.skip_tools);
  const eligible = tools.filter((t) => !skip.has(t.name));
  const limit = maxTools(config);
  // Another instance calls the tools this one does not own (SPEC section 3 step 3, --instances).
  const chosen = eligible.slice(0, limit).filter((t) => rec.owns(t.name));
  const run: RobustRun = { tools: [], beyondMaxTools: eligible.slice(limit).map((t) => t.name), liveness: [] };
  const userProbeTools = new Set(config.probes.map((p) => p.tool));
  let hangs = 0;

  /** Stops probing; `rest` = probes of the current tool not sent (named with the tool). */
  const stop = (reason: 'three-hangs' | 'server-gone', from: number, current?: string, rest: string[] = []) => {
    const partly = current && rest.length > 0 ? [`${current} (${rest.join(', ')})`] : [];
    run.stopped = { reason, notReached: [...partly, ...chosen.slice(from).map((t) => t.name)] };
  };
  const liveness = async (tool: string) => {
    const { alive, exchange } = await rec.session.alive(hangMs);
    run.liveness.push(rec.add('liveness', exchange, { tool }).seq);
    return alive;
  };

  toolLoop: for (let i = 0; i < chosen.length; i++) {
    const tool = chosen[i]!;
    rec.progress({ phase: 'robust-input', tool: tool.name, toolIndex: i + 1, toolCount: chosen.length });
    const planned = planSafely(tool);
    const entry: RobustToolRun = { tool: tool.name, probes: [] };
    run.tools.push(entry);
    if (planned.skipped) entry.skipped = planned.skipped;
    // Where the user's files are unprotected: no call on a read-only claim alone, no invalid input to a tool that may write.
    const guarded = unprotected !== undefined && tool.annotations?.readOnlyHint !== true && !planned.skipped;
    if (planned.readOnlyNoArgs && unprotected) entry.skipped = `its only call would be the valid read-only-no-args, not sent: ${claimNotEnough(unprotected)}`;
    if (guarded && planned.plan.length > 0) {
      // The user's own entries are sent all the same, and what they write is real: say so beside the skip.
      const own = userProbeTools.has(tool.name) ? '; its probes: entries were sent as written, and what they wrote was real' : '';
      entry.skipped = `${mayWriteUnprotected(unprotected)}${own}`;
    }
    if (planned.needsProbe && !userProbeTools.has(tool.name)) entry.needsProbe = true;
    const declared = propertiesOf(tool.inputSchema).map((p) => p.name);
    const calls = (planned.readOnlyNoArgs || guarded) && unprotected ? [] : planned.readOnlyNoArgs ? [{ probe: 'read-only-no-args', args: {}, target: '', invalidBecause: [] as string[] }] : planned.plan;
    for (const [k, p] of calls.entries()) {
      const rest = () => calls.slice(k + 1).map((x) => x.probe);
      const send = () =>
        rec.toolCall(p.probe, tool.name, p.args, hangMs, declared, {
          target: p.target || undefined,
          invalidBecause: p.invalidBecause.length > 0 ? p.invalidBecause : undefined,
        });
      // Every call is watched in the sandbox: what an accepted invalid call set off is its evidence
      // (case C7), and what a read-only tool does is its annotations' test. Only the valid call
      // waits the grace period; an invalid one is read at once.
      const call = await watched(sandbox, send, { judged: p.probe === 'read-only-no-args', tool: tool.name });
      entry.probes.push(p.probe);
      const cls = call.classification?.class;
      // The exit is this probe's finding; the server is started again for the rest (SPEC section 3
      // step 3), so that crashing never spares a server the probes after it.
      if (!(await rec.revive())) {
        stop('server-gone', i + 1, tool.name, rest());
        break toolLoop;
      }
      if (cls === 'hang' && ++hangs >= MAX_HANGS) {
        stop('three-hangs', i + 1, tool.name, rest());
        break toolLoop;
      }
      if (cls === 'protocol-error' && !(await liveness(tool.name)) && !(await rec.restartIfGone())) {
        stop('server-gone', i + 1, tool.name, rest());
        break toolLoop;
      }
    }
    if (calls.length > 0 && !(await liveness(tool.name)) && !(await rec.restartIfGone())) {
      stop('server-gone', i + 1);
      break;
    }
  }

  if (!run.stopped) {
    for (const [k, up] of config.probes.entries()) {
      // The user's probes are one sequence (a write, then the read of it): all of them go to the
      // first instance, in order, whatever their tools (SPEC section 3 step 3, --instances).
      if (skip.has(up.tool) || rec.instance !== 0) continue;
      const tool = tools.find((t) => t.name === up.tool);
      const declared = tool ? propertiesOf(tool.inputSchema).map((p) => p.name) : [];
      rec.progress({ phase: 'probes', tool: up.tool });
      const call = await watched(sandbox, () => rec.toolCall('user-probe', up.tool, up.arguments, hangMs, declared, { probeIndex: k }), { tool: up.tool });
      const reply = call.exchange.reply;
      // What a valid call returned, beside which the limits probes' item counts are read.
      if (call.classification?.class === 'accepted' && reply.kind === 'response') call.items = countItems(reply.result);
      if (!(await rec.revive())) {
        run.stopped = { reason: 'server-gone', notReached: [] };
        break;
      }
    }
  }
  return run;
}
