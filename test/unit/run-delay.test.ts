/**
 * Run-delay samples (src/target/run-delay.ts): the growth the wire adds to a hang limit is the
 * largest growth of one task, counts a task that started since in full, and is nil without data.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { limitExtensionMs, runDelayGrowthMs, sampleRunDelay, sampleRunnableNs } from '../../src/target/run-delay.js';

const ms = (n: number) => n * 1e6;

describe('runDelayGrowthMs', () => {
  it('is the largest growth of any one task, in whole ms, not the sum', () => {
    const from = new Map([['10/10', ms(100)], ['10/11', ms(7)], ['11/11', ms(5)]]);
    const to = new Map([['10/10', ms(900.6)], ['10/11', ms(407)], ['11/11', ms(6)]]);
    expect(runDelayGrowthMs(from, to)).toBe(800);
  });

  it('counts all of the delay of a task that started since, or whose id was reused', () => {
    const from = new Map([['10/10', ms(500)]]);
    expect(runDelayGrowthMs(from, new Map([['10/10', ms(500)], ['10/12', ms(250)]]))).toBe(250);
    expect(runDelayGrowthMs(from, new Map([['10/10', ms(40)]]))).toBe(40);
  });

  it('is 0 when a sample is empty (not Linux, no schedstat)', () => {
    expect(runDelayGrowthMs(new Map(), new Map([['10/10', ms(50)]]))).toBe(0);
    expect(runDelayGrowthMs(new Map([['10/10', 0]]), new Map())).toBe(0);
  });
});

describe('limitExtensionMs', () => {
  const at = (n: number) => new Map([['10/10', ms(n)]]);
  const zero = at(0);

  it('adds nothing for the run delay of a call that sleeps through the limit (under 5 % of it)', () => {
    expect(limitExtensionMs(10_000, zero, at(40))).toBe(0);
    expect(limitExtensionMs(10_000, zero, at(500))).toBe(0);
  });

  it('adds what grew past the floor, and at most the limit itself', () => {
    expect(limitExtensionMs(10_000, zero, at(8_000))).toBe(7_500);
    expect(limitExtensionMs(10_000, zero, at(30_000))).toBe(10_000);
    expect(limitExtensionMs(1_500, zero, at(1_000))).toBe(925);
  });

  it('adds nothing without samples', () => {
    expect(limitExtensionMs(10_000, new Map(), new Map())).toBe(0);
  });
});

describe.skipIf(process.platform !== 'linux')('sampleRunDelay', () => {
  it('reads nothing without a pid, and a child and its grandchild through their parents', async () => {
    expect(sampleRunDelay(null).size).toBe(0);
    const child = spawn('sh', ['-c', 'sleep 30 & wait'], { stdio: 'ignore', detached: true });
    try {
      let pids = new Set<string>();
      for (let i = 0; i < 100 && pids.size < 2; i++) {
        await new Promise((r) => setTimeout(r, 20));
        pids = new Set([...sampleRunDelay(child.pid).keys()].map((k) => k.split('/')[0]!));
      }
      expect(pids.has(String(child.pid))).toBe(true);
      expect(pids.size).toBe(2);
    } finally {
      process.kill(-child.pid!, 'SIGKILL');
    }
  });
});

describe.skipIf(process.platform !== 'linux')('sampleRunnableNs', () => {
  /** Growth (ms) of a process tree's runnable time over `windowMs` of wall time. */
  async function growthMs(pid: number | undefined, windowMs: number): Promise<number> {
    const before = sampleRunnableNs(pid)!;
    await new Promise((r) => setTimeout(r, windowMs));
    return (sampleRunnableNs(pid)! - before) / 1e6;
  }

  it('is undefined without a pid, grows by next to nothing for a tree that waits and by the window for one that computes in a grandchild', async () => {
    expect(sampleRunnableNs(null)).toBeUndefined();
    const idle = spawn('sh', ['-c', 'sleep 30 & wait'], { stdio: 'ignore', detached: true });
    // The computing process is the shell's child: it is found through its parent.
    // In a process group of its own, so that the whole group is ended after.
    const busy = spawn('sh', ['-c', 'node -e "for(;;);" & wait'], { stdio: 'ignore', detached: true });
    try {
      await new Promise((r) => setTimeout(r, 300));
      const [quiet, working] = await Promise.all([growthMs(idle.pid, 300), growthMs(busy.pid, 300)]);
      expect(quiet).toBeLessThan(30);
      // Runnable, on a CPU or waiting for one, all the time: the window, whatever else runs.
      expect(working).toBeGreaterThan(200);
    } finally {
      process.kill(-idle.pid!, 'SIGKILL');
      process.kill(-busy.pid!, 'SIGKILL');
    }
  });
});
