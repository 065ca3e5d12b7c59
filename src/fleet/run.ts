/**
 * The embedded fleet runner (SPEC section 10): a pool of `jobs` workers on one machine, each job a
 * child `sealmark audit … --format json --no-suppress` in its own process group, with a deadline
 * enforced by ending its whole process tree; every finished job one record in the store.
 *
 * Flow, one way: targets (targets.ts) → jobs in the store → claim → audit child → report file →
 * {@link recordFromReport} → `store.complete` (record and completion in one transaction).
 * Only flaky outcomes (`timeout`, `fetch-failed`) are tried again, with exponential backoff, up to
 * `maxAttempts` in all; the others are answers and are recorded at once.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checks } from '../checks/index.js';
import type { Report } from '../report/build.js';
import { ProcessTree } from '../target/process-tree.js';
import { METHODOLOGY_VERSION, VERSION } from '../version.js';
import { alive, FleetStore, type Orphan, type StoredJob } from './store.js';
import { readTargets, type JobSpec } from './targets.js';
import { FetchLimiter } from './fetch-limit.js';
import { Progress, type FleetSummary } from './progress.js';
import type { FleetOutcome, FleetRecord, Ruler } from './types.js';

/** Options of {@link runFleet}. Times as named (s or ms). */
export interface FleetRunOptions {
  /** Files and folders of targets (targets.ts). */
  targets: string[];
  /** The store folder (fleet.db inside). */
  store: string;
  /** Audits at once (≥ 1). */
  jobs: number;
  /** Seconds one attempt of a job may take before its process tree is ended (outcome `timeout`). */
  deadlineSec: number;
  /** Server names graded again even when they have a record under the current ruler. */
  regrade: string[];
  /** Call the tools of remotes (`remotes[]`, URLs): otherwise only their listing, static checks and handshake. */
  callRemotes: boolean;
  /** Most fetches started per minute per registry type (npm, pypi, oci). */
  fetchRate: number;
  /** Attempts a job gets for flaky outcomes (timeout, fetch-failed). Default {@link DEFAULT_ATTEMPTS}. */
  maxAttempts?: number;
  /** ms before the first retry; doubled for each later one. Default {@link BACKOFF_MS}. */
  backoffMs?: number;
  /** Keep each job's JSON-RPC transcript as `<dir>/<job id>.jsonl`. */
  transcripts?: string;
  /** Where progress goes (a TTY gets a live line; otherwise only the summary). Default process.stderr. */
  progress?: NodeJS.WriteStream;
}

export type { FleetSummary } from './progress.js';

/** Attempts per job for flaky outcomes, by default (research §3: BullMQ `attempts`, default 2). */
export const DEFAULT_ATTEMPTS = 2;
/** First retry's backoff in ms (then doubled), plus up to 25 % jitter. */
export const BACKOFF_MS = 1000;
/** ms between SIGTERM to a job's process group (the audit cleans up its sandboxes) and SIGKILL to its whole tree. */
export const KILL_GRACE_MS = 3000;

/** Outcomes that may be different on another try. */
const FLAKY: ReadonlySet<FleetOutcome> = new Set(['timeout', 'fetch-failed']);

/** The `bin/sealmark.js` of this package: each job runs the same sealmark as the runner. */
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
export function recordFromReport(job: StoredJob, report: Report, attempts: number, durationMs: number): FleetRecord {
  const base = { jobId: job.id, server: job.server, version: job.version, target: job.target, ruler: { sealmarkVersion: report.cliVersion, methodologyVersion: report.methodologyVersion }, finishedAt: new Date().toISOString(), durationMs, attempts, report };
  if (report.status === 'audited') {
    return { ...base, outcome: 'graded', reason: null, grade: { letter: report.grade.letter, percent: report.grade.percent }, packs: Object.fromEntries(report.grade.packs.map((p) => [p.pack, p.percent])) };
  }
  const na = report.notAudited ?? { reason: 'unknown', message: 'the report says it was not audited, without a reason' };
  return { ...base, outcome: outcomeOfReason(na.reason), reason: oneLine(`${na.reason}: ${na.message}`), grade: null, packs: {} };
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

/** What one attempt of a job gave: a report, the deadline, or a failure of sealmark itself. */
type Attempt = { kind: 'report'; report: Report; ms: number } | { kind: 'timeout'; ms: number } | { kind: 'failed'; error: string; ms: number };

/** The audit children now running, by job id: ended when the runner exits. */
const running = new Map<string, { pid: number; tree: ProcessTree; workDir: string }>();

/**
 * Sends `signal` to a job's process group and, for SIGKILL, to every descendant the tree saw
 * (a process that left the group). Errors (already gone) are ignored.
 */
function signalJob(pid: number, signal: NodeJS.Signals, tree?: ProcessTree): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* gone */
  }
  if (signal === 'SIGKILL') tree?.signalAll('SIGKILL');
}

/**
 * Runs one attempt: a fresh work folder (with a `sealmark.config.json` of `{}` given as
 * `--config`, so that no config of the operator's or the server's is found upward: a public grade
 * uses the defaults), the audit child in its own process group, the deadline. The work folder is
 * removed before this resolves.
 */
async function runAttempt(store: FleetStore, job: StoredJob, opts: FleetRunOptions): Promise<Attempt> {
  const started = Date.now();
  const mark = jobMark(store, job.id);
  // Named after the job, so that a later runner finds it even when this one died before storing it.
  const workDir = mkdtempSync(join(tmpdir(), `${mark}-`));
  try {
    const spec = job.spec as JobSpec;
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
    const child = spawn(process.execPath, args, { cwd, detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1', [JOB_MARK_VAR]: mark } });
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
    running.set(job.id, { pid, tree, workDir });
    store.setWorker(job.id, pid, workDir);
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
    running.delete(job.id);
    const ms = Date.now() - started;
    if (timedOut) return { kind: 'timeout', ms };
    let text: string | undefined;
    try {
      text = readFileSync(out, 'utf8');
    } catch {
      /* no report */
    }
    if (text !== undefined && (r.code === 0 || r.code === 1 || r.code === 3)) {
      try {
        return { kind: 'report', report: JSON.parse(text) as Report, ms };
      } catch (err) {
        return { kind: 'failed', error: `the audit's JSON report does not parse (${(err as Error).message})`, ms };
      }
    }
    const how = r.error ? r.error.message : r.signal ? `signal ${r.signal}` : `exit code ${r.code}`;
    return { kind: 'failed', error: oneLine(`the audit ended (${how}) without a report: ${stderr.trim().split('\n').slice(-3).join(' / ') || 'no output'}`), ms };
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** The environment variable that marks a job's audit process (and what it starts before the sandbox scrubs the environment). */
export const JOB_MARK_VAR = 'SEALMARK_FLEET_JOB';

/** `sealmark-fleet-<8 hex of the store's path>-<job id>`: the job's mark and its work folder's prefix. */
function jobMark(store: FleetStore, jobId: string): string {
  return `sealmark-fleet-${createHash('sha256').update(store.dir).digest('hex').slice(0, 8)}-${jobId}`;
}

/** Processes of this user whose environment holds `JOB_MARK_VAR=mark` (Linux; elsewhere none). */
function markedProcesses(mark: string): number[] {
  if (process.platform !== 'linux') return [];
  const needle = Buffer.from(`${JOB_MARK_VAR}=${mark}\0`);
  const out: number[] = [];
  for (const n of readdirSync('/proc')) {
    const pid = Number(n);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${pid}/environ`);
      const at = env.indexOf(needle);
      if (at === 0 || (at > 0 && env[at - 1] === 0)) out.push(pid);
    } catch {
      /* gone, or not ours */
    }
  }
  return out;
}

/**
 * Ends the audits a dead runner left and removes their work folders. The audit processes are found
 * by the pid the store kept and by their job mark (the runner may have died between starting an
 * audit and storing its pid); each gets SIGTERM to its group (the audit ends its servers and
 * removes its sandboxes), then SIGKILL after the grace period.
 */
async function endOrphans(store: FleetStore, orphans: readonly Orphan[]): Promise<void> {
  await Promise.all(
    orphans.map(async (o) => {
      const mark = jobMark(store, o.jobId);
      const pids = new Set(markedProcesses(mark));
      if (o.pid !== null && alive(o.pid, o.startTime)) pids.add(o.pid);
      for (const pid of pids) signalJob(pid, 'SIGTERM');
      const until = Date.now() + KILL_GRACE_MS;
      while (Date.now() < until && [...pids].some((p) => alive(p, null))) await sleep(100);
      for (const pid of pids) {
        signalJob(pid, 'SIGKILL');
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      for (const name of readdirSync(tmpdir())) if (name.startsWith(`${mark}-`)) rmSync(join(tmpdir(), name), { recursive: true, force: true });
      if (o.workDir) rmSync(o.workDir, { recursive: true, force: true });
    }),
  );
}

/**
 * Runs a fleet: reads the targets (UsageError naming a bad file), opens the store (StoreBusyError
 * when another runner holds it), recovers what a dead runner left, queues every job without a
 * record under the current ruler (and every job of a `regrade` server), runs them `jobs` at a
 * time, and resolves to the summary. Never rejects for a server's behaviour.
 */
export async function runFleet(opts: FleetRunOptions): Promise<FleetSummary> {
  const started = Date.now();
  const planned = readTargets(opts.targets);
  if (opts.transcripts) {
    opts = { ...opts, transcripts: resolve(opts.transcripts) };
    mkdirSync(opts.transcripts!, { recursive: true });
  }
  const store = FleetStore.open(opts.store);
  let recorded = 0;
  const onExit = () => {
    // Interrupted: end the audits (each cleans up its sandboxes on SIGTERM); their jobs stay
    // active in the store and the next run puts them back.
    const stopped = running.size;
    for (const { pid, workDir } of running.values()) {
      signalJob(pid, 'SIGTERM');
      rmSync(workDir, { recursive: true, force: true });
    }
    running.clear();
    store.close();
    (opts.progress ?? process.stderr).write(`fleet: stopped after ${recorded} new records; ${stopped} running ${stopped === 1 ? 'audit was' : 'audits were'} stopped and ${stopped === 1 ? 'its job waits' : 'their jobs wait'} for the next run\n`);
  };
  process.once('exit', onExit);
  try {
    await endOrphans(store, store.recover());
    store.upsertJobs(planned);
    const ruler = currentRuler();
    const regrade = new Set(opts.regrade);
    const todo = planned.filter((p) => regrade.has(p.job.server) || !store.hasRecord(p.job.id, ruler)).map((p) => p.job.id);
    store.enqueue(todo);
    const summary: FleetSummary = { total: planned.length, skipped: planned.length - todo.length, ran: 0, outcomes: {}, failed: [], ms: 0 };
    const pending = new Set(todo);
    const limiter = new FetchLimiter(opts.fetchRate);
    const progress = new Progress(opts.progress ?? process.stderr, todo.length, summary);
    const maxAttempts = opts.maxAttempts ?? DEFAULT_ATTEMPTS;
    const backoff = opts.backoffMs ?? BACKOFF_MS;

    const worker = async () => {
      for (;;) {
        if (pending.size === 0) return;
        const job = store.claimNext([...pending]);
        if (!job) {
          // Every pending job is either being run by another worker or waiting out a backoff.
          await sleep(100);
          continue;
        }
        pending.delete(job.id);
        const spec = job.spec as JobSpec;
        if (spec.fetch) await limiter.take(spec.fetch);
        progress.running(+1);
        const a = await runAttempt(store, job, opts);
        progress.running(-1);
        if (a.kind === 'failed') {
          store.fail(job.id, a.error);
          summary.failed.push({ jobId: job.id, error: a.error });
          progress.done();
          continue;
        }
        const record: FleetRecord =
          a.kind === 'report'
            ? recordFromReport(job, a.report, job.attempts, a.ms)
            : { jobId: job.id, server: job.server, version: job.version, target: job.target, ruler, outcome: 'timeout', reason: `the job's deadline of ${opts.deadlineSec} s ended it (attempt ${job.attempts} of ${maxAttempts})`, grade: null, packs: {}, finishedAt: new Date().toISOString(), durationMs: a.ms, attempts: job.attempts, report: null };
        if (FLAKY.has(record.outcome) && job.attempts < maxAttempts) {
          const wait = backoff * 2 ** (job.attempts - 1) * (1 + Math.random() / 4);
          store.retryLater(job.id, new Date(Date.now() + wait));
          pending.add(job.id);
          continue;
        }
        store.complete(record);
        recorded++;
        summary.ran++;
        summary.outcomes[record.outcome] = (summary.outcomes[record.outcome] ?? 0) + 1;
        progress.done();
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, opts.jobs) }, worker));
    summary.ms = Date.now() - started;
    progress.finish();
    return summary;
  } finally {
    process.removeListener('exit', onExit);
    store.close();
  }
}

function oneLine(s: string): string {
  const l = s.replace(/\s+/g, ' ').trim();
  return l.length > 400 ? `${l.slice(0, 399)}…` : l;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
