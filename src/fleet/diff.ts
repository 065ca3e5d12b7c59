/**
 * The diff between two records of one server (SPEC section 10: "a diff between two versions of a
 * server by check and finding fingerprint"). Findings are compared the one way sealmark compares
 * them, `--baseline`'s {@link compareWithBaseline}: the older record's report is the baseline of
 * the newer one's, so `new`, `fixed` and `unchanged` mean here what they mean there (failing and
 * partial findings, suppressed ones left out, `fixed` only for a check the newer run judged).
 */
import { compareWithBaseline } from '../report/baseline.js';
import type { FindingRef, Report } from '../report/build.js';
import type { Verdict } from '../types.js';
import { rulerLabel } from './order.js';
import type { FleetOutcome, FleetRecord, Ruler } from './types.js';

/** One side of a diff, as a reader names it. */
export interface DiffSide {
  version: string | null;
  target: string;
  ruler: Ruler;
  outcome: FleetOutcome;
  letter: string | null;
  percent: number | null;
  finishedAt: string;
}

/** A check whose verdict differs; `null` where the check is absent from that side's report. */
export interface CheckChange {
  id: string;
  title: string;
  pack: string;
  from: Verdict | null;
  to: Verdict | null;
}

/**
 * What changed from `older` to `newer`. `findings` is null when either record has no report (a
 * `timeout`, a fetch that never started): there is nothing to compare, and `why` says so.
 * `sameRuler` false means a verdict may have changed because the rules did, not the server.
 */
export interface RecordDiff {
  older: DiffSide;
  newer: DiffSide;
  sameRuler: boolean;
  /** Checks whose verdict changed, in the newer report's check order (then the older one's). */
  checks: CheckChange[];
  findings: { new: FindingRef[]; fixed: FindingRef[]; unchanged: number } | null;
  why?: string;
}

function sideOf(r: FleetRecord): DiffSide {
  const graded = r.outcome === 'graded' && r.grade !== null;
  return {
    version: r.version,
    target: r.target.label,
    ruler: r.ruler,
    outcome: r.outcome,
    letter: graded ? r.grade!.letter : null,
    percent: graded ? r.grade!.percent : null,
    finishedAt: r.finishedAt,
  };
}

/** Verdict per check id of a report, with title and pack. */
function verdicts(report: Report | null): Map<string, { title: string; pack: string; verdict: Verdict }> {
  return new Map((report?.checks ?? []).map((c) => [c.id, { title: c.title, pack: c.pack, verdict: c.verdict }]));
}

/**
 * The diff from `older` to `newer` (two records of one server, usually its two newest versions):
 * the checks whose verdict changed and the findings new, fixed and unchanged by fingerprint. Pure:
 * neither record is changed. Throws nothing; records without a report give `findings: null`.
 */
export function diffRecords(older: FleetRecord, newer: FleetRecord): RecordDiff {
  const base = { older: sideOf(older), newer: sideOf(newer), sameRuler: rulerLabel(older.ruler) === rulerLabel(newer.ruler) };
  const a = verdicts(older.report);
  const b = verdicts(newer.report);
  const checks: CheckChange[] = [];
  for (const [id, x] of b) {
    const from = a.get(id)?.verdict ?? null;
    if (from !== x.verdict) checks.push({ id, title: x.title, pack: x.pack, from, to: x.verdict });
  }
  for (const [id, x] of a) if (!b.has(id)) checks.push({ id, title: x.title, pack: x.pack, from: x.verdict, to: null });
  if (!older.report || !newer.report) {
    const missing = [!older.report && `${older.version ?? 'the older record'} (${older.outcome})`, !newer.report && `${newer.version ?? 'the newer record'} (${newer.outcome})`].filter(Boolean);
    return { ...base, checks, findings: null, why: `no report to compare for ${missing.join(' and ')}` };
  }
  const cmp = compareWithBaseline(newer.report, older.report, older.version ?? older.jobId).baseline!;
  return { ...base, checks, findings: { new: cmp.new, fixed: cmp.fixed, unchanged: cmp.unchanged } };
}
