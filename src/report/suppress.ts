/**
 * The config's `suppress:` entries applied to a run's findings (SPEC section 7). A finding an entry
 * matches (same check; same tool and message id when the entry names them) stays in the report,
 * marked `suppressed` with the entry's reason, and no longer counts: its check's verdict is
 * recomputed from the findings left (checks/finding.ts `verdictOf`), and the grade from those
 * verdicts. An entry past its `until` date no longer applies; an entry that matched nothing is
 * reported as unused (ESLint's unused-disable directive). `--no-suppress` (a registry's public
 * grade) applies none, and the report says so.
 */
import { verdictOf } from '../checks/finding.js';
import type { SuppressEntry } from '../config/schema.js';
import type { ReportCheck, ReportFinding } from './build.js';

/**
 * What became of one entry: `applied` (it matched findings and they are suppressed), `unused` (it
 * matched nothing), `expired` (its `until` date has passed; the findings it matches count again),
 * `ignored` (`--no-suppress`). `matched`: how many `fail` and `partial` findings it matches (for
 * `expired` and `ignored`, would have suppressed; `info` findings are never matched, see
 * {@link matches}). `index`: its position in the config's list.
 */
export interface SuppressionState extends SuppressEntry {
  index: number;
  status: 'applied' | 'unused' | 'expired' | 'ignored';
  matched: number;
}

/** The report's record of suppressions: whether they were applied at all, and each entry's fate. */
export interface Suppressions {
  /** false with `--no-suppress` (or the library's `suppress: false`): every finding counts. */
  applied: boolean;
  entries: SuppressionState[];
}

/**
 * True when `until` (an ISO date `YYYY-MM-DD`, which lasts to the end of that day in UTC, or an ISO
 * date-time) is before `now`.
 */
export function isExpired(until: string | undefined, now: Date): boolean {
  if (until === undefined) return false;
  if (/^\d{4}-\d{2}-\d{2}$/.test(until)) return now.toISOString().slice(0, 10) > until;
  const t = Date.parse(until);
  return Number.isFinite(t) && now.getTime() > t;
}

/**
 * Whether `e` matches `f`: a finding that counts (`fail` or `partial`) of the same check, with the
 * same tool and message id where `e` names them. An `info` finding counts toward nothing and is
 * hidden from the text report without `--verbose`, so no entry matches, suppresses or counts it:
 * every count of matched findings (`matched`, the warnings, the check's note, the text and HTML
 * summaries) is of the findings every report shows.
 */
export function matches(e: SuppressEntry, f: ReportFinding): boolean {
  return f.level !== 'info' && f.checkId === e.check && (e.tool === undefined || f.tool === e.tool) && (e.messageId === undefined || f.messageId === e.messageId);
}

/**
 * Applies `entries` to `checks` and returns new checks (the inputs are not changed) with the record
 * of what each entry did. The first live entry that matches a finding suppresses it. A check whose
 * verdict is what its findings imply gets the verdict of its unsuppressed findings, with a note; a
 * check whose verdict does not come from its findings alone (n/a, or set by the check itself) keeps
 * it, with a note saying so.
 */
export function applySuppressions(
  checks: readonly ReportCheck[],
  entries: readonly SuppressEntry[],
  opts: { apply: boolean; now: Date },
): { checks: ReportCheck[]; suppressions: Suppressions } {
  const states: SuppressionState[] = entries.map((e, index) => ({ ...e, index, status: 'unused', matched: 0 }));
  const out = checks.map((c) => {
    let suppressedHere = 0;
    const findings = c.findings.map((f) => {
      let by: SuppressionState | undefined;
      for (const s of states) {
        if (!matches(s, f)) continue;
        s.matched++;
        if (!by && opts.apply && !isExpired(s.until, opts.now)) by = s;
      }
      if (!by) return f;
      suppressedHere++;
      return { ...f, suppressed: { reason: by.reason, ...(by.until !== undefined ? { until: by.until } : {}) } };
    });
    if (suppressedHere === 0) return c;
    const counted = findings.filter((f) => !f.suppressed);
    const derived = c.verdict !== 'n/a' && c.verdict === verdictOf(c.findings);
    const verdict = derived ? verdictOf(counted) : c.verdict;
    const what = `${suppressedHere} finding${suppressedHere === 1 ? '' : 's'} suppressed by the config`;
    const note = derived
      ? verdict === c.verdict
        ? `${what}; the verdict stays ${c.verdict}`
        : `${what}: ${verdict} without them (${c.verdict} with them)`
      : `${what}; the verdict ${c.verdict} does not come from the findings alone and is kept`;
    return { ...c, verdict, findings, notes: [...c.notes, note] };
  });
  for (const s of states) {
    if (!opts.apply) s.status = 'ignored';
    else if (isExpired(s.until, opts.now)) s.status = 'expired';
    else s.status = s.matched > 0 ? 'applied' : 'unused';
  }
  return { checks: out, suppressions: { applied: opts.apply, entries: states } };
}

/**
 * One line for an entry that needs the user's attention (expired, unused), else undefined:
 * `suppress[1] (robust-input, tool convert) expired on 2026-01-31 and no longer applies (it matches 2 findings)`.
 */
export function suppressionWarning(s: SuppressionState): string | undefined {
  const scope = [s.check, ...(s.tool !== undefined ? [`tool ${s.tool}`] : []), ...(s.messageId !== undefined ? [`messageId ${s.messageId}`] : [])].join(', ');
  const name = `suppress[${s.index}] (${scope})`;
  if (s.status === 'expired') return `${name} expired on ${s.until} and no longer applies (it matches ${s.matched} finding${s.matched === 1 ? '' : 's'})`;
  if (s.status === 'unused') return `${name} matched no finding: remove it, or check its check, tool and messageId`;
  return undefined;
}
