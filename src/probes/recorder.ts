/**
 * Records calls for every gatherer in one ordered list, classifying replies to tools/call with the
 * one classifier (SPEC section 4).
 */
import { classifyReply } from '../classify.js';
import { scanSecrets, type SecretSet } from '../secrets.js';
import type { OpenFailure, Session } from '../target/session.js';
import type { Exchange, RequestOptions } from '../target/wire.js';
import type { Classification, ProbeCall, Reply } from '../types.js';

/** Progress of a run, for the TTY progress line. */
export interface Progress {
  phase: string;
  tool?: string;
  /** 1-based index of the tool in flight, and how many there are. */
  toolIndex?: number;
  toolCount?: number;
  /** The probe of the call in flight. */
  probe?: string;
  /** Calls made so far. */
  calls: number;
}

/** Most times a server that exited is started again in one audit; past it, the server is gone. */
export const MAX_RESTARTS = 8;

/** One start of the server after it exited: after which call, and whether it came back. */
export interface Restart {
  /** seq of the last call recorded before the restart (the one the server exited on, usually). */
  afterSeq: number;
  ok: boolean;
  /** Why the new start failed, in words. */
  failure?: string;
}

export class Recorder {
  readonly calls: ProbeCall[] = [];
  /** Every session of the audit, the first one first: one more per restart that succeeded. */
  readonly sessions: Session[];
  /** Each restart attempted, in order. */
  readonly restarts: Restart[] = [];
  /** The session each call (by seq) went to. */
  private readonly startOf = new Map<number, Session>();
  /** The phase last announced, repeated with each call's probe. */
  private current: Omit<Progress, 'calls'> = { phase: 'starting' };

  /**
   * `secrets`: what every reply is scanned for (SPEC section 5 secret-echo); every recorded reply,
   * whatever the call, goes through the one scanner. `restart` starts the server again with the
   * same settings and handshake (SPEC section 3 step 3); without it a server that exits stays gone.
   */
  constructor(
    session: Session,
    private readonly onProgress?: (p: Progress) => void,
    private readonly secrets: SecretSet = { env: {}, user: {} },
    private readonly restart?: () => Promise<Session | OpenFailure>,
  ) {
    this.sessions = [session];
  }

  /** The session calls go to: the latest start of the server. */
  get session(): Session {
    return this.sessions[this.sessions.length - 1]!;
  }

  /**
   * Makes sure a server is there to call: when the current one has exited, starts it again (at most
   * {@link MAX_RESTARTS} times per audit). `lost` (default: the last recorded call's reply says the
   * server exited or the connection was lost) starts it again even where the session does not know
   * it is gone yet. Resolves to true when a live session is there, false when the server is gone
   * for good. Never rejects.
   */
  async revive(lost = this.lastLost()): Promise<boolean> {
    if (!lost && !this.session.exited) return true;
    // Once a start failed, the server is gone for good: no gatherer waits for another one.
    if (!this.restart || this.restarts.length >= MAX_RESTARTS || this.restarts.some((r) => !r.ok)) return false;
    // A connection lost on a request (a server reached by URL, a stdout closed) may leave a process
    // or a session behind: it is ended before the new start.
    await this.session.close();
    const afterSeq = this.calls.length;
    this.onProgress?.({ ...this.current, phase: `${this.current.phase} (restarting the server)`, calls: this.calls.length });
    let next: Session | OpenFailure;
    try {
      next = await this.restart();
    } catch (err) {
      next = { message: err instanceof Error ? err.message : String(err) } as OpenFailure;
    }
    if (!('handshake' in next)) {
      this.restarts.push({ afterSeq, ok: false, failure: next.message });
      return false;
    }
    this.sessions.push(next);
    this.restarts.push({ afterSeq, ok: true });
    return true;
  }

  /** Appends a call made outside {@link Recorder.toolCall} (liveness, protocol probes). */
  add(probe: string, exchange: Exchange, extra: Partial<ProbeCall> = {}): ProbeCall {
    const call: ProbeCall = { seq: this.calls.length + 1, probe, exchange, ...extra };
    this.rescan(call);
    this.calls.push(call);
    this.startOf.set(call.seq, this.session);
    return call;
  }

  /**
   * After a liveness check that failed: when the server is gone (exited, connection lost), starts
   * it again and resolves to true; when it is there but silent (wedged), or cannot be started
   * again, false. Never rejects.
   */
  async restartIfGone(): Promise<boolean> {
    if (!this.session.exited && !this.lastLost()) return false;
    return this.revive(true);
  }

  /** True when the last call recorded on the current session got `exited` (gone, as far as it knows). */
  private lastLost(): boolean {
    const last = this.calls.at(-1);
    return last !== undefined && this.startOf.get(last.seq) === this.session && last.exchange.reply.kind === 'exited';
  }

  /** The session (start of the server) a recorded call went to; request ids restart with each. */
  sessionOf(call: ProbeCall): Session {
    return this.startOf.get(call.seq) ?? this.session;
  }

  /** Scans a call's reply for secrets again (after its reply was replaced by a late one). */
  rescan(call: ProbeCall): void {
    const r = call.exchange.reply;
    const hits = r.kind === 'response' || r.kind === 'malformed' ? scanSecrets(r.raw, this.secrets) : [];
    if (hits.length > 0) call.secrets = hits;
    else delete call.secrets;
  }

  /**
   * Sends `tools/call` for `tool` with `args` (omitted from params when `undefined`), waits up to
   * `timeoutMs` (ms) and records the call, classified against `declaredParams`. `request` passes
   * raw text or an early abandon to the wire ({@link RequestOptions}).
   */
  async toolCall(
    probe: string,
    tool: string,
    args: unknown,
    timeoutMs: number,
    declaredParams: string[],
    extra: Partial<ProbeCall> = {},
    request: RequestOptions = {},
  ): Promise<ProbeCall> {
    const params: Record<string, unknown> = { name: tool };
    if (args !== undefined) params.arguments = args;
    const where = this.current.tool === tool ? this.current : { phase: this.current.phase };
    this.onProgress?.({ ...where, tool, probe, calls: this.calls.length });
    const exchange = await this.session.request('tools/call', params, timeoutMs, request);
    return this.add(probe, exchange, { tool, arguments: args, classification: this.classify(exchange.reply, declaredParams), ...extra });
  }

  /** Classifies a reply to a tools/call of a tool with `declaredParams` (SPEC section 4). */
  classify(reply: Reply, declaredParams: string[]): Classification {
    return classifyReply({ reply, declaredParams, protocolVersion: this.session.handshake.protocolVersion });
  }

  /** Announces a phase (a gatherer, and the tool it is on) to the progress line. */
  progress(p: Omit<Progress, 'calls'>): void {
    this.current = p;
    this.onProgress?.({ ...p, calls: this.calls.length });
  }
}
