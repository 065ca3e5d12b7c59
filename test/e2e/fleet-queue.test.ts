/**
 * `sealmark fleet run --queue` and `sealmark fleet worker` on BullMQ (SPEC section 10), end to end
 * through the real binary, against a real `redis-server` (Debian's package) that this file starts
 * on a free loopback port in a temp folder, with an append-only file (a restart keeps the queue),
 * and stops after; the packages come from the loopback npm registry fixture, as in
 * fleet-run.test.ts. Nothing leaves loopback.
 *
 * Covered: two worker processes give the same records (outcomes, grades, attempts, finding
 * fingerprints) as the embedded run of the same targets, and Redis keeps no finished job; a worker
 * killed with SIGKILL mid-job loses nothing (the job runs again on the other worker, is handed back
 * once and recorded once); Redis stopped and started again mid-run, the run completes; a
 * Redis restarted without persistence (the queue lost), the runner adds the lost jobs again; a
 * deterministic outcome is attempted once, a timeout twice; the runner killed with SIGKILL, the
 * same command collects the rest; a unix socket; a queue gone for good stops the run with an error
 * in bounded time; a worker exits at once when Redis is unreachable at start.
 *
 * Leftovers: after each test no process of its runners and workers (MARK in their environment) and
 * nothing in their TMPDIR (work folders, sandbox folders). The sandboxes' control folders in
 * /dev/shm are removed by the same dispose as their sandbox folder; other test runs on this machine
 * make them too, so they are not counted here (as in fleet-run.test.ts).
 *
 * Without redis-server on PATH the suite is skipped, unless SEALMARK_REQUIRE_REDIS=1 (CI), where it
 * fails instead.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { processesWith } from '../helpers/procs.js';
import { BIN, runCli, type CliRun } from '../helpers/cli.js';
import { startNpmRegistry, type NpmRegistry } from '../helpers/registries.js';
import { root } from '../helpers/run.js';
import { FleetStore, loadSqlite } from '../../src/fleet/store.js';
import { RUN_SQLITE, sqliteTitle } from '../helpers/sqlite.js';
import type { FleetRecord } from '../../src/fleet/types.js';

const SLOW = 300_000;
const FIXTURES = join(root, 'test', 'fixtures', 'fleet');
const MARK = `fleet-queue-test-${randomBytes(6).toString('hex')}`;
const HAVE_REDIS = spawnSync('redis-server', ['--version']).status === 0;
const REQUIRE_REDIS = process.env.SEALMARK_REQUIRE_REDIS === '1';
const TITLE = HAVE_REDIS ? 'fleet on BullMQ' : 'fleet on BullMQ (no redis-server on PATH: skipped, or failed with SEALMARK_REQUIRE_REDIS=1)';

let npm: NpmRegistry;
let work: string;
let scratch: string;

/** A redis-server this file started: its port, folder and process. */
interface RedisServer {
  port: number;
  dir: string;
  url: string;
  proc: ChildProcess;
}

const redises = new Set<RedisServer>();
const workers = new Set<ChildProcess>();

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/** Starts redis-server on `port` (a free one when not given) keeping its append-only file in `dir` (unless not `persist`); resolves once it answers PING. */
async function startRedis(dir: string, port?: number, persist = true): Promise<RedisServer> {
  port ??= await freePort();
  mkdirSync(dir, { recursive: true });
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', persist ? 'yes' : 'no', '--appendfsync', 'always', '--save', '', '--maxmemory-policy', 'noeviction', '--daemonize', 'no'], { stdio: 'ignore' });
  const r: RedisServer = { port, dir, url: `redis://127.0.0.1:${port}`, proc };
  redises.add(r);
  const until = Date.now() + 10_000;
  for (;;) {
    const c = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    c.on('error', () => undefined);
    try {
      await c.connect();
      if ((await c.ping()) === 'PONG') return r;
    } catch {
      if (Date.now() > until) throw new Error(`redis-server on port ${port} did not start`);
      await sleep(50);
    } finally {
      c.disconnect();
    }
  }
}

/** Stops a redis-server (SIGTERM: it syncs its append-only file) and waits for its exit. */
async function stopRedis(r: RedisServer): Promise<void> {
  redises.delete(r);
  if (r.proc.exitCode !== null || r.proc.signalCode !== null) return;
  const gone = new Promise((res) => r.proc.once('exit', res));
  r.proc.kill('SIGTERM');
  await gone;
}

/** Every key of the queue in Redis, with the events stream's length. */
async function queueKeys(url: string): Promise<{ keys: string[]; events: number }> {
  const c = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const keys = (await c.keys('bull:sealmark-fleet:*')).sort();
    return { keys, events: await c.xlen('bull:sealmark-fleet:events') };
  } finally {
    c.disconnect();
  }
}

function env(): Record<string, string> {
  return { ...npm.env({ failFast: true }), SEALMARK_CACHE: join(work, 'cache'), FLEET_TEST_MARK: MARK, TMPDIR: scratch };
}

function fleet(args: string[]): Promise<CliRun> {
  return runCli(['fleet', 'run', ...args], { env: env(), cwd: work });
}

/** A running `sealmark fleet worker`, with what it printed so far. */
interface WorkerProc {
  proc: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

function startWorker(url: string, extra: string[] = []): WorkerProc {
  const proc = spawn(process.execPath, [BIN, 'fleet', 'worker', '--queue', url, '--jobs', '1', '--lock-duration', '2', ...extra], { cwd: work, env: { ...process.env, NO_COLOR: '1', ...env() }, stdio: ['ignore', 'pipe', 'pipe'] });
  workers.add(proc);
  let out = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((res) => proc.once('exit', (code) => res(code)));
  void exited.then(() => workers.delete(proc));
  return { proc, out: () => out, exited };
}

/** SIGTERM to a worker: it closes gracefully (exit 0, "closed"). */
async function stopWorker(w: WorkerProc): Promise<void> {
  w.proc.kill('SIGTERM');
  expect(await w.exited, w.out()).toBe(0);
  expect(w.out()).toMatch(/fleet worker: closed/);
}

/** The worker lines `job <id> (…) attempt a/m: <what>` of some workers' output. */
function attemptLines(...outs: string[]): { id: string; attempt: number; what: string }[] {
  return outs.flatMap((o) => [...o.matchAll(/^fleet worker: job (j[0-9a-f]{24}) \(.*\) attempt (\d+)\/\d+: (.*)$/gm)].map((m) => ({ id: m[1]!, attempt: Number(m[2]), what: m[3]! })));
}

function records(store: string): FleetRecord[] {
  const s = FleetStore.open(store);
  try {
    return s.records();
  } finally {
    s.close();
  }
}

/** What must be equal between two runs of the same job: outcome, grade, packs, attempts, finding fingerprints per check. */
function essence(r: FleetRecord): unknown {
  return {
    jobId: r.jobId,
    outcome: r.outcome,
    grade: r.grade,
    packs: r.packs,
    attempts: r.attempts,
    reasonCode: r.reason?.split(':')[0] ?? null,
    findings: (r.report?.checks ?? []).map((c) => [c.id, c.verdict, c.findings.map((f) => f.fingerprint).sort()]),
  };
}

/** Processes started by this file's runners and workers (their environment carries MARK), or naming the scratch folder. */
function leftovers(): string[] {
  return processesWith([MARK, scratch]);
}

async function settle(check: () => string[], ms = 10_000): Promise<string[]> {
  const until = Date.now() + ms;
  let left = check();
  while (left.length > 0 && Date.now() < until) {
    await sleep(200);
    left = check();
  }
  return left;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function until(what: string, cond: () => boolean, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe.skipIf((!HAVE_REDIS && !REQUIRE_REDIS) || !RUN_SQLITE)(sqliteTitle(TITLE), () => {
  beforeAll(async () => {
    if (!HAVE_REDIS) throw new Error('SEALMARK_REQUIRE_REDIS=1 but redis-server is not on PATH (apt-get install redis-server)');
    npm = await startNpmRegistry({ folders: ['echo-server-1.0.0', 'echo-server-1.1.0', 'net-at-start', 'hangs-at-start'] });
    work = mkdtempSync(join(tmpdir(), 'sealmark-fleet-queue-test-'));
    scratch = join(work, 'tmp');
    mkdirSync(scratch);
  }, 120_000);

  afterEach(async () => {
    for (const w of workers) w.kill('SIGKILL');
    for (const r of [...redises]) await stopRedis(r);
    expect(await settle(leftovers)).toEqual([]);
    expect(await settle(() => readdirSync(scratch))).toEqual([]);
  });

  afterAll(async () => {
    await npm?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it(
    'two workers give the records of the embedded run (outcomes, grades, attempts, fingerprints); Redis keeps no finished job',
    async () => {
      const targets = join(work, 'targets');
      cpSync(join(FIXTURES, 'servers'), targets, { recursive: true });
      const local = await fleet([targets, '--store', join(work, 'store-local'), '--jobs', '2', '--deadline', '120']);
      expect(local.code, local.stderr).toBe(0);

      const redis = await startRedis(join(work, 'redis-same'));
      const a = startWorker(redis.url);
      const b = startWorker(redis.url);
      const store = join(work, 'store-queue');
      const run = await fleet([targets, '--store', store, '--queue', redis.url, '--deadline', '120']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/^fleet: 5 jobs: 5 run .*0 already recorded/m);

      const mine = records(store);
      const theirs = records(join(work, 'store-local'));
      expect(mine).toHaveLength(5);
      const sorted = (rs: FleetRecord[]) => rs.map(essence).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
      expect(sorted(mine)).toEqual(sorted(theirs));
      expect(new Set(mine.map((r) => r.outcome))).toEqual(new Set(['graded', 'fails-offline', 'fetch-failed', 'not-runnable', 'needs-config']));
      const graded = mine.find((r) => r.outcome === 'graded')!;
      expect(graded.report?.checks.some((c) => c.findings.length > 0)).toBe(true);

      // Both workers took jobs; each job was handed back once, and only fetch-failed (flaky) was tried twice.
      const lines = attemptLines(a.out(), b.out());
      expect(a.out()).toMatch(/attempt 1\/2: started/);
      expect(b.out()).toMatch(/attempt 1\/2: started/);
      const handed = lines.filter((l) => / handed back$/.test(l.what)).map((l) => l.id);
      expect(handed.sort()).toEqual(mine.map((r) => r.jobId).sort());
      const startsOf = (outcome: string) => lines.filter((l) => l.what === 'started' && l.id === mine.find((r) => r.outcome === outcome)!.jobId).length;
      expect(startsOf('fetch-failed')).toBe(2);
      for (const o of ['graded', 'fails-offline', 'not-runnable', 'needs-config']) expect(startsOf(o), o).toBe(1);

      // Collected, then removed: no job hash, no list entry, no event holding a record.
      const left = await queueKeys(redis.url);
      expect(left.keys.filter((k) => /:j[0-9a-f]{24}$|:(wait|active|completed|failed|delayed|prioritized)$/.test(k))).toEqual([]);
      expect(left.events).toBe(0);

      // A second run finds everything recorded and adds nothing to the queue.
      const again = await fleet([targets, '--store', store, '--queue', redis.url]);
      expect(again.stderr).toMatch(/5 jobs: 0 run \(none\), 5 already recorded/);
      await stopWorker(a);
      await stopWorker(b);
    },
    SLOW,
  );

  it(
    'a worker killed with SIGKILL mid-job: the job runs again on the other worker, handed back and recorded once',
    async () => {
      const targets = join(work, 'kill-targets');
      mkdirSync(targets);
      for (const f of ['echo.json', 'needs-key.json', 'cargo-only.json']) cpSync(join(FIXTURES, 'servers', f), join(targets, f));
      const redis = await startRedis(join(work, 'redis-kill'));
      const store = join(work, 'store-kill');
      const runP = fleet([targets, '--store', store, '--queue', redis.url, '--deadline', '120']);
      const a = startWorker(redis.url);
      // Until worker A is on the graded job and its audit runs (the audit carries A's mark).
      await until('worker A on the echo job', () => /fixture\/echo@1\.0\.0\) attempt 1\/2: started/.test(a.out()));
      await until("A's audit", () => leftovers().some((l) => / audit /.test(l)));
      const echoId = /job (j[0-9a-f]{24}) \(io\.github\.fixture\/echo@1\.0\.0\)/.exec(a.out())![1]!;
      a.proc.kill('SIGKILL');
      expect(await a.exited).toBeNull();
      const b = startWorker(redis.url);
      const run = await runP;
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/3 jobs: 3 run /);

      const recs = records(store);
      expect(recs.map((r) => r.jobId).sort()).toEqual([...new Set(recs.map((r) => r.jobId))].sort());
      expect(recs).toHaveLength(3);
      const echo = recs.find((r) => r.jobId === echoId)!;
      expect(echo.outcome, echo.reason ?? '').toBe('graded');
      // The interrupted attempt does not count against the job.
      for (const r of recs) expect(r.attempts).toBe(1);
      // Handed back exactly once in all, the killed job by B.
      const handed = attemptLines(a.out(), b.out()).filter((l) => / handed back$/.test(l.what));
      expect(handed.map((l) => l.id).sort()).toEqual(recs.map((r) => r.jobId).sort());
      expect(attemptLines(a.out()).some((l) => l.id === echoId && / handed back$/.test(l.what))).toBe(false);
      expect(attemptLines(b.out()).some((l) => l.id === echoId && / handed back$/.test(l.what))).toBe(true);
      const s = FleetStore.open(store);
      try {
        expect(s.jobs().map((j) => j.state)).toEqual(['completed', 'completed', 'completed']);
      } finally {
        s.close();
      }
      await stopWorker(b);
    },
    SLOW,
  );

  it(
    'Redis stopped and started again mid-run: the run completes, every job recorded once',
    async () => {
      const targets = join(work, 'restart-targets');
      mkdirSync(targets);
      for (const f of ['echo.json', 'needs-key.json', 'cargo-only.json']) cpSync(join(FIXTURES, 'servers', f), join(targets, f));
      cpSync(join(FIXTURES, 'echo-1.1.0.json'), join(targets, 'echo-1.1.0.json'));
      const dir = join(work, 'redis-restart');
      let redis = await startRedis(dir);
      const store = join(work, 'store-restart');
      const a = startWorker(redis.url);
      const runP = fleet([targets, '--store', store, '--queue', redis.url, '--deadline', '120']);
      // Once the first record is handed back and another job runs, Redis goes away for 3 s.
      await until('a record handed back', () => / handed back$/m.test(a.out()));
      await until('another job started', () => (a.out().match(/: started$/gm) ?? []).length >= 2);
      await stopRedis(redis);
      await sleep(3000);
      redis = await startRedis(dir, redis.port);
      const run = await runP;
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/does not answer/);
      expect(run.stderr).toMatch(/answers again/);
      expect(run.stderr).toMatch(/4 jobs: 4 run /);
      const recs = records(store);
      expect(recs).toHaveLength(4);
      expect(new Set(recs.map((r) => r.jobId)).size).toBe(4);
      expect(recs.filter((r) => r.outcome === 'graded').map((r) => r.version).sort()).toEqual(['1.0.0', '1.1.0']);
      const left = await queueKeys(redis.url);
      expect(left.keys.filter((k) => /:j[0-9a-f]{24}$/.test(k))).toEqual([]);
      await stopWorker(a);
    },
    SLOW,
  );

  it(
    'a Redis restarted without persistence (the queue lost): the runner adds the lost jobs again, the run completes, each job recorded once',
    async () => {
      const targets = join(work, 'lost-targets');
      mkdirSync(targets);
      for (const f of ['echo.json', 'needs-key.json', 'cargo-only.json']) cpSync(join(FIXTURES, 'servers', f), join(targets, f));
      const dir = join(work, 'redis-lost');
      let redis = await startRedis(dir, undefined, false);
      const store = join(work, 'store-lost');
      const runP = fleet([targets, '--store', store, '--queue', redis.url, '--deadline', '120']);
      const a = startWorker(redis.url);
      await until('worker A on the echo job', () => /fixture\/echo@1\.0\.0\) attempt 1\/2: started/.test(a.out()));
      await stopRedis(redis);
      redis = await startRedis(dir, redis.port, false);
      const run = await runP;
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/answers again/);
      expect(run.stderr).toMatch(/jobs? (was|were) no longer on the queue; added again/);
      const recs = records(store);
      expect(recs).toHaveLength(3);
      expect(new Set(recs.map((r) => r.jobId)).size).toBe(3);
      expect(recs.find((r) => r.server === 'io.github.fixture/echo')?.outcome).toBe('graded');
      await stopWorker(a);
    },
    SLOW,
  );

  it(
    'a deterministic outcome is attempted once, a timeout twice (BullMQ attempts and backoff), the deadline ending the hung tree',
    async () => {
      const targets = join(work, 'retry-targets');
      mkdirSync(targets);
      cpSync(join(FIXTURES, 'hangs.json'), join(targets, 'hangs.json'));
      cpSync(join(FIXTURES, 'servers', 'needs-key.json'), join(targets, 'needs-key.json'));
      const redis = await startRedis(join(work, 'redis-retry'));
      const a = startWorker(redis.url);
      const store = join(work, 'store-retry');
      const run = await fleet([targets, '--store', store, '--queue', redis.url, '--deadline', '3']);
      expect(run.code, run.stderr).toBe(0);
      const recs = records(store);
      const hang = recs.find((r) => r.server === 'io.github.fixture/hangs')!;
      const key = recs.find((r) => r.server === 'io.github.fixture/needs-key')!;
      expect(hang).toMatchObject({ outcome: 'timeout', attempts: 2, grade: null, report: null });
      expect(hang.reason).toMatch(/deadline of 3 s ended it \(attempt 2 of 2\)/);
      expect(key).toMatchObject({ outcome: 'needs-config', attempts: 1 });
      const lines = attemptLines(a.out());
      expect(lines.filter((l) => l.id === hang.jobId).map((l) => `${l.attempt} ${l.what}`)).toEqual(['1 started', '1 timeout, tried again after a backoff', '2 started', '2 timeout, handed back']);
      expect(lines.filter((l) => l.id === key.jobId).map((l) => `${l.attempt} ${l.what}`)).toEqual(['1 started', '1 needs-config, handed back']);
      await stopWorker(a);
    },
    SLOW,
  );

  it(
    'the runner killed with SIGKILL mid-run: the workers go on, the same command again collects the rest, every job recorded once, Redis emptied',
    async () => {
      const targets = join(work, 'runner-kill-targets');
      mkdirSync(targets);
      for (const f of ['echo.json', 'needs-key.json', 'cargo-only.json']) cpSync(join(FIXTURES, 'servers', f), join(targets, f));
      cpSync(join(FIXTURES, 'echo-1.1.0.json'), join(targets, 'echo-1.1.0.json'));
      const redis = await startRedis(join(work, 'redis-runner-kill'));
      const store = join(work, 'store-runner-kill');
      const a = startWorker(redis.url);
      const args = [BIN, 'fleet', 'run', targets, '--store', store, '--queue', redis.url, '--deadline', '120'];
      const runner = spawn(process.execPath, args, { cwd: work, env: { ...process.env, NO_COLOR: '1', ...env() }, stdio: 'ignore' });
      const exited = new Promise((res) => runner.once('exit', res));
      const stored = () => {
        try {
          const Database = loadSqlite();
          const db = new Database(join(store, 'fleet.db'), { readonly: true, fileMustExist: true });
          try {
            return (db.prepare('SELECT COUNT(*) AS n FROM records').get() as { n: number }).n;
          } finally {
            db.close();
          }
        } catch {
          return 0;
        }
      };
      await until('the first record stored', () => stored() > 0);
      runner.kill('SIGKILL');
      await exited;
      const before = stored();
      expect(before).toBeLessThan(4);
      // The worker finishes every job with no runner collecting.
      await until('4 jobs handed back', () => attemptLines(a.out()).filter((l) => / handed back$/.test(l.what)).length === 4);
      const again = await fleet([targets, '--store', store, '--queue', redis.url]);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toMatch(new RegExp(`4 jobs: ${4 - before} run .*, ${before} already recorded`));
      const recs = records(store);
      expect(recs).toHaveLength(4);
      expect(new Set(recs.map((r) => r.jobId)).size).toBe(4);
      // Every job ran once: the second runner collected what the worker finished, it did not run it again.
      expect(attemptLines(a.out()).filter((l) => l.what === 'started')).toHaveLength(4);
      const left = await queueKeys(redis.url);
      expect(left.keys.filter((k) => /:j[0-9a-f]{24}$|:(wait|active|completed|failed|delayed|prioritized)$/.test(k))).toEqual([]);
      await stopWorker(a);
    },
    SLOW,
  );

  it('a unix socket: redis+unix:///path', async () => {
    const dir = join(work, 'redis-unix');
    mkdirSync(dir);
    const sock = join(dir, 'redis.sock');
    const proc = spawn('redis-server', ['--port', '0', '--unixsocket', sock, '--dir', dir, '--save', '', '--daemonize', 'no'], { stdio: 'ignore' });
    const r: RedisServer = { port: 0, dir, url: `redis+unix://${sock}`, proc };
    redises.add(r);
    await until('the socket', () => readdirSync(dir).includes('redis.sock'), 10_000);
    const a = startWorker(r.url);
    const run = await fleet([join(FIXTURES, 'servers', 'cargo-only.json'), '--store', join(work, 'store-unix'), '--queue', r.url]);
    expect(run.code, run.stderr).toBe(0);
    expect(records(join(work, 'store-unix')).map((x) => x.outcome)).toEqual(['not-runnable']);
    await stopWorker(a);
  });

  it('--queue-name: two runs share one Redis, each with its own workers; a bad name is a usage error', async () => {
    const redis = await startRedis(join(work, 'redis-names'));
    const alpha = startWorker(redis.url, ['--queue-name', 'alpha']);
    const beta = startWorker(redis.url, ['--queue-name', 'beta.2']);
    const [a, b] = await Promise.all([
      fleet([join(FIXTURES, 'servers', 'cargo-only.json'), '--store', join(work, 'store-alpha'), '--queue', redis.url, '--queue-name', 'alpha']),
      fleet([join(FIXTURES, 'servers', 'needs-key.json'), '--store', join(work, 'store-beta'), '--queue', redis.url, '--queue-name', 'beta.2']),
    ]);
    expect([a.code, b.code], a.stderr + b.stderr).toEqual([0, 0]);
    expect(records(join(work, 'store-alpha')).map((x) => x.outcome)).toEqual(['not-runnable']);
    expect(records(join(work, 'store-beta')).map((x) => x.outcome)).toEqual(['needs-config']);
    // Each worker ran only its own queue's job.
    expect(attemptLines(alpha.out()).filter((l) => l.what === 'started')).toHaveLength(1);
    expect(attemptLines(beta.out()).filter((l) => l.what === 'started')).toHaveLength(1);
    expect(alpha.out()).toMatch(/\(queue alpha\)/);
    // Each queue's keys are its own; nothing went to the default queue.
    const c = new Redis(redis.url);
    const keys = await c.keys('bull:*');
    c.disconnect();
    expect(keys.filter((k) => k.startsWith('bull:sealmark-fleet:'))).toEqual([]);
    expect(keys.some((k) => k.startsWith('bull:alpha:')) && keys.some((k) => k.startsWith('bull:beta.2:'))).toBe(true);
    await Promise.all([stopWorker(alpha), stopWorker(beta)]);

    for (const args of [['fleet', 'run', join(FIXTURES, 'servers', 'cargo-only.json'), '--store', join(work, 'store-bad'), '--queue', redis.url, '--queue-name', 'a:b'], ['fleet', 'worker', '--queue', redis.url, '--queue-name', '']]) {
      const bad = await runCli(args, { env: env(), cwd: work });
      expect(bad.code, bad.stderr).toBe(2);
      expect(bad.stderr).toMatch(/--queue-name "(a:b)?": expected 1 to 100 letters, digits/);
    }
    const embedded = await runCli(['fleet', 'run', join(FIXTURES, 'servers', 'cargo-only.json'), '--store', join(work, 'store-bad'), '--queue-name', 'alpha'], { env: env(), cwd: work });
    expect(embedded.code).toBe(2);
    expect(embedded.stderr).toMatch(/--queue-name goes with --queue/);
  });

  it('a queue gone for good stops the run with an error in bounded time; a worker exits at once when Redis does not answer', async () => {
    const redis = await startRedis(join(work, 'redis-gone'));
    const store = join(work, 'store-gone');
    // No worker: the job waits on the queue; then Redis goes away and does not come back.
    const t0 = Date.now();
    const runner = spawn(process.execPath, [BIN, 'fleet', 'run', join(FIXTURES, 'servers', 'needs-key.json'), '--store', store, '--queue', redis.url, '--queue-timeout', '3'], { cwd: work, env: { ...process.env, NO_COLOR: '1', ...env() }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    runner.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((res) => runner.once('exit', (code) => res(code)));
    const c = new Redis(redis.url);
    for (let i = 0; i < 200 && (await c.llen('bull:sealmark-fleet:wait')) === 0; i++) await sleep(50);
    expect(await c.llen('bull:sealmark-fleet:wait')).toBe(1);
    c.disconnect();
    await stopRedis(redis);
    expect(await exited).toBe(1);
    expect(Date.now() - t0).toBeLessThan(30_000);
    expect(stderr).toMatch(/sealmark: fleet run stopped: the queue at redis:\/\/127\.0\.0\.1:\d+ did not answer for 3 s .*1 job not collected/);
    expect(records(store)).toEqual([]);

    const w = await runCli(['fleet', 'worker', '--queue', redis.url], { env: env(), cwd: work });
    expect(w.code).toBe(2);
    expect(w.stderr).toMatch(/cannot reach the queue at redis:\/\/127\.0\.0\.1:\d+: connect ECONNREFUSED/);
  });
});
