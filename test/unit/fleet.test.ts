/**
 * fleet/targets.ts, fleet/store.ts and the pure parts of fleet/run.ts (SPEC section 10): targets
 * of every kind to jobs with deterministic, BullMQ-safe ids; bad files named; the store's
 * transaction, claim, retry, recovery and one-runner guard; reasons to outcomes; the fetch limiter.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobId, readTargets, splitWords } from '../../src/fleet/targets.js';
import { FleetStore } from '../../src/fleet/store.js';
import { durationKey, longestFirst } from '../../src/fleet/order.js';
import { RUN_SQLITE, sqliteTitle } from '../helpers/sqlite.js';
import { listOnlyChecks, outcomeOfReason } from '../../src/fleet/run.js';
import { FetchLimiter, fetchTokenOf } from '../../src/fleet/fetch-limit.js';
import { Progress, type FleetSummary } from '../../src/fleet/progress.js';
import type { FleetRecord } from '../../src/fleet/types.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sealmark-fleet-unit-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function write(name: string, content: unknown): string {
  const p = join(dir, name);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
  return p;
}

const serverJson = (name: string, version: string) => ({
  name,
  description: 'x',
  version,
  packages: [
    { registryType: 'npm', identifier: '@x/a', version, transport: { type: 'stdio' } },
    { registryType: 'pypi', identifier: 'x-a', version, transport: { type: 'stdio' } },
  ],
  remotes: [{ type: 'streamable-http', url: 'https://example.com/mcp' }],
});

describe('targets', () => {
  it('a folder of server.json files: one job per package and per remote, ids deterministic and BullMQ-safe', () => {
    write('tree/a/one.json', serverJson('io.example/one', '1.0.0'));
    write('tree/b/two.json', serverJson('io.example/two', '2.0.0'));
    write('tree/notes.txt', 'not read: only *.json in a folder');
    const jobs = readTargets([join(dir, 'tree')]);
    expect(jobs.map((j) => [j.job.server, j.job.target.entry, j.job.target.label, j.spec.fetch, j.spec.remote])).toEqual([
      ['io.example/one', 'packages[0]', 'npm @x/a@1.0.0', 'npm', false],
      ['io.example/one', 'packages[1]', 'pypi x-a==1.0.0', 'pypi', false],
      ['io.example/one', 'remotes[0]', 'https://example.com/mcp', null, true],
      ['io.example/two', 'packages[0]', 'npm @x/a@2.0.0', 'npm', false],
      ['io.example/two', 'packages[1]', 'pypi x-a==2.0.0', 'pypi', false],
      ['io.example/two', 'remotes[0]', 'https://example.com/mcp', null, true],
    ]);
    for (const j of jobs) {
      expect(j.job.id).toMatch(/^j[0-9a-f]{24}$/);
      expect(j.job.id).toBe(jobId(j.job.server, j.job.version, j.job.target));
    }
    expect(new Set(jobs.map((j) => j.job.id)).size).toBe(6);
    expect(readTargets([join(dir, 'tree')]).map((j) => j.job.id)).toEqual(jobs.map((j) => j.job.id));
  });

  it('a registry list page: deleted items skipped, each item kept whole for the audit', () => {
    const page = write('page.json', {
      servers: [
        { server: serverJson('io.example/live', '1.0.0'), _meta: { 'io.modelcontextprotocol.registry/official': { status: 'active' } } },
        { server: serverJson('io.example/gone', '1.0.0'), _meta: { 'io.modelcontextprotocol.registry/official': { status: 'deleted' } } },
      ],
      metadata: { nextCursor: null },
    });
    const jobs = readTargets([page]);
    expect(new Set(jobs.map((j) => j.job.server))).toEqual(new Set(['io.example/live']));
    const spec = jobs[0]!.spec;
    expect(spec.via === 'server-json' && spec.file === null && (spec.doc as { server: { name: string } }).server.name).toBe('io.example/live');
  });

  it('a client config and a file of launch lines', () => {
    const config = write('claude.json', { mcpServers: { files: { command: 'npx', args: ['-y', '@x/files@1.2.3', '/data'] }, web: { url: 'https://example.com/mcp' }, off: { command: 'x', disabled: true } } });
    const lines = write('lines.txt', "# comment\n\nuvx 'x-tool==0.3.0' --flag\nhttps://example.com/other/mcp\nnode server.mjs \"a b\"\n");
    const jobs = readTargets([config, lines]);
    expect(jobs.map((j) => [j.job.server, j.job.version, j.job.target.kind, j.job.target.entry, j.spec.via, j.spec.fetch, j.spec.remote])).toEqual([
      ['files', '1.2.3', 'client-config', 'files', 'client-config', 'npm', false],
      ['web', null, 'client-config', 'web', 'client-config', null, true],
      ['x-tool', '0.3.0', 'launch-line', 'line 3', 'command', 'pypi', false],
      ['https://example.com/other/mcp', null, 'launch-line', 'line 4', 'url', null, true],
      ['node server.mjs "a b"', null, 'launch-line', 'line 5', 'command', null, false],
    ]);
    const last = jobs[4]!.spec;
    expect(last.via === 'command' && last.argv).toEqual(['node', 'server.mjs', 'a b']);
  });

  it('bad files are usage errors naming the file', () => {
    const notJson = write('broken.json', '{ "name": ');
    expect(() => readTargets([notJson])).toThrow(new RegExp(`${notJson}: not JSON`));
    const wrong = write('wrong.json', { name: 'io.example/x', version: 3 });
    expect(() => readTargets([wrong])).toThrow(new RegExp(`${wrong}: version`));
    const other = write('other.json', { hello: 1 });
    expect(() => readTargets([other])).toThrow(new RegExp(`${other}: not a server.json`));
    expect(() => readTargets([join(dir, 'missing.json')])).toThrow(/cannot read it \(ENOENT\)/);
    expect(() => splitWords("echo 'open", 'f:1')).toThrow(/f:1: unclosed ' quote/);
  });
});

describe.skipIf(!RUN_SQLITE)(sqliteTitle('store'), () => {
  const record = (jobId: string, over: Partial<FleetRecord> = {}): FleetRecord => ({
    jobId,
    server: 's',
    version: '1',
    target: { kind: 'package', entry: 'packages[0]', label: 'npm s@1' },
    ruler: { sealmarkVersion: '0.1.0', methodologyVersion: '0.1' },
    outcome: 'needs-config',
    reason: 'needs-config: X',
    grade: null,
    packs: {},
    finishedAt: new Date().toISOString(),
    durationMs: 5,
    attempts: 1,
    report: null,
    ...over,
  });

  it('claims, retries after a backoff, completes with its record in one go, recovers active jobs', () => {
    const where = join(dir, 'store');
    const s = FleetStore.open(where);
    const job = (id: string) => ({ job: { id, server: 's', version: '1', target: { kind: 'package' as const, entry: 'packages[0]', label: id }, source: 'f' }, spec: { via: 'x' } });
    s.upsertJobs([job('ja'), job('jb')]);
    s.enqueue(['ja', 'jb']);
    const a = s.claimNext(['ja', 'jb'])!;
    expect(a).toMatchObject({ id: 'ja', state: 'active', attempts: 1 });
    s.retryLater('ja', new Date(Date.now() + 60_000));
    expect(s.claimNext(['ja'])).toBeUndefined();
    expect(s.claimNext(['ja'], new Date(Date.now() + 61_000))).toMatchObject({ id: 'ja', attempts: 2 });
    s.complete(record('ja', { attempts: 2 }));
    expect(s.job('ja')?.state).toBe('completed');
    expect(s.hasRecord('ja', { sealmarkVersion: '0.1.0', methodologyVersion: '0.1' })).toBe(true);
    expect(s.hasRecord('ja', { sealmarkVersion: '0.2.0', methodologyVersion: '0.1' })).toBe(false);
    expect(s.claimNext(['jb'])).toMatchObject({ id: 'jb', attempts: 1 });
    // As if the runner died with jb active (a second live runner is refused: see the e2e test).
    s.close();
    const again = FleetStore.open(where);
    const orphans = again.recover();
    expect(orphans.map((o) => o.jobId)).toEqual(['jb']);
    expect(again.job('jb')).toMatchObject({ state: 'waiting', attempts: 0 });
    expect(again.records().map((r) => r.jobId)).toEqual(['ja']);
    expect(again.latest().map((r) => r.jobId)).toEqual(['ja']);
    expect(again.history('s')).toHaveLength(1);
    // A reader does not take the store: it reads while the runner holds it.
    const reader = FleetStore.openReadOnly(where);
    expect(reader.records().map((r) => r.jobId)).toEqual(['ja']);
    expect(() => reader.enqueue(['jb'])).toThrow();
    reader.close();
    again.close();
    expect(() => FleetStore.openReadOnly(join(dir, 'nothing-here'))).toThrow(/no fleet store there/);
  });

  it('knows how long each server’s target took last time, whatever its version, and a re-grade runs the longest first', () => {
    const s = FleetStore.open(join(dir, 'store-durations'));
    const at = (n: number) => new Date(Date.UTC(2026, 11, 1, 0, n)).toISOString();
    const ids = ['slow-1', 'slow-2', 'quick-1', 'mid-1'];
    s.upsertJobs(ids.map((id) => ({ job: { id, server: id.split('-')[0]!, version: '1', target: { kind: 'package' as const, entry: 'packages[0]', label: id }, source: 'f' }, spec: { via: 'x' } })));
    s.complete(record('slow-1', { server: 'slow', durationMs: 50_000, finishedAt: at(1) }));
    s.complete(record('slow-2', { server: 'slow', version: '2', durationMs: 60_000, finishedAt: at(2) }));
    s.complete(record('quick-1', { server: 'quick', durationMs: 4_000, finishedAt: at(3) }));
    s.complete(record('mid-1', { server: 'mid', durationMs: 20_000, finishedAt: at(4), listOnly: true }));
    const durations = s.lastDurations();
    // A list-only record reads back as one; the others carry no such key.
    expect(s.records().map((r) => [r.jobId, r.listOnly])).toEqual([
      ['slow-1', undefined],
      ['slow-2', undefined],
      ['quick-1', undefined],
      ['mid-1', true],
    ]);
    s.close();
    expect(durations.get(durationKey({ server: 'slow', target: { kind: 'package', entry: 'packages[0]', label: 'x' } }))).toBe(60_000);
    const job = (server: string, entry = 'packages[0]') => ({ job: { server, target: { kind: 'package' as const, entry, label: server } } });
    // New versions of known servers by last time, longest first; a server never graded first of all.
    const order = longestFirst([job('quick'), job('mid'), job('new'), job('slow'), job('slow', 'packages[1]')], durations).map((j) => `${j.job.server} ${j.job.target.entry}`);
    expect(order).toEqual(['new packages[0]', 'slow packages[1]', 'slow packages[0]', 'mid packages[0]', 'quick packages[0]']);
  });
});

describe('runner parts', () => {
  it('maps every not-audited reason to an outcome that is not a grade', () => {
    expect(outcomeOfReason('fetch-failed')).toBe('fetch-failed');
    expect(outcomeOfReason('needs-config')).toBe('needs-config');
    expect(outcomeOfReason('needs-network')).toBe('fails-offline');
    expect(outcomeOfReason('unauthorized')).toBe('auth-gated');
    for (const r of ['not-runnable', 'invalid-entry', 'spawn-failed']) expect(outcomeOfReason(r)).toBe('not-runnable');
    for (const r of ['exited-during-init', 'init-timeout', 'init-rejected', 'empty-tools', 'tools-list-failed', 'connect-failed', 'http-error', 'something-new']) expect(outcomeOfReason(r)).toBe('handshake');
  });

  it('lists only checks that send no tools/call for remotes without --call-remotes', () => {
    const ids = listOnlyChecks();
    expect(ids).toContain('handshake');
    expect(ids).toContain('tool-schemas');
    expect(ids).not.toContain('robust-input');
    expect(ids).not.toContain('annotations');
  });

  it('progress: a live line on a TTY (done/total, running, outcomes, rate, ETA); only the summary otherwise', () => {
    const run = (isTTY: boolean) => {
      const written: string[] = [];
      const out = { isTTY, write: (t: string) => written.push(t) } as unknown as NodeJS.WriteStream;
      const summary: FleetSummary = { total: 3, skipped: 1, ran: 0, outcomes: {}, failed: [], ms: 0 };
      const p = new Progress(out, 2, summary);
      p.running(+1);
      summary.ran = 1;
      summary.outcomes.graded = 1;
      p.running(-1);
      p.done();
      summary.ms = 1500;
      p.finish();
      return written;
    };
    const tty = run(true);
    expect(tty.some((l) => /fleet: 0\/2 done, 1 running; none yet; [\d.]+\/min, ETA/.test(l))).toBe(true);
    expect(tty.some((l) => /fleet: 1\/2 done, 0 running; graded 1; [\d.]+\/min, ETA (\d+ s|…)/.test(l))).toBe(true);
    expect(tty.at(-1)).toMatch(/^\r\u001b\[2Kfleet: 3 jobs: 1 run \(graded 1\), 1 already recorded under sealmark .* in 1\.5 s\n$/);
    expect(run(false)).toEqual([expect.stringMatching(/^fleet: 3 jobs: 1 run \(graded 1\), 1 already recorded/)]);
  });

  it('an exact version already in the cache spends no fetch token; a range, a new version or no cache does', () => {
    const cache = join(dir, 'token-cache');
    // What an earlier fetch leaves: the install folder with its marker (src/target/fetch.ts).
    write('token-cache/npm/@x+a@1.0.0/.sealmark-installed.json', { ecosystem: 'npm', name: '@x/a', version: '1.0.0' });
    write('token-cache/pypi/x-a==1.0.0/.sealmark-installed.json', { ecosystem: 'pypi', name: 'x-a', version: '1.0.0' });
    const lines = write('token-lines.txt', ['npx -y @x/a@1.0.0', 'npx -y @x/a@1.0.1', 'npx -y @x/a@^1.0.0', 'uvx x-a==1.0.0', 'node server.js'].join('\n'));
    expect(readTargets([lines]).map((j) => fetchTokenOf(j.spec, cache))).toEqual([null, 'npm', 'npm', null, null]);
    expect(readTargets([lines]).map((j) => fetchTokenOf(j.spec, join(dir, 'no-cache')))).toEqual(['npm', 'npm', 'npm', 'pypi', null]);
    // server.json entries carry their package too (the remote fetches nothing).
    const sj = write('token-sj/server.json', serverJson('io.github.x/a', '1.0.0'));
    expect(readTargets([sj]).map((j) => fetchTokenOf(j.spec, cache))).toEqual([null, null, null]);
    expect(readTargets([write('token-sj2/server.json', serverJson('io.github.x/a', '2.0.0'))]).map((j) => fetchTokenOf(j.spec, cache))).toEqual(['npm', 'pypi', null]);
  });

  it('the fetch limiter: a burst, then the rate', async () => {
    const limiter = new FetchLimiter(600); // 10 a second, a burst of 10
    const t0 = Date.now();
    for (let i = 0; i < 10; i++) await limiter.take('npm');
    expect(Date.now() - t0).toBeLessThan(50);
    await limiter.take('npm');
    await limiter.take('npm');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(150);
    const t1 = Date.now();
    await limiter.take('pypi');
    expect(Date.now() - t1).toBeLessThan(50);
  });
});
