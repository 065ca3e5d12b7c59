/**
 * Several sandboxed instances of one server (SPEC section 3 step 3): how the listed tools are shared
 * out among them, and how the runs each instance's gatherers left are put back into the one run per
 * gatherer the checks read, in listing order.
 *
 * A server with many tools is audited as several instances, each a start of its own in a sandbox
 * of its own, from the same state (the user's files under a fresh overlay), calling only its
 * share of the tools. How many instances there are depends on the tool count alone; `--instances`
 * says how many run at once (1: one after another). So an audit's answers never depend on how
 * many ran side by side: each instance sees the calls of its own tools, in the same order.
 * The lists a gatherer computes from the whole listing (tools beyond `max_tools`, tools that cannot
 * be called) are the same in every instance and are taken from the first.
 */
import type { ListedTool, ProbeCall } from '../types.js';
import { MAX_LIMIT_PROPERTIES, limitValues, safeLimitProperties } from './limits.js';
import { planSafely } from './robust-input.js';
import type { DesignRun } from './design.js';
import type { EffectsRun } from './effects.js';
import type { LimitsRun } from './limits.js';
import type { OversizedRun } from './oversized.js';
import type { RobustRun } from './robust-input.js';
import type { StrictRun } from './strict-arguments.js';

/** Tools per instance: a server with fewer than twice this many runs on one instance. */
export const TOOLS_PER_INSTANCE = 6;
/** Most instances a server's tools are shared among. */
export const MAX_INSTANCES_PER_SERVER = 4;

/**
 * How many instances a server's tools are shared among (SPEC section 3 step 3): one per
 * {@link TOOLS_PER_INSTANCE} tools, at most {@link MAX_INSTANCES_PER_SERVER}, and at least 1.
 * It depends on the tool count alone, never on the machine or on `--instances` (which only says
 * how many run at once), so that an audit gives the same answers wherever it runs.
 */
export function instanceCount(toolCount: number): number {
  return Math.max(1, Math.min(Math.floor(toolCount / TOOLS_PER_INSTANCE), MAX_INSTANCES_PER_SERVER));
}

/** What a line that is not JSON weighs, in calls: it waits the dropped-line grace, most calls take a few ms. */
const NOT_JSON_CALLS = 10;
/**
 * What the calls of a tool that may write weigh, in calls: its default, filler and control calls
 * and the design pack's repeats each wait for the sandbox to be quiet for the late window first
 * (watch.ts), about half a second each.
 */
const WRITER_CALLS = 50;

/**
 * About how many calls (of a few ms each) the gatherers make to `tool`: robust-input's plan and
 * its liveness check, the limits pack's values for its first limit properties (a line that is not
 * JSON weighs {@link NOT_JSON_CALLS}), a few for the effects, oversized-input and design probes,
 * and {@link WRITER_CALLS} for the waits before the effect calls of a tool that may write. A weight for sharing the tools out evenly, from the listing alone.
 */
export function estimatedCalls(tool: ListedTool): number {
  let n = 1 + planSafely(tool).plan.length + 6 + (tool.annotations?.readOnlyHint === true ? 0 : WRITER_CALLS);
  try {
    for (const lp of safeLimitProperties(tool).slice(0, MAX_LIMIT_PROPERTIES)) for (const v of limitValues(lp)) n += v.notJson ? NOT_JSON_CALLS : 1;
  } catch {
    /* a schema sealmark cannot read gets no limits probes */
  }
  return n;
}

/**
 * Which instance (0 … n−1) calls each tool: the listing cut into `n` runs of neighbouring tools,
 * since neighbours in a listing are often the tools that work on the same things
 * (create_entities beside create_relations, git_set_working_dir beside git_stash), each run about
 * as many calls as the others ({@link estimatedCalls}). A tool goes to the run its middle falls in. Returns tool name → instance,
 * numbered without gaps: there may be fewer than `n` when one tool outweighs a run.
 */
export function shareTools(tools: readonly ListedTool[], n: number): Map<string, number> {
  const k = Math.max(1, Math.min(n, tools.length));
  const weights = tools.map(estimatedCalls);
  const total = weights.reduce((a, b) => a + b, 0);
  const out = new Map<string, number>();
  let before = 0;
  for (const [i, t] of tools.entries()) {
    const middle = before + weights[i]! / 2;
    out.set(t.name, Math.min(k - 1, Math.floor((k * middle) / total)));
    before += weights[i]!;
  }
  // Numbered 0, 1, … without gaps (a run no tool fell in is no instance).
  const dense = new Map([...new Set(out.values())].map((v, i) => [v, i]));
  for (const [name, v] of out) out.set(name, dense.get(v)!);
  return out;
}

/**
 * How many instances run at once when `--instances` is not given: twice the cores (`cores`,
 * os.availableParallelism()), since an instance spends most of its time waiting, and one for the
 * first instance, which waits out the whole-server probes' hang limits.
 */
export function defaultConcurrency(cores: number): number {
  return 2 * Math.max(1, cores) + 1;
}

/** Sorts `xs` by the listing position of the tool `name(x)` names (stable: a tool's entries keep their order). */
function inListingOrder<T>(xs: T[], name: (x: T) => string, order: Map<string, number>): T[] {
  const at = (x: T) => order.get(name(x)) ?? Number.MAX_SAFE_INTEGER;
  return xs.map((x, i) => ({ x, i })).sort((a, b) => at(a.x) - at(b.x) || a.i - b.i).map((e) => e.x);
}

type Stopped<R extends string> = { reason: R; notReached: string[] } | undefined;

/**
 * One `stopped` of several: the first instance's reason that stopped (three hangs count before a
 * server gone, as they stop the whole audit), with every instance's tools not reached, in listing
 * order. The tool names in notReached may carry the probes not sent (`name (probe, …)`).
 */
function mergeStopped<R extends string>(all: Stopped<R>[], order: Map<string, number>): Stopped<R> {
  const stopped = all.filter((s): s is NonNullable<Stopped<R>> => s !== undefined);
  if (stopped.length === 0) return undefined;
  const first = stopped.find((s) => s.reason === 'three-hangs') ?? stopped[0]!;
  const toolOf = (n: string) => n.replace(/ \(.*\)$/, '');
  return { reason: first.reason, notReached: inListingOrder(stopped.flatMap((s) => s.notReached), toolOf, order) };
}

/** Tool name → listing position. */
export function listingOrder(tools: readonly ListedTool[]): Map<string, number> {
  return new Map(tools.map((t, i) => [t.name, i]));
}

/** robust-input's runs of every instance as one. */
export function mergeRobust(runs: RobustRun[], order: Map<string, number>): RobustRun {
  const stopped = mergeStopped(runs.map((r) => r.stopped), order);
  return {
    tools: inListingOrder(runs.flatMap((r) => r.tools), (t) => t.tool, order),
    beyondMaxTools: runs[0]!.beyondMaxTools,
    ...(stopped ? { stopped } : {}),
    liveness: runs.flatMap((r) => r.liveness).sort((a, b) => a - b),
  };
}

/** strict-arguments' runs of every instance as one. */
export function mergeStrict(runs: StrictRun[], order: Map<string, number>): StrictRun {
  const stopped = mergeStopped(runs.map((r) => r.stopped), order);
  return { tools: inListingOrder(runs.flatMap((r) => r.tools), (t) => t.tool, order), beyondMaxTools: runs[0]!.beyondMaxTools, ...(stopped ? { stopped } : {}) };
}

/** The effects pack's runs of every instance as one (`stopped`: the first instance's that stopped). */
export function mergeEffects(runs: EffectsRun[], order: Map<string, number>): EffectsRun {
  const stopped = runs.find((r) => r.stopped !== undefined)?.stopped;
  const first = runs[0]!;
  return {
    ran: first.ran,
    ...(first.why !== undefined ? { why: first.why } : {}),
    defaultCalled: inListingOrder(runs.flatMap((r) => r.defaultCalled), (t) => t, order),
    fillerCalled: inListingOrder(runs.flatMap((r) => r.fillerCalled), (t) => t, order),
    controls: inListingOrder(runs.flatMap((r) => r.controls), (c) => c.tool, order),
    all: first.all,
    ...(stopped !== undefined ? { stopped } : {}),
  };
}

/** The limits pack's runs of every instance as one. */
export function mergeLimits(runs: LimitsRun[], order: Map<string, number>): LimitsRun {
  const stopped = mergeStopped(runs.map((r) => r.stopped), order);
  return {
    params: inListingOrder(runs.flatMap((r) => r.params), (p) => p.tool, order),
    beyondMaxTools: runs[0]!.beyondMaxTools,
    beyondMaxProperties: inListingOrder(runs.flatMap((r) => r.beyondMaxProperties), (p) => p.tool, order),
    ...(stopped ? { stopped } : {}),
    effectsWatched: runs.some((r) => r.effectsWatched),
  };
}

/** oversized-input's runs of every instance as one. */
export function mergeOversized(runs: OversizedRun[], order: Map<string, number>): OversizedRun {
  const stopped = mergeStopped(runs.map((r) => r.stopped), order);
  return {
    tools: inListingOrder(runs.flatMap((r) => r.tools), (t) => t.tool, order),
    skipped: runs[0]!.skipped,
    guarded: inListingOrder(runs.flatMap((r) => r.guarded), (g) => g.tool, order),
    beyondMaxTools: runs[0]!.beyondMaxTools,
    notSent: inListingOrder(runs.flatMap((r) => r.notSent), (n) => n.tool, order),
    ...(stopped ? { stopped } : {}),
    liveness: inListingOrder(runs.flatMap((r) => r.liveness), (l) => l.tool, order),
  };
}

/** The design pack's runs of every instance as one. */
export function mergeDesign(runs: DesignRun[], order: Map<string, number>): DesignRun {
  const first = runs[0]!;
  return {
    ran: first.ran,
    ...(first.why !== undefined ? { why: first.why } : {}),
    repeats: inListingOrder(runs.flatMap((r) => r.repeats), (r) => r.tool, order),
    notRepeated: inListingOrder(runs.flatMap((r) => r.notRepeated), (t) => t, order),
    madeUp: inListingOrder(runs.flatMap((r) => r.madeUp), (m) => m.tool, order),
    beyondMaxTools: first.beyondMaxTools,
  };
}


/**
 * The order of the audit's phases with one instance (SPEC section 3 step 3): the gatherer
 * progress phases ({@link ProbeCall.gatherer}) in the order the gatherers run. The design pack's two
 * phases alternate tool by tool, so they share a rank.
 */
const PHASE_RANK: Record<string, number> = {
  starting: 0,
  'tools/list': 0,
  'robust-input': 1,
  probes: 2,
  'strict-arguments': 3,
  effects: 4,
  'protocol-errors': 5,
  limits: 6,
  concurrency: 7,
  'oversized-input': 8,
  'two-step-writes': 9,
  'idempotency-key': 9,
};

/**
 * Puts the calls of several instances in the order one instance makes them, and numbers them
 * 1, 2, … in that order: by phase, then by the listing position of the call's tool (calls of no
 * listed tool, such as the protocol probes, first in their phase), then by instance, then in the
 * order they were made; so however many ran at once, the calls read in the same order. Sorts `calls` in place, sets each call's `seq`, and returns old seq → new seq, for the
 * seqs the runs, restarts and exits hold.
 */
export function renumberCalls(calls: ProbeCall[], order: Map<string, number>): Map<number, number> {
  const rank = (c: ProbeCall) => PHASE_RANK[c.gatherer ?? 'starting'] ?? 10;
  // The user's probes run in the order of their entries, whatever the tool.
  const at = (c: ProbeCall) => (c.gatherer === 'probes' ? (c.probeIndex ?? -1) : c.tool !== undefined ? (order.get(c.tool) ?? -1) : -1);
  calls.sort((a, b) => rank(a) - rank(b) || at(a) - at(b) || (a.instance ?? 0) - (b.instance ?? 0) || a.seq - b.seq);
  const renum = new Map<number, number>();
  calls.forEach((c, i) => {
    renum.set(c.seq, i + 1);
    c.seq = i + 1;
  });
  return renum;
}
