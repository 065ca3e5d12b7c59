/** `sealmark audit`: run the engine on a stdio target and print or write the report. */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { audit } from '../audit.js';
import type { Progress } from '../probes/recorder.js';
import type { Report } from '../report/build.js';
import { reporters, type Format } from '../report/reporters/index.js';
import { belowLetter, type Letter } from '../scoring.js';
import { UsageError, requireCommand, resolveConfig } from './common.js';

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
  const config = resolveConfig(opts, process.cwd());
  const tty = process.stderr.isTTY === true && !opts.quiet && opts.format === 'text' ? process.stderr : undefined;
  const report = await audit({
    command: target[0]!,
    args: target.slice(1),
    config,
    transcriptPath: opts.transcript,
    displayCommand: display,
    onProgress: tty ? progressLine(tty) : undefined,
  });
  if (tty) tty.write('\r\u001b[2K');
  const color = opts.color !== false && !process.env.NO_COLOR && opts.output === undefined && process.stdout.isTTY === true;
  const text = reporters[opts.format](report, { color, verbose: opts.verbose === true });
  if (opts.output) writeFileSync(opts.output, text);
  else process.stdout.write(text);
  if (report.notAudited) process.stderr.write(`sealmark: the target could not be audited: ${report.notAudited.message}\n`);
  return exitCode(report, gate);
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

function progressLine(out: NodeJS.WriteStream): (p: Progress) => void {
  let last = 0;
  return (p) => {
    const now = Date.now();
    if (now - last < 80) return;
    last = now;
    const where = p.tool ? ` · tool ${p.toolIndex ?? '?'}/${p.toolCount ?? '?'} ${p.tool}` : '';
    out.write(`\r\u001b[2K${p.phase}${where} · ${p.calls} calls`.slice(0, (out.columns ?? 100) - 1));
  };
}
