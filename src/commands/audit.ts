/** `sealmark audit`: run the engine on a stdio target and print or write the report(s). */
import { fileURLToPath } from 'node:url';
import { audit, httpSpec } from '../audit.js';
import type { Progress } from '../probes/recorder.js';
import { compareWithBaseline } from '../report/baseline.js';
import { loadSavedReport } from '../report/load.js';
import { safeText } from '../report/reporters/text.js';
import { UsageError, parseEnvList, resolveConfig, targetOf } from './common.js';
import { exitCode, parseGate } from './gate.js';
import { checkOutputs, planOutputs, useColor, writeOutputs } from './outputs.js';

export interface AuditCliOptions {
  demo?: boolean;
  url?: string;
  /** `--header 'Name: value'`, repeatable (with --url). */
  header?: string[];
  bearerTokenEnv?: string;
  config?: string;
  /** `--format`, repeatable; paired in order with `output`. */
  format?: string[];
  /** `--output`, repeatable. */
  output?: string[];
  transcript?: string;
  timeoutProbe?: string;
  failUnder?: string;
  baseline?: string;
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
  const plan = planOutputs(opts.format ?? [], opts.output ?? []);
  // A bad baseline must not cost a whole audit: it is read first.
  const baseline = opts.baseline === undefined ? undefined : loadSavedReport(opts.baseline, '--baseline');
  let target: string[] = [];
  let display: string[] = [];
  let http: { url: string; headers: Record<string, string>; bearerTokenEnv?: string } | undefined;
  if (opts.demo) {
    if (command.length > 0 || opts.url !== undefined) throw new UsageError('--demo takes no server command and no --url');
    target = [process.execPath, demoServerPath()];
    display = ['node', demoServerPath()];
  } else {
    const t = targetOf(command, opts, 'sealmark audit [options] -- <command> [args…]   or   sealmark audit --url <url> [options]');
    if ('url' in t) http = t;
    else target = display = t.command;
  }
  // Validated now (a bad URL, an unset token variable), before anything starts.
  if (http) httpSpec(http);
  // --env stays apart from the config's env so that replay lines can name it (`--env KEY`).
  const fromFile = resolveConfig({ ...opts, env: undefined }, process.cwd());
  const config = {
    ...fromFile,
    sandbox: { ...fromFile.sandbox, ...(opts.network ? { network: opts.network } : {}), ...(opts.keepSandbox ? { keep: true } : {}) },
  };
  const cliEnv = parseEnvList(opts.env);
  // Paths are checked before the server starts: a typo must not cost a whole audit.
  checkOutputs(plan, [{ flag: '--transcript', path: opts.transcript }]);
  const tty = process.stderr.isTTY === true && !opts.quiet ? process.stderr : undefined;
  const progress = tty ? progressLine(tty) : undefined;
  let report = await audit({
    ...(http ?? { command: target[0]!, args: target.slice(1) }),
    config,
    env: cliEnv,
    sandbox: opts.sandbox !== false,
    all: opts.all === true,
    allowEffects: opts.allowEffects === true,
    transcriptPath: opts.transcript,
    ...(http ? {} : { displayCommand: display }),
    onProgress: progress?.update,
  });
  progress?.stop();
  if (baseline) report = compareWithBaseline(report, baseline, opts.baseline!);
  writeOutputs(report, plan, { color: useColor(opts), verbose: opts.verbose === true });
  if (report.notAudited) process.stderr.write(`sealmark: the target could not be audited: ${report.notAudited.message}\n`);
  // The demo is built to fail checks: it shows the report and exits 0 unless asked to gate.
  if (opts.demo && !gate && !baseline) return report.status === 'not-audited' ? 3 : 0;
  return exitCode(report, gate);
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
    const where = p.tool ? ` · tool ${p.toolIndex !== undefined ? `${p.toolIndex}/${p.toolCount ?? '?'} ` : ''}${safeText(p.tool)}` : '';
    const probe = p.probe ? ` · ${safeText(p.probe)}` : '';
    // A terminal that reports no width (0 under `script` and many CI consoles) gets 100 columns.
    out.write(`\r\u001b[2K${p.phase}${where}${probe} · ${p.calls} ${p.calls === 1 ? 'call' : 'calls'}`.slice(0, (out.columns || 100) - 1));
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
