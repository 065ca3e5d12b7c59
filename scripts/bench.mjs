#!/usr/bin/env node
/**
 * Performance budget of sealmark (run with `npm run bench`, which builds dist first). Prints:
 *
 *  (a) overhead: wall time of a robust-input-only audit (the library, as `--only robust-input`,
 *      without the sandbox; the same audit in the sandbox is printed beside it)
 *      of test/fixtures/servers/many-tools.mjs (25 tools, zero latency) next to a minimal
 *      hand-written JSON-RPC client (child_process + readline, no SDK) that sends the same
 *      requests — initialize + notifications/initialized, then every `report.calls[].request` in
 *      order, each awaited. Target: ratio ≤ 1.5.
 *  (b) cold start of `sealmark --version` and `sealmark explain robust-input`, median of 5, ms.
 *      Target: ≤ 250 ms.
 *  (c) peak memory (max RSS) of the same audit run in a child process, MB. Target: ≤ 150 MB.
 *  (d) the full default audit of pinned real servers (scripts/bench-real.mjs): wall, busy, serial
 *      waits and their ratios (targets wall/busy ≤ 1.2, wall/serial ≤ 0.5), a bare client sending
 *      the same messages, CPU and peak memory of sealmark and of the server processes.
 *  (e) `sealmark lint` of 1,000 and 10,000 generated tools (target ≤ 2 s for 10,000, and linear).
 *  (f) peak memory of the audit of a 3,000-tool listing with a 1 MB name and 1 MB error replies
 *      (test/fixtures/servers/adversarial-reports/huge-listing.mjs). Target: ≤ 400 MB.
 *
 * Every time is wall time in ms (performance.now). Medians of RUNS runs after one warm-up.
 * Exit code 0 whatever the figures (a budget report, not a gate); 2 when a run itself failed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { audit } from '../dist/audit.js';
import { configRegistry } from '../dist/config/defaults.js';
import { parseConfig } from '../dist/config/schema.js';
import { mergeCliOverrides } from '../dist/config/load.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_SERVERS, benchServer } from './bench-real.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const FIXTURE = `${root}test/fixtures/servers/many-tools.mjs`;
const BIN = `${root}bin/sealmark.js`;
const RUNS = 5;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (x, d = 0) => x.toFixed(d);
/** user + system CPU of this process from a process.cpuUsage() delta, ms. */
const cpuMs = (u) => (u.user + u.system) / 1000;

/** The config `--only robust-input` gives: every other check disabled. */
function robustOnlyConfig() {
  const registry = configRegistry();
  return mergeCliOverrides(parseConfig({}, registry), { only: ['robust-input'] }, registry);
}

/**
 * One library audit of the fixture; resolves to { ms, report }. `sandbox: false` for the overhead
 * ratio (the raw client has no sandbox either); the sandbox's own start-up is measured apart.
 */
async function timedAudit(sandbox = false) {
  const config = robustOnlyConfig();
  const t0 = performance.now();
  const report = await audit({ command: process.execPath, args: [FIXTURE], config, sandbox });
  const ms = performance.now() - t0;
  if (report.status !== 'audited') throw new Error(`audit of many-tools did not complete: ${JSON.stringify(report.notAudited)}`);
  return { ms, report };
}

/**
 * The baseline: spawn the fixture, initialize, then send each request line as sealmark sent it and
 * wait for the reply with its id; close stdin and wait for the exit (as sealmark's close does).
 * Resolves to the wall time in ms.
 */
async function rawClient(requests) {
  const t0 = performance.now();
  const child = spawn(process.execPath, [FIXTURE], { stdio: ['pipe', 'pipe', 'ignore'] });
  child.stdin.on('error', () => {});
  const waiting = new Map();
  createInterface({ input: child.stdout }).on('line', (line) => {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    const done = waiting.get(msg?.id);
    if (done) {
      waiting.delete(msg.id);
      done(msg);
    }
  });
  const ask = (line, id) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`raw client: no reply to ${line.slice(0, 120)}`)), 10_000);
      waiting.set(id, (msg) => {
        clearTimeout(timer);
        resolve(msg);
      });
      child.stdin.write(line + '\n');
    });
  const init = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench-raw', version: '0' } },
  };
  const reply = await ask(JSON.stringify(init), 0);
  if (!reply.result) throw new Error(`raw client: initialize failed: ${JSON.stringify(reply)}`);
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  for (const line of requests) await ask(line, JSON.parse(line).id);
  child.stdin.end();
  if (child.exitCode === null) await once(child, 'exit');
  return performance.now() - t0;
}

/** Wall time of one `node <args>` to completion, ms. */
function timeNode(args) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/** Wall time of one `node <args>` to completion whatever its exit code, ms (lint exits 1 on findings). */
function timeNodeAny(args) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0 && r.status !== 1) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/**
 * Runs the same audit in a child process and returns its peak memory in MB: from GNU
 * `/usr/bin/time -v` (max RSS of the child and the processes it waited for, i.e. the server too)
 * when available, and always the child's own `process.resourceUsage().maxRSS`.
 */
function peakMemory() {
  return peakMemoryOf(FIXTURE, { only: ['robust-input'] });
}

/** Peak memory (MB) of the audit of the fixture server `file` with CLI overrides `overrides`, run in a child process. */
function peakMemoryOf(file, overrides) {
  const script = [
    `import { audit } from ${JSON.stringify(`${root}dist/audit.js`)};`,
    `import { configRegistry } from ${JSON.stringify(`${root}dist/config/defaults.js`)};`,
    `import { parseConfig } from ${JSON.stringify(`${root}dist/config/schema.js`)};`,
    `import { mergeCliOverrides } from ${JSON.stringify(`${root}dist/config/load.js`)};`,
    `const reg = configRegistry();`,
    `const config = mergeCliOverrides(parseConfig({}, reg), ${JSON.stringify(overrides)}, reg);`,
    `const r = await audit({ command: process.execPath, args: [${JSON.stringify(file)}], config });`,
    `if (r.status !== 'audited') process.exit(2);`,
    `process.stdout.write(JSON.stringify({ maxRssKb: process.resourceUsage().maxRSS, calls: r.calls.length }));`,
  ].join('\n');
  const nodeArgs = ['--input-type=module', '-e', script];
  const useTime = existsSync('/usr/bin/time');
  const r = useTime
    ? spawnSync('/usr/bin/time', ['-v', process.execPath, ...nodeArgs], { encoding: 'utf8' })
    : spawnSync(process.execPath, nodeArgs, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`memory run exited ${r.status}: ${r.stderr}`);
  const own = JSON.parse(r.stdout);
  const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr ?? '');
  return {
    timeMb: useTime && m ? Number(m[1]) / 1024 : undefined,
    ownMb: own.maxRssKb / 1024,
  };
}

async function main() {
  const loadBefore = loadavg()[0];
  // (a) audit vs raw client, interleaved so that machine noise hits both alike.
  const warm = await timedAudit();
  const requests = warm.report.calls.map((c) => c.request);
  const cut = requests.filter((r) => r.endsWith('…'));
  if (cut.length > 0) throw new Error(`${cut.length} request lines were truncated in the report; cannot replay them`);
  await rawClient(requests);
  const auditMs = [];
  const rawMs = [];
  const auditCpu = [];
  const rawCpu = [];
  for (let i = 0; i < RUNS; i++) {
    let c = process.cpuUsage();
    auditMs.push((await timedAudit()).ms);
    auditCpu.push(cpuMs(process.cpuUsage(c)));
    c = process.cpuUsage();
    rawMs.push(await rawClient(requests));
    rawCpu.push(cpuMs(process.cpuUsage(c)));
  }
  const a = median(auditMs);
  const b = median(rawMs);
  const ratio = a / b;
  const sandboxed = [];
  for (let i = 0; i < RUNS; i++) sandboxed.push((await timedAudit(true)).ms);
  const s = median(sandboxed);

  // (b) cold starts (the first spawn warms the file cache and is not counted).
  timeNode(['-e', '0']);
  const nodeBare = median(Array.from({ length: RUNS }, () => timeNode(['-e', '0'])));
  timeNode([BIN, '--version']);
  const version = median(Array.from({ length: RUNS }, () => timeNode([BIN, '--version'])));
  const explain = median(Array.from({ length: RUNS }, () => timeNode([BIN, 'explain', 'robust-input'])));

  // (c) peak memory.
  const mem = peakMemory();
  const memMb = mem.timeMb ?? mem.ownMb;

  // (d) the real servers, one at a time.
  const real = [];
  // Each with the default instances and with --instances 1, and whether the verdicts agree.
  for (const id of BENCH_SERVERS) {
    const many = await benchServer(id);
    const one = await benchServer(id, 1);
    process.stderr.write(`bench: ${id}: wall ${fmt(many.wallMs)} ms (${many.instances} instances), ${fmt(one.wallMs)} ms with --instances 1\n`);
    real.push({ ...many, label: `${id} (${many.instances} instance${many.instances === 1 ? '' : 's'})`, same: JSON.stringify(many.verdicts) === JSON.stringify(one.verdicts) });
    real.push({ ...one, label: `${id} --instances 1` });
  }

  // (e) lint of generated tools.
  const lintDir = mkdtempSync(join(tmpdir(), 'sealmark-bench-lint-'));
  const lintMs = {};
  try {
    for (const n of [1000, 10000]) {
      const file = join(lintDir, `tools-${n}.json`);
      const tools = Array.from({ length: n }, (_, i) => ({ name: `get_item_${i}`, description: `Reads item ${i}.`, inputSchema: { type: 'object', properties: { id: { type: 'string' }, limit: { type: 'integer' } }, required: ['id'] } }));
      writeFileSync(file, JSON.stringify({ tools }));
      // lint exits 1 when it finds something; the time is what counts here.
      timeNodeAny([BIN, 'lint', file, '--format', 'json', '--output', join(lintDir, 'out.json')]);
      lintMs[n] = median(Array.from({ length: 3 }, () => timeNodeAny([BIN, 'lint', file, '--format', 'json', '--output', join(lintDir, 'out.json')])));
    }
  } finally {
    rmSync(lintDir, { recursive: true, force: true });
  }

  // (f) the 3,000-tool listing's peak memory.
  const huge = peakMemoryOf(`${root}test/fixtures/servers/adversarial-reports/huge-listing.mjs`, {});
  const hugeMb = huge.timeMb ?? huge.ownMb;

  const rows = [
    ['audit --only robust-input, many-tools (median ms)', fmt(a), '', ''],
    ['raw JSON-RPC client, same requests (median ms)', fmt(b), '', ''],
    ['overhead ratio audit / raw', fmt(ratio, 2), '≤ 1.5', ratio <= 1.5 ? 'ok' : 'over'],
    ['the same audit in the sandbox (median ms)', fmt(s), '', ''],
    ['cold start: sealmark --version (median ms)', fmt(version), '≤ 250', version <= 250 ? 'ok' : 'over'],
    ['cold start: sealmark explain robust-input (median ms)', fmt(explain), '≤ 250', explain <= 250 ? 'ok' : 'over'],
    [`peak memory of the audit, max RSS (MB${mem.timeMb !== undefined ? ', /usr/bin/time -v' : ', resourceUsage'})`, fmt(memMb, 1), '≤ 150', memMb <= 150 ? 'ok' : 'over'],
    ['lint of 1,000 tools (median ms)', fmt(lintMs[1000]), '', ''],
    ['lint of 10,000 tools (median ms)', fmt(lintMs[10000]), '≤ 2000', lintMs[10000] <= 2000 ? 'ok' : 'over'],
    ['lint 10,000 / 1,000 (10 when linear)', fmt(lintMs[10000] / lintMs[1000], 1), '≈ 10', lintMs[10000] / lintMs[1000] <= 12 ? 'ok' : 'over'],
    ['3,000-tool listing with 1 MB name and replies: peak RSS (MB)', fmt(hugeMb, 1), '≤ 400', hugeMb <= 400 ? 'ok' : 'over'],
  ];
  const realRows = real.flatMap((r) => [
    [`${r.label}: full default audit, wall (ms; ${r.calls} calls, grade ${r.grade ?? '-'})`, fmt(r.wallMs), '', ''],
    ...(r.same !== undefined ? [[`${r.label}: verdicts and fingerprints as with --instances 1`, r.same ? 'same' : 'differ', 'same', r.same ? 'ok' : 'over']] : []),
    [`${r.label}: busy, some request in flight (ms)`, fmt(r.busy), '', ''],
    [`${r.label}: serial waits, sum of request→reply (ms)`, fmt(r.serial), '', ''],
    [`${r.label}: wall / busy`, fmt(r.wallMs / r.busy, 2), '≤ 1.2', r.wallMs / r.busy <= 1.2 ? 'ok' : 'over'],
    [`${r.label}: wall / serial waits`, fmt(r.wallMs / r.serial, 2), '≤ 0.5', r.wallMs / r.serial <= 0.5 ? 'ok' : 'over'],
    [`${r.label}: bare client, same messages in order (ms)`, fmt(r.bare), '', ''],
    [`${r.label}: CPU s sealmark / servers`, `${fmt(r.cpuMs / 1000, 1)} / ${r.treeCpuMs !== undefined ? fmt((r.treeCpuMs - r.cpuMs) / 1000, 1) : '?'}`, '', ''],
    [`${r.label}: peak RSS MB sealmark / largest process`, `${fmt(r.maxRssKb / 1024)} / ${r.treeMaxRssKb !== undefined ? fmt(r.treeMaxRssKb / 1024) : '?'}`, '', ''],
  ]);
  rows.push(...realRows);
  const w = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i].length), ['figure', 'value', 'target', ''][i].length));
  const line = (r) => `${r[0].padEnd(w[0])}  ${r[1].padStart(w[1])}  ${r[2].padEnd(w[2])}  ${r[3]}`.trimEnd();
  const out = [
    `sealmark bench · node ${process.version} · ${requests.length} requests + initialize · ${RUNS} runs after a warm-up`,
    '',
    line(['figure', 'value', 'target', '']),
    line(['-'.repeat(w[0]), '-'.repeat(w[1]), '-'.repeat(w[2]), '----']),
    ...rows.map(line),
    '',
    `context: bare \`node -e 0\` start ${fmt(nodeBare)} ms; audit runs ${auditMs.map((x) => fmt(x)).join(', ')} ms; raw runs ${rawMs.map((x) => fmt(x)).join(', ')} ms;`,
    `         CPU of this process per run (median): audit ${fmt(median(auditCpu))} ms, raw client ${fmt(median(rawCpu))} ms (the server's CPU not included);`,
    `         the audit child's own max RSS ${fmt(mem.ownMb, 1)} MB (process.resourceUsage().maxRSS).`,
    `machine: ${availableParallelism()} CPUs, 1-min load average ${fmt(loadBefore, 2)} before and ${fmt(loadavg()[0], 2)} after;` +
      ' figures from a loaded machine (load above the CPU count) are not comparable.',
  ];
  process.stdout.write(out.join('\n') + '\n');
}

main().catch((err) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 2;
});
