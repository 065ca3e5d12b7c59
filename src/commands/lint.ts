/**
 * `sealmark lint <tools.json>` (SPEC section 2, issue 7): the static checks on a saved tools/list
 * result or a bare tools array; no server is started. Same outputs and gates as `audit`.
 */
import { readFileSync } from 'node:fs';
import { lint } from '../lint.js';
import { compareWithBaseline } from '../report/baseline.js';
import { loadSavedReport } from '../report/load.js';
import { UsageError, resolveConfig } from './common.js';
import { belowGate, exitCode, parseGate } from './gate.js';
import { checkOutputs, planOutputs, useColor, writeOutputs } from './outputs.js';

export interface LintCliOptions {
  config?: string;
  format?: string[];
  output?: string[];
  failUnder?: string;
  baseline?: string;
  only?: string;
  skip?: string;
  verbose?: boolean;
  color?: boolean;
}

/** Runs `sealmark lint`; resolves to the exit code (3 when the file lists no tools). Throws UsageError / ConfigError. */
export function runLint(file: string, opts: LintCliOptions): number {
  const gate = parseGate(opts.failUnder);
  const plan = planOutputs(opts.format ?? [], opts.output ?? []);
  const baseline = opts.baseline === undefined ? undefined : loadSavedReport(opts.baseline, '--baseline');
  const config = resolveConfig(opts, process.cwd());
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`lint ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let listing: unknown;
  try {
    // A byte order mark some editors write is no part of the JSON.
    listing = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new UsageError(`lint ${file}: not JSON (${(err as Error).message})`);
  }
  checkOutputs(plan);
  let report;
  try {
    report = lint(listing, { config, file });
  } catch (err) {
    if (err instanceof UsageError) throw new UsageError(`lint ${file}: ${err.message}`);
    throw err;
  }
  if (baseline) report = compareWithBaseline(report, baseline, opts.baseline!);
  writeOutputs(report, plan, { color: useColor(opts), verbose: opts.verbose === true, gateFailed: belowGate(report, gate) });
  return exitCode(report, gate);
}
