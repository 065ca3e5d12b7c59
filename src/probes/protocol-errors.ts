/**
 * The protocol-errors gatherer (SPEC section 5, `protocol-errors`): requests a careless client
 * sends by mistake. Each is followed by a liveness request so a crash is attributed to it.
 */
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

/**
 * Sends: an unknown method, each notification (then a follow-up request to see the server still
 * answers, `ping` on the handshake versions, `tools/list` on 2026-07-28 where ping is gone), a
 * `tools/call` of a tool that does not exist, and a `tools/call` whose params are an array.
 * `timeoutMs` bounds each request (ms).
 */
export async function gatherProtocolErrors(rec: Recorder, timeoutMs: number): Promise<ProtocolRun> {
  const run: ProtocolRun = { notifications: [], seqs: [] };
  const first = rec.calls.length;
  await sendAll(rec, run, timeoutMs);
  run.seqs = rec.calls.slice(first).map((c) => c.seq);
  return run;
}

async function sendAll(rec: Recorder, run: ProtocolRun, timeoutMs: number): Promise<ProtocolRun> {
  // A server that exited on one probe is started again for the next (SPEC section 3 step 3): the
  // exit stays the finding of the probe that caused it.
  const gone = async () => !(await rec.revive());
  const live = async () => rec.add('liveness', (await rec.session.alive(timeoutMs)).exchange);

  rec.progress({ phase: 'protocol-errors' });
  rec.add('unknown-method', await rec.session.request(UNKNOWN_METHOD, {}, timeoutMs));
  if (await gone()) return run;
  await live();

  for (const method of NOTIFICATIONS) {
    if (await gone()) return run;
    const s = rec.session;
    const before = s.wire.strayResponses.length;
    const sent = await s.notify(method);
    await new Promise((r) => setTimeout(r, NOTIFICATION_WINDOW_MS));
    const followMethod = s.handshake.era === 'modern' ? 'tools/list' : 'ping';
    const follow = rec.add('notification-follow-up', await s.request(followMethod, {}, timeoutMs));
    const replies = s.wire.strayResponses.slice(before).map((r) => r.message);
    run.notifications.push({ method, sent, replies, followUpSeq: follow.seq });
  }

  if (await gone()) return run;
  const unknown = await rec.session.request('tools/call', { name: UNKNOWN_TOOL, arguments: {} }, timeoutMs);
  // Recorded like any tools/call (arguments, reply class), so that its finding replays.
  rec.add('unknown-tool', unknown, { tool: UNKNOWN_TOOL, arguments: {}, classification: rec.classify(unknown.reply, []) });
  if (await gone()) return run;
  await live();
  if (await gone()) return run;
  rec.add('array-params', await rec.session.request('tools/call', [], timeoutMs));
  if (await gone()) return run;
  await live();
  return run;
}
