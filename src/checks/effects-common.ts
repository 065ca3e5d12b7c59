/** What the effect checks share: the effects of calls, and the n/a of a run that called nothing. */
import type { Artifacts } from './check.js';
import type { CheckResult, Evidence, ProbeCall } from '../types.js';

/** Each effect of each call, with the data and evidence of its finding (the call, the effect quoted). */
export function effectsOf(calls: ProbeCall[]): { call: ProbeCall; data: Record<string, string>; evidence: Evidence }[] {
  return calls.flatMap((c) =>
    (c.effects ?? []).map((e) => ({
      call: c,
      data: { tool: c.tool ?? '', effect: `${e.kind}: ${e.detail}`, args: JSON.stringify(c.arguments ?? {}) },
      evidence: { calls: [c.seq], quotes: [e.detail] },
    })),
  );
}

/** The n/a result when the effects gatherer did not call anything; undefined when it did. */
export function effectsNotRun(a: Artifacts, id: string): CheckResult | undefined {
  if (!a.effects) return { id, verdict: 'n/a', findings: [], notes: ['the effect calls did not run (the server was gone first)'] };
  if (!a.effects.ran) return { id, verdict: 'n/a', findings: [], notes: [a.effects.why ?? 'the effect calls did not run'] };
  return undefined;
}
