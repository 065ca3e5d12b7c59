/**
 * One attempt of a fleet job (src/fleet/attempt.ts) whose audit is killed with SIGKILL, as the
 * runner does once a job's deadline and grace period are over, or as the kernel's OOM killer
 * would: the audit cannot remove its sandbox folders, and their copy-on-write layers would stay in
 * memory in /dev/shm (found after a fleet bench was stopped: 15 folders left behind). The attempt
 * removes the folders of the audit it ran, found by the pid in their names.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { attemptJob } from '../../src/fleet/attempt.js';
import { readTargets } from '../../src/fleet/targets.js';
import { networkNamespaceAvailable } from '../../src/target/sandbox.js';
import { fixtureCommand } from '../helpers/run.js';

const ns = networkNamespaceAvailable();
const work = mkdtempSync(join(tmpdir(), 'sealmark-attempt-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The sandbox folders named after `pid` in the temp folder and in /dev/shm. */
function scratchOf(pid: number): string[] {
  const out: string[] = [];
  for (const dir of [tmpdir(), '/dev/shm']) {
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      /* no /dev/shm */
    }
    for (const n of names) if (/^sealmark-(sandbox|control)-/.test(n) && n.includes(`-${pid}-`)) out.push(join(dir, n));
  }
  return out;
}

describe('a fleet job whose audit is killed', () => {
  it.skipIf(!ns.ok)(`leaves no sandbox folder of that audit behind${ns.ok ? '' : ` [skipped: ${ns.why}]`}`, async () => {
    const { command, args } = fixtureCommand('queued-reader.mjs');
    const lines = join(work, 'servers.txt');
    writeFileSync(lines, `${[command, ...args].join(' ')}\n`);
    const [planned] = readTargets([lines]);
    let pid = 0;
    let seen: string[] = [];
    const result = await attemptJob(
      { job: planned!.job, spec: planned!.spec, attempt: 1, maxAttempts: 1 },
      {
        deadlineSec: 120,
        callRemotes: false,
        mark: `sealmark-attempt-test-${process.pid}`,
        onStart: (p) => {
          pid = p;
          // Killed once its sandbox is made, before it can dispose of it.
          const poll = setInterval(() => {
            seen = scratchOf(p);
            if (seen.length < 2) return;
            clearInterval(poll);
            process.kill(p, 'SIGKILL');
          }, 20);
        },
      },
    );
    expect(pid).toBeGreaterThan(0);
    expect(seen).toHaveLength(2);
    expect(result).toMatchObject({ kind: 'failed' });
    expect(result.kind === 'failed' && result.error).toMatch(/signal SIGKILL/);
    expect(scratchOf(pid)).toEqual([]);
  }, 120_000);
});
