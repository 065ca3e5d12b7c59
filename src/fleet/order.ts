/**
 * Which record of a server is the latest, and in what order its history reads (SPEC section 10,
 * issue 16). Pure functions over {@link FleetRecord}s; the leaderboard (board.ts) uses them.
 *
 * Versions are compared semver-wise (`1.10.0` after `1.9.0`, `2.0.0-rc.1` before `2.0.0`) when
 * every version of the server reads as one; otherwise, and for a `null` version, by when each
 * version was last graded (`finishedAt`). Rulers are compared by sealmark version, then
 * methodology version, the same way.
 */
import { createHash } from 'node:crypto';
import type { FleetRecord, Ruler } from './types.js';

/** A parsed version: numeric core parts, and the pre-release identifiers (empty for a release). */
interface Semver {
  core: number[];
  pre: string[];
}

const SEMVER = /^v?(\d+(?:\.\d+)*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

/** `1.2.3`, `v1.2`, `2.0.0-rc.1+build.5` → parts; anything else (a date, `latest`, null) → null. */
export function parseSemver(v: string | null): Semver | null {
  const m = v === null ? null : SEMVER.exec(v.trim());
  if (!m) return null;
  return { core: m[1]!.split('.').map(Number), pre: m[2] ? m[2].split('.') : [] };
}

/**
 * Semver precedence of two parsed versions: negative when `a` is older, 0 when equal (build
 * metadata and trailing `.0` parts are ignored: `1.2` equals `1.2.0`).
 */
export function compareSemver(a: Semver, b: Semver): number {
  const n = Math.max(a.core.length, b.core.length);
  for (let i = 0; i < n; i++) {
    const d = (a.core[i] ?? 0) - (b.core[i] ?? 0);
    if (d !== 0) return d;
  }
  // A pre-release comes before its release.
  if (a.pre.length === 0 || b.pre.length === 0) return b.pre.length - a.pre.length;
  const m = Math.max(a.pre.length, b.pre.length);
  for (let i = 0; i < m; i++) {
    const x = a.pre[i];
    const y = b.pre[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const nx = /^\d+$/.test(x) ? Number(x) : null;
    const ny = /^\d+$/.test(y) ? Number(y) : null;
    if (nx !== null && ny !== null) {
      if (nx !== ny) return nx - ny;
    } else if (nx !== null) return -1;
    else if (ny !== null) return 1;
    else if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** Two version strings: semver when both read as one, else plain string order (a stable tie-break). */
function compareVersionText(a: string, b: string): number {
  const pa = parseSemver(a);
  const pb = parseSemver(b);
  if (pa && pb) return compareSemver(pa, pb) || (a < b ? -1 : a > b ? 1 : 0);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Rulers oldest first: by sealmark version, then methodology version. */
export function compareRulers(a: Ruler, b: Ruler): number {
  return compareVersionText(a.sealmarkVersion, b.sealmarkVersion) || compareVersionText(a.methodologyVersion, b.methodologyVersion);
}

/** The ruler in words: `sealmark 0.1.0 · methodology 3`. */
export function rulerLabel(r: Ruler): string {
  return `sealmark ${r.sealmarkVersion} · methodology ${r.methodologyVersion}`;
}

/**
 * The distinct versions of `records` (one server's), oldest first: semver order when every one
 * reads as semver, else by the newest `finishedAt` of each version's records (ISO 8601 strings
 * compare as times). `null` (a launch line that declares none) is a version like any other.
 */
export function orderVersions(records: readonly FleetRecord[]): (string | null)[] {
  const last = new Map<string | null, string>();
  for (const r of records) {
    const t = last.get(r.version);
    if (t === undefined || r.finishedAt > t) last.set(r.version, r.finishedAt);
  }
  const versions = [...last.keys()];
  const parsed = versions.map(parseSemver);
  if (parsed.every((p) => p !== null)) {
    return versions.map((v, i) => ({ v, p: parsed[i]! })).sort((a, b) => compareSemver(a.p, b.p) || last.get(a.v)!.localeCompare(last.get(b.v)!)).map((x) => x.v);
  }
  return versions.sort((a, b) => last.get(a)!.localeCompare(last.get(b)!) || String(a).localeCompare(String(b)));
}

/** A target's identity across versions: its kind and entry (`package packages[0]`); the label names a version. */
export function targetKey(r: Pick<FleetRecord, 'target'>): string {
  return `${r.target.kind} ${r.target.entry}`;
}

/** The key {@link longestFirst} reads durations by: a server's name and {@link targetKey}. */
export function durationKey(r: Pick<FleetRecord, 'server' | 'target'>): string {
  return `${r.server}\u0000${targetKey(r)}`;
}

/**
 * `jobs` in the order a fleet runs them: longest first, by how long the same server's same target
 * took last time (`durations`: {@link durationKey} → ms, from the store's records of any version
 * and ruler), so that a re-grade does not end waiting on one slow audit started last (the longest
 * processing time first rule of scheduling). Jobs with no earlier record go first, in the order
 * given, since any of them may be slow; ties keep the order given. Pure; returns a new array.
 */
export function longestFirst<T extends { job: Pick<FleetRecord, 'server' | 'target'> }>(jobs: readonly T[], durations: ReadonlyMap<string, number>): T[] {
  const known = (x: T) => durations.get(durationKey(x.job));
  return jobs
    .map((x, i) => ({ x, i, ms: known(x) }))
    .sort((a, b) => (b.ms ?? Infinity) - (a.ms ?? Infinity) || a.i - b.i)
    .map((e) => e.x);
}

/**
 * One server's records newest first: newest version, then newest ruler, then latest `finishedAt`,
 * then target entry (so the order is total and the same on every run).
 */
export function newestFirst(records: readonly FleetRecord[]): FleetRecord[] {
  const rank = new Map(orderVersions(records).map((v, i) => [v, i]));
  return [...records].sort(
    (a, b) =>
      rank.get(b.version)! - rank.get(a.version)! ||
      compareRulers(b.ruler, a.ruler) ||
      b.finishedAt.localeCompare(a.finishedAt) ||
      targetKey(a).localeCompare(targetKey(b)) ||
      a.jobId.localeCompare(b.jobId),
  );
}

/**
 * The latest record of each target of one server: among the records of the server's newest
 * version, per target (kind and entry), the one under the newest ruler (latest `finishedAt` on a
 * tie). Targets only older versions had are left out: they are history. Ordered by target kind
 * and entry (`packages[0]` before `packages[1]` before `remotes[0]`), so the first is the server's
 * main target (its badge).
 */
export function latestPerTarget(records: readonly FleetRecord[]): FleetRecord[] {
  const sorted = newestFirst(records);
  const newest = sorted[0]?.version;
  const seen = new Map<string, FleetRecord>();
  for (const r of sorted) if (r.version === newest && !seen.has(targetKey(r))) seen.set(targetKey(r), r);
  return [...seen.values()].sort((a, b) => compareTargets(a, b));
}

const KIND_ORDER = ['package', 'remote', 'client-config', 'launch-line'];

/** Targets by kind, then entry with its numbers compared as numbers (`packages[2]` before `packages[10]`). */
function compareTargets(a: FleetRecord, b: FleetRecord): number {
  return KIND_ORDER.indexOf(a.target.kind) - KIND_ORDER.indexOf(b.target.kind) || a.target.entry.localeCompare(b.target.entry, 'en', { numeric: true });
}

/** Longest readable part of a slug, in characters (the hash comes after it). */
const SLUG_TEXT = 60;

/**
 * A file name for a server's page and badge: the registry name lower-cased with every run of
 * characters outside `[a-z0-9.-]` made one `-` (`io.github.example/weather` →
 * `io.github.example-weather`), cut to 60 characters, then `-` and the first 12 hex digits of the
 * name's sha256. Stable (it depends only on the name), unique in practice (the hash tells apart
 * names the text part merges, such as `A/b` and `a-b`), and safe: no `/`, `\`, `..`, leading dot or
 * reserved device name, at most 73 characters.
 */
export function serverSlug(server: string): string {
  const text = server
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/\.{2,}/g, '.')
    .replace(/^[.-]+|[.-]+$/g, '')
    .slice(0, SLUG_TEXT)
    .replace(/[.-]+$/, '');
  const hash = createHash('sha256').update(server).digest('hex').slice(0, 12);
  return `${text || 'server'}-${hash}`;
}
