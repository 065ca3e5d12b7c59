/**
 * Scoring (SPEC section 6): verdict → points → pack percentage → letter, with caps, coverage and
 * the standard/non-standard mark. One small file, like Lighthouse's scoring.js.
 */
import type { CheckResult, PackId, Verdict, Weight } from './types.js';

/** Points of a verdict for scored and capping checks; n/a counts for nothing. */
export function points(v: Verdict): number | undefined {
  if (v === 'pass') return 1;
  if (v === 'partial') return 0.5;
  if (v === 'fail') return 0;
  return undefined;
}

export type Letter = 'A' | 'B' | 'C' | 'D' | 'F';

/** A ≥ 90, B ≥ 80, C ≥ 70, D ≥ 60, else F (percent, 0–100). */
export function letterOf(percent: number): Letter {
  if (percent >= 90) return 'A';
  if (percent >= 80) return 'B';
  if (percent >= 70) return 'C';
  if (percent >= 60) return 'D';
  return 'F';
}

const ORDER: Letter[] = ['A', 'B', 'C', 'D', 'F'];

/** The worse of two letters. */
export function worse(a: Letter, b: Letter): Letter {
  return ORDER.indexOf(a) >= ORDER.indexOf(b) ? a : b;
}

/** Capping checks and the letter their failure caps the overall grade at (SPEC section 6). */
export const CAPS: Record<string, Letter> = { handshake: 'F', 'secret-echo': 'D' };

export interface ScoredCheck {
  id: string;
  pack: PackId;
  weight: Weight;
  verdict: Verdict;
}

export interface PackScore {
  pack: PackId;
  /** Percent 0–100 (rounded to one decimal), or null when no check of the pack applied. */
  percent: number | null;
  letter: Letter | null;
  /** Checks that counted (scored or capping, not n/a). */
  counted: number;
}

export interface Grade {
  packs: PackScore[];
  /** Mean of pack percentages (packs with none applicable left out), before caps; null when none. */
  percent: number | null;
  letter: Letter | null;
  /** Caps that applied: the failing check and the letter it capped at. */
  caps: { check: string; letter: Letter }[];
}

/** Scores checks by pack and overall. Advisory and n/a checks are left out of every mean. */
export function grade(results: ScoredCheck[], packOrder: PackId[]): Grade {
  const packs: PackScore[] = packOrder.map((pack) => {
    const counted = results.filter((r) => r.pack === pack && r.weight !== 'advisory' && points(r.verdict) !== undefined);
    if (counted.length === 0) return { pack, percent: null, letter: null, counted: 0 };
    const pct = round1((100 * counted.reduce((s, r) => s + points(r.verdict)!, 0)) / counted.length);
    return { pack, percent: pct, letter: letterOf(pct), counted: counted.length };
  });
  const applicable = packs.filter((p) => p.percent !== null);
  if (applicable.length === 0) return { packs, percent: null, letter: null, caps: [] };
  const percent = round1(applicable.reduce((s, p) => s + p.percent!, 0) / applicable.length);
  let letter = letterOf(percent);
  const caps: Grade['caps'] = [];
  for (const r of results) {
    const cap = CAPS[r.id];
    if (cap && r.weight === 'capping' && r.verdict === 'fail') {
      caps.push({ check: r.id, letter: cap });
      letter = worse(letter, cap);
    }
  }
  return { packs, percent, letter, caps };
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

/** Coverage of one tool: `exercised` when at least one valid call answered without error. */
export type CoverageLevel = 'hygiene-only' | 'exercised';

/**
 * Whether `cap` lowered the grade: the letter of the percent alone is better than the cap's. A
 * report shows a cap line only then ("capped at D" under an F of 57.5 % says nothing true).
 */
export function capLowered(g: Pick<Grade, 'percent'>, cap: { letter: Letter }): boolean {
  return g.percent !== null && ORDER.indexOf(letterOf(g.percent)) < ORDER.indexOf(cap.letter);
}

/** Ranks a letter against a `--fail-under` letter: true when `got` is below `threshold`. */
export function belowLetter(got: Letter | null, threshold: Letter): boolean {
  if (got === null) return true;
  return ORDER.indexOf(got) > ORDER.indexOf(threshold);
}

/** Exported for reports that list verdict points. */
export function describePoints(weight: Weight, v: Verdict): string {
  if (weight === 'advisory' || v === 'n/a') return '—';
  return String(points(v));
}

export type { CheckResult };
