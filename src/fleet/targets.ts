/**
 * Targets → jobs for `sealmark fleet run` (SPEC section 10): server.json files, folders of them
 * (recursive, `*.json`), saved pages of the registry's `GET /v0.1/servers` list, client
 * configurations (`mcpServers`/`servers` JSON) and text files of launch lines. Each (server,
 * version, package index or remote index) is one job with a deterministic id; each job carries a
 * {@link JobSpec}, what the runner hands to `sealmark audit` to start it.
 *
 * Errors: a file that cannot be read or is not one of the shapes above is a UsageError naming the
 * file (exit 2), never a crash. Nothing here starts or fetches anything.
 */
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { readClientConfig } from '../client-config.js';
import { parseServerJson, planServerJson, readTextFile, type ServerJson } from '../target/server-json.js';
import { recognizeLauncher, type Ecosystem, type PackageRef } from '../target/launch.js';
import type { FleetJob, FleetTarget } from './types.js';

/**
 * How the runner starts one job's audit. `fetch`: the registry type whose fetch limit
 * (`--fetch-rate`) the job spends from before it starts, null when it fetches nothing (a remote, a
 * plain command, an entry that cannot start). `remote`: the job reaches a server someone else
 * hosts, whose tools are called only with `--call-remotes`. `package`: the package it starts, when
 * known at planning (an exact version already installed spends no fetch token).
 *  - `server-json`: `file` is the server.json to give `--server-json`, or null when the document
 *    was one item of a list page (`doc` is then written to a temp file); `index` picks the entry.
 *  - `client-config`: `--client-config file --server name`.
 *  - `command`: `-- argv…` (a launch line), or `url` for a line that is an http(s) URL.
 */
export type JobSpec = { fetch: Ecosystem | null; remote: boolean; package?: PackageRef } & (
  | { via: 'server-json'; file: string | null; doc: unknown; index: { package: number } | { remote: number } }
  | { via: 'client-config'; file: string; server: string }
  | { via: 'command'; argv: string[] }
  | { via: 'url'; url: string }
);

/** A job and how to run it. */
export interface PlannedJob {
  job: FleetJob;
  spec: JobSpec;
}

/** The `_meta` key of the official registry's own metadata on a list item. */
const OFFICIAL = 'io.modelcontextprotocol.registry/official';

/**
 * The job id of (server, version, entry, label): `j` + the first 24 hex digits of a sha256. Safe
 * as a BullMQ jobId (no `:`, never all digits) and as a file name.
 */
export function jobId(server: string, version: string | null, target: Pick<FleetTarget, 'entry' | 'label'>): string {
  const h = createHash('sha256').update(JSON.stringify([server, version, target.entry, target.label])).digest('hex');
  return `j${h.slice(0, 24)}`;
}

/**
 * Reads every target path (files or folders) into jobs, in the order given (folders sorted by
 * path), each identity once (the first file that names it wins). Throws UsageError naming the
 * file for anything unreadable or of an unknown shape, and when no path gives any job.
 */
export function readTargets(paths: readonly string[]): PlannedJob[] {
  const out = new Map<string, PlannedJob>();
  for (const p of paths) {
    const abs = resolve(p);
    let isDir: boolean;
    try {
      isDir = statSync(abs).isDirectory();
    } catch (err) {
      throw new UsageError(`${abs}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    const files = isDir ? jsonFilesUnder(abs) : [abs];
    for (const f of files) for (const j of readTargetFile(f, isDir)) if (!out.has(j.job.id)) out.set(j.job.id, j);
  }
  if (out.size === 0) throw new UsageError(`no jobs in ${paths.join(', ')}: expected server.json files, registry list pages, client configs or launch lines`);
  return [...out.values()];
}

/** Every `*.json` file under `dir`, recursively, sorted by path (dot-folders and node_modules skipped). */
function jsonFilesUnder(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.name.startsWith('.') || e.name === 'node_modules') continue;
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && e.name.endsWith('.json')) found.push(p);
    }
  };
  walk(dir);
  return found;
}

/** One file: JSON (server.json, list item, list page, client config) or, otherwise, launch lines. */
function readTargetFile(file: string, inFolder: boolean): PlannedJob[] {
  const text = readTextFile(file);
  const looksJson = extname(file) === '.json' || /^\s*[{[]/.test(text);
  if (!looksJson) return launchLines(file, text);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    // A client config may hold comments and trailing commas (VS Code's): its reader allows them.
    if (!inFolder && /"(mcpServers|servers)"\s*:/.test(text)) return clientConfigJobs(file);
    throw new UsageError(`${file}: not JSON (${(err as Error).message})`);
  }
  if (!isObject(raw)) throw new UsageError(`${file}: expected a server.json, a registry list page or a client config (got ${Array.isArray(raw) ? 'an array' : typeof raw})`);
  if (Array.isArray(raw.servers)) return listPage(file, raw.servers);
  if ('name' in raw || isObject(raw.server)) {
    const doc = parseServerJson(raw, file);
    if (deleted(raw)) return [];
    return serverJsonJobs(file, doc, 'name' in raw ? null : raw);
  }
  if (isObject(raw.mcpServers) || isObject(raw.servers) || isObject(raw.mcp)) return clientConfigJobs(file);
  throw new UsageError(`${file}: not a server.json (no name), a registry list page (no servers array) or a client config (no mcpServers or servers)`);
}

/** True for a list item whose registry status is `deleted` (skipped: nothing to grade). */
function deleted(item: Record<string, unknown>): boolean {
  const meta = item._meta;
  const o = isObject(meta) ? meta[OFFICIAL] : undefined;
  return isObject(o) && o.status === 'deleted';
}

/** A saved page of `GET /v0.1/servers`: `{servers: [{server, _meta}], metadata}`. */
function listPage(file: string, items: unknown[]): PlannedJob[] {
  const out: PlannedJob[] = [];
  items.forEach((item, i) => {
    const label = `${file}: servers[${i}]`;
    if (!isObject(item)) throw new UsageError(`${label}: expected an object {server, _meta}`);
    const doc = parseServerJson(item, label);
    if (!deleted(item)) out.push(...serverJsonJobs(file, doc, item));
  });
  return out;
}

/**
 * One job per package and per remote of a server.json. `item`: the list item the document came
 * from (written to a temp file for the audit), or null for a server.json file given as is.
 */
function serverJsonJobs(file: string, doc: ServerJson, item: Record<string, unknown> | null): PlannedJob[] {
  const jobs: PlannedJob[] = [];
  const make = (target: FleetTarget, spec: JobSpec) => {
    const job: FleetJob = { id: jobId(doc.name, doc.version ?? null, target), server: doc.name, version: doc.version ?? null, target, source: file };
    jobs.push({ job, spec });
  };
  doc.packages.forEach((p, i) => {
    const version = p.version ? (p.registryType === 'pypi' ? `==${p.version}` : `@${p.version}`) : '';
    const target: FleetTarget = { kind: 'package', entry: `packages[${i}]`, label: `${p.registryType} ${p.identifier}${version}` };
    make(target, { via: 'server-json', file: item ? null : file, doc: item ?? undefined, index: { package: i }, ...fetchOf(doc, i), remote: false });
  });
  doc.remotes.forEach((r, i) => {
    const target: FleetTarget = { kind: 'remote', entry: `remotes[${i}]`, label: r.url };
    make(target, { via: 'server-json', file: item ? null : file, doc: item ?? undefined, index: { remote: i }, fetch: null, remote: true });
  });
  return jobs;
}

/**
 * The registry a package entry would fetch from, or null when the plan says it will not start
 * (`needs-config`, `not-runnable`: the audit says so before any fetch, so it spends no fetch).
 */
/** The registry type a server.json package entry fetches from, and its package, for {@link JobSpec}. */
function fetchOf(doc: ServerJson, index: number): { fetch: Ecosystem | null; package?: PackageRef } {
  try {
    const plan = planServerJson(doc, { packageIndex: index, given: {}, canary: () => 'x' });
    return plan.kind === 'package' ? { fetch: plan.package.ecosystem, package: plan.package } : { fetch: null };
  } catch {
    return { fetch: null };
  }
}

/** The entries of a client configuration (disabled ones skipped; invalid ones kept: their audit names the problem). */
function clientConfigJobs(file: string): PlannedJob[] {
  const config = readClientConfig(file);
  const out: PlannedJob[] = [];
  for (const s of config.servers) {
    if (s.kind === 'disabled') continue;
    const label = s.kind === 'stdio' ? [s.command, ...s.args].join(' ') : s.kind === 'http' ? s.url : s.label;
    const launch = s.kind === 'stdio' ? recognizeLauncher(s.command, s.args) : undefined;
    const version = exactVersion(launch?.package.version);
    const target: FleetTarget = { kind: 'client-config', entry: s.name, label };
    const job: FleetJob = { id: jobId(s.name, version, target), server: s.name, version, target, source: file };
    out.push({ job, spec: { via: 'client-config', file, server: s.name, fetch: launch?.package.ecosystem ?? null, remote: s.kind === 'http', ...(launch ? { package: launch.package } : {}) } });
  }
  return out;
}

/** A text file of launch lines: one command line (or http(s) URL) a line; `#` starts a comment, blank lines are skipped. */
function launchLines(file: string, text: string): PlannedJob[] {
  const out: PlannedJob[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const where = `${file}:${i + 1}`;
    const argv = splitWords(trimmed, where);
    const target: FleetTarget = { kind: 'launch-line', entry: `line ${i + 1}`, label: trimmed };
    if (argv.length === 1 && /^https?:\/\//.test(argv[0]!)) {
      const job: FleetJob = { id: jobId(trimmed, null, target), server: trimmed, version: null, target, source: file };
      out.push({ job, spec: { via: 'url', url: argv[0]!, fetch: null, remote: true } });
      return;
    }
    const launch = recognizeLauncher(argv[0]!, argv.slice(1));
    const version = exactVersion(launch?.package.version);
    const server = launch ? launch.package.name : trimmed;
    const job: FleetJob = { id: jobId(server, version, target), server, version, target, source: file };
    out.push({ job, spec: { via: 'command', argv, fetch: launch?.package.ecosystem ?? null, remote: false, ...(launch ? { package: launch.package } : {}) } });
  });
  return out;
}

/** A version that names one release (`1.2.3`, `1.2.3-rc.1`), else null (a range, a tag, none). */
function exactVersion(v: string | undefined): string | null {
  return v !== undefined && /^v?\d+(\.\d+)*([-+][\w.-]+)?$/.test(v) ? v : null;
}

/**
 * Splits a command line into words as a POSIX shell would for plain words and quotes ('…', "…",
 * backslash escapes); no expansion of any kind. Throws UsageError naming `where` for an unclosed quote.
 */
export function splitWords(line: string, where: string): string[] {
  const words: string[] = [];
  let cur = '';
  let has = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new UsageError(`${where}: unclosed ' quote`);
      cur += line.slice(i + 1, end);
      has = true;
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && j + 1 < line.length && '"\\$`'.includes(line[j + 1]!)) j++;
        cur += line[j];
      }
      if (j >= line.length) throw new UsageError(`${where}: unclosed " quote`);
      has = true;
      i = j;
    } else if (c === '\\' && i + 1 < line.length) {
      cur += line[++i];
      has = true;
    } else if (/\s/.test(c)) {
      if (has) words.push(cur);
      cur = '';
      has = false;
    } else {
      cur += c;
      has = true;
    }
  }
  if (has) words.push(cur);
  return words;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
