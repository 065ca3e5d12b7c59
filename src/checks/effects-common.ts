/** What the effect checks share: the effects of calls, and the n/a of a run that called nothing. */
import type { Artifacts } from './check.js';
import type { CheckResult, Evidence, ProbeCall } from '../types.js';

/** One distinct effect of one call: identical lines of the effect log counted, not repeated. */
export interface DistinctEffect {
  kind: 'shim' | 'network' | 'file';
  detail: string;
  /** How many identical entries of the call's effect log it stands for (1 or more). */
  count: number;
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
    if (seen) seen.count++;
    else out.set(key, { kind: e.kind, detail: e.detail, count: 1 });
  }
  return [...out.values()];
}

/**
 * An effect as findings show it: `network: proxy: CONNECT host:443 HTTP/1.1`, with
 * ` (3 times during the call)` when the log had it more than once.
 */
export function effectText(e: DistinctEffect): string {
  return `${e.kind}: ${e.detail}${e.count > 1 ? ` (${e.count} times during the call)` : ''}`;
}

/** An effect as evidence quotes it: the log line, with ` (×3)` when it was seen more than once. */
export function effectQuote(e: DistinctEffect): string {
  return e.count > 1 ? `${e.detail} (×${e.count})` : e.detail;
}

/**
 * Each distinct effect of each call (see {@link distinctEffects}), with the data and evidence of
 * its finding: `data.effect` (as {@link effectText}), `data.args` (the arguments sent), evidence
 * the call and the quoted log line.
 */
export function effectsOf(calls: ProbeCall[]): { call: ProbeCall; effect: DistinctEffect; data: Record<string, string>; evidence: Evidence }[] {
  return calls.flatMap((c) =>
    distinctEffects(c).map((e) => ({
      call: c,
      effect: e,
      data: { tool: c.tool ?? '', effect: effectText(e), args: JSON.stringify(c.arguments ?? {}) },
      evidence: { calls: [c.seq], quotes: [effectQuote(e)] },
    })),
  );
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
  return iso.unprotected.map((u) => `writes under ${u.path} were not seen: ${u.why}`);
}
