/**
 * `suppress:` (SPEC section 7): the config's validation of entries (each problem a config error
 * naming its key), and how entries apply to a run's findings (src/report/suppress.ts): matching,
 * verdicts recomputed from the findings left, expiry, unused entries, --no-suppress.
 */
import { describe, expect, it } from 'vitest';
import { configRegistry } from '../../src/config/defaults.js';
import { ConfigError, parseConfig } from '../../src/config/schema.js';
import { loadConfig } from '../../src/config/load.js';
import type { ReportCheck, ReportFinding } from '../../src/report/build.js';
import { applySuppressions, isExpired, suppressionWarning } from '../../src/report/suppress.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const registry = configRegistry();

/** The problems (key and message) of a config with these `suppress` entries. */
function problems(suppress: unknown): { key: string; message: string }[] {
  try {
    parseConfig({ suppress }, registry);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems.map((p) => ({ key: p.key, message: p.message }));
  }
  throw new Error('no ConfigError');
}

describe('suppress: in the config', () => {
  it('accepts entries with every key, and defaults to none', () => {
    expect(parseConfig({}, registry).suppress).toEqual([]);
    const c = parseConfig(
      {
        suppress: [
          { check: 'robust-input', tool: 'convert', messageId: 'internal-error', reason: 'known', until: '2026-12-31' },
          { check: 'annotations', reason: '  trimmed  ', until: '2026-12-31T18:00:00Z' },
        ],
      },
      registry,
    );
    expect(c.suppress).toEqual([
      { check: 'robust-input', tool: 'convert', messageId: 'internal-error', reason: 'known', until: '2026-12-31' },
      { check: 'annotations', reason: 'trimmed', until: '2026-12-31T18:00:00Z' },
    ]);
  });

  it('names the key of each problem: unknown key, unknown check, unknown message id, empty reason, bad date, wrong types', () => {
    const p = problems([
      { check: 'robust-input', reason: 'x', tol: 'convert' },
      { check: 'robust-inpt', reason: 'x' },
      { check: 'robust-input', messageId: 'internal-eror', reason: 'x' },
      { check: 'robust-input', reason: '   ' },
      { check: 'robust-input', reason: 'x', until: '2026-02-30' },
      { check: 'robust-input', reason: 'x', until: 'next week' },
      { check: 7, reason: true },
      { check: 'robust-input' },
    ]);
    const byKey = new Map(p.map((x) => [x.key, x.message]));
    expect(byKey.get('suppress[0].tol')).toMatch(/unknown key \(did you mean tool\?\)/);
    expect(byKey.get('suppress[1].check')).toMatch(/unknown check id "robust-inpt" \(did you mean robust-input\?\)/);
    expect(byKey.get('suppress[2].messageId')).toMatch(/robust-input has no message id "internal-eror" \(did you mean internal-error\?\)/);
    expect(byKey.get('suppress[3].reason')).toMatch(/expected a non-empty string/);
    expect(byKey.get('suppress[4].until')).toMatch(/expected an ISO date such as 2026-12-31.*got "2026-02-30"/);
    expect(byKey.get('suppress[5].until')).toMatch(/got "next week"/);
    expect(byKey.get('suppress[6].check')).toMatch(/expected a string, got 7/);
    expect(byKey.get('suppress[6].reason')).toMatch(/expected a non-empty string, got true/);
    expect(byKey.get('suppress[7].reason')).toMatch(/required/);
    expect(problems({ check: 'robust-input', reason: 'x' })[0]).toMatchObject({ key: 'suppress', message: expect.stringMatching(/expected a list/) });
  });

  it('reads a YAML file whose until is an unquoted date', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sealmark-suppress-yaml-'));
    try {
      writeFileSync(join(dir, 'sealmark.config.yaml'), 'suppress:\n  - check: robust-input\n    reason: known\n    until: 2026-12-31\n');
      expect(loadConfig({ cwd: dir, registry }).suppress).toEqual([{ check: 'robust-input', reason: 'known', until: '2026-12-31' }]);
      writeFileSync(join(dir, 'sealmark.config.yaml'), 'suppress:\n  - check: robust-input\n    reason: known\n    until: 31/12/2026\n');
      expect(() => loadConfig({ cwd: dir, registry })).toThrow(/sealmark\.config\.yaml: suppress\[0\]\.until: expected an ISO date/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const f = (checkId: string, messageId: string, level: ReportFinding['level'], tool?: string): ReportFinding => ({
  checkId,
  messageId,
  level,
  data: {},
  message: messageId,
  evidence: {},
  fingerprint: `${checkId}/${messageId}/${tool ?? ''}`,
  ...(tool !== undefined ? { tool } : {}),
});
const check = (id: string, verdict: ReportCheck['verdict'], findings: ReportFinding[]): ReportCheck => ({
  id,
  verdict,
  findings,
  notes: [],
  title: id,
  pack: 'core',
  weight: 'scored',
  severity: 'error',
});
const NOW = new Date('2026-06-15T12:00:00Z');

describe('applySuppressions', () => {
  const checks = [
    check('robust-input', 'fail', [f('robust-input', 'crash', 'fail', 'a'), f('robust-input', 'internal-error', 'partial', 'b')]),
    check('annotations', 'partial', [f('annotations', 'no-read-only-hint', 'partial', 'a')]),
    check('handshake', 'fail', []),
  ];

  it('suppresses matched findings, keeps them, and recomputes the verdict from the rest', () => {
    const { checks: out, suppressions } = applySuppressions(checks, [{ check: 'robust-input', tool: 'a', reason: 'known crash', until: '2026-06-15' }], { apply: true, now: NOW });
    const ri = out.find((c) => c.id === 'robust-input')!;
    expect(ri.findings).toHaveLength(2);
    expect(ri.findings[0]!.suppressed).toEqual({ reason: 'known crash', until: '2026-06-15' });
    expect(ri.findings[1]!.suppressed).toBeUndefined();
    expect(ri.verdict).toBe('partial');
    expect(ri.notes.at(-1)).toMatch(/1 finding suppressed by the config: partial without them \(fail with them\)/);
    expect(out.find((c) => c.id === 'annotations')).toBe(checks[1]);
    expect(suppressions).toEqual({ applied: true, entries: [expect.objectContaining({ index: 0, status: 'applied', matched: 1 })] });
    // The inputs are not changed.
    expect(checks[0]!.verdict).toBe('fail');
    expect(checks[0]!.findings[0]!.suppressed).toBeUndefined();
  });

  it('matches by message id; every finding of a check without tool or message id; pass when all are suppressed', () => {
    const byId = applySuppressions(checks, [{ check: 'robust-input', messageId: 'internal-error', reason: 'r' }], { apply: true, now: NOW });
    expect(byId.checks[0]!.verdict).toBe('fail');
    const all = applySuppressions(checks, [{ check: 'robust-input', reason: 'r' }, { check: 'annotations', reason: 'r' }], { apply: true, now: NOW });
    expect(all.checks.map((c) => c.verdict)).toEqual(['pass', 'pass', 'fail']);
  });

  it('an entry past its until date applies no more: expired, the verdict unchanged', () => {
    const { checks: out, suppressions } = applySuppressions(checks, [{ check: 'robust-input', reason: 'r', until: '2026-06-14' }], { apply: true, now: NOW });
    expect(out[0]).toBe(checks[0]);
    expect(suppressions.entries[0]).toMatchObject({ status: 'expired', matched: 2 });
    expect(suppressionWarning(suppressions.entries[0]!)).toBe('suppress[0] (robust-input) expired on 2026-06-14 and no longer applies (it matches 2 findings)');
  });

  it('an entry that matches nothing is unused; a check whose verdict does not come from its findings keeps it', () => {
    const { checks: out, suppressions } = applySuppressions(
      [check('handshake', 'fail', [f('handshake', 'init-timeout', 'partial')])],
      [{ check: 'handshake', reason: 'r' }, { check: 'tool-naming', tool: 'x', reason: 'r' }],
      { apply: true, now: NOW },
    );
    expect(out[0]!.verdict).toBe('fail');
    expect(out[0]!.notes.at(-1)).toMatch(/does not come from the findings alone/);
    expect(suppressions.entries.map((e) => e.status)).toEqual(['applied', 'unused']);
    expect(suppressionWarning(suppressions.entries[1]!)).toMatch(/^suppress\[1\] \(tool-naming, tool x\) matched no finding/);
  });

  it('with apply: false (--no-suppress) nothing is suppressed; entries are ignored, with what they match', () => {
    const { checks: out, suppressions } = applySuppressions(checks, [{ check: 'robust-input', reason: 'r' }], { apply: false, now: NOW });
    expect(out).toEqual(checks);
    expect(suppressions).toEqual({ applied: false, entries: [expect.objectContaining({ status: 'ignored', matched: 2 })] });
  });

  it('counts only the findings that count (fail, partial): an info finding (server-gone-before) is never matched', () => {
    const gone = f('robust-input', 'server-gone-before', 'info');
    const ri = [check('robust-input', 'fail', [f('robust-input', 'crash', 'fail', 'a'), f('robust-input', 'crash', 'fail', 'b'), f('robust-input', 'crash', 'fail', 'c'), gone])];
    const expired = applySuppressions(ri, [{ check: 'robust-input', reason: 'r', until: '2026-06-14' }], { apply: true, now: NOW });
    expect(expired.suppressions.entries[0]).toMatchObject({ status: 'expired', matched: 3 });
    expect(suppressionWarning(expired.suppressions.entries[0]!)).toBe('suppress[0] (robust-input) expired on 2026-06-14 and no longer applies (it matches 3 findings)');
    const live = applySuppressions(ri, [{ check: 'robust-input', reason: 'r' }], { apply: true, now: NOW });
    expect(live.checks[0]!.findings.map((x) => x.suppressed !== undefined)).toEqual([true, true, true, false]);
    expect(live.checks[0]!.verdict).toBe('pass');
    expect(live.checks[0]!.notes.at(-1)).toBe('3 findings suppressed by the config: pass without them (fail with them)');
    expect(live.suppressions.entries[0]).toMatchObject({ status: 'applied', matched: 3 });
    expect(applySuppressions(ri, [{ check: 'robust-input', reason: 'r' }], { apply: false, now: NOW }).suppressions.entries[0]).toMatchObject({ status: 'ignored', matched: 3 });
    // An entry that names only an info finding suppresses nothing: unused.
    const infoOnly = applySuppressions(ri, [{ check: 'robust-input', messageId: 'server-gone-before', reason: 'r' }], { apply: true, now: NOW });
    expect(infoOnly.suppressions.entries[0]).toMatchObject({ status: 'unused', matched: 0 });
  });

  it('isExpired: a date lasts to the end of its day (UTC); a date-time to its instant', () => {
    expect(isExpired(undefined, NOW)).toBe(false);
    expect(isExpired('2026-06-15', NOW)).toBe(false);
    expect(isExpired('2026-06-14', NOW)).toBe(true);
    expect(isExpired('2026-06-15T11:59:59Z', NOW)).toBe(true);
    expect(isExpired('2026-06-15T14:00:00+01:00', NOW)).toBe(false);
  });
});
