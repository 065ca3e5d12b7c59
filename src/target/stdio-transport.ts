/**
 * A stdio transport that owns its child process, for auditing rather than for use.
 *
 * The SDK's own StdioClientTransport hides what an auditor needs: the exit code and signal, the
 * process group (so `npx` and its grandchildren end together), lines on stdout that are not
 * JSON-RPC (SPEC section 5, `handshake`: "nothing but JSON-RPC on stdout"), and a bound on memory
 * when a server floods stdout. This class implements the SDK's `Transport` interface so the
 * official `Client` still does the handshake and version negotiation over it.
 *
 * Framing follows the MCP stdio binding (2025-11-25 `basic/transports.mdx`): one JSON-RPC message
 * per line, newline-delimited, UTF-8.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Transport, JSONRPCMessage } from '@modelcontextprotocol/client';
import { ProcessTree, TREE_MARK_VAR } from './process-tree.js';
import { randomBytes } from 'node:crypto';


/** ms a server is given to exit by itself once its stdin is closed, before SIGTERM. */
export const STDIN_GRACE_MS = 300;
/**
 * ms a server in a pid namespace of its own (the sandbox) is given after SIGTERM, before SIGKILL
 * ends the namespace: whatever it does then lands in a sandbox that is discarded, and servers that
 * shut down slowly (git-mcp-server takes over 700 ms) would otherwise hold up the end of every audit.
 */
export const SANDBOXED_TERM_GRACE_MS = 100;
/** Bytes of one stdout line kept before it is dropped as oversized (16 MiB). */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
/** Noise lines (non-JSON-RPC stdout) kept as evidence; later ones are only counted. */
const MAX_NOISE_KEPT = 20;
/** Characters of one noise line kept as evidence. */
const NOISE_EXCERPT_CHARS = 200;
/** ms to wait after stdout ends before the connection counts as closed. */
const STDOUT_END_WAIT_MS = 100;
/** ms to wait after the process exits for the rest of its stdout. */
const EXIT_DRAIN_MS = 200;
/** Bytes of stderr kept (the tail is what explains a crash). */
const STDERR_KEEP_BYTES = 64 * 1024;

/** How the child process ended. `null` fields while it runs. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** ms since the transport started. */
  atMs: number;
  /** A server reached by URL: why it can no longer be reached (it has no exit status). */
  lost?: string;
  /**
   * Set when the server refused sealmark in the middle of the audit (a 401 or 403, or the end of
   * its session): the run cannot be judged and ends as not audited.
   */
  cutOff?: 'unauthorized' | 'session-lost';
}

/** A stdout line that was not a JSON-RPC message: evidence for `handshake` and `protocol-errors`. */
export interface NoiseLine {
  /** What was wrong: not JSON at all, JSON but not JSON-RPC, or longer than {@link MAX_LINE_BYTES}. */
  kind: 'not-json' | 'not-jsonrpc' | 'oversized';
  /** The first characters of the line (never the whole of a huge line). */
  excerpt: string;
  /** Length of the line in bytes. */
  bytes: number;
  /** ms since the transport started. */
  atMs: number;
}

/** Transports whose process may still run: ended by {@link killAllTargets} when sealmark is interrupted. */
const live = new Set<AuditStdioTransport>();

/**
 * Sends SIGKILL to the process group of every target still running. Synchronous, so it can run
 * from a signal handler or `process.on('exit')`: sealmark never leaves an orphan behind.
 */
export function killAllTargets(): void {
  for (const t of live) t.killNow();
  live.clear();
}

/** Options for {@link AuditStdioTransport}. */
export interface StdioTargetSpec {
  command: string;
  args: string[];
  /** Full environment of the child (nothing is inherited beyond this). */
  env: Record<string, string>;
  cwd?: string;
  /**
   * The command starts a pid namespace of its own (the sandbox's `unshare --pid --fork
   * --kill-child`): every process the server starts ends with it, so its tree is not tracked
   * through /proc (a look at every process of the machine five times a second, which
   * adds up with many audits at once).
   */
  ownPidNamespace?: boolean;
}

/** Called with every raw JSON-RPC message that crosses the pipe, both ways. */
export type WireTap = (direction: 'send' | 'recv', message: unknown, atMs: number) => void;

/**
 * Transport over a spawned process. `stderr` and `pid` are exposed so that the SDK treats it as
 * stdio-shaped (silence during version negotiation then means a legacy server, not an outage).
 *
 * Errors: `start()` rejects when the command cannot be spawned (ENOENT, EACCES), with the OS error.
 */
export class AuditStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  /** Non-JSON-RPC stdout lines, the first {@link MAX_NOISE_KEPT} of them. */
  readonly noise: NoiseLine[] = [];
  /** Every noise line, counted. */
  noiseCount = 0;
  /** Bytes of noise seen in total. */
  noiseBytes = 0;
  /** Set once the process has ended. */
  exit: ExitInfo | null = null;
  /** Every tap is called for each message both ways. */
  readonly taps: WireTap[] = [];
  /**
   * Called for a line longer than {@link MAX_LINE_BYTES} whose head or tail shows a JSON-RPC id:
   * the reply to that request is dropped, and the wire answers the request with that fact.
   * Returns true when the id belonged to a request in flight (the line is then not noise).
   */
  onOversized?: (id: number, bytes: number) => boolean;
  /** Called with each stdout line that is not JSON (it is also kept as noise). */
  onUnparsed?: (text: string) => void;

  private child?: ChildProcess;
  private readonly startedAt = Date.now();
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private dropping = false;
  private droppedBytes = 0;
  /** The last bytes of a line being dropped (a JSON-RPC id is often serialised last). */
  private tail = '';
  private stderrTail = '';
  private closed = false;
  private reaped = false;
  /** The processes the server started, tracked while it runs (see {@link ProcessTree}). */
  private tree: ProcessTree | undefined;
  private exited?: Promise<void>;

  constructor(readonly spec: StdioTargetSpec) {}

  /** Required by the SDK's stdio detection; the tail of stderr is in {@link stderrText}. */
  get stderr(): NodeJS.ReadableStream | null {
    return this.child?.stderr ?? null;
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** The last {@link STDERR_KEEP_BYTES} of what the server wrote to stderr. */
  get stderrText(): string {
    return this.stderrTail;
  }

  /** ms since start. */
  now(): number {
    return Date.now() - this.startedAt;
  }

  start(): Promise<void> {
    if (this.child) return Promise.resolve();
    return new Promise((resolve, reject) => {
      // detached: the child leads a new process group, so close() can end the whole tree.
      // Every process of the server's tree carries the mark, so that close() finds even a double-forked grandchild.
      const mark = randomBytes(8).toString('hex');
      const child = spawn(this.spec.command, this.spec.args, {
        cwd: this.spec.cwd,
        env: { ...this.spec.env, [TREE_MARK_VAR]: mark },
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: process.platform !== 'win32',
        windowsHide: true,
      });
      this.child = child;
      live.add(this);
      let spawned = false;
      this.exited = new Promise((done) => {
        child.once('exit', (code, signal) => {
          this.exit = { code, signal, atMs: this.now() };
          done();
          // A grandchild may hold stdout open after the server itself exited ('close' then never
          // comes); what the server wrote before exiting has had time to arrive.
          setTimeout(() => this.finish(), EXIT_DRAIN_MS).unref();
        });
        child.once('close', () => live.delete(this));
        child.once('error', () => done());
      });
      child.once('error', (err) => {
        if (!spawned) {
          reject(err);
          return;
        }
        this.onerror?.(err);
      });
      child.once('spawn', () => {
        spawned = true;
        // A grandchild in a session of its own escapes the group kill: track the whole tree,
        // unless a pid namespace ends it anyway.
        if (child.pid && !this.spec.ownPidNamespace) this.tree = new ProcessTree(child.pid, mark);
        resolve();
      });
      child.once('close', () => this.finish());
      child.stdout!.on('data', (chunk: Buffer) => this.onStdout(chunk));
      // Stdout closed while the process lives: nothing more can arrive. (A moment's wait lets the
      // exit status of a process that is ending anyway be known.)
      child.stdout!.once('end', () => setTimeout(() => this.finish(), STDOUT_END_WAIT_MS).unref());
      child.stderr!.on('data', (chunk: Buffer) => {
        this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_KEEP_BYTES);
      });
      // A server that exits stops reading; writing to it then fails with EPIPE, which is evidence
      // (the process exited), not a crash of sealmark.
      child.stdin!.on('error', () => {});
    });
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }

  private onStdout(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) {
        this.accumulate(chunk.subarray(start));
        return;
      }
      this.accumulate(chunk.subarray(start, nl));
      this.endLine();
      start = nl + 1;
    }
  }

  private accumulate(part: Buffer): void {
    if (part.length === 0) return;
    if (this.dropping) {
      this.droppedBytes += part.length;
      this.tail = (this.tail + part.subarray(Math.max(0, part.length - NOISE_EXCERPT_CHARS)).toString('latin1')).slice(-NOISE_EXCERPT_CHARS);
      return;
    }
    if (this.pendingBytes + part.length > MAX_LINE_BYTES) {
      // Keep a short head for the excerpt, drop the rest: a flood must not exhaust memory.
      const head = Buffer.concat(this.pending).subarray(0, NOISE_EXCERPT_CHARS);
      this.pending = [head];
      this.droppedBytes = this.pendingBytes + part.length - head.length;
      this.pendingBytes = head.length;
      this.dropping = true;
      this.tail = part.subarray(Math.max(0, part.length - NOISE_EXCERPT_CHARS)).toString('latin1');
      return;
    }
    // A chunk from the pipe is never reused by Node: keep the view, not a copy.
    this.pending.push(part);
    this.pendingBytes += part.length;
  }

  private endLine(): void {
    const buf = Buffer.concat(this.pending);
    const bytes = this.pendingBytes + this.droppedBytes;
    const wasDropped = this.dropping;
    this.pending = [];
    this.pendingBytes = 0;
    this.dropping = false;
    this.droppedBytes = 0;
    if (wasDropped) {
      const head = buf.toString('utf8');
      const id = /"id"\s*:\s*(\d+)/.exec(head)?.[1] ?? /"id"\s*:\s*(\d+)\s*}\s*$/.exec(this.tail)?.[1];
      this.tail = '';
      if (id !== undefined && this.onOversized?.(Number(id), bytes)) return;
      this.addNoise('oversized', head, bytes);
      return;
    }
    let text = buf.toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      this.addNoise('not-json', text, bytes);
      this.onUnparsed?.(text);
      return;
    }
    if (!isJsonRpcShaped(parsed)) {
      this.addNoise('not-jsonrpc', text, bytes);
      return;
    }
    const at = this.now();
    for (const tap of this.taps) tap('recv', parsed, at);
    this.onmessage?.(parsed as JSONRPCMessage);
  }

  private addNoise(kind: NoiseLine['kind'], text: string, bytes: number): void {
    this.noiseCount += 1;
    this.noiseBytes += bytes;
    if (this.noise.length < MAX_NOISE_KEPT) {
      this.noise.push({ kind, excerpt: text.slice(0, NOISE_EXCERPT_CHARS), bytes, atMs: this.now() });
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const at = this.now();
    for (const tap of this.taps) tap('send', message, at);
    await this.writeLine(JSON.stringify(message));
  }

  /**
   * Writes one line of raw text to the server's stdin, as given (for JSON that `JSON.stringify`
   * cannot produce, such as `NaN` or a duplicate member). The caller has already tapped it.
   */
  writeLine(line: string): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.exit || stdin.destroyed || !stdin.writable) return Promise.resolve();
    return new Promise((resolve) => {
      stdin.write(line + '\n', () => resolve());
    });
  }

  /**
   * Ends the process tree: close stdin (MCP 2025-11-25 lifecycle, stdio shutdown), then SIGTERM
   * to the process group after {@link STDIN_GRACE_MS}, then SIGKILL after `graceMs` more (at most
   * {@link SANDBOXED_TERM_GRACE_MS} for a server in a pid namespace of its own).
   * Resolves once the process has exited. Never rejects. The first wait is short because nothing
   * the server does after its last call is judged (its effects were read before, and its overlay
   * is discarded), and a server with work still under way (a git child that never ends) would
   * otherwise hold every audit up by the whole grace.
   */
  async close(graceMs = 700): Promise<void> {
    const child = this.child;
    if (!child || this.reaped) return;
    this.reaped = true;
    // The last look at the tree, while the server that started it still stands.
    this.tree?.scan();
    if (!this.exit) {
      try {
        child.stdin?.end();
      } catch {
        /* already gone */
      }
      if (!(await this.waitExit(Math.min(graceMs, STDIN_GRACE_MS)))) {
        this.signalGroup('SIGTERM');
        if (!(await this.waitExit(this.spec.ownPidNamespace ? Math.min(graceMs, SANDBOXED_TERM_GRACE_MS) : graceMs))) {
          this.signalGroup('SIGKILL');
          await this.waitExit(graceMs);
        }
      }
    }
    // The leader may be gone while children it started live on in the group, or in sessions of their own.
    this.signalGroup('SIGKILL');
    this.tree?.signalAll('SIGKILL');
    this.tree?.stop();
    live.delete(this);
    child.stdout?.destroy();
    child.stderr?.destroy();
    this.finish();
  }

  /** SIGKILL to the whole process group and every process of the tree seen so far, now (no grace). */
  killNow(): void {
    this.tree?.scan();
    this.signalGroup('SIGKILL');
    this.tree?.signalAll('SIGKILL');
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (!pid) return;
    try {
      if (process.platform === 'win32') this.child?.kill(signal);
      else process.kill(-pid, signal);
    } catch {
      /* the group is already gone */
    }
  }

  private async waitExit(ms: number): Promise<boolean> {
    if (this.exit) return true;
    let timer: NodeJS.Timeout | undefined;
    const done = await Promise.race([
      this.exited!.then(() => true),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(false), ms);
      }),
    ]);
    clearTimeout(timer);
    return done;
  }
}

/** True for an object that has `jsonrpc: "2.0"` and a method or an id (a request, notification or response). */
/**
 * A line that is a JSON-RPC 2.0 message: a request or notification (a `method`), or a response (an
 * `id`). A response with `"id": null` is one only as an error (JSON-RPC 2.0 section 5: null is the
 * id of a request that could not be read); `"id": null` with a `result` answers nothing a client
 * sent, and is stdout noise (a logger that prints JSON-RPC-looking objects).
 */
function isJsonRpcShaped(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  if (v.jsonrpc !== '2.0') return false;
  if (typeof v.method === 'string') return true;
  if (!('id' in v)) return false;
  return !(v.id === null && 'result' in v && !('error' in v));
}
