/**
 * One way to watch a call for side effects (SPEC section 3): effects are events of the sandbox (a
 * line added to its effect log, a change of the overlay's upper layers), and a call's effects are
 * what arrived from its request until it is settled: the reply is in and no event has come for a
 * quiet period. What arrives after that and before the next call of a tool is still that call's,
 * marked late ({@link closeLateWindow}); it never goes to the next call. Every gatherer that
 * needs effects goes through {@link watched}, and `sealmark call` reads a replay by the same rules.
 */
import { failedConnectionLine, refusedForRateLimit, replyText } from '../classify.js';
import { EFFECT_LONGEST_WAIT_MS, EFFECT_QUIET_MS, LATE_WINDOW_MS, WRITE_QUIET_MS, type Effect, type EffectMark, type Sandbox } from '../target/sandbox.js';
import type { Exchange } from '../target/wire.js';
import type { ProbeCall } from '../types.js';

export { EFFECT_LONGEST_WAIT_MS, EFFECT_QUIET_MS, LATE_WINDOW_MS, WRITE_QUIET_MS } from '../target/sandbox.js';

/** Options of {@link watched}. */
export interface WatchOptions {
  /**
   * Whether the call's effects are judged: then it is settled only after {@link EFFECT_QUIET_MS} of
   * quiet from the reply (default true); else at the reply, or after {@link WRITE_QUIET_MS} of quiet
   * when a write was under way. A function decides from the call as answered.
   */
  judged?: boolean | ((call: ProbeCall) => boolean);
  /**
   * The call's effects blame its tool (a default or filler call): before it, the sandbox must have
   * been quiet for {@link LATE_WINDOW_MS} since the last call the server ran, so that a delayed
   * effect of that call arrives first and goes to it as late.
   */
  blames?: boolean;
  /**
   * The tool called. Before a call whose effects may be judged, the sandbox waits out the late
   * window (as for `blames`) when the last call the server ran was another tool's, so that a
   * delayed effect of that tool is never blamed on this one (an honest read-only tool called next).
   */
  tool?: string;
  /** Set `effects` even without a sandbox (then only a failed connection the reply reports is seen). */
  always?: boolean;
}

/** The last watched call of a sandbox while its late window is open: until the next call of a tool. */
interface OpenWindow {
  call: ProbeCall;
  /** What the sandbox had shown when the call was settled: later effects count from here. */
  point: EffectMark;
  /** When the reply came (ms since the epoch). */
  repliedAt: number;
}

const windows = new WeakMap<Sandbox, OpenWindow>();
/** When the server last answered a watched call it ran (ms since the epoch) and its tool, by sandbox: kept after its window closed. */
const lastRan = new WeakMap<Sandbox, { at: number; tool: string | undefined }>();

/** Classes of a tools/call the server refused before running it: no delayed effect is waited for after one. */
const REFUSED: ReadonlySet<string> = new Set(['rejected', 'rejected-unnamed', 'text-refusal']);

/**
 * Makes `call` and sets its `effects` (see the module comment): the sandbox's events from the
 * request until the reply and a quiet period, plus a network attempt when the reply itself reports
 * a failed connection (a fetch that the sandbox's namespace refused, a binary that ignored the
 * proxy variables). The call stays open for late effects until the next call of a tool.
 * Without a sandbox (and without `always`) it only makes the call.
 */
export async function watched(sandbox: Sandbox | undefined, call: () => Promise<ProbeCall>, opts: WatchOptions = {}): Promise<ProbeCall> {
  if (!sandbox) {
    const c = await call();
    if (opts.always) c.effects = effectsOf(undefined, undefined, c.exchange.reply);
    return c;
  }
  const mayJudge = opts.judged !== false;
  if (opts.blames || (mayJudge && opts.tool !== undefined && lastRan.get(sandbox)?.tool !== opts.tool)) await lateWindowPassed(sandbox);
  const mark = closeLateWindow(sandbox) ?? sandbox.mark();
  const c = await call();
  const repliedAt = Date.now();
  const judged = typeof opts.judged === 'function' ? opts.judged(c) : (opts.judged ?? true);
  // A write still under way (a lock file, a temp file renamed into place) is read once it is done.
  const quietMs = judged ? EFFECT_QUIET_MS : sandbox.eventsSince(mark.at) ? WRITE_QUIET_MS : 0;
  if (quietMs > 0) await sandbox.quiet(repliedAt, quietMs);
  const read = sandbox.readSince(mark);
  c.effects = [...read.effects, ...replyEffects(sandbox, c.exchange.reply)];
  const ran = c.exchange.reply.kind === 'response' && !REFUSED.has(c.classification?.class ?? '');
  windows.set(sandbox, { call: c, point: read.point, repliedAt });
  // The server ran it (an answer that is not a refusal): it may have set off delayed effects.
  if (ran) lastRan.set(sandbox, { at: repliedAt, tool: c.tool });
  return c;
}

/**
 * ms before a call refused for a rate limit is made once more: past a one-second window, the most
 * common limit of a server's own (server-brave-search allows one search a second, so whether its
 * second search tool fetched, and which limit values it admitted, depended on how fast the calls came).
 */
export const RATE_LIMIT_RETRY_MS = 1100;

/**
 * Makes a call (`call`, usually a {@link watched} one) and, when its reply refused it for a rate
 * limit (classify.ts refusedForRateLimit: the tool did not run, so the call says nothing of its
 * arguments), makes it once more after {@link RATE_LIMIT_RETRY_MS}, so that the server's clock
 * does not decide what is judged. Both calls are recorded; resolves to the last.
 */
export async function pastRateLimit(call: () => Promise<ProbeCall>): Promise<ProbeCall> {
  const first = await call();
  if (!refusedForRateLimit(first.exchange.reply)) return first;
  await new Promise((r) => setTimeout(r, RATE_LIMIT_RETRY_MS));
  return call();
}

/**
 * Closes the late window of the last watched call of `sandbox` (SPEC section 3: an effect that
 * arrives after its call's reply, before the next call, is that call's, marked late): the effects
 * that arrived since the call was settled are appended to its `effects`, each with `lateMs`.
 * Returns the point the next call's effects count from, or undefined when no window was open.
 * Synchronous: it runs as the next call of a listed tool is sent (the session's `onRequest`),
 * before a restart of the server, and before anything is judged.
 */
export function closeLateWindow(sandbox: Sandbox): EffectMark | undefined {
  const w = windows.get(sandbox);
  if (!w) return undefined;
  windows.delete(sandbox);
  if (!sandbox.eventsSince(w.point.at)) return { ...w.point, at: Date.now() };
  const first = sandbox.firstEventAfter(w.point.at) ?? Date.now();
  const read = sandbox.readSince(w.point);
  const lateMs = Math.max(0, first - w.repliedAt);
  (w.call.effects ??= []).push(...read.effects.map((e) => ({ ...e, lateMs })));
  return read.point;
}

/**
 * Waits, before a call whose effects blame its tool, until the sandbox has been quiet for
 * {@link LATE_WINDOW_MS} since the reply to the last watched call the server ran (at most
 * {@link EFFECT_LONGEST_WAIT_MS}): a delayed effect of that call then lands in its late window
 * (or, when another request closed it, before this call's effects begin). Returns at once when
 * that reply is older, and when no watched call ran yet.
 */
async function lateWindowPassed(sandbox: Sandbox): Promise<void> {
  const last = lastRan.get(sandbox);
  if (last !== undefined) await sandbox.quiet(last.at, LATE_WINDOW_MS, EFFECT_LONGEST_WAIT_MS);
}

/**
 * The effects of one call, by the rules every audit and `sealmark call` share (SPEC section 3:
 * "`sealmark call` applies the same effect rules as the audit"): what the sandbox's log and
 * overlay gained since `mark`, plus a network attempt when the reply itself reports a failed
 * connection. Without a sandbox only the reply is read.
 */
export function effectsOf(sandbox: Sandbox | undefined, mark: EffectMark | undefined, reply: Exchange['reply']): Effect[] {
  const effects: Effect[] = mark && sandbox ? sandbox.effectsSince(mark) : [];
  return [...effects, ...replyEffects(sandbox, reply)];
}

/** The network attempt a reply reports (a failed connection it quotes), as an effect; none when it reports none. */
function replyEffects(sandbox: Sandbox | undefined, reply: Exchange['reply']): Effect[] {
  const refused = failedConnectionLine(replyText(reply));
  if (!refused) return [];
  // Inside the namespace, 127.0.0.1 is the namespace's own loopback, not the host's.
  const local = sandbox?.isolation.network === 'namespace' && /127\.0\.0\.1|localhost|\[?::1\]?/i.test(refused);
  const why = local ? " (the sandbox's loopback is its own: services on the host are not reachable there; --network on keeps the host network)" : '';
  return [{ kind: 'network', detail: `the reply reports a failed connection: ${refused}${why}` }];
}

/**
 * Ends the watch of `sandbox` before anything is judged or the server is started again: waits out
 * the late window of the last watched call (as a call that blames its tool would) and closes it, so
 * a delayed effect of the last call is still that call's.
 */
export async function closeWatch(sandbox: Sandbox | undefined): Promise<void> {
  if (!sandbox) return;
  await lateWindowPassed(sandbox);
  closeLateWindow(sandbox);
}

/**
 * Why calls that may write would change the user's real files, or undefined when the sandbox
 * keeps every write in its copy-on-write layer: a server reached by URL, no sandbox
 * (`--no-sandbox`), a sandbox without the overlay (not permitted here, or `SEALMARK_NO_OVERLAY=1`),
 * or an overlay that leaves a path named in the command or environment uncovered (it holds other
 * mounts, or only the root holds it).
 * The gatherers whose calls are meant to write (default and filler calls, repeats, made-up
 * proposals) make them then only with `--allow-effects` (SPEC: an audit never changes your files).
 */
export function writesReachYourFiles(sandbox: Sandbox | undefined, remote: boolean): string | undefined {
  if (remote) return 'a server reached by URL runs outside any sandbox';
  if (!sandbox) return 'no sandbox (--no-sandbox)';
  const iso = sandbox.isolation;
  if (iso.filesystem === 'overlay' && sandbox.namedUnprotected.length === 0) return undefined;
  if (iso.filesystem === 'overlay') {
    const open = sandbox.namedUnprotected;
    // The reason of the nearest unprotected folder that holds the first of them.
    const holds = (u: { path: string }) => open[0] === u.path || open[0]!.startsWith(u.path === '/' ? '/' : u.path + '/');
    const why = iso.unprotected.filter(holds).sort((a, b) => b.path.length - a.path.length)[0]?.why ?? 'see the sandbox line';
    return `the copy-on-write filesystem does not cover ${open.join(', ')}, where the server was pointed (${why}), so the server's writes there would be real`;
  }
  return `no copy-on-write filesystem (${iso.unprotected[0]?.why ?? 'overlayfs is not available'}), so the server's writes would be real`;
}

/**
 * Why the server's writes would change the user's real files in this audit, or undefined when they
 * would not: the copy-on-write filesystem covers every path the server was pointed at (see
 * {@link writesReachYourFiles}), the user gave `--allow-effects`, or the server is reached by URL
 * (it runs nothing on this machine, and its tools are called as any client would call them).
 * Where it is set, the gatherers send no call that relies on a tool's word alone (see
 * {@link claimNotEnough}) and no invalid input to a tool that may write (see
 * {@link mayWriteUnprotected}); the user's own `probes:` entries are always sent.
 */
export function unprotectedFiles(sandbox: Sandbox | undefined, remote: boolean, allowEffects: boolean): string | undefined {
  if (remote || allowEffects) return undefined;
  return writesReachYourFiles(sandbox, false);
}

/**
 * Why a valid call licensed only by a tool's `readOnlyHint: true` is not sent where files are
 * unprotected (`reason` from {@link unprotectedFiles}): the hint is its author's claim, and a tool
 * that lied would change the user's files unseen.
 */
export function claimNotEnough(reason: string): string {
  return `${reason}; readOnlyHint is only a claim, so no valid call relies on it without --allow-effects`;
}

/**
 * Why a tool that may write (it states no `readOnlyHint: true`) gets no invalid input where files
 * are unprotected (`reason` from {@link unprotectedFiles}): a server that acts on invalid input (a
 * `{}` to a delete tool that falls back to a default path) would change the user's files.
 */
export function mayWriteUnprotected(reason: string): string {
  return `it may write (it states no readOnlyHint: true), and ${reason}: a tool that acted on invalid input would change your files (--allow-effects sends these calls)`;
}
