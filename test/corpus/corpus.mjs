/**
 * The real-server corpus (issue 13): audits the published servers of test/corpus/servers.json and
 * turns each report into one stable line per check, as docs/real-servers.md shows them. Shared by
 * scripts/real-servers.mjs (writes the doc, built dist/) and test/e2e/corpus.test.ts (asserts the
 * doc, src/), so both derive verdicts and reasons the same way. Plain ESM so the script needs no build.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is test/corpus/corpus.mjs). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MANIFEST = join(ROOT, 'test', 'corpus', 'servers.json');
export const DOC = join(ROOT, 'docs', 'real-servers.md');
/** Set in every corpus server's environment (and so its children's): how its processes are found. */
export const MARKER_VAR = 'SEALMARK_CORPUS_MARKER';
/** Longest reason kept in the doc, in characters (the rest becomes "…"). */
const MAX_REASON = 240;

/** The manifest's servers, in its order. */
export function loadManifest() {
  return JSON.parse(readFileSync(MANIFEST, 'utf8')).servers;
}

/** `{dir}` in a manifest string is the server's data folder. */
const fill = (s, dir) => s.split('{dir}').join(dir);

/**
 * How a manifest entry is started: a `.js`/`.mjs`/`.cjs` bin with this node, any other bin
 * executed directly; `{dir}` in args and env replaced by `dir`.
 */
export function launchOf(server, dir) {
  const bin = join(ROOT, 'node_modules', server.bin);
  const args = server.args.map((a) => fill(a, dir));
  const env = Object.fromEntries(Object.entries(server.env ?? {}).map(([k, v]) => [k, fill(v, dir)]));
  return /\.[cm]?js$/.test(bin) ? { command: process.execPath, args: [bin, ...args], env } : { command: bin, args, env };
}

/** Processes (Linux /proc) whose environment carries `MARKER_VAR=marker`: `{pid, cmd}`. */
export function processesOf(marker) {
  if (process.platform !== 'linux') return [];
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${name}/environ`, 'latin1');
      if (!environ.includes(`${MARKER_VAR}=${marker}\0`)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '?';
      // A zombie is gone but for its exit status: its parent (sealmark) reaps it.
      if (state === 'Z') continue;
      out.push({ pid: Number(name), cmd: readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0').join(' ').trim(), cwd: safeCwd(name) });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

function safeCwd(pid) {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return '';
  }
}

/**
 * Audits one manifest entry with `audit` (the library's, from dist/ or src/) in a fresh temp
 * folder (`{dir}` is its `data` subfolder, also the server's cwd), with the default config.
 * Resolves to `{ id, report, rows, ms, marker, seen, leftover }`: `seen` the server processes noticed while
 * it ran, `leftover` those still alive after it returned (ended here, so a run leaves nothing).
 * The temp folder is removed.
 */
export async function auditServer(server, audit) {
  const home = realpathSync(mkdtempSync(join(tmpdir(), `sealmark-corpus-${server.id}-`)));
  madeTempDirs.add(home);
  const dir = join(home, 'data');
  mkdirSync(dir);
  const { command, args, env } = launchOf(server, dir);
  const seen = new Map();
  let lastLook = 0;
  const started = Date.now();
  try {
    const report = await audit({
      command,
      args,
      env: { ...env, [MARKER_VAR]: home },
      cwd: dir,
      config: {},
      onProgress: () => {
        if (Date.now() - lastLook < 1000) return;
        lastLook = Date.now();
        for (const p of processesOf(home)) seen.set(p.pid, p);
      },
    });
    const ms = Date.now() - started;
    let leftover = processesOf(home);
    for (let i = 0; i < 10 && leftover.length > 0; i += 1) {
      await new Promise((r) => setTimeout(r, 200));
      leftover = processesOf(home);
    }
    for (const p of leftover) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    return { id: server.id, report, rows: rowsOf(report, [home, dir]), ms, marker: home, seen: [...seen.values()], leftover };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/**
 * Audits `servers` with at most `concurrency` audits at once; resolves to the results in the
 * order of `servers`. `onDone(result)` is called as each finishes.
 */
export async function auditAll(servers, audit, { concurrency = 2, onDone } = {}) {
  const results = new Array(servers.length);
  let next = 0;
  const worker = async () => {
    while (next < servers.length) {
      const i = next++;
      results[i] = await auditServer(servers[i], audit);
      onDone?.(results[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, servers.length) }, worker));
  return results;
}

/**
 * Makes a finding's message or a note stable between runs: the run's temp paths become `{dir}`,
 * sealmark's scratch folders `{tmp}`, timings `N ms`, byte counts `N bytes`, and the text one line.
 */
export function normalise(text, paths = []) {
  let t = String(text);
  for (const p of [...paths].sort((a, b) => b.length - a.length)) t = t.split(p).join('{dir}');
  const tmp = tmpdir().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  t = t.replace(new RegExp(`${tmp}/sealmark-[^\\s"'\\\\/,)]+`, 'g'), '{tmp}');
  t = t.replace(/\b\d+(?:\.\d+)? ?ms\b/g, 'N ms');
  t = t.replace(/\b\d+ bytes\b/g, 'N bytes');
  t = t.replace(/\s+/g, ' ').trim();
  return t.length > MAX_REASON ? `${t.slice(0, MAX_REASON - 1)}…` : t;
}

/**
 * One check's line: for fail or partial the message of the first fail-level finding (else the
 * first partial-level one); for pass the coverage ("judged 25 of 59 tools") where the check states
 * it, else "no finding"; for n/a the first note.
 */
export function reasonOf(check, paths = []) {
  if (check.verdict === 'fail' || check.verdict === 'partial') {
    const live = (check.findings ?? []).filter((f) => !f.suppressed);
    const f = live.find((x) => x.level === 'fail') ?? live.find((x) => x.level === 'partial') ?? live[0];
    return f ? normalise(f.message, paths) : 'no finding';
  }
  if (check.verdict === 'pass') {
    if (check.coverage) {
      const judged = check.coverage.judged.length;
      return `judged ${judged} of ${judged + check.coverage.notJudged.length} tools`;
    }
    return 'no finding';
  }
  return check.notes?.[0] !== undefined ? normalise(check.notes[0], paths) : 'no note';
}

/** Every check of a report as `{check, verdict, reason}`, in the report's order. */
export function rowsOf(report, paths = []) {
  return report.checks.map((c) => ({ check: c.id, verdict: c.verdict, reason: reasonOf(c, paths) }));
}

/** The grade line of a report: "B 87.5% · hygiene-only", or the status when not audited. */
export function gradeOf(report) {
  const g = report.grade;
  if (!g || report.status !== 'audited') return report.status;
  const level = report.coverage?.level;
  return `${g.letter} ${g.percent}%${level ? ` · ${level}` : ''}`;
}

const cell = (s) => String(s).replace(/\\/g, '\\\\').replace(/\|/g, '\\|');
const uncell = (s) => s.replace(/\\([\\|])/g, '$1');

/**
 * docs/real-servers.md from the manifest and the results (in manifest order; a result may carry
 * `gradeText` instead of a report, kept from the doc). `date` is the YYYY-MM-DD the audits ran.
 */
export function renderDoc(servers, results, { date, sealmark }) {
  const byId = new Map(results.map((r) => [r.id, r]));
  const out = [];
  out.push('# sealmark on real servers');
  out.push('');
  out.push(
    `The real-server corpus: ${servers.length} published MCP servers, pinned as devDependencies in package.json and listed in ` +
      '[test/corpus/servers.json](../test/corpus/servers.json) with their stack and launch line. Each one is audited offline in ' +
      "sealmark's sandbox with the default config (dummy API keys where a server refuses to start without one; `{dir}` is a " +
      'fresh temp folder). Below is every check\'s verdict with a one-line reason taken from the report: for fail and partial ' +
      'the message of the first fail-level (else partial-level) finding, for pass the coverage where the check states it, ' +
      'for n/a the first note. Timings, byte counts and temp paths in a reason are normalised (`N ms`, `N bytes`, `{dir}`).',
  );
  out.push('');
  out.push(`Generated ${date} by ${sealmark}. [test/e2e/corpus.test.ts](../test/e2e/corpus.test.ts) runs the same audits and fails when any verdict or reason differs from this page.`);
  out.push('');
  out.push('Regenerate after a change to the checks (or check it without writing):');
  out.push('');
  out.push('```sh');
  out.push('npm run build && node scripts/real-servers.mjs');
  out.push('npm run build && node scripts/real-servers.mjs --check');
  out.push('```');
  out.push('');
  out.push('## Stacks');
  out.push('');
  out.push('| id | package | SDK | framework | validator | language | launch |');
  out.push('|---|---|---|---|---|---|---|');
  for (const s of servers) {
    const pkg = `${s.package}@${s.version}${s.alias ? ` (as ${s.alias})` : ''}`;
    const launch = [s.bin, ...s.args].join(' ');
    const env = Object.keys(s.env ?? {});
    out.push(
      `| ${s.id} | ${cell(pkg)} | ${cell(`${s.stack.sdk} ${s.stack.sdkVersion}`)} | ${cell(s.stack.framework)} | ${cell(s.stack.validator)} | ${cell(s.stack.language)} | ${cell(`\`${launch}\``)}${env.length ? cell(` (env ${env.join(', ')})`) : ''} |`,
    );
  }
  out.push('');
  out.push(
    'The corpus adds about 280 MB to `npm ci` (node_modules 273 MB without it, 553 MB with it; a third of that is mcp-omnisearch\'s ' +
      'octokit tree, the only tmcp and valibot server that starts offline). ' +
      'Not in the corpus, from the same survey of 29 servers: @modelcontextprotocol/server-memory@0.6.2 (it keeps its graph next to ' +
      'its own code, so an audit writes into node_modules and changes the next one); @upstash/context7-mcp (SDK v2), ' +
      'mcp-cron (go-sdk) and @onshape-mcp (rmcp 2.2) to keep the install small (40, 25 and 25 MB); @aptos-labs/aptos-mcp ' +
      '(FastMCP 1.x, starts only with an `overrides` pin of the SDK); @leanspec/mcp (its binary needs a chmod after install); ' +
      'kubernetes-mcp-server (needs a kubeconfig). The binary packages are linux-x64 builds: like @microsoft/sarif-multitool-linux, they install on Linux only.',
  );
  out.push('');
  out.push('## Verdicts');
  for (const s of servers) {
    const r = byId.get(s.id);
    out.push('');
    out.push(`### ${s.id}`);
    out.push('');
    out.push(`${s.package}@${s.version} · grade: ${r ? (r.gradeText ?? gradeOf(r.report)) : 'not run'}`);
    out.push('');
    out.push('| check | verdict | reason |');
    out.push('|---|---|---|');
    for (const row of r?.rows ?? []) out.push(`| ${row.check} | ${row.verdict} | ${cell(row.reason)} |`);
  }
  out.push('');
  return out.join('\n');
}

/**
 * Reads docs/real-servers.md back: `Map<id, {grade, rows: {check, verdict, reason}[]}>`.
 */
export function parseDoc(text) {
  const servers = new Map();
  let current;
  for (const line of text.split('\n')) {
    const head = /^### (\S+)$/.exec(line);
    if (head) {
      current = { grade: undefined, rows: [] };
      servers.set(head[1], current);
      continue;
    }
    if (!current) continue;
    const grade = / · grade: (.*)$/.exec(line);
    if (grade && !line.startsWith('|')) current.grade = grade[1];
    const row = /^\| ([a-z-]+) \| ([a-z/]+) \| (.*) \|$/.exec(line);
    if (row && row[1] !== 'check') current.rows.push({ check: row[1], verdict: row[2], reason: uncell(row[3]) });
  }
  return servers;
}

/** The temp folders auditServer made in this process (another run on the machine has its own). */
const madeTempDirs = new Set();

/**
 * The temp folders this process's auditServer calls made that still exist (for a test's last look):
 * an array of absolute paths, empty when every one was removed. Folders of other runs sharing /tmp
 * are not this run's to judge.
 */
export function leftoverTempDirs() {
  return [...madeTempDirs].filter((d) => existsSync(d));
}
