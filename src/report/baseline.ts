/**
 * `--baseline <saved.json>` (issue 6, the Schemathesis/ESLint "only new problems fail" practice):
 * the failing and partial findings of this run are matched against those of a saved report by
 * fingerprint (fingerprint.ts). Findings the baseline had are `unchanged`, the others `new`;
 * baseline findings this run no longer has are listed as `fixed`, when their check ran and gave a
 * verdict here (a skipped or n/a check, or a run that was not audited, fixed nothing). Info
 * findings, and findings a `suppress:` entry matched (in either report), are not compared.
 * Fingerprints are recomputed from both reports, so a baseline saved by an older sealmark works.
 */
import { fingerprintOf } from './fingerprint.js';
import type { BaselineComparison, FindingRef, Report, ReportFinding } from './build.js';

const COMPARED = new Set<ReportFinding['level']>(['fail', 'partial']);

/**
 * Returns a copy of `report` whose compared findings carry `baselineState` and whose `baseline`
 * field holds the comparison with `baseline` (read from `file`). Pure: neither input is changed.
 */
export function compareWithBaseline(report: Report, baseline: Report, file: string): Report {
  const remaining = new Map<string, FindingRef[]>();
  for (const c of baseline.checks) {
    for (const f of c.findings) {
      if (!COMPARED.has(f.level) || f.suppressed) continue;
      const fp = fingerprintOf(f, baseline);
      remaining.set(fp, [...(remaining.get(fp) ?? []), refOf(f, fp)]);
    }
  }
  const added: FindingRef[] = [];
  let unchanged = 0;
  const checks = report.checks.map((c) => ({
    ...c,
    findings: c.findings.map((f): ReportFinding => {
      if (!COMPARED.has(f.level) || f.suppressed) return f;
      const fp = fingerprintOf(f, report);
      const same = remaining.get(fp);
      if (same && same.length > 0) {
        same.pop();
        unchanged++;
        return { ...f, fingerprint: fp, baselineState: 'unchanged' };
      }
      added.push(refOf(f, fp));
      return { ...f, fingerprint: fp, baselineState: 'new' };
    }),
  }));
  // Fixed means looked for again and not found: a check that did not run here (skipped, n/a, a
  // server that could not be audited) fixed nothing.
  const judged = new Set(report.status === 'audited' ? report.checks.filter((c) => c.verdict !== 'n/a').map((c) => c.id) : []);
  const comparison: BaselineComparison = {
    file,
    generatedAt: baseline.generatedAt,
    new: added,
    fixed: [...remaining.values()].flat().filter((f) => judged.has(f.checkId)),
    unchanged,
  };
  return { ...report, checks, baseline: comparison };
}

function refOf(f: ReportFinding, fingerprint: string): FindingRef {
  const ref: FindingRef = { fingerprint, checkId: f.checkId, messageId: f.messageId, level: f.level, message: f.message };
  if (f.tool !== undefined) ref.tool = f.tool;
  return ref;
}
