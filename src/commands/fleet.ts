/**
 * `sealmark fleet run <targets…> --store <dir> [--queue <url>]` and `sealmark fleet worker --queue
 * <url>` (SPEC section 10): parse the options and run fleet/run.ts (embedded), fleet/queue.ts (the
 * runner on BullMQ) or fleet/worker.ts. Exit codes: 0 the run completed (whatever the grades), 1 a job could not be run at
 * all because of sealmark itself, 2 usage (a bad option, a bad target file, a store in use).
 */
import { availableParallelism } from 'node:os';
import { UsageError } from './common.js';

export interface FleetRunCliOptions {
  store?: string;
  jobs?: string;
  deadline?: string;
  regrade?: string[];
  callRemotes?: boolean;
  fetchRate?: string;
  attempts?: string;
  transcripts?: string;
  queue?: string;
  queueName?: string;
  queueTimeout?: string;
}

/**
 * Default `--jobs`: half the cores, at least 1 (research/fleet-and-registry.md §3: each audit
 * holds one or two cores, in its child process and its server).
 */
export function defaultJobs(): number {
  return Math.max(1, Math.floor(availableParallelism() / 2));
}

/** Default `--deadline`: seconds one attempt of a job may take. */
export const DEFAULT_DEADLINE_SEC = 300;
/** Default `--fetch-rate`: fetches started per minute per registry type. */
export const DEFAULT_FETCH_RATE = 60;

/** A number option within [min, max]; integers only unless `real`. Throws UsageError naming the flag. */
function parseNumber(flag: string, value: string | undefined, fallback: number, min: number, max: number, real = false): number {
  if (value === undefined) return fallback;
  const n = (real ? /^\d+(\.\d+)?$/ : /^\d+$/).test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isFinite(n) || n < min || n > max) throw new UsageError(`${flag} ${JSON.stringify(value)}: expected ${real ? 'a number' : 'a whole number'} from ${min} to ${max}`);
  return n;
}

/** Runs `sealmark fleet run`; resolves to the exit code. Throws UsageError (exit 2). */
export async function runFleetRun(targets: string[], opts: FleetRunCliOptions): Promise<number> {
  if (targets.length === 0) throw new UsageError('fleet run: give at least one target (server.json files or folders, registry list pages, client configs, launch-line files)');
  if (!opts.store) throw new UsageError('fleet run: --store <dir> is required (the folder that keeps fleet.db)');
  const jobs = parseNumber('--jobs', opts.jobs, defaultJobs(), 1, 64);
  const deadlineSec = parseNumber('--deadline', opts.deadline, DEFAULT_DEADLINE_SEC, 1, 86_400, true);
  const fetchRate = parseNumber('--fetch-rate', opts.fetchRate, DEFAULT_FETCH_RATE, 1, 100_000, true);
  const maxAttempts = parseNumber('--attempts', opts.attempts, 2, 1, 10);
  const regrade = opts.regrade ?? [];
  const callRemotes = opts.callRemotes === true;
  let summary;
  if (opts.queue !== undefined) {
    // The workers run the jobs: --jobs and --fetch-rate are theirs, transcripts stay on their machines.
    if (opts.jobs !== undefined || opts.fetchRate !== undefined || opts.transcripts !== undefined) throw new UsageError('fleet run --queue: --jobs, --fetch-rate and --transcripts belong to the workers (sealmark fleet worker)');
    const queueTimeoutSec = parseNumber('--queue-timeout', opts.queueTimeout, 120, 1, 86_400, true);
    const { runFleetOnQueue, queueNameOf } = await import('../fleet/queue.js');
    const queueName = queueNameOf(opts.queueName);
    summary = await runFleetOnQueue({ targets, store: opts.store, queue: opts.queue, queueName, deadlineSec, regrade, callRemotes, maxAttempts, queueTimeoutSec });
  } else {
    if (opts.queueTimeout !== undefined || opts.queueName !== undefined) throw new UsageError(`fleet run: ${opts.queueTimeout !== undefined ? '--queue-timeout' : '--queue-name'} goes with --queue`);
    const { runFleet } = await import('../fleet/run.js');
    summary = await runFleet({
      targets,
      store: opts.store,
      jobs,
      deadlineSec,
      regrade,
      callRemotes,
      fetchRate,
      maxAttempts,
      ...(opts.transcripts ? { transcripts: opts.transcripts } : {}),
    });
  }
  if (summary.stopped) process.stderr.write(`sealmark: fleet run stopped: ${summary.stopped}\n`);
  for (const f of summary.failed) process.stderr.write(`sealmark: fleet job ${f.jobId} could not be run: ${f.error}\n`);
  return summary.failed.length > 0 || summary.stopped ? 1 : 0;
}

export interface FleetWorkerCliOptions {
  queue?: string;
  queueName?: string;
  jobs?: string;
  fetchRate?: string;
  lockDuration?: string;
}

/**
 * Runs `sealmark fleet worker --queue <url> [--queue-name name] [--jobs N] [--fetch-rate N] [--lock-duration sec]`
 * (fleet/worker.ts) until SIGINT or SIGTERM; resolves to 0 once closed. Throws UsageError (exit 2)
 * for a bad option and when the queue does not answer at start.
 */
export async function runFleetWorker(opts: FleetWorkerCliOptions): Promise<number> {
  if (!opts.queue) throw new UsageError('fleet worker: --queue redis://host:port is required (the Redis of the runner, sealmark fleet run --queue)');
  const jobs = parseNumber('--jobs', opts.jobs, defaultJobs(), 1, 64);
  const fetchRate = parseNumber('--fetch-rate', opts.fetchRate, DEFAULT_FETCH_RATE, 1, 100_000, true);
  const { runWorker, DEFAULT_LOCK_SEC } = await import('../fleet/worker.js');
  const { queueNameOf } = await import('../fleet/queue.js');
  const lockSec = parseNumber('--lock-duration', opts.lockDuration, DEFAULT_LOCK_SEC, 1, 3600, true);
  return runWorker({ queue: opts.queue, queueName: queueNameOf(opts.queueName), jobs, fetchRate, lockSec });
}

export interface FleetReportCliOptions {
  store?: string;
  output?: string;
}

/**
 * Runs `sealmark fleet report --store <dir> [--output <dir>]`: reads every record of the store
 * (read-only, so it may run beside a runner) and writes the leaderboard (fleet/board.ts) into
 * `--output`, default `<store>/report`. Prints the index page's path. Resolves to 0; throws
 * UsageError (exit 2) for a missing option or a folder with no store.
 */
export async function runFleetReport(opts: FleetReportCliOptions): Promise<number> {
  if (!opts.store) throw new UsageError('fleet report: --store <dir> is required (the folder that keeps fleet.db)');
  const [{ FleetStore }, { writeLeaderboard }, { join, resolve }] = await Promise.all([import('../fleet/store.js'), import('../fleet/board.js'), import('node:path')]);
  const store = FleetStore.openReadOnly(opts.store);
  let records;
  try {
    records = store.records();
  } finally {
    store.close();
  }
  const out = resolve(opts.output ?? join(opts.store, 'report'));
  const { files } = writeLeaderboard(records, out);
  const servers = new Set(records.map((r) => r.server)).size;
  process.stdout.write(`sealmark: fleet report of ${servers} server${servers === 1 ? '' : 's'} (${records.length} record${records.length === 1 ? '' : 's'}): ${join(out, 'index.html')} (${files.length} files)\n`);
  return 0;
}
