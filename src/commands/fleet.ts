/**
 * `sealmark fleet run <targets…> --store <dir>` (SPEC section 10): parses the options and runs
 * fleet/run.ts. Exit codes: 0 the run completed (whatever the grades), 1 a job could not be run at
 * all because of sealmark itself, 2 usage (a bad option, a bad target file, a store in use).
 */
import { availableParallelism } from 'node:os';
import { UsageError } from './common.js';

export interface FleetRunCliOptions {
  store?: string;
  jobs?: string;
  deadline?: string;
  regrade?: string[];
  callRemotes?: boolean;
  fetchRate?: string;
  attempts?: string;
  transcripts?: string;
}

/**
 * Default `--jobs`: half the cores, at least 1 (research/fleet-and-registry.md §3: each audit
 * holds one or two cores, in its child process and its server).
 */
export function defaultJobs(): number {
  return Math.max(1, Math.floor(availableParallelism() / 2));
}

/** Default `--deadline`: seconds one attempt of a job may take. */
export const DEFAULT_DEADLINE_SEC = 300;
/** Default `--fetch-rate`: fetches started per minute per registry type. */
export const DEFAULT_FETCH_RATE = 60;

/** A number option within [min, max]; integers only unless `real`. Throws UsageError naming the flag. */
function parseNumber(flag: string, value: string | undefined, fallback: number, min: number, max: number, real = false): number {
  if (value === undefined) return fallback;
  const n = (real ? /^\d+(\.\d+)?$/ : /^\d+$/).test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isFinite(n) || n < min || n > max) throw new UsageError(`${flag} ${JSON.stringify(value)}: expected ${real ? 'a number' : 'a whole number'} from ${min} to ${max}`);
  return n;
}

/** Runs `sealmark fleet run`; resolves to the exit code. Throws UsageError (exit 2). */
export async function runFleetRun(targets: string[], opts: FleetRunCliOptions): Promise<number> {
  if (targets.length === 0) throw new UsageError('fleet run: give at least one target (server.json files or folders, registry list pages, client configs, launch-line files)');
  if (!opts.store) throw new UsageError('fleet run: --store <dir> is required (the folder that keeps fleet.db)');
  const jobs = parseNumber('--jobs', opts.jobs, defaultJobs(), 1, 64);
  const deadlineSec = parseNumber('--deadline', opts.deadline, DEFAULT_DEADLINE_SEC, 1, 86_400, true);
  const fetchRate = parseNumber('--fetch-rate', opts.fetchRate, DEFAULT_FETCH_RATE, 1, 100_000, true);
  const maxAttempts = parseNumber('--attempts', opts.attempts, 2, 1, 10);
  const { runFleet } = await import('../fleet/run.js');
  const summary = await runFleet({
    targets,
    store: opts.store,
    jobs,
    deadlineSec,
    regrade: opts.regrade ?? [],
    callRemotes: opts.callRemotes === true,
    fetchRate,
    maxAttempts,
    ...(opts.transcripts ? { transcripts: opts.transcripts } : {}),
  });
  for (const f of summary.failed) process.stderr.write(`sealmark: fleet job ${f.jobId} could not be run: ${f.error}\n`);
  return summary.failed.length > 0 ? 1 : 0;
}

export interface FleetReportCliOptions {
  store?: string;
  output?: string;
}

/**
 * Runs `sealmark fleet report --store <dir> [--output <dir>]`: reads every record of the store
 * (read-only, so it may run beside a runner) and writes the leaderboard (fleet/board.ts) into
 * `--output`, default `<store>/report`. Prints the index page's path. Resolves to 0; throws
 * UsageError (exit 2) for a missing option or a folder with no store.
 */
export async function runFleetReport(opts: FleetReportCliOptions): Promise<number> {
  if (!opts.store) throw new UsageError('fleet report: --store <dir> is required (the folder that keeps fleet.db)');
  const [{ FleetStore }, { writeLeaderboard }, { join, resolve }] = await Promise.all([import('../fleet/store.js'), import('../fleet/board.js'), import('node:path')]);
  const store = FleetStore.openReadOnly(opts.store);
  let records;
  try {
    records = store.records();
  } finally {
    store.close();
  }
  const out = resolve(opts.output ?? join(opts.store, 'report'));
  const { files } = writeLeaderboard(records, out);
  const servers = new Set(records.map((r) => r.server)).size;
  process.stdout.write(`sealmark: fleet report of ${servers} server${servers === 1 ? '' : 's'} (${records.length} record${records.length === 1 ? '' : 's'}): ${join(out, 'index.html')} (${files.length} files)\n`);
  return 0;
}
