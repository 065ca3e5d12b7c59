/**
 * The effects gatherer (SPEC section 5, pack effects): calls tools the way things without judgment
 * do, one call at a time inside the sandbox, and attributes every effect the sandbox saw to the
 * call in flight. `default-call`: `{}` to each tool that needs no argument (every tool with
 * `--all`); `filler-call`: what a deterministic filler sends to each tool with a flagged property.
 */
import type { ResolvedConfig } from '../config/schema.js';
import { fillerArgs, flaggedProperties } from '../flags.js';
import { propertiesOf, requiredOf } from '../schema.js';
import type { Sandbox } from '../target/sandbox.js';
import type { ListedTool } from '../types.js';
import type { Recorder } from './recorder.js';
import { uncallable } from './callable.js';
import { hangLimitMs } from './robust-input.js';
import { watched } from './watch.js';

export { EFFECT_GRACE_MS } from './watch.js';

/** What the effects gatherer did, beside its calls. */
export interface EffectsRun {
  /** false when no sandbox ran and --allow-effects was not given: nothing was called. */
  ran: boolean;
  /** Why not, when `ran` is false. */
  why?: string;
  /** Tools given a `{}` call, and tools given a filler call. */
  defaultCalled: string[];
  fillerCalled: string[];
  /** `--all`: every tool got a `{}` call. */
  all: boolean;
  /** Set when the server went away during the calls. */
  stopped?: string;
}

/** Options of {@link gatherEffects}. */
export interface EffectsOptions {
  sandbox: Sandbox | undefined;
  /** `--all`: `{}` to every tool, not only those with no required argument. */
  all: boolean;
  /** `--allow-effects`: call tools with filler and default arguments even without the sandbox. */
  allowEffects: boolean;
}

/**
 * Runs the default and filler calls. Without a sandbox (and without `allowEffects`) nothing is
 * called: sealmark does not fire a server's real side effects on the user's machine.
 */
export async function gatherEffects(rec: Recorder, tools: ListedTool[], config: ResolvedConfig, opts: EffectsOptions): Promise<EffectsRun> {
  const run: EffectsRun = { ran: false, defaultCalled: [], fillerCalled: [], all: opts.all };
  if (!opts.sandbox && !opts.allowEffects) {
    run.why = `${rec.session.remote ? 'a server reached by URL runs outside any sandbox' : 'no sandbox (--no-sandbox)'} and no --allow-effects: tools were not called with default or filler arguments`;
    return run;
  }
  run.ran = true;
  const hangMs = hangLimitMs(config);
  const skip = new Set(config.skip_tools);
  for (const [i, tool] of tools.entries()) {
    if (skip.has(tool.name) || uncallable(tool)) continue;
    const flagged = flaggedProperties(tool).length > 0;
    const defaultCallable = opts.all || requiredOf(tool.inputSchema).length === 0;
    if (!flagged && !defaultCallable) continue;
    rec.progress({ phase: 'effects', tool: tool.name, toolIndex: i + 1, toolCount: tools.length });
    const declared = propertiesOf(tool.inputSchema).map((p) => p.name);
    const calls: { probe: string; args: Record<string, unknown> }[] = [{ probe: 'default-call', args: {} }];
    if (flagged) {
      const filled = fillerArgs(tool);
      if (Object.keys(filled).length > 0) calls.push({ probe: 'filler-call', args: filled });
    }
    for (const c of calls) {
      // Without the sandbox (--allow-effects) only what the reply itself reports can be seen.
      await watched(opts.sandbox, () => rec.toolCall(c.probe, tool.name, c.args, hangMs, declared), { always: true });
      (c.probe === 'default-call' ? run.defaultCalled : run.fillerCalled).push(tool.name);
      // A server that exited is started again for the rest (SPEC section 3 step 3).
      if (!(await rec.revive())) {
        run.stopped = `the server exited on the ${c.probe} of ${tool.name} and could not be started again`;
        return run;
      }
    }
  }
  return run;
}
