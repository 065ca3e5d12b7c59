/**
 * A server's SVG badge (SPEC section 10): a shields.io-style flat badge, `sealmark | B` in the
 * letter's colour, or `sealmark | needs-config` (the outcome word) in grey: an outcome that is not
 * a grade is never shown as an F. Deterministic (the same record gives the same bytes), every text
 * escaped, no external reference (no font, image or link), so it is safe to serve as a file.
 */
import { escapeHtml } from '../report/reporters/html.js';
import type { FleetRecord } from './types.js';

/** Badge colours by letter (shields' brightgreen, green, yellow, orange, red); grey for the rest. */
export const BADGE_COLOURS: Record<string, string> = { A: '#4c1', B: '#97ca00', C: '#dfb317', D: '#fe7d37', F: '#e05d44' };
/** The colour of an outcome that is not a grade, and of a grade without a letter. */
export const BADGE_GREY = '#9f9f9f';

/**
 * What a badge says for a record: the letter for a graded record (`n/a` when no scored check
 * applied; followed by `list only` for a remote whose tools were not called), else the outcome
 * word (`needs-config`, `timeout` …), and its colour.
 */
export function badgeValue(r: Pick<FleetRecord, 'outcome' | 'grade' | 'listOnly'>): { text: string; colour: string } {
  if (r.outcome !== 'graded') return { text: r.outcome, colour: BADGE_GREY };
  const letter = r.grade?.letter ?? null;
  const scope = r.listOnly ? ' list only' : '';
  return letter ? { text: `${letter}${scope}`, colour: BADGE_COLOURS[letter] ?? BADGE_GREY } : { text: `n/a${scope}`, colour: BADGE_GREY };
}

/** Rough widths (px) of Verdana 11px, as shields measures: narrow, wide and the rest. */
function textWidth(s: string): number {
  let w = 0;
  for (const ch of s) {
    if ('ijlt.,:;|!\'I1 f-r'.includes(ch)) w += 4;
    else if ('mwMW'.includes(ch)) w += 10;
    else if (/[A-Z0-9]/.test(ch)) w += 7.5;
    else w += 6.5;
  }
  return Math.round(w);
}

/**
 * The badge of `record` for `server` as SVG text (20 px high, width from the texts). The server's
 * name goes only into `<title>` and `aria-label`, escaped; the value is {@link badgeValue}.
 */
export function badgeSvg(server: string, record: Pick<FleetRecord, 'outcome' | 'grade' | 'listOnly'>): string {
  const label = 'sealmark';
  const { text, colour } = badgeValue(record);
  const lw = textWidth(label) + 10;
  const rw = textWidth(text) + 10;
  const w = lw + rw;
  const title = escapeHtml(`sealmark: ${server}: ${text}`);
  const v = escapeHtml(text);
  // Text is drawn at 10x and scaled down, as shields does, for even rendering of small sizes.
  const lx = (lw / 2) * 10;
  const rx = (lw + rw / 2) * 10;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="20" role="img" aria-label="${title}">
<title>${title}</title>
<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>
<clipPath id="r"><rect width="${w}" height="20" rx="3" fill="#fff"/></clipPath>
<g clip-path="url(#r)"><rect width="${lw}" height="20" fill="#555"/><rect x="${lw}" width="${rw}" height="20" fill="${colour}"/><rect width="${w}" height="20" fill="url(#s)"/></g>
<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="110">
<text x="${lx}" y="150" fill="#010101" fill-opacity=".3" transform="scale(.1)" textLength="${(lw - 10) * 10}">${label}</text><text x="${lx}" y="140" transform="scale(.1)" textLength="${(lw - 10) * 10}">${label}</text>
<text x="${rx}" y="150" fill="#010101" fill-opacity=".3" transform="scale(.1)" textLength="${(rw - 10) * 10}">${v}</text><text x="${rx}" y="140" transform="scale(.1)" textLength="${(rw - 10) * 10}">${v}</text>
</g>
</svg>
`;
}
