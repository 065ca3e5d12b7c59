/** Fingerprints and the baseline comparison (src/report/fingerprint.ts, src/report/baseline.ts) on hand-made reports. */
import { describe, expect, it } from 'vitest';
import { compareWithBaseline } from '../../src/report/baseline.js';
import type { Report, ReportFinding } from '../../src/report/build.js';
import { fingerprintOf } from '../../src/report/fingerprint.js';

function finding(over: Partial<ReportFinding>): ReportFinding {
  return { checkId: 'robust-input', messageId: 'internal-error', message: 'm', data: {}, level: 'partial', evidence: {}, fingerprint: '', ...over };
}

/** A report holding `findings` under one check, with tools listed in `tools` order. */
function report(findings: ReportFinding[], tools = ['a', 'b']): Report {
  return {
    generatedAt: '2026-11-30T00:00:00.000Z',
    status: 'audited',
    tools: tools.map((name, index) => ({ name, index })),
    calls: [],
    checks: [{ id: 'robust-input', verdict: 'partial', findings, notes: [], title: 't', pack: 'core', weight: 'scored', severity: 'warning' }],
  } as unknown as Report;
}


describe('fingerprintOf', () => {
  it('names check, message, tool, schema path by tool name, and the identity keys of the data; never the rest of the data or the calls', () => {
    const r = report([], ['x', 'get_note']);
    const f = finding({ tool: 'get_note', data: { text: 'TypeError at 12:7', param: 'id', probe: 'nulls' }, evidence: { calls: [7, 8], schemaPaths: ['tools[1].inputSchema'] } });
    expect(fingerprintOf(f, r)).toBe('robust-input/internal-error/get_note/@tool:get_note.inputSchema/param=id');
    // Another wording, another first call, another probe: the same finding.
    expect(fingerprintOf(finding({ ...f, data: { text: 'another wording', param: 'id', probe: 'wrong-types' }, evidence: { ...f.evidence, calls: [3] }, message: 'x' }), r)).toBe(fingerprintOf(f, r));
    // Another property: another finding.
    expect(fingerprintOf(finding({ ...f, data: { param: 'limit' } }), r)).not.toBe(fingerprintOf(f, r));
  });

  it('is the same when the listing is reordered', () => {
    const before = report([], ['a', 'b']);
    const after = report([], ['b', 'a']);
    const fb = finding({ tool: 'b', evidence: { schemaPaths: ['tools[1].annotations'] } });
    const fa = finding({ tool: 'b', evidence: { schemaPaths: ['tools[0].annotations'] } });
    expect(fingerprintOf(fa, after)).toBe(fingerprintOf(fb, before));
  });
});

describe('compareWithBaseline', () => {
  it('marks new and unchanged, lists fixed, counts repeats one for one, and leaves info findings alone', () => {
    const base = report([finding({ tool: 'a' }), finding({ tool: 'a' }), finding({ tool: 'b' })]);
    const now = report([finding({ tool: 'a' }), finding({ tool: 'c', level: 'fail' }), finding({ tool: 'a', level: 'info', messageId: 'needs-probe' })]);
    const out = compareWithBaseline(now, base, 'base.json');
    expect(out.checks[0]!.findings.map((f) => f.baselineState)).toEqual(['unchanged', 'new', undefined]);
    expect(out.baseline!.unchanged).toBe(1);
    expect(out.baseline!.new.map((f) => f.tool)).toEqual(['c']);
    expect(out.baseline!.fixed.map((f) => f.tool).sort()).toEqual(['a', 'b']);
    expect(out.baseline!.file).toBe('base.json');
    // A check that did not run (or a run that was not audited) fixed nothing.
    const skipped = compareWithBaseline({ ...now, checks: [{ ...now.checks[0]!, verdict: 'n/a', findings: [] }] }, base, 'base.json');
    expect(skipped.baseline!.fixed).toEqual([]);
    expect(compareWithBaseline({ ...now, status: 'not-audited' } as Report, base, 'b').baseline!.fixed).toEqual([]);
    // The inputs are not changed.
    expect(now.baseline).toBeUndefined();
    expect(now.checks[0]!.findings[0]!.baselineState).toBeUndefined();
  });
});
