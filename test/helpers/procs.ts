/**
 * Finding the processes a test started, by a mark it put in their environment or command line.
 */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Processes other than this one whose environment or command line contains any of `needles` (a
 * mark the test set, a scratch folder its servers run from), as `"<pid> <command line>"`. Linux
 * only (/proc); a process that ends while it is read is left out.
 */
export function processesWith(needles: readonly string[]): string[] {
  const out: string[] = [];
  for (const n of readdirSync('/proc')) {
    const pid = Number(n);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
      if (needles.some((x) => environ.includes(x) || cmd.includes(x))) out.push(`${pid} ${cmd}`);
    } catch {
      /* gone */
    }
  }
  return out;
}
