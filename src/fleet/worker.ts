/**
 * `sealmark fleet worker --queue redis://… [--jobs N]` (SPEC section 10): a BullMQ Worker of
 * concurrency N on the queue of queue.ts, running each job as one attempt (attempt.ts, the same
 * function as the embedded pool) and handing back its record as the job's return value.
 *
 * Retries are BullMQ's: a flaky outcome (`timeout`, `fetch-failed`) before the job's last attempt
 * throws, so BullMQ tries it again after its exponential backoff; on the last attempt its record is
 * returned. Every other outcome is an answer: its record is returned at once, never retried. An
 * audit that ended without a report (sealmark itself failed), or a job from a runner of another
 * sealmark (ruler), throws UnrecoverableError: the job fails at once, and the runner reports it.
 *
 * BullMQ has no job timeout: the attempt's own deadline ends the audit's process tree. A worker
 * killed mid-job loses nothing: its lock lapses after `lockSec`, the stalled-job check of another
 * worker puts the job back, and it runs once more there (maxStalledCount 1: a job that stalls
 * twice fails instead of looping). What a killed worker left running on this machine is ended by
 * the next job any worker here starts (its processes carry the dead worker's pid in their mark).
 */
import { readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { attemptJob, currentRuler, endMarked, endRunningAudits, markedProcesses } from './attempt.js';
import { FetchLimiter, fetchTokenOf } from './fetch-limit.js';
import { checkQueue, connectionOf, QUEUE_NAME, shownUrl, type QueueJobData } from './queue.js';
import { alive } from './store.js';
import { processStartTime } from '../target/process-tree.js';
import type { FleetRecord } from './types.js';

/** Options of {@link runWorker}. Times as named. */
export interface WorkerOptions {
  /** The `--queue` URL. */
  queue: string;
  /** The BullMQ queue's name, as the runner's `--queue-name` (default {@link QUEUE_NAME}). */
  queueName?: string;
  /** Jobs run at once (BullMQ concurrency, ≥ 1). */
  jobs: number;
  /** Most fetches started per minute per registry type, on this worker. */
  fetchRate: number;
  /**
   * Seconds a job's lock lasts unless renewed (the worker renews it every half of this while the
   * job runs), and the interval of the stalled-job check: a killed worker's job runs again within
   * about twice this. Default {@link DEFAULT_LOCK_SEC}.
   */
  lockSec?: number;
  /** Where the worker says what it does, one line per attempt. Default process.stdout. */
  log?: NodeJS.WritableStream;
}

/** Default `--lock-duration`: BullMQ's own default lockDuration, 30 s. */
export const DEFAULT_LOCK_SEC = 30;

/** The mark prefix of this worker's jobs: `sealmark-fleetw-<pid>-<start time>-`. */
function markPrefix(pid: number, start: string): string {
  return `sealmark-fleetw-${pid}-${start}-`;
}

/** True when a `sealmark-fleetw-<pid>-<start>-…` name belongs to a worker that no longer runs. */
function ownerDead(name: string): boolean {
  const [pid, start] = name.slice('sealmark-fleetw-'.length).split('-');
  return !!pid && !!start && !alive(Number(pid), start);
}

/**
 * Ends what dead workers of this machine left: audits whose mark names a worker pid (and start
 * time) that no longer runs, and the work folders of such marks in the temp folder (an audit may
 * have finished on its own after its worker died, leaving its folder).
 */
async function endDeadWorkersJobs(): Promise<void> {
  const dead = new Set<string>();
  for (const { mark } of markedProcesses((m) => m.startsWith('sealmark-fleetw-'))) if (ownerDead(mark)) dead.add(mark);
  await Promise.all([...dead].map((m) => endMarked(m)));
  for (const name of readdirSync(tmpdir())) if (name.startsWith('sealmark-fleetw-') && ownerDead(name)) rmSync(join(tmpdir(), name), { recursive: true, force: true });
}

/**
 * Runs a worker until SIGINT or SIGTERM: the first closes it gracefully (no new job is taken; the
 * running ones finish and hand back their records), a second ends the running audits at once
 * (their jobs run again elsewhere once their lock lapses). Throws QueueUnreachableError (exit 2)
 * when Redis does not answer at start; later outages are waited out (BullMQ reconnects), with one
 * line when the queue goes away and one when it is back. Resolves to 0 once closed.
 */
export async function runWorker(opts: WorkerOptions): Promise<number> {
  const log = opts.log ?? process.stdout;
  const say = (line: string) => log.write(`fleet worker: ${line}\n`);
  const connection = connectionOf(opts.queue);
  const { maxmemoryPolicy } = await checkQueue(opts.queue);
  if (maxmemoryPolicy !== null && maxmemoryPolicy !== 'noeviction') say(`warning: Redis's maxmemory-policy is ${maxmemoryPolicy}; BullMQ needs noeviction, or Redis may drop jobs when it is full`);
  const me = `${markPrefix(process.pid, processStartTime(process.pid) ?? '0')}`;
  const ruler = currentRuler();
  const limiter = new FetchLimiter(opts.fetchRate);
  const lockMs = (opts.lockSec ?? DEFAULT_LOCK_SEC) * 1000;
  await endDeadWorkersJobs();

  const processor = async (job: Job<QueueJobData, FleetRecord>): Promise<FleetRecord> => {
    const d = job.data;
    if (d.ruler.sealmarkVersion !== ruler.sealmarkVersion || d.ruler.methodologyVersion !== ruler.methodologyVersion) {
      throw new UnrecoverableError(`this worker runs sealmark ${ruler.sealmarkVersion} / methodology ${ruler.methodologyVersion}, the runner ${d.ruler.sealmarkVersion} / ${d.ruler.methodologyVersion}: its record would not count`);
    }
    await endDeadWorkersJobs();
    const token = fetchTokenOf(d.spec);
    if (token) await limiter.take(token);
    const attempt = job.attemptsMade + 1;
    const maxAttempts = job.opts.attempts ?? 1;
    const label = `job ${job.id} (${d.job.server}${d.job.version ? `@${d.job.version}` : ''}) attempt ${attempt}/${maxAttempts}`;
    say(`${label}: started`);
    const a = await attemptJob({ job: d.job, spec: d.spec, attempt, maxAttempts }, { deadlineSec: d.deadlineSec, callRemotes: d.callRemotes, mark: `${me}${job.id}` });
    if (a.kind === 'failed') {
      say(`${label}: failed: ${a.error}`);
      throw new UnrecoverableError(a.error);
    }
    if (a.flaky) {
      say(`${label}: ${a.record.outcome}, tried again after a backoff`);
      throw new Error(`${a.record.outcome}: ${a.record.reason ?? ''}`);
    }
    say(`${label}: ${a.record.outcome}${a.record.grade?.letter ? ` ${a.record.grade.letter}` : ''}, handed back`);
    return a.record;
  };

  const worker = new Worker<QueueJobData, FleetRecord>(opts.queueName ?? QUEUE_NAME, processor, { connection, concurrency: Math.max(1, opts.jobs), lockDuration: lockMs, stalledInterval: lockMs, maxStalledCount: 1, autorun: false });
  let down = false;
  worker.on('error', (e: Error) => {
    if (down) return;
    down = true;
    say(`the queue at ${shownUrl(opts.queue)} does not answer (${e.message}); waiting for it`);
  });
  worker.on('ready', () => {
    if (!down) return;
    down = false;
    say(`the queue at ${shownUrl(opts.queue)} answers again`);
  });

  // sealmark's cli ends the process on the first signal; a worker first closes gracefully.
  let closing: Promise<void> | undefined;
  const onSignal = (sig: NodeJS.Signals) => {
    if (!closing) {
      say(`${sig}: finishing the running jobs, taking no new one (again to stop at once)`);
      closing = worker.close().catch(() => undefined);
      return;
    }
    const n = endRunningAudits();
    say(`${sig}: stopped ${n} running audit${n === 1 ? '' : 's'}; their jobs run again once their lock lapses`);
    process.exit(sig === 'SIGINT' ? 130 : 143);
  };
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.removeAllListeners(sig);
    process.on(sig, onSignal);
  }
  say(`running up to ${Math.max(1, opts.jobs)} job${opts.jobs === 1 ? '' : 's'} at once from ${shownUrl(opts.queue)} (queue ${opts.queueName ?? QUEUE_NAME}), sealmark ${ruler.sealmarkVersion} / methodology ${ruler.methodologyVersion}`);
  await worker.run();
  await closing;
  say('closed');
  return 0;
}
