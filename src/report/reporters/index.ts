/** Reporters by format name (STYLE, knip: a map from name to a plain function). */
import type { Report } from '../build.js';
import { renderHtml } from './html.js';
import { renderJson } from './json.js';
import { renderJunit } from './junit.js';
import { renderSarif } from './sarif.js';
import { renderText, type TextOptions } from './text.js';

/** The formats of `--format` (SPEC section 2). */
export const FORMATS = ['text', 'json', 'sarif', 'junit', 'html'] as const;
export type Format = (typeof FORMATS)[number];

/** Options a reporter may read; only the text reporter reads any. */
export type ReporterOptions = TextOptions;

export const reporters: Record<Format, (report: Report, opts: ReporterOptions) => string> = {
  text: renderText,
  json: (report) => renderJson(report),
  sarif: (report) => renderSarif(report),
  junit: (report) => renderJunit(report),
  html: (report) => renderHtml(report),
};
