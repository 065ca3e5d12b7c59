/**
 * The effects gatherer (SPEC section 5, pack effects): calls tools the way things without judgment
 * do, one call at a time inside the sandbox, and attributes every effect the sandbox saw to the
 * call in flight. `default-call`: `{}` to each tool that needs no argument (every tool with
 * `--all`); `filler-call`: what a deterministic filler sends to each tool with a flagged property;
 * `filler-control`: the filler's arguments without the flagged properties, when the `{}` call
 * was refused and so cannot tell what the flagged properties added.
 */
import type { ResolvedConfig } from '../config/schema.js';
import { fillerArgs, flaggedProperties, sideEffectVerb } from '../flags.js';
import { propertiesOf, requiredOf } from '../schema.js';
import type { Sandbox } from '../target/sandbox.js';
import type { ListedTool, ProbeCall } from '../types.js';
import type { Recorder } from './recorder.js';
import { uncallable } from './callable.js';
import { hangLimitMs } from './robust-input.js';
import { pastRateLimit, watched, writesReachYourFiles } from './watch.js';


/** What the effects gatherer did, beside its calls. */
export interface EffectsRun {
  /** false when writes would have reached the user's files (no sandbox, or no copy-on-write filesystem) and --allow-effects was not given: nothing was called. */
  ran: boolean;
  /** Why not, when `ran` is false. */
  why?: string;
  /** Tools given a `{}` call, and tools given a filler call. */
  defaultCalled: string[];
  fillerCalled: string[];
  /** The control of each tool whose filler call needed one (see {@link needsControl}). */
  controls: FillerControl[];
  /** `--all`: every tool got a `{}` call. */
  all: boolean;
  /** Set when the server went away during the calls. */
  stopped?: string;
}

/**
 * The control of a filler call whose `{}` call was refused: the `filler-control` call, or why
 * there is none (SPEC section 5: filler-call-effects blames only what the filler arguments added).
 */
export interface FillerControl {
  tool: string;
  /** The control's arguments equal the filler's (every flagged property is required and no switch): the filler call is its own control. */
  same?: boolean;
  /** Why no control could be built (a required switch with no value that leaves it unarmed). */
  why?: string;
}

/** Reply classes of a call the tool ran (an answer, or a fetch it failed after using the arguments). */
const RAN: ReadonlySet<string> = new Set(['accepted', 'lenient-downstream']);

/**
 * Whether a filler call needs a control besides the `{}` call of its tool: it had an effect, and
 * the `{}` call was not run by the tool (refused by validation, a crash, no answer), so `{}` says
 * nothing about what a valid call without the flagged properties does. Shared by the gatherer
 * (which makes the `filler-control` call) and filler-call-effects (which judges with it).
 */
export function needsControl(defaultCall: ProbeCall | undefined, fillerCall: ProbeCall): boolean {
  if ((fillerCall.effects?.length ?? 0) === 0) return false;
  return !defaultCall || !RAN.has(defaultCall.classification?.class ?? '');
}

/**
 * The control arguments of a filler call: `filled` (from {@link fillerArgs}) with every optional
 * flagged property left out and every required flagged switch set to a value that leaves it
 * unarmed (a boolean flipped, an enum's first value that is no side-effect verb); the other
 * properties, required ones included, stay as the filler filled them. `why` when a required
 * switch has no such value.
 */
export function controlArgs(tool: ListedTool, filled: Record<string, unknown>): { args: Record<string, unknown> } | { why: string } {
  const flagged = new Map(flaggedProperties(tool).map((f) => [f.property, f]));
  const props = new Map(propertiesOf(tool.inputSchema).map((p) => [p.name, p]));
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(filled)) {
    const f = flagged.get(name);
    const p = props.get(name);
    let v: unknown = value;
    if (f && p) {
      if (!p.required) continue;
      if (f.isSwitch && typeof value === 'boolean') v = !value;
      else if (f.reasons.some((r) => r.kind === 'side-effect-enum')) {
        const cold = (p.enum ?? []).find((e) => typeof e !== 'string' || sideEffectVerb(e) === undefined);
        if (cold === undefined) return { why: `${name} is required and every value of its enum is a side-effect verb, so no call leaves it unarmed` };
        v = cold;
      }
    }
    Object.defineProperty(out, name, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return { args: out };
}

/** Options of {@link gatherEffects}. */
export interface EffectsOptions {
  sandbox: Sandbox | undefined;
  /** `--all`: `{}` to every tool, not only those with no required argument. */
  all: boolean;
  /** `--allow-effects`: call tools with filler and default arguments even without the sandbox or its copy-on-write filesystem. */
  allowEffects: boolean;
}

/**
 * Runs the default and filler calls. Without a sandbox (and without `allowEffects`) nothing is
 * called: sealmark does not fire a server's real side effects on the user's machine.
 */
export async function gatherEffects(rec: Recorder, tools: ListedTool[], config: ResolvedConfig, opts: EffectsOptions): Promise<EffectsRun> {
  const run: EffectsRun = { ran: false, defaultCalled: [], fillerCalled: [], controls: [], all: opts.all };
  const uncontained = writesReachYourFiles(opts.sandbox, rec.session.remote);
  if (uncontained && !opts.allowEffects) {
    run.why = `${uncontained} and no --allow-effects: tools were not called with default or filler arguments`;
    return run;
  }
  run.ran = true;
  const hangMs = hangLimitMs(config);
  const skip = new Set(config.skip_tools);
  for (const [i, tool] of tools.entries()) {
    if (skip.has(tool.name) || !rec.owns(tool.name) || uncallable(tool)) continue;
    const flagged = flaggedProperties(tool).length > 0;
    const defaultCallable = opts.all || requiredOf(tool.inputSchema).length === 0;
    if (!flagged && !defaultCallable) continue;
    rec.progress({ phase: 'effects', tool: tool.name, toolIndex: i + 1, toolCount: tools.length });
    const declared = propertiesOf(tool.inputSchema).map((p) => p.name);
    const filled = flagged ? fillerArgs(tool) : {};
    const calls: { probe: string; args: Record<string, unknown> }[] = [{ probe: 'default-call', args: {} }];
    if (Object.keys(filled).length > 0) calls.push({ probe: 'filler-call', args: filled });
    const made: ProbeCall[] = [];
    for (const c of calls) {
      made.push(await watch(rec, opts, tool.name, c.probe, c.args, hangMs, declared));
      (c.probe === 'default-call' ? run.defaultCalled : run.fillerCalled).push(tool.name);
      // A server that exited is started again for the rest (SPEC section 3 step 3).
      if (!(await rec.revive())) {
        run.stopped = `the server exited on the ${c.probe} of ${tool.name} and could not be started again`;
        return run;
      }
    }
    // After the filler call, not before: its effects are then those of a first valid call, as an
    // argument filler's would be (a control made first would have created the files it changes).
    const [dflt, filler] = made;
    if (!filler || !needsControl(dflt, filler)) continue;
    const control = controlArgs(tool, filled);
    if ('why' in control) {
      run.controls.push({ tool: tool.name, why: control.why });
      continue;
    }
    if (JSON.stringify(control.args) === JSON.stringify(filled)) {
      run.controls.push({ tool: tool.name, same: true });
      continue;
    }
    await watch(rec, opts, tool.name, 'filler-control', control.args, hangMs, declared);
    run.controls.push({ tool: tool.name });
    if (!(await rec.revive())) {
      run.stopped = `the server exited on the filler-control of ${tool.name} and could not be started again`;
      return run;
    }
  }
  return run;
}

/**
 * One effects call, watched (without the sandbox, with --allow-effects, only what the reply itself
 * reports is seen), made once more when it was refused for a rate limit ({@link pastRateLimit}).
 */
function watch(rec: Recorder, opts: EffectsOptions, tool: string, probe: string, args: Record<string, unknown>, hangMs: number, declared: string[]): Promise<ProbeCall> {
  return pastRateLimit(() => watched(opts.sandbox, () => rec.toolCall(probe, tool, args, hangMs, declared), { always: true, blames: true }));
}
