/**
 * The HTML reporter (SPEC section 8): one self-contained page, grouped like the text reporter (by
 * pack, failures first), each finding collapsed in a `<details>` with its evidence, the exact
 * request, the replay line and the transcript of the calls behind it.
 *
 * Self-contained means no network at all: inline `<style>`, one small inline `<script>` (copy
 * buttons, expand all; the page works without it), and a Content-Security-Policy of
 * `default-src 'none'` that lets only that script run (by its sha256) and no request leave.
 * Everything a server sent (tool names, messages, quotes, replies, stderr) goes through
 * {@link escapeHtml}: the `html` template below escapes every interpolated value unless it is
 * already built markup.
 */
import { createHash } from 'node:crypto';
import { eraWords } from '../../checks/handshake.js';
import { allFindings, coverageLines, targetLabel, type Report, type ReportCall, type ReportCheck, type ReportFinding } from '../build.js';
import { packs } from '../../packs.js';
import { capLowered } from '../../scoring.js';
import { summaryRows, type MultiReport } from '../multi.js';
import { suppressionWarning } from '../suppress.js';

/** Calls shown in a finding's transcript excerpt; the rest are counted. */
const MAX_CALLS_SHOWN = 5;
/** Width up to which a JSON object or array in a reply is printed on one line. */
const JSON_LINE = 100;

const RANK: Record<string, number> = { fail: 0, partial: 1, pass: 2, 'n/a': 3 };

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Escapes text for HTML element content and double- or single-quoted attribute values. Control
 * characters other than newline and tab, and bidirectional overrides, are shown as `\uXXXX` so a
 * server cannot reorder or hide what the reader sees (the same set as the text reporter's `safeText`).
 */
export function escapeHtml(s: string): string {
  return s
    .replace(/[&<>"']/g, (c) => ENTITIES[c]!)
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Markup that is already safe: built by {@link html} from escaped parts. */
export class Html {
  constructor(readonly text: string) {}
}
/** What {@link html} interpolates: markup as is, anything else escaped, arrays joined, null/false/undefined as nothing. */
export type Part = Html | string | number | null | undefined | false | readonly Part[];

/** Template tag: literal parts are markup, every interpolated value is escaped (arrays joined). */
export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  let out = strings[0]!;
  parts.forEach((p, i) => (out += fill(p) + strings[i + 1]!));
  return new Html(out);
}

function fill(p: Part): string {
  if (p === null || p === undefined || p === false) return '';
  if (p instanceof Html) return p.text;
  if (Array.isArray(p)) return (p as readonly Part[]).map(fill).join('');
  return escapeHtml(String(p));
}

/** Renders a report as one self-contained HTML page. */
export function renderHtml(report: Report): string {
  const s = report.protocol?.server;
  return page(`sealmark report: ${s?.name ?? targetLabel(report.target)}`, html`<main>
${reportBody(report)}
${footer(report)}
</main>`);
}

/**
 * Renders the reports of a `--client-config` run as one page: a table of the servers' grades,
 * then each server's report in a section of its own.
 */
export function renderHtmlMulti(m: MultiReport): string {
  const rows = summaryRows(m).map(
    (r, i) => html`<tr><td><a href="#server-${i}">${r.name}</a></td><td>${r.target}</td><td class="${letterClass(r.letter)}">${r.letter ?? '–'}</td><td>${r.percent === null ? 'n/a' : `${r.percent}%`}</td><td>${r.status}</td><td>${r.fail}</td><td>${r.partial}</td></tr>`,
  );
  const sections = m.servers.map((x, i) => html`<section class="server" id="server-${i}"><h1>${x.name}</h1>
${reportBody(x.report)}
</section>`);
  return page(`sealmark report: ${m.file}`, html`<main>
<header class="top"><div><h1>sealmark · ${m.file}</h1><p>${m.servers.length} servers from the client configuration</p></div></header>
<table class="summary"><thead><tr><th>server</th><th>target</th><th>grade</th><th>percent</th><th>status</th><th>failing</th><th>partial</th></tr></thead><tbody>${rows}</tbody></table>
${sections}
</main>`);
}

/**
 * The part of a page that shows one report: header (with `#grade-letter`), not-audited banner,
 * pack cards, packs with their checks and findings. Also the fleet leaderboard's server pages.
 */
export function reportBody(report: Report): Html {
  const calls = new Map(report.calls.map((c) => [c.seq, c]));
  return html`${header(report)}
${notAudited(report)}
${packCards(report)}
${packs.map((p) => packSection(report, p.id, p.title, calls))}`;
}

/**
 * A whole self-contained page: `title` (escaped), `body` markup, the report's CSS plus `css`, and
 * one inline `script` (the report's copy and expand-all script unless given), the only script the
 * page's Content-Security-Policy lets run (by its sha256); no request may leave the page.
 */
export function page(title: string, body: Html, script: string = SCRIPT, css = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${cspFor(script)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${CSS}${css}</style>
</head>
<body>
${body.text}
<script>${script}</script>
</body>
</html>
`;
}

/** The CSS class of a grade letter: `g-A` … `g-F`, or `g-none` for no letter. */
export function letterClass(letter: string | null): string {
  return letter ? `g-${letter}` : 'g-none';
}

function header(r: Report): Html {
  const g = r.grade;
  const p = r.protocol;
  const server = p ? `${p.server.name ?? '?'} ${p.server.version ?? ''}`.trimEnd() : null;
  const counts = countLevels(r);
  return html`<header class="top">
  <div class="grade ${letterClass(g.letter)}" title="overall grade">
    <span class="letter" id="grade-letter" data-letter="${g.letter ?? ''}">${g.letter ?? '–'}</span>
    <span class="pct" id="grade-percent">${g.percent !== null ? `${g.percent}%` : 'n/a'}</span>
  </div>
  <div class="meta">
    <h1>${server ?? 'MCP server'} ${!r.standard && html`<span class="badge warn" title="${r.nonStandardKeys.join(', ')}">non-standard</span>`}</h1>
    <p class="summary">${counts.fail} failing · ${counts.partial} partial findings${counts.suppressed > 0 && ` · ${counts.suppressed} suppressed`} · ${r.calls.length} calls · ${(r.durationMs / 1000).toFixed(1)} s</p>
    ${g.caps.filter((c) => capLowered(g, c)).map((c) => html`<p class="cap">capped at <b>${c.letter}</b>: <code>${c.check}</code> failed</p>`)}
    ${baseline(r)}
    ${suppressions(r)}
    ${!r.standard && html`<p class="cap warn">non-standard run: changed locked settings ${r.nonStandardKeys.map((k) => html`<code>${k}</code> `)}</p>`}
    <dl>
      <dt>target</dt><dd><code>${targetLabel(r.target)}</code></dd>
      ${r.target.package && html`<dt>package</dt><dd>${r.target.package.ecosystem} <code>${r.target.package.name}</code> ${r.target.package.version ?? ''} (via ${r.target.package.launcher})</dd>`}
      ${p && html`<dt>protocol</dt><dd>${p.version ?? '?'} (${eraWords(p.era)})</dd>`}
      <dt>sandbox</dt><dd>${r.sandbox.note}</dd>
      <dt>coverage</dt><dd>${r.coverage.level} · ${tools(r)}</dd>
      <dt>sealmark</dt><dd>${r.cliVersion} · methodology ${r.methodologyVersion} · ${r.generatedAt}</dd>
    </dl>
  </div>
</header>`;
}

function baseline(r: Report): Html | null {
  const b = r.baseline;
  if (!b) return null;
  return html`<p class="baseline">compared with <code>${b.file}</code> (${b.generatedAt}): <b>${b.new.length} new</b> · ${b.fixed.length} fixed · ${b.unchanged} unchanged
  ${b.fixed.length > 0 && html`<details class="inline"><summary>fixed</summary><ul>${b.fixed.map((f) => html`<li><code>${f.checkId}</code> <code>${f.messageId}</code> ${f.message}</li>`)}</ul></details>`}</p>`;
}

function tools(r: Report): Html {
  const exercised = r.coverage.tools.filter((t) => t.level === 'exercised').length;
  return html`<details class="inline"><summary>${r.tools.length} tools listed, ${exercised} exercised</summary><ul class="tools">${r.coverage.tools.map(
    (t) => html`<li><code>${t.name}</code> <span class="muted">${t.level}</span></li>`,
  )}</ul></details>`;
}

function notAudited(r: Report): Html | null {
  if (r.status !== 'not-audited') return null;
  const n = r.notAudited;
  return html`<section class="banner" id="not-audited">
  <h2>NOT AUDITED${n && html`: <code>${n.reason}</code>`}</h2>
  ${n && html`<p>${n.message}</p><p class="muted">not checked: ${n.notChecked.join(', ')}</p>`}
  ${r.stderrTail.trim() && html`<p class="muted">server stderr (last lines):</p><pre>${r.stderrTail.trim().split('\n').slice(-10).join('\n')}</pre>`}
</section>`;
}

function packCards(r: Report): Html {
  return html`<section class="packs">${packs.map((pack) => {
    const ps = r.grade.packs.find((x) => x.pack === pack.id);
    const inPack = r.checks.filter((c) => c.pack === pack.id);
    const n = (v: string): number => inPack.filter((c) => c.verdict === v).length;
    const letter = ps?.letter ?? null;
    return html`<a class="card" href="#pack-${pack.id}" data-pack="${pack.id}">
    <span class="card-grade ${letterClass(letter)}">${letter ?? 'n/a'}</span>
    <span class="card-body"><b>${pack.id}</b> ${ps && ps.percent !== null && `${ps.percent}%`}<br>
    <span class="muted">${pack.title}</span><br>
    <span class="tally">${inPack.length === 0 ? html`<span class="muted">not run</span>` : html`${['fail', 'partial', 'pass', 'n/a'].filter((v) => n(v) > 0).map((v, i) => html`${i > 0 && ' · '}<span class="t-${v === 'n/a' ? 'na' : v}">${n(v)} ${v}</span>`)}`}</span></span>
  </a>`;
  })}</section>`;
}

function packSection(r: Report, id: string, title: string, calls: Map<number, ReportCall>): Html | null {
  const inPack = r.checks.filter((c) => c.pack === id);
  if (inPack.length === 0) return null;
  const ps = r.grade.packs.find((p) => p.pack === id);
  const sorted = [...inPack].sort((x, y) => RANK[x.verdict]! - RANK[y.verdict]!);
  return html`<section class="pack" id="pack-${id}">
  <h2>${id} <span class="muted">· ${title}</span> <span class="pill ${letterClass(ps?.letter ?? null)}">${ps?.letter ? `${ps.letter} ${ps.percent}%` : 'n/a'}</span></h2>
  ${sorted.map((c) => check(c, calls))}
</section>`;
}

function check(c: ReportCheck, calls: Map<number, ReportCall>): Html {
  const cov = coverageLines(c);
  const graded = c.findings.filter((f) => f.level !== 'info');
  const info = c.findings.filter((f) => f.level === 'info');
  return html`<div class="check" id="check-${c.id}" data-verdict="${c.verdict}">
  <div class="check-head"><span class="verdict v-${c.verdict === 'n/a' ? 'na' : c.verdict}">${c.verdict}</span> <code class="id">${c.id}</code> ${c.title}
    <span class="tag">${c.weight}</span> <span class="tag sev-${c.severity}">${c.severity}</span></div>
  ${c.notes.length > 0 && html`<ul class="notes">${c.notes.map((n) => html`<li>${n}</li>`)}</ul>`}
  ${!!c.needsProbe?.length && html`<p class="notes">needs a <code>probes:</code> entry: ${c.needsProbe.join(', ')}</p>`}
  ${c.verdict !== 'n/a' && !!cov.summary && html`<p class="notes coverage">${cov.summary}</p>`}
  ${c.verdict !== 'n/a' && cov.notJudged.length > 0 && html`<ul class="notes">${cov.notJudged.map((n) => html`<li>${n}</li>`)}</ul>`}
  ${graded.map((f) => finding(f, calls))}
  ${info.length > 0 && html`<details class="infos"><summary>${info.length} informational finding${info.length > 1 ? 's' : ''}</summary>${info.map((f) => finding(f, calls))}</details>`}
</div>`;
}

function finding(f: ReportFinding, calls: Map<number, ReportCall>): Html {
  const e = f.evidence;
  const seqs = e.calls ?? [];
  return html`<details class="finding l-${f.level}" data-check="${f.checkId}" data-message-id="${f.messageId}" data-tool="${f.tool ?? ''}">
  <summary><span class="level l-${f.level}">${f.level}</span>${f.baselineState === 'new' && html` <span class="tag new">new</span>`}${f.suppressed && html` <span class="tag suppressed">suppressed</span>`} <code>${f.messageId}</code> ${f.message}</summary>
  <div class="finding-body">
    <dl>
      <dt>check</dt><dd><code>${f.checkId}</code> · message <code>${f.messageId}</code></dd>
      ${f.tool !== undefined && html`<dt>tool</dt><dd><code>${f.tool}</code></dd>`}
      ${f.suppressed && html`<dt>suppressed</dt><dd>${f.suppressed.reason}${f.suppressed.until && ` (until ${f.suppressed.until})`}</dd>`}
      ${!!e.schemaPaths?.length && html`<dt>schema</dt><dd>${e.schemaPaths.map((p) => html`<code>${p}</code> `)}</dd>`}
    </dl>
    ${!!e.quotes?.length && html`<div class="label">evidence</div>${e.quotes.map((q) => html`<pre class="quote">${q}</pre>`)}`}
    ${f.request !== undefined && html`<div class="label">request sent</div><pre class="request">${f.request}</pre>`}
    ${f.replay !== undefined && html`<div class="label">replay</div><div class="replay-line"><code class="replay" data-copy>${f.replay}</code></div>`}
    ${seqs.length > 0 && html`<div class="label">transcript (${seqs.length > MAX_CALLS_SHOWN ? `${MAX_CALLS_SHOWN} of ${seqs.length} calls` : `${seqs.length} call${seqs.length > 1 ? 's' : ''}`})</div>
    ${seqs.slice(0, MAX_CALLS_SHOWN).map((seq) => call(seq, calls.get(seq)))}`}
  </div>
</details>`;
}

function call(seq: number, c: ReportCall | undefined): Html {
  if (!c) return html`<div class="call"><div class="call-head">#${seq} <span class="muted">not in the report</span></div></div>`;
  return html`<div class="call" data-seq="${seq}">
  <div class="call-head">#${c.seq} <code>${c.method}</code>${c.tool !== undefined && html` · tool <code>${c.tool}</code>`} · probe <code>${c.probe}</code>${c.class && html` · class <b class="cls">${c.class}</b>`} ${c.target !== undefined && html` · target <code>${c.target}</code>`}${c.value !== undefined && html` · value <code>${c.value}</code>`} · ${c.durationMs} ms</div>
  ${!!c.invalidBecause?.length && html`<div class="kv">invalid because ${c.invalidBecause.join('; ')}</div>`}
  <pre class="sent"><span class="dir">→ </span>${c.request}</pre>
  <pre class="reply"><span class="dir">← </span>${reply(c.reply)}</pre>
  ${!!c.effects?.length && html`<div class="kv bad">effects: ${c.effects.map((x) => html`<code>${x.kind}</code> ${x.detail}; `)}</div>`}
  ${!!c.secrets?.length && html`<div class="kv bad">secrets: ${c.secrets.map((x) => html`<code>${x.kind}</code> ${x.name} (in ${x.where}); `)}</div>`}
  ${!!c.leaks?.length && html`<div class="kv bad">leaks: ${c.leaks.map((x) => html`<code>${x.pattern}</code> ${x.line}; `)}</div>`}
  ${c.items !== undefined && html`<div class="kv">items returned: ${c.items}</div>`}
</div>`;
}

function reply(r: ReportCall['reply']): string {
  if (r.kind === 'hang') {
    const cpu = r.runDelayMs ? ` (and ${r.runDelayMs} ms more that it waited for a CPU)` : '';
    return `no reply (hang)${r.waitedMs !== undefined ? ` after ${r.waitedMs} ms${cpu}` : ''}`;
  }
  if (r.kind === 'exited') return 'no reply: the server exited';
  const problem = r.problem ? `malformed: ${r.problem}\n` : '';
  if (r.rawText !== undefined) return `${problem}${r.rawText}… (cut at 4,096 characters)`;
  if ('raw' in r) return problem + prettyJson(r.raw, '');
  return `${problem}(${r.kind})`;
}

/**
 * JSON with two-space indentation, except that an object or array whose one-line form fits in
 * {@link JSON_LINE} characters stays on one line (replies are mostly small nested objects).
 */
function prettyJson(v: unknown, indent: string): string {
  const flat = JSON.stringify(v) ?? 'undefined';
  if (v === null || typeof v !== 'object' || indent.length + flat.length <= JSON_LINE) return flat;
  const inner = indent + '  ';
  if (Array.isArray(v)) return v.length === 0 ? '[]' : `[\n${v.map((x) => inner + prettyJson(x, inner)).join(',\n')}\n${indent}]`;
  const entries = Object.entries(v as Record<string, unknown>);
  return entries.length === 0 ? '{}' : `{\n${entries.map(([k, x]) => `${inner}${JSON.stringify(k)}: ${prettyJson(x, inner)}`).join(',\n')}\n${indent}}`;
}

function footer(r: Report): Html {
  return html`<footer>
  ${r.stderrTail.trim() && r.status !== 'not-audited' && html`<details><summary>server stderr (last ${r.stderrTail.length} characters)</summary><pre>${r.stderrTail}</pre></details>`}
  <p class="muted">sealmark ${r.cliVersion} · report schema ${r.schemaVersion} · methodology ${r.methodologyVersion} · generated ${r.generatedAt}</p>
</footer>`;
}

function countLevels(r: Report): { fail: number; partial: number; suppressed: number } {
  const all = allFindings(r).filter((x) => x.level !== 'info');
  const f = all.filter((x) => !x.suppressed);
  return { fail: f.filter((x) => x.level === 'fail').length, partial: f.filter((x) => x.level === 'partial').length, suppressed: all.length - f.length };
}

/** Under the grade: suppressions not applied (--no-suppress), or the entries that expired or matched nothing. */
function suppressions(r: Report): Html | null {
  const s = r.suppressions;
  if (!s || s.entries.length === 0) return null;
  if (!s.applied) return html`<p class="cap">suppressions not applied (--no-suppress): ${s.entries.length} in the config</p>`;
  const warnings = s.entries.map(suppressionWarning).filter((w): w is string => w !== undefined);
  return warnings.length === 0 ? null : html`${warnings.map((w) => html`<p class="cap warn">${w}</p>`)}`;
}

/** Copy buttons beside replay lines and an expand/collapse-all button; the page works without it. */
export const SCRIPT = `
(function () {
  document.querySelectorAll('[data-copy]').forEach(function (el) {
    var b = document.createElement('button');
    b.type = 'button'; b.className = 'copy'; b.textContent = 'copy';
    function done() { b.textContent = 'copied'; setTimeout(function () { b.textContent = 'copy'; }, 1500); }
    function fallback() {
      var range = document.createRange(); range.selectNodeContents(el);
      var sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
      try { document.execCommand('copy'); done(); } catch (e) { b.textContent = 'select + copy'; }
    }
    b.addEventListener('click', function () {
      if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(el.textContent).then(done, fallback);
      else fallback();
    });
    el.parentNode.appendChild(b);
  });
  var summary = document.querySelector('.summary');
  if (summary) {
    var t = document.createElement('button');
    t.type = 'button'; t.className = 'toggle'; t.textContent = 'expand all findings';
    t.addEventListener('click', function () {
      var open = t.textContent === 'expand all findings';
      document.querySelectorAll('details.finding, details.infos').forEach(function (d) { d.open = open; });
      t.textContent = open ? 'collapse all findings' : 'expand all findings';
    });
    summary.appendChild(t);
  }
})();
`;

/** No request may leave the page: only the inline style and this exact script are allowed. */
function cspFor(script: string): string {
  return [
    "default-src 'none'",
    "style-src 'unsafe-inline'",
    `script-src 'sha256-${createHash('sha256').update(script).digest('base64')}'`,
    "img-src data:",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

const CSS = `
table.summary { border-collapse: collapse; margin: 1em 0; }
table.summary td, table.summary th { padding: 4px 10px; border-bottom: 1px solid #ccc; text-align: left; }
section.server { border-top: 3px solid #888; margin-top: 2em; padding-top: 1em; }

:root{--fg:#1c2126;--muted:#5e6a75;--bg:#fff;--panel:#f5f7f9;--line:#dfe4e8;--code:#f1f4f7;
--fail:#c62828;--partial:#b45f00;--pass:#2e7d32;--na:#7b8792;--accent:#1f5fa8;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--fg:#e3e7eb;--muted:#9aa5b0;--bg:#14181c;--panel:#1c2227;--line:#2d353c;
--code:#20272d;--fail:#ef6a6a;--partial:#eba14a;--pass:#5cc26b;--na:#8894a0;--accent:#79aef0}}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:1120px;margin:0 auto;padding:20px 24px 40px}
code,pre{font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
code{background:var(--code);padding:0 3px;border-radius:3px;overflow-wrap:anywhere}
pre{background:var(--code);padding:6px 9px;border-radius:5px;margin:3px 0 6px;white-space:pre-wrap;overflow-wrap:anywhere;max-height:22em;overflow:auto}
pre code{padding:0}
h1{font-size:22px;margin:0 0 2px}
h2{font-size:17px;margin:0 0 8px}
.muted{color:var(--muted)}
a{color:inherit;text-decoration:none}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:6px 0 0}
dt{color:var(--muted)}dd{margin:0;min-width:0}
header.top{display:flex;gap:24px;align-items:flex-start;padding-bottom:16px;border-bottom:1px solid var(--line)}
.meta{flex:1;min-width:0}
.grade{flex:none;width:150px;height:150px;border-radius:18px;display:flex;flex-direction:column;align-items:center;justify-content:center;color:#fff}
.grade .letter{font-size:92px;font-weight:800;line-height:1}
.grade .pct{font-size:22px;font-weight:600;opacity:.95}
.g-A,.g-B{background:var(--pass);color:#fff}.g-C,.g-D{background:var(--partial);color:#fff}.g-F{background:var(--fail);color:#fff}.g-none{background:var(--na);color:#fff}
.summary{margin:2px 0 6px;color:var(--muted)}
.cap{margin:2px 0;color:var(--fail);font-weight:600}.cap.warn{color:var(--partial)}
.badge{font-size:12px;vertical-align:middle;padding:2px 7px;border-radius:10px;border:1px solid currentColor}
.badge.warn{color:var(--partial)}
details.inline{display:inline}details.inline>summary{display:inline;cursor:pointer;color:var(--accent)}
ul.tools{margin:4px 0;padding-left:18px;columns:2}
.banner{margin:16px 0;padding:12px 16px;border:2px solid var(--fail);border-radius:8px;background:var(--panel)}
.banner h2{color:var(--fail);font-size:20px}
.packs{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:10px;margin:16px 0}
.card{display:flex;gap:10px;align-items:flex-start;padding:10px;border:1px solid var(--line);border-radius:8px;background:var(--panel)}
.card:hover{border-color:var(--accent)}
.card-grade{flex:none;width:44px;height:44px;border-radius:8px;display:flex;align-items:center;justify-content:center;font-size:22px;font-weight:800}
.card-body{font-size:13px;line-height:1.35}
.tally{font-size:12px}
.pack{margin:22px 0 0}
.pill{font-size:13px;padding:1px 8px;border-radius:10px;vertical-align:middle}
.check{border:1px solid var(--line);border-radius:7px;padding:7px 10px;margin:6px 0}
.check[data-verdict=fail]{border-left:4px solid var(--fail)}.check[data-verdict=partial]{border-left:4px solid var(--partial)}
.check[data-verdict=pass]{border-left:4px solid var(--pass)}.check[data-verdict="n/a"]{border-left:4px solid var(--na)}
.check-head .id{font-weight:600}
.verdict{display:inline-block;min-width:58px;text-align:center;font-weight:700;font-size:12px;padding:1px 6px;border-radius:4px;color:#fff}
.verdict.v-fail{background:var(--fail)}.verdict.v-partial{background:var(--partial)}.verdict.v-pass{background:var(--pass)}.verdict.v-na{background:var(--na)}
.t-fail{color:var(--fail)}.t-partial{color:var(--partial)}.t-pass{color:var(--pass)}.t-na{color:var(--na)}
.tag{font-size:11px;color:var(--muted);border:1px solid var(--line);border-radius:9px;padding:0 6px}
.tag.new{color:var(--fail);border-color:var(--fail);font-weight:700}
.tag.suppressed{color:var(--muted)}
.baseline{margin:2px 0}
.sev-error{color:var(--fail)}.sev-warning{color:var(--partial)}
.notes{margin:4px 0 0;padding-left:18px;color:var(--muted);font-size:13px}p.notes{padding-left:0}
details.finding{margin:5px 0 0;border-radius:5px;background:var(--panel)}
details.finding>summary{cursor:pointer;padding:4px 8px;overflow-wrap:anywhere}
details.finding[open]>summary{border-bottom:1px solid var(--line)}
.finding-body{padding:6px 10px 8px}
.level{font-weight:700;font-size:12px;text-transform:uppercase}
.level.l-fail{color:var(--fail)}.level.l-partial{color:var(--partial)}.level.l-info{color:var(--na)}
details.infos{margin:5px 0 0}details.infos>summary{cursor:pointer;color:var(--muted);font-size:13px}
.label{font-size:11px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);margin-top:8px}
pre.quote{border-left:3px solid var(--partial)}
.replay-line{display:flex;gap:8px;align-items:flex-start}
.replay-line code{display:block;flex:1;padding:5px 8px}
button{font:inherit;font-size:12px;cursor:pointer;border:1px solid var(--line);background:var(--bg);color:var(--fg);border-radius:5px;padding:2px 8px}
button.toggle{margin-left:10px}
.call{border-top:1px dashed var(--line);padding-top:5px;margin-top:6px}
.call-head{font-size:12.5px}
.kv{font-size:12.5px;color:var(--muted)}.kv.bad{color:var(--fail)}
.dir{color:var(--muted);user-select:none}
footer{margin-top:28px;border-top:1px solid var(--line);padding-top:8px;font-size:12.5px}
@media (max-width:640px){header.top{flex-direction:column}.grade{width:110px;height:110px}.grade .letter{font-size:64px}}
@media print{button{display:none}}
`;
