/**
 * File events under one folder, every level of it, in time linear in the number of changes.
 *
 * Node 20's `fs.watch(dir, { recursive: true })` on Linux is written in JavaScript over inotify and
 * walks the changed folder again on every event, so one call that writes N files into one folder
 * costs about N² (2,000 files: 20 s of a blocked event loop, during which not even SIGINT is
 * handled). This keeps one non-recursive inotify watch (`fs.watch`) per folder instead: an event
 * costs one `lstat` when it may name a new folder, and a new folder is read once, when it appears.
 */
import { lstatSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';

/** Options of {@link TreeWatch}. */
export interface TreeWatchOptions {
  /**
   * Called for each change: `name` is the changed entry's path relative to the root, with `/`
   * (`''` for the root itself). Entries already in a folder when it appears are reported once each,
   * so a consumer that counts bytes sees the files written before the folder's watch began.
   */
  onChange: (name: string) => void;
  /** Called once when a watch cannot be made or fails (e.g. ENOSPC: no inotify watches left); the watch is then closed. */
  onError: (err: Error) => void;
  /** Folders (relative path) not to descend into: their changes are not reported. */
  skip?: (name: string) => boolean;
}

/** Watches `root` and every folder under it (Linux inotify through `fs.watch`, one watch per folder). */
export class TreeWatch {
  private readonly watchers = new Map<string, FSWatcher>();
  private closed = false;

  /** Starts watching `root` and the folders it holds now. Errors go to `opts.onError`, never thrown. */
  constructor(
    private readonly root: string,
    private readonly opts: TreeWatchOptions,
  ) {
    this.add('', false);
  }

  /** Folders watched now. */
  get size(): number {
    return this.watchers.size;
  }

  /** Watches folder `rel` and, below it, every folder it holds; `report`: report each entry found as a change. */
  private add(rel: string, report: boolean): void {
    if (this.closed || this.watchers.has(rel) || (rel !== '' && this.opts.skip?.(rel))) return;
    const full = rel === '' ? this.root : join(this.root, rel);
    let w: FSWatcher;
    try {
      w = watch(full, { persistent: false }, (event, name) => this.changed(rel, event, name));
    } catch (err) {
      // Gone or replaced by a file before it could be watched: nothing to watch.
      if (isGone(err)) return;
      this.fail(err as Error);
      return;
    }
    w.on('error', (err) => (isGone(err) ? this.drop(rel) : this.fail(err)));
    this.watchers.set(rel, w);
    let entries: { name: string; dir: boolean }[];
    try {
      entries = readdirSync(full, { withFileTypes: true }).map((e) => ({ name: e.name, dir: e.isDirectory() }));
    } catch {
      return;
    }
    for (const e of entries) {
      const child = rel === '' ? e.name : `${rel}/${e.name}`;
      if (report) this.opts.onChange(child);
      if (e.dir) this.add(child, report);
    }
  }

  /** One inotify event in folder `rel`. */
  private changed(rel: string, event: string, name: string | Buffer | null): void {
    if (this.closed) return;
    if (name === null) {
      this.opts.onChange(rel);
      return;
    }
    const child = rel === '' ? String(name) : `${rel}/${String(name)}`;
    // 'rename' is inotify's create, delete or move: the entry may be a new folder, or a folder gone.
    if (event === 'rename') {
      let dir = false;
      try {
        dir = lstatSync(join(this.root, child)).isDirectory();
      } catch {
        this.drop(child);
      }
      if (dir && !this.watchers.has(child)) {
        this.opts.onChange(child);
        this.add(child, true);
        return;
      }
    }
    this.opts.onChange(child);
  }

  /** Stops watching folder `rel` and every folder under it (they are gone). */
  private drop(rel: string): void {
    for (const [k, w] of this.watchers) {
      if (k === rel || k.startsWith(rel + '/')) {
        w.close();
        this.watchers.delete(k);
      }
    }
  }

  private fail(err: Error): void {
    if (this.closed) return;
    this.close();
    this.opts.onError(err);
  }

  /** Stops every watch. */
  close(): void {
    this.closed = true;
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }
}

function isGone(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
