/** `sealmark audit`: run the engine on a stdio target and print or write the report. */
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { audit } from '../audit.js';
import type { Progress } from '../probes/recorder.js';
import type { Report } from '../report/build.js';
import { reporters, type Format } from '../report/reporters/index.js';
import { safeText } from '../report/reporters/text.js';
import { belowLetter, type Letter } from '../scoring.js';
import { UsageError, parseEnvList, requireCommand, resolveConfig } from './common.js';

export interface AuditCliOptions {
  demo?: boolean;
  config?: string;
  format: Format;
  output?: string;
  transcript?: string;
  timeoutProbe?: string;
  failUnder?: string;
  only?: string;
  skip?: string;
  env?: string[];
  quiet?: boolean;
  /** false with --no-sandbox. */
  sandbox?: boolean;
  network?: 'on' | 'off';
  keepSandbox?: boolean;
  all?: boolean;
  allowEffects?: boolean;
  verbose?: boolean;
  color?: boolean;
}

/** Path of the bundled demo server (ships in the package). */
export function demoServerPath(): string {
  return fileURLToPath(new URL('../../demo/server.mjs', import.meta.url));
}

/** Runs `sealmark audit`; resolves to the exit code (SPEC section 2). Throws UsageError / ConfigError. */
export async function runAudit(command: string[], opts: AuditCliOptions): Promise<number> {
  const gate = parseGate(opts.failUnder);
  let target: string[];
  let display: string[];
  if (opts.demo) {
    if (command.length > 0) throw new UsageError('--demo takes no server command');
    target = [process.execPath, demoServerPath()];
    display = ['node', demoServerPath()];
  } else {
    target = requireCommand(command, 'sealmark audit [options] -- <command> [args…]');
    display = target;
  }
  // --env stays apart from the config's env so that replay lines can name it (`--env KEY`).
  const fromFile = resolveConfig({ ...opts, env: undefined }, process.cwd());
  const config = {
    ...fromFile,
    sandbox: { ...fromFile.sandbox, ...(opts.network ? { network: opts.network } : {}), ...(opts.keepSandbox ? { keep: true } : {}) },
  };
  const cliEnv = parseEnvList(opts.env);
  // Paths are checked before the server starts: a typo must not cost a whole audit.
  if (opts.output !== undefined) checkWritable('--output', opts.output);
  if (opts.transcript !== undefined) checkWritable('--transcript', opts.transcript);
  const tty = process.stderr.isTTY === true && !opts.quiet && opts.format === 'text' ? process.stderr : undefined;
  const progress = tty ? progressLine(tty) : undefined;
  const report = await audit({
    command: target[0]!,
    args: target.slice(1),
    config,
    env: cliEnv,
    sandbox: opts.sandbox !== false,
    all: opts.all === true,
    allowEffects: opts.allowEffects === true,
    transcriptPath: opts.transcript,
    displayCommand: display,
    onProgress: progress?.update,
  });
  progress?.stop();
  const color = opts.color !== false && !process.env.NO_COLOR && opts.output === undefined && process.stdout.isTTY === true;
  const text = reporters[opts.format](report, { color, verbose: opts.verbose === true });
  if (opts.output) {
    try {
      writeFileSync(opts.output, text);
    } catch (err) {
      // The report is never lost: it goes to stdout with the reason.
      process.stderr.write(`sealmark: cannot write --output ${opts.output} (${(err as NodeJS.ErrnoException).code ?? String(err)}); the report follows on stdout\n`);
      process.stdout.write(text);
    }
  } else process.stdout.write(text);
  if (report.notAudited) process.stderr.write(`sealmark: the target could not be audited: ${report.notAudited.message}\n`);
  // The demo is built to fail checks: it shows the report and exits 0 unless asked to gate.
  if (opts.demo && !gate) return report.status === 'not-audited' ? 3 : 0;
  return exitCode(report, gate);
}

/**
 * Throws UsageError naming `flag` when `path` cannot be written (a missing folder, a directory, no
 * permission). Creates or truncates the file, which the run overwrites anyway.
 */
function checkWritable(flag: string, path: string): void {
  try {
    closeSync(openSync(path, 'w'));
  } catch (err) {
    throw new UsageError(`${flag} ${path}: cannot write there (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

type Gate = { letter: Letter } | { percent: number } | undefined;

function parseGate(value: string | undefined): Gate {
  if (value === undefined) return undefined;
  const v = value.trim().toUpperCase();
  if (/^[ABCDF]$/.test(v)) return { letter: v as Letter };
  const m = /^(\d+(?:\.\d+)?)%?$/.exec(v);
  if (m && Number(m[1]) <= 100) return { percent: Number(m[1]) };
  throw new UsageError(`--fail-under ${JSON.stringify(value)}: expected a letter A-F or a percent 0-100`);
}

/**
 * Exit code of a finished run (SPEC section 2): 3 when the target could not be audited; with a
 * gate, 1 when the grade is below it; without, 1 when a check at severity `error` failed.
 */
export function exitCode(report: Report, gate: Gate): number {
  if (report.status === 'not-audited') return 3;
  if (gate && 'letter' in gate) return belowLetter(report.grade.letter, gate.letter) ? 1 : 0;
  if (gate) return (report.grade.percent ?? 0) < gate.percent ? 1 : 0;
  return report.checks.some((c) => c.severity === 'error' && c.verdict === 'fail') ? 1 : 0;
}

/** The TTY progress line: `update` redraws it (throttled), `stop` clears it for good. */
function progressLine(out: NodeJS.WriteStream): { update: (p: Progress) => void; stop: () => void } {
  let last = 0;
  let pending: NodeJS.Timeout | undefined;
  let latest: Progress | undefined;
  const draw = () => {
    pending = undefined;
    last = Date.now();
    const p = latest!;
    const where = p.tool ? ` · tool ${p.toolIndex ?? '?'}/${p.toolCount ?? '?'} ${safeText(p.tool)}` : '';
    out.write(`\r\u001b[2K${p.phase}${where} · ${p.calls} calls`.slice(0, (out.columns ?? 100) - 1));
  };
  // At most one redraw every 80 ms, and the latest state is always drawn (a trailing redraw).
  return {
    update: (p) => {
      latest = p;
      if (pending) return;
      const wait = Math.max(0, 80 - (Date.now() - last));
      pending = setTimeout(draw, wait);
      pending.unref();
    },
    stop: () => {
      clearTimeout(pending);
      out.write('\r\u001b[2K');
    },
  };
}
