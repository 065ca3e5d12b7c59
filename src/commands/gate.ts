/**
 * The exit code of a run (SPEC section 2) and the gates that decide it: `--fail-under` and
 * `--baseline` (issue 6). Shared by `sealmark audit` and `sealmark report`.
 */
import { UsageError } from '../errors.js';
import type { Report } from '../report/build.js';
import { belowLetter, type Letter } from '../scoring.js';

/** A `--fail-under` gate: a letter, or a percent (0-100). */
export type Gate = { letter: Letter } | { percent: number } | undefined;

/** Parses `--fail-under` (`B`, `85`, `85%`). Throws UsageError for anything else. */
export function parseGate(value: string | undefined): Gate {
  if (value === undefined) return undefined;
  const v = value.trim().toUpperCase();
  if (/^[ABCDF]$/.test(v)) return { letter: v as Letter };
  const m = /^(\d+(?:\.\d+)?)%?$/.exec(v);
  if (m && Number(m[1]) <= 100) return { percent: Number(m[1]) };
  throw new UsageError(`--fail-under ${JSON.stringify(value)}: expected a letter A-F or a percent 0-100`);
}

/**
 * Exit code of a finished run:
 * - 3 when the target could not be audited;
 * - 1 when the grade is below the `--fail-under` gate;
 * - 1 when a check at severity `error` has a `fail` finding. After `--baseline` only a finding
 *   that is new against the baseline counts; without a baseline, an explicit `--fail-under`
 *   replaces this default gate (SPEC section 2);
 * - else 0.
 */
export function exitCode(report: Report, gate: Gate): number {
  if (report.status === 'not-audited') return 3;
  if (belowGate(report, gate)) return 1;
  const gating = report.checks.filter((c) => c.severity === 'error' && c.verdict === 'fail');
  if (report.baseline) return gating.some((c) => c.findings.some((f) => f.level === 'fail' && f.baselineState === 'new')) ? 1 : 0;
  return !gate && gating.length > 0 ? 1 : 0;
}

/**
 * True when the grade is below the `--fail-under` gate: then partial findings, which lower the
 * grade, are part of why the run fails (the JUnit reporter writes them as failures).
 */
export function belowGate(report: Report, gate: Gate): boolean {
  if (!gate || report.status === 'not-audited') return false;
  if ('letter' in gate) return belowLetter(report.grade.letter, gate.letter);
  return (report.grade.percent ?? 0) < gate.percent;
}

/** {@link belowGate} for a run of one report or of many (a `--client-config` run): any server below it. */
export function anyBelowGate(reports: readonly Report[], gate: Gate): boolean {
  return reports.some((r) => belowGate(r, gate));
}
