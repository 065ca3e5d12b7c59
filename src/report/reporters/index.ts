/** Reporters by format name (STYLE, knip: a map from name to a plain function). */
import type { Report } from '../build.js';
import { summaryRows, type MultiReport } from '../multi.js';
import { renderHtml, renderHtmlMulti } from './html.js';
import { renderJson } from './json.js';
import { renderJunit, renderJunitMulti } from './junit.js';
import { renderSarif, renderSarifMulti } from './sarif.js';
import { renderText, safeText, type TextOptions } from './text.js';

/** The formats of `--format` (SPEC section 2). */
export const FORMATS = ['text', 'json', 'sarif', 'junit', 'html'] as const;
export type Format = (typeof FORMATS)[number];

/**
 * Options a reporter may read. `gateFailed`: the run's gate failed (its exit code is 1): JUnit then
 * writes partial findings as failures too (a CI page shows red exactly when the run is red).
 */
export type ReporterOptions = TextOptions & { gateFailed?: boolean };

export const reporters: Record<Format, (report: Report, opts: ReporterOptions) => string> = {
  text: renderText,
  json: (report) => renderJson(report),
  sarif: (report) => renderSarif(report),
  junit: (report, opts) => renderJunit(report, opts.gateFailed === true),
  html: (report) => renderHtml(report),
};

/** Reporters of a `--client-config` run, by format (see src/report/multi.ts). */
export const multiReporters: Record<Format, (m: MultiReport, opts: ReporterOptions) => string> = {
  text: (m, opts) => {
    const parts = m.servers.map(({ name, report }) => `━━ ${safeText(name)} ━━\n${renderText(report, opts)}`);
    const rows = summaryRows(m);
    const w = Math.max(6, ...rows.map((r) => safeText(r.name).length));
    const table = [
      `summary of ${safeText(m.file)}`,
      `${'server'.padEnd(w)}  grade  percent  status        fail  partial`,
      ...rows.map((r) => `${safeText(r.name).padEnd(w)}  ${(r.letter ?? '–').padEnd(5)}  ${(r.percent === null ? 'n/a' : `${r.percent}%`).padEnd(7)}  ${r.status.padEnd(12)}  ${String(r.fail).padStart(4)}  ${String(r.partial).padStart(7)}`),
    ];
    return parts.join('\n') + '\n' + table.join('\n') + '\n';
  },
  json: (m) => JSON.stringify(m, null, 2) + '\n',
  sarif: (m) => renderSarifMulti(m),
  junit: (m, opts) => renderJunitMulti(m, opts.gateFailed === true),
  html: (m) => renderHtmlMulti(m),
};
