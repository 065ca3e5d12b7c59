#!/usr/bin/env node
/**
 * Fleet throughput (issue 16, SPEC section 10), printed as figures, never asserted:
 *
 *  (a) servers per hour of `sealmark fleet run` over the real-server corpus (test/corpus/servers.json,
 *      the published servers pinned in package.json, 22 of them over several stacks), given to the
 *      fleet as one client config, at --jobs 1, 2, 4 and 8, each on a fresh store;
 *  (b) whether the records are the same at every --jobs (outcome, grade, every check's verdict and
 *      the fingerprints of its findings): concurrency must not change a grade;
 *  (c) peak memory of each run: the largest sum of resident memory over the runner and every
 *      process under it (audits, sandboxes, servers), sampled from /proc every 250 ms;
 *  (e) a re-grade of every server at the most --jobs, on that setting's store (as under a new
 *      ruler): the runner starts the jobs longest first, by the durations the store holds;
 *  (f) a sustained run: the corpus three times over (66 jobs, each copy with data folders of its
 *      own) at the most --jobs on a fresh store, in the order given: the rate of a first run long
 *      enough that no single audit sets its end, as over a registry of thousands of servers (a run
 *      of 22 ends with its slowest audit; server-everything alone takes about a minute); each
 *      copy's records compared with the reference;
 *  (g) CPU-s per server: what the machine spent busy during each run (/proc/stat), divided by its
 *      servers; the cores times an hour over the least of it is the most this machine can grade;
 *  (d) the fetch phase per server, cold (an empty sealmark cache) and warm (the same cache again),
 *      for an npm package served by a loopback registry this script starts (nothing leaves the
 *      machine): the audit of `--package npm:…` next to the audit of the same server by command.
 *
 * Usage: npm run bench (after scripts/bench.mjs), or `node scripts/bench-fleet.mjs [--jobs 1,2,4,8]`.
 * Target (issue 16): at least 1,000 servers an hour of corpus-like servers on this 2-core machine.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { FleetStore } from '../dist/fleet/store.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(root, 'bin', 'sealmark.js');
const arg = (name, fallback) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : fallback);
const JOBS = arg('--jobs', '1,2,4,8').split(',').filter(Boolean).map(Number);

const work = mkdtempSync(join(tmpdir(), 'sealmark-bench-fleet-'));
const cleanup = () => rmSync(work, { recursive: true, force: true });
process.on('exit', cleanup);

/** Suffix of the server names of the `k`th copy of the corpus (k ≥ 2; the first has none). */
const COPY = '--copy';

/**
 * The corpus as one client config: each server's bin with node (or as is), its own data folder;
 * `copies` times over, the `k`th copy's servers named `<id>--copy<k>` (k ≥ 2), one copy after another.
 */
function corpusConfig(copies = 1) {
  const corpus = JSON.parse(readFileSync(join(root, 'test', 'corpus', 'servers.json'), 'utf8'));
  const mcpServers = {};
  for (let k = 1; k <= copies; k++) {
    for (const s of corpus.servers) {
      const name = k === 1 ? s.id : `${s.id}${COPY}${k}`;
      const dir = join(work, 'data', name);
      mkdirSync(dir, { recursive: true });
      const fill = (v) => v.replaceAll('{dir}', dir);
      const bin = join(root, 'node_modules', s.bin);
      const js = /\.(c|m)?js$/.test(s.bin);
      mcpServers[name] = { command: js ? process.execPath : bin, args: [...(js ? [bin] : []), ...s.args.map(fill)], env: Object.fromEntries(Object.entries(s.env).map(([k2, v]) => [k2, fill(v)])) };
    }
  }
  const file = join(work, copies === 1 ? 'corpus.mcp.json' : `corpus-x${copies}.mcp.json`);
  writeFileSync(file, JSON.stringify({ mcpServers }, null, 2));
  return { file, count: corpus.servers.length * copies };
}

/**
 * CPU time (s) the whole machine has spent busy (user, nice, system, irq, softirq) since boot,
 * from the first line of /proc/stat (in USER_HZ ticks, 100 a second); 0 where there is no /proc.
 * The difference over a run is what the run cost, the servers and their sandboxes included
 * (nothing else runs during a bench).
 */
function busyCpuSec() {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    return (f[0] + f[1] + f[2] + f[5] + f[6]) / 100;
  } catch {
    return 0;
  }
}

/** Resident memory (bytes) of `pid` and every process under it, from /proc. */
function treeRss(pid) {
  const children = new Map();
  const rss = new Map();
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    try {
      const stat = readFileSync(`/proc/${n}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(rest[1]);
      (children.get(ppid) ?? children.set(ppid, []).get(ppid)).push(Number(n));
      rss.set(Number(n), Number(rest[21]) * 4096);
    } catch {
      /* gone */
    }
  }
  let total = 0;
  const queue = [pid];
  while (queue.length > 0) {
    const p = queue.shift();
    total += rss.get(p) ?? 0;
    queue.push(...(children.get(p) ?? []));
  }
  return total;
}

/**
 * Runs `sealmark fleet run` on `file` with `--jobs jobs` on a fresh store (or on `store`, with
 * `extra` arguments): wall ms, peak tree memory, the records.
 */
async function fleetRun(file, jobs, store = join(work, `store-${jobs}`), extra = []) {
  const env = { ...process.env, SEALMARK_CACHE: join(work, 'sealmark-cache'), TMPDIR: work };
  const t0 = performance.now();
  const cpu0 = busyCpuSec();
  const child = spawn(process.execPath, [BIN, 'fleet', 'run', file, '--store', store, '--jobs', String(jobs), ...extra], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, treeRss(child.pid))), 250);
  const code = await new Promise((r) => child.on('exit', r));
  clearInterval(timer);
  const ms = performance.now() - t0;
  const cpuSec = busyCpuSec() - cpu0;
  if (code !== 0) throw new Error(`fleet run --jobs ${jobs} exited ${code}: ${stderr}`);
  const s = FleetStore.openReadOnly(store);
  const records = s.latest();
  s.close();
  return { ms, peak, records, cpuSec };
}

/** What must not change with --jobs: outcome, grade, every check's verdict and finding fingerprints. */
function verdictsOf(records) {
  const out = {};
  for (const r of [...records].sort((a, b) => a.server.localeCompare(b.server))) {
    const checks = (r.report?.checks ?? []).map((c) => `${c.id}=${c.verdict}:${c.findings.map((f) => f.fingerprint ?? f.messageId).sort().join(',')}`);
    out[r.server] = { outcome: r.outcome, grade: r.grade?.letter ?? null, checks };
  }
  return out;
}

/** The first difference between two verdict maps, or undefined. */
function firstDifference(a, b) {
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const x = JSON.stringify(a[k]);
    const y = JSON.stringify(b[k]);
    if (x !== y) {
      const cx = a[k]?.checks ?? [];
      const cy = b[k]?.checks ?? [];
      const check = cx.find((c, i) => c !== cy[i]);
      return `${k}: ${check ?? x} vs ${cy[cx.indexOf(check)] ?? y}`;
    }
  }
  return undefined;
}

/**
 * A loopback npm registry of one package (test/fixtures/packages/npm/echo-server-1.0.0, no
 * dependencies): its packument and its tarball, packed with `npm pack`.
 */
async function echoRegistry() {
  const folder = join(root, 'test', 'fixtures', 'packages', 'npm', 'echo-server-1.0.0');
  const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
  const packDir = join(work, 'pack');
  mkdirSync(packDir);
  const packed = spawnSync('npm', ['pack', folder, '--pack-destination', packDir, '--silent'], { encoding: 'utf8', env: { ...process.env, npm_config_cache: join(work, 'npm-pack-cache') } });
  if (packed.status !== 0) throw new Error(`npm pack: ${packed.stderr}`);
  const tgz = readFileSync(join(packDir, readdirSync(packDir)[0]));
  const integrity = `sha512-${createHash('sha512').update(tgz).digest('base64')}`;
  const shasum = createHash('sha1').update(tgz).digest('hex');
  const server = createServer((req, res) => {
    const base = `http://127.0.0.1:${server.address().port}`;
    if (decodeURIComponent(req.url.slice(1)) === manifest.name) {
      const packument = { name: manifest.name, 'dist-tags': { latest: manifest.version }, versions: { [manifest.version]: { ...manifest, dist: { tarball: `${base}/tarball.tgz`, integrity, shasum } } } };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(packument));
    } else if (req.url === '/tarball.tgz') res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(tgz);
    else res.writeHead(404).end('{}');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { manifest, folder, url: `http://127.0.0.1:${server.address().port}/`, close: () => new Promise((r) => server.close(r)) };
}

/** ms of one `sealmark audit --only handshake` with `args`, in `env` (asynchronous: the registry answers from this process). */
async function auditMs(args, env) {
  const t0 = performance.now();
  const child = spawn(process.execPath, [BIN, 'audit', '--only', 'handshake', '--format', 'json', '--output', join(work, 'fetch-report.json'), ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-2000)));
  const code = await new Promise((r) => child.on('exit', r));
  if (code !== 0) throw new Error(`audit ${args.join(' ')} exited ${code}: ${stderr}`);
  return performance.now() - t0;
}

/** The fetch phase per server: medians (ms) of `runs` audits by package, cold and warm, and by command. */
async function fetchCost(runs = 3) {
  const reg = await echoRegistry();
  try {
    const npmEnv = { ...process.env, npm_config_registry: reg.url, npm_config_cache: join(work, 'npm-cache') };
    const spec = `npm:${reg.manifest.name}@${reg.manifest.version}`;
    const bin = typeof reg.manifest.bin === 'string' ? reg.manifest.bin : Object.values(reg.manifest.bin ?? {})[0];
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const cold = [];
    const warm = [];
    const bare = [];
    for (let i = 0; i < runs; i++) {
      const cache = join(work, `fetch-cache-${i}`);
      rmSync(join(work, 'npm-cache'), { recursive: true, force: true });
      const env = { ...npmEnv, SEALMARK_CACHE: cache };
      cold.push(await auditMs(['--package', spec], env));
      warm.push(await auditMs(['--package', spec], env));
      bare.push(await auditMs(['--', process.execPath, join(reg.folder, bin)], env));
    }
    return { cold: median(cold), warm: median(warm), bare: median(bare) };
  } finally {
    await reg.close();
  }
}

async function main() {
  const { file, count } = corpusConfig();
  const cores = availableParallelism();
  let first;
  let best = 0;
  if (JOBS.length > 0) {
    process.stdout.write(`\nsealmark fleet over the real-server corpus (${count} servers, ${cores} cores), one line per setting as it finishes\n`);
    process.stdout.write('setting    wall      recorded  servers/hour  peak MB (tree)  CPU-s/server  records vs the first setting\n');
  }
  // The CPU time a server costs, from the runs so far: what bounds the rate of a full machine.
  let cpuPerServer = Infinity;
  const row = (label, r, total = count) => {
    const verdicts = verdictsOf(r.records);
    first ??= verdicts;
    // A copy of the corpus is compared, server by server, with the reference's server of its id.
    const copies = [...new Set(Object.keys(verdicts).map((k) => Number(k.split(COPY)[1] ?? 1)))];
    const copyOf = (k) => Object.fromEntries(Object.entries(verdicts).filter(([n]) => Number(n.split(COPY)[1] ?? 1) === k).map(([n, v]) => [n.split(COPY)[0], v]));
    const diff = copies.map((k) => firstDifference(first, copyOf(k))).find(Boolean);
    const perHour = (r.records.length / r.ms) * 3_600_000;
    best = Math.max(best, perHour);
    const perServer = r.cpuSec / r.records.length;
    cpuPerServer = Math.min(cpuPerServer, perServer);
    const cells = [label, `${(r.ms / 1000).toFixed(1)} s`, `${r.records.length}/${total}`, perHour.toFixed(0), (r.peak / 1048576).toFixed(0), perServer.toFixed(1), diff ? `differs: ${diff}` : first === verdicts ? '(reference)' : 'same'];
    process.stdout.write(`${cells.map((c, i) => String(c).padEnd([9, 8, 8, 12, 14, 12, 0][i])).join('  ')}\n`);
  };
  for (const jobs of JOBS) row(`--jobs ${jobs}`, await fleetRun(file, jobs));
  // A re-grade of every server (as under a new ruler) on the store of the most jobs: the runner
  // now knows how long each took and starts the longest first.
  const most = Math.max(...JOBS);
  if (JOBS.length > 0) {
    const names = JSON.parse(readFileSync(join(root, 'test', 'corpus', 'servers.json'), 'utf8')).servers.flatMap((x) => ['--regrade', x.id]);
    row(`re-grade`, await fleetRun(file, most, join(work, `store-${most}`), names));
  }
  // A first run long enough that no single audit sets its end: the corpus three times over.
  if (JOBS.length > 0) {
    const x3 = corpusConfig(3);
    row('x3 corpus', await fleetRun(x3.file, most, join(work, `store-x3-${most}`)), x3.count);
  }
  if (JOBS.length > 0) {
    process.stdout.write(`(re-grade: every server again at --jobs ${most} on that setting's store, longest first by the durations it holds)\n`);
    process.stdout.write(`(x3 corpus: a first run of the corpus three times over at --jobs ${most} on a fresh store, in the order given, each copy compared with the reference)\n`);
    // The most this machine could do if every core were busy all the time with audits alone.
    process.stdout.write(`CPU time: at least ${cpuPerServer.toFixed(1)} CPU-s per server (all processes, servers and sandboxes included), so ${cores} cores busy all the time grade at most ${((cores * 3600) / cpuPerServer).toFixed(0)} servers/hour\n`);
    process.stdout.write(`best: ${best.toFixed(0)} servers/hour (target ≥ 1000: ${best >= 1000 ? 'ok' : 'under'}); at that rate 10,000 servers in an hour need ${Math.ceil(10_000 / best)} machines like this one\n`);
  }
  const fetch = await fetchCost();
  const extra = (ms) => `${(ms - fetch.bare).toFixed(0)} ms`;
  process.stdout.write(`fetch phase per server (an npm package from a loopback registry, medians of 3): the audit by package takes ${fetch.cold.toFixed(0)} ms cold and ${fetch.warm.toFixed(0)} ms warm, by command ${fetch.bare.toFixed(0)} ms: the fetch adds ${extra(fetch.cold)} cold and ${extra(fetch.warm)} warm\n`);
}

main().catch((err) => {
  process.stderr.write(`bench-fleet: ${err.stack ?? err}\n`);
  process.exitCode = 1;
});
