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
import { flaggedProperties } from '../flags.js';
import { requiredOf } from '../schema.js';
import type { ListedTool, ProbeCall } from '../types.js';
import { DROPPED_LINE_GRACE_MS, MAX_LIMIT_PROPERTIES, limitValues, safeLimitProperties } from './limits.js';
import { planSafely } from './robust-input.js';
import { planStrict } from './strict-arguments.js';
import { EFFECT_QUIET_MS, LATE_WINDOW_MS } from './watch.js';
import type { DesignRun } from './design.js';
import type { EffectsRun } from './effects.js';
import type { LimitsRun } from './limits.js';
import type { OversizedRun } from './oversized.js';
import type { RobustRun } from './robust-input.js';
import type { StrictRun } from './strict-arguments.js';

/** Tools per instance: a server with fewer than twice this many runs on one instance. */
export const TOOLS_PER_INSTANCE = 6;
/** Most instances of one server. */
export const MAX_INSTANCES_PER_SERVER = 5;

/**
 * How many instances of a server there are (SPEC section 3 step 3): one for a server with fewer
 * than 2 × {@link TOOLS_PER_INSTANCE} tools; else one per {@link TOOLS_PER_INSTANCE} tools and one
 * more (the first, which also makes the whole-server probes), at most
 * {@link MAX_INSTANCES_PER_SERVER}. It depends on the tool count alone, never on the machine or on
 * `--instances` (which only says how many run at once), so that an audit gives the same answers
 * wherever it runs.
 */
export function instanceCount(toolCount: number): number {
  const n = Math.floor(toolCount / TOOLS_PER_INSTANCE);
  return n < 2 ? 1 : Math.min(n + 1, MAX_INSTANCES_PER_SERVER);
}

/** ms of a call the server answers at once (a validation error): the round trip and sealmark's own work on it. */
const CALL_MS = 5;
/** Calls of the oversized-input probes and their liveness check, per tool. */
const OVERSIZED_CALLS = 4;

/**
 * About how long an instance spends on `tool`, in ms, from the listing alone: a weight for sharing
 * the tools out evenly, built from the waits each gatherer makes (a call answered at once costs
 * {@link CALL_MS}; the waits are the ones that dominate on real servers, measured on
 * git-mcp-server's transcript):
 *  - robust-input's plan and its liveness check, and the oversized-input probes: a call each;
 *  - strict-arguments' calls: each judged for effects, so each waits {@link EFFECT_QUIET_MS};
 *  - the effects pack's default call (no required argument) and filler call (a flagged property):
 *    each judged, and the first waits out the late window ({@link LATE_WINDOW_MS}) of the call before;
 *  - the limits pack's values: judged unless the tool states it is read-only; a line that is not
 *    JSON also waits {@link DROPPED_LINE_GRACE_MS} for a reply the server may have dropped.
 */
export function estimatedMs(tool: ListedTool): number {
  const judged = EFFECT_QUIET_MS + CALL_MS;
  const readOnly = tool.annotations?.readOnlyHint === true;
  let ms = CALL_MS * (1 + planSafely(tool).plan.length + OVERSIZED_CALLS);
  try {
    ms += planStrict(tool).calls.length * judged;
    const effectCalls = (requiredOf(tool.inputSchema).length === 0 ? 1 : 0) + (flaggedProperties(tool).length > 0 ? 1 : 0);
    if (effectCalls > 0) ms += LATE_WINDOW_MS + effectCalls * judged;
    for (const lp of safeLimitProperties(tool).slice(0, MAX_LIMIT_PROPERTIES)) {
      for (const v of limitValues(lp)) ms += (v.notJson ? DROPPED_LINE_GRACE_MS : 0) + (readOnly ? CALL_MS : judged);
    }
  } catch {
    /* a schema sealmark cannot read gets none of these probes */
  }
  return ms;
}

/**
 * Which instance (0 … n−1) calls each tool: the listing cut into at most `n` runs of neighbouring
 * tools, since neighbours in a listing are often the tools that work on the same things
 * (create_entities beside create_relations, git_set_working_dir beside git_stash). The cut is the
 * one whose heaviest run ({@link estimatedMs}) is lightest: the smallest budget such that the tools,
 * taken in order, fill at most `n` runs without one exceeding it (found by bisection), with a run
 * closed early only where the tools left would otherwise not fill the runs left. A tool sees what
 * the tools before it on its instance did (a working directory set), not what other instances did. Returns tool name
 * → instance, numbered without gaps: fewer than `n` when there are fewer tools.
 */
export function shareTools(tools: readonly ListedTool[], n: number): Map<string, number> {
  const k = Math.max(1, Math.min(n, tools.length));
  const weights = tools.map(estimatedMs);
  /** The runs the tools fill in order with no run over `budget` (ms). */
  const runsFor = (budget: number) => {
    let runs = 1;
    let sum = 0;
    for (const w of weights) {
      if (sum > 0 && sum + w > budget) {
        runs += 1;
        sum = 0;
      }
      sum += w;
    }
    return runs;
  };
  let lo = Math.max(0, ...weights);
  let hi = weights.reduce((a, b) => a + b, 0);
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (runsFor(mid) <= k) hi = mid;
    else lo = mid + 1;
  }
  const out = new Map<string, number>();
  let run = 0;
  let sum = 0;
  for (const [i, t] of tools.entries()) {
    const w = weights[i]!;
    // A new run when this one is full, or when each run left needs one of the tools left.
    if (sum > 0 && run < k - 1 && (sum + w > lo || tools.length - i <= k - 1 - run)) {
      run += 1;
      sum = 0;
    }
    out.set(t.name, run);
    sum += w;
  }
  return out;
}

/**
 * How many instances run at once when `--instances` is not given: twice the cores and one (`cores`,
 * os.availableParallelism()), since an instance spends most of its time waiting (on a 2-core
 * machine, every instance of the largest servers at once).
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
  // protocol-errors' array-params probe, judged once every other gatherer is done.
  'array-params': 11,
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
