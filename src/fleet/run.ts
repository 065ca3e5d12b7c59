/**
 * The embedded fleet runner (SPEC section 10): a pool of `jobs` workers on one machine, each job a
 * child `sealmark audit … --format json --no-suppress` in its own process group, with a deadline
 * enforced by ending its whole process tree; every finished job one record in the store.
 *
 * Flow, one way: targets (targets.ts) → jobs in the store → claim → one attempt (attempt.ts, the
 * same function the BullMQ worker of queue.ts calls: audit child → report file →
 * recordFromReport) → `store.complete` (record and completion in one transaction).
 * Only flaky outcomes (`timeout`, `fetch-failed`) are tried again, with exponential backoff, up to
 * `maxAttempts` in all; the others are answers and are recorded at once.
 */
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { alive, FleetStore, type Orphan } from './store.js';
import { longestFirst } from './order.js';
import { readTargets, type JobSpec } from './targets.js';
import { FetchLimiter, fetchTokenOf } from './fetch-limit.js';
import { Progress, type FleetSummary } from './progress.js';
import { attemptJob, currentRuler, endMarked, endRunningAudits, sleep } from './attempt.js';
import type { FleetRecord } from './types.js';
import { runState } from '../run-state.js';

export { currentRuler, JOB_MARK_VAR, KILL_GRACE_MS, listOnlyChecks, outcomeOfReason, recordFromReport } from './attempt.js';

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

/** `sealmark-fleet-<8 hex of the store's path>-<job id>`: the job's mark and its work folder's prefix. */
function jobMark(store: FleetStore, jobId: string): string {
  return `sealmark-fleet-${createHash('sha256').update(store.dir).digest('hex').slice(0, 8)}-${jobId}`;
}

/**
 * Ends the audits a dead runner left and removes their work folders. The audit processes are found
 * by the pid the store kept and by their job mark (the runner may have died between starting an
 * audit and storing its pid); each gets SIGTERM to its group, then SIGKILL after the grace period.
 */
export async function endOrphans(store: FleetStore, orphans: readonly Orphan[]): Promise<void> {
  await Promise.all(orphans.map((o) => endMarked(jobMark(store, o.jobId), o.pid !== null && alive(o.pid, o.startTime) ? [o.pid] : [], o.workDir)));
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
    const stopped = endRunningAudits();
    store.close();
    (opts.progress ?? process.stderr).write(`fleet: stopped after ${recorded} new records; ${stopped} running ${stopped === 1 ? 'audit was' : 'audits were'} stopped and ${stopped === 1 ? 'its job waits' : 'their jobs wait'} for the next run\n`);
  };
  process.once('exit', onExit);
  // The line above says what an interruption left; the generic one (cli.ts) only names the signal.
  runState.interrupted = (signal) => `sealmark: fleet run interrupted (${signal})`;
  try {
    await endOrphans(store, store.recover());
    store.upsertJobs(planned);
    const ruler = currentRuler();
    const regrade = new Set(opts.regrade);
    // Longest first, by how long each took last time: a re-grade does not end waiting on one slow audit.
    const todo = longestFirst(
      planned.filter((p) => regrade.has(p.job.server) || !store.hasRecord(p.job.id, ruler)),
      store.lastDurations(),
    ).map((p) => p.job.id);
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
        const token = fetchTokenOf(spec);
        if (token) await limiter.take(token);
        progress.running(+1);
        const a = await attemptJob(
          { job, spec, attempt: job.attempts, maxAttempts },
          { deadlineSec: opts.deadlineSec, callRemotes: opts.callRemotes, ...(opts.transcripts ? { transcripts: opts.transcripts } : {}), mark: jobMark(store, job.id), onStart: (pid, workDir) => store.setWorker(job.id, pid, workDir) },
        );
        progress.running(-1);
        if (a.kind === 'failed') {
          store.fail(job.id, a.error);
          summary.failed.push({ jobId: job.id, error: a.error });
          progress.done();
          continue;
        }
        const record: FleetRecord = a.record;
        if (a.flaky) {
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
    runState.interrupted = undefined;
    process.removeListener('exit', onExit);
    store.close();
  }
}
