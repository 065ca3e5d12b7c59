/**
 * The sandbox for stdio targets (SPEC section 3, step 1): a scratch working directory and HOME, a
 * scrubbed environment, logging shims first on PATH, and on Linux a network namespace with only
 * loopback (`unshare -rn`). It makes side effects visible: every shim call, every connection to
 * the catch-all proxy listener and every file changed under the scratch folders is an entry of the
 * effect log, read back between calls so each entry is attributed to the call in flight.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, chmodSync, constants, closeSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, readdirSync, renameSync, statfsSync, statSync, watch, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { changesBetween, mountScript, overlayCandidates, overlayPermitted, planOverlay, removeTree, snapshotUppers, upperBase, UPPER_ENTRIES_READ, type OverlayLayer, type UpperSnapshot } from './overlay.js';
import type { StdioTargetSpec } from './stdio-transport.js';
import { TreeWatch } from './tree-watch.js';

/** Commands replaced by logging shims (SPEC section 3; the seed's list plus notify-send and gh). */
export const SHIMMED_COMMANDS = ['open', 'xdg-open', 'osascript', 'curl', 'wget', 'sendmail', 'mail', 'notify-send', 'gh'] as const;

/**
 * ms without an effect event after which the effects of a call whose effects are judged are
 * settled (SPEC section 3: effects are watched as events, not by a fixed wait): counted from the
 * reply, and again from every event that arrives meanwhile.
 */
export const EFFECT_QUIET_MS = 100;
/**
 * ms without an effect event after which a write under way is read as what it left (a lock file held
 * for a few ms and removed, a temp file renamed into place), for a call whose effects are not judged.
 */
export const WRITE_QUIET_MS = 50;
/** Longest wait (ms) after a reply for the effects to go quiet: a server that never stops writing is read then. */
export const EFFECT_LONGEST_WAIT_MS = 2000;
/**
 * ms of quiet the sandbox must have had since the last answered call before a call whose effects
 * blame its tool (a default or filler call to another tool): an effect the call before set off with
 * a delay (a debounced save) then arrives first and is attributed to that call as late, never to
 * the next one.
 */
export const LATE_WINDOW_MS = 500;
/** ms between two looks at the effect log and the upper layers when file events cannot be watched. */
const POLL_MS = 25;
/**
 * ms by which a timer of sealmark's may run late before the time is counted as a stall of the
 * machine in {@link Sandbox.quiet} (a timer is routinely a few ms late).
 */
export const STALL_TOLERANCE_MS = 50;

/** Sets the most MB the overlay's upper layers may hold (a positive number; tests use a small one). */
export const OVERLAY_CAP_ENV = 'SEALMARK_OVERLAY_CAP_MB';
/** Default most bytes of the upper layers (also at most half of /dev/shm's free space at the start). */
const OVERLAY_CAP_BYTES = 1024 * 1024 * 1024;

/** Port of the catch-all proxy listener inside the network namespace (a fresh namespace: always free). */
const PROXY_PORT = 18_089;

/** Most files walked per snapshot (a server that writes more is still caught: its first files change). */
const MAX_SNAPSHOT_FILES = 5000;

/** One observed side effect. */
export interface Effect {
  /** `shim`: a shimmed command ran; `network`: a connection reached the proxy listener, or a reply reported a failed connection; `file`: a file was created, changed or removed. */
  kind: 'shim' | 'network' | 'file';
  /** What happened, e.g. `xdg-open http://127.0.0.1:8767`, `CONNECT hooks.example:443`, `created ~/.notes/last.txt`. */
  detail: string;
  /** For a file seen through the overlay: sizes before and after, the first changed bytes of a text file. */
  summary?: string;
  /**
   * Set when the effect arrived after its call was settled, before the next call of a tool
   * (SPEC section 3: attributed to its call and marked late): ms from the reply to the first effect
   * event of that late batch.
   */
  lateMs?: number;
}

/** The sandbox could not be set up (exit code 2: a usage problem of this machine, not of the server). */
export class SandboxError extends Error {
  override name = 'UsageError';
}

/** Options (SPEC section 7, `sandbox`). */
export interface SandboxOptions {
  /** `off` (default): a network namespace with loopback only, where the system allows it. */
  network: 'on' | 'off';
  /** Put the logging shims first on PATH. */
  shims: boolean;
  /** Keep the scratch folders after the run (their path is in the report). */
  keep: boolean;
}

/** How the target was isolated, for the report. */
export interface Isolation {
  kind: 'sandbox';
  /** `namespace`: loopback only; `host`: the host network (by choice, or because namespaces are not permitted). */
  network: 'namespace' | 'host';
  /**
   * `overlay`: copy-on-write over `protected` (the server's writes never reached those folders);
   * `scratch`: only the scratch HOME and working directory are watched, the server wrote for real.
   */
  filesystem: 'overlay' | 'scratch';
  /** Real folders under copy-on-write (empty without the overlay). */
  protected: string[];
  /** Folders the server could write that were not protected, each with the reason. */
  unprotected: { path: string; why: string }[];
  root: string;
  notes: string[];
}

let namespaceCheck: { ok: boolean; why: string } | undefined;

/** Sandboxes not yet disposed: removed by {@link disposeAllSandboxes} when sealmark is interrupted. */
const liveSandboxes = new Set<Sandbox>();

/** Removes the scratch folders of every sandbox still open (synchronous: for exit and signal handlers). */
export function disposeAllSandboxes(): void {
  for (const s of [...liveSandboxes]) s.dispose();
}

/**
 * How the scratch folders of a sandbox begin: `<prefix><pid>-<random>`, pid being the sealmark
 * process that made them, in the system temp folder, and the control folder in /dev/shm when the
 * overlay is used (see {@link Sandbox.create}).
 */
const SCRATCH_PREFIXES = ['sealmark-sandbox-', 'sealmark-control-'] as const;

/**
 * Removes the sandbox scratch folders (in the system temp folder and /dev/shm) whose maker's pid
 * passes `test`; returns how many. Never throws.
 */
function removeScratchWhere(test: (pid: number) => boolean): number {
  let n = 0;
  for (const dir of new Set([tmpdir(), upperBase().dir].filter((d): d is string => d !== undefined))) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const prefix = SCRATCH_PREFIXES.find((p) => name.startsWith(p));
      const pid = prefix ? Number(/^(\d+)-/.exec(name.slice(prefix.length))?.[1]) : NaN;
      if (!Number.isInteger(pid) || pid <= 0 || !test(pid)) continue;
      removeTree(join(dir, name));
      n++;
    }
  }
  return n;
}

/**
 * Removes the sandbox scratch folders that the sealmark process `pid` made and did not remove:
 * for a process that was killed (SIGKILL at a fleet job's deadline), which ends without disposing
 * of its sandboxes. Their overlay upper layers are in memory (/dev/shm) and stay there until
 * removed. Call it only once `pid` has exited. Returns how many folders were removed; never throws.
 */
export function removeScratchOf(pid: number): number {
  return removeScratchWhere((p) => p === pid);
}

/** True when no process `pid` exists here (ESRCH); a process of another user (EPERM) exists. */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

let swept = false;

/**
 * Once per process, before its first sandbox: removes the scratch folders of sealmark processes
 * that no longer exist (an audit killed with SIGKILL, which could not remove them). Folders of a
 * running sealmark, this one's included, are left alone. Returns how many were removed.
 */
export function sweepOrphanScratch(): number {
  if (swept) return 0;
  swept = true;
  return removeScratchWhere((pid) => pid !== process.pid && gone(pid));
}

/** Whether `unshare -rn` works here (checked once per process). */
export function networkNamespaceAvailable(): { ok: boolean; why: string } {
  if (namespaceCheck) return namespaceCheck;
  if (process.platform !== 'linux') return (namespaceCheck = { ok: false, why: `network namespaces are a Linux feature (this is ${process.platform}); only the shims isolate the server` });
  const r = spawnSync('unshare', ['-rn', '--fork', '--kill-child', 'sh', '-c', 'ip link set lo up'], { encoding: 'utf8', timeout: 5000 });
  if (r.error) return (namespaceCheck = { ok: false, why: `unshare is not available (${(r.error as NodeJS.ErrnoException).code}); the server had the host network` });
  if (r.status !== 0) {
    const first = (r.stderr || '').trim().split('\n')[0] ?? '';
    return (namespaceCheck = { ok: false, why: `user namespaces are not permitted here (unshare -rn: ${first || `exit ${r.status}`}); the server had the host network` });
  }
  return (namespaceCheck = { ok: true, why: '' });
}

/**
 * A file's identity in a snapshot: size and a hash of its content (files up to
 * {@link HASHED_MAX_BYTES}), else size and mtime (ms). A rewrite with the very same bytes (a store
 * that saves on every call, as server-memory does) is no change.
 */
type Snapshot = Map<string, string>;
const HASHED_MAX_BYTES = 1024 * 1024;

/**
 * A point in the effect log ({@link Sandbox.mark}): the log's size and mtime, and the files as
 * they were (the scratch folders' snapshot without the overlay, the upper layers' with it).
 */
export interface EffectMark {
  /** When the mark was taken (ms since the epoch). */
  at: number;
  offset: number;
  logMtimeMs: number;
  /** sha256 of the log's first `offset` bytes (a log rewritten in place, same size and all, is caught). */
  logHash: string;
  files: Snapshot;
  uppers?: UpperSnapshot;
}

export class Sandbox {
  readonly home: string;
  readonly cwd: string;
  /** The server's TMPDIR: a scratch folder of the sandbox (removed with it). */
  readonly tmp: string;
  readonly shimDir: string;
  readonly logPath: string;
  private readonly network: Isolation['network'];
  private readonly notes: string[];
  /** The overlay's layers once {@link Sandbox.wrap} planned them (undefined: no overlay). */
  private layers: OverlayLayer[] | undefined;
  private unprotected: Isolation['unprotected'] = [];
  /** Why there is no overlay (when there is none). */
  private readonly noOverlay: string;
  /**
   * Folders of paths named in the command, its arguments or environment (the server's data) that
   * no overlay layer covers: a write there would be real (see probes/watch.ts writesReachYourFiles).
   */
  namedUnprotected: string[] = [];

  private constructor(
    readonly root: string,
    /** The shims, the effect log and the overlay's upper layers, in a folder no overlay covers. */
    readonly control: string,
    private readonly options: SandboxOptions,
    /** Where the overlay's upper layers go (under `control`), or why there is none. */
    overlay: { base?: string; why: string },
  ) {
    this.home = join(root, 'home');
    this.cwd = join(root, 'work');
    this.tmp = join(root, 'tmp');
    this.shimDir = join(control, 'shims');
    this.logPath = join(control, 'effects.log');
    mkdirSync(this.home);
    mkdirSync(this.cwd);
    mkdirSync(this.tmp);
    mkdirSync(this.shimDir);
    writeFileSync(this.logPath, '');
    if (options.shims) this.writeShims();
    const notes: string[] = [];
    let network: Isolation['network'] = 'host';
    if (options.network === 'off') {
      const ns = networkNamespaceAvailable();
      if (ns.ok) network = 'namespace';
      else notes.push(ns.why);
    } else notes.push('network on (--network on): the server had the host network');
    if (!options.shims) notes.push('shims off: commands such as open and curl ran for real');
    if (options.keep) notes.push(`scratch folders kept at ${root} (shims, effect log and the overlay's upper layers at ${control})`);
    this.network = network;
    this.notes = notes;
    this.overlayBase = overlay.base;
    this.noOverlay = overlay.why;
    liveSandboxes.add(this);
  }

  private readonly overlayBase: string | undefined;

  /** How the target was isolated (read after the start: a layer that failed to mount is named). */
  get isolation(): Isolation {
    const failed = this.failedLayers();
    const layers = (this.layers ?? []).filter((l) => !failed.has(l.lower));
    const unprotected = [...this.unprotected, ...[...failed].map(([path, why]) => ({ path, why: `the overlay did not mount (${why})` }))];
    const notes = [...this.notes, ...(this.watchProblem ? [this.watchProblem] : []), ...(this.overflow ? [this.overflow] : []), ...this.startNote()];
    if (!this.layers) return { kind: 'sandbox', network: this.network, filesystem: 'scratch', protected: [], unprotected, root: this.root, notes: [...notes, ...(this.noOverlay ? [`no copy-on-write filesystem: ${this.noOverlay}; the server could change your files outside its scratch HOME and working directory, and only writes there were seen`] : [])] };
    return { kind: 'sandbox', network: this.network, filesystem: 'overlay', protected: layers.map((l) => l.lower), unprotected, root: this.root, notes };
  }

  /** Layers whose mount failed in the start script (lower → the mount's message). */
  private failedLayers(): Map<string, string> {
    const out = new Map<string, string>();
    if (!this.layers) return out;
    try {
      for (const line of readFileSync(join(this.control, 'mounts'), 'utf8').split('\n')) {
        const [state, lower, why] = line.split('\t');
        if (state === 'fail' && lower) out.set(lower, (why ?? '').trim() || 'unknown error');
      }
    } catch {
      /* not started yet */
    }
    return out;
  }

  /**
   * Creates the scratch folders (under the system temp folder) and the shims.
   * Throws SandboxError when the temp folder cannot be written (a missing or read-only TMPDIR).
   */
  static create(options: SandboxOptions): Sandbox {
    let root: string;
    let control: string;
    // The overlay needs a user namespace and a place for its upper layers that no overlay covers.
    const base = networkNamespaceAvailable().ok ? upperBase() : { why: networkNamespaceAvailable().why };
    sweepOrphanScratch();
    const overlay = base.dir ? overlayPermitted(base.dir) : { ok: false, why: base.why };
    try {
      root = mkdtempSync(join(tmpdir(), `${SCRATCH_PREFIXES[0]}${process.pid}-`));
      control = mkdtempSync(join(overlay.ok ? base.dir! : tmpdir(), `${SCRATCH_PREFIXES[1]}${process.pid}-`));
    } catch (err) {
      throw new SandboxError(`cannot create the sandbox's scratch folders in ${tmpdir()} (${(err as NodeJS.ErrnoException).code ?? String(err)}); set TMPDIR to a writable folder, or use --no-sandbox`);
    }
    return new Sandbox(root, control, options, overlay.ok ? { base: join(control, 'overlay'), why: '' } : { why: overlay.why });
  }

  private writeShims(): void {
    for (const name of SHIMMED_COMMANDS) {
      const path = join(this.shimDir, name);
      // One line per call: "shim<TAB>name args". The log path is quoted for the shell.
      writeFileSync(path, `#!/bin/sh\nprintf 'shim\\t%s\\n' "${name} $*" >> ${shQuote(this.logPath)}\nexit 0\n`);
      chmodSync(path, 0o755);
    }
  }

  /**
   * The spec that starts `command` inside the sandbox (relative paths among the command and its
   * arguments resolved against `from`, the user's directory): scratch cwd and HOME, `env` (already
   * scrubbed by the caller) with PATH prefixed by the shims, npm's cache passed through so that
   * `npx -y` of a cached package starts, and on Linux a user namespace with, where permitted, a
   * network namespace (loopback only, proxy variables pointing at the catch-all listener) and a
   * mount namespace whose overlay makes every folder the server could write copy-on-write
   * ({@link overlayCandidates}). Call it once per sandbox: it plans the overlay.
   */
  wrap(rawCommand: string, rawArgs: string[], env: Record<string, string>, from: string = process.cwd()): StdioTargetSpec {
    // The server starts in the scratch folder: arguments that name files relative to where the
    // user ran sealmark (`node build/server.js`) are made absolute so they still point there.
    const command = absolutize(rawCommand, from, true);
    const args = rawArgs.map((a) => absolutize(a, from, false));
    // Temporary files land in the sandbox too (browsers' profiles, artifacts), and go with it.
    const out: Record<string, string> = { ...env, HOME: this.home, TMPDIR: this.tmp };
    if (this.options.shims) out.PATH = `${this.shimDir}:${env.PATH ?? ''}`;
    out.npm_config_cache = env.npm_config_cache ?? join(homedir(), '.npm');
    out.npm_config_update_notifier = 'false';
    if (!this.overlayBase && this.unprotected.length === 0) {
      // No overlay: every folder it would have covered is open to the server's writes (for the report).
      this.unprotected = overlayCandidates(command, args, env, from, [this.root]).folders.map((path) => ({ path, why: this.noOverlay || 'no copy-on-write filesystem' }));
    }
    if (this.overlayBase && !this.layers) {
      const candidates = overlayCandidates(command, args, env, from, [this.root]);
      const plan = planOverlay(candidates.folders, this.overlayBase, candidates.required);
      this.layers = plan.layers;
      this.unprotected = [...candidates.uncovered, ...plan.uncovered];
      // A named path (the server's data) that no layer covers: its writes would be real.
      const covered = (p: string) => plan.layers.some((l) => p === l.lower || p.startsWith(l.lower + '/'));
      this.namedUnprotected = candidates.named.filter((p) => !covered(p));
      // The upper layers are empty: what the first start-up writes counts from here.
      this.startPoint = this.emptyLayersMark();
    }
    this.startWatching();
    const script: string[] = [];
    if (this.layers) {
      script.push(...mountScript(this.layers, join(this.control, 'mounts')));
      // The shell's working directory was opened before the mounts: enter it again, through them.
      script.push(`cd ${shQuote(this.cwd)} 2>/dev/null`);
    }
    const network = this.network === 'namespace';
    if (network) {
      const proxy = `http://127.0.0.1:${PROXY_PORT}`;
      for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy']) out[k] = proxy;
      // Two levels up from src/target and from dist/target alike: the package root.
      const listener = fileURLToPath(new URL('../../runtime/proxy-listener.mjs', import.meta.url));
      const ready = join(this.control, 'proxy.ready');
      script.push(
        'ip link set lo up 2>/dev/null',
        `${shQuote(process.execPath)} ${shQuote(listener)} ${PROXY_PORT} ${shQuote(this.logPath)} ${shQuote(ready)} </dev/null >/dev/null 2>&1 &`,
        // The server starts once the listener listens (at most 2 s), so its first request is seen.
        `i=0; while [ ! -e ${shQuote(ready)} ] && [ $i -lt 100 ]; do sleep 0.02; i=$((i+1)); done`,
      );
    }
    if (script.length === 0) return { command, args, env: out, cwd: this.cwd };
    // Then run the server as a child of the shell, not as PID 1: PID 1 of a namespace ignores
    // SIGTERM unless it handles it, so the shell stays PID 1 and passes SIGTERM on, and the server
    // keeps the pipe as its stdin.
    script.push(PID1_SCRIPT);
    // -r: a user namespace; -n: the network's; -m: the mounts'. --pid: everything the server
    // starts (even a setsid'd grandchild) ends with the namespace; --kill-child: and the namespace
    // ends if unshare is killed.
    const flags = `-r${network ? 'n' : ''}${this.layers ? 'm' : ''}`;
    return { command: 'unshare', args: [flags, '--pid', '--fork', '--kill-child', 'sh', '-c', script.join('\n'), 'sh', command, ...args], env: out, cwd: this.cwd, ownPidNamespace: true };
  }

  /**
   * Where the effects of the server's start-up count from, until the first call reads them (see
   * {@link Sandbox.mark}); with the overlay only, whose upper layers start empty at every start.
   */
  private startPoint: EffectMark | undefined;
  /** What the server did while starting, before its first call (each start's, in order): effect texts. */
  private startEffects: string[] = [];

  /**
   * Marks the start of a call: effects read by {@link Sandbox.effectsSince} come after this point.
   * The first mark after a start of the server first reads what the start-up itself did (a config
   * file written, a telemetry connection): no call caused it, so it is no call's effect; the
   * report's sandbox line lists it ("while starting, the server …").
   */
  mark(): EffectMark {
    this.endStart();
    this.poll();
    const cutoff = Date.now() - 60_000;
    if (this.eventTimes.length > 0 && this.eventTimes[0]! < cutoff) this.eventTimes = this.eventTimes.filter((t) => t >= cutoff);
    const offset = this.logSize();
    return { at: Date.now(), offset, logMtimeMs: this.logMtime(), logHash: this.logHash(offset), files: this.layers ? new Map() : this.snapshot(), ...(this.layers ? { uppers: snapshotUppers(this.layers, this.identityOf) } : {}) };
  }

  /** sha256 of the effect log's first `length` bytes ('' when it cannot be read). */
  private logHash(length: number): string {
    if (length === 0) return '';
    try {
      const buf = Buffer.alloc(length);
      const fd = openSync(this.logPath, 'r');
      try {
        readSync(fd, buf, 0, length, 0);
      } finally {
        closeSync(fd);
      }
      return createHash('sha256').update(buf).digest('hex');
    } catch {
      return '';
    }
  }

  /** A mark before anything happened (every effect of the run so far comes after it). */
  startMark(): EffectMark {
    return { at: 0, offset: 0, logMtimeMs: -1, logHash: '', files: new Map(), ...(this.layers ? { uppers: new Map() } : {}) };
  }

  /** When the last effect event arrived (ms since the epoch; 0 before the first). */
  private lastEventAt = 0;
  /** When each effect event of the last minute arrived (ms since the epoch), oldest first. */
  private eventTimes: number[] = [];
  private watchers: { close(): void }[] = [];
  /** Why file events could not be watched: then the log and the folders are looked at every {@link POLL_MS}. */
  private watchProblem: string | undefined;
  /** The last state looked at while polling (the fallback to events). */
  private polledState = '';
  /** Bytes of each file of the upper layers as last seen by an event (path relative to the layers' root). */
  private upperSizes = new Map<string, number>();
  private upperBytes = 0;
  /** Why the server was stopped for writing too much (set once; see {@link Sandbox.onOverflow}). */
  overflow: string | undefined;
  /**
   * Called once when the upper layers grow past their cap ({@link OVERLAY_CAP_ENV}, default 1 GiB
   * and at most half of the free space where they live): they are in memory (/dev/shm), so the
   * audit stops the server rather than let it fill the machine's memory. The argument says why.
   */
  onOverflow?: (why: string) => void;

  /** Most bytes the upper layers may hold (see {@link Sandbox.onOverflow}). */
  private capBytes(): number {
    const asked = Number(process.env[OVERLAY_CAP_ENV]);
    if (Number.isFinite(asked) && asked > 0) return asked * 1024 * 1024;
    try {
      const st = statfsSync(this.overlayBase!);
      return Math.min(OVERLAY_CAP_BYTES, Math.floor((st.bavail * st.bsize) / 2));
    } catch {
      return OVERLAY_CAP_BYTES;
    }
  }
  private cap = 0;

  /** Counts a changed file of the upper layers against the cap (`name` relative to the layers' root). */
  private sized(uppers: string, name: string): void {
    if (this.overflow || name === '') return;
    let size = 0;
    try {
      const st = lstatSync(join(uppers, name));
      if (st.isFile()) size = st.size;
    } catch {
      /* removed: counts nothing */
    }
    this.upperBytes += size - (this.upperSizes.get(name) ?? 0);
    if (size > 0) this.upperSizes.set(name, size);
    else this.upperSizes.delete(name);
    if (this.upperBytes <= this.cap) return;
    const mb = (n: number) => Math.round(n / 1024 / 1024);
    this.overflow = `the server wrote more than ${mb(this.cap)} MB into the sandbox's copy-on-write layer (${mb(this.upperBytes)} MB, held in memory in ${this.overlayBase}); sealmark stopped it there (${OVERLAY_CAP_ENV} sets the limit)`;
    this.onOverflow?.(this.overflow);
  }

  /** Records one effect event (a change of the log or of a watched folder) at the current time. */
  private event(): void {
    const now = Date.now();
    this.lastEventAt = now;
    this.eventTimes.push(now);
  }

  /**
   * Starts watching the effect log and the folders writes land in (the overlay's upper layers, or
   * without the overlay the scratch folders) for events (inotify through `fs.watch`). Changes under
   * the server's TMPDIR and the package caches are not effects and are no events. A watch that
   * fails (no inotify watches left) falls back to looking every {@link POLL_MS} while waiting.
   */
  private startWatching(): void {
    if (this.watchers.length > 0 || this.watchProblem) return;
    const ignored = this.ignoredPrefixes();
    const onError = (err: Error) => {
      this.watchProblem = `file events could not be watched (${(err as NodeJS.ErrnoException).code ?? err.message}); the sandbox looked every ${POLL_MS} ms instead`;
      this.stopWatching();
    };
    try {
      this.watchers.push(watch(this.logPath, { persistent: false }, () => this.event()).on('error', onError));
      if (this.layers && this.overlayBase) {
        const layers = this.layers;
        const uppers = join(this.overlayBase, 'upper');
        if (this.cap === 0) this.cap = this.capBytes();
        this.watchers.push(
          new TreeWatch(uppers, {
            onChange: (name) => {
              // `name` is `<layer>/<path inside it>`: the real path is the layer's lower folder joined with the rest.
              const [i, ...rest] = name.split('/');
              const lower = layers[Number(i)]?.lower;
              const real = lower === undefined ? '' : join(lower, ...rest);
              // Everything in the upper layers takes memory, the server's TMPDIR and caches too.
              this.sized(uppers, name);
              if (!ignored.some((p) => real.startsWith(p))) this.event();
            },
            onError,
          }),
        );
      } else {
        // The server's TMPDIR and the package caches are not even watched: their changes are no events.
        const skipped = (name: string) => ignored.includes(join(this.root, name) + '/');
        this.watchers.push(new TreeWatch(this.root, { onChange: () => this.event(), onError, skip: skipped }));
      }
    } catch (err) {
      onError(err as Error);
    }
  }

  private stopWatching(): void {
    for (const w of this.watchers) w.close();
    this.watchers = [];
  }

  /** Folders (with a trailing slash) whose changes are not the server's effects: its TMPDIR and the package caches. */
  private ignoredPrefixes(): string[] {
    return [this.tmp, join(this.home, '.npm'), join(this.home, '.cache'), this.npmCache].map((p) => p + '/');
  }

  /**
   * Without file events (see {@link Sandbox.startWatching}): compares the effect log's size and the
   * watched files with the last look, and records a change as an event. With events it does nothing.
   */
  private poll(): void {
    if (!this.watchProblem) return;
    const files = this.layers ? [...snapshotUppers(this.layers, this.identityOf)].map(([p, e]) => `${p}\u0000${e.id}`) : [...this.snapshot()].map(([p, id]) => `${p}\u0000${id}`);
    const state = `${this.logSize()}\n${files.join('\n')}`;
    if (state !== this.polledState) {
      if (this.polledState !== '') this.event();
      this.polledState = state;
    }
  }

  /** Whether an effect event arrived after `t` (ms since the epoch). */
  eventsSince(t: number): boolean {
    this.poll();
    return this.lastEventAt > t;
  }

  /** The first effect event after `t` (ms since the epoch), if any arrived in the last minute. */
  firstEventAfter(t: number): number | undefined {
    return this.eventTimes.find((e) => e > t);
  }

  /**
   * Waits until no effect event has arrived for `quietMs`, counted from `from` (ms since the epoch,
   * usually the reply) and again from each event after it, and at most until `from + maxMs`. Event
   * driven: it sleeps until the quiet period would end and looks again only then (every
   * {@link POLL_MS} when events cannot be watched). Resolves to the ms it waited.
   *
   * Two rules keep it right on a loaded machine: before it calls the sandbox quiet it lets the event
   * loop read what is already pending (an inotify event or a log line that came while sealmark was
   * not scheduled is read first, not after the next call is sent); and a sleep from which its own
   * timer woke more than {@link STALL_TOLERANCE_MS} late was a stall nobody watched (the server was
   * likely held up too), so the quiet period starts again when it ends, and the longest wait grows
   * by the stall (at most doubling it).
   */
  async quiet(from: number, quietMs: number, maxMs = EFFECT_LONGEST_WAIT_MS): Promise<number> {
    const began = Date.now();
    let stalled = 0;
    let restart = 0;
    let drained = false;
    for (;;) {
      this.poll();
      const end = from + maxMs + Math.min(stalled, maxMs);
      const due = Math.min(Math.max(from, this.lastEventAt, restart) + quietMs, end);
      const now = Date.now();
      if (now >= due) {
        if (drained) return now - began;
        drained = true;
        // The check phase (setImmediate) comes after the poll phase; from inside a poll phase the
        // first one runs before another poll, so the second is the one that follows a poll: what the
        // kernel already holds for us is read by then.
        await new Promise((r) => setImmediate(r));
        await new Promise((r) => setImmediate(r));
        continue;
      }
      drained = false;
      const sleep = this.watchProblem ? Math.min(POLL_MS, due - now) : due - now;
      await new Promise((r) => setTimeout(r, sleep));
      const woke = Date.now();
      if (woke - now - sleep > STALL_TOLERANCE_MS) {
        stalled += woke - now;
        restart = woke;
      }
    }
  }

  /**
   * Gives the next start of the server a fresh state (SPEC section 3 step 3: a server that exited is
   * started again with fresh sandbox state): the overlay's upper layers so far are moved aside with
   * `--keep-sandbox` (as `upper.1`, `work.1`, … for inspection) and removed otherwise (they live in
   * memory, in /dev/shm, and the next start would add to them), and the next start mounts empty ones,
   * so it sees the user's files as they are, not what the exited start wrote. Effects read after this
   * count from {@link Sandbox.startMark}. Without the overlay there is nothing to move: the scratch
   * folders keep what was written.
   */
  freshStart(): void {
    if (!this.layers || !this.overlayBase) return;
    this.stopWatching();
    this.starts += 1;
    for (const d of ['upper', 'work']) {
      const dir = join(this.overlayBase, d);
      if (!this.options.keep) removeTree(dir);
      else {
        try {
          renameSync(dir, join(this.overlayBase, `${d}.${this.starts}`));
        } catch {
          /* not there: nothing was written */
        }
      }
    }
    for (const l of this.layers) {
      mkdirSync(l.upper, { recursive: true });
      mkdirSync(l.work, { recursive: true });
    }
    this.hashes.clear();
    this.upperSizes.clear();
    this.upperBytes = 0;
    this.startPoint = this.emptyLayersMark();
    this.startWatching();
  }

  /**
   * Ends the start-up of the server (its handshake and listing are done): what it did since it was
   * started is read and kept for the sandbox line (see {@link Sandbox.mark}). Called once a start
   * is open, and by the first mark after a start; does nothing the second time.
   */
  endStart(): void {
    if (!this.layers || !this.startPoint) return;
    const read = this.readSince(this.startPoint);
    this.startPoint = undefined;
    for (const e of read.effects) {
      const text = `${e.kind}: ${e.detail}${e.summary ? ` (${e.summary})` : ''}`;
      if (!this.startEffects.includes(text)) this.startEffects.push(text);
    }
  }

  /** A mark of this moment of the effect log, with the upper layers as they are before a start: empty. */
  private emptyLayersMark(): EffectMark {
    const offset = this.logSize();
    return { at: Date.now(), offset, logMtimeMs: this.logMtime(), logHash: this.logHash(offset), files: new Map(), uppers: new Map() };
  }

  /** The note on what the server did while starting (up to three effects named), or none. */
  private startNote(): string[] {
    const all = this.startEffects;
    if (all.length === 0) return [];
    const more = all.length > 3 ? ` and ${all.length - 3} more` : '';
    return [`while starting, before any call, the server did: ${all.slice(0, 3).join('; ')}${more} (in the copy-on-write layer; no call is blamed for it)`];
  }

  /** Starts of the server after the first (each with fresh upper layers, see {@link Sandbox.freshStart}). */
  private starts = 0;

  /** Why effects were polled rather than watched as events, for the report's notes (undefined: watched). */
  get eventProblem(): string | undefined {
    return this.watchProblem;
  }

  private logMtime(): number {
    try {
      return statSync(this.logPath).mtimeMs;
    } catch {
      return -1;
    }
  }

  /** Effects since `mark` (shim calls, proxy connections, file changes), in the order seen. */
  effectsSince(mark: EffectMark): Effect[] {
    return this.readSince(mark).effects;
  }

  /**
   * Effects since `mark` (see {@link Sandbox.effectsSince}) and the mark of this moment, read from
   * the same look at the log and the files (effects after it count from `point`).
   */
  readSince(mark: EffectMark): { effects: Effect[]; point: EffectMark } {
    this.poll();
    const at = Date.now();
    const out: Effect[] = [];
    // The server runs as the same user and could reach the log. The log only ever grows: one that
    // shrank, or was written without growing, was tampered with.
    const size = this.logSize();
    const logMtimeMs = this.logMtime();
    if (size < mark.offset || (size === mark.offset && logMtimeMs !== mark.logMtimeMs)) {
      out.push({ kind: 'file', detail: 'the effect log was truncated during the call: evidence was erased' });
    } else if (mark.offset > 0 && this.logHash(mark.offset) !== mark.logHash) {
      out.push({ kind: 'file', detail: 'the effect log was rewritten during the call: evidence was erased' });
    }
    let foreign = false;
    for (const line of this.readLog(mark.offset, size)) {
      const tab = line.indexOf('\t');
      const kind = tab > 0 ? line.slice(0, tab) : '';
      if (kind === 'shim' || kind === 'network') out.push({ kind, detail: line.slice(tab + 1) });
      else foreign = true;
    }
    // Every line sealmark's shims and listener write starts with its kind: anything else was put there.
    if (foreign) out.push({ kind: 'file', detail: 'the effect log holds lines sealmark did not write: evidence was altered' });
    if (this.layers) {
      const uppers = snapshotUppers(this.layers, this.identityOf);
      out.push(...this.overlayEffects(mark.uppers ?? new Map(), uppers));
      // Past the cap the snapshots compare only the first entries: say so, once, on the call that crossed it.
      if (uppers.truncated && !mark.uppers?.truncated) {
        out.push({ kind: 'file', detail: `wrote more than ${UPPER_ENTRIES_READ} files and folders: sealmark compares that many, so writes after them may be missed` });
      }
      return { effects: out, point: { at, offset: size, logMtimeMs, logHash: this.logHash(size), files: new Map(), uppers } };
    }
    const after = this.snapshot();
    for (const [path, id] of after) {
      if (!mark.files.has(path)) out.push({ kind: 'file', detail: `created ${path}` });
      else if (mark.files.get(path) !== id) out.push({ kind: 'file', detail: `changed ${path}` });
    }
    for (const path of mark.files.keys()) if (!after.has(path)) out.push({ kind: 'file', detail: `removed ${path}` });
    return { effects: out, point: { at, offset: size, logMtimeMs, logHash: this.logHash(size), files: after } };
  }

  /**
   * The writes the overlay's upper layers gained from `before` to `after`, as effects with the path
   * as the user knows it (`~/…` and `./…` for the scratch HOME and working directory, the real path
   * elsewhere). The server's own TMPDIR and the package caches are not effects.
   */
  private overlayEffects(before: UpperSnapshot, after: UpperSnapshot): Effect[] {
    const layers = this.layers!;
    const ignored = this.ignoredPrefixes();
    const shown = (p: string) => (p.startsWith(this.home + '/') ? `~/${p.slice(this.home.length + 1)}` : p.startsWith(this.cwd + '/') ? `./${p.slice(this.cwd.length + 1)}` : p);
    const out: Effect[] = [];
    for (const c of changesBetween(layers, before, after)) {
      if (ignored.some((i) => c.path.startsWith(i) || (c.to ?? '').startsWith(i))) continue;
      const detail = c.action === 'renamed' ? `renamed ${shown(c.path)} → ${shown(c.to!)}` : `${c.action} ${shown(c.path)}`;
      out.push({ kind: 'file', detail, summary: c.summary });
    }
    return out;
  }

  /** npm's cache as the server sees it (its bookkeeping when npx starts a package is not the server's doing). */
  private get npmCache(): string {
    return process.env.npm_config_cache ?? join(homedir(), '.npm');
  }

  private logSize(): number {
    try {
      return statSync(this.logPath).size;
    } catch {
      return 0;
    }
  }

  private readLog(from: number, size = this.logSize()): string[] {
    if (size <= from) return [];
    const len = Math.min(size - from, 1024 * 1024);
    const buf = Buffer.alloc(len);
    const fd = openSync(this.logPath, 'r');
    try {
      readSync(fd, buf, 0, len, from);
    } finally {
      closeSync(fd);
    }
    return buf.toString('utf8').split('\n').filter((l) => l !== '');
  }

  /**
   * Content hashes by path, reused while size, mtime and ctime stay the same (ctime too: a writer
   * that sets mtime back with utimes still moves ctime, so its same-size rewrite is hashed again).
   */
  private hashes = new Map<string, { stamp: string; id: string }>();

  /** {@link Sandbox.identity} as a function of a path and its stat, for the overlay's snapshots. */
  private readonly identityOf = (full: string, st: { size: number; mtimeMs: number; ctimeMs: number }): string => this.identity(full, st.size, st.mtimeMs, st.ctimeMs);

  private identity(full: string, size: number, mtimeMs: number, ctimeMs: number): string {
    if (size > HASHED_MAX_BYTES) return `${size}:${mtimeMs}`;
    const stamp = `${size}:${mtimeMs}:${ctimeMs}`;
    const seen = this.hashes.get(full);
    if (seen?.stamp === stamp) return seen.id;
    let id = `${size}:${mtimeMs}`;
    try {
      id = `${size}:${createHash('sha256').update(readFileSync(full)).digest('hex')}`;
    } catch {
      /* unreadable: size and mtime */
    }
    this.hashes.set(full, { stamp, id });
    return id;
  }

  /** Files under the scratch HOME and working directory, as `~/path` and `./path`, with their identity (see {@link Snapshot}). */
  private snapshot(): Snapshot {
    const out: Snapshot = new Map();
    const walk = (dir: string, shown: string) => {
      let entries: string[];
      try {
        entries = readdirSync(dir);
      } catch {
        return;
      }
      for (const name of entries) {
        if (out.size >= MAX_SNAPSHOT_FILES) return;
        // npm's own bookkeeping when npx starts a package is not the server's doing.
        if (shown === '~' && (name === '.npm' || name === '.cache')) continue;
        const full = join(dir, name);
        try {
          const st = statSync(full);
          if (st.isDirectory()) walk(full, `${shown}/${name}`);
          else out.set(`${shown}/${name}`, this.identity(full, st.size, st.mtimeMs, st.ctimeMs));
        } catch {
          /* gone meanwhile */
        }
      }
    };
    walk(this.home, '~');
    walk(this.cwd, '.');
    return out;
  }

  /** Removes the scratch folders unless `keep` was asked for. Never throws. */
  dispose(): void {
    liveSandboxes.delete(this);
    this.stopWatching();
    if (this.options.keep) return;
    for (const dir of [this.root, this.control]) removeTree(dir);
  }
}

/**
 * `arg` made absolute against `from` when it is a relative path to something that exists there
 * (a command only when it has a slash: a bare name is looked up on PATH). Options and other words
 * are left as they are.
 */
function absolutize(arg: string, from: string, isCommand: boolean): string {
  if (arg === '' || arg.startsWith('-') || isAbsolute(arg) || (isCommand && !arg.includes('/'))) return arg;
  const full = resolve(from, arg);
  return existsSync(full) ? full : arg;
}

function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The absolute path `command` resolves to on `path` (a PATH string), or undefined. */
export function findExecutable(command: string, path = '', from: string = process.cwd()): string | undefined {
  // A path (`./run.sh`, `bin/server`) is relative to where the server starts, not to sealmark's cwd.
  const candidates = command.includes('/') ? [isAbsolute(command) ? command : resolve(from, command)] : path.split(':').filter(Boolean).map((d) => join(d, command));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      if (statSync(c).isFile()) return c;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/**
 * How to start `command`: inside `sandbox` when there is one, else as given in `cwd`. A command
 * that cannot be found is started bare even with a sandbox, so that it fails as itself
 * (spawn-failed), not as an exit of the sandbox's wrapper.
 */
export function startSpec(sandbox: Sandbox | undefined, command: string, args: string[], env: Record<string, string>, cwd?: string): StdioTargetSpec {
  if (!findExecutable(command, env.PATH, cwd)) return { command, args, env, cwd };
  if (sandbox) return sandbox.wrap(command, args, env, cwd);
  // Without the sandbox (--no-sandbox) the server runs as it is: its tree is ended by the group kill
  // and the tracker (src/target/process-tree.ts), not by a pid namespace, whose unshare would hold
  // the stdout pipe (a server that closes its stdout would then look silent, not gone).
  return { command, args, env, cwd };
}

/**
 * The shell that stands as PID 1 of a pid namespace and runs the server as its child (PID 1 ignores
 * SIGTERM unless it handles it, so the shell passes it on), keeping the pipe as the server's stdin.
 */
const PID1_SCRIPT = [
  'exec 3<&0',
  '"$@" <&3 3<&- & pid=$!',
  'exec 3<&-',
  "trap 'kill -TERM $pid 2>/dev/null' TERM INT HUP",
  'while :; do wait $pid; st=$?; kill -0 $pid 2>/dev/null || exit $st; done',
].join('\n');
