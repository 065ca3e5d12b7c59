/**
 * Where a run's report goes (issue 6, SPEC section 2: `--format` repeatable with `--output`).
 *
 * `--format` and `--output` pair up in order: the first format goes to the first output, and so on.
 * An output with no format of its own takes it from its extension (`.json`, `.sarif`, `.xml`,
 * `.html`, `.txt`). A format with no output goes to stdout; only one may. With neither flag the
 * text report goes to stdout. `--output -` is stdout too.
 */
import { accessSync, constants, realpathSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import type { Report } from '../report/build.js';
import { FORMATS, multiReporters, reporters, type Format } from '../report/reporters/index.js';
import { isMultiReport, type MultiReport } from '../report/multi.js';

/** One rendering of the report: its format and its file (absent: stdout). */
export interface OutputPlan {
  format: Format;
  path?: string;
}

const BY_EXTENSION: Record<string, Format> = { '.json': 'json', '.sarif': 'sarif', '.xml': 'junit', '.html': 'html', '.htm': 'html', '.txt': 'text', '.log': 'text' };

/** Pairs `formats` with `outputs` (both as given, in order). Throws UsageError for a plan that cannot work. */
export function planOutputs(formats: readonly string[], outputs: readonly string[]): OutputPlan[] {
  for (const f of formats) {
    if (!(FORMATS as readonly string[]).includes(f)) throw new UsageError(`--format ${JSON.stringify(f)}: expected one of ${FORMATS.join(', ')}`);
  }
  const plan: OutputPlan[] = [];
  for (let i = 0; i < Math.max(formats.length, outputs.length); i++) {
    const path = outputs[i];
    let format = formats[i] as Format | undefined;
    if (format === undefined && path !== undefined) {
      format = BY_EXTENSION[extname(path).toLowerCase()];
      if (!format) throw new UsageError(`--output ${path}: no --format for it, and its extension names none (.json, .sarif, .xml, .html, .txt)`);
    }
    // `--output -` is stdout, as in most command-line tools.
    plan.push(path === undefined || path === '-' ? { format: format! } : { format: format!, path });
  }
  if (plan.length === 0) plan.push({ format: 'text' });
  const toStdout = plan.filter((p) => p.path === undefined);
  if (toStdout.length > 1) {
    throw new UsageError(`--format ${toStdout.map((p) => p.format).join(', ')}: only one report can go to stdout; give each --format its --output`);
  }
  return plan;
}

/**
 * Throws UsageError naming the output when a file of `plan` (or of `extra`, e.g. `--transcript`)
 * could not be written: a missing folder, a directory, no permission. Checked before a run, so a
 * typo does not cost a whole audit; nothing is created or truncated here, so a usage error leaves
 * every earlier report as it was.
 */
export function checkOutputs(plan: readonly OutputPlan[], extra: { flag: string; path?: string }[] = []): void {
  const files = [...plan.flatMap((p) => (p.path === undefined ? [] : [{ flag: '--output', path: p.path }])), ...extra.filter((e): e is { flag: string; path: string } => e.path !== undefined)];
  const seen = new Map<string, string>();
  for (const { flag, path } of files) {
    const why = unwritable(path);
    if (why) throw new UsageError(`${flag} ${path}: cannot write there (${why})`);
    // The same file twice (also through a symlink, or as the transcript) would lose one of them.
    const real = realPath(path);
    const other = seen.get(real);
    if (other !== undefined) throw new UsageError(`${flag} ${path}: the same file as ${other}; give each output a file of its own`);
    seen.set(real, `${flag} ${path}`);
  }
}

/** The real path of a file, or of a file to be made (its folder's real path and its name). */
function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(resolve(path))), basename(path));
    } catch {
      return resolve(path);
    }
  }
}

/** Why `path` could not be written, or undefined when it could (an existing file or a new one in a writable folder). */
function unwritable(path: string): string | undefined {
  try {
    const st = statSync(path);
    if (st.isDirectory()) return 'EISDIR';
    // A FIFO or socket would block the write (and Ctrl-C with it); devices such as /dev/null are fine.
    if (!st.isFile() && !st.isCharacterDevice()) return 'not a regular file';
    accessSync(path, constants.W_OK);
    return undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return (err as NodeJS.ErrnoException).code ?? String(err);
  }
  try {
    const dir = dirname(resolve(path));
    if (!statSync(dir).isDirectory()) return 'ENOTDIR';
    accessSync(dir, constants.W_OK);
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err);
  }
}

/**
 * Renders and writes every output of `plan`. `color`: colour the text report when it goes to a
 * terminal; `gateFailed`: the run exits 1 on its gate (see ReporterOptions). A file that cannot be written after all does not lose its report: it goes to stdout
 * with the reason on stderr.
 */
export function writeOutputs(report: Report | MultiReport, plan: readonly OutputPlan[], opts: { color: boolean; verbose: boolean; quiet?: boolean; gateFailed?: boolean }): void {
  // A report that cannot be written goes to stdout, unless stdout carries a report already: then
  // to stderr, so that stdout stays one document.
  const stdoutTaken = plan.some((p) => p.path === undefined);
  for (const p of plan) {
    const o = { color: p.path === undefined && opts.color, verbose: opts.verbose, gateFailed: opts.gateFailed };
    const text = isMultiReport(report) ? multiReporters[p.format](report, o) : reporters[p.format](report, o);
    if (p.path === undefined) {
      process.stdout.write(text);
      continue;
    }
    try {
      writeFileSync(p.path, text);
    } catch (err) {
      const to = stdoutTaken ? 'stderr' : 'stdout';
      process.stderr.write(`sealmark: cannot write --output ${p.path} (${(err as NodeJS.ErrnoException).code ?? String(err)}); the ${p.format} report follows on ${to}\n`);
      (stdoutTaken ? process.stderr : process.stdout).write(text);
    }
  }
  // Every report went to a file: one line on stderr says how it went and where they are (SPEC section 8).
  if (!stdoutTaken && plan.length > 0 && !opts.quiet) process.stderr.write(`${summaryLine(report, plan.map((p) => p.path!))}\n`);
}

/**
 * The one-line summary of a run whose reports all went to files:
 * `sealmark: grade F (57.5%) · 3 failing, 5 partial · written to report.json, report.sarif`.
 */
export function summaryLine(report: Report | MultiReport, paths: readonly string[]): string {
  const to = `written to ${paths.join(', ')}`;
  if (isMultiReport(report)) {
    const grades = report.servers.map(({ name, report: r }) => `${name} ${r.status === 'not-audited' ? 'not audited' : r.grade.letter}`);
    return `sealmark: ${report.servers.length} servers (${grades.join(', ')}) · ${to}`;
  }
  if (report.status === 'not-audited') return `sealmark: not audited (${report.notAudited?.reason ?? 'unknown'}) · ${to}`;
  const graded = report.checks.flatMap((c) => c.findings.filter((f) => f.level !== 'info'));
  // Suppressed findings count as neither (SPEC section 7).
  const levels = graded.filter((f) => !f.suppressed).map((f) => f.level);
  const failing = levels.filter((l) => l === 'fail').length;
  const partial = levels.filter((l) => l === 'partial').length;
  const quiet = graded.length > levels.length ? `, ${graded.length - levels.length} suppressed` : '';
  const pct = report.grade.percent === null ? 'n/a' : `${report.grade.percent}%`;
  // --keep-sandbox: where the kept folders are, or they are lost from view when every report went to a file.
  // Several instances (--instances) each kept their own; the first is the handshake's.
  const kept = [...report.sandbox.note.matchAll(/scratch folders kept at (.+?) \(shims, effect log and the overlay's upper layers at (.+?)\)/g)];
  const keep = kept.length > 0 ? ` · sandbox kept at ${kept.map((k) => `${k[1]} and ${k[2]}`).join('; ')}` : '';
  return `sealmark: grade ${report.grade.letter} (${pct}) · ${failing} failing, ${partial} partial findings${quiet} · ${to}${keep}`;
}

/** Colour for a text report on stdout: a terminal, without --no-color or NO_COLOR. */
export function useColor(opts: { color?: boolean }): boolean {
  return opts.color !== false && !process.env.NO_COLOR && process.stdout.isTTY === true;
}
