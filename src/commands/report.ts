/**
 * `sealmark report <saved.json>` (issue 6): re-renders a saved JSON report in any format, with
 * the same gates as `audit`, without starting the server. A saved `--client-config` run (a
 * multi-report) is re-rendered whole; its baseline is matched server by server.
 */
import { UsageError } from '../errors.js';
import { compareWithBaseline } from '../report/baseline.js';
import type { Report } from '../report/build.js';
import { loadSaved } from '../report/load.js';
import { isMultiReport, type MultiReport } from '../report/multi.js';
import { anyBelowGate, exitCode, parseGate, type Gate } from './gate.js';
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
  let saved = loadSaved(file, 'report');
  const baseline = opts.baseline === undefined ? undefined : loadSaved(opts.baseline, '--baseline');
  checkOutputs(plan);
  if (baseline) {
    if (isMultiReport(saved) !== isMultiReport(baseline)) throw new UsageError(`--baseline ${opts.baseline}: one of the two is a --client-config run and the other is not`);
    saved = isMultiReport(saved)
      ? { ...saved, servers: saved.servers.map((s) => ({ name: s.name, report: withBaseline(s.report, (baseline as MultiReport).servers.find((b) => b.name === s.name)?.report, opts.baseline!) })) }
      : withBaseline(saved, baseline as Report, opts.baseline!);
  }
  writeOutputs(saved, plan, { color: useColor(opts), verbose: opts.verbose === true, gateFailed: anyBelowGate(isMultiReport(saved) ? saved.servers.map((x) => x.report) : [saved], gate) });
  return combinedExit(saved, gate);
}

/** The exit code of a report, or of a multi-report: 1 when any server is below the gate, else 3 when any was not audited. */
export function combinedExit(saved: Report | MultiReport, gate: Gate): number {
  if (!isMultiReport(saved)) return exitCode(saved, gate);
  const codes = saved.servers.map((s) => exitCode(s.report, gate));
  return codes.includes(1) ? 1 : codes.includes(3) ? 3 : 0;
}

function withBaseline(report: Report, baseline: Report | undefined, file: string): Report {
  return baseline ? compareWithBaseline(report, baseline, file) : report;
}
