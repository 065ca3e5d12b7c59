/**
 * The wire: sealmark's own request layer over an SDK transport.
 *
 * The official `Client` negotiates the protocol over this transport; every probe after that is sent
 * here, so that arguments go out verbatim, the exact bytes are recorded, and any reply (however
 * malformed) comes back as a {@link Reply} value instead of an exception (SPEC section 3, step 2;
 * STYLE "errors are values at the edges").
 */
import type { Transport, JSONRPCMessage } from '@modelcontextprotocol/client';
import { MAX_LINE_BYTES, type ExitInfo } from './stdio-transport.js';
import { limitExtensionMs, sampleRunDelay, sampleRunnableNs, type RunDelaySample } from './run-delay.js';
import type { AuditTransport } from './transport.js';

/** A JSON-RPC error object as received (fields not checked: a server may send anything). */
export interface WireError {
  code: unknown;
  message: unknown;
  data?: unknown;
}

/**
 * What came back for one request.
 * - `response`: a JSON-RPC response with our id; `result` or `error` as sent (never validated).
 * - `malformed`: a response with our id that breaks JSON-RPC (both or neither of result/error,
 *   a non-numeric error code); `problem` says which.
 * - `hang`: nothing within `waitedMs` (the limit) of the server's time; `runDelayMs`, when present,
 *   is the time beyond it that the server's threads spent waiting for a CPU and that was not
 *   counted (see {@link WireTransport.request}).
 * - `exited`: the process ended or the connection closed first.
 */
export type Reply =
  | { kind: 'response'; result?: unknown; error?: WireError; raw: unknown }
  | { kind: 'malformed'; problem: string; raw: unknown }
  | { kind: 'hang'; waitedMs: number; runDelayMs?: number }
  | { kind: 'exited'; exit: ExitInfo | null };

/** One request sent and what came back. Times in ms since the session started. */
export interface Exchange {
  id: number;
  method: string;
  /** The params as sent (absent when the request had none). */
  params?: unknown;
  /** The exact line written to the server. */
  sent: string;
  reply: Reply;
  startedAtMs: number;
  durationMs: number;
}

interface Pending {
  resolve: (reply: Reply) => void;
  timer: NodeJS.Timeout;
  /** Sent with raw JSON text spliced in: a parse-error reply (id null) may be its answer. */
  raw: boolean;
  /**
   * When the hang limit runs out (the transport's clock, ms since the session started), as far as
   * is known: the limit after the send, plus the run delay counted so far.
   */
  deadlineMs: number;
  /** Adds the run delay that has grown since the send to {@link Pending.deadlineMs} (up to its cap). */
  extend: () => void;
  /** Gives up on the request as a hang (the timer's own action, run early when a reply is late). */
  expire: () => void;
}

/**
 * A run-delay sample younger than this (ms) is reused as the start of a new request: requests come
 * by the hundred, a sample reads a few dozen /proc files, and an older start can only overstate
 * the delay by what grew in this window.
 */
const BASELINE_REUSE_MS = 100;

/**
 * Share of a window a server's threads must be runnable in for {@link WireTransport.atWork} (0.25:
 * 50 ms of 200). An idle Node or Python server wakes for a few ms at most; one computing is
 * runnable for the whole window, or more with several threads.
 */
const AT_WORK_SHARE = 0.25;

/** A later deadline nearer than this (ms) is not worth another timer: the request is a hang. */
const MIN_EXTENSION_MS = 20;

/** Options of {@link WireTransport.request}. */
export interface RequestOptions {
  /**
   * Raw JSON text put on the wire in place of a marker: `params` is serialised, and the string
   * value `marker` (quoted, as JSON.stringify writes it) is replaced by `text` verbatim. This is how
   * sealmark sends what JSON.stringify cannot write (`NaN`, `1.0`, `1e309`, a duplicate member).
   * The marker must occur exactly once in the serialised params.
   */
  splice?: { marker: string; text: string };
  /**
   * Stop waiting when this signal aborts: the request is settled as a `hang` after the time
   * waited so far and a `notifications/cancelled` is sent, as at the hang limit; a reply that
   * still comes later is kept in {@link WireTransport.lateResponses}.
   */
  signal?: AbortSignal;
}

/** First id of the wire's own requests; the SDK's Protocol counts up from 0, so they never meet. */
export const FIRST_WIRE_ID = 100_000;

/**
 * Wraps an inner transport: the SDK `Client` connects to this object; replies to the wire's own
 * requests are kept here and never reach the Client.
 */
export class WireTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  setProtocolVersion?: (version: string) => void;

  private nextId = FIRST_WIRE_ID;
  private readonly pending = new Map<number, Pending>();
  /**
   * Responses whose id matched no request in flight, after the handshake (a wrong id, a second
   * answer to one id, or an answer to a notification). `atMs` is ms since the session started.
   */
  readonly strayResponses: { atMs: number; message: unknown }[] = [];
  /** Ids of wire requests already answered (a later response with one of them is a duplicate). */
  private readonly answered = new Set<number>();
  /** Ids of requests sealmark stopped waiting for (the hang limit, or {@link RequestOptions.signal}). */
  private readonly abandoned = new Set<number>();
  /** Of those, the ones sent with raw text, oldest first: an id-null parse error may still answer them. */
  private abandonedRaw: number[] = [];
  /**
   * Replies to requests sealmark had stopped waiting for, that came after all (a slow tool, an
   * answer after `notifications/cancelled`). Not strays: the id was asked for. `atMs` is ms since
   * the session started; `id` is the request answered (for an id-null parse error, the raw line
   * it was matched to; `message` is always as the server sent it).
   */
  readonly lateResponses: { atMs: number; message: unknown; id: number }[] = [];
  /** How many requests sealmark stopped waiting for are still unanswered: the server may be at work on them. */
  get abandonedCount(): number {
    return this.abandoned.size;
  }
  /** Late answers (see {@link WireTransport.lateResponses}) past the line limit, dropped unread. */
  readonly lateOversized: { atMs: number; id: number; bytes: number }[] = [];
  /** Set by the session once the SDK client has finished the handshake; from then on every response is the wire's. */
  handshakeDone = false;
  /** The `_meta` envelope the Client attached to its requests (2026-07-28 era); reused on ours. */
  envelope: Record<string, unknown> | undefined;
  private closedFlag = false;
  private lastRunDelay: { atMs: number; sample: RunDelaySample } | undefined;

  constructor(readonly inner: AuditTransport) {
    // The SDK treats a transport with `stderr` and `pid` as stdio-shaped during negotiation; only
    // the stdio transport has them.
    if ('pid' in inner) {
      Object.defineProperty(this, 'stderr', { get: () => (inner as unknown as { stderr: unknown }).stderr, enumerable: true });
      Object.defineProperty(this, 'pid', { get: () => (inner as unknown as { pid: unknown }).pid, enumerable: true });
    }
    // The negotiated version reaches the transport (HTTP sends it as a header).
    this.setProtocolVersion = (v: string) => inner.setProtocolVersion?.(v);
    inner.taps.push((direction, message) => {
      if (direction !== 'send' || this.handshakeDone) return;
      const meta = (message as { params?: { _meta?: Record<string, unknown> } }).params?._meta;
      if (meta && Object.keys(meta).some((k) => k.endsWith('/protocolVersion'))) this.envelope = meta;
    });
    inner.onmessage = (message) => this.route(message);
    inner.onOversized = (id, bytes) => {
      if (this.abandoned.has(id)) {
        // A late answer to a request sealmark stopped waiting for, too long to read: it was asked
        // for, so it is neither stdout noise nor a stray; the call stays a hang.
        this.abandoned.delete(id);
        this.abandonedRaw = this.abandonedRaw.filter((x) => x !== id);
        this.answered.add(id);
        this.lateOversized.push({ atMs: this.inner.now(), id, bytes });
        return true;
      }
      if (!this.pending.has(id)) return false;
      this.settle(id, { kind: 'malformed', problem: `reply of ${bytes} bytes exceeds the ${MAX_LINE_BYTES} byte line limit and was dropped unread`, raw: null });
      return true;
    };
    // A stdout line that is not JSON but names a waiting request's id (a BOM or a NUL before the
    // JSON, a truncated object) is that request's reply, broken: protocol-error, not a hang.
    inner.onUnparsed = (text) => {
      const id = /"id"\s*:\s*(\d+)/.exec(text)?.[1];
      if (id === undefined || !this.pending.has(Number(id))) return;
      this.settle(Number(id), { kind: 'malformed', problem: `the reply line is not valid JSON: ${JSON.stringify(text.slice(0, 80))}`, raw: null });
    };
    inner.onAnswer = (id, message) => {
      if (!this.pending.has(id)) return false;
      this.settle(id, readResponse(message));
      this.answered.add(id);
      return true;
    };
    inner.onBroken = (id, problem) => {
      if (!this.pending.has(id)) return false;
      this.settle(id, { kind: 'malformed', problem, raw: null });
      return true;
    };
    inner.onRejected = (id, status, body) => {
      if (!this.pending.has(id)) return false;
      const text = body.trim().slice(0, 4096);
      // Not a JSON-RPC message: `raw` says what came instead, and the error carries the status.
      this.settle(id, { kind: 'response', error: { code: status, message: `HTTP ${status}${text ? `: ${text}` : ''}` }, raw: { httpStatus: status, body: text } });
      this.answered.add(id);
      return true;
    };
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = () => {
      this.closedFlag = true;
      for (const [id, p] of this.pending) {
        clearTimeout(p.timer);
        this.pending.delete(id);
        p.resolve({ kind: 'exited', exit: inner.exit });
      }
      this.onclose?.();
    };
  }

  /** True once the process has exited or the connection closed. */
  get closed(): boolean {
    return this.closedFlag;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private route(message: JSONRPCMessage): void {
    const m = message as Record<string, unknown>;
    const isResponse = !('method' in m) && 'id' in m;
    if (isResponse && (this.handshakeDone || (typeof m.id === 'number' && m.id >= FIRST_WIRE_ID))) {
      const p = typeof m.id === 'number' ? this.pending.get(m.id) : undefined;
      // A reply read after the hang limit ran out is late even when the limit's timer has not run
      // yet: on a loaded machine the event loop can wake with both due, and reads the reply first.
      // The limit is the same on every machine, so an operation as long as the limit is a hang;
      // the time spent waiting for a CPU is first added to it, as the timer does.
      if (p && this.inner.now() >= p.deadlineMs) p.extend();
      if (p && this.inner.now() >= p.deadlineMs) p.expire();
      else if (p) {
        this.settle(m.id as number, readResponse(m));
        this.answered.add(m.id as number);
        return;
      }
      if (typeof m.id === 'number' && this.abandoned.has(m.id)) {
        this.abandoned.delete(m.id);
        this.abandonedRaw = this.abandonedRaw.filter((x) => x !== m.id);
        this.answered.add(m.id);
        this.lateResponses.push({ atMs: this.inner.now(), message, id: m.id });
        return;
      }
      // JSON-RPC 2.0 section 5: a parse error (-32700) or an invalid request (-32600) is answered
      // with id null, since the id could not be read. Such an answer belongs to a line sent with
      // raw text: to the oldest one sealmark already stopped waiting for (a slow parse error
      // arriving late), else to the one raw request waiting. Other id-null errors are strays.
      const code = (m.error as { code?: unknown } | undefined)?.code;
      if (m.id === null && (code === -32700 || code === -32600)) {
        const late = this.abandonedRaw.shift();
        if (late !== undefined) {
          this.abandoned.delete(late);
          // Kept as the server sent it (id null); `id` says which request it answered.
          this.lateResponses.push({ atMs: this.inner.now(), message: m, id: late });
          return;
        }
        const rawWaiting = [...this.pending].filter(([, q]) => q.raw);
        if (rawWaiting.length === 1) {
          this.settle(rawWaiting[0]![0], readResponse(m));
          return;
        }
      }
      // A response with an id nobody sent, while exactly one request waits, is that request's reply
      // under a wrong id (SPEC section 4: protocol-error), not silence. A second answer to an id
      // already answered, or an answer when nothing waits, is a stray.
      // Only an id of sealmark's own range counts (one off, or ours as a string): `{"id":0}` is an
      // answer to a notification (a planted fault seen with notifications/cancelled), not a reply.
      const alreadyAnswered = typeof m.id === 'number' && this.answered.has(m.id);
      const ours = typeof m.id === 'number' ? m.id >= FIRST_WIRE_ID : typeof m.id === 'string' && /^\d+$/.test(m.id) && Number(m.id) >= FIRST_WIRE_ID;
      if (!alreadyAnswered && ours && this.handshakeDone && this.pending.size === 1) {
        const [only] = this.pending.keys();
        this.settle(only!, { kind: 'malformed', problem: `answered with id ${JSON.stringify(m.id)} instead of ${only}`, raw: m });
        // Its own reply may still come: a late answer then, never the next request's.
        this.abandoned.add(only!);
        return;
      }
      this.strayResponses.push({ atMs: this.inner.now(), message });
      return;
    }
    this.onmessage?.(message);
  }

  private settle(id: number, reply: Reply): void {
    const p = this.pending.get(id);
    if (!p) return;
    clearTimeout(p.timer);
    this.pending.delete(id);
    p.resolve(reply);
  }

  /**
   * Sends one request and waits up to `timeoutMs` (ms) for its reply. `params` go out exactly as
   * given (only the 2026-07-28 `_meta` envelope is merged in when the era needs it); see
   * {@link RequestOptions} for raw text and early abandon. Never rejects.
   *
   * The limit is the server's time, not the machine's: when it runs out, the wait goes on by the
   * growth since the send of the run-queue delay of the server's process tree (see {@link sampleRunDelay}, {@link limitExtensionMs}: less a floor of 5 % of the limit,
   * at most `timeoutMs` more). On a quiet machine nothing is added and the limit is plain wall
   * time; on a loaded one a tool that computes for 3 s is judged as if the machine were quiet, and
   * one that sleeps through the limit or waits forever still hangs at `timeoutMs`.
   */
  async request(method: string, params: unknown, timeoutMs: number, opts: RequestOptions = {}): Promise<Exchange> {
    const id = this.nextId++;
    const startedAtMs = this.inner.now();
    const withMeta = this.withEnvelope(params);
    const message: Record<string, unknown> = { jsonrpc: '2.0', id, method };
    if (withMeta !== undefined) message.params = withMeta;
    let sent = JSON.stringify(message);
    if (opts.splice) {
      const quoted = JSON.stringify(opts.splice.marker);
      const at = sent.indexOf(quoted);
      if (at < 0 || sent.indexOf(quoted, at + 1) >= 0) throw new Error(`splice marker must occur exactly once in the request`);
      sent = sent.slice(0, at) + opts.splice.text + sent.slice(at + quoted.length);
    }
    if (this.closedFlag) {
      return { id, method, params, sent, reply: { kind: 'exited', exit: this.inner.exit }, startedAtMs, durationMs: 0 };
    }
    const baseline = this.runDelay(BASELINE_REUSE_MS);
    const reply = await new Promise<Reply>((resolve) => {
      // The run delay added to the limit so far (ms), at most the limit itself.
      let countedMs = 0;
      const giveUp = (waitedMs: number) => {
        if (!this.pending.has(id)) return;
        this.pending.delete(id);
        // A reply that still comes was asked for: a late answer, not a stray.
        this.abandoned.add(id);
        if (opts.splice) this.abandonedRaw.push(id);
        opts.signal?.removeEventListener('abort', onAbort);
        resolve(countedMs > 0 ? { kind: 'hang', waitedMs, runDelayMs: countedMs } : { kind: 'hang', waitedMs });
        // Tell the server to stop working on it, as the MCP lifecycle asks of a client that gives up.
        void this.notify('notifications/cancelled', { requestId: id, reason: 'sealmark: hang limit reached' });
      };
      const onAbort = () => {
        clearTimeout(entry.timer);
        giveUp(this.inner.now() - startedAtMs);
      };
      // At the limit: wait on by the time the server's threads spent waiting for a CPU since the
      // send, and again for what grew meanwhile, until no more has grown or the cap is reached.
      const onLimit = () => {
        if (!this.pending.has(id)) return;
        entry.extend();
        const left = entry.deadlineMs - this.inner.now();
        if (left >= MIN_EXTENSION_MS) entry.timer = setTimeout(onLimit, left);
        else giveUp(timeoutMs);
      };
      const entry: Pending = {
        resolve: (r) => {
          opts.signal?.removeEventListener('abort', onAbort);
          resolve(r);
        },
        timer: setTimeout(onLimit, timeoutMs),
        raw: opts.splice !== undefined,
        deadlineMs: startedAtMs + timeoutMs,
        extend: () => {
          const grown = limitExtensionMs(timeoutMs, baseline, this.runDelay(0));
          if (grown <= countedMs) return;
          countedMs = grown;
          entry.deadlineMs = startedAtMs + timeoutMs + grown;
        },
        expire: () => {
          clearTimeout(entry.timer);
          giveUp(timeoutMs);
        },
      };
      this.pending.set(id, entry);
      if (opts.signal?.aborted) onAbort();
      else opts.signal?.addEventListener('abort', onAbort, { once: true });
      const at = this.inner.now();
      for (const tap of this.inner.taps) tap('send', opts.splice ? { raw: sent } : message, at);
      void this.inner.writeLine(sent);
    });
    return { id, method, params, sent, reply, startedAtMs, durationMs: this.inner.now() - startedAtMs };
  }

  /** Sends a notification (no reply expected). Never rejects. */
  async notify(method: string, params?: unknown): Promise<string> {
    const message: Record<string, unknown> = { jsonrpc: '2.0', method };
    const withMeta = this.withEnvelope(params);
    if (withMeta !== undefined) message.params = withMeta;
    await this.inner.send(message as JSONRPCMessage).catch(() => {});
    return JSON.stringify(message);
  }

  /**
   * True when the server's process tree is at work: its threads were runnable (on a CPU or waiting
   * for one, see {@link sampleRunnableNs}) for at least {@link AT_WORK_SHARE} of a `windowMs` (ms)
   * window, summed over threads. A server that dropped a request, or waits for input, is runnable
   * for next to none of it; one still computing an answer sealmark gave up on is runnable for all
   * of it, whether or not the machine is loaded. False where it cannot be told (a server reached
   * by URL, no schedstat) and once the connection is closed. Takes `windowMs`; never rejects.
   */
  async atWork(windowMs: number): Promise<boolean> {
    const before = sampleRunnableNs(this.inner.pid);
    if (before === undefined || this.closedFlag) return false;
    await new Promise((r) => setTimeout(r, windowMs));
    const after = sampleRunnableNs(this.inner.pid);
    if (after === undefined || this.closedFlag) return false;
    return (after - before) / 1e6 >= windowMs * AT_WORK_SHARE;
  }

  /**
   * The run delay of the server's process tree and of this thread (see {@link sampleRunDelay}),
   * reusing the last sample when it is at most `maxAgeMs` old.
   */
  private runDelay(maxAgeMs: number): RunDelaySample {
    const now = this.inner.now();
    if (this.lastRunDelay && now - this.lastRunDelay.atMs <= maxAgeMs) return this.lastRunDelay.sample;
    const sample = sampleRunDelay(this.inner.pid);
    this.lastRunDelay = { atMs: now, sample };
    return sample;
  }

  private withEnvelope(params: unknown): unknown {
    if (!this.envelope) return params;
    if (params === undefined) return { _meta: { ...this.envelope } };
    if (typeof params !== 'object' || params === null || Array.isArray(params)) return params;
    const p = params as Record<string, unknown>;
    const own = typeof p._meta === 'object' && p._meta !== null ? (p._meta as Record<string, unknown>) : {};
    return { ...p, _meta: { ...this.envelope, ...own } };
  }
}

/** Reads a response with our id without trusting its shape (JSON-RPC 2.0 section 5). */
export function readResponse(m: Record<string, unknown>): Reply {
  const hasResult = 'result' in m;
  const hasError = 'error' in m;
  if (hasResult && hasError) return { kind: 'malformed', problem: 'both result and error', raw: m };
  if (!hasResult && !hasError) return { kind: 'malformed', problem: 'neither result nor error', raw: m };
  if (hasError) {
    const e = m.error;
    if (typeof e !== 'object' || e === null) return { kind: 'malformed', problem: 'error is not an object', raw: m };
    const err = e as Record<string, unknown>;
    if (typeof err.code !== 'number' || !Number.isInteger(err.code)) {
      return { kind: 'malformed', problem: 'error.code is not an integer', raw: m };
    }
    return { kind: 'response', error: { code: err.code, message: err.message, data: err.data }, raw: m };
  }
  return { kind: 'response', result: m.result, raw: m };
}
