/**
 * A user's data folder for the servers of test/fixtures/servers/overlay (data-writer.mjs): the
 * files its tools change, and a digest of a folder to show it unchanged after an audit.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A data folder as a user has one: a notes file, a cache folder with one file, a log. */
export function makeData(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sealmark-overlay-data-'));
  writeFileSync(join(dir, 'notes.txt'), 'first note\n');
  mkdirSync(join(dir, 'cache'));
  writeFileSync(join(dir, 'cache', 'old.bin'), 'bin\n');
  writeFileSync(join(dir, 'app.log'), 'log\n');
  mkdirSync(join(dir, 'tree', 'sub'), { recursive: true });
  writeFileSync(join(dir, 'tree', 'a.txt'), 'a\n');
  writeFileSync(join(dir, 'tree', 'sub', 'b.txt'), 'b\n');
  symlinkSync('notes.txt', join(dir, 'link'));
  writeFileSync(join(dir, 'script.sh'), '#!/bin/sh\n', { mode: 0o644 });
  chmodSync(join(dir, 'script.sh'), 0o644);
  writeFileSync(join(dir, 'draft.txt'), 'new text\n');
  writeFileSync(join(dir, 'final.txt'), 'old\n');
  return dir;
}

/** Every file under `dir` → its sha256 and permissions (and every folder, as "dir"). */
export function hashes(dir: string, out: Record<string, string> = {}, shown = ''): Record<string, string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isSymbolicLink()) out[`${shown}${e.name}`] = `link:${readlinkSync(p)}`;
    else if (e.isDirectory()) {
      out[`${shown}${e.name}/`] = 'dir';
      hashes(p, out, `${shown}${e.name}/`);
    } else out[`${shown}${e.name}`] = `${createHash('sha256').update(readFileSync(p)).digest('hex')} mode ${(statSync(p).mode & 0o7777).toString(8)}`;
  }
  return out;
}

