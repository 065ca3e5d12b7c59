/**
 * `sealmark report <saved.json>` (issue 6): re-renders a saved JSON report in any format, with
 * the same gates as `audit`, without starting the server.
 */
import { compareWithBaseline } from '../report/baseline.js';
import { loadSavedReport } from '../report/load.js';
import { exitCode, parseGate } from './gate.js';
import { checkOutputs, planOutputs, useColor, writeOutputs } from './outputs.js';

export interface ReportCliOptions {
  format?: string[];
  output?: string[];
  failUnder?: string;
  baseline?: string;
  verbose?: boolean;
  color?: boolean;
}

/** Runs `sealmark report`; resolves to the exit code of the saved run under the given gates. */
export function runReport(file: string, opts: ReportCliOptions): number {
  const gate = parseGate(opts.failUnder);
  const plan = planOutputs(opts.format ?? [], opts.output ?? []);
  let report = loadSavedReport(file, 'report');
  const baseline = opts.baseline === undefined ? undefined : loadSavedReport(opts.baseline, '--baseline');
  checkOutputs(plan);
  if (baseline) report = compareWithBaseline(report, baseline, opts.baseline!);
  writeOutputs(report, plan, { color: useColor(opts), verbose: opts.verbose === true });
  return exitCode(report, gate);
}
