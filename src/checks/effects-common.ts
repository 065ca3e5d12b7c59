/** What the effect checks share: the effects of calls, and the n/a of a run that called nothing. */
import type { Artifacts } from './check.js';
import type { CheckResult, Evidence, ProbeCall } from '../types.js';
import { EFFECT_LONGEST_WAIT_MS, EFFECT_QUIET_MS, LATE_WINDOW_MS, STALL_TOLERANCE_MS } from '../target/sandbox.js';
import { RATE_LIMIT_RETRY_MS } from '../probes/watch.js';

/**
 * How a call's effects are collected, for the `how` of every check that judges effects (SPEC
 * section 3: watched as events; the quiet period and the longest wait stated). The numbers are the
 * sandbox's ({@link EFFECT_QUIET_MS}, {@link EFFECT_LONGEST_WAIT_MS}, {@link LATE_WINDOW_MS}).
 */
export const EFFECT_TIMING =
  `Effects are watched as events (each line of the effect log, each change of the overlay's upper layers, through inotify), not by a fixed wait: a call's effects are what arrives from its request until its reply is in and no event has come for ${EFFECT_QUIET_MS} ms (the quiet period, counted again from each event; a server that never stops writing is read at the longest wait, ${EFFECT_LONGEST_WAIT_MS} ms after the reply). ` +
  `An effect that comes after that, before the next call of a tool (pings and protocol probes do not count), is still that call's, marked late (the finding says "after the reply"; the call's effects give the ms). ` +
  `Before a call whose effects blame its tool (a default or filler call, a repeat, a made-up proposal), the sandbox waits until it has been quiet for ${LATE_WINDOW_MS} ms since the last call the server ran (answered without refusing its arguments; at most ${EFFECT_LONGEST_WAIT_MS} ms), so a delayed effect of that call (a debounced save) lands first and goes to it; a judged call to another tool than the last one that ran waits the same way. ` +
  `On a loaded machine, a wait from which sealmark's own timer woke more than ${STALL_TOLERANCE_MS} ms late is not counted as quiet (the server was likely held up too): the quiet period starts again after it, and the longest wait grows by the stall, at most doubling.`;

/**
 * How a call refused for a rate limit is treated (probes/watch.ts `pastRateLimit`), for the `how`
 * of the checks that judge those calls (`calls`: which ones, as the check names them).
 */
export function rateLimitRule(calls: string): string {
  return `${calls} answered with an error that says it was rate limited ("Rate limit exceeded", "Too many requests") did not run its tool: it is made once more ${RATE_LIMIT_RETRY_MS / 1000} s later, past a one-second window, and both calls are kept, so that the server's clock does not decide what is judged (server-brave-search allows one search a second).`;
}

/** {@link rateLimitRule} for the effects calls: the `{}`, filler and control calls. */
export const RATE_LIMIT_RULE = rateLimitRule('A `{}`, filler or control call');

/** What an effects check cannot see of a delayed effect (its false negatives), to go with {@link EFFECT_TIMING}. */
export const LATE_LIMIT = `An effect delayed beyond the next call of a tool (more than ${LATE_WINDOW_MS} ms before a call that blames its tool, any delay past the quiet period before other calls, and any delay after a call whose arguments were refused, which is not waited after) is attributed to the call in flight when it arrives; one that comes after the audit's last call is read after ${LATE_WINDOW_MS} ms of quiet, later ones are missed.`;

/** One distinct effect of one call: identical lines of the effect log counted, not repeated. */
export interface DistinctEffect {
  kind: 'shim' | 'network' | 'file';
  detail: string;
  /** How many identical entries of the call's effect log it stands for (1 or more). */
  count: number;
  /** Every entry arrived after the call was settled (late, SPEC section 3): ms from the reply to the first. */
  lateMs?: number;
  /** The evidence's quotes when not the detail itself (an effect standing for many, see {@link effectsOf}). */
  quotes?: string[];
}

/**
 * The effects of one call with identical entries (same kind and detail) merged, in the order first
 * seen. The effect log is faithful: an HTTP client that retries (firecrawl-js tries three times)
 * makes three identical proxy CONNECTs during one call, and the call's `effects` keeps all three.
 * They are one cause, so the checks judge them as one effect seen `count` times (SPEC section 5,
 * "one cause is one finding").
 */
export function distinctEffects(call: ProbeCall): DistinctEffect[] {
  const out = new Map<string, DistinctEffect>();
  for (const e of call.effects ?? []) {
    const key = `${e.kind}\u0000${e.detail}`;
    const seen = out.get(key);
    if (!seen) out.set(key, { kind: e.kind, detail: e.detail, count: 1, ...(e.lateMs !== undefined ? { lateMs: e.lateMs } : {}) });
    else {
      seen.count++;
      if (e.lateMs === undefined) delete seen.lateMs;
    }
  }
  return [...out.values()];
}

/**
 * An effect as findings show it: `network: proxy: CONNECT host:443 HTTP/1.1`, with
 * ` (3 times during the call)` when the log had it more than once, and ` (after the reply)` for a
 * late one (its ms are in the call's effects, not in the message, which stays the same run to run).
 */
export function effectText(e: DistinctEffect): string {
  return `${e.kind}: ${e.detail}${e.count > 1 ? ` (${e.count} times during the call)` : ''}${e.lateMs !== undefined ? ' (after the reply)' : ''}`;
}

/** An effect as evidence quotes it: the log line, with ` (×3)` when it was seen more than once. */
export function effectQuote(e: DistinctEffect): string {
  return e.count > 1 ? `${e.detail} (×${e.count})` : e.detail;
}

/** Most file effects of one call that are findings of their own; more are one finding (see {@link effectsOf}). */
export const MAX_FILE_FINDINGS_PER_CALL = 5;

/** File effects of one call quoted by name in the one finding that stands for them all. */
const FILE_EFFECTS_QUOTED = 3;

/**
 * Each distinct effect of each call (see {@link distinctEffects}), with the data and evidence of
 * its finding: `data.effect` (as {@link effectText}), `data.args` (the arguments sent), evidence
 * the call and the quoted log line. A call with more than {@link MAX_FILE_FINDINGS_PER_CALL}
 * distinct file effects (an export that writes 20,000 files) has them as one finding, one cause
 * (SPEC section 5): `file: 20000 changes: created a, created b, created c and 19997 more (…)`,
 * quoting the first three; every one of them stays in the call's `effects`.
 */
export function effectsOf(calls: ProbeCall[]): { call: ProbeCall; effect: DistinctEffect; data: Record<string, string>; evidence: Evidence }[] {
  return calls.flatMap((c) => {
    const all = distinctEffects(c);
    // A change of one path (created, changed, removed, renamed); the rest (an altered effect log, a cap reached) stay findings of their own.
    const isChange = (e: DistinctEffect) => e.kind === 'file' && /^(created|changed|removed|renamed) /.test(e.detail);
    const files = all.filter(isChange);
    const each = files.length > MAX_FILE_FINDINGS_PER_CALL ? [...all.filter((e) => !isChange(e)), manyFiles(files)] : all;
    return each.map((e) => ({
      call: c,
      effect: e,
      data: { tool: c.tool ?? '', effect: effectText(e), args: JSON.stringify(c.arguments ?? {}) },
      evidence: { calls: [c.seq], quotes: e.quotes ?? [effectQuote(e)] },
    }));
  });
}

/** The one effect that stands for many file effects of a call: late only when all of them were. */
function manyFiles(files: DistinctEffect[]): DistinctEffect & { quotes: string[] } {
  const named = files.slice(0, FILE_EFFECTS_QUOTED);
  const rest = files.length - named.length;
  const late = files.every((f) => f.lateMs !== undefined) ? { lateMs: Math.min(...files.map((f) => f.lateMs!)) } : {};
  return {
    kind: 'file',
    detail: `${files.length} changes: ${named.map((f) => f.detail).join(', ')} and ${rest} more (every one is in the call's effects)`,
    count: 1,
    ...late,
    quotes: [...named.map(effectQuote), `… and ${rest} more`],
  };
}

/** The n/a result when the effects gatherer did not call anything; undefined when it did. */
export function effectsNotRun(a: Artifacts, id: string): CheckResult | undefined {
  if (!a.effects) return { id, verdict: 'n/a', findings: [], notes: ['the effect calls did not run (the server was gone first)'] };
  if (!a.effects.ran) return { id, verdict: 'n/a', findings: [], notes: [a.effects.why ?? 'the effect calls did not run'] };
  return undefined;
}

/**
 * What the sandbox could not see, for the notes of the effects checks (SPEC section 3: "where this
 * is not possible the report says which paths were not protected"): without the copy-on-write
 * overlay, writes outside the scratch HOME and working directory; with it, the folders it could not
 * cover. Empty when every write was seen (or there was no sandbox: the check says so itself).
 */
export function unseenWrites(a: Artifacts): string[] {
  const iso = a.isolation;
  if (!iso) return [];
  if (iso.filesystem !== 'overlay') return ['no copy-on-write filesystem: writes outside the scratch HOME and working directory were not seen (see the sandbox line)'];
  return iso.unprotected.map((u) => {
    // A folder the server was pointed into (/dev/shm/data) is covered though its parent is not.
    const inside = iso.protected.filter((p) => p.startsWith(u.path === '/' ? '/' : `${u.path}/`));
    const except = inside.length > 0 && u.path !== '/' ? ` (except under ${inside.join(', ')}, which the copy-on-write filesystem covered)` : '';
    return `writes under ${u.path} were not seen${except}: ${u.why}`;
  });
}
