/**
 * The processes a target started, tracked while it runs (SPEC section 3 step 4: no orphan
 * processes). A process-group kill misses a grandchild that started a session of its own (`setsid`,
 * a daemonising server); inside the sandbox the pid namespace ends it, but with `--no-sandbox`, or
 * where namespaces are not permitted, only tracking finds it. On Linux the tracker reads /proc now
 * and then and remembers every descendant of the target (pid and start time, so that a reused pid
 * is never signalled); at close every one still alive is killed, and so is every process of this
 * user whose environment carries the tree's mark ({@link TREE_MARK_VAR}, set in the server's
 * environment and inherited by all it starts): a double fork re-parents a grandchild to init
 * before any look at /proc can see its parent.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The environment variable that marks every process of one target's tree. */
export const TREE_MARK_VAR = 'SEALMARK_TREE';

/** ms between two looks at /proc while the target runs. */
export const TREE_SCAN_MS = 200;

/** pid → start time (clock ticks since boot, field 22 of /proc/<pid>/stat). */
type Seen = Map<number, string>;

/** `[ppid, starttime]` of a process from /proc/<pid>/stat, or undefined when it is gone. */
function statOf(pid: number): [number, string] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: read after the last ')'.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return [Number(rest[1]), rest[19] ?? ''];
  } catch {
    return undefined;
  }
}

/**
 * The start time of process `pid` (clock ticks since boot, /proc/<pid>/stat field 22), or
 * undefined when it is gone or this is not Linux. With the pid it names one process for good: a
 * pid is reused, a (pid, start time) pair is not.
 */
export function processStartTime(pid: number): string | undefined {
  return process.platform === 'linux' ? statOf(pid)?.[1] : undefined;
}

/** pid → its children (pid and start time), from one pass over /proc. */
type ChildrenOf = Map<number, { pid: number; start: string }[]>;

/** One pass over /proc: every process by its parent, or undefined when /proc cannot be read. */
function childrenNow(): ChildrenOf | undefined {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const children: ChildrenOf = new Map();
  for (const n of names) {
    const pid = Number(n);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const st = statOf(pid);
    if (!st) continue;
    const list = children.get(st[0]) ?? [];
    list.push({ pid, start: st[1] });
    children.set(st[0], list);
  }
  return children;
}

/**
 * The trees being tracked, and the one timer that looks at /proc for all of them: one pass every
 * {@link TREE_SCAN_MS} whatever their number (a fleet runner tracks one tree per running job).
 */
const tracked = new Set<ProcessTree>();
let ticker: NodeJS.Timeout | undefined;

function tick(): void {
  const children = childrenNow();
  if (children) for (const t of tracked) t.record(children);
}

/** Tracks the descendants of one process (Linux only; elsewhere it does nothing). */
export class ProcessTree {
  private readonly seen: Seen = new Map();

  /**
   * `root`: the target's pid; `mark`: the value of {@link TREE_MARK_VAR} in its environment (its
   * descendants carry it too, whoever their parent is now).
   */
  constructor(
    private readonly root: number,
    private readonly mark?: string,
  ) {
    if (process.platform !== 'linux') return;
    this.scan();
    tracked.add(this);
    if (!ticker) {
      ticker = setInterval(tick, TREE_SCAN_MS);
      ticker.unref();
    }
  }

  /** Records every process whose parent is the root or a process recorded before (one pass over /proc). */
  scan(): void {
    if (process.platform !== 'linux') return;
    const children = childrenNow();
    if (children) this.record(children);
  }

  /** Records the descendants `children` (from {@link childrenNow}) shows. */
  record(children: ChildrenOf): void {
    const queue = [this.root, ...this.seen.keys()];
    while (queue.length > 0) {
      const parent = queue.shift()!;
      for (const c of children.get(parent) ?? []) {
        if (this.seen.get(c.pid) === c.start) continue;
        this.seen.set(c.pid, c.start);
        queue.push(c.pid);
      }
    }
  }

  /** Processes whose environment carries this tree's mark (those of other users cannot be read, and are not ours). */
  private marked(): number[] {
    if (!this.mark || process.platform !== 'linux') return [];
    const needle = Buffer.from(`\0${TREE_MARK_VAR}=${this.mark}\0`);
    const first = Buffer.from(`${TREE_MARK_VAR}=${this.mark}\0`);
    const out: number[] = [];
    let names: string[];
    try {
      names = readdirSync('/proc');
    } catch {
      return out;
    }
    for (const n of names) {
      const pid = Number(n);
      if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
      try {
        const env = readFileSync(`/proc/${pid}/environ`);
        if (env.includes(needle) || env.subarray(0, first.length).equals(first)) out.push(pid);
      } catch {
        /* gone, or not ours */
      }
    }
    return out;
  }

  /** Stops looking (the target is closed). */
  stop(): void {
    tracked.delete(this);
    if (tracked.size === 0 && ticker) {
      clearInterval(ticker);
      ticker = undefined;
    }
  }

  /** Sends `signal` to every recorded process still alive with the start time it had (never a reused pid), and to every marked one. */
  signalAll(signal: NodeJS.Signals): void {
    for (const pid of this.marked()) {
      try {
        process.kill(pid, signal);
      } catch {
        /* gone meanwhile */
      }
    }
    for (const [pid, start] of this.seen) {
      if (statOf(pid)?.[1] !== start) {
        this.seen.delete(pid);
        continue;
      }
      try {
        process.kill(pid, signal);
      } catch {
        /* gone meanwhile */
      }
    }
  }
}
