/**
 * The embedded fleet store (SPEC section 10): one SQLite file, `<store dir>/fleet.db`, through
 * better-sqlite3 12 (the major that runs on Node 20; move to `node:sqlite` on Node ≥ 22.13).
 *
 * Two tables, with BullMQ's job words (research/fleet-and-registry.md §3): `jobs` (one row per
 * job id: its target, `state` waiting | active | completed | failed, `attempts`, times, and while
 * active the runner and the audit process working on it) and `records` (append-only: one row per
 * finished job per run, with the ruler, outcome, reason, grade, packs and the full report JSON).
 *
 * Crash safety: WAL with `synchronous = FULL`, so every committed transaction is on disk when
 * `commit` returns (NORMAL would be safe from corruption but may lose the last commits on a power
 * cut; FULL costs one fsync per record, nothing next to an audit of seconds). A record and its
 * job's completion are written in one transaction: a kill -9 leaves either both or neither.
 *
 * One runner at a time: {@link FleetStore.open} takes the store for this process (the `runner`
 * row of `meta`, checked and set in one IMMEDIATE transaction; a runner is alive while its pid has
 * the start time recorded). A second runner gets a {@link StoreBusyError} (exit 2). Jobs left
 * `active` by a runner that died are returned by {@link FleetStore.recover} to `waiting`, with the
 * audit processes they had, so the caller can end them.
 */
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { UsageError } from '../errors.js';
import { processStartTime } from '../target/process-tree.js';
import type { FleetJob, FleetOutcome, FleetRecord, FleetTarget, Ruler } from './types.js';
import { durationKey } from './order.js';

let sqlite: typeof Database | undefined;

/**
 * better-sqlite3 is an optional dependency: it is a native addon, and where neither a prebuilt
 * binary (GitHub) nor Node's headers (nodejs.org, or `npm_config_nodedir`) can be had, `npm ci`
 * skips it rather than failing the install of the rest of sealmark. Only the fleet needs it, so it
 * is loaded here, on first use, and a missing or unbuilt addon is a UsageError that says how to get
 * it (exit 2), not a crash at start-up. Returns better-sqlite3's Database class; throws UsageError.
 */
export function loadSqlite(): typeof Database {
  if (sqlite) return sqlite;
  let Loaded: typeof Database;
  try {
    Loaded = createRequire(import.meta.url)('better-sqlite3') as typeof Database;
    // The addon itself loads on the first open: try it now so a missing build is reported here.
    new Loaded(':memory:').close();
  } catch (err) {
    throw new UsageError(
      `the fleet store needs better-sqlite3, which is not installed or not built here (${(err as Error).message.split('\n')[0]}). ` +
        'It is an optional dependency: install it with `npm install better-sqlite3`; on a machine that cannot download ' +
        "Node's headers, point node-gyp at a local copy, e.g. `npm_config_nodedir=/usr npm install better-sqlite3`.",
    );
  }
  return (sqlite = Loaded);
}

/** A job's state, as BullMQ names them. */
export type JobState = 'waiting' | 'active' | 'completed' | 'failed';

/** A job row: the job, how to run it (`spec`, JSON), and where it stands. Times ISO 8601. */
export interface StoredJob extends FleetJob {
  spec: unknown;
  state: JobState;
  attempts: number;
  createdAt: string;
  updatedAt: string;
  /** Not claimed before this time (a retry's backoff), or null. */
  notBefore: string | null;
  /** Why sealmark itself could not run it (state `failed`), else null. */
  error: string | null;
}

/** An audit process a dead runner left: end its process group, then remove `workDir`. */
export interface Orphan {
  jobId: string;
  pid: number | null;
  startTime: string | null;
  workDir: string | null;
}

/** The store is held by another live runner (exit 2). */
export class StoreBusyError extends UsageError {}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY,
  server TEXT NOT NULL,
  version TEXT,
  target TEXT NOT NULL,
  spec TEXT NOT NULL,
  source TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('waiting', 'active', 'completed', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  not_before TEXT,
  error TEXT,
  worker_pid INTEGER,
  worker_start TEXT,
  work_dir TEXT
);
CREATE TABLE IF NOT EXISTS records (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id TEXT NOT NULL REFERENCES jobs(id),
  server TEXT NOT NULL,
  version TEXT,
  target TEXT NOT NULL,
  sealmark_version TEXT NOT NULL,
  methodology_version TEXT NOT NULL,
  outcome TEXT NOT NULL,
  reason TEXT,
  grade_letter TEXT,
  grade_percent REAL,
  graded INTEGER NOT NULL,
  packs TEXT NOT NULL,
  finished_at TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  report TEXT,
  list_only INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS records_job ON records (job_id, sealmark_version, methodology_version);
CREATE INDEX IF NOT EXISTS records_server ON records (server, version);
`;

interface JobRow {
  id: string;
  server: string;
  version: string | null;
  target: string;
  spec: string;
  source: string;
  state: JobState;
  attempts: number;
  created_at: string;
  updated_at: string;
  not_before: string | null;
  error: string | null;
}

interface RecordRow {
  seq: number;
  job_id: string;
  server: string;
  version: string | null;
  target: string;
  sealmark_version: string;
  methodology_version: string;
  outcome: FleetOutcome;
  reason: string | null;
  grade_letter: string | null;
  grade_percent: number | null;
  graded: number;
  packs: string;
  finished_at: string;
  duration_ms: number;
  attempts: number;
  report: string | null;
  /** 1 for FleetRecord.listOnly; absent in a store opened read-only that predates the column. */
  list_only?: number;
}

/** The store of one folder. Every method is synchronous; errors from SQLite propagate (a broken disk is not a server's fault). */
export class FleetStore {
  private constructor(
    private readonly db: Database.Database,
    /** The folder (absolute) holding fleet.db. */
    readonly dir: string,
  ) {}

  /**
   * Opens (creating when needed) `<dir>/fleet.db` and takes it for this process. Throws
   * {@link StoreBusyError} when another live runner holds it, UsageError when the folder or file
   * cannot be used.
   */
  static open(dir: string): FleetStore {
    dir = resolve(dir);
    const Sqlite = loadSqlite();
    let db: Database.Database;
    try {
      mkdirSync(dir, { recursive: true });
      db = new Sqlite(join(dir, 'fleet.db'), { timeout: 5000 });
    } catch (err) {
      throw new UsageError(`--store ${dir}: cannot open ${join(dir, 'fleet.db')} (${(err as Error).message})`);
    }
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.exec(SCHEMA);
    // A store made before records had list_only gets the column (0: the records it holds were full audits or graded before remotes were marked).
    if (!(db.pragma('table_info(records)') as { name: string }[]).some((c) => c.name === 'list_only')) db.exec('ALTER TABLE records ADD COLUMN list_only INTEGER NOT NULL DEFAULT 0');
    const store = new FleetStore(db, dir);
    try {
      store.lock();
    } catch (err) {
      db.close();
      throw err;
    }
    return store;
  }

  /**
   * Opens an existing `<dir>/fleet.db` to read only, without taking it: a reader (the
   * leaderboard, `fleet report`) may read while a runner writes (WAL gives it the last committed
   * state). The write methods then throw. Throws UsageError when there is no store there.
   */
  static openReadOnly(dir: string): FleetStore {
    dir = resolve(dir);
    const Sqlite = loadSqlite();
    try {
      return new FleetStore(new Sqlite(join(dir, 'fleet.db'), { readonly: true, fileMustExist: true, timeout: 5000 }), dir);
    } catch (err) {
      throw new UsageError(`--store ${dir}: no fleet store there (${(err as Error).message})`);
    }
  }

  /** Sets the `runner` row to this process unless a live process holds it. */
  private lock(): void {
    const me = { pid: process.pid, start: processStartTime(process.pid) ?? null };
    this.db
      .transaction(() => {
        const row = this.db.prepare('SELECT value FROM meta WHERE key = ?').get('runner') as { value: string } | undefined;
        if (row) {
          const held = JSON.parse(row.value) as { pid: number; start: string | null };
          if (held.pid !== me.pid && alive(held.pid, held.start)) {
            throw new StoreBusyError(`--store ${this.dir}: another fleet runner (pid ${held.pid}) is using this store; wait for it to finish or give another --store`);
          }
        }
        this.db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run('runner', JSON.stringify(me));
      })
      .immediate();
  }

  /** Releases the store and closes the file. Idempotent. */
  close(): void {
    if (!this.db.open) return;
    if (this.db.readonly) {
      this.db.close();
      return;
    }
    const row = this.db.prepare('SELECT value FROM meta WHERE key = ?').get('runner') as { value: string } | undefined;
    if (row && (JSON.parse(row.value) as { pid: number }).pid === process.pid) this.db.prepare('DELETE FROM meta WHERE key = ?').run('runner');
    this.db.close();
  }

  /**
   * Puts jobs left `active` by a runner that died back to `waiting` (the attempt it was on does
   * not count: it ended through no fault of the server) and returns the audit processes and work
   * folders they had, for the caller to end and remove.
   */
  recover(): Orphan[] {
    return this.db
      .transaction(() => {
        const rows = this.db.prepare("SELECT id, worker_pid, worker_start, work_dir FROM jobs WHERE state = 'active'").all() as { id: string; worker_pid: number | null; worker_start: string | null; work_dir: string | null }[];
        this.db
          .prepare("UPDATE jobs SET state = 'waiting', attempts = MAX(attempts - 1, 0), worker_pid = NULL, worker_start = NULL, work_dir = NULL, updated_at = ? WHERE state = 'active'")
          .run(now());
        return rows.map((r) => ({ jobId: r.id, pid: r.worker_pid, startTime: r.worker_start, workDir: r.work_dir }));
      })
      .immediate();
  }

  /**
   * Adds jobs not yet stored and refreshes the identity columns of those that are (the id is the
   * identity, so only `source` and `spec` can change); states and attempts are kept.
   */
  upsertJobs(jobs: readonly { job: FleetJob; spec: unknown }[]): void {
    const t = now();
    const insert = this.db.prepare(
      `INSERT INTO jobs (id, server, version, target, spec, source, state, attempts, created_at, updated_at)
       VALUES (@id, @server, @version, @target, @spec, @source, 'waiting', 0, @t, @t)
       ON CONFLICT (id) DO UPDATE SET spec = excluded.spec, source = excluded.source`,
    );
    this.db.transaction(() => {
      for (const { job, spec } of jobs) {
        insert.run({ id: job.id, server: job.server, version: job.version, target: JSON.stringify(job.target), spec: JSON.stringify(spec), source: job.source, t });
      }
    })();
  }

  /** Marks jobs to be run (again): `waiting`, attempts 0, no backoff, no error. */
  enqueue(ids: readonly string[]): void {
    const stmt = this.db.prepare("UPDATE jobs SET state = 'waiting', attempts = 0, not_before = NULL, error = NULL, updated_at = ? WHERE id = ?");
    const t = now();
    this.db.transaction(() => ids.forEach((id) => stmt.run(t, id)))();
  }

  /** True when the job has a record made under `ruler`. */
  hasRecord(jobId: string, ruler: Ruler): boolean {
    return !!this.db.prepare('SELECT 1 FROM records WHERE job_id = ? AND sealmark_version = ? AND methodology_version = ? LIMIT 1').get(jobId, ruler.sealmarkVersion, ruler.methodologyVersion);
  }

  /**
   * How long each server's target took the last time it was graded, ms, by order.ts `durationKey`
   * (any version, any ruler): what fleet/order.ts `longestFirst` orders a re-grade by. Reads only
   * the three columns it needs.
   */
  lastDurations(): Map<string, number> {
    const out = new Map<string, number>();
    const rows = this.db.prepare('SELECT server, target, duration_ms FROM records ORDER BY finished_at').iterate() as IterableIterator<{ server: string; target: string; duration_ms: number }>;
    for (const r of rows) out.set(durationKey({ server: r.server, target: JSON.parse(r.target) as FleetTarget }), r.duration_ms);
    return out;
  }

  /** True when the job has a record that finished at `finishedAt` (ISO 8601): that very record is stored. */
  hasRecordAt(jobId: string, finishedAt: string): boolean {
    return !!this.db.prepare('SELECT 1 FROM records WHERE job_id = ? AND finished_at = ? LIMIT 1').get(jobId, finishedAt);
  }

  /** One job, or undefined. */
  job(id: string): StoredJob | undefined {
    const row = this.db.prepare('SELECT * FROM jobs WHERE id = ?').get(id) as JobRow | undefined;
    return row && jobOf(row);
  }

  /**
   * Claims the next waiting job among `ids` whose backoff has passed (in `ids` order): `active`,
   * attempts + 1. Returns it, or undefined when none is claimable now.
   */
  claimNext(ids: readonly string[], at: Date = new Date()): StoredJob | undefined {
    return this.db
      .transaction(() => {
        const get = this.db.prepare("SELECT * FROM jobs WHERE id = ? AND state = 'waiting' AND (not_before IS NULL OR not_before <= ?)");
        for (const id of ids) {
          const row = get.get(id, at.toISOString()) as JobRow | undefined;
          if (!row) continue;
          this.db.prepare("UPDATE jobs SET state = 'active', attempts = attempts + 1, not_before = NULL, updated_at = ? WHERE id = ?").run(now(), id);
          return jobOf({ ...row, state: 'active', attempts: row.attempts + 1 });
        }
        return undefined;
      })
      .immediate();
  }

  /** Records the audit process working on an active job (pid and start time) and its work folder, so a later runner can end them after a crash. */
  setWorker(jobId: string, pid: number, workDir: string): void {
    this.db.prepare('UPDATE jobs SET worker_pid = ?, worker_start = ?, work_dir = ? WHERE id = ?').run(pid, processStartTime(pid) ?? null, workDir, jobId);
  }

  /** Writes the record and marks its job `completed`, in one transaction. */
  complete(record: FleetRecord): void {
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO records (job_id, server, version, target, sealmark_version, methodology_version, outcome, reason, grade_letter, grade_percent, graded, packs, finished_at, duration_ms, attempts, report, list_only)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          record.jobId,
          record.server,
          record.version,
          JSON.stringify(record.target),
          record.ruler.sealmarkVersion,
          record.ruler.methodologyVersion,
          record.outcome,
          record.reason,
          record.grade?.letter ?? null,
          record.grade?.percent ?? null,
          record.grade ? 1 : 0,
          JSON.stringify(record.packs),
          record.finishedAt,
          record.durationMs,
          record.attempts,
          record.report === null ? null : JSON.stringify(record.report),
          record.listOnly ? 1 : 0,
        );
      this.db.prepare("UPDATE jobs SET state = 'completed', error = NULL, worker_pid = NULL, worker_start = NULL, work_dir = NULL, updated_at = ? WHERE id = ?").run(now(), record.jobId);
    })();
  }

  /** Puts an active job back to `waiting` until `notBefore` (a retry after a flaky outcome). */
  retryLater(jobId: string, notBefore: Date): void {
    this.db.prepare("UPDATE jobs SET state = 'waiting', not_before = ?, worker_pid = NULL, worker_start = NULL, work_dir = NULL, updated_at = ? WHERE id = ?").run(notBefore.toISOString(), now(), jobId);
  }

  /** Marks a job `failed`: sealmark itself could not run it (no record is written). */
  fail(jobId: string, error: string): void {
    this.db.prepare("UPDATE jobs SET state = 'failed', error = ?, worker_pid = NULL, worker_start = NULL, work_dir = NULL, updated_at = ? WHERE id = ?").run(error, now(), jobId);
  }

  /** Every record, oldest first (for the leaderboard and exports). */
  records(): FleetRecord[] {
    return (this.db.prepare('SELECT * FROM records ORDER BY seq').all() as RecordRow[]).map(recordOf);
  }

  /** The newest record of every job, in job-id order (with `ruler`, only records made under it). */
  latest(ruler?: Ruler): FleetRecord[] {
    const where = ruler ? 'WHERE sealmark_version = ? AND methodology_version = ?' : '';
    const args = ruler ? [ruler.sealmarkVersion, ruler.methodologyVersion] : [];
    const rows = this.db.prepare(`SELECT * FROM records WHERE seq IN (SELECT MAX(seq) FROM records ${where} GROUP BY job_id) ORDER BY job_id`).all(...args) as RecordRow[];
    return rows.map(recordOf);
  }

  /** Every record of one server (by its registry or config name), oldest first: its history across versions and rulers. */
  history(server: string): FleetRecord[] {
    return (this.db.prepare('SELECT * FROM records WHERE server = ? ORDER BY seq').all(server) as RecordRow[]).map(recordOf);
  }

  /** Every job row (for status and tests). */
  jobs(): StoredJob[] {
    return (this.db.prepare('SELECT * FROM jobs ORDER BY created_at, id').all() as JobRow[]).map(jobOf);
  }
}

/** True while `pid` runs with start time `start` (any process with that pid when the start time is unknown). */
export function alive(pid: number, start: string | null): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  return start === null || processStartTime(pid) === undefined || processStartTime(pid) === start;
}

function now(): string {
  return new Date().toISOString();
}

function jobOf(r: JobRow): StoredJob {
  return {
    id: r.id,
    server: r.server,
    version: r.version,
    target: JSON.parse(r.target) as FleetTarget,
    source: r.source,
    spec: JSON.parse(r.spec) as unknown,
    state: r.state,
    attempts: r.attempts,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    notBefore: r.not_before,
    error: r.error,
  };
}

function recordOf(r: RecordRow): FleetRecord {
  return {
    jobId: r.job_id,
    server: r.server,
    version: r.version,
    target: JSON.parse(r.target) as FleetTarget,
    ruler: { sealmarkVersion: r.sealmark_version, methodologyVersion: r.methodology_version },
    outcome: r.outcome,
    reason: r.reason,
    grade: r.graded ? { letter: r.grade_letter, percent: r.grade_percent } : null,
    packs: JSON.parse(r.packs) as Record<string, number | null>,
    finishedAt: r.finished_at,
    durationMs: r.duration_ms,
    attempts: r.attempts,
    report: r.report === null ? null : (JSON.parse(r.report) as FleetRecord['report']),
    ...(r.list_only ? { listOnly: true as const } : {}),
  };
}
