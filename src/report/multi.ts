/**
 * The reports of a `--client-config` run (issue 7): one report per server entry, in file order,
 * with a summary of grades. Rendered by every format: text and HTML in sections with a summary
 * table, JSON as this object, SARIF as one run per server, JUnit with suites named
 * `<server>/<check>`.
 */
import { allFindings, targetLabel, type Report } from './build.js';
import { REPORT_SCHEMA_VERSION } from './build.js';

/** Every server's report from one client configuration file. */
export interface MultiReport {
  schemaVersion: number;
  /** Tells this object from a single report. */
  kind: 'client-config';
  /** The configuration file as given. */
  file: string;
  generatedAt: string;
  servers: { name: string; report: Report }[];
}

/** One row of the summary table. */
export interface SummaryRow {
  name: string;
  target: string;
  status: Report['status'];
  letter: string | null;
  percent: number | null;
  fail: number;
  partial: number;
}

/** Builds the multi-report of `servers` read from `file`. */
export function multiReport(file: string, servers: { name: string; report: Report }[]): MultiReport {
  return { schemaVersion: REPORT_SCHEMA_VERSION, kind: 'client-config', file, generatedAt: new Date().toISOString(), servers };
}

/** The summary table: each server's grade, status and counts of failing and partial findings. */
export function summaryRows(m: MultiReport): SummaryRow[] {
  return m.servers.map(({ name, report }) => {
    // Suppressed findings are not counted (SPEC section 7).
    const f = allFindings(report).filter((x) => !x.suppressed);
    return {
      name,
      target: targetLabel(report.target),
      status: report.status,
      letter: report.status === 'audited' ? report.grade.letter : null,
      percent: report.status === 'audited' ? report.grade.percent : null,
      fail: f.filter((x) => x.level === 'fail').length,
      partial: f.filter((x) => x.level === 'partial').length,
    };
  });
}

/** True for a multi-report (a saved JSON may hold either shape). */
export function isMultiReport(v: unknown): v is MultiReport {
  return typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'client-config' && Array.isArray((v as { servers?: unknown }).servers);
}
