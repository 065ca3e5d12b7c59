/**
 * One attempt of one fleet job (SPEC section 10): a child `sealmark audit … --format json
 * --no-suppress` in its own process group, with a deadline enforced by ending its whole process
 * tree, turned into a {@link FleetRecord}. The one way a job is run: the embedded pool (run.ts)
 * and the BullMQ worker (queue.ts) both call {@link attemptJob}; only what they do with a flaky
 * outcome differs (the pool puts the job back in its store, the worker lets BullMQ retry it).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checks } from '../checks/index.js';
import type { Report } from '../report/build.js';
import { ProcessTree } from '../target/process-tree.js';
import { removeScratchOf } from '../target/sandbox.js';
import { METHODOLOGY_VERSION, VERSION } from '../version.js';
import type { JobSpec } from './targets.js';
import type { FleetJob, FleetOutcome, FleetRecord, Ruler } from './types.js';

/** ms between SIGTERM to a job's process group (the audit cleans up its sandboxes) and SIGKILL to its whole tree. */
export const KILL_GRACE_MS = 3000;

/** Outcomes that may be different on another try: only these are retried. */
export const FLAKY: ReadonlySet<FleetOutcome> = new Set(['timeout', 'fetch-failed']);

/** The environment variable that marks a job's audit process (and what it starts before the sandbox scrubs the environment). */
export const JOB_MARK_VAR = 'SEALMARK_FLEET_JOB';

/** The `bin/sealmark.js` of this package: each job runs the same sealmark as the runner or worker. */
const BIN = fileURLToPath(new URL('../../bin/sealmark.js', import.meta.url));

/** The ruler of this sealmark: a record made under another one is graded again. */
export function currentRuler(): Ruler {
  return { sealmarkVersion: VERSION, methodologyVersion: METHODOLOGY_VERSION };
}

/**
 * The checks a remote gets without `--call-remotes`: the handshake (and with it the listing) and
 * the static checks that read the tool list only. No probe of these sends a tools/call.
 */
export function listOnlyChecks(): string[] {
  // A static check that also reads call results (annotations reads robust-input's) would bring its probes along.
  return checks.filter((c) => c.meta.id === 'handshake' || (c.meta.decidedBy === 'static' && c.meta.requires.length === 0)).map((c) => c.meta.id);
}

/**
 * Maps a `not-audited` reason of a report (session.ts `OpenFailure.reason`, build.ts) to a fleet
 * outcome. Everything that got as far as starting or reaching the server and then failed the
 * handshake or listing is `handshake` (the report is its evidence); unknown reasons too, since
 * only a grade may ever be an F and `handshake` keeps the report.
 */
export function outcomeOfReason(reason: string): Exclude<FleetOutcome, 'graded' | 'timeout'> {
  switch (reason) {
    case 'fetch-failed':
      return 'fetch-failed';
    case 'needs-config':
      return 'needs-config';
    case 'needs-network':
      return 'fails-offline';
    case 'unauthorized':
      return 'auth-gated';
    case 'not-runnable':
    case 'invalid-entry':
    case 'spawn-failed':
      return 'not-runnable';
    default:
      // exited-during-init, init-timeout, init-rejected, empty-tools, tools-list-failed,
      // connect-failed, tls-error, http-error, session-lost.
      return 'handshake';
  }
}

/** The record of one job from its audit's report. Pure. */
export function recordFromReport(job: FleetJob, report: Report, attempts: number, durationMs: number): FleetRecord {
  const base = { jobId: job.id, server: job.server, version: job.version, target: job.target, ruler: { sealmarkVersion: report.cliVersion, methodologyVersion: report.methodologyVersion }, finishedAt: new Date().toISOString(), durationMs, attempts, report };
  if (report.status === 'audited') {
    return { ...base, outcome: 'graded', reason: null, grade: { letter: report.grade.letter, percent: report.grade.percent }, packs: Object.fromEntries(report.grade.packs.map((p) => [p.pack, p.percent])) };
  }
  const na = report.notAudited ?? { reason: 'unknown', message: 'the report says it was not audited, without a reason' };
  return { ...base, outcome: outcomeOfReason(na.reason), reason: oneLine(`${na.reason}: ${na.message}`), grade: null, packs: {} };
}

/**
 * The one server's report in what `sealmark audit --format json` wrote: the report itself, or for a
 * client config (`--client-config … --server <name>`, which writes the document of a whole config,
 * `{kind: 'client-config', servers: [{name, report}]}`) the report of the job's server. A string
 * says why there is none (a sealmark failure, not a server's).
 */
export function serverReport(parsed: unknown, spec: JobSpec): Report | string {
  const doc = parsed as { kind?: unknown; servers?: { name?: unknown; report?: Report }[]; cliVersion?: unknown };
  if (doc && doc.kind === 'client-config' && Array.isArray(doc.servers)) {
    const want = spec.via === 'client-config' ? spec.server : undefined;
    const entry = doc.servers.find((s) => s.name === want) ?? (doc.servers.length === 1 ? doc.servers[0] : undefined);
    if (!entry?.report) return `the client config's report has no report for server ${JSON.stringify(want)}`;
    return entry.report;
  }
  if (!doc || typeof doc.cliVersion !== 'string') return 'the audit wrote a JSON document that is not a report (no cliVersion)';
  return parsed as Report;
}

/** The `sealmark audit` arguments that reach one job's target (before the common ones). */
function targetArgs(spec: JobSpec, workDir: string): string[] {
  switch (spec.via) {
    case 'server-json': {
      let file = spec.file;
      if (file === null) {
        file = join(workDir, 'server.json');
        writeFileSync(file, JSON.stringify(spec.doc));
      }
      const index = 'package' in spec.index ? ['--package-index', String(spec.index.package)] : ['--remote-index', String(spec.index.remote)];
      return ['--server-json', file, ...index];
    }
    case 'client-config':
      return ['--client-config', spec.file, '--server', spec.server];
    case 'url':
      return ['--url', spec.url];
    case 'command':
      return ['--', ...spec.argv];
  }
}

/** One job attempt to make: the job, how it starts, which attempt this is (from 1) of how many at most. */
export interface AttemptJob {
  job: FleetJob;
  spec: JobSpec;
  attempt: number;
  maxAttempts: number;
}

/** How {@link attemptJob} runs the audit. Times as named. */
export interface AttemptOptions {
  /** Seconds the attempt may take before its process tree is ended (outcome `timeout`). */
  deadlineSec: number;
  /** Call the tools of a remote; otherwise it gets {@link listOnlyChecks} only. */
  callRemotes: boolean;
  /** Keep the JSON-RPC transcript as `<dir>/<job id>.jsonl` (an absolute folder that exists). */
  transcripts?: string;
  /**
   * The job's mark: the prefix of its work folder in the temp folder and the value of
   * {@link JOB_MARK_VAR} in its audit's environment, so whoever outlives a dead runner or worker
   * finds what it left ({@link endMarked}). Must start with `sealmark-`.
   */
  mark: string;
  /** Called once the audit process runs, with its pid and work folder. */
  onStart?: (pid: number, workDir: string) => void;
}

/**
 * What one attempt gave: a record (`flaky` when its outcome may differ on another try and this
 * was not the last attempt: the caller retries it rather than storing it), or a failure of
 * sealmark itself (the audit ended without a report; no record).
 */
export type AttemptResult = { kind: 'record'; record: FleetRecord; flaky: boolean } | { kind: 'failed'; error: string; ms: number };

/** The audit children now running, by mark: ended by {@link endRunningAudits}. */
const running = new Map<string, { pid: number; tree: ProcessTree; workDir: string }>();

/**
 * Sends `signal` to a job's process group and, for SIGKILL, to every descendant the tree saw
 * (a process that left the group). Errors (already gone) are ignored.
 */
export function signalJob(pid: number, signal: NodeJS.Signals, tree?: ProcessTree): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* gone */
  }
  if (signal === 'SIGKILL') tree?.signalAll('SIGKILL');
}

/**
 * Sends SIGTERM to every audit this process is running (each then ends its servers and removes
 * its sandboxes) and removes their work folders. Returns how many there were. For an exiting
 * runner or worker: their jobs are run again later.
 */
export function endRunningAudits(): number {
  const n = running.size;
  for (const { pid, workDir } of running.values()) {
    signalJob(pid, 'SIGTERM');
    rmSync(workDir, { recursive: true, force: true });
  }
  running.clear();
  return n;
}

/**
 * Runs one attempt of a job: a fresh work folder named after `opts.mark` (with a
 * `sealmark.config.json` of `{}` given as `--config`, so that no config of the operator's or the
 * server's is found upward: a public grade uses the defaults), the audit child in its own process
 * group, the deadline (SIGTERM to the group, SIGKILL to the whole tree {@link KILL_GRACE_MS}
 * later). The work folder, and any sandbox folder the audit left (killed, it cannot remove them),
 * are removed before this resolves. Never rejects for a server's behaviour.
 */
export async function attemptJob(a: AttemptJob, opts: AttemptOptions): Promise<AttemptResult> {
  const started = Date.now();
  const { job, spec } = a;
  const workDir = mkdtempSync(join(tmpdir(), `${opts.mark}-`));
  const timeoutRecord = (ms: number): FleetRecord => ({ jobId: job.id, server: job.server, version: job.version, target: job.target, ruler: currentRuler(), outcome: 'timeout', reason: `the job's deadline of ${opts.deadlineSec} s ended it (attempt ${a.attempt} of ${a.maxAttempts})`, grade: null, packs: {}, finishedAt: new Date().toISOString(), durationMs: ms, attempts: a.attempt, report: null });
  const result = (record: FleetRecord): AttemptResult => ({ kind: 'record', record, flaky: FLAKY.has(record.outcome) && a.attempt < a.maxAttempts });
  try {
    const config = join(workDir, 'sealmark.config.json');
    writeFileSync(config, '{}\n');
    const out = join(workDir, 'report.json');
    const common = ['--config', config, '--format', 'json', '--output', out, '--no-suppress', '--quiet'];
    if (spec.remote && !opts.callRemotes) common.push('--only', listOnlyChecks().join(','));
    if (opts.transcripts) common.push('--transcript', join(opts.transcripts, `${job.id}.jsonl`));
    const target = targetArgs(spec, workDir);
    // `--` and the command go last.
    const args = target[0] === '--' ? [BIN, 'audit', ...common, ...target] : [BIN, 'audit', ...target, ...common];
    // A launch line's relative paths are relative to its file, as a client config's are to the client's folder.
    const cwd = spec.via === 'command' || spec.via === 'client-config' ? dirname(job.source) : workDir;
    const child = spawn(process.execPath, args, { cwd, detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1', [JOB_MARK_VAR]: opts.mark } });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((res) => {
      child.once('error', (error) => res({ code: null, signal: null, error }));
      // On exit, not close: a process the audit left behind may hold its stderr open. The last
      // stderr bytes get a moment to arrive (they only serve an error message).
      child.once('exit', (code, signal) => {
        const done = () => res({ code, signal });
        const t = setTimeout(done, 300);
        child.stderr!.once('close', () => {
          clearTimeout(t);
          done();
        });
      });
    });
    if (child.pid === undefined) {
      const r = await exited;
      return { kind: 'failed', error: `cannot start the audit: ${r.error?.message ?? 'no pid'}`, ms: Date.now() - started };
    }
    const pid = child.pid;
    const tree = new ProcessTree(pid);
    running.set(opts.mark, { pid, tree, workDir });
    opts.onStart?.(pid, workDir);
    let timedOut = false;
    let killTimer: NodeJS.Timeout | undefined;
    const deadline = setTimeout(() => {
      timedOut = true;
      signalJob(pid, 'SIGTERM');
      killTimer = setTimeout(() => signalJob(pid, 'SIGKILL', tree), KILL_GRACE_MS);
    }, opts.deadlineSec * 1000);
    const r = await exited;
    clearTimeout(deadline);
    if (killTimer) clearTimeout(killTimer);
    // Whatever the audit left behind (it ends its own servers; this is for what escaped it).
    signalJob(pid, 'SIGKILL', tree);
    tree.stop();
    // An audit killed at the deadline (or that crashed) could not remove its sandboxes' folders:
    // their copy-on-write layers would stay in memory, in /dev/shm.
    removeScratchOf(pid);
    running.delete(opts.mark);
    const ms = Date.now() - started;
    if (timedOut) return result(timeoutRecord(ms));
    let text: string | undefined;
    try {
      text = readFileSync(out, 'utf8');
    } catch {
      /* no report */
    }
    if (text !== undefined && (r.code === 0 || r.code === 1 || r.code === 3)) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (err) {
        return { kind: 'failed', error: `the audit's JSON report does not parse (${(err as Error).message})`, ms };
      }
      const report = serverReport(parsed, spec);
      if (typeof report === 'string') return { kind: 'failed', error: report, ms };
      const record = recordFromReport(job, report, a.attempt, ms);
      if (spec.remote && !opts.callRemotes) record.listOnly = true;
      return result(record);
    }
    const how = r.error ? r.error.message : r.signal ? `signal ${r.signal}` : `exit code ${r.code}`;
    return { kind: 'failed', error: oneLine(`the audit ended (${how}) without a report: ${stderr.trim().split('\n').slice(-3).join(' / ') || 'no output'}`), ms };
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** Processes of this user whose environment holds `JOB_MARK_VAR=<a mark that passes test>` (Linux; elsewhere none), with their mark. */
export function markedProcesses(test: (mark: string) => boolean): { pid: number; mark: string }[] {
  if (process.platform !== 'linux') return [];
  const key = `${JOB_MARK_VAR}=`;
  const out: { pid: number; mark: string }[] = [];
  for (const n of readdirSync('/proc')) {
    const pid = Number(n);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    try {
      for (const entry of readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0')) {
        if (entry.startsWith(key) && test(entry.slice(key.length))) out.push({ pid, mark: entry.slice(key.length) });
      }
    } catch {
      /* gone, or not ours */
    }
  }
  return out;
}

/**
 * Ends what a dead runner or worker left of one job: the processes carrying `mark` (and `pids`,
 * the ones a store remembered) get SIGTERM to their group (the audit ends its servers and removes
 * its sandboxes), then SIGKILL after {@link KILL_GRACE_MS}; the sandbox folders those processes
 * left ({@link removeScratchOf}), the work folders `$TMPDIR/<mark>-*` and `workDir` are removed.
 */
export async function endMarked(mark: string, pids: readonly number[] = [], workDir: string | null = null): Promise<void> {
  const all = new Set([...markedProcesses((m) => m === mark).map((p) => p.pid), ...pids]);
  for (const pid of all) signalJob(pid, 'SIGTERM');
  const until = Date.now() + KILL_GRACE_MS;
  while (Date.now() < until && [...all].some((p) => pidAlive(p))) await sleep(100);
  for (const pid of all) {
    signalJob(pid, 'SIGKILL');
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  for (const pid of all) removeScratchOf(pid);
  for (const name of readdirSync(tmpdir())) if (name.startsWith(`${mark}-`)) rmSync(join(tmpdir(), name), { recursive: true, force: true });
  if (workDir) rmSync(workDir, { recursive: true, force: true });
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** One line of at most 400 characters. */
export function oneLine(s: string): string {
  const l = s.replace(/\s+/g, ' ').trim();
  return l.length > 400 ? `${l.slice(0, 399)}…` : l;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
