/**
 * Scale-out on BullMQ (SPEC section 10; research/fleet-and-registry.md §3): `sealmark fleet run …
 * --queue redis://…` puts the jobs that need grading on a BullMQ queue in Redis and collects
 * their records into its store; `sealmark fleet worker --queue redis://…` (worker.ts) runs them.
 *
 * What Redis holds: one BullMQ job per fleet job (id = the fleet job id, data = {@link QueueJobData}),
 * and once a worker is done with it, its record as the job's `returnvalue`, until this runner has
 * stored the record; then the job is removed. The store is the only place records live for good.
 *
 * Collection is by polling the queue's completed and failed lists (not by events): a poll after a
 * Redis restart, or after this runner was restarted, finds everything finished in the meantime,
 * where an event may have been missed. A record already in the store is not stored twice.
 */
import { Queue, type RedisOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { UsageError } from '../errors.js';
import { currentRuler, oneLine, sleep } from './attempt.js';
import { Progress, type FleetSummary } from './progress.js';
import { BACKOFF_MS, DEFAULT_ATTEMPTS, endOrphans, type FleetRunOptions } from './run.js';
import { FleetStore } from './store.js';
import { longestFirst } from './order.js';
import { readTargets, type JobSpec } from './targets.js';
import type { FleetJob, FleetRecord, Ruler } from './types.js';

/** The BullMQ queue every runner and worker uses (one runner per Redis database at a time). */
export const QUEUE_NAME = 'sealmark-fleet';

/**
 * Reads a `--queue-name` (default {@link QUEUE_NAME}): 1 to 100 characters of letters, digits,
 * `.`, `_` and `-`, so that several runs can share one Redis, each with its workers. BullMQ builds
 * its Redis keys as `bull:<name>:…` and refuses a `:` in a name. Throws UsageError naming the flag.
 */
export function queueNameOf(value: string | undefined): string {
  if (value === undefined) return QUEUE_NAME;
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(value)) throw new UsageError(`--queue-name ${JSON.stringify(value)}: expected 1 to 100 letters, digits, '.', '_' or '-' (the name of the BullMQ queue the runner and its workers share)`);
  return value;
}

/** Default seconds a runner waits for an unreachable queue before it stops with an error. */
export const DEFAULT_QUEUE_TIMEOUT_SEC = 120;

/** What a BullMQ job carries: the fleet job, how to start it, and the runner's settings for it. */
export interface QueueJobData {
  job: FleetJob;
  spec: JobSpec;
  /** Seconds one attempt may take. */
  deadlineSec: number;
  callRemotes: boolean;
  /** The runner's ruler: a worker of another sealmark refuses the job (its record would not count). */
  ruler: Ruler;
}

/** The queue at `--queue` cannot be reached (at start: exit 2, naming the URL and the error). */
export class QueueUnreachableError extends UsageError {}

/**
 * The Redis connection options of a `--queue` URL: `redis://[user:password@]host[:port][/db]`,
 * `rediss://…` (TLS), or a unix socket as `redis+unix:///path/to/redis.sock` or
 * `unix:///path/to/redis.sock` (`?db=N` picks the database). `maxRetriesPerRequest` is null, as
 * BullMQ's workers need. Throws UsageError for anything else.
 */
export function connectionOf(url: string): RedisOptions {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(`--queue ${JSON.stringify(url)}: expected redis://host:port, rediss://host:port or redis+unix:///path/to/redis.sock`);
  }
  const auth = { ...(u.username ? { username: decodeURIComponent(u.username) } : {}), ...(u.password ? { password: decodeURIComponent(u.password) } : {}) };
  if (u.protocol === 'redis+unix:' || u.protocol === 'unix:') {
    if (!u.pathname || u.pathname === '/') throw new UsageError(`--queue ${url}: no socket path`);
    const db = Number(u.searchParams.get('db') ?? 0);
    return { path: decodeURIComponent(u.pathname), db, ...auth, maxRetriesPerRequest: null };
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new UsageError(`--queue ${url}: expected redis://, rediss:// or redis+unix://`);
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0) throw new UsageError(`--queue ${url}: the database ${u.pathname.slice(1)} is not a number`);
  return { host: u.hostname || '127.0.0.1', port: u.port ? Number(u.port) : 6379, db, ...auth, ...(u.protocol === 'rediss:' ? { tls: {} } : {}), maxRetriesPerRequest: null };
}

/** The URL with its password hidden, for messages. */
export function shownUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}

/**
 * Resolves once Redis at `url` answers PING within `ms`; throws {@link QueueUnreachableError}
 * naming the URL and the error otherwise (one connection try, no retries). Also returns Redis's
 * `maxmemory-policy` (null when CONFIG is not allowed), which BullMQ needs to be `noeviction`.
 */
export async function checkQueue(url: string, ms = 5000): Promise<{ maxmemoryPolicy: string | null }> {
  const client = new Redis({ ...connectionOf(url), lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: ms, enableOfflineQueue: false });
  let lastError = '';
  client.on('error', (e: Error) => (lastError = e.message));
  try {
    await withTimeout(client.connect(), ms, 'no answer');
    await withTimeout(client.ping(), ms, 'no answer to PING');
    let policy: string | null = null;
    try {
      const r = (await client.config('GET', 'maxmemory-policy')) as string[];
      policy = r[1] ?? null;
    } catch {
      /* CONFIG disabled (a managed Redis): BullMQ itself warns when it can tell */
    }
    return { maxmemoryPolicy: policy };
  } catch (err) {
    throw new QueueUnreachableError(`cannot reach the queue at ${shownUrl(url)}: ${lastError || (err as Error).message || 'no answer'}`);
  } finally {
    client.disconnect();
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([p, new Promise<T>((_, rej) => (t = setTimeout(() => rej(new Error(what)), ms)))]).finally(() => clearTimeout(t));
}

/** Options of {@link runFleetOnQueue}: those of the embedded run, without `jobs` (the workers' `--jobs` count), plus the queue. */
export interface QueueRunOptions extends Omit<FleetRunOptions, 'jobs' | 'transcripts' | 'fetchRate'> {
  /** The `--queue` URL ({@link connectionOf}). */
  queue: string;
  /** The BullMQ queue's name ({@link queueNameOf}); default {@link QUEUE_NAME}. */
  queueName?: string;
  /** Seconds the queue may stay unreachable before the run stops with an error. Default {@link DEFAULT_QUEUE_TIMEOUT_SEC}. */
  queueTimeoutSec?: number;
  /** ms between two polls of the queue. Default 500. */
  pollMs?: number;
}

/**
 * Runs a fleet on a BullMQ queue: reads the targets (UsageError naming a bad file), opens the store
 * (StoreBusyError when another runner holds it), checks the queue answers
 * ({@link QueueUnreachableError}), adds every job without a record under the current ruler (and
 * every job of a `regrade` server) with its fleet job id as BullMQ jobId (an id already on the
 * queue is not added twice), then collects: each finished job's record is stored (unless the store
 * has it already) and then the job is removed from Redis; a job a worker could not run at all is
 * marked failed (summary.failed). Resolves to the summary once every job is collected, or when the
 * queue stayed unreachable for `queueTimeoutSec` (summary.stopped says so; uncollected jobs stay in
 * Redis for the next run).
 */
export async function runFleetOnQueue(opts: QueueRunOptions): Promise<FleetSummary> {
  const started = Date.now();
  const planned = readTargets(opts.targets);
  const connection = connectionOf(opts.queue);
  const store = FleetStore.open(opts.store);
  const out = opts.progress ?? process.stderr;
  let queue: Queue | undefined;
  let gone = false;
  try {
    await checkQueue(opts.queue);
    await endOrphans(store, store.recover());
    store.upsertJobs(planned);
    const ruler = currentRuler();
    const regrade = new Set(opts.regrade);
    // Longest first, by how long each took last time (BullMQ hands jobs out in the order they were added).
    const todo = longestFirst(
      planned.filter((p) => regrade.has(p.job.server) || !store.hasRecord(p.job.id, ruler)),
      store.lastDurations(),
    );
    store.enqueue(todo.map((p) => p.job.id));
    const summary: FleetSummary = { total: planned.length, skipped: planned.length - todo.length, ran: 0, outcomes: {}, failed: [], ms: 0 };
    const progress = new Progress(out, todo.length, summary);
    const maxAttempts = opts.maxAttempts ?? DEFAULT_ATTEMPTS;
    const backoff = opts.backoffMs ?? BACKOFF_MS;
    const byId = new Map(todo.map((p) => [p.job.id, p]));
    const pending = new Set(byId.keys());

    let lastError = '';
    let downSince: number | null = null;
    const timeoutMs = (opts.queueTimeoutSec ?? DEFAULT_QUEUE_TIMEOUT_SEC) * 1000;
    const wentDown = (why: string) => {
      if (downSince !== null) return;
      downSince = Date.now();
      out.write(`fleet: the queue at ${shownUrl(opts.queue)} does not answer (${why}); waiting up to ${timeoutMs / 1000} s for it\n`);
    };
    // The events stream would keep each record (a completed event carries the return value):
    // it is kept short here and emptied after each collection.
    queue = new Queue(opts.queueName ?? QUEUE_NAME, { connection, streams: { events: { maxLen: 100 } } });
    queue.on('error', (e: Error) => {
      lastError = e.message;
      wentDown(e.message);
    });
    const q = queue;
    const add = async (ids: readonly string[]) => {
      const entries = ids.map((id) => {
        const p = byId.get(id)!;
        const data: QueueJobData = { job: p.job, spec: p.spec, deadlineSec: opts.deadlineSec, callRemotes: opts.callRemotes, ruler };
        return { name: 'audit', data, opts: { jobId: id, attempts: maxAttempts, backoff: { type: 'exponential', delay: backoff, jitter: 0.25 }, removeOnComplete: false, removeOnFail: false } };
      });
      for (let i = 0; i < entries.length; i += 500) await q.addBulk(entries.slice(i, i + 500));
    };
    // A job a dead runner left failed is run again (as the embedded run retries a failed job);
    // one left completed is collected below like any other.
    for (const j of await q.getJobs(['failed'], 0, -1)) if (j?.id && pending.has(j.id)) await j.remove();
    // A runner killed between storing a record and removing its job left the job: its record is
    // in the store, so the job goes.
    const known = new Set(planned.map((p) => p.job.id));
    for (const j of await q.getJobs(['completed'], 0, -1)) if (j?.id && known.has(j.id) && !pending.has(j.id) && store.hasRecord(j.id, ruler)) await j.remove();
    await add([...pending]);

    const pollMs = opts.pollMs ?? 500;
    let active = 0;
    const keep = (record: FleetRecord) => {
      // Idempotent: a record for this job under the same ruler is stored once (for a regraded job:
      // once per finished attempt, told apart by its finishing time).
      const have = regrade.has(record.server) ? store.hasRecordAt(record.jobId, record.finishedAt) : store.hasRecord(record.jobId, record.ruler);
      if (!have) {
        store.complete(record);
        summary.ran++;
        summary.outcomes[record.outcome] = (summary.outcomes[record.outcome] ?? 0) + 1;
      }
    };
    // Redis's run_id changes when it restarts: a restart that was quick enough to raise no error
    // on the client is noticed here too.
    const runId = async () => /run_id:(\w+)/.exec(await ((await q.getBackend().client) as unknown as Redis).info('server'))?.[1] ?? '';
    let lastRunId = await runId();
    const poll = async () => {
      const id = await runId();
      if (id !== lastRunId) {
        lastRunId = id;
        wentDown('it restarted');
      }
      let collected = 0;
      for (const job of await q.getJobs(['completed'], 0, 999)) {
        if (!job?.id || !pending.has(job.id)) continue;
        keep(job.returnvalue as FleetRecord);
        // Stored (committed) first, removed after: a crash between the two stores nothing twice.
        await job.remove();
        pending.delete(job.id);
        collected++;
        progress.done();
      }
      // Nothing of sealmark reads the events; a worker's completed event holds a copy of the record.
      // Exact trimming (Queue.trimEvents trims approximately, which may keep the last ~100).
      if (collected > 0) await (await q.getBackend().client).xtrim(q.keys.events!, 'MAXLEN', 0);
      for (const job of await q.getJobs(['failed'], 0, 999)) {
        if (!job?.id || !pending.has(job.id)) continue;
        const error = oneLine(`on the worker: ${job.failedReason || 'failed without a reason'}`);
        store.fail(job.id, error);
        summary.failed.push({ jobId: job.id, error });
        await job.remove();
        pending.delete(job.id);
        progress.done();
      }
      const nowActive = (await q.getJobs(['active'], 0, -1)).filter((j) => j?.id && pending.has(j.id)).length;
      progress.running(nowActive - active);
      active = nowActive;
    };
    while (pending.size > 0) {
      // A poll waits while Redis is away (the client queues its commands until it reconnects);
      // the timeout is a backstop for a connection that hangs without an error.
      const left = downSince === null ? timeoutMs : Math.max(0, timeoutMs - (Date.now() - downSince));
      try {
        await withTimeout(poll(), Math.min(10_000, left), 'no answer');
        if (downSince !== null) {
          out.write(`fleet: the queue at ${shownUrl(opts.queue)} answers again after ${((Date.now() - downSince) / 1000).toFixed(1)} s\n`);
          downSince = null;
          // A Redis that restarted without its data lost the jobs still waiting: add them again.
          const lost: string[] = [];
          for (const id of pending) if ((await q.getJobState(id)) === 'unknown') lost.push(id);
          if (lost.length > 0) {
            out.write(`fleet: ${lost.length} job${lost.length === 1 ? ' was' : 's were'} no longer on the queue; added again\n`);
            await add(lost);
          }
        }
      } catch (err) {
        wentDown(lastError || (err as Error).message);
        if (Date.now() - downSince! >= timeoutMs) {
          gone = true;
          summary.stopped = `the queue at ${shownUrl(opts.queue)} did not answer for ${timeoutMs / 1000} s (${lastError || (err as Error).message}); ${pending.size} job${pending.size === 1 ? '' : 's'} not collected: what the workers finished stays in Redis and the next run collects it`;
          break;
        }
      }
      if (pending.size > 0) await sleep(pollMs);
    }
    progress.running(-active);
    summary.ms = Date.now() - started;
    progress.finish();
    return summary;
  } finally {
    // Not waited for long when Redis is gone for good: close() would wait for it, and a
    // reconnecting client would keep the process alive (disconnect stops it; its promise may
    // never settle then, so it is not awaited).
    if (queue) {
      if (!gone) await withTimeout(queue.close(), 2000, 'close').catch(() => undefined);
      void queue.disconnect().catch(() => undefined);
    }
    store.close();
  }
}
