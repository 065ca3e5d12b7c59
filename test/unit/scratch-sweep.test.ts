/**
 * The sandbox folders of an audit killed with SIGKILL (which cannot remove them) are removed by the
 * next sealmark process before its first sandbox (src/target/sandbox.ts sweepOrphanScratch); the
 * folders of a sealmark process still running are left alone. Found by a newcomer: `kill -9` of a
 * standalone audit left three /dev/shm/sealmark-control-<pid>-* folders that no later audit removed.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sweepOrphanScratch } from '../../src/target/sandbox.js';

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn('true');
  await new Promise((r) => child.once('exit', r));
  return child.pid!;
}

describe('sweepOrphanScratch', () => {
  it('removes the folders of a sealmark that is gone, once per process, and keeps those of one that runs', async () => {
    const dead = await deadPid();
    const live = spawn('sleep', ['30']);
    const orphanRoot = join(tmpdir(), `sealmark-sandbox-${dead}-sweep1`);
    const orphanControl = join(tmpdir(), `sealmark-control-${dead}-sweep2`);
    const running = join(tmpdir(), `sealmark-sandbox-${live.pid}-sweep3`);
    const other = join(tmpdir(), `sealmark-sandbox-notapid-sweep4`);
    try {
      for (const d of [orphanRoot, running, other]) mkdirSync(d);
      // An overlay's work folder is left without permissions: the sweep removes it all the same.
      mkdirSync(join(orphanControl, 'overlay', 'work', '0', 'work'), { recursive: true });
      chmodSync(join(orphanControl, 'overlay', 'work', '0', 'work'), 0o000);
      expect(sweepOrphanScratch()).toBeGreaterThanOrEqual(2);
      expect([existsSync(orphanRoot), existsSync(orphanControl), existsSync(running), existsSync(other)]).toEqual([false, false, true, true]);
      // Once per process: a second call sweeps nothing.
      mkdirSync(orphanRoot);
      expect(sweepOrphanScratch()).toBe(0);
      expect(existsSync(orphanRoot)).toBe(true);
    } finally {
      live.kill('SIGKILL');
      for (const d of [orphanRoot, orphanControl, running, other]) rmSync(d, { recursive: true, force: true });
    }
  });
});
