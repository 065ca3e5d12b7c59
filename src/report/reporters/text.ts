/**
 * The text reporter (SPEC section 8): grouped by pack, failures first, each finding with its
 * evidence and the command that replays it. Colour only when asked (a TTY without NO_COLOR).
 */
import { eraWords } from '../../checks/handshake.js';
import { allFindings, coverageLines, targetLabel, type BaselineComparison, type Report, type ReportCheck, type ReportFinding } from '../build.js';
import { packs } from '../../packs.js';
import { capLowered } from '../../scoring.js';
import { matches, suppressionWarning } from '../suppress.js';

export interface TextOptions {
  color: boolean;
  /** Show info-level findings and notes too. */
  verbose: boolean;
}

type Paint = (s: string) => string;
const ansi = (code: string): Paint => (s) => `\u001b[${code}m${s}\u001b[0m`;
const plain: Paint = (s) => s;

const RANK: Record<string, number> = { fail: 0, partial: 1, pass: 2, 'n/a': 3 };

/**
 * Makes text that came from a server safe to print on a terminal: control characters (a newline
 * in a tool name, an ESC sequence, NUL) and bidirectional overrides are shown as escapes, so a
 * server cannot forge report lines or restyle the terminal.
 */
export function safeText(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\t') return '\\t';
    if (c === '\r') return '\\r';
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/** Renders a report as text for a terminal or a log. */
export function renderText(report: Report, opts: TextOptions): string {
  const c = opts.color;
  const red = c ? ansi('31') : plain;
  const yellow = c ? ansi('33') : plain;
  const green = c ? ansi('32') : plain;
  const dim = c ? ansi('2') : plain;
  const bold = c ? ansi('1') : plain;
  const mark: Record<string, string> = { fail: red('✗ fail   '), partial: yellow('◐ partial'), pass: green('✓ pass   '), 'n/a': dim('– n/a    ') };
  const lines: string[] = [];
  const g = report.grade;
  const std = report.standard ? '' : `  ${yellow('non-standard')} (${report.nonStandardKeys.join(', ')})`;
  lines.push(bold(`sealmark ${report.cliVersion}`) + dim(` · methodology ${report.methodologyVersion}`));
  lines.push(`target    ${safeText(targetLabel(report.target))}`);
  const pkg = report.target.package;
  if (pkg) {
    const how = report.status === 'not-audited' && !report.protocol ? 'not started' : pkg.from === 'project' ? "started from the project's own install" : pkg.reused ? 'started from the install in the cache' : 'fetched and installed, then started from that install';
    lines.push(dim(safeText(`package   ${pkg.ecosystem} ${pkg.name}${pkg.version ? ` ${pkg.version}` : ''} (via ${pkg.launcher}; ${how})`)));
  }
  if (report.protocol) {
    const s = report.protocol.server;
    lines.push(safeText(`server    ${s.name ?? '?'} ${s.version ?? ''}`.trimEnd()) + dim(` · protocol ${safeText(report.protocol.version ?? '?')} (${eraWords(report.protocol.era)})`));
  }
  lines.push(`tools     ${report.tools.length} listed · coverage ${report.coverage.level}`);
  const rs = report.restarts ?? [];
  if (rs.length > 0) {
    const failed = rs.find((r) => !r.ok);
    const ok = rs.filter((r) => r.ok).length;
    const why = rs.find((r) => r.why)?.why;
    const again = ok > 0 ? `the server exited and was started again ${ok} time${ok === 1 ? '' : 's'}${why ? ` (once because ${safeText(why)})` : ''}` : 'the server exited';
    lines.push(yellow(`restarts  ${again}`) + (failed ? red(`; starting it again failed: ${safeText(failed.failure ?? '?')}`) : ''));
  }
  lines.push(dim(`sandbox   ${report.sandbox.note}`));
  if (report.status === 'not-audited' && report.notAudited) {
    lines.push('');
    lines.push(red(bold(`NOT AUDITED: ${safeText(report.notAudited.message)}`)));
    lines.push(dim(`not checked: ${report.notAudited.notChecked.join(', ')}`));
    if (report.stderrTail.trim()) {
      lines.push(dim('server stderr (last lines):'));
      for (const l of report.stderrTail.trim().split('\n').slice(-5)) lines.push(dim(`  ${safeText(l)}`));
    }
  }
  lines.push('');
  const letter = g.letter ?? '–';
  const paintLetter = letter === 'A' || letter === 'B' ? green : letter === 'C' || letter === 'D' ? yellow : red;
  lines.push(bold(`grade ${paintLetter(letter)}`) + (g.percent !== null ? ` ${g.percent}%` : '') + ` · ${report.coverage.level}` + std);
  for (const cap of g.caps.filter((c) => capLowered(g, c))) lines.push(red(`  capped at ${cap.letter}: ${cap.check} failed`));
  lines.push(...renderSuppressions(report, { yellow, dim }));
  let hiddenInfo = 0;
  for (const pack of packs) {
    const inPack = report.checks.filter((ch) => ch.pack === pack.id);
    if (inPack.length === 0) continue;
    const ps = g.packs.find((p) => p.pack === pack.id);
    lines.push('');
    lines.push(bold(`${pack.id}`) + dim(` · ${pack.title}`) + (ps?.letter ? `  ${ps.letter} ${ps.percent}%` : dim('  n/a')));
    for (const ch of [...inPack].sort((x, y) => RANK[x.verdict]! - RANK[y.verdict]!)) {
      const cov = coverageLines(ch);
      // A verdict that suppressions changed says so on its own line: `✓ pass robust-input (3 suppressed)`.
      const quieted = ch.findings.filter((f) => f.suppressed && f.level !== 'info').length;
      const quiet = quieted > 0 ? dim(` (${quieted} suppressed)`) : '';
      lines.push(`  ${mark[ch.verdict]}  ${ch.id}${quiet}${dim(` · ${ch.title} (${ch.weight})`)}${cov.summary && ch.verdict !== 'n/a' ? dim(` · ${cov.summary}`) : ''}`);
      // Tools a verdict does not rest on are always named: unjudged is never shown as passing.
      if (ch.verdict !== 'n/a') for (const n of cov.notJudged) lines.push(dim(`      ${safeText(n)}`));
      const shown = ch.findings.filter((f) => opts.verbose || f.level !== 'info');
      hiddenInfo += ch.findings.length - shown.length;
      for (const item of collapse(shown)) {
        if ('tools' in item) lines.push(...renderGroup(item, { red, yellow, dim }));
        else lines.push(...renderFinding(item, { red, yellow, dim }));
      }
      if (opts.verbose || ch.verdict === 'n/a') for (const n of ch.notes) lines.push(dim(`      note: ${safeText(n)}`));
      lines.push(...needsProbe(ch, dim));
    }
  }
  if (report.baseline) lines.push(...renderBaseline(report.baseline, { red, green, dim }));
  lines.push('');
  const counts = countLevels(report);
  const quiet = counts.suppressed > 0 ? `, ${counts.suppressed} suppressed` : '';
  lines.push(dim(`${report.calls.length} calls · ${counts.fail} failing and ${counts.partial} partial findings${quiet} · ${(report.durationMs / 1000).toFixed(1)} s`));
  if (hiddenInfo > 0) lines.push(dim(`${hiddenInfo} informational findings hidden; --verbose shows them`));
  return lines.join('\n') + '\n';
}

/** Findings of one message about many tools, with no call behind them (schema findings), shown as one. */
interface Group {
  first: ReportFinding;
  tools: string[];
}

/** Most tools named in a grouped line. */
const GROUP_NAMES = 12;

/**
 * Identical findings grouped (SPEC section 8: "59 tools state no readOnlyHint: a, b, c …"): three
 * or more of one message id and level, each about one tool and resting on no call, are one line.
 * The JSON, SARIF and JUnit reports keep every finding.
 */
function collapse(findings: ReportFinding[]): (ReportFinding | Group)[] {
  // Identical but for the tool: the same message id, level and data once the tool is left out.
  const key = (f: ReportFinding) => {
    if (f.tool === undefined || f.evidence.calls?.length || f.suppressed || f.baselineState) return undefined;
    const rest = Object.entries(f.data).filter(([k, v]) => k !== 'tool' && v !== f.tool);
    return `${f.messageId}\u0000${f.level}\u0000${JSON.stringify(rest)}`;
  };
  const counts = new Map<string, number>();
  for (const f of findings) {
    const k = key(f);
    if (k) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const out: (ReportFinding | Group)[] = [];
  const groups = new Map<string, Group>();
  for (const f of findings) {
    const k = key(f);
    if (!k || counts.get(k)! < 3) {
      out.push(f);
      continue;
    }
    const g = groups.get(k);
    if (g) {
      if (!g.tools.includes(f.tool!)) g.tools.push(f.tool!);
    }
    else {
      const fresh = { first: f, tools: [f.tool!] };
      groups.set(k, fresh);
      out.push(fresh);
    }
  }
  return out;
}

function renderGroup(g: Group, p: { red: Paint; yellow: Paint; dim: Paint }): string[] {
  const f = g.first;
  const tag = f.level === 'fail' ? p.red('fail') : f.level === 'partial' ? p.yellow('partial') : p.dim('info');
  const names = g.tools.slice(0, GROUP_NAMES).join(', ') + (g.tools.length > GROUP_NAMES ? ', …' : '');
  return [`      ${tag} ${f.messageId}: ${g.tools.length} tools: ${safeText(names)}`, p.dim(`        e.g. ${safeText(f.message)}`)];
}

function renderFinding(f: ReportFinding, p: { red: Paint; yellow: Paint; dim: Paint }): string[] {
  // A suppressed finding is shown, dimmed, and counts as no failure.
  const tag = f.suppressed ? p.dim(f.level) : f.level === 'fail' ? p.red('fail') : f.level === 'partial' ? p.yellow('partial') : p.dim('info');
  const state = f.baselineState === 'new' ? p.red('NEW ') : f.baselineState === 'unchanged' ? p.dim('(in baseline) ') : '';
  const out = [`      ${state}${tag} ${f.messageId}: ${safeText(f.message)}`];
  if (f.suppressed) out.push(p.dim(`        suppressed: ${safeText(f.suppressed.reason)}${f.suppressed.until ? ` (until ${safeText(f.suppressed.until)})` : ''}`));
  for (const q of f.evidence.quotes ?? []) out.push(p.dim(`        │ ${safeText(q.split('\n')[0]!.slice(0, 160))}`));
  if (f.evidence.schemaPaths?.length) out.push(p.dim(`        at ${safeText(f.evidence.schemaPaths.slice(0, 3).join(', '))}`));
  if (f.request) out.push(p.dim(`        sent  ${safeText(f.request.length > 300 ? f.request.slice(0, 300) + '…' : f.request)}`));
  if (f.replay) out.push(p.dim(`        replay  ${safeText(f.replay)}`));
  if (f.evidence.calls && f.evidence.calls.length > 1) out.push(p.dim(`        calls ${f.evidence.calls.slice(0, 12).map((s) => `#${s}`).join(' ')}`));
  return out;
}

/** The baseline comparison: counts, then the fixed findings (the new ones are marked NEW above). */
function renderBaseline(b: BaselineComparison, p: { red: Paint; green: Paint; dim: Paint }): string[] {
  const out = ['', `baseline  ${safeText(b.file)} (${b.generatedAt}): ${b.new.length > 0 ? p.red(`${b.new.length} new`) : '0 new'}, ${b.unchanged} unchanged, ${b.fixed.length > 0 ? p.green(`${b.fixed.length} fixed`) : '0 fixed'}`];
  for (const f of b.fixed) out.push(p.green(`  fixed ${f.checkId} ${f.messageId}: ${safeText(f.message)}`));
  return out;
}

function needsProbe(ch: ReportCheck, dim: Paint): string[] {
  return ch.needsProbe?.length ? [dim(`      needs a probes: entry: ${safeText(ch.needsProbe.join(', '))}`)] : [];
}

function countLevels(report: Report): { fail: number; partial: number; suppressed: number } {
  const all = allFindings(report).filter((x) => x.level !== 'info');
  const f = all.filter((x) => !x.suppressed);
  return { fail: f.filter((x) => x.level === 'fail').length, partial: f.filter((x) => x.level === 'partial').length, suppressed: all.length - f.length };
}

/**
 * Under the grade: that suppressions were not applied (`--no-suppress`), or each entry that
 * expired or matched nothing. A report saved before suppress: existed has no record.
 */
function renderSuppressions(report: Report, p: { yellow: Paint; dim: Paint }): string[] {
  const s = report.suppressions;
  if (!s || s.entries.length === 0) return [];
  if (!s.applied) {
    // The findings the report shows (fail, partial: see matches), as the entries' own counts.
    const would = allFindings(report).filter((f) => s.entries.some((e) => matches(e, f))).length;
    return [p.dim(`  suppressions not applied (--no-suppress): ${s.entries.length} in the config, matching ${would} finding${would === 1 ? '' : 's'}`)];
  }
  return s.entries.flatMap((e) => {
    const w = suppressionWarning(e);
    return w === undefined ? [] : [p.yellow(`  warning: ${safeText(w)}`)];
  });
}
