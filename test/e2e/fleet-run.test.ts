/**
 * `sealmark fleet run` end to end (SPEC section 10), through the real binary, against the loopback
 * npm registry fixture (test/fixtures/fleet/README.md): a folder of server.json entries graded three
 * at a time (graded, fails-offline, fetch-failed, not-runnable, needs-config); a re-run that grades
 * nothing; a new version that grades only it; `--regrade`; a deadline that ends a hung server's
 * whole tree (timeout); the crash test (kill -9 of the runner after its first record, then the same
 * command again: every job exactly once, the first not repeated, nothing left running or on disk);
 * Ctrl-C; a remote listed without a single tools/call, and one answering 401 (auth-gated); a
 * registry list page and launch lines (0 tools listed: handshake); a bad file; a store in use.
 * Every outcome, reason and grade asserted comes from a real run.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoardIndex } from '../../src/fleet/board.js';
import { processesWith } from '../helpers/procs.js';
import { BIN, runCli, type CliRun } from '../helpers/cli.js';
import { startHttpFixture, type HttpFixture } from '../helpers/http.js';
import { startNpmRegistry, type NpmRegistry } from '../helpers/registries.js';
import { root } from '../helpers/run.js';
import { RUN_SQLITE, sqliteTitle } from '../helpers/sqlite.js';
import { FleetStore, loadSqlite } from '../../src/fleet/store.js';
import type { FleetRecord } from '../../src/fleet/types.js';
import { VERSION } from '../../src/version.js';

const SLOW = 300_000;
const FIXTURES = join(root, 'test', 'fixtures', 'fleet');
/** Marks every process this file's runners start (the audits inherit it), to find leftovers. */
const MARK = `fleet-test-${randomBytes(6).toString('hex')}`;

let npm: NpmRegistry;
let work: string;
/** The runners' TMPDIR: their work folders and the audits' sandbox folders go there, so leftovers are told apart from other runs'. */
let scratch: string;

beforeAll(async () => {
  npm = await startNpmRegistry({ folders: ['echo-server-1.0.0', 'echo-server-1.1.0', 'net-at-start', 'hangs-at-start'] });
  work = mkdtempSync(join(tmpdir(), 'sealmark-fleet-test-'));
  scratch = join(work, 'tmp');
  mkdirSync(scratch);
}, 120_000);

afterAll(async () => {
  await npm?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

function env(): Record<string, string> {
  return { ...npm.env({ failFast: true }), SEALMARK_CACHE: join(work, 'cache'), FLEET_TEST_MARK: MARK, TMPDIR: scratch };
}

function fleet(args: string[]): Promise<CliRun> {
  return runCli(['fleet', 'run', ...args], { env: env(), cwd: work });
}

/** Every record of a store (opened, read, closed: the store is free between runs). */
function records(store: string): FleetRecord[] {
  const s = FleetStore.open(store);
  try {
    return s.records();
  } finally {
    s.close();
  }
}

function byServer(recs: FleetRecord[]): Map<string, FleetRecord> {
  return new Map(recs.map((r) => [`${r.server}@${r.version}`, r]));
}

/**
 * Processes (not this one) started by this file's runners: their environment carries MARK (the
 * runner and the audits), or their command line names the scratch folder (servers started from
 * the cache there) or MARK (the fixture servers started by path from launch lines get it as an
 * argument they ignore: the sandbox scrubs their environment, and other test files start the same
 * fixtures).
 */
function leftovers(): string[] {
  return processesWith([MARK, work]);
}

/**
 * What the runners left in their TMPDIR: work folders (sealmark-fleet-*), sandbox folders
 * (sealmark-sandbox-*). The sandboxes' control folders in /dev/shm are removed by the same
 * dispose as their sandbox folder; other test runs on this machine make them too, so they are
 * not counted here.
 */
function scratchEntries(): string[] {
  return readdirSync(scratch).map((n) => join(scratch, n));
}

async function settle(check: () => string[], ms = 8000): Promise<string[]> {
  const until = Date.now() + ms;
  let left = check();
  while (left.length > 0 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 200));
    left = check();
  }
  return left;
}

describe.skipIf(!RUN_SQLITE)(sqliteTitle('fleet run'), () => {
  it(
    '--jobs 3 over a folder: one outcome of each kind; a re-run grades nothing; a new version grades only it; --regrade',
    async () => {
      const targets = join(work, 'targets');
      cpSync(join(FIXTURES, 'servers'), targets, { recursive: true });
      const store = join(work, 'store-kinds');

      const first = await fleet([targets, '--store', store, '--jobs', '3', '--deadline', '120']);
      expect(first.code, first.stderr).toBe(0);
      // Not a TTY: the summary line only.
      expect(first.stderr.trim().split('\n'), first.stderr).toHaveLength(1);
      expect(first.stderr).toMatch(/^fleet: 5 jobs: 5 run .*0 already recorded/);
      const recs = records(store);
      expect(recs).toHaveLength(5);
      const m = byServer(recs);

      const echo = m.get('io.github.fixture/echo@1.0.0')!;
      expect(echo.outcome, echo.reason ?? '').toBe('graded');
      expect(echo.report?.status).toBe('audited');
      expect(echo.grade).toEqual({ letter: echo.report!.grade.letter, percent: echo.report!.grade.percent });
      expect(echo.grade?.letter).toMatch(/^[A-F]$/);
      expect(Object.keys(echo.packs).sort()).toEqual(echo.report!.grade.packs.map((p) => p.pack).sort());
      expect(echo.ruler).toEqual({ sealmarkVersion: echo.report!.cliVersion, methodologyVersion: echo.report!.methodologyVersion });
      expect(echo.report?.suppressions.applied).toBe(false);

      const net = m.get('io.github.fixture/net-at-start@1.0.0')!;
      expect(net.outcome, net.reason ?? '').toBe('fails-offline');
      expect(net.reason).toMatch(/^needs-network: /);

      const missing = m.get('io.github.fixture/not-published@1.0.0')!;
      expect(missing.outcome).toBe('fetch-failed');
      expect(missing.reason).toMatch(/@fixture\/not-published/);
      expect(missing.attempts).toBe(2);

      const cargo = m.get('io.github.fixture/cargo-only@1.0.0')!;
      expect(cargo.outcome).toBe('not-runnable');
      expect(cargo.reason).toMatch(/^not-runnable: packages\[0\]/);
      expect(cargo.report?.notAudited?.reason).toBe('not-runnable');

      const key = m.get('io.github.fixture/needs-key@1.0.0')!;
      expect(key.outcome).toBe('needs-config');
      expect(key.reason).toMatch(/ECHO_API_KEY/);

      // Never an F for an outcome that is not a grade; one attempt for deterministic ones.
      for (const r of recs.filter((x) => x.outcome !== 'graded')) {
        expect(r.grade, r.outcome).toBeNull();
        expect(r.packs).toEqual({});
      }
      for (const r of [net, cargo, key]) expect(r.attempts).toBe(1);
      expect(new Set(recs.map((r) => r.jobId)).size).toBe(5);
      for (const r of recs) expect(r.jobId).toMatch(/^j[0-9a-f]{24}$/);

      // A re-run under the same ruler grades nothing.
      const again = await fleet([targets, '--store', store, '--jobs', '3']);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toMatch(/^fleet: 5 jobs: 0 run \(none\), 5 already recorded/);
      expect(records(store)).toHaveLength(5);

      // A new version of one server: only it is graded.
      cpSync(join(FIXTURES, 'echo-1.1.0.json'), join(targets, 'echo-1.1.0.json'));
      const bumped = await fleet([targets, '--store', store, '--jobs', '3']);
      expect(bumped.code, bumped.stderr).toBe(0);
      const afterBump = records(store);
      expect(afterBump).toHaveLength(6);
      const added = afterBump[5]!;
      expect(added).toMatchObject({ server: 'io.github.fixture/echo', version: '1.1.0', outcome: 'graded' });
      expect(added.report?.protocol?.server.version).toBe('1.1.0');

      // --regrade: that server again, nothing else.
      const re = await fleet([targets, '--store', store, '--jobs', '3', '--regrade', 'io.github.fixture/needs-key']);
      expect(re.code, re.stderr).toBe(0);
      const afterRe = records(store);
      expect(afterRe).toHaveLength(7);
      expect(afterRe[6]).toMatchObject({ server: 'io.github.fixture/needs-key', outcome: 'needs-config', jobId: key.jobId });
      const s = FleetStore.open(store);
      try {
        expect(s.history('io.github.fixture/echo').map((r) => r.version)).toEqual(['1.0.0', '1.1.0']);
        expect(s.latest()).toHaveLength(6);
        expect(s.latest().find((r) => r.jobId === key.jobId)?.finishedAt).toBe(afterRe[6]!.finishedAt);
      } finally {
        s.close();
      }

      // fleet report: the store's records as a leaderboard, each server with its history and badge.
      const board = join(work, 'board');
      const rep = await runCli(['fleet', 'report', '--store', store, '--output', board], { env: env(), cwd: work });
      expect(rep.code, rep.stderr).toBe(0);
      expect(rep.stdout).toContain(`fleet report of 5 servers (7 records): ${join(board, 'index.html')}`);
      const index = JSON.parse(readFileSync(join(board, 'index.json'), 'utf8')) as BoardIndex;
      expect(index.servers.map((x) => x.server).sort()).toEqual([...new Set(afterRe.map((r) => r.server))].sort());
      const echoEntry = index.servers.find((x) => x.server === 'io.github.fixture/echo')!;
      expect(echoEntry.versions).toEqual(['1.0.0', '1.1.0']);
      expect(echoEntry.latest[0]).toMatchObject({ version: '1.1.0', outcome: 'graded', grade: added.grade });
      expect(echoEntry.history.map((h) => h.version)).toEqual(['1.1.0', '1.0.0']);
      expect(readFileSync(join(board, echoEntry.badge), 'utf8')).toContain(`>${added.grade!.letter}<`);
      const keyEntry = index.servers.find((x) => x.server === 'io.github.fixture/needs-key')!;
      expect(keyEntry.latest[0]).toMatchObject({ outcome: 'needs-config', grade: null });
      expect(readFileSync(join(board, keyEntry.badge), 'utf8')).toContain('>needs-config<');
      expect(readFileSync(join(board, 'index.html'), 'utf8')).toContain('ECHO_API_KEY');

      expect(await settle(leftovers)).toEqual([]);
      expect(await settle(scratchEntries)).toEqual([]);
    },
    SLOW,
  );

  it(
    'a server that hangs: the deadline ends its whole process tree, twice (timeout is flaky), then a timeout record',
    async () => {
      const store = join(work, 'store-timeout');
      const r = await fleet([join(FIXTURES, 'hangs.json'), '--store', store, '--deadline', '4']);
      expect(r.code, r.stderr).toBe(0);
      const [rec, ...rest] = records(store);
      expect(rest).toEqual([]);
      expect(rec).toMatchObject({ server: 'io.github.fixture/hangs', outcome: 'timeout', attempts: 2, grade: null, report: null });
      expect(rec!.reason).toMatch(/deadline of 4 s/);
      expect(rec!.durationMs).toBeGreaterThanOrEqual(4000);
      expect(await settle(leftovers)).toEqual([]);
      expect(await settle(scratchEntries)).toEqual([]);
    },
    SLOW,
  );

  it(
    'the crash test: kill -9 after the first record, the same command again: every job once, none repeated, nothing left',
    async () => {
      const targets = join(work, 'crash-targets');
      mkdirSync(targets);
      for (const f of ['servers/cargo-only.json', 'echo-1.1.0.json', 'servers/needs-key.json']) cpSync(join(FIXTURES, f), join(targets, f.replace('servers/', '')));
      const store = join(work, 'store-crash');
      const args = ['fleet', 'run', targets, '--store', store, '--jobs', '1'];
      const runner = spawn(process.execPath, [BIN, ...args], { cwd: work, env: { ...process.env, ...env() }, stdio: 'ignore' });
      const exited = new Promise((res) => runner.once('exit', res));
      // Poll the store (read-only: the runner holds it) until the first record is committed.
      // Then kill it while the next job is active: its audit is orphaned, for the next run to end.
      let first: { seq: number; job_id: string; finished_at: string; attempts: number } | undefined;
      let active: { id: string } | undefined;
      const until = Date.now() + 120_000;
      // (active and its audit started: the audit process carries MARK and names `audit`.)
      const auditRuns = () => leftovers().some((l) => / audit /.test(l));
      while (!(first && active && auditRuns()) && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 20));
        if (!existsSync(join(store, 'fleet.db'))) continue;
        const Database = loadSqlite();
        const db = new Database(join(store, 'fleet.db'), { readonly: true, fileMustExist: true });
        try {
          first = db.prepare('SELECT seq, job_id, finished_at, attempts FROM records ORDER BY seq LIMIT 1').get() as typeof first;
          active = db.prepare("SELECT id FROM jobs WHERE state = 'active'").get() as typeof active;
        } catch {
          /* tables not made yet */
        } finally {
          db.close();
        }
      }
      expect(first).toBeDefined();
      expect(active).toBeDefined();
      runner.kill('SIGKILL');
      await exited;
      // The active job's audit outlived its runner.
      expect(leftovers().length).toBeGreaterThan(0);

      const r = await fleet([targets, '--store', store, '--jobs', '1']);
      expect(r.code, r.stderr).toBe(0);
      const recs = records(store);
      expect(recs.map((x) => x.jobId).sort()).toEqual([...new Set(recs.map((x) => x.jobId))].sort());
      expect(recs).toHaveLength(3);
      const again = recs.find((x) => x.jobId === first!.job_id)!;
      expect({ finishedAt: again.finishedAt, attempts: again.attempts }).toEqual({ finishedAt: first!.finished_at, attempts: first!.attempts });
      expect(new Set(recs.map((x) => x.outcome))).toEqual(new Set(['not-runnable', 'graded', 'needs-config']));
      // The interrupted attempt does not count against the job.
      for (const x of recs) expect(x.attempts).toBe(1);
      const s = FleetStore.open(store);
      try {
        expect(s.jobs().map((j) => j.state)).toEqual(['completed', 'completed', 'completed']);
      } finally {
        s.close();
      }
      expect(await settle(leftovers)).toEqual([]);
      expect(await settle(scratchEntries)).toEqual([]);
    },
    SLOW,
  );

  it('a client config: each server is graded from its own report (audit --client-config writes one document for the file)', async () => {
    const echo = join(root, 'test', 'fixtures', 'packages', 'npm', 'echo-server-1.0.0', 'server.mjs');
    const config = join(work, 'two.mcp.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { first: { command: process.execPath, args: [echo, MARK] }, second: { command: process.execPath, args: [echo, MARK, 'again'] } } }));
    const store = join(work, 'store-client-config');
    const r = await fleet([config, '--store', store, '--jobs', '2']);
    expect(r.code, r.stderr).toBe(0);
    const recs = records(store).sort((a, b) => a.server.localeCompare(b.server));
    expect(recs.map((x) => [x.server, x.outcome, x.ruler.sealmarkVersion, x.report?.protocol?.server.name])).toEqual([
      ['first', 'graded', VERSION, '@fixture/echo-server'],
      ['second', 'graded', VERSION, '@fixture/echo-server'],
    ]);
    expect(recs.every((x) => typeof x.grade?.letter === 'string')).toBe(true);
  });

  it('a runner that died after claiming a job and making its folder, before starting its audit: the next run removes the folder', async () => {
    const file = join(FIXTURES, 'servers', 'cargo-only.json');
    const store = join(work, 'store-claimed');
    expect((await fleet([file, '--store', store])).code).toBe(0);
    // As the dead runner left it: the job active, its work folder made, no audit pid stored.
    const s = FleetStore.open(store);
    const [job] = s.jobs();
    s.enqueue([job!.id]);
    expect(s.claimNext([job!.id])?.state).toBe('active');
    s.close();
    const folder = join(scratch, `sealmark-fleet-${createHash('sha256').update(store).digest('hex').slice(0, 8)}-${job!.id}-dead01`);
    mkdirSync(folder);
    writeFileSync(join(folder, 'sealmark.config.json'), '{}\n');
    const r = await fleet([file, '--store', store]);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(folder)).toBe(false);
    expect(records(store)).toHaveLength(1);
  });

  it(
    'Ctrl-C: the running audits and their servers are stopped, their folders removed, the store released; the next run takes the job up',
    async () => {
      const lines = join(work, 'hang-line.txt');
      writeFileSync(lines, `${JSON.stringify(process.execPath)} ${join(root, 'test', 'fixtures', 'packages', 'npm', 'hangs-at-start', 'server.mjs')} ${MARK}\n`);
      const store = join(work, 'store-int');
      const runner = spawn(process.execPath, [BIN, 'fleet', 'run', lines, '--store', store, '--deadline', '60'], { cwd: work, env: { ...process.env, ...env() }, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      runner.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<number | null>((res) => runner.once('exit', (code) => res(code)));
      // Wait until the hung server runs (its command line names the fixture), then interrupt.
      const until = Date.now() + 60_000;
      while (!leftovers().some((l) => l.includes('hangs-at-start/server.mjs') && !l.includes('sealmark.js')) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      runner.kill('SIGINT');
      expect(await exited).toBe(130);
      expect(stderr).toMatch(/fleet: stopped after 0 new records; 1 running audit was stopped/);
      // The generic line names the signal only: not an audit's "nothing had started".
      expect(stderr).toContain('sealmark: fleet run interrupted (SIGINT)');
      expect(stderr).not.toContain('nothing had started');
      expect(await settle(leftovers)).toEqual([]);
      expect(await settle(scratchEntries)).toEqual([]);
      const r = await fleet([lines, '--store', store, '--deadline', '2', '--attempts', '1']);
      expect(r.code, r.stderr).toBe(0);
      const [rec, ...rest] = records(store);
      expect(rest).toEqual([]);
      expect(rec).toMatchObject({ outcome: 'timeout', attempts: 1, target: { kind: 'launch-line', entry: 'line 1' } });
      expect(await settle(leftovers)).toEqual([]);
      expect(await settle(scratchEntries)).toEqual([]);
    },
    SLOW,
  );

  describe('a remote', () => {
    let http: HttpFixture;
    let bearer: HttpFixture;
    beforeAll(async () => {
      http = await startHttpFixture('streamable.mjs');
      bearer = await startHttpFixture('bearer.mjs', [], { FIXTURE_TOKEN: `tok-${randomBytes(8).toString('hex')}` });
    }, 60_000);
    afterAll(async () => {
      await http?.stop();
      await bearer?.stop();
    });

    it('a remote that answers 401: auth-gated, with the reason', async () => {
      const file = join(work, 'gated.json');
      writeFileSync(file, JSON.stringify({ name: 'io.github.fixture/gated', description: 'x', version: '1.0.0', remotes: [{ type: 'streamable-http', url: bearer.url }] }));
      const store = join(work, 'store-gated');
      const r = await fleet([file, '--store', store]);
      expect(r.code, r.stderr).toBe(0);
      const [rec, ...rest] = records(store);
      expect(rest).toEqual([]);
      expect(rec).toMatchObject({ outcome: 'auth-gated', grade: null, attempts: 1 });
      expect(rec!.reason).toMatch(/^unauthorized: .*401/);
    });

    it(
      'without --call-remotes: listed, linted and its handshake graded, and not one tools/call sent; with it, a full audit',
      async () => {
        const file = join(work, 'remote.json');
        const doc = { name: 'io.github.fixture/hosted', description: 'a hosted fixture', version: '2.0.0', remotes: [{ type: 'streamable-http', url: http.url }] };
        writeFileSync(file, JSON.stringify(doc));
        const store = join(work, 'store-remote');
        const tdir = join(work, 'transcripts');
        const listed = await fleet([file, '--store', store, '--transcripts', tdir]);
        expect(listed.code, listed.stderr).toBe(0);
        const [rec] = records(store);
        expect(rec).toMatchObject({ server: 'io.github.fixture/hosted', target: { kind: 'remote', entry: 'remotes[0]', label: http.url }, outcome: 'graded', listOnly: true });
        const sent = (t: string) =>
          readFileSync(t, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as { dir?: string; direction?: string; message?: { method?: string } })
            .filter((l) => (l.dir ?? l.direction ?? '').match(/^(out|send|client)/))
            .map((l) => l.message?.method);
        const methods = sent(join(tdir, `${rec!.jobId}.jsonl`));
        expect(methods).toContain('tools/list');
        expect(methods).not.toContain('tools/call');
        const checked = rec!.report!.checks.filter((c) => c.verdict !== 'n/a').map((c) => c.id);
        expect(checked).toContain('tool-schemas');
        expect(checked).not.toContain('robust-input');
        expect(rec!.report!.checks.find((c) => c.id === 'handshake')?.verdict).toBe('pass');

        const called = await fleet([file, '--store', store, '--transcripts', tdir, '--call-remotes', '--regrade', 'io.github.fixture/hosted']);
        expect(called.code, called.stderr).toBe(0);
        expect(records(store)).toHaveLength(2);
        expect(sent(join(tdir, `${rec!.jobId}.jsonl`))).toContain('tools/call');
        // The full audit's record is not marked list-only.
        expect(records(store).filter((r) => r.listOnly === true)).toHaveLength(1);
      },
      SLOW,
    );
  });

  it(
    'a saved page of the registry list (a deleted item skipped) and a file of launch lines, two at a time; 0 tools listed is a handshake outcome',
    async () => {
      const entry = (name: string) => JSON.parse(readFileSync(join(FIXTURES, 'servers', name), 'utf8')) as Record<string, unknown>;
      const official = (status: string) => ({ 'io.modelcontextprotocol.registry/official': { status, isLatest: true } });
      const page = {
        servers: [
          { server: entry('cargo-only.json'), _meta: official('active') },
          { server: { ...entry('needs-key.json'), version: '0.9.0' }, _meta: official('deleted') },
          { server: entry('needs-key.json'), _meta: official('active') },
        ],
        metadata: { count: 3, nextCursor: null },
      };
      const pageFile = join(work, 'page.json');
      writeFileSync(pageFile, JSON.stringify(page));
      const lines = join(work, 'launch-lines.txt');
      const empty = `${join(root, 'test', 'fixtures', 'servers', 'empty-tools.mjs')} ${MARK}`;
      const correct = `${JSON.stringify(process.execPath)} ${join(root, 'test', 'fixtures', 'servers', 'correct-sdk.mjs')} ${MARK}`;
      writeFileSync(lines, `# one server a line\n\n${correct}\nnode ${empty}\n`);
      const store = join(work, 'store-page');
      const r = await fleet([pageFile, lines, '--store', store, '--jobs', '2']);
      expect(r.code, r.stderr).toBe(0);
      const recs = records(store);
      expect(recs.map((x) => [x.server, x.version, x.target.kind, x.outcome]).sort()).toEqual(
        [
          ['io.github.fixture/cargo-only', '1.0.0', 'package', 'not-runnable'],
          ['io.github.fixture/needs-key', '1.0.0', 'package', 'needs-config'],
          [correct, null, 'launch-line', 'graded'],
          [`node ${empty}`, null, 'launch-line', 'handshake'],
        ].sort(),
      );
      const line = recs.find((x) => x.target.kind === 'launch-line' && x.outcome === 'graded')!;
      expect(line.target.entry).toBe('line 3');
      expect(line.report?.target.command).toEqual([process.execPath, join(root, 'test', 'fixtures', 'servers', 'correct-sdk.mjs'), MARK]);
      // 0 tools listed: a handshake outcome with its evidence, not an F.
      const none = recs.find((x) => x.outcome === 'handshake')!;
      expect(none).toMatchObject({ grade: null, packs: {} });
      expect(none.reason).toMatch(/^empty-tools: /);
      expect(none.report?.checks.find((c) => c.id === 'handshake')?.verdict).toBe('fail');
      expect(await settle(leftovers)).toEqual([]);
      expect(await settle(scratchEntries)).toEqual([]);
    },
    SLOW,
  );

  it('a new ruler grades again: a record made under another methodology version does not count', async () => {
    const file = join(FIXTURES, 'servers', 'cargo-only.json');
    const store = join(work, 'store-ruler');
    expect((await fleet([file, '--store', store])).code).toBe(0);
    expect((await fleet([file, '--store', store])).stderr).toMatch(/0 run \(none\), 1 already recorded/);
    const Database = loadSqlite();
    const db = new Database(join(store, 'fleet.db'));
    db.prepare("UPDATE records SET methodology_version = '0.0-old'").run();
    db.close();
    const r = await fleet([file, '--store', store]);
    expect(r.stderr).toMatch(/1 run \(not-runnable 1\), 0 already recorded/);
    expect(records(store).map((x) => x.ruler.methodologyVersion)).toEqual(['0.0-old', records(store)[1]!.report!.methodologyVersion]);
  });

  it('usage errors: a bad target file names the file; a store in use by another runner (exit 2)', async () => {
    const bad = join(work, 'bad.json');
    writeFileSync(bad, '{ "name": ');
    const r = await fleet([bad, '--store', join(work, 'store-bad')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(bad);

    const store = join(work, 'store-busy');
    const held = FleetStore.open(store);
    try {
      const busy = await fleet([join(FIXTURES, 'servers', 'cargo-only.json'), '--store', store]);
      expect(busy.code).toBe(2);
      expect(busy.stderr).toMatch(/another fleet runner \(pid \d+\) is using this store/);
    } finally {
      held.close();
    }
  });
});
