/**
 * The real-server figures of `npm run bench` (issue 15): the full default audit of pinned published
 * servers (from test/corpus/servers.json, installed as devDependencies), each in a child process,
 * with, per server:
 *
 *  - wall: the audit's wall time, ms;
 *  - busy: the union of the intervals during which some request was in flight (from the
 *    transcript's `ms`: a request's interval runs from its send to its reply, or to its
 *    `notifications/cancelled` when sealmark stopped waiting), ms;
 *  - serial waits: the sum of those intervals, ms;
 *  - wall / busy (target ≤ 1.2: sealmark adds little of its own) and wall / serial waits
 *    (target ≤ 0.5: waits overlap);
 *  - a bare JSON-RPC client (spawn, readline, no SDK, no sandbox) sending the same messages in the
 *    same order, each request awaited for its reply or for as long as sealmark waited, ms;
 *  - CPU seconds of sealmark and of the server processes (GNU time's user+system of the child tree
 *    minus sealmark's own), and peak RSS of sealmark and of the largest process of the tree, MB.
 *
 * Figures only: nothing here is asserted (a budget report, not a gate).
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
/** The pinned servers measured: the corpus ids (the last is the largest real server of the corpus, 28 tools). */
export const BENCH_SERVERS = ['everything-new', 'fs-new', 'memory-new', 'git-mcp'];

/** The corpus entry of `id`, with `{dir}` replaced by `dir`: { command, args, env }. */
function launch(id, dir) {
  const corpus = JSON.parse(readFileSync(join(root, 'test/corpus/servers.json'), 'utf8'));
  const s = corpus.servers.find((x) => x.id === id);
  if (!s) throw new Error(`bench: ${id} is not in test/corpus/servers.json`);
  const fill = (v) => v.replaceAll('{dir}', dir);
  return { command: process.execPath, args: [join(root, 'node_modules', s.bin), ...s.args.map(fill)], env: Object.fromEntries(Object.entries(s.env).map(([k, v]) => [k, fill(v)])) };
}

/**
 * Runs the full default audit of `target` in a child process under GNU time, writing the
 * transcript to `transcript`; `instances` is passed as `--instances` is (undefined: the default).
 * Resolves to the child's own figures and the tree's.
 */
function auditChild(target, transcript, cwd, instances) {
  const script = [
    `import { audit } from ${JSON.stringify(`${root}dist/audit.js`)};`,
    `import { configRegistry } from ${JSON.stringify(`${root}dist/config/defaults.js`)};`,
    `import { parseConfig } from ${JSON.stringify(`${root}dist/config/schema.js`)};`,
    `const t0 = performance.now();`,
    `const r = await audit({ command: ${JSON.stringify(target.command)}, args: ${JSON.stringify(target.args)}, env: ${JSON.stringify(target.env)}, config: parseConfig({}, configRegistry()), transcriptPath: ${JSON.stringify(transcript)}, cwd: ${JSON.stringify(cwd)}${instances !== undefined ? `, instances: ${instances}` : ''} });`,
    `const used = new Set(r.calls.map((c) => c.instance ?? 0)).size;`,
    `const wallMs = performance.now() - t0;`,
    `const u = process.resourceUsage();`,
    `process.stdout.write(JSON.stringify({ status: r.status, grade: r.grade?.letter, calls: r.calls.length, instances: used, verdicts: r.checks.map((c) => c.id + ' ' + c.verdict + ' ' + c.findings.map((f) => f.fingerprint).sort().join(',')), wallMs, cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, maxRssKb: u.maxRSS }));`,
  ].join('\n');
  const args = ['--input-type=module', '-e', script];
  const timed = existsSync('/usr/bin/time');
  const r = timed ? spawnSync('/usr/bin/time', ['-v', process.execPath, ...args], { encoding: 'utf8', cwd }) : spawnSync(process.execPath, args, { encoding: 'utf8', cwd });
  if (r.status !== 0) throw new Error(`bench: the audit child exited ${r.status}: ${r.stderr.slice(-2000)}`);
  const own = JSON.parse(r.stdout);
  const num = (re) => {
    const m = re.exec(r.stderr ?? '');
    return m ? Number(m[1]) : undefined;
  };
  const user = num(/User time \(seconds\): ([\d.]+)/);
  const sys = num(/System time \(seconds\): ([\d.]+)/);
  return { ...own, treeCpuMs: user !== undefined && sys !== undefined ? (user + sys) * 1000 : undefined, treeMaxRssKb: num(/Maximum resident set size \(kbytes\): (\d+)/) };
}

/**
 * The transcript as sessions (each instance's lines apart, `instance` absent for the first; a
 * restart begins a new session at its `initialize`), each a list of { ms, dir, message }, and the
 * request intervals of the whole run: [start, end] ms. Times are the lines' `t`, as ms from the
 * first line, so that the instances' sessions share one clock.
 */
export function readTranscript(path) {
  const rows = readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const t0 = rows.length ? Date.parse(rows[0].t) : 0;
  const sessions = [];
  const current = new Map();
  for (const r of rows) {
    const row = { ...r, ms: Date.parse(r.t) - t0 };
    const k = r.instance ?? 0;
    if (!current.has(k) || (r.dir === 'send' && r.message?.method === 'initialize' && current.get(k).some((x) => x.dir === 'send' && x.message?.method === 'initialize'))) {
      current.set(k, []);
      sessions.push(current.get(k));
    }
    current.get(k).push(row);
  }
  const intervals = [];
  const end = rows.length ? Date.parse(rows[rows.length - 1].t) - t0 : 0;
  for (const s of sessions) {
    const open = new Map();
    for (const r of s) {
      const m = r.message ?? {};
      if (r.dir === 'send' && m.id !== undefined && m.method !== undefined) open.set(JSON.stringify(m.id), r.ms);
      else if (r.dir === 'send' && m.method === 'notifications/cancelled') {
        const k = JSON.stringify(m.params?.requestId);
        if (open.has(k)) {
          intervals.push([open.get(k), r.ms]);
          open.delete(k);
        }
      } else if (r.dir === 'recv' && m.id !== undefined && m.method === undefined) {
        const k = JSON.stringify(m.id);
        if (open.has(k)) {
          intervals.push([open.get(k), r.ms]);
          open.delete(k);
        }
      }
    }
    // Never answered nor cancelled (the session ended first): in flight to the end of the session.
    const last = s.length ? s[s.length - 1].ms : end;
    for (const start of open.values()) intervals.push([start, last]);
  }
  return { sessions, intervals };
}

/** The union of `intervals` ([start, end] ms), ms. */
export function unionMs(intervals) {
  const xs = [...intervals].sort((a, b) => a[0] - b[0]);
  let total = 0;
  let cur;
  for (const [a, b] of xs) {
    if (!cur || a > cur[1]) {
      if (cur) total += cur[1] - cur[0];
      cur = [a, b];
    } else cur[1] = Math.max(cur[1], b);
  }
  if (cur) total += cur[1] - cur[0];
  return total;
}

/**
 * The bare client: for each session of the transcript, starts the server as given (no sandbox, in
 * `cwd`), sends the same messages in order, and awaits each request's reply, or as long as sealmark
 * waited for one it never got. Resolves to the wall time, ms.
 */
async function bareClient(target, sessions, cwd) {
  const t0 = performance.now();
  for (const s of sessions) {
    const child = spawn(target.command, target.args, { cwd, env: { ...process.env, ...target.env }, stdio: ['pipe', 'pipe', 'ignore'] });
    // A server that exits on a message (rmcp on array params) closes the pipe under the next write.
    child.stdin.on('error', () => {});
    const waiting = new Map();
    let onExit = () => {};
    child.once('exit', () => onExit());
    createInterface({ input: child.stdout }).on('line', (line) => {
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        return;
      }
      const done = waiting.get(JSON.stringify(msg?.id));
      if (done) done();
    });
    const sent = s.filter((r) => r.dir === 'send');
    // How long sealmark waited for each request id of this session (to its reply, or its cancel).
    const waited = new Map();
    for (const r of s) {
      const m = r.message ?? {};
      if (r.dir === 'send' && m.id !== undefined && m.method !== undefined) waited.set(JSON.stringify(m.id), -r.ms);
      else if ((r.dir === 'recv' && m.id !== undefined && m.method === undefined) || (r.dir === 'send' && m.method === 'notifications/cancelled')) {
        const k = JSON.stringify(m.id ?? m.params?.requestId);
        if ((waited.get(k) ?? 0) < 0) waited.set(k, waited.get(k) + r.ms);
      }
    }
    for (const r of sent) {
      const m = r.message;
      if (child.exitCode !== null || child.stdin.destroyed) break;
      child.stdin.write(JSON.stringify(m) + '\n');
      if (m.id === undefined || m.method === undefined) continue;
      const k = JSON.stringify(m.id);
      const limit = Math.max(0, waited.get(k) ?? 0) + 50;
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, limit);
        waiting.set(k, () => {
          clearTimeout(timer);
          waiting.delete(k);
          resolve();
        });
        onExit = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    child.stdin.end();
    if (child.exitCode === null) {
      const t = setTimeout(() => child.kill('SIGKILL'), 2000);
      await once(child, 'exit');
      clearTimeout(t);
    }
  }
  return performance.now() - t0;
}

/**
 * Measures one pinned server; resolves to its row of figures. `instances`: as `--instances`
 * (undefined: the default).
 */
export async function benchServer(id, instances) {
  const dir = mkdtempSync(join(tmpdir(), 'sealmark-bench-'));
  try {
    const data = join(dir, 'data');
    spawnSync('mkdir', ['-p', data]);
    const target = launch(id, data);
    const transcript = join(dir, 'transcript.jsonl');
    const run = auditChild(target, transcript, dir, instances);
    const { sessions, intervals } = readTranscript(transcript);
    const busy = unionMs(intervals);
    const serial = intervals.reduce((n, [a, b]) => n + (b - a), 0);
    // The bare client runs against a fresh data folder, as the audit's sandbox gave the server.
    const bareData = join(dir, 'bare');
    spawnSync('mkdir', ['-p', bareData]);
    const bare = await bareClient(launch(id, bareData), sessions, dir);
    return { id, ...run, busy, serial, bare, requests: intervals.length };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
