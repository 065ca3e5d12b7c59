/**
 * The copy-on-write filesystem of the sandbox (SPEC section 3 step 1, issue 14): on Linux, in the
 * sandbox's user and mount namespace, an overlay over every writable folder the server could reach
 * (lower: the real folder; upper: sealmark's scratch, outside every lower). The server reads the real
 * files and every write lands in an upper folder, so the user's files are never changed, and the
 * upper folders say exactly what was written: a file there is created or changed, a whiteout (a
 * character device 0:0) is a removal.
 *
 * This module plans the overlay (which folders, where the upper folders go), checks once that the
 * kernel allows it, writes the mount commands the sandbox's start script runs, and reads the upper
 * folders back as effects.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, closeSync, constants, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, readdirSync, readlinkSync, realpathSync, rmSync, statfsSync, statSync, type Stats } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';

/** Setting this variable to 1 makes sealmark act as if overlayfs were not permitted (tests of the fallback). */
export const NO_OVERLAY_ENV = 'SEALMARK_NO_OVERLAY';

/** Least free space (bytes) of the folder that holds the upper layers: a server's writes land there. */
const MIN_UPPER_SPACE = 256 * 1024 * 1024;

/** Most entries walked per snapshot of the upper folders (they hold only what the server wrote). */
const MAX_UPPER_ENTRIES = 5000;

/** Folders that are never overlaid: kernel file systems, and the root itself (an overlay there would hide every mount). */
const NEVER = ['/proc', '/sys', '/dev', '/run'];

/** One overlaid folder: `lower` the real path, `upper` and `work` its scratch under the sandbox's base. */
export interface OverlayLayer {
  lower: string;
  upper: string;
  work: string;
}

/** The plan of an overlay: the layers to mount and the folders that could not be covered, with why. */
export interface OverlayPlan {
  layers: OverlayLayer[];
  /** Real folders the server could write that stay unprotected, each with the reason (for the report). */
  uncovered: { path: string; why: string }[];
}

let permitted: { ok: boolean; why: string } | undefined;

/**
 * Whether an overlay can be mounted in an unprivileged user and mount namespace here (checked once
 * per process, about 10 ms): a throwaway overlay of a scratch folder, written through. `why` says
 * what failed, for the report.
 */
export function overlayPermitted(base: string): { ok: boolean; why: string } {
  if (permitted) return permitted;
  if (process.env[NO_OVERLAY_ENV] === '1') return (permitted = { ok: false, why: `overlayfs is switched off (${NO_OVERLAY_ENV}=1)` });
  if (process.platform !== 'linux') return (permitted = { ok: false, why: `overlayfs is a Linux feature (this is ${process.platform})` });
  const trial = mkdtempSync(join(base, 'sealmark-trial-'));
  try {
    for (const d of ['lower', 'upper', 'work']) mkdirSync(join(trial, d));
    const script = `mount -t overlay overlay -o userxattr,lowerdir=${shQuote(join(trial, 'lower'))},upperdir=${shQuote(join(trial, 'upper'))},workdir=${shQuote(join(trial, 'work'))} ${shQuote(join(trial, 'lower'))} && echo x > ${shQuote(join(trial, 'lower', 'probe'))}`;
    const r = spawnSync('unshare', ['-rm', '--fork', 'sh', '-c', script], { encoding: 'utf8', timeout: 5000 });
    if (r.error) return (permitted = { ok: false, why: `unshare is not available (${(r.error as NodeJS.ErrnoException).code})` });
    if (r.status !== 0 || !existsSync(join(trial, 'upper', 'probe')) || existsSync(join(trial, 'lower', 'probe'))) {
      const first = (r.stderr || '').trim().split('\n')[0] ?? '';
      return (permitted = { ok: false, why: `an overlay cannot be mounted in a user namespace here (${first || `exit ${r.status}`})` });
    }
    return (permitted = { ok: true, why: '' });
  } finally {
    rmSync(trial, { recursive: true, force: true });
  }
}

/**
 * Where the upper layers and the effect log go: a folder that no overlay covers. `/dev/shm` (a
 * tmpfs on Linux) when it is writable and has room; undefined otherwise, with the reason.
 */
export function upperBase(): { dir?: string; why: string } {
  const dir = '/dev/shm';
  try {
    const st = statfsSync(dir);
    if (st.bavail * st.bsize < MIN_UPPER_SPACE) return { why: `${dir} has less than ${MIN_UPPER_SPACE / 1024 / 1024} MB free for the overlay's upper layers` };
    const probe = mkdtempSync(join(dir, 'sealmark-probe-'));
    rmSync(probe, { recursive: true, force: true });
    return { dir, why: '' };
  } catch (err) {
    return { why: `${dir} is not writable (${(err as NodeJS.ErrnoException).code ?? String(err)}), so the overlay's upper layers have no place outside the covered folders` };
  }
}

/**
 * The folders to overlay for a server started as `command args` with `env` from `from` (SPEC
 * section 3 step 1): the temp folders, the user's home, the folder sealmark runs in, every absolute
 * path named in the command, its arguments and the environment values (a named file's folder; a
 * path that does not exist yet, its nearest existing ancestor), and the rest of the writable
 * filesystem: each top-level folder this user may write. Each as a real path, minimal: a folder
 * inside another is covered by it. `extra` adds folders (sealmark's scratch). `uncovered` names the
 * paths that no overlay can cover (a new folder at the root, a path in a kernel file system).
 */
export function overlayCandidates(
  command: string,
  args: string[],
  env: Record<string, string>,
  from: string,
  extra: string[] = [],
): { folders: string[]; uncovered: OverlayPlan['uncovered']; required: string[]; named: string[] } {
  const named: string[] = [];
  const look = (text: string) => {
    // The whole value (a path may hold spaces), then `--db=/x/y`, `file:/x`, `a:/x:/y` pieces.
    if (text.startsWith('/') && text.length > 1) named.push(text);
    for (const piece of text.split(/[=:,\s]/)) if (piece.startsWith('/') && piece.length > 1 && piece !== text) named.push(piece);
  };
  for (const a of [command, ...args]) look(a);
  for (const [k, v] of Object.entries(env)) if (k !== 'PATH') look(v);
  const uncovered: OverlayPlan['uncovered'] = [];
  const never = (p: string) => p === '/' || (NEVER.some((n) => p === n || p.startsWith(n + '/')) && !p.startsWith('/dev/shm/'));
  const all: string[] = [];
  // The folders that must be protected wherever they lie (the user's data and working places), as
  // against the rest of the writable filesystem, which is covered where it can be.
  const required = new Set<string>();
  const namedFolders = new Set<string>();
  const wanted = ['/tmp', '/var/tmp', tmpdir(), homedir(), from, ...extra, ...named];
  for (const p of [...wanted, ...writableTopLevel()]) {
    const f = existingFolder(p);
    if (f === undefined) continue;
    // A named path is the server's data wherever it lies: one no layer covers is reported apart.
    if (named.includes(p)) namedFolders.add(f);
    if (!never(f)) {
      all.push(f);
      if (wanted.includes(p)) required.add(f);
    }
    else if (named.includes(p) && !uncovered.some((u) => u.path === p)) {
      uncovered.push({ path: p, why: f === '/' ? 'its nearest existing folder is the root, which cannot be overlaid' : `it lies in ${f}, a kernel or shared-memory file system that is not overlaid` });
    }
  }
  const real = [...new Set(all)].sort((a, b) => a.length - b.length);
  const folders: string[] = [];
  for (const p of real) if (!folders.some((o) => p.startsWith(o + '/'))) folders.push(p);
  // Writable places no overlay covers, named so the report says the server could write there.
  for (const [p, why] of NEVER_WRITABLE()) {
    if (uncovered.some((u) => u.path === p) || folders.some((f) => p === f || p.startsWith(f + '/'))) continue;
    if (writable(p)) uncovered.push({ path: p, why });
  }
  return { folders, uncovered, required: [...required], named: [...namedFolders] };
}

/**
 * Folders no overlay covers that a server may still be able to write, each with the reason: the
 * root (an overlay there would hide every mount), the runtime and device file systems, and
 * /dev/shm, which holds the overlay's own upper layers.
 */
function NEVER_WRITABLE(): [string, string][] {
  const runtime = process.env.XDG_RUNTIME_DIR;
  return [
    ['/', 'new entries at the root cannot be overlaid: an overlay of / would hide every mount'],
    ['/run', 'a runtime file system of sockets and locks, which an overlay would hide from the server'],
    ...(runtime && runtime.startsWith('/run/') ? [[runtime, 'the runtime folder of this user (sockets of the desktop session), which an overlay would hide'] as [string, string]] : []),
    ['/dev', 'the device file system, which is never overlaid'],
    ['/dev/shm', "shared memory, which holds the overlay's own upper layers"],
  ];
}

/** Whether this user may create entries in `dir`. */
function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** Top-level folders of `/` this user may write (for root: all of them), as real paths. */
function writableTopLevel(): string[] {
  let names: string[];
  try {
    names = readdirSync('/');
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const n of names) {
    const p = `/${n}`;
    if (NEVER.includes(p)) continue;
    try {
      if (!statSync(p).isDirectory()) continue;
      accessSync(p, constants.W_OK);
      out.push(p);
    } catch {
      /* not a folder, or not writable */
    }
  }
  return out;
}

/** The real path of `p`'s folder: `p` itself when it is a folder, else its nearest existing ancestor. */
function existingFolder(p: string): string | undefined {
  if (!isAbsolute(p)) return undefined;
  let cur = p;
  for (;;) {
    try {
      const real = realpathSync(cur);
      return statSync(real).isDirectory() ? real : dirname(real);
    } catch {
      const up = dirname(cur);
      if (up === cur) return undefined;
      cur = up;
    }
  }
}

/**
 * Lays out one upper and work folder per candidate under `base`, leaving out candidates that hold
 * `base` itself. A candidate that holds other mounts (an overlay would hide them from the server)
 * is not overlaid whole: each `required` folder inside it (a named data path, the working
 * directory, the home, the temp folders) is covered by the highest folder on its way down that
 * holds no other mount, so that a mount anywhere else in `/tmp` or `/mnt` leaves the user's data
 * protected. What stays open (the candidate's other entries; a required folder that itself holds
 * mounts) is listed in `uncovered`. Paths are real paths.
 */
export function planOverlay(candidates: string[], base: string, required: readonly string[] = []): OverlayPlan {
  const mounts = mountPoints();
  const holdsMounts = (dir: string) => mounts.filter((m) => m.startsWith(dir === '/' ? '/' : dir + '/') && m !== dir);
  const lowers: string[] = [];
  const uncovered: OverlayPlan['uncovered'] = [];
  for (const lower of candidates) {
    if (base === lower || base.startsWith(lower + '/')) {
      uncovered.push({ path: lower, why: `it holds the overlay's own upper layers (${base})` });
      continue;
    }
    const inner = holdsMounts(lower);
    if (inner.length === 0) {
      lowers.push(lower);
      continue;
    }
    const parts = new Set<string>();
    for (const r of required) {
      if (!r.startsWith(lower + '/')) continue;
      let at = lower;
      let found: string | undefined;
      for (const seg of r.slice(lower.length + 1).split('/')) {
        at = `${at}/${seg}`;
        if (base === at || base.startsWith(at + '/')) break;
        if (holdsMounts(at).length === 0) {
          found = at;
          break;
        }
      }
      if (found) parts.add(found);
      else uncovered.push({ path: r, why: `it holds other mounts (${holdsMounts(r).slice(0, 3).join(', ')}), which an overlay would hide` });
    }
    const covered = [...parts].filter((p) => ![...parts].some((q) => p.startsWith(q + '/')));
    lowers.push(...covered);
    const only = covered.length > 0 ? `; only ${covered.join(', ')} inside it ${covered.length === 1 ? 'is' : 'are'} overlaid` : '';
    uncovered.push({ path: lower, why: `it holds other mounts (${inner.slice(0, 3).join(', ')}), which an overlay would hide${only}` });
  }
  const layers: OverlayLayer[] = lowers.map((lower, i) => {
    const upper = join(base, 'upper', String(i));
    const work = join(base, 'work', String(i));
    mkdirSync(upper, { recursive: true });
    mkdirSync(work, { recursive: true });
    return { lower, upper, work };
  });
  return { layers, uncovered };
}

/** Mount points of this process's namespace (from /proc/self/mountinfo), decoded. */
function mountPoints(): string[] {
  try {
    return readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[4])
      .filter((p): p is string => p !== undefined && p !== '')
      .map((p) => p.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))));
  } catch {
    return [];
  }
}

/**
 * Shell lines that mount `layers` inside the sandbox's mount namespace (run before the server
 * starts). A layer that fails to mount is written to `status` as `fail<TAB>lower<TAB>message`, so
 * the report can name it; the others as `ok<TAB>lower`.
 */
export function mountScript(layers: OverlayLayer[], status: string): string[] {
  return layers.map((l) => {
    const opts = `userxattr,lowerdir=${l.lower},upperdir=${l.upper},workdir=${l.work}`;
    return `if out=$(mount -t overlay overlay -o ${shQuote(opts)} ${shQuote(l.lower)} 2>&1); then printf 'ok\\t%s\\n' ${shQuote(l.lower)} >> ${shQuote(status)}; else printf 'fail\\t%s\\t%s\\n' ${shQuote(l.lower)} "$out" >> ${shQuote(status)}; fi`;
  });
}

/** An entry of an upper folder: what it is, its size and modification time. */
interface UpperEntry {
  kind: 'file' | 'dir' | 'link' | 'whiteout' | 'other';
  size: number;
  /** Size, times and inode: a rewrite of the same size, or a replace by rename, still differs. */
  id: string;
  /** Permission bits: a chmod is a change even when the bytes are the same. */
  mode: number;
}

/**
 * A snapshot of the upper folders: real path (as the server sees it) → entry. `truncated`: the
 * upper folders held more than {@link MAX_UPPER_ENTRIES} entries and only that many were read.
 */
export type UpperSnapshot = Map<string, UpperEntry> & { truncated?: boolean };

/** Most entries a snapshot of the upper folders reads (see {@link UpperSnapshot}). */
export const UPPER_ENTRIES_READ = MAX_UPPER_ENTRIES;

/**
 * Reads every upper folder of `layers` (only what the server wrote since the start is there).
 * `identify` gives a file's identity (the sandbox hashes content, so a rewrite of the same bytes is
 * no change); by default size, times and inode.
 */
export function snapshotUppers(layers: OverlayLayer[], identify?: (full: string, st: Stats) => string): UpperSnapshot {
  const out: UpperSnapshot = new Map();
  const walk = (dir: string, real: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (out.size >= MAX_UPPER_ENTRIES) {
        out.truncated = true;
        return;
      }
      const full = join(dir, name);
      const shown = join(real, name);
      try {
        const st = lstatSync(full);
        const kind: UpperEntry['kind'] = st.isCharacterDevice() && st.rdev === 0 ? 'whiteout' : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'link' : st.isFile() ? 'file' : 'other';
        out.set(shown, { kind, size: st.size, id: kind === 'file' && identify ? identify(full, st) : `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`, mode: st.mode & 0o7777 });
        if (kind === 'dir') walk(full, shown);
      } catch {
        /* gone meanwhile */
      }
    }
  };
  for (const l of layers) walk(l.upper, l.lower);
  return out;
}

/** One change the upper folders show between two snapshots. `path` is the real path. */
export interface FileChange {
  action: 'created' | 'changed' | 'removed' | 'renamed';
  path: string;
  /** For `renamed`: the new path. */
  to?: string;
  /** A short summary: sizes before and after, the first changed bytes of a text file. */
  summary: string;
}

/**
 * The changes between snapshot `before` and `after` of `layers`' upper folders, read against the
 * real (lower) files: a new file is `created` (or `changed` when the real file exists), a new
 * whiteout `removed`, and a removal paired with a creation of the same bytes `renamed`. Folders
 * count only when they are new and hold nothing.
 */
export function changesBetween(layers: OverlayLayer[], before: UpperSnapshot, after: UpperSnapshot): FileChange[] {
  const out: FileChange[] = [];
  const upperOf = (real: string): string | undefined => {
    for (const l of layers) if (real === l.lower || real.startsWith(l.lower + sep)) return join(l.upper, relative(l.lower, real));
    return undefined;
  };
  for (const [path, e] of after) {
    const was = before.get(path);
    // Past the cap a snapshot holds only the entries read first: an entry `before` did not reach
    // may have been there all along, so it is no creation (nor a new removal).
    if (!was && before.truncated) continue;
    if (was && was.kind === e.kind && was.id === e.id) {
      // The same bytes again, with other permissions: a chmod of a file it had already written.
      if (e.kind === 'file' && was.mode !== e.mode) out.push({ action: 'changed', path, summary: `mode ${was.mode.toString(8)} → ${e.mode.toString(8)}` });
      continue;
    }
    const real = safeLstat(path, layers);
    if (e.kind === 'whiteout') {
      if (was?.kind === 'whiteout') continue;
      out.push({ action: 'removed', path, summary: real ? (real.isDirectory() ? folderWord(path) : real.isSymbolicLink() ? 'a link' : sizeWord(real.size, false)) : 'a file it had made' });
    } else if (e.kind === 'file') {
      const prior = was && was.kind === 'file' ? { size: was.size, from: 'upper' as const } : real && real.isFile() && was?.kind !== 'whiteout' ? { size: real.size, from: 'lower' as const } : undefined;
      const upper = upperOf(path)!;
      if (!prior) out.push({ action: 'created', path, summary: sizeWord(e.size, false) });
      // A rewrite of the real file with the very same bytes (a store that saves on every call) is no
      // change; the same bytes with other permissions (a chmod) are.
      else if (prior.from === 'lower' && prior.size === e.size && sameBytes(path, upper)) {
        const mode = modeChange(real!, upper);
        if (mode) out.push({ action: 'changed', path, summary: mode });
      }
      else out.push({ action: 'changed', path, summary: `${prior.size} → ${e.size} bytes${prior.from === 'lower' ? firstChange(path, upper) : ''}` });
    } else if (e.kind === 'link') {
      if (was) continue;
      let target = '?';
      try {
        target = readlinkSync(upperOf(path)!);
      } catch {
        /* gone */
      }
      out.push({ action: 'created', path, summary: `a link to ${target}` });
    } else if (e.kind === 'dir') {
      if (was || real) continue;
      const holds = [...after.keys()].some((p) => p.startsWith(path + '/'));
      if (!holds) out.push({ action: 'created', path, summary: 'an empty folder' });
    }
  }
  for (const [path, e] of before) {
    // Likewise an entry `after` did not reach may still be there: no removal.
    if (after.truncated) break;
    if (after.has(path) || e.kind === 'whiteout' || e.kind === 'dir') continue;
    // A file it had made and then removed (no whiteout: nothing below it to hide).
    out.push({ action: 'removed', path, summary: 'a file it had made' });
  }
  return pairRenames(out, layers);
}

/** A removal and a creation of a file with the same size and bytes become one `renamed`. */
function pairRenames(changes: FileChange[], layers: OverlayLayer[]): FileChange[] {
  const removed = changes.filter((c) => c.action === 'removed');
  if (removed.length === 0) return changes;
  const out = [...changes];
  for (const r of removed) {
    const lower = safeLstat(r.path, layers);
    if (!lower?.isFile()) continue;
    // Onto a new name (created), or onto a file that was there (changed: os.replace, mv over it).
    const match = out.find((c) => (c.action === 'created' || c.action === 'changed') && sameBytes(r.path, upperPathOf(c.path, layers)));
    if (!match) continue;
    out.splice(out.indexOf(match), 1);
    const summary = match.action === 'changed' ? `${sizeWord(lower.size, false)}, replacing the file that was there` : sizeWord(lower.size, false);
    out.splice(out.indexOf(r), 1, { action: 'renamed', path: r.path, to: match.path, summary });
  }
  return out;
}

function upperPathOf(real: string, layers: OverlayLayer[]): string | undefined {
  for (const l of layers) if (real.startsWith(l.lower + sep)) return join(l.upper, relative(l.lower, real));
  return undefined;
}

/** The real file's stat (the lower layer), or undefined. */
function safeLstat(path: string, _layers: OverlayLayer[]): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** `a folder with 4 files (a.txt, b/c.txt, …)`: what a removed real folder held (counted up to 1000 entries). */
function folderWord(dir: string): string {
  const files: string[] = [];
  const walk = (d: string, shown: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      if (files.length >= 1000) return;
      const full = join(d, n);
      try {
        if (lstatSync(full).isDirectory()) walk(full, `${shown}${n}/`);
        else files.push(`${shown}${n}`);
      } catch {
        /* gone */
      }
    }
  };
  walk(dir, '');
  if (files.length === 0) return 'an empty folder';
  const shown = files.slice(0, 3).join(', ') + (files.length > 3 ? ', …' : '');
  return `a folder with ${files.length >= 1000 ? '1000 or more' : files.length} file${files.length === 1 ? '' : 's'} (${shown})`;
}

function sizeWord(size: number, dir: boolean): string {
  return dir ? 'a folder' : `${size} byte${size === 1 ? '' : 's'}`;
}

/** Bytes read from the start of `path` (at most `max`), or undefined. */
function head(path: string, max = 64 * 1024): Buffer | undefined {
  try {
    const fd = openSync(path, 'r');
    try {
      const buf = Buffer.alloc(max);
      const n = readSync(fd, buf, 0, max, 0);
      return buf.subarray(0, n);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/** Whether two files hold the same bytes (read whole up to 1 MiB; larger files count as different). */
function sameBytes(a: string, b: string | undefined): boolean {
  if (b === undefined) return false;
  let fa: number | undefined;
  let fb: number | undefined;
  try {
    const [x, y] = [lstatSync(a), lstatSync(b)];
    if (x.size !== y.size || !x.isFile() || !y.isFile()) return false;
    // Chunk by chunk, stopping at the first difference: a 300 MB store rewritten with the same
    // bytes is no change, and is compared without holding either copy in memory.
    fa = openSync(a, 'r');
    fb = openSync(b, 'r');
    const ca = Buffer.alloc(COMPARE_CHUNK);
    const cb = Buffer.alloc(COMPARE_CHUNK);
    for (let at = 0; at < x.size; at += COMPARE_CHUNK) {
      const n = readSync(fa, ca, 0, COMPARE_CHUNK, at);
      const m = readSync(fb, cb, 0, COMPARE_CHUNK, at);
      if (n !== m || !ca.subarray(0, n).equals(cb.subarray(0, m))) return false;
      if (n === 0) break;
    }
    return true;
  } catch {
    return false;
  } finally {
    if (fa !== undefined) closeSync(fa);
    if (fb !== undefined) closeSync(fb);
  }
}

/** Bytes compared at a time by {@link sameBytes}. */
const COMPARE_CHUNK = 1024 * 1024;

/** `mode 644 → 777` when the written copy's permissions differ from the real file's; undefined otherwise. */
function modeChange(real: Stats, upper: string): string | undefined {
  try {
    const a = real.mode & 0o7777;
    const b = lstatSync(upper).mode & 0o7777;
    return a === b ? undefined : `mode ${a.toString(8)} → ${b.toString(8)}`;
  } catch {
    return undefined;
  }
}

/** `; first change at byte N: "…"` for a text file whose real and written bytes differ; '' otherwise. */
function firstChange(real: string, upper: string): string {
  const a = head(real);
  const b = head(upper);
  if (!a || !b || a.includes(0) || b.includes(0)) return '';
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i += 1;
  if (i === a.length && i === b.length) return '';
  const now = b.subarray(i, i + 40).toString('utf8');
  return `; first change at byte ${i}: ${JSON.stringify(now)}`;
}

/** Removes `dir` and everything in it (the upper folders hold whiteouts and mode-0 work folders). Never throws. */
export function removeTree(dir: string): void {
  try {
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  } catch {
    spawnSync('chmod', ['-R', 'u+rwx', dir]);
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      /* the OS temp cleaner will have it */
    }
  }
}

function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
