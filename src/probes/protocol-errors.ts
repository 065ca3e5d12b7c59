/**
 * The protocol-errors gatherer (SPEC section 5, `protocol-errors`): requests a careless client
 * sends by mistake. Each is followed by a liveness request so a crash is attributed to it.
 */
import type { Session } from '../target/session.js';
import type { Exchange } from '../target/wire.js';
import type { ProbeCall } from '../types.js';
import type { Recorder } from './recorder.js';

/** A method no MCP version defines. */
export const UNKNOWN_METHOD = 'sealmark/no-such-method';
/** A notification no MCP version defines, and one a server without roots support may mishandle (case C12). */
export const NOTIFICATIONS = ['notifications/sealmark_unknown', 'notifications/roots/list_changed'] as const;
/** A tool name no server should list. */
export const UNKNOWN_TOOL = 'sealmark_no_such_tool';

/** What the gatherer sent besides its recorded calls. */
export interface ProtocolRun {
  /** Notifications sent: the exact line and what arrived that answered them (stray responses). */
  notifications: { method: string; sent: string; replies: unknown[]; followUpSeq: number }[];
  /** Seqs of every call this gatherer recorded (its probes and their liveness checks), in order. */
  seqs: number[];
}

/** How long to wait for an (unwanted) answer to a notification, in ms. */
const NOTIFICATION_WINDOW_MS = 300;
/** ms the server has to answer a `tools/list` sent beside the early array-params probe ({@link sendEarly}). */
export const EARLY_GUARD_MS = 2000;

/** The array-params probe, sent ahead of its turn ({@link sendEarly}). */
export interface EarlyProbe {
  /** The start of the server it went to: at its turn it counts only if that start is still the one. */
  session: Session;
  exchange: Promise<Exchange>;
  /** Set when it had to be waited for and recorded at once (the server did not answer beside it). */
  recorded?: ProbeCall;
  /** Set when the early exchange must not stand for the probe (the server handles one request at a time): it is sent again in its turn. */
  spoiled?: boolean;
}

/**
 * Sends the array-params probe at once, before the other gatherers (issue 15: the slow probes go
 * first, so their waits overlap the rest): many servers never answer it (the TypeScript SDK drops
 * it before the server's code runs), and its hang limit then passes beside the audit, not after
 * it. A `tools/list` goes beside it; a server that does not answer that within
 * {@link EARLY_GUARD_MS} (one that handles one request at a time, or one the probe took down) gets
 * the probe waited for now and recorded in its place, as if it had been its turn. `timeoutMs`: the
 * probe's hang limit (ms).
 */
export async function sendEarly(rec: Recorder, timeoutMs: number): Promise<EarlyProbe> {
  const session = rec.session;
  const early: EarlyProbe = { session, exchange: session.request('tools/call', [], timeoutMs) };
  const guard = await session.alive(Math.min(timeoutMs, EARLY_GUARD_MS));
  if (guard.alive) return early;
  const ex = await early.exchange;
  // It took the server down: that is the probe's finding, recorded now so the exit is blamed on it.
  if (ex.reply.kind === 'exited') {
    early.recorded = rec.add('array-params', ex);
    return early;
  }
  // One request at a time: the probe goes again in its turn, as in a serial run. A server it left
  // answering nothing is started again (fresh), so the other probes are not lost to it.
  early.spoiled = true;
  if (!(await session.alive(timeoutMs)).alive) await rec.revive(true, "it answered nothing after sealmark's early array-params probe (it handles one request at a time); the probe was sent again in its turn");
  return early;
}

/**
 * The protocol-errors probes: an unknown method, each notification (then a follow-up request to
 * see the server still answers, `ping` on the handshake versions, `tools/list` on 2026-07-28 where
 * ping is gone), a `tools/call` of a tool that does not exist, each in its turn; and a
 * `tools/call` whose params are an array, recorded by the `finish` it resolves to, which the
 * caller runs once every other gatherer is done. The finish records the array-params exchange (the
 * early one, {@link sendEarly}, or one sent then when the early one cannot stand for it) and a
 * liveness check after it, and adds their seqs to the run. So the probe's hang limit, when the
 * server never answers it, passes beside the whole audit rather than holding up what follows
 * protocol-errors (issue 15). `timeoutMs` bounds each request (ms).
 */
export async function gatherProtocolErrors(rec: Recorder, timeoutMs: number, early: EarlyProbe | undefined): Promise<{ run: ProtocolRun; finish: () => Promise<void> }> {
  const run: ProtocolRun = { notifications: [], seqs: [] };
  const first = rec.ownCalls.length;
  const stopped = (await sendAll(rec, run, timeoutMs, early)).stopped;
  run.seqs = [...(early?.recorded ? [early.recorded.seq] : []), ...rec.ownCalls.slice(first).map((c) => c.seq)];
  const finish = async () => {
    if (stopped || early?.recorded) return;
    const from = rec.ownCalls.length;
    // A server that is gone and could not be started again gets no probe (as in its turn).
    if (!(await rec.revive())) return;
    // Its own phase, so that with several instances its calls are numbered after every other (instances.ts renumberCalls).
    rec.progress({ phase: 'array-params' });
    await finishProtocolErrors(rec, timeoutMs, early);
    run.seqs.push(...rec.ownCalls.slice(from).map((c) => c.seq));
  };
  return { run, finish };
}

/**
 * The array-params exchange: the early one ({@link sendEarly}) when it went to the start of the
 * server that is still running and did not end in that start's exit (an exit another probe caused
 * says nothing of this one); otherwise sent now.
 */
async function arrayParams(rec: Recorder, timeoutMs: number, early: EarlyProbe | undefined): Promise<Exchange> {
  if (early && !early.spoiled && early.session === rec.session) {
    const ex = await early.exchange;
    if (ex.reply.kind !== 'exited') return ex;
  }
  return rec.session.request('tools/call', [], timeoutMs);
}

/**
 * The probes before array-params. Resolves to the run and `stopped` when the server went away and
 * could not be started again (nothing more is sent).
 */
async function sendAll(rec: Recorder, run: ProtocolRun, timeoutMs: number, early: EarlyProbe | undefined): Promise<{ run: ProtocolRun; stopped?: true }> {
  // A server that exited on one probe is started again for the next (SPEC section 3 step 3): the
  // exit stays the finding of the probe that caused it.
  const gone = async () => !(await rec.revive());
  const live = async () => rec.add('liveness', (await rec.session.alive(timeoutMs)).exchange);
  const stop = { run, stopped: true as const };

  rec.progress({ phase: 'protocol-errors' });
  rec.add('unknown-method', await rec.session.request(UNKNOWN_METHOD, {}, timeoutMs));
  if (await gone()) return stop;
  await live();

  for (const method of NOTIFICATIONS) {
    if (await gone()) return stop;
    const s = rec.session;
    const before = s.wire.strayResponses.length;
    const sent = await s.notify(method);
    await new Promise((r) => setTimeout(r, NOTIFICATION_WINDOW_MS));
    const followMethod = s.handshake.era === 'modern' ? 'tools/list' : 'ping';
    const follow = rec.add('notification-follow-up', await s.request(followMethod, {}, timeoutMs));
    const replies = s.wire.strayResponses.slice(before).map((r) => r.message);
    run.notifications.push({ method, sent, replies, followUpSeq: follow.seq });
  }

  if (await gone()) return stop;
  const unknown = await rec.session.request('tools/call', { name: UNKNOWN_TOOL, arguments: {} }, timeoutMs);
  // Recorded like any tools/call (arguments, reply class), so that its finding replays.
  rec.add('unknown-tool', unknown, { tool: UNKNOWN_TOOL, arguments: {}, classification: rec.classify(unknown.reply, []) });
  if (await gone()) return stop;
  await live();
  if (await gone()) return stop;
  return { run };
}

/** The array-params probe (unless it was recorded at the start: the server answered nothing beside it) and a liveness check after it. */
async function finishProtocolErrors(rec: Recorder, timeoutMs: number, early: EarlyProbe | undefined): Promise<void> {
  if (early?.recorded) return;
  rec.add('array-params', await arrayParams(rec, timeoutMs, early));
  if (!(await rec.revive())) return;
  rec.add('liveness', (await rec.session.alive(timeoutMs)).exchange);
}
