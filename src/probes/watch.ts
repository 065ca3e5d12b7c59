/**
 * One way to watch a call for side effects (SPEC section 3): mark the sandbox's effect log, make
 * the call, wait a grace period for effects set off without waiting, and attach what the log
 * gained to the call. Every gatherer that needs effects goes through here.
 */
import { failedConnectionLine, replyText } from '../classify.js';
import type { Effect, EffectMark, Sandbox } from '../target/sandbox.js';
import type { Exchange } from '../target/wire.js';
import type { ProbeCall } from '../types.js';

/** ms to wait after a reply for effects a tool set off without waiting (an `open &`). */
export const EFFECT_GRACE_MS = 250;

/** Options of {@link watched}. */
export interface WatchOptions {
  /**
   * ms to wait after the reply for effects set off without waiting (default {@link EFFECT_GRACE_MS});
   * a function decides from the call as answered.
   */
  graceMs?: number | ((call: ProbeCall) => number);
  /** Set `effects` even without a sandbox (then only a failed connection the reply reports is seen). */
  always?: boolean;
}

/**
 * Makes `call` and sets its `effects`: what the sandbox's log gained during the call and the grace
 * period, plus a network attempt when the reply itself reports a failed connection (a fetch that
 * the sandbox's namespace refused, a binary that ignored the proxy variables). Without a sandbox
 * (and without `always`) it only makes the call.
 */
export async function watched(sandbox: Sandbox | undefined, call: () => Promise<ProbeCall>, opts: WatchOptions = {}): Promise<ProbeCall> {
  const mark = sandbox?.mark();
  const c = await call();
  if (!sandbox && !opts.always) return c;
  const grace = typeof opts.graceMs === 'function' ? opts.graceMs(c) : (opts.graceMs ?? EFFECT_GRACE_MS);
  if (mark && grace > 0) await new Promise((r) => setTimeout(r, grace));
  // A write still under way (a lock file, a temp file renamed into place) is read once it is done.
  if (mark && sandbox) await sandbox.settle(mark);
  c.effects = effectsOf(sandbox, mark, c.exchange.reply);
  return c;
}

/**
 * The effects of one call, by the rules every audit and `sealmark call` share (SPEC section 3:
 * "`sealmark call` applies the same effect rules as the audit"): what the sandbox's log and
 * overlay gained since `mark`, plus a network attempt when the reply itself reports a failed
 * connection (a fetch that the sandbox's namespace refused, a binary that ignored the proxy
 * variables). Without a sandbox only the reply is read.
 */
export function effectsOf(sandbox: Sandbox | undefined, mark: EffectMark | undefined, reply: Exchange['reply']): Effect[] {
  const effects: Effect[] = mark && sandbox ? sandbox.effectsSince(mark) : [];
  const refused = failedConnectionLine(replyText(reply));
  if (refused) {
    // Inside the namespace, 127.0.0.1 is the namespace's own loopback, not the host's.
    const local = sandbox?.isolation.network === 'namespace' && /127\.0\.0\.1|localhost|\[?::1\]?/i.test(refused);
    const why = local ? " (the sandbox's loopback is its own: services on the host are not reachable there; --network on keeps the host network)" : '';
    effects.push({ kind: 'network', detail: `the reply reports a failed connection: ${refused}${why}` });
  }
  return effects;
}
