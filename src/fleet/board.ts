/**
 * The fleet leaderboard (SPEC section 10, issue 16 "History and diffs"): `FleetRecord[]` in, files
 * out. {@link buildIndex} is the pure part (records → the versioned index), board-html.ts renders
 * the pages, badge.ts the badges, and {@link writeLeaderboard} writes them all under one folder:
 *
 * ```
 * <outDir>/index.json             the index (BOARD_SCHEMA_VERSION)
 * <outDir>/index.html             the leaderboard, sortable by grade, pack, outcome and name
 * <outDir>/servers/<slug>.html    a server's latest report, history and diff
 * <outDir>/badges/<slug>.svg      a server's badge: its grade, or the outcome word
 * ```
 *
 * Everything is derived from the records alone (no clock but `generatedAt`), so the same records
 * give the same files. The leaderboard only reads records; it never runs or changes anything.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { packs } from '../packs.js';
import { badgeSvg } from './badge.js';
import { renderLeaderboard, renderServerPage } from './board-html.js';
import { diffRecords, type RecordDiff } from './diff.js';
import { latestPerTarget, newestFirst, orderVersions, serverSlug, targetKey } from './order.js';
import type { FleetOutcome, FleetRecord, Ruler } from './types.js';

export { diffRecords, type RecordDiff } from './diff.js';

/** Version of index.json's shape; bump it on any incompatible change. */
export const BOARD_SCHEMA_VERSION = 1;

/** A record as the index names it. Paths are relative to the output folder, with `/`. */
export interface BoardEntry {
  server: string;
  version: string | null;
  target: string;
  /** The target's kind and entry (`package packages[0]`): what stays the same across versions. */
  targetKey: string;
  outcome: FleetOutcome;
  /** Why, for every outcome but `graded` (null there). */
  reason: string | null;
  /** Letter and percent (0–100) for `graded`, else null: an outcome is never a grade. */
  grade: { letter: string | null; percent: number | null } | null;
  /** Pack id → percent (0–100, null when no check of the pack applied); empty when not graded. */
  packs: Record<string, number | null>;
  ruler: Ruler;
  /** ISO 8601. */
  finishedAt: string;
  page: string;
  badge: string;
  /** A remote graded on its listing, lint and handshake only (FleetRecord.listOnly). */
  listOnly: boolean;
}

/** One line of a server's history: every record, newest first. */
export interface BoardHistoryEntry {
  version: string | null;
  target: string;
  ruler: Ruler;
  outcome: FleetOutcome;
  reason: string | null;
  grade: { letter: string | null; percent: number | null } | null;
  finishedAt: string;
  /** As {@link BoardEntry.listOnly}. */
  listOnly: boolean;
}

/** One server of the index. */
export interface BoardServer {
  server: string;
  /** The file name stem of its page and badge (see serverSlug). */
  slug: string;
  page: string;
  badge: string;
  /** Its versions, oldest first (see orderVersions). */
  versions: (string | null)[];
  /** The latest record of each target (newest version, newest ruler), main target first. */
  latest: BoardEntry[];
  history: BoardHistoryEntry[];
}

/** index.json. */
export interface BoardIndex {
  schemaVersion: number;
  /** ISO 8601. */
  generatedAt: string;
  /** Pack ids in column order: the known packs, then any other pack an older ruler graded. */
  packs: string[];
  /** Latest entries per outcome (`graded`, `needs-config` …), over every server. */
  counts: Partial<Record<FleetOutcome, number>>;
  /** Servers by name. */
  servers: BoardServer[];
}

/** What a server page shows: the index entry, its records newest first, and the diff (when there are two). */
export interface ServerView {
  entry: BoardServer;
  records: FleetRecord[];
  /** The latest record of the main target (the first of `entry.latest`): the badge and the report shown. */
  main: FleetRecord;
  /** The records the diff compares, and the diff; null with fewer than two records of the main target. */
  diff: { older: FleetRecord; newer: FleetRecord; diff: RecordDiff } | null;
}

function entryOf(r: FleetRecord, slug: string): BoardEntry {
  const graded = r.outcome === 'graded';
  return {
    server: r.server,
    version: r.version,
    target: r.target.label,
    targetKey: targetKey(r),
    outcome: r.outcome,
    reason: graded ? null : (r.reason ?? ''),
    grade: graded ? r.grade : null,
    packs: graded ? r.packs : {},
    ruler: r.ruler,
    finishedAt: r.finishedAt,
    page: `servers/${slug}.html`,
    badge: `badges/${slug}.svg`,
    listOnly: r.listOnly === true,
  };
}

/**
 * The two records a server page compares: of the main target (the first latest record's), the
 * latest record of the newest version and the latest record of the version before it; with one
 * version, its two newest records (another ruler, a retry). Null with fewer than two.
 */
export function diffPair(records: readonly FleetRecord[]): { older: FleetRecord; newer: FleetRecord } | null {
  const main = latestPerTarget(records)[0];
  if (!main) return null;
  const same = newestFirst(records.filter((r) => targetKey(r) === targetKey(main)));
  const newer = same[0]!;
  const older = same.find((r) => r.version !== newer.version) ?? same[1];
  return older ? { older, newer } : null;
}

/**
 * The index and the view of every server page, from `records` (any order, any number of servers;
 * records are grouped by their exact `server` name). Pure. Throws when two server names get the
 * same slug (a 48-bit hash collision: not expected in practice).
 */
export function buildBoard(records: readonly FleetRecord[], generatedAt: string): { index: BoardIndex; views: ServerView[] } {
  const byServer = new Map<string, FleetRecord[]>();
  for (const r of records) byServer.set(r.server, [...(byServer.get(r.server) ?? []), r]);
  const slugs = new Map<string, string>();
  const views: ServerView[] = [];
  for (const name of [...byServer.keys()].sort((a, b) => a.localeCompare(b, 'en'))) {
    const mine = byServer.get(name)!;
    const slug = serverSlug(name);
    const other = slugs.get(slug);
    if (other !== undefined) throw new Error(`servers ${JSON.stringify(other)} and ${JSON.stringify(name)} have the same slug ${slug}`);
    slugs.set(slug, name);
    const sorted = newestFirst(mine);
    const latest = latestPerTarget(mine);
    const entry: BoardServer = {
      server: name,
      slug,
      page: `servers/${slug}.html`,
      badge: `badges/${slug}.svg`,
      versions: orderVersions(mine),
      latest: latest.map((r) => entryOf(r, slug)),
      history: sorted.map((r) => ({ version: r.version, target: r.target.label, ruler: r.ruler, outcome: r.outcome, reason: r.outcome === 'graded' ? null : (r.reason ?? ''), grade: r.outcome === 'graded' ? r.grade : null, finishedAt: r.finishedAt, listOnly: r.listOnly === true })),
    };
    const pair = diffPair(mine);
    views.push({ entry, records: sorted, main: latest[0]!, diff: pair && { ...pair, diff: diffRecords(pair.older, pair.newer) } });
  }
  const known = packs.map((p) => p.id as string);
  const extra = new Set<string>();
  for (const v of views) for (const e of v.entry.latest) for (const p of Object.keys(e.packs)) if (!known.includes(p)) extra.add(p);
  const counts: Partial<Record<FleetOutcome, number>> = {};
  for (const v of views) for (const e of v.entry.latest) counts[e.outcome] = (counts[e.outcome] ?? 0) + 1;
  return { index: { schemaVersion: BOARD_SCHEMA_VERSION, generatedAt, packs: [...known, ...[...extra].sort()], counts, servers: views.map((v) => v.entry) }, views };
}

/** Writes `text` to `file` through a temporary file and a rename, so no reader sees half a file. */
function writeWhole(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

/**
 * Writes the leaderboard of `records` into `outDir` (created if missing; files of an earlier run
 * are replaced, others left): index.json, index.html, servers/<slug>.html and badges/<slug>.svg
 * for every server. Returns the absolute paths written, index.json first. `generatedAt` (ISO 8601,
 * default now) is the only input besides the records. Throws on a file system error.
 */
export function writeLeaderboard(records: FleetRecord[], outDir: string, options: { generatedAt?: string } = {}): { files: string[] } {
  const { index, views } = buildBoard(records, options.generatedAt ?? new Date().toISOString());
  const out = resolve(outDir);
  mkdirSync(join(out, 'servers'), { recursive: true });
  mkdirSync(join(out, 'badges'), { recursive: true });
  const files: string[] = [];
  const put = (rel: string, text: string): void => {
    const file = join(out, ...rel.split('/'));
    writeWhole(file, text);
    files.push(file);
  };
  put('index.json', JSON.stringify(index, null, 2) + '\n');
  put('index.html', renderLeaderboard(index));
  for (const v of views) {
    put(v.entry.badge, badgeSvg(v.entry.server, v.main));
    put(v.entry.page, renderServerPage(v, index));
  }
  return { files };
}
