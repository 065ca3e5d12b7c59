/**
 * Records calls for every gatherer in one ordered list, classifying replies to tools/call with the
 * one classifier (SPEC section 4).
 */
import { classifyReply, ownCopy } from '../classify.js';
import { scanSecrets, type SecretSet } from '../secrets.js';
import type { OpenFailure, Session } from '../target/session.js';
import type { ExitInfo } from '../target/stdio-transport.js';
import type { Exchange, RequestOptions, WireError, WireTransport } from '../target/wire.js';
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
  /** Why the server was started again when it had not exited (it stopped answering), in words. */
  why?: string;
}

/** ms before an exit within which an answered tools/call is a candidate cause (an async crash after replying). */
export const ATTRIBUTION_WINDOW_MS = 1000;

/**
 * How long (ms) a server is watched after a call that got no answer, to tell one still at work on
 * it from one that dropped it ({@link Recorder.restartIfAtWork}).
 */
export const AT_WORK_WINDOW_MS = 200;
/** ms a replayed candidate is watched after its reply for the exit to come again. */
export const REPLAY_GRACE_MS = 200;
/**
 * Most restarts spent confirming which call an exit came from, per audit. They are kept apart from
 * {@link MAX_RESTARTS}, which stays for the remaining probes; past it an exit with several
 * candidates is left unattributed.
 */
export const MAX_CONFIRM_RESTARTS = 24;
/** Most candidates replayed for one exit (each on a start of its own). */
export const MAX_REPLAYS_PER_EXIT = 10;

/**
 * What an exit of the server is blamed on (SPEC section 3 step 3). The candidates are the calls in
 * flight when it exited and the tools/call requests answered up to {@link ATTRIBUTION_WINDOW_MS}
 * before (a server may reply, then crash in work it scheduled); the same request twice is one
 * candidate, and sealmark's own liveness requests are candidates only when nothing else is. One
 * candidate is the cause; of several, the one that exits the server again when replayed alone, as
 * the first request of a start of its own (most recent first, each watched {@link REPLAY_GRACE_MS}
 * after its reply). When none does, or the confirmation budget is spent, the exit is blamed on no
 * call; after an exit no candidate reproduced, later exits are not replayed (blamed on no call).
 */
export interface ExitCause {
  /** seq of the first call whose reply said the server had exited. */
  seenAt: number;
  /** How the server ended, from that reply. */
  exit: ExitInfo | null;
  /** seqs of the candidate calls, most recent first. */
  candidates: number[];
  /**
   * `only-candidate`: one call could have caused it; `replayed`: `culprit` exited the server again
   * when replayed alone; `none-reproduced`: no candidate did; `no-candidate`: no call was in flight
   * or answered shortly before; `not-confirmed`: several candidates, and no confirmation restart
   * was left, none could be replayed, or an earlier exit was reproduced by none of its candidates.
   */
  by: 'only-candidate' | 'replayed' | 'none-reproduced' | 'no-candidate' | 'not-confirmed';
  /** `not-confirmed`: why the candidates were not replayed alone, in words. */
  unconfirmed?: string;
  /** seq of the call the exit is blamed on. */
  culprit?: number;
  /** seq of the replay that exited the server again (`by: replayed`). */
  replay?: number;
  /** seqs of the replays that did not exit it. */
  cleared: number[];
  /** The end of what the server wrote to stderr before it exited (and, replayed, before it exited again). */
  stderrTail: string;
}

/**
 * Where a Recorder is among the server instances of one audit (SPEC section 3 step 3,
 * `--instances`): the call list all instances share (seqs are unique across them, in the order
 * calls were recorded), the instance's number, and which tools it calls.
 */
export interface InstanceShare {
  /** Every call of the audit, all instances: each recorder appends its own here as well. */
  log: ProbeCall[];
  /** 0 for the first instance (the one whole-server probes use). */
  instance: number;
  /** How many instances the audit runs (calls are tagged with `instance` when more than one). */
  of: number;
  /** True for the tools this instance calls; every listed tool belongs to exactly one instance. */
  owns: (tool: string) => boolean;
}

export class Recorder {
  /** The calls this recorder made, in order (all of the audit's when it is the only instance). */
  readonly calls: ProbeCall[] = [];
  /** Every session of the audit, the first one first: one more per restart that succeeded. */
  readonly sessions: Session[];
  /** Each restart attempted, in order. */
  readonly restarts: Restart[] = [];
  /** Each exit of the server seen during the audit, and the call it is blamed on. */
  readonly exits: ExitCause[] = [];
  /** Restarts spent on replaying candidates to find an exit's cause (not counted in {@link restarts}). */
  confirmRestarts = 0;
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
    private share?: InstanceShare,
  ) {
    this.sessions = [session];
  }

  /**
   * Makes this recorder one of several instances (after its first calls, the handshake's listing):
   * from now on calls are numbered across all of them and tagged with the instance. `share.log`
   * may be this recorder's own {@link calls}.
   */
  join(share: InstanceShare): void {
    this.share = share;
    if (share.of > 1) for (const c of this.calls) c.instance ??= share.instance;
  }

  /** The instance this recorder drives (0 when it is the only one). */
  get instance(): number {
    return this.share?.instance ?? 0;
  }

  /**
   * True when this instance calls `tool` (SPEC section 3 step 3: tools are partitioned among the
   * instances). Always true for a lone instance.
   */
  owns(tool: string): boolean {
    return this.share ? this.share.owns(tool) : true;
  }

  /**
   * The calls this recorder made itself, in order. The first of several instances keeps every
   * instance's calls in {@link calls} (the audit's one list), so a gatherer that reads back what it
   * sent reads this instead: another instance's request ids start again from 1 on its own server.
   */
  get ownCalls(): ProbeCall[] {
    return this.calls.filter((c) => this.startOf.has(c.seq));
  }

  /** Calls made so far by every instance. */
  private get logged(): number {
    return this.share ? this.share.log.length : this.calls.length;
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
  async revive(lost = this.lastLost(), why?: string): Promise<boolean> {
    if (!lost && !this.session.exited) return true;
    // The exit is weighed once, even where the server cannot be started again to confirm it.
    const cause = this.causeOfExit();
    const unconfirmed = (why: string) => {
      if (cause?.by === 'not-confirmed') cause.unconfirmed ??= why;
    };
    // Once a start failed, the server is gone for good: no gatherer waits for another one.
    if (!this.restart || this.restarts.length >= MAX_RESTARTS || this.restarts.some((r) => !r.ok)) {
      unconfirmed(this.restarts.length >= MAX_RESTARTS ? 'the restart budget ran out' : 'the server could not be started again');
      return false;
    }
    if (!(await this.startAgain(false, why))) {
      unconfirmed('the server could not be started again');
      return false;
    }
    // A server no single call made exit (it exits on its n-th call, whatever it is) is not replayed
    // again: its later exits stay unattributed, at no cost.
    const replays = cause && cause.candidates.length > 1 && !this.exits.some((e) => e.by === 'none-reproduced');
    if (cause && replays) await this.confirm(cause);
    else unconfirmed('an earlier exit was reproduced by no single call');
    unconfirmed('no confirmation restart was left');
    return this.restarts.at(-1)?.ok === true && !this.session.exited;
  }

  /**
   * Ends the current session and starts the server again; `confirm` counts the start against
   * {@link MAX_CONFIRM_RESTARTS} instead of {@link MAX_RESTARTS}. Resolves to true when it came back.
   */
  private async startAgain(confirm: boolean, why?: string): Promise<boolean> {
    // A connection lost on a request (a server reached by URL, a stdout closed) may leave a process
    // or a session behind: it is ended before the new start.
    await this.session.close();
    const afterSeq = this.calls.at(-1)?.seq ?? 0;
    this.onProgress?.({ ...this.current, phase: `${this.current.phase} (restarting the server)`, calls: this.logged });
    let next: Session | OpenFailure;
    try {
      next = await this.restart!();
    } catch (err) {
      next = { message: err instanceof Error ? err.message : String(err) } as OpenFailure;
    }
    if (confirm) this.confirmRestarts++;
    if (!('handshake' in next)) {
      // A failed start is a failed start, whatever it was for: the server is gone for good.
      this.restarts.push({ afterSeq, ok: false, failure: next.message });
      return false;
    }
    this.sessions.push(next);
    if (!confirm) this.restarts.push({ afterSeq, ok: true, ...(why ? { why } : {}) });
    return true;
  }

  /**
   * The candidates for the exit of the current session ({@link ExitCause}), recorded in
   * {@link exits}; undefined when no call saw the exit. One candidate is the cause at once.
   */
  private causeOfExit(): ExitCause | undefined {
    const mine = this.calls.filter((c) => this.startOf.get(c.seq) === this.session);
    const seen = mine.find((c) => c.exchange.reply.kind === 'exited');
    if (!seen || this.exits.some((e) => e.seenAt === seen.seq)) return undefined;
    const exit = seen.exchange.reply.kind === 'exited' ? seen.exchange.reply.exit : null;
    // When the exit was first seen (a process's exit status may come after its stdout closed).
    const seenEnd = seen.exchange.startedAtMs + seen.exchange.durationMs;
    const exitAt = Math.min(exit?.atMs ?? seenEnd, seenEnd);
    const keys = new Set<string>();
    const candidates: number[] = [];
    const liveness: number[] = [];
    for (const c of [...mine].reverse()) {
      const ex = c.exchange;
      const k = ex.reply.kind;
      // In flight: written before the exit was first seen (a request written after that, such as
      // a liveness ping to the dead process, could not have caused it).
      const inFlight = k === 'exited' && (c === seen || ex.startedAtMs < exitAt);
      const answered = (k === 'response' || k === 'malformed') && ex.method === 'tools/call' && ex.startedAtMs + ex.durationMs >= exitAt - ATTRIBUTION_WINDOW_MS;
      // (A replay made to weigh an earlier exit is a call the server got like any other.)
      if (!inFlight && !answered) continue;
      const key = requestKey(ex.sent);
      if (keys.has(key)) continue;
      keys.add(key);
      // sealmark's own liveness request (a ping, a tools/list beside a call) is a candidate only
      // when nothing else is.
      (c.probe === 'liveness' ? liveness : candidates).push(c.seq);
    }
    if (candidates.length === 0) candidates.push(...liveness);
    const cause: ExitCause = {
      seenAt: seen.seq,
      exit,
      candidates,
      by: candidates.length === 1 ? 'only-candidate' : candidates.length === 0 ? 'no-candidate' : 'not-confirmed',
      culprit: candidates.length === 1 ? candidates[0] : undefined,
      cleared: [],
      stderrTail: this.session.transport.stderrText.slice(-2000),
    };
    this.exits.push(cause);
    return cause;
  }

  /**
   * Replays the candidates of `cause` alone, most recent first, each as the first request of its
   * own start of the server (a server that exits on its third call, whatever it is, is blamed on
   * none), until one exits the server again; the server is then started once more, as it is when
   * none did (the remaining probes go to a start the replays did not touch). Every start
   * after the first counts against {@link MAX_CONFIRM_RESTARTS}. Leaves a live session, or the
   * failed start in {@link restarts}.
   */
  private async confirm(cause: ExitCause): Promise<void> {
    let replayed = 0;
    for (const seq of cause.candidates) {
      const original = this.calls.find((c) => c.seq === seq)!;
      const request = replayRequest(original.exchange.sent);
      if (!request) continue;
      if (replayed >= MAX_REPLAYS_PER_EXIT) return;
      // Alone: on a start that has had no other request (the first replay goes to the start made for the remaining probes).
      if (replayed > 0) {
        if (this.confirmRestarts >= MAX_CONFIRM_RESTARTS) return;
        if (!(await this.startAgain(true))) return;
      }
      replayed++;
      const before = this.session.transport.stderrText.length;
      const ex = await this.session.request(request.method, request.params, 5000, request.options);
      const extra: Partial<ProbeCall> = { target: `replay of call ${seq}` };
      if (original.tool !== undefined) Object.assign(extra, { tool: original.tool, arguments: original.arguments, rawArguments: original.rawArguments });
      if (ex.method === 'tools/call') extra.classification = this.classify(ex.reply, []);
      const call = this.add('exit-replay', ex, extra);
      if (ex.reply.kind !== 'exited' && !this.session.exited) await new Promise((r) => setTimeout(r, REPLAY_GRACE_MS));
      if (ex.reply.kind === 'exited' || this.session.exited) {
        cause.by = 'replayed';
        cause.culprit = seq;
        cause.replay = call.seq;
        const again = this.session.transport.stderrText.slice(before).trim();
        if (again) cause.stderrTail = again.slice(-2000);
        // The server it exited again is started for the remaining probes (one past the cap at most).
        await this.startAgain(true);
        return;
      }
      cause.cleared.push(call.seq);
    }
    if (cause.cleared.length === cause.candidates.length) cause.by = 'none-reproduced';
    // The remaining probes go to a start that had none of the replays.
    if (replayed > 0) await this.startAgain(true);
  }

  /** Appends a call made outside {@link Recorder.toolCall} (liveness, protocol probes). */
  add(probe: string, exchange: Exchange, extra: Partial<ProbeCall> = {}): ProbeCall {
    const call: ProbeCall = { seq: this.logged + 1, probe, gatherer: this.current.phase, exchange, ...extra };
    if (this.share && this.share.of > 1) call.instance = this.share.instance;
    // A liveness listing is read for being an answer, and is not kept: scanned after it is elided,
    // it costs no copy of a listing of megabytes (the listing's secrets are the first listing's finding).
    if (probe === 'liveness') elideListing(call.exchange);
    this.rescan(call);
    capReplyStrings(call.exchange);
    this.calls.push(call);
    if (this.share && this.share.log !== this.calls) this.share.log.push(call);
    this.startOf.set(call.seq, this.session);
    return call;
  }

  /**
   * After `call` got no answer within the hang limit: when the server is still at work on it
   * ({@link WireTransport.atWork} over {@link AT_WORK_WINDOW_MS}), starts it again, so that the
   * next call does not wait behind the one sealmark gave up on and get blamed for its time, on a
   * loaded machine as on a quiet one. `why` names the call for the restart's record. Resolves to
   * `'idle'` when the call was answered or the server is not at work (nothing done), `'restarted'`
   * when it came back, `'gone'` when it could not be started again. Never rejects.
   */
  async restartIfAtWork(call: ProbeCall, why: string): Promise<'idle' | 'restarted' | 'gone'> {
    if (call.exchange.reply.kind !== 'hang' || this.sessionOf(call) !== this.session) return 'idle';
    if (!(await this.session.wire.atWork(AT_WORK_WINDOW_MS))) return 'idle';
    return (await this.revive(true, why)) ? 'restarted' : 'gone';
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

  /** The exit blamed on a call, or seen on it, if any. */
  exitOf(seq: number): ExitCause | undefined {
    return this.exits.find((e) => e.seenAt === seq || e.culprit === seq);
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
    this.onProgress?.({ ...where, tool, probe, calls: this.logged });
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
    this.onProgress?.({ ...p, calls: this.logged });
  }
}

/** A request line without its id: the same request sent twice has one key. */
function requestKey(sent: string): string {
  return sent.replace(/^\{"jsonrpc":"2\.0","id":\d+,/, '{');
}

/**
 * How to send a recorded request line again: its method and params, the params as raw text where
 * they are not JSON (`NaN`, a duplicate member). Undefined for a line sealmark did not build.
 */
function replayRequest(sent: string): { method: string; params: unknown; options: RequestOptions } | undefined {
  const m = /^\{"jsonrpc":"2\.0","id":\d+,"method":("(?:[^"\\]|\\.)*")(?:,"params":([\s\S]*))?\}$/.exec(sent);
  if (!m) return undefined;
  const method = JSON.parse(m[1]!) as string;
  if (m[2] === undefined) return { method, params: undefined, options: {} };
  try {
    return { method, params: JSON.parse(m[2]), options: {} };
  } catch {
    const marker = 'sealmark-replay-params';
    return { method, params: marker, options: { splice: { marker, text: m[2] } } };
  }
}

/**
 * Drops the tools of a liveness listing once its reply has been scanned: a liveness check is
 * judged only by whether an answer came (SPEC section 3 step 3), and a server with thousands of
 * tools would otherwise have its whole listing kept once per tool probed (3,000 tools of 2 KB,
 * a listing after each tool: gigabytes). The reply keeps its shape, with `tools: []` and
 * `toolsNotKept: <count>`; the transcript keeps the listing as it came.
 */
export function elideListing(exchange: Exchange): void {
  const r = exchange.reply;
  if (r.kind !== 'response' || typeof r.result !== 'object' || r.result === null) return;
  const tools = (r.result as { tools?: unknown }).tools;
  if (!Array.isArray(tools) || tools.length === 0) return;
  const result = { ...(r.result as Record<string, unknown>), tools: [], toolsNotKept: tools.length };
  exchange.reply = { ...r, result, raw: typeof r.raw === 'object' && r.raw !== null ? { ...(r.raw as Record<string, unknown>), result } : r.raw };
}

/** Longest string (characters) a recorded reply keeps; a report shows at most 4,096 characters of a reply. */
export const KEPT_STRING_CHARS = 64 * 1024;

/**
 * Cuts every string of a recorded reply longer than {@link KEPT_STRING_CHARS} to that length, with
 * `…[sealmark: N more characters not kept]` after it, once the reply has been classified and
 * scanned for leaks and secrets (which read it whole). Checks quote at most a few hundred
 * characters, so nothing they judge changes; a server that answers every call with megabytes (a
 * 1 MB error text on each of hundreds of calls) no longer holds them all in memory until the end.
 */
export function capReplyStrings(exchange: Exchange): void {
  const r = exchange.reply;
  if (r.kind !== 'response' && r.kind !== 'malformed') return;
  let cut = false;
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') {
      if (v.length <= KEPT_STRING_CHARS) return v;
      cut = true;
      return ownCopy(`${v.slice(0, KEPT_STRING_CHARS)}…[sealmark: ${v.length - KEPT_STRING_CHARS} more characters not kept]`);
    }
    if (typeof v !== 'object' || v === null || depth > 64) return v;
    if (Array.isArray(v)) {
      let changed = false;
      const out = v.map((x) => {
        const y = walk(x, depth + 1);
        if (y !== x) changed = true;
        return y;
      });
      return changed ? out : v;
    }
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const y = walk(x, depth + 1);
      if (y !== x) changed = true;
      out[k] = y;
    }
    return changed ? out : v;
  };
  const raw = walk(r.raw, 0);
  if (!cut) return;
  // result and error are read from the capped raw message, as readResponse reads them.
  const m = raw as { result?: unknown; error?: WireError };
  exchange.reply = r.kind === 'response' ? { ...r, raw, ...('result' in r ? { result: m?.result } : {}), ...(r.error ? { error: m?.error ?? r.error } : {}) } : { ...r, raw };
}
