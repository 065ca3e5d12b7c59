/** SPEC section 6, as a table: points, pack percentages, letters, the overall mean and the caps. */
import { describe, expect, it } from 'vitest';
import { belowLetter, capLowered, grade, letterOf, points, worse, type ScoredCheck } from '../../src/scoring.js';
import type { PackId, Verdict, Weight } from '../../src/types.js';

const ALL: PackId[] = ['core', 'effects', 'limits', 'design', 'secrets'];

let n = 0;
/** A synthetic check result; ids are unique unless given. */
function c(pack: PackId, verdict: Verdict, weight: Weight = 'scored', id = `c${++n}`): ScoredCheck {
  return { id, pack, weight, verdict };
}
const packOf = (g: ReturnType<typeof grade>, p: PackId) => g.packs.find((x) => x.pack === p)!;

describe('letters (A ≥ 90, B ≥ 80, C ≥ 70, D ≥ 60, else F)', () => {
  it.each([
    [100, 'A'],
    [90, 'A'],
    [89.9, 'B'],
    [80, 'B'],
    [79.9, 'C'],
    [70, 'C'],
    [69.9, 'D'],
    [60, 'D'],
    [59.9, 'F'],
    [0, 'F'],
  ] as const)('%s → %s', (pct, letter) => {
    expect(letterOf(pct)).toBe(letter);
  });

  it('worse() and belowLetter() rank A best and F worst', () => {
    expect(worse('A', 'D')).toBe('D');
    expect(worse('F', 'B')).toBe('F');
    expect(belowLetter('C', 'B')).toBe(true);
    expect(belowLetter('B', 'B')).toBe(false);
    expect(belowLetter(null, 'F')).toBe(true);
  });
});

describe('points', () => {
  it.each([
    ['pass', 1],
    ['partial', 0.5],
    ['fail', 0],
    ['n/a', undefined],
  ] as const)('%s → %s', (v, p) => {
    expect(points(v)).toBe(p);
  });
});

describe('pack percentage', () => {
  it('counts partial as half and leaves n/a out', () => {
    const g = grade([c('core', 'pass'), c('core', 'partial'), c('core', 'fail'), c('core', 'n/a')], ALL);
    const core = packOf(g, 'core');
    expect(core.counted).toBe(3);
    expect(core.percent).toBe(50);
    expect(core.letter).toBe('F');
  });

  it('leaves advisory checks out, whatever their verdict', () => {
    const g = grade([c('core', 'pass'), c('core', 'fail', 'advisory'), c('core', 'partial', 'advisory')], ALL);
    expect(packOf(g, 'core')).toMatchObject({ percent: 100, letter: 'A', counted: 1 });
  });

  it('counts capping checks like scored ones', () => {
    const g = grade([c('core', 'pass', 'capping', 'handshake'), c('core', 'partial')], ALL);
    expect(packOf(g, 'core').percent).toBe(75);
  });

  it('rounds to one decimal (2 of 3 → 66.7)', () => {
    const g = grade([c('core', 'pass'), c('core', 'pass'), c('core', 'fail')], ALL);
    expect(packOf(g, 'core').percent).toBe(66.7);
    expect(g.letter).toBe('D');
  });

  it('is null for a pack with nothing applicable', () => {
    const g = grade([c('core', 'pass'), c('effects', 'n/a'), c('limits', 'fail', 'advisory')], ALL);
    expect(packOf(g, 'effects')).toMatchObject({ percent: null, letter: null, counted: 0 });
    expect(packOf(g, 'limits')).toMatchObject({ percent: null, letter: null, counted: 0 });
    expect(packOf(g, 'design').percent).toBeNull();
  });
});

describe('overall', () => {
  it('is the mean of the applicable packs, not of the checks', () => {
    // core 100 (1 check), effects 50 (4 checks): mean of packs 75, mean of checks would be 60.
    const g = grade([c('core', 'pass'), c('effects', 'pass'), c('effects', 'pass'), c('effects', 'fail'), c('effects', 'fail')], ALL);
    expect(g.percent).toBe(75);
    expect(g.letter).toBe('C');
    expect(g.caps).toEqual([]);
  });

  it('leaves packs with nothing applicable out of the mean', () => {
    const g = grade([c('core', 'pass'), c('design', 'n/a')], ALL);
    expect(g.percent).toBe(100);
    expect(g.letter).toBe('A');
  });

  it('is null with no applicable check', () => {
    expect(grade([], ALL)).toMatchObject({ percent: null, letter: null, caps: [] });
    const g = grade([c('core', 'n/a'), c('effects', 'fail', 'advisory')], ALL);
    expect(g.percent).toBeNull();
    expect(g.letter).toBeNull();
    expect(g.caps).toEqual([]);
  });
});

describe('caps', () => {
  /** Many passing checks so the mean stays high while the capping check fails. */
  const passes = (pack: PackId, k: number) => Array.from({ length: k }, () => c(pack, 'pass'));

  it('a failed handshake caps the letter at F even when the mean is an A', () => {
    const g = grade([c('core', 'fail', 'capping', 'handshake'), ...passes('core', 19), ...passes('effects', 5)], ALL);
    expect(g.percent).toBeGreaterThanOrEqual(90);
    expect(g.letter).toBe('F');
    expect(g.caps).toEqual([{ check: 'handshake', letter: 'F' }]);
  });

  it('a failed secret-echo caps the letter at D', () => {
    const g = grade([c('secrets', 'fail', 'capping', 'secret-echo'), ...passes('secrets', 19), ...passes('core', 4)], ALL);
    expect(g.percent).toBeGreaterThanOrEqual(90);
    expect(g.letter).toBe('D');
    expect(g.caps).toEqual([{ check: 'secret-echo', letter: 'D' }]);
  });

  it('a cap never raises a letter that is already lower', () => {
    const g = grade([c('secrets', 'fail', 'capping', 'secret-echo'), c('core', 'fail')], ALL);
    expect(g.percent).toBe(0);
    expect(g.letter).toBe('F');
    expect(g.caps).toEqual([{ check: 'secret-echo', letter: 'D' }]);
  });

  it('both caps: the worse one wins', () => {
    const g = grade([c('core', 'fail', 'capping', 'handshake'), c('secrets', 'fail', 'capping', 'secret-echo'), ...passes('core', 20), ...passes('secrets', 20)], ALL);
    expect(g.letter).toBe('F');
    expect(g.caps.map((x) => x.check).sort()).toEqual(['handshake', 'secret-echo']);
  });

  it('partial or passing capping checks do not cap', () => {
    const g = grade([c('core', 'partial', 'capping', 'handshake'), c('secrets', 'pass', 'capping', 'secret-echo'), ...passes('core', 9)], ALL);
    expect(g.caps).toEqual([]);
    expect(g.letter).toBe('A');
  });

  it('a failing scored check does not cap, even with a capping id', () => {
    const g = grade([c('core', 'fail', 'scored', 'handshake'), ...passes('core', 19)], ALL);
    expect(g.caps).toEqual([]);
    expect(g.letter).toBe('A');
  });
});

describe('capLowered', () => {
  it('a cap line only when the cap lowered the grade', () => {
    expect(capLowered({ percent: 92.5 }, { letter: 'D' })).toBe(true);
    expect(capLowered({ percent: 65 }, { letter: 'D' })).toBe(false);
    expect(capLowered({ percent: 57.5 }, { letter: 'D' })).toBe(false);
    expect(capLowered({ percent: null }, { letter: 'F' })).toBe(false);
    expect(capLowered({ percent: 70 }, { letter: 'F' })).toBe(true);
  });
});
