/**
 * concurrency (pack limits, scored): requests in flight together are each answered once, under
 * their own id, and the server lives (SPEC section 5; JSON-RPC 2.0 section 5: one response per
 * request, with the request's id).
 *
 * One cause is scored once: the burst is made of robust-input's own invalid calls, so a server
 * that exits on one of them dies in the burst too. When the server exits during or right after the
 * burst, and the recorder blames that exit (replayed alone, or the only candidate) on a call with
 * the same tool and arguments as a call robust-input already blames an exit on, it is the same
 * exit: reported as `same-exit` (info, naming robust-input's call), not as `exited` or
 * `not-alive`. Any other exit in the burst, or a server that lives but does not answer, fails.
 */
import { whyNotRun, type Check, type CheckMeta } from './check.js';
import { finding, verdictOf } from './finding.js';
import { CONCURRENT_CALLS, DUPLICATE_WINDOW_MS, NO_SUCH_TOOL } from '../probes/concurrency.js';
import type { Finding, ProbeCall } from '../types.js';
import { INVALID_PROBES } from './robust-input.js';
import { MAX_RESTARTS } from '../probes/recorder.js';

export const meta: CheckMeta = {
  id: 'concurrency',
  title: 'Concurrent requests are each answered once',
  pack: 'limits',
  weight: 'scored',
  scope: 'server',
  decidedBy: 'protocol-response',
  since: '0.1',
  severity: 'error',
  requires: ['concurrency'],
  config: [],
  probes: [
    { id: 'concurrent-call', core: true, description: `${CONCURRENT_CALLS} invalid tools/call requests written at once: each the first robust-input probe of a tool, round robin over the tools (a call to the unknown tool \`${NO_SUCH_TOOL}\` when no tool can be given an invalid call).` },
    { id: 'concurrent-list', core: true, description: 'One tools/list written in the same burst.' },
    { id: 'liveness', core: true, part: true, description: 'A tools/list after the burst: the server must still answer.' },
  ],
  verdicts: [
    { verdict: 'fail', when: 'a request of the burst got no reply within the hang limit, an id was answered twice, the server exited, or it stopped answering' },
    { verdict: 'partial', when: 'a reply in the burst was malformed, or a reply carried an id no request had' },
    { verdict: 'pass', when: 'every request was answered exactly once under its own id and the server still answers' },
  ],
  messages: {
    'no-answer': '{count} of the {total} requests sent together got no reply within {waited} ms (first: {example})',
    duplicate: '{count} of the {total} requests sent together were answered more than once (first: id {id}, {times} answers)',
    exited: 'the server exited during the burst of {total} concurrent requests',
    'not-alive': 'after the burst the server no longer answers tools/list',
    'same-exit': 'the server exited during the burst on {tool} with the arguments of robust-input\'s {probe} call (call {seq}): the same exit robust-input reports, not scored twice',
    malformed: '{count} replies in the burst broke JSON-RPC (first: {problem})',
    'foreign-id': '{count} replies in the burst carried an id no request had (first: {example})',
  },
  docs: {
    summary:
      'Clients pipeline requests: several model turns, a retry beside the original, a tools/list refresh in the middle of calls. A server that answers one request at a time, mixes up ids, answers twice or drops requests under load makes the client wait forever or give one call\'s answer to another.',
    how: [
      `${CONCURRENT_CALLS} invalid tools/call requests and one tools/list are written back to back without waiting; each reply is waited for up to the hang limit (robust-input's \`hang_ms\`).`,
      `For ${DUPLICATE_WINDOW_MS} ms after the last reply sealmark keeps listening for second answers. Every id must be answered exactly once; replies with an id nobody sent are reported.`,
      'A tools/list after the burst must be answered.',
      'Scoring: scored (pass 1, partial 0.5, fail 0).',
    ],
    fix: 'Handle each request independently and answer with its own id; never drop a request because others are in flight (queue it); keep a request\'s error path from answering twice.',
    falsePositives: ['A server that deliberately serialises calls and takes longer than the hang limit to drain the burst fails; raise `checks.robust-input.hang_ms` if that is by design.'],
    falseNegatives: [
      'The burst uses invalid calls, which most servers reject before any real work; races in the work itself are not exercised.',
      'A second answer later than the listening window is reported by protocol-errors as a stray response instead.',
    ],
    limits: [`The burst is ${CONCURRENT_CALLS} calls plus one tools/list, fixed by the methodology.`],
  },
};

export const check: Check = {
  meta,
  judge(a) {
    const run = a.concurrency;
    if (!run) {
      const notes = [`the burst was not sent (${whyNotRun(a)})`];
      const restarts = a.restarts ?? [];
      if (restarts.length >= MAX_RESTARTS && restarts.every((r) => r.ok)) notes.push(`the restart budget ran out: the server exited ${restarts.length + 1} times, and sealmark starts it again at most ${MAX_RESTARTS} times`);
      return { id: meta.id, verdict: 'n/a', findings: [], notes };
    }
    const burst = a.calls.filter((c) => c.probe === 'concurrent-call' || c.probe === 'concurrent-list');
    const total = burst.length;
    const out: Finding[] = [];
    const exited = burst.filter((c) => c.exchange.reply.kind === 'exited');
    const same = sameExit(a, [...burst.map((c) => c.seq), ...(run.liveness ? [run.liveness.seq] : [])]);
    if (same) {
      out.push(finding(meta, 'same-exit', 'info', { tool: same.robust.tool!, probe: same.robust.probe, seq: same.robust.seq }, { calls: [same.culprit.seq, same.robust.seq, ...exited.map((c) => c.seq)] }));
    } else if (exited.length > 0) out.push(finding(meta, 'exited', 'fail', { total }, { calls: exited.map((c) => c.seq) }));
    const hung = burst.filter((c) => c.exchange.reply.kind === 'hang');
    if (hung.length > 0) {
      const r = hung[0]!.exchange.reply as { waitedMs: number };
      out.push(finding(meta, 'no-answer', 'fail', { count: hung.length, total, waited: r.waitedMs, example: describe(hung[0]!.exchange.sent) }, { calls: hung.map((c) => c.seq) }));
    }
    const times = new Map<number, number>();
    for (const d of run.duplicates) times.set(d.id, (times.get(d.id) ?? 1) + 1);
    if (times.size > 0) {
      const [id, n] = [...times][0]!;
      const seqs = burst.filter((x) => times.has(x.exchange.id)).map((x) => x.seq);
      const quotes = run.duplicates.slice(0, 3).map((d) => JSON.stringify(d.message).slice(0, 200));
      out.push(finding(meta, 'duplicate', 'fail', { count: times.size, total, id, times: n }, { calls: seqs, quotes }));
    }
    const malformed = burst.filter((c) => c.exchange.reply.kind === 'malformed');
    if (malformed.length > 0) {
      const r = malformed[0]!.exchange.reply as { problem: string };
      out.push(finding(meta, 'malformed', 'partial', { count: malformed.length, problem: r.problem }, { calls: malformed.map((c) => c.seq) }));
    }
    if (run.foreign.length > 0) {
      const example = JSON.stringify(run.foreign[0]).slice(0, 200);
      out.push(finding(meta, 'foreign-id', 'partial', { count: run.foreign.length, example }, { quotes: run.foreign.slice(0, 3).map((m) => JSON.stringify(m).slice(0, 200)) }));
    }
    if (!same && exited.length === 0 && !run.liveness?.alive) out.push(finding(meta, 'not-alive', 'fail', {}, { calls: run.liveness ? [run.liveness.seq] : [] }));
    const notes = run.source === 'unknown-tool' ? [`no tool could be given an invalid call: the burst called the unknown tool ${NO_SUCH_TOOL}`] : [];
    if (same) notes.push('the server exited on a call robust-input already fails for; how it handles concurrent requests was not judged past that');
    return { id: meta.id, verdict: verdictOf(out), findings: out, notes };
  },
};

/**
 * The exit seen on one of `seqs` (the burst and its liveness call), when the recorder blames it on
 * a call with the tool and arguments of a robust-input call that an exit is already blamed on.
 */
function sameExit(a: Parameters<Check['judge']>[0], seqs: number[]): { culprit: ProbeCall; robust: ProbeCall } | undefined {
  const exits = a.exits ?? [];
  const bySeq = (s: number | undefined) => (s === undefined ? undefined : a.calls.find((c) => c.seq === s));
  const shape = (c: ProbeCall) => `${c.tool}\u0000${JSON.stringify(c.arguments) ?? ''}`;
  const robust = new Map<string, ProbeCall>();
  for (const e of exits) {
    const c = bySeq(e.culprit);
    if (c?.tool && INVALID_PROBES.has(c.probe) && !robust.has(shape(c))) robust.set(shape(c), c);
  }
  for (const e of exits) {
    if (!seqs.includes(e.seenAt)) continue;
    const culprit = bySeq(e.culprit);
    const r = culprit?.tool ? robust.get(shape(culprit)) : undefined;
    if (culprit && r) return { culprit, robust: r };
  }
  return undefined;
}

/** A short description of a request line for a message: method and tool name. */
function describe(sent: string): string {
  const m = /"method":"([^"]+)"/.exec(sent)?.[1] ?? 'request';
  const tool = /"name":"([^"]{1,80})"/.exec(sent)?.[1];
  return tool ? `${m} ${tool}` : m;
}
