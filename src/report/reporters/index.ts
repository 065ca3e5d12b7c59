/** Reporters by format name (STYLE, knip: a map from name to a plain function). */
import type { Report } from '../build.js';
import { renderJson } from './json.js';
import { renderText, type TextOptions } from './text.js';

export const FORMATS = ['text', 'json'] as const;
export type Format = (typeof FORMATS)[number];

export const reporters: Record<Format, (report: Report, opts: TextOptions) => string> = {
  text: renderText,
  json: (report) => renderJson(report),
};
