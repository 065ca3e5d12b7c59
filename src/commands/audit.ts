/** `sealmark audit`: run the engine on a stdio target and print or write the report(s). */
import { fileURLToPath } from 'node:url';
import stringWidth from 'string-width';
import { audit, httpSpec, notStartedReport, unstartableReport } from '../audit.js';
import { auditTargetOf, serverJsonTarget } from './server-json.js';
import { readClientConfig, type ClientServer } from '../client-config.js';
import type { Report } from '../report/build.js';
import { isMultiReport, multiReport } from '../report/multi.js';
import type { Progress } from '../probes/recorder.js';
import { compareWithBaseline } from '../report/baseline.js';
import { loadSaved, loadSavedReport } from '../report/load.js';
import { safeText } from '../report/reporters/text.js';
import { suppressionWarning } from '../report/suppress.js';
import { envReplayFlags } from '../replay.js';
import { UsageError, parseEnvList, resolveConfig, targetOf } from './common.js';
import { runState } from '../run-state.js';
import { launcherLine, parsePackageOption, type PackageRef } from '../target/launch.js';
import { anyBelowGate, belowGate, exitCode, parseGate } from './gate.js';
import { combinedExit } from './report.js';
import { checkOutputs, planOutputs, useColor, writeOutputs } from './outputs.js';

export interface AuditCliOptions {
  demo?: boolean;
  /** `--client-config <file>`: audit the servers of a client configuration. */
  clientConfig?: string;
  /** `--server <name>`: only this entry of the client configuration. */
  server?: string;
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
  /** `--instances <n>`: sandboxed instances the tools are shared among (see AuditOptions.instances). */
  instances?: string;
  /** `--package npm:@scope/name@1.2.3` (also `pypi:`, `oci:`): fetch and audit a published package. */
  package?: string;
  /** `--server-json <file>`: audit an entry of the official registry's server.json. */
  serverJson?: string;
  packageIndex?: string;
  remoteIndex?: string;
  allowInstallScripts?: boolean;
  /** false with --no-suppress: the config's `suppress:` entries are not applied. */
  suppress?: boolean;
  verbose?: boolean;
  color?: boolean;
}

/**
 * The config of a run: the file, `--timeout-probe`, `--only`, `--skip`, the sandbox flags and
 * `--no-suppress`.
 * `--env` stays apart from the config's env, so that replay lines can name it (`--env KEY=value`, or `--env KEY` for a secret).
 */
function runConfig(opts: AuditCliOptions): ReturnType<typeof resolveConfig> {
  const fromFile = resolveConfig({ ...opts, env: undefined }, process.cwd());
  return {
    ...fromFile,
    sandbox: { ...fromFile.sandbox, ...(opts.network ? { network: opts.network } : {}), ...(opts.keepSandbox ? { keep: true } : {}) },
    ...(opts.suppress === false ? { ignoreSuppressions: true } : {}),
  };
}

/** Most instances `--instances` starts (each is a server process with a sandbox of its own). */
export const MAX_INSTANCES = 16;

/** `--instances <n>`: an integer from 1 to {@link MAX_INSTANCES}; undefined when not given. Throws UsageError. */
export function parseInstances(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_INSTANCES) throw new UsageError(`--instances ${JSON.stringify(value)}: expected an integer from 1 to ${MAX_INSTANCES}`);
  return n;
}

/** Path of the bundled demo server (ships in the package). */
export function demoServerPath(): string {
  return fileURLToPath(new URL('../../demo/server.mjs', import.meta.url));
}

/** Runs `sealmark audit`; resolves to the exit code (SPEC section 2). Throws UsageError / ConfigError. */
export async function runAudit(command: string[], opts: AuditCliOptions): Promise<number> {
  if (opts.clientConfig !== undefined) return runClientConfig(command, opts);
  if (opts.server !== undefined) throw new UsageError('--server goes with --client-config');
  if ((opts.packageIndex !== undefined || opts.remoteIndex !== undefined) && opts.serverJson === undefined) throw new UsageError('--package-index and --remote-index go with --server-json');
  const gate = parseGate(opts.failUnder);
  const plan = planOutputs(opts.format ?? [], opts.output ?? []);
  // A bad baseline must not cost a whole audit: it is read first.
  const baseline = opts.baseline === undefined ? undefined : loadSavedReport(opts.baseline, '--baseline');
  let target: string[] = [];
  let display: string[] = [];
  let http: { url: string; headers: Record<string, string>; bearerTokenEnv?: string } | undefined;
  let pkg: PackageRef | undefined;
  let via: string[] | undefined;
  if (opts.demo) {
    if (command.length > 0 || opts.url !== undefined || opts.package !== undefined) throw new UsageError('--demo takes no server command, --url or --package');
    target = [process.execPath, demoServerPath()];
    display = ['node', demoServerPath()];
  } else if (opts.serverJson !== undefined) {
    if (opts.url !== undefined || opts.package !== undefined || command.length > 0) throw new UsageError('--server-json takes no --url, --package or server command');
  } else if (opts.package !== undefined) {
    if (opts.url !== undefined) throw new UsageError('--package takes no --url: give one or the other');
    pkg = parsePackageOption(opts.package);
    // Words after -- are the server's own arguments.
    target = command;
    via = ['--package', opts.package];
    display = [...launcherLine(pkg), ...command];
  } else {
    const t = targetOf(command, opts, 'sealmark audit [options] -- <command> [args…]   or   sealmark audit --url <url> [options]');
    if ('url' in t) http = t;
    else target = display = t.command;
  }
  // Validated now (a bad URL, an unset token variable), before anything starts.
  if (http) httpSpec(http);
  const instances = parseInstances(opts.instances);
  const config = runConfig(opts);
  const cliEnv = parseEnvList(opts.env);
  // Paths are checked before the server starts: a typo must not cost a whole audit.
  checkOutputs(plan, [{ flag: '--transcript', path: opts.transcript }]);
  const tty = process.stderr.isTTY === true && !opts.quiet ? process.stderr : undefined;
  const progress = tty ? progressLine(tty) : undefined;
  const planned = opts.serverJson !== undefined ? serverJsonTarget(opts.serverJson, opts, cliEnv) : undefined;
  const fromJson = planned && planned.kind !== 'not-started' ? auditTargetOf(planned) : undefined;
  let report = planned?.kind === 'not-started' ? notStartedReport(planned.target, planned.why) : await audit({
    ...(fromJson ?? http ?? (pkg ? { package: pkg, args: target } : { command: target[0]!, args: target.slice(1) })),
    config,
    env: { ...cliEnv, ...(fromJson && 'env' in fromJson ? fromJson.env : {}) },
    allowInstallScripts: opts.allowInstallScripts === true,
    ...(via ? { replayVia: [...via, ...envReplayFlags(cliEnv)] } : {}),
    sandbox: opts.sandbox !== false,
    all: opts.all === true,
    allowEffects: opts.allowEffects === true,
    ...(instances !== undefined ? { instances } : {}),
    transcriptPath: opts.transcript,
    ...(http || fromJson ? {} : { displayCommand: display }),
    onProgress: track(progress?.update),
  });
  progress?.stop();
  if (baseline) report = compareWithBaseline(report, baseline, opts.baseline!);
  writeOutputs(report, plan, { color: useColor(opts), verbose: opts.verbose === true, quiet: opts.quiet === true, gateFailed: belowGate(report, gate) });
  // The text report on stdout shows them under the grade already.
  if (!plan.some((p) => p.path === undefined && p.format === 'text')) warnSuppressions(report, config.source);
  if (report.notAudited) process.stderr.write(`sealmark: the target could not be audited: ${safeText(report.notAudited.message)}\n`);
  // The demo is built to fail checks: it shows the report and exits 0 unless asked to gate.
  if (opts.demo && !gate && !baseline) return report.status === 'not-audited' ? 3 : 0;
  return exitCode(report, gate);
}

/**
 * A `suppress:` entry that expired or matched nothing is named on stderr when no text report goes
 * to stdout, so that a CI log shows it even when the reports go to files (they carry it as well).
 */
function warnSuppressions(report: Report, file: string | undefined): void {
  if (!report.suppressions?.applied) return;
  for (const e of report.suppressions.entries) {
    const w = suppressionWarning(e);
    if (w !== undefined) process.stderr.write(`sealmark: warning: ${file ? `${safeText(file)}: ` : ''}${safeText(w)}\n`);
  }
}

/** Keeps {@link runState} up to date for the message of an interrupted run, then draws the progress line. */
function track(draw: ((p: Progress) => void) | undefined, servers?: string): (p: Progress) => void {
  return (p) => {
    runState.phase = safeText(p.phase.slice(0, 120));
    // A tool name is the server's text: escaped, and cut, before it can reach a terminal.
    // Cheap on every call: a tool name may be a megabyte long.
    runState.tool = p.tool === undefined ? undefined : fitColumns(safeText(p.tool.slice(0, 120)), 60);
    runState.calls = p.calls;
    runState.servers = servers === undefined ? undefined : safeText(servers);
    draw?.(p);
  };
}

/**
 * The TTY progress line: `update` redraws it (throttled), `stop` clears it for good. It is cut to
 * the terminal's width in display columns (a wide character counts two), so it never wraps, and it
 * is cleared when the process exits early (Ctrl-C) too.
 */
function progressLine(out: NodeJS.WriteStream, prefix = ''): { update: (p: Progress) => void; stop: () => void } {
  let last = 0;
  let pending: NodeJS.Timeout | undefined;
  let latest: Progress | undefined;
  const clear = () => out.write('\r\u001b[2K');
  const draw = () => {
    pending = undefined;
    last = Date.now();
    const p = latest!;
    const where = p.tool ? ` · tool ${p.toolIndex !== undefined ? `${p.toolIndex}/${p.toolCount ?? '?'} ` : ''}${safeText(p.tool)}` : '';
    const probe = p.probe ? ` · ${safeText(p.probe)}` : '';
    // A terminal that reports no width (0 under `script` and many CI consoles) gets 100 columns.
    const line = fitColumns(`${prefix}${p.phase}${where}${probe} · ${p.calls} ${p.calls === 1 ? 'call' : 'calls'}`, (out.columns || 100) - 1);
    out.write(`\r\u001b[2K${line}`);
  };
  process.once('exit', clear);
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
      process.removeListener('exit', clear);
      clear();
    },
  };
}

/** `s` cut to at most `columns` display columns, whole characters only (graphemes, wide ones counted two). */
export function fitColumns(s: string, columns: number): string {
  if (stringWidth(s) <= columns) return s;
  let out = '';
  let width = 0;
  for (const { segment } of new Intl.Segmenter().segment(s)) {
    const w = stringWidth(segment);
    if (width + w > columns) break;
    out += segment;
    width += w;
  }
  return out;
}

/**
 * `sealmark audit --client-config <file> [--server <name>]` (issue 7): audits each server of the
 * file in turn, one report per server and a summary of grades. An entry that cannot start gets a
 * not-audited report and the others go on. Exit code: 1 when any server is below the gate, else 3
 * when any could not be audited, else 0.
 */
async function runClientConfig(command: string[], opts: AuditCliOptions): Promise<number> {
  if (command.length > 0 || opts.url !== undefined || opts.demo) throw new UsageError('--client-config takes no server command, --url or --demo');
  const instances = parseInstances(opts.instances);
  const gate = parseGate(opts.failUnder);
  const plan = planOutputs(opts.format ?? [], opts.output ?? []);
  const baseline = opts.baseline === undefined ? undefined : loadSaved(opts.baseline, '--baseline');
  if (baseline && !isMultiReport(baseline)) throw new UsageError(`--baseline ${opts.baseline}: a --client-config run needs a baseline saved from a --client-config run (--format json)`);
  const file = readClientConfig(opts.clientConfig!);
  const disabled = file.servers.filter((s) => s.kind === 'disabled').map((s) => s.name);
  if (disabled.length > 0) process.stderr.write(`sealmark: not audited, disabled in ${opts.clientConfig}: ${disabled.map(safeText).join(', ')}\n`);
  const entries = selectServers(file.servers.filter((s) => s.kind !== 'disabled' || s.name === opts.server), opts.server, opts.clientConfig!);
  const config = runConfig(opts);
  const cliEnv = parseEnvList(opts.env);
  checkOutputs(plan, [{ flag: '--transcript', path: opts.transcript }]);
  const tty = process.stderr.isTTY === true && !opts.quiet ? process.stderr : undefined;
  const results: { name: string; report: Report }[] = [];
  for (const [i, entry] of entries.entries()) {
    const progress = tty ? progressLine(tty, `[${i + 1}/${entries.length}] ${safeText(entry.name)} · `) : undefined;
    // The replay reaches the server through its entry, with the --env names the audit had.
    const via = ['--client-config', opts.clientConfig!, '--server', entry.name, ...envReplayFlags(cliEnv)];
    let report: Report;
    if (entry.kind === 'invalid' || entry.kind === 'disabled') {
      const label = entry.kind === 'invalid' ? entry.label : '';
      const target = /^https?:/i.test(label) ? { kind: 'http' as const, command: [], url: label } : { kind: 'stdio' as const, command: label ? [label] : [] };
      report = unstartableReport(target, `${entry.name}: ${entry.kind === 'invalid' ? entry.problem : 'disabled in the client configuration'}`, config);
    } else {
      const target = entry.kind === 'http' ? { url: entry.url, headers: entry.headers } : { command: entry.command, args: entry.args, cwd: entry.cwd, displayCommand: [entry.command, ...entry.args] };
      report = await audit({
        ...target,
        config,
        env: { ...cliEnv, ...(entry.kind === 'stdio' ? entry.env : {}) },
        secrets: entry.secrets,
        sandbox: opts.sandbox !== false,
        all: opts.all === true,
        allowEffects: opts.allowEffects === true,
        ...(instances !== undefined ? { instances } : {}),
        // One transcript per server: run.<n>-<name>.jsonl.
        ...(opts.transcript ? { transcriptPath: transcriptFor(opts.transcript, i, entry.name, entries.length) } : {}),
        replayVia: via,
        onProgress: track(progress?.update, `server ${i + 1} of ${entries.length}, ${entry.name}`),
      });
    }
    progress?.stop();
    const prior = baseline?.servers.find((s) => s.name === entry.name)?.report;
    results.push({ name: entry.name, report: prior ? compareWithBaseline(report, prior, opts.baseline!) : report });
  }
  const multi = multiReport(opts.clientConfig!, results);
  writeOutputs(multi, plan, { color: useColor(opts), verbose: opts.verbose === true, quiet: opts.quiet === true, gateFailed: anyBelowGate(multi.servers.map((x) => x.report), gate) });
  for (const r of results) if (r.report.notAudited) process.stderr.write(`sealmark: ${safeText(r.name)} could not be audited: ${safeText(r.report.notAudited.message)}\n`);
  return combinedExit(multi, gate);
}

/** The entries to audit: all, or the one named by `--server` (UsageError listing the names when there is none). */
function selectServers(servers: ClientServer[], name: string | undefined, file: string): ClientServer[] {
  if (servers.length === 0) throw new UsageError(`--client-config ${file}: it lists no servers`);
  if (name === undefined) return servers;
  const one = servers.filter((s) => s.name === name);
  if (one.length === 0) throw new UsageError(`--server ${JSON.stringify(name)}: ${file} has no such server (it has ${servers.map((s) => JSON.stringify(s.name)).join(', ')})`);
  return one;
}

/**
 * `run.jsonl` → `run.<n>-<server>.jsonl` when there are several servers: the position keeps two
 * names that read the same once made safe for a file name (`notes a`, `notes_a`) apart.
 */
function transcriptFor(path: string, index: number, name: string, count: number): string {
  if (count === 1) return path;
  const safe = `${index + 1}-${name.replace(/[^A-Za-z0-9._-]/g, '_')}`;
  const dot = path.lastIndexOf('.');
  return dot > path.lastIndexOf('/') ? `${path.slice(0, dot)}.${safe}${path.slice(dot)}` : `${path}.${safe}`;
}
