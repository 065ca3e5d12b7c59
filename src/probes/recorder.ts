/**
 * Records calls for every gatherer in one ordered list, classifying replies to tools/call with the
 * one classifier (SPEC section 4).
 */
import { classifyReply } from '../classify.js';
import { scanSecrets, type SecretSet } from '../secrets.js';
import type { Session } from '../target/session.js';
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

export class Recorder {
  readonly calls: ProbeCall[] = [];
  /** The phase last announced, repeated with each call's probe. */
  private current: Omit<Progress, 'calls'> = { phase: 'starting' };

  /**
   * `secrets`: what every reply is scanned for (SPEC section 5 secret-echo); every recorded reply,
   * whatever the call, goes through the one scanner.
   */
  constructor(
    readonly session: Session,
    private readonly onProgress?: (p: Progress) => void,
    private readonly secrets: SecretSet = { env: {}, user: {} },
  ) {}

  /** Appends a call made outside {@link Recorder.toolCall} (liveness, protocol probes). */
  add(probe: string, exchange: Exchange, extra: Partial<ProbeCall> = {}): ProbeCall {
    const call: ProbeCall = { seq: this.calls.length + 1, probe, exchange, ...extra };
    this.rescan(call);
    this.calls.push(call);
    return call;
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
