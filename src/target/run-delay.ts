/**
 * Run-queue delay: how long a task was ready to run but waited for a CPU. Linux keeps it per task
 * in `/proc/<pid>/task/<tid>/schedstat`, whose second field is the delay in ns since the task began
 * (kernel Documentation/scheduler/sched-stats.rst, "/proc/<pid>/schedstat").
 *
 * The hang limit is wall time (SPEC section 3 step 3). On a quiet machine that is the server's own
 * time; on a loaded one (a fleet run at `--jobs 8` on 2 cores) a tool that computes for 3 s can
 * take 12 s of wall time, most of it waiting for a CPU. The wire subtracts the growth of this
 * delay from the time a request has waited, so that one server gets the same verdict on a quiet
 * machine and a busy one (see {@link WireTransport.request}).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Task key (`pid/tid`) → run delay in ns. */
export type RunDelaySample = Map<string, number>;

/** Processes looked at in one sample at most: a server tree is a handful; a fork bomb is not worth reading. */
const MAX_PROCESSES = 64;

/** The first two fields of a schedstat line (`<on-cpu ns> <run-delay ns> <timeslices>`), or undefined. */
function schedstatOf(path: string): [onCpuNs: number, runDelayNs: number] | undefined {
  try {
    const [cpu, delay] = readFileSync(path, 'utf8').split(' ').map(Number);
    return Number.isFinite(cpu) && Number.isFinite(delay) ? [cpu!, delay!] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Calls `visit` with the schedstat figures of every thread of process `rootPid` and of all its
 * descendants (found through `/proc/<pid>/task/<tid>/children`, not a walk of all /proc), keyed
 * `pid/tid`. Visits nothing where /proc has no schedstat (not Linux, a kernel without
 * schedstats) and for `rootPid` undefined or null (a server reached by URL); a process that ends
 * while it is read is left out.
 */
function eachThread(rootPid: number | null | undefined, visit: (task: string, onCpuNs: number, runDelayNs: number) => void): void {
  if (process.platform !== 'linux' || !rootPid) return;
  const queue = [rootPid];
  for (let i = 0; i < queue.length && i < MAX_PROCESSES; i++) {
    const pid = queue[i]!;
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      const figures = schedstatOf(`/proc/${pid}/task/${tid}/schedstat`);
      if (figures) visit(`${pid}/${tid}`, ...figures);
      try {
        for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ')) if (c) queue.push(Number(c));
      } catch {
        // The thread ended between the listing and this read.
      }
    }
  }
}

/**
 * The run delay of every thread of process `rootPid` and of all its descendants (see
 * {@link eachThread}); empty where there is no schedstat or no process.
 *
 * sealmark's own thread is not counted: it is busy with the other instances' calls, and its waits
 * would stretch the limit of a call that merely sleeps (a reply read late was always a hang).
 */
export function sampleRunDelay(rootPid: number | null | undefined): RunDelaySample {
  const out: RunDelaySample = new Map();
  eachThread(rootPid, (task, _cpu, delay) => out.set(task, delay));
  return out;
}

/**
 * The time (ns) the threads of process `rootPid` and its descendants have been runnable, summed:
 * on a CPU or waiting for one (schedstat's first two fields). Its growth over a window tells a
 * server at work from one that waits for input, on a quiet machine and a loaded one alike: a
 * thread that computes is runnable all the time whether or not it gets a CPU. Undefined where
 * there is no schedstat or no process (see {@link eachThread}).
 */
export function sampleRunnableNs(rootPid: number | null | undefined): number | undefined {
  let total: number | undefined;
  eachThread(rootPid, (_task, cpu, delay) => {
    total = (total ?? 0) + cpu + delay;
  });
  return total;
}

/**
 * How much the run delay grew between two samples, in ms: the largest growth of any one task
 * (a task absent from `from` started since, and all of its delay is new). The largest, not the sum:
 * threads wait side by side, so the sum could exceed the time that passed; the most delayed task
 * is the least the work was held up by. 0 when either sample is empty.
 */
export function runDelayGrowthMs(from: RunDelaySample, to: RunDelaySample): number {
  if (from.size === 0 || to.size === 0) return 0;
  let most = 0;
  for (const [task, ns] of to) {
    const before = from.get(task);
    // A smaller figure is a reused pid/tid: a new task, all of whose delay is new.
    const grew = before === undefined || before > ns ? ns : ns - before;
    if (grew > most) most = grew;
  }
  return Math.floor(most / 1e6);
}

/**
 * Share of a limit that run delay must pass before any of it is added to the limit (0.05: 500 ms
 * of a 10 s limit). A call that sleeps through the limit (server-everything's long-running
 * operation, exactly 10 s) accrues tens of ms of run delay on a loaded machine as its timers wake;
 * counted, that would make it answered or a hang by a few ms either way. Computing for seconds
 * beside other jobs accrues seconds, and is what the allowance is for.
 */
export const RUN_DELAY_FLOOR_SHARE = 0.05;

/**
 * How much longer than `limitMs` (ms) to wait for a reply, given run-delay samples taken when the
 * wait began and now: the growth ({@link runDelayGrowthMs}) less {@link RUN_DELAY_FLOOR_SHARE} of
 * the limit, at most the limit itself. 0 on a quiet machine and where there is no schedstat.
 */
export function limitExtensionMs(limitMs: number, from: RunDelaySample, to: RunDelaySample): number {
  const counted = runDelayGrowthMs(from, to) - Math.ceil(limitMs * RUN_DELAY_FLOOR_SHARE);
  return Math.max(0, Math.min(limitMs, counted));
}
