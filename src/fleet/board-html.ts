/**
 * The leaderboard's pages (issue 16): index.html, a table of every server's latest records sortable
 * by grade, pack, outcome and name; and a page per server with its latest records, the diff
 * between its two newest versions, its history, and its latest report as the HTML reporter draws
 * it. Self-contained like the HTML report: the reporter's page frame (inline CSS, one inline
 * script allowed by hash, a Content-Security-Policy that lets no request leave) and its `html`
 * template, which escapes every value: server names, reasons and versions come from strangers.
 *
 * Outcomes that are not grades show as their word with their reason, never as an F, and sort apart
 * from the grades (after them, whichever way the grade column is sorted).
 */
import type { FindingRef, Report } from '../report/build.js';
import { Html, html, letterClass, page, reportBody } from '../report/reporters/html.js';
import { badgeSvg } from './badge.js';
import type { BoardEntry, BoardIndex, ServerView } from './board.js';
import type { RecordDiff } from './diff.js';
import { compareRulers, rulerLabel } from './order.js';
import type { FleetOutcome, FleetRecord, Ruler } from './types.js';

/** The grade cell: letter and percent (tagged when only the listing was graded), or the outcome word and its reason. */
function gradeCell(e: Pick<BoardEntry, 'outcome' | 'reason' | 'grade' | 'listOnly'>): Html {
  if (e.outcome !== 'graded') return html`<span class="outcome" data-outcome="${e.outcome}">${e.outcome}</span><div class="reason">${e.reason ?? ''}</div>`;
  const g = e.grade;
  const grade = html`<span class="letter ${letterClass(g?.letter ?? null)}">${g?.letter ?? 'n/a'}</span> <span class="pct">${g?.percent != null ? `${g.percent}%` : ''}</span>`;
  return e.listOnly ? html`${grade} <span class="tag list-only" title="${LIST_ONLY_TITLE}">list only</span>` : grade;
}

/** What the `list only` tag of a remote's grade means. */
const LIST_ONLY_TITLE = 'a remote: listed, linted and its handshake graded; its tools were not called (they run on someone else\'s machine; fleet run --call-remotes calls them)';

/** An ISO 8601 time to the minute, for a table cell (`2026-12-01 10:04`); the full time goes in its title. */
function when(iso: string): string {
  return iso.slice(0, 16).replace('T', ' ');
}

function pct(v: number | null | undefined): string {
  return v === null || v === undefined ? '–' : `${v}%`;
}

/** A number as a data attribute: empty for none. */
function num(v: number | null | undefined): string {
  return v === null || v === undefined ? '' : String(v);
}

/**
 * Initial row order, the same as the script's grade sort, descending: graded rows by percent (best
 * first), graded rows without a percent after them, then the other outcomes by word; ties by name.
 */
function byGrade(a: BoardEntry, b: BoardEntry): number {
  const group = (e: BoardEntry): number => (e.outcome !== 'graded' ? 2 : e.grade?.percent == null ? 1 : 0);
  return (
    group(a) - group(b) ||
    (group(a) === 0 ? b.grade!.percent! - a.grade!.percent! : 0) ||
    (group(a) === 2 ? a.outcome.localeCompare(b.outcome) : 0) ||
    a.server.localeCompare(b.server, 'en') ||
    a.targetKey.localeCompare(b.targetKey, 'en')
  );
}

/** Renders index.html from the index. */
export function renderLeaderboard(index: BoardIndex): string {
  const rows = index.servers.flatMap((s) => s.latest).sort(byGrade);
  // A grade compares only under the same ruler: rows graded by an older one say so.
  const newest = rows.map((e) => e.ruler).reduce<Ruler | null>((a, b) => (a === null || compareRulers(b, a) > 0 ? b : a), null);
  const older = (e: BoardEntry): boolean => newest !== null && compareRulers(e.ruler, newest) < 0;
  const counts = Object.entries(index.counts).sort(([a], [b]) => (a === 'graded' ? -1 : b === 'graded' ? 1 : a.localeCompare(b)));
  const sortable = (key: string, label: string, sort: 'ascending' | 'descending' | 'none' = 'none'): Html =>
    html`<th data-sort="${key}" aria-sort="${sort}"><button type="button">${label}</button></th>`;
  const body = html`<main>
<header class="top"><div class="meta"><h1>sealmark leaderboard</h1>
<p class="muted">${index.servers.length} servers · ${rows.length} targets · generated ${index.generatedAt}</p>
<p id="counts">${counts.map(([o, n]) => html`<span class="count" data-outcome="${o}">${o} <b>${n}</b></span> `)}</p>
<p class="muted">Outcomes that are not grades are shown as their word with their reason, never as an F. A grade compares only with grades under the same ruler.</p></div></header>
<table class="board" id="board">
<thead><tr>${sortable('name', 'server')}<th>version</th><th>target</th>${sortable('grade', 'grade', 'descending')}${index.packs.map((p, i) => sortable(`p${i}`, p))}${sortable('outcome', 'outcome')}<th title="sealmark version / methodology version">ruler</th><th>finished (UTC)</th></tr></thead>
<tbody>
${rows.map(
  (e) => html`<tr data-name="${e.server}" data-target="${e.targetKey}" data-outcome="${e.outcome}" data-grade="${e.outcome === 'graded' ? num(e.grade?.percent) : ''}"${index.packs.map((p, i) => html` data-p${i}="${e.outcome === 'graded' ? num(e.packs[p]) : ''}"`)}>
<td class="name"><a href="${e.page}">${e.server}</a></td><td>${e.version ?? '–'}</td><td class="target">${e.target}</td>
<td class="grade-cell">${gradeCell(e)}</td>${index.packs.map((p) => html`<td class="num">${e.outcome === 'graded' ? pct(e.packs[p]) : ''}</td>`)}
<td class="o">${e.outcome}</td><td class="ruler" title="${rulerLabel(e.ruler)}">${e.ruler.sealmarkVersion} / ${e.ruler.methodologyVersion}${older(e) && html` <span class="tag older-ruler">older ruler</span>`}</td><td class="when" title="${e.finishedAt}">${when(e.finishedAt)}</td></tr>
`,
)}</tbody></table>
</main>`;
  return page('sealmark leaderboard', body, SORT_SCRIPT, BOARD_CSS);
}

/**
 * Renders servers/<slug>.html for one server: its badge inline (badgeSvg escapes its own parts, so
 * it goes in as finished markup; an inline SVG needs no request), latest records, diff, history and
 * the latest report of its main target.
 */
export function renderServerPage(view: ServerView, index: BoardIndex): string {
  const { entry, records, diff, main } = view;
  const body = html`<main>
<p class="crumbs"><a href="../index.html">← leaderboard</a></p>
<header class="top"><div class="meta"><h1 id="server-name">${entry.server}</h1>
<p class="badge-line">${new Html(badgeSvg(entry.server, main))} <span class="muted">badge: <code>${entry.badge}</code></span></p>
<p class="muted">${entry.versions.length} version${entry.versions.length === 1 ? '' : 's'} · ${records.length} record${records.length === 1 ? '' : 's'}</p></div></header>
<section id="latest"><h2>Latest</h2>
<table class="board"><thead><tr><th>target</th><th>version</th><th>grade</th>${index.packs.map((p) => html`<th>${p}</th>`)}<th>ruler</th><th>finished (UTC)</th></tr></thead><tbody>
${entry.latest.map((e) => html`<tr data-target="${e.targetKey}"><td>${e.target}</td><td>${e.version ?? '–'}</td><td class="grade-cell">${gradeCell(e)}</td>${index.packs.map((p) => html`<td class="num">${e.outcome === 'graded' ? pct(e.packs[p]) : ''}</td>`)}<td class="ruler">${rulerLabel(e.ruler)}</td><td class="when" title="${e.finishedAt}">${when(e.finishedAt)}</td></tr>`)}
</tbody></table></section>
${diff ? diffSection(diff.older, diff.newer, diff.diff) : html`<section id="diff"><h2>Changes</h2><p class="muted">only one record: nothing to compare yet</p></section>`}
<section id="history"><h2>History</h2>
<table class="board" id="history-table"><thead><tr><th>version</th><th>target</th><th>ruler</th><th>grade</th><th>finished (UTC)</th></tr></thead><tbody>
${entry.history.map((h) => html`<tr data-version="${h.version ?? ''}" data-outcome="${h.outcome}"><td>${h.version ?? '–'}</td><td>${h.target}</td><td class="ruler">${rulerLabel(h.ruler)}</td><td class="grade-cell">${gradeCell(h)}</td><td class="when" title="${h.finishedAt}">${when(h.finishedAt)}</td></tr>`)}
</tbody></table></section>
<section id="report"><h2>Latest report <span class="muted">· ${main.version ?? '–'} · ${main.target.label}</span></h2>
${main.outcome !== 'graded' && html`<section class="banner" id="outcome"><h2>${main.outcome}</h2><p>${main.reason ?? ''}</p>${main.report && html`<p class="muted">not a grade: the report below is its evidence</p>`}</section>`}
${main.report ? reportBody(shownReport(main)) : html`<p class="muted">no report: the job ended before an audit produced one</p>`}
</section>
</main>`;
  return page(`sealmark leaderboard: ${entry.server}`, body, undefined, BOARD_CSS);
}

/**
 * The report as a server page shows it: for an outcome that is not a grade (a `handshake` fail
 * has a report), without its letter and percents, so no F is ever drawn for it.
 */
function shownReport(r: FleetRecord): Report {
  const report = r.report!;
  if (r.outcome === 'graded') return report;
  const g = report.grade;
  return { ...report, grade: { ...g, letter: null, percent: null, caps: [], packs: g.packs.map((p) => ({ ...p, letter: null, percent: null })) } };
}

function verdictChip(v: string | null): Html {
  return v === null ? html`<span class="muted">absent</span>` : html`<span class="verdict v-${v === 'n/a' ? 'na' : v}">${v}</span>`;
}

function findingList(id: string, refs: FindingRef[]): Html {
  if (refs.length === 0) return html`<ul id="${id}" class="fps"><li class="muted">none</li></ul>`;
  return html`<ul id="${id}" class="fps">${refs.map(
    (f) => html`<li data-fingerprint="${f.fingerprint}" data-check="${f.checkId}"><span class="level l-${f.level}">${f.level}</span> <code>${f.checkId}</code> <code>${f.messageId}</code>${f.tool !== undefined && html` · tool <code>${f.tool}</code>`} ${f.message}<br><code class="fp muted">${f.fingerprint}</code></li>`,
  )}</ul>`;
}

function side(r: FleetRecord): string {
  return `${r.version ?? '(no version)'} (${r.outcome === 'graded' ? `${r.grade?.letter ?? 'n/a'}${r.grade?.percent != null ? ` ${r.grade.percent}%` : ''}` : r.outcome}, ${rulerLabel(r.ruler)}, ${r.finishedAt})`;
}

function diffSection(older: FleetRecord, newer: FleetRecord, d: RecordDiff): Html {
  const f = d.findings;
  return html`<section id="diff"><h2>Changes</h2>
<p>from <b class="from">${side(older)}</b> to <b class="to">${side(newer)}</b></p>
${!d.sameRuler && html`<p class="cap warn" id="diff-ruler">the rulers differ: a verdict may have changed because the rules did</p>`}
${f ? html`<p id="diff-summary"><b>${f.new.length} new</b> · ${f.fixed.length} fixed · ${f.unchanged} unchanged findings</p>` : html`<p id="diff-summary" class="muted">${d.why ?? ''}</p>`}
<h3>Checks whose verdict changed</h3>
${d.checks.length === 0 ? html`<p class="muted" id="diff-checks">none</p>` : html`<table class="board" id="diff-checks"><thead><tr><th>check</th><th>pack</th><th>was</th><th>now</th></tr></thead><tbody>${d.checks.map((c) => html`<tr data-check="${c.id}"><td><code>${c.id}</code> ${c.title}</td><td>${c.pack}</td><td>${verdictChip(c.from)}</td><td>${verdictChip(c.to)}</td></tr>`)}</tbody></table>`}
${f && html`<h3>New findings</h3>${findingList('diff-new', f.new)}<h3>Fixed findings</h3>${findingList('diff-fixed', f.fixed)}`}
</section>`;
}

/** The outcomes in the order the outcome column sorts them: the grade first. */
export const OUTCOME_ORDER: FleetOutcome[] = ['graded', 'handshake', 'needs-config', 'fetch-failed', 'fails-offline', 'auth-gated', 'not-runnable', 'timeout'];

/**
 * Sorts the leaderboard's rows when a header is clicked. The first click on grade or a pack sorts
 * best first, on name or outcome A to Z; the next click reverses. Rows without a number for the
 * column (an outcome that is not a grade, a pack that did not apply) stay after the others either
 * way; ties go by name. The page works without it (rows come sorted by grade).
 */
const SORT_SCRIPT = `
(function () {
  var table = document.getElementById('board');
  if (!table) return;
  var tbody = table.tBodies[0];
  var ORDER = ${JSON.stringify(OUTCOME_ORDER)};
  function numOf(tr, key) { var v = tr.getAttribute('data-' + key); return v === null || v === '' ? null : Number(v); }
  function byName(a, b) { return (a.getAttribute('data-name') || '').localeCompare(b.getAttribute('data-name') || '', 'en') || (a.getAttribute('data-target') || '').localeCompare(b.getAttribute('data-target') || '', 'en'); }
  function group(tr, key) { if (tr.getAttribute('data-outcome') !== 'graded') return 2; return numOf(tr, key) === null ? 1 : 0; }
  function orNone(n) { return n === null ? -1 : n; }
  function rank(o) { var i = ORDER.indexOf(o); return i < 0 ? ORDER.length : i; }
  function compare(key, desc) {
    var sign = desc ? -1 : 1;
    return function (a, b) {
      if (key === 'name') return sign * byName(a, b);
      if (key === 'outcome') {
        var oa = a.getAttribute('data-outcome'), ob = b.getAttribute('data-outcome');
        return sign * (rank(oa) - rank(ob) || oa.localeCompare(ob)) || orNone(numOf(b, 'grade')) - orNone(numOf(a, 'grade')) || byName(a, b);
      }
      var ga = group(a, key), gb = group(b, key);
      if (ga !== gb) return ga - gb;
      if (ga === 0) { var d = numOf(a, key) - numOf(b, key); if (d !== 0) return sign * d; }
      if (ga === 2) { var o = a.getAttribute('data-outcome').localeCompare(b.getAttribute('data-outcome')); if (o !== 0) return o; }
      return byName(a, b);
    };
  }
  table.querySelectorAll('th[data-sort]').forEach(function (th) {
    th.querySelector('button').addEventListener('click', function () {
      var key = th.getAttribute('data-sort');
      var natural = key === 'name' || key === 'outcome' ? 'ascending' : 'descending';
      var now = th.getAttribute('aria-sort');
      var next = now === 'none' ? natural : now === 'ascending' ? 'descending' : 'ascending';
      table.querySelectorAll('th[data-sort]').forEach(function (h) { h.setAttribute('aria-sort', 'none'); });
      th.setAttribute('aria-sort', next);
      var rows = Array.prototype.slice.call(tbody.rows);
      rows.sort(compare(key, next === 'descending'));
      rows.forEach(function (r) { tbody.appendChild(r); });
    });
  });
})();
`;

const BOARD_CSS = `
table.board{border-collapse:collapse;width:100%;margin:12px 0}
table.board th,table.board td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
table.board td.num{text-align:right;font-variant-numeric:tabular-nums}
th[data-sort] button{border:0;background:none;padding:0;font-weight:700;color:var(--accent)}
th[aria-sort=ascending] button::after{content:" ▲"}th[aria-sort=descending] button::after{content:" ▼"}
.letter{display:inline-block;min-width:22px;text-align:center;font-weight:800;border-radius:4px;padding:0 4px}
.outcome{display:inline-block;font-weight:700;font-size:12px;padding:1px 6px;border-radius:4px;background:var(--na);color:#fff}
.grade-cell{white-space:nowrap}.reason{white-space:normal;font-size:12.5px;color:var(--muted);overflow-wrap:anywhere}
td.target{font-size:12.5px;color:var(--muted);overflow-wrap:anywhere}
td.ruler,td.when{white-space:nowrap;font-size:12.5px;color:var(--muted)}
#counts .count{margin-right:12px}
.crumbs{margin:0 0 8px}.crumbs a,td.name a{color:var(--accent)}
section#latest,section#diff,section#history,section#report{margin-top:22px}
h3{font-size:15px;margin:14px 0 4px}
ul.fps{margin:4px 0;padding-left:18px}ul.fps li{margin:3px 0;overflow-wrap:anywhere}
.badge-line svg{vertical-align:middle}
`;
