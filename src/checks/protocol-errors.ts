/**
 * protocol-errors (pack core, scored): the mistakes a careless client makes at the protocol level
 * are answered as errors and survived. SPEC section 5; JSON-RPC 2.0 sections 4.1 (a notification
 * is never answered) and 5.1 (-32601 method not found); MCP `server/tools.mdx` (an unknown tool
 * is an error).
 */
import { whyNotRun, type Check, type CheckMeta } from './check.js';
import { FIRST_WIRE_ID } from '../target/wire.js';
import { isErrorResult } from '../classify.js';
import { finding, verdictOf } from './finding.js';
import type { Finding } from '../types.js';
import { sdkAdvice, sdkCause, sdkCauseField, type ObservedReply, type SdkProbe } from '../target/sdk.js';
import { UNKNOWN_METHOD } from '../probes/protocol-errors.js';

/** Probes an SDK's protocol layer answers before a server's own code sees the request. */
const SDK_PROBES: ReadonlySet<string> = new Set<SdkProbe>(['unknown-method', 'unknown-notification', 'array-params']);

export const meta: CheckMeta = {
  id: 'protocol-errors',
  title: 'Answers protocol mistakes with errors and survives them',
  pack: 'core',
  weight: 'scored',
  scope: 'server',
  decidedBy: 'protocol-response',
  since: '0.1',
  severity: 'warning',
  requires: ['protocol-errors'],
  config: [{ key: 'timeout_probe_sec', default: 10, standard: 'locked', meaning: 'Seconds each request may take before it counts as a hang.' }],
  probes: [
    { id: 'unknown-method', core: true, description: 'A request for a method no MCP version defines (`sealmark/no-such-method`): must get JSON-RPC error -32601.' },
    { id: 'unknown-notification', core: true, description: 'Notifications the server does not handle (`notifications/sealmark_unknown`, `notifications/roots/list_changed`): must be ignored, never answered; a follow-up request must still be answered.' },
    { id: 'unknown-tool', core: true, description: 'tools/call of a tool that does not exist: must be an error (JSON-RPC error or isError result), not a crash.' },
    { id: 'array-params', core: true, description: 'tools/call whose params are an array instead of an object: must be an error.' },
    { id: 'liveness', core: true, description: 'tools/list after each of the above, to see the server is still alive.' },
  ],
  verdicts: [
    { verdict: 'fail', when: 'the server exited or stopped answering after one of the probes' },
    { verdict: 'partial', when: 'a request was silently dropped (no reply, server still alive), an unknown method got something other than -32601, a notification was answered, an unknown tool or array params were answered as success, or a response carried an id nobody asked for' },
    { verdict: 'pass', when: 'every probe got the right kind of error and the server stayed alive' },
    { verdict: 'n/a', when: 'the server was gone, or robust-input had stopped after three hangs, before the probes could run' },
  ],
  messages: {
    'unknown-method-code': 'an unknown method was answered with error {code} instead of -32601 (Method not found){sdk}',
    'unknown-method-result': 'an unknown method was answered with a result instead of error -32601{sdk}',
    'notification-answered': 'the notification {method} was answered: {reply}',
    'unknown-tool-succeeded': 'tools/call of a tool that does not exist ({tool}) succeeded',
    'array-params-accepted': 'tools/call with params as an array succeeded instead of failing{sdk}',
    malformed: 'the reply to {probe} is not valid JSON-RPC ({problem}){sdk}',
    died: 'the server {how} after the {probe} probe{sdk}',
    'no-reply': 'the {probe} request got no reply within {ms} ms (the server lives, but dropped it; JSON-RPC requires an error){sdk}',
    'stray-response': '{count} responses carried an id no request was waiting for, e.g. {example}',
  },
  docs: {
    summary:
      'Clients make protocol mistakes: they call methods a server does not have, send notifications it does not expect, call tools that were renamed, send malformed params. A server must answer each with an error and keep serving; one that crashes takes every agent down with it.',
    how: [
      'Each probe is one request or notification, followed by tools/list to see that the server lives (on 2025 versions a ping follows each notification; on 2026-07-28, where ping is gone, tools/list).',
      'An unknown method must get JSON-RPC error -32601. Any other error code is partial; a result is partial.',
      'A notification must never be answered (JSON-RPC 2.0 section 4.1); any response arriving within 300 ms is quoted.',
      'An unknown tool may be answered with a JSON-RPC error (-32602 per the spec) or an isError result (what SDK 1.21–1.32 servers send); a success is partial.',
      'Array params must be answered with an error. A request that gets no reply while later ones are answered was dropped (partial: JSON-RPC requires an error reply; SDK 1.x servers drop array params this way); an exit, or silence from then on, fails.',
      'The array-params request goes out first, right after the listing, and is judged when every other probe of the audit is done, so that the hang limit of a server that never answers it passes beside them. A server that answers nothing else while it waits (one request at a time) is started again and gets the request again at the end, as in a serial run; an answer to it that comes only after another probe took the server down is not used either.',
      'When the server is built on a known SDK (its package\'s dependencies, or the module and crate names in its binary: @modelcontextprotocol/sdk, fastmcp, tmcp, mcp-go, go-sdk, rmcp), a finding of a request the SDK answers before the server\'s code (the unknown method, the notifications, array params) names the SDK and its version only when the reply is the one that SDK version is known to give (a table read from each SDK\'s source or runs of real servers: @modelcontextprotocol/sdk 0.5–1.x drops array params unanswered and answers an unknown method -32601; rmcp exits on array params). A different reply comes from the server\'s own code (a `fallbackRequestHandler`) and is the author\'s.',
      'The unknown-method finding replays with `sealmark call --method sealmark/no-such-method --raw-params \'{}\'`, the array-params one with `sealmark call --raw-params \'[]\'`.',
      'Scoring: scored (pass 1, partial 0.5, fail 0).',
    ],
    fix: 'On a hand-written server: answer unknown methods with -32601, ignore unknown notifications, never send a response to a message that has no id, return an error for an unknown tool name, and check the params shape before reading it. When the finding names an SDK, the reply is that SDK version\'s, given before your code runs, and every server on it answers the same: upgrade when the finding names a release that answers correctly; where none is known (no @modelcontextprotocol/sdk release up to 1.32.2 answers array params), accept it with a `suppress:` entry for the check and message id it names, and report it upstream. A finding that names no SDK is your code\'s, even on an SDK (a `fallbackRequestHandler` that answers every method).',
    falsePositives: ['notifications/roots/list_changed is sent although sealmark declares no roots capability; a server may log it, but must not answer it.'],
    falseNegatives: ['Batches, invalid UTF-8 and non-JSON input are not sent (they break the stdio framing rules for clients).'],
    limits: ['One request of each kind.'],
  },
};

export const check: Check = {
  meta,
  judge(a, ctx) {
    const run = a.protocol;
    if (!run) {
      return { id: meta.id, verdict: 'n/a', findings: [], notes: [`not run: ${whyNotRun(a)} before the protocol probes`] };
    }
    const out: Finding[] = [];
    const probeOf = (id: string, data: Record<string, string | number>) =>
      typeof data.probe === 'string' ? data.probe : id.startsWith('unknown-method') ? 'unknown-method' : id === 'array-params-accepted' ? 'array-params' : id === 'notification-answered' ? 'unknown-notification' : undefined;
    /**
     * A finding; `seen` is the reply it reports. It names the SDK only when the SDK's known reply
     * to that probe is `seen` (src/target/sdk.ts SDK_BEHAVIOURS); otherwise it is the author's.
     */
    const F = (id: string, level: Finding['level'], data: Record<string, string | number>, ev: Finding['evidence'], extra: { request?: string } = {}, seen?: ObservedReply) => {
      const probe = probeOf(id, data);
      const cause = probe && SDK_PROBES.has(probe) && seen ? sdkCause(a.sdk, probe as SdkProbe, seen) : undefined;
      const withSdk = meta.messages[id]!.includes('{sdk}') ? { ...data, sdk: cause ? `; ${sdkAdvice(cause, meta.id, id)}` : '' } : data;
      const replay =
        probe === 'array-params' && ctx.replayRawParams ? { replay: ctx.replayRawParams('[]') } : probe === 'unknown-method' && ctx.replayRawParams ? { replay: ctx.replayRawParams('{}', UNKNOWN_METHOD) } : {};
      const by = cause ? { sdkCause: sdkCauseField(cause) } : {};
      return finding(meta, id, level, withSdk, ev, { ...extra, ...replay, ...by });
    };
    const PROBES = ['unknown-method', 'notification-follow-up', 'unknown-tool', 'array-params'];
    const first = a.calls.find((c) => PROBES.includes(c.probe));
    // Its own calls only: the probes and the liveness checks between them (later gatherers have theirs).
    const own = new Set(run.seqs);
    const seq = first ? a.calls.filter((c) => own.has(c.seq) && (PROBES.includes(c.probe) || c.probe === 'liveness')) : [];
    let last = 'unknown-method';
    for (let i = 0; i < seq.length; i++) {
      const c = seq[i]!;
      if (PROBES.includes(c.probe)) last = c.probe === 'notification-follow-up' ? 'unknown-notification' : c.probe;
      const r = c.exchange.reply;
      if (r.kind === 'exited') {
        out.push(F('died', 'fail', { how: 'exited', probe: last }, { calls: [c.seq] }, { request: c.exchange.sent }, { kind: 'exited' }));
        // The server was started again for the probes after this one (SPEC section 3 step 3).
        continue;
      }
      if (r.kind === 'hang') {
        // Silence on one request is a dropped request if the server answers a later one; otherwise it stopped answering.
        const later = seq.slice(i + 1).some((x) => x.exchange.reply.kind === 'response' || x.exchange.reply.kind === 'malformed');
        if (later) out.push(F('no-reply', 'partial', { probe: last, ms: r.waitedMs }, { calls: [c.seq] }, { request: c.exchange.sent }, { kind: 'no-reply' }));
        else {
          out.push(F('died', 'fail', { how: 'stopped answering', probe: last }, { calls: [c.seq] }, { request: c.exchange.sent }));
          break;
        }
        continue;
      }
      if (r.kind === 'malformed') {
        out.push(F('malformed', 'partial', { probe: c.probe, problem: r.problem }, { calls: [c.seq] }, { request: c.exchange.sent }));
        continue;
      }
      const errorResult = isErrorResult(r);
      if (c.probe === 'unknown-method') {
        if (r.error && r.error.code !== -32601) out.push(F('unknown-method-code', 'partial', { code: String(r.error.code) }, { calls: [c.seq] }, { request: c.exchange.sent }, { kind: 'error', code: Number(r.error.code) }));
        if (!r.error) out.push(F('unknown-method-result', 'partial', {}, { calls: [c.seq], quotes: [JSON.stringify(r.result ?? null).slice(0, 200)] }, { request: c.exchange.sent }, { kind: 'result' }));
      } else if (c.probe === 'unknown-tool' && !r.error && !errorResult) {
        out.push(F('unknown-tool-succeeded', 'partial', { tool: c.tool ?? '' }, { calls: [c.seq] }, { request: c.exchange.sent }));
      } else if (c.probe === 'array-params' && !r.error && !errorResult) {
        out.push(F('array-params-accepted', 'partial', {}, { calls: [c.seq] }, { request: c.exchange.sent }, { kind: 'result' }));
      }
    }
    const answeredNotes = new Set<unknown>();
    for (const n of run.notifications) {
      for (const reply of n.replies) {
        answeredNotes.add(reply);
        const text = JSON.stringify(reply).slice(0, 200);
        out.push(F('notification-answered', 'partial', { method: n.method, reply: text }, { calls: [n.followUpSeq], quotes: [text] }, { request: n.sent }, { kind: 'answered' }));
      }
    }
    // Second or wrong-id answers during the concurrency burst are that check's finding, not this one's.
    const burst = new Set<unknown>([...(a.concurrency?.duplicates.map((d) => d.message) ?? []), ...(a.concurrency?.foreign ?? [])]);
    // A server that answers notifications answers sealmark's notifications/cancelled too: those
    // answers (an id sealmark never used) are the same fault, already reported, not strays.
    const answersNotifications = answeredNotes.size > 0;
    const foreignId = (m: unknown) => {
      const id = (m as { id?: unknown } | null)?.id;
      return !(typeof id === 'number' && id >= FIRST_WIRE_ID);
    };
    const strays = a.strays.filter((s) => !answeredNotes.has(s) && !burst.has(s) && !(answersNotifications && foreignId(s)));
    if (strays.length > 0) {
      out.push(F('stray-response', 'partial', { count: strays.length, example: JSON.stringify(strays[0]).slice(0, 200) }, { quotes: strays.slice(0, 3).map((s) => JSON.stringify(s).slice(0, 200)) }));
    }
    return { id: meta.id, verdict: verdictOf(out), findings: out, notes: [] };
  },
};
