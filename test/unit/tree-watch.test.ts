/**
 * src/target/tree-watch.ts: file events under a folder, every level of it, one inotify watch per
 * folder. A folder that appears is watched at once and what it already holds is reported, so the
 * sandbox's byte count of the overlay (and its quiet period) sees every write.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TreeWatch } from '../../src/target/tree-watch.js';

const linux = process.platform === 'linux';
let dir: string | undefined;
let tw: TreeWatch | undefined;
afterEach(() => {
  tw?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Resolves once `seen` holds every name of `want`, or rejects after 5 s with what it holds. */
async function until(seen: Set<string>, want: string[]): Promise<void> {
  const end = Date.now() + 5000;
  while (!want.every((w) => seen.has(w))) {
    if (Date.now() > end) throw new Error(`missing ${want.filter((w) => !seen.has(w)).join(', ')}; saw ${[...seen].sort().join(', ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.runIf(linux)('TreeWatch', () => {
  it('reports writes at every level, including files a new folder held before its watch began', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sealmark-treewatch-'));
    mkdirSync(join(dir, 'old'));
    const seen = new Set<string>();
    const errors: Error[] = [];
    tw = new TreeWatch(dir, { onChange: (n) => seen.add(n), onError: (e) => errors.push(e) });
    expect(tw.size).toBe(2);
    writeFileSync(join(dir, 'old', 'a.txt'), 'a');
    // Made in one go (mkdir -p, then files at once): the inner folders exist before any event is read.
    mkdirSync(join(dir, 'new', 'deep', 'er'), { recursive: true });
    for (let i = 0; i < 50; i++) writeFileSync(join(dir, 'new', 'deep', 'er', `f${i}.txt`), 'x');
    await until(seen, ['old/a.txt', 'new', 'new/deep', 'new/deep/er', ...Array.from({ length: 50 }, (_, i) => `new/deep/er/f${i}.txt`)]);
    expect(tw.size).toBe(5);
    // A removed folder's watches go with it.
    rmSync(join(dir, 'new'), { recursive: true });
    const end = Date.now() + 5000;
    while (tw.size > 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(tw.size).toBe(2);
    expect(errors).toEqual([]);
  });

  it('does not descend into skipped folders: their writes are no events', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sealmark-treewatch-'));
    mkdirSync(join(dir, 'cache'));
    const seen = new Set<string>();
    tw = new TreeWatch(dir, { onChange: (n) => seen.add(n), onError: () => undefined, skip: (n) => n === 'cache' });
    writeFileSync(join(dir, 'cache', 'pkg.tgz'), 'x');
    writeFileSync(join(dir, 'kept.txt'), 'x');
    await until(seen, ['kept.txt']);
    expect([...seen].filter((n) => n.startsWith('cache/'))).toEqual([]);
  });

  it('a root that does not exist is nothing to watch: no error, no throw', () => {
    const errors: Error[] = [];
    tw = new TreeWatch('/nonexistent-sealmark-folder', { onChange: () => undefined, onError: (e) => errors.push(e) });
    expect(errors).toEqual([]);
    expect(tw.size).toBe(0);
  });
});
