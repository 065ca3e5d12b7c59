/**
 * oversized-input (pack limits, scored): a huge string, a long array or a deeply nested object is
 * answered within the hang limit and the server lives (SPEC section 5).
 */
import { whyNotRun, type Check, type CheckMeta } from './check.js';
import { finding, verdictOf } from './finding.js';
import { BIG_ARRAY_ITEMS, BIG_STRING_BYTES, DEEP_OBJECT_LEVELS } from '../probes/oversized.js';
import type { Finding } from '../types.js';

const PROBE_IDS = new Set(['oversized-string', 'oversized-array', 'deep-object']);
const WHAT: Record<string, string> = {
  'oversized-string': 'a 1 MiB string',
  'oversized-array': 'a 100,000-item array',
  'deep-object': 'a 64-level nested object',
};

export const meta: CheckMeta = {
  id: 'oversized-input',
  title: 'Oversized arguments are answered and the server lives',
  pack: 'limits',
  weight: 'scored',
  scope: 'server',
  decidedBy: 'protocol-response',
  since: '0.1',
  severity: 'error',
  requires: ['oversized'],
  config: [],
  probes: [
    { id: 'oversized-string', core: true, description: `A string of ${BIG_STRING_BYTES} bytes (1 MiB) in place of the tool's first string property (else its first typed property).` },
    { id: 'oversized-array', core: true, description: `An array of ${BIG_ARRAY_ITEMS} items (sampled valid items when the property is an array) in place of the first array property (else the first typed property).` },
    { id: 'deep-object', core: true, description: `An object nested ${DEEP_OBJECT_LEVELS} levels deep (\`{"a":{"a":…}}\`) in place of the first object property (else the first typed property).` },
    { id: 'liveness', core: true, part: true, description: 'A tools/list after each tool\'s three calls: the server must still answer.' },
  ],
  verdicts: [
    { verdict: 'fail', when: 'an oversized value got no reply within the hang limit, the server exited, or it stopped answering tools/list' },
    { verdict: 'partial', when: 'an oversized value was answered with a broken JSON-RPC reply' },
    { verdict: 'pass', when: 'every oversized value was answered (rejected or accepted) and the server still answers' },
    { verdict: 'n/a', when: 'no tool has a typed property' },
  ],
  messages: {
    'no-answer': '{tool}: {what} in {param} got no reply within {waited} ms',
    exited: '{tool}: the server exited on {what} in {param}',
    'not-alive': '{tool}: after the oversized values the server no longer answers tools/list',
    'protocol-error': '{tool}: {what} in {param} was answered with a broken JSON-RPC reply ({problem})',
    'internal-error': '{tool}: {what} in {param} raised an unhandled error (it was answered, so this only informs)',
  },
  docs: {
    summary:
      'A model that pastes a whole file, a loop that builds an array, a client that serialises a cyclic structure to a fixed depth: arguments far larger than anyone planned reach servers. A server must answer them (rejecting is fine) within the hang limit and keep serving; a parser that recurses until it crashes, or a handler that blocks the event loop, takes every later call down with it.',
    how: [
      'For each tool with a typed property (up to `checks.robust-input.max_tools` tools), three calls are made, the other arguments taken from its `probes:` entry or sampled valid: the 1 MiB string, the 100,000-item array and the 64-level object, each in place of the first property of the type it fits (else the first typed property). A value the schema admits (a long string without `maxLength`) is sent only to a tool that states `readOnlyHint: true`: it is a real call, and a `probes:` entry vouches for its own arguments, not for 1 MiB in them.',
      'Any reply within the hang limit (robust-input\'s `hang_ms`) counts as answered, rejection or result; an unhandled error is noted but not held against this check (robust-input judges error quality).',
      'A hang, the server exiting, or no answer to the tools/list after a tool\'s three calls fails; a malformed reply is partial. Probing stops after three hangs or when the server is gone.',
      'After a value gets no answer, the server is watched for 200 ms: if its processes are still computing (on Linux, their runnable time in schedstat grew by a quarter of that or more), it is started again, so that the next value does not wait behind the one still at work and get blamed for its time, however loaded the machine. Otherwise the next value is sent once the server answers a tools/list; a server that was at work on a call sealmark gave up on gets a second tools/list, as long as the first, before it counts as no longer answering.',
      'Scoring: scored (pass 1, partial 0.5, fail 0).',
    ],
    fix: 'Bound what you read before you parse or walk it: `maxLength` on strings, `maxItems` on arrays, a depth limit in any recursive walk, and reject early with a validation error. Run heavy work off the thread that reads requests.',
    falsePositives: ['A tool that does legitimate work proportional to its input (hashing 1 MiB) may take longer than the hang limit on a slow machine; raise `checks.robust-input.hang_ms` (a locked key: the run becomes non-standard).'],
    falseNegatives: [
      'Only one property per probe and tool is filled; a size limit missing on another property is not found.',
      'Memory that grows without crashing during the run is not measured.',
    ],
    limits: ['The transcript and the JSON report keep the first 4,096 characters of each oversized request.'],
  },
};

export const check: Check = {
  meta,
  judge(a) {
    const run = a.oversized;
    if (!run) return { id: meta.id, verdict: 'n/a', findings: [], notes: [`the oversized values were not sent (${whyNotRun(a)})`] };
    const guarded = run.guarded.map((g) => `${g.tool}: not probed: ${g.why}`);
    if (run.tools.length === 0 && guarded.length > 0) return { id: meta.id, verdict: 'n/a', findings: [], notes: guarded };
    if (run.tools.length === 0) {
      const notes = run.skipped.map((s) => `${s.tool}: ${s.why}`);
      return { id: meta.id, verdict: 'n/a', findings: [], notes: ['no tool has a typed property to put an oversized value in', ...notes] };
    }
    const out: Finding[] = [];
    for (const c of a.calls) {
      if (!PROBE_IDS.has(c.probe) || !c.tool) continue;
      const data = { tool: c.tool, what: WHAT[c.probe] ?? c.probe, param: c.target ?? '' };
      const reply = c.exchange.reply;
      const cls = c.classification?.class;
      if (reply.kind === 'hang') out.push(finding(meta, 'no-answer', 'fail', { ...data, waited: reply.waitedMs }, { calls: [c.seq] }, { tool: c.tool }));
      else if (cls === 'exited') out.push(finding(meta, 'exited', 'fail', data, { calls: [c.seq] }, { tool: c.tool }));
      else if (reply.kind === 'malformed') out.push(finding(meta, 'protocol-error', 'partial', { ...data, problem: reply.problem }, { calls: [c.seq] }, { tool: c.tool }));
      else if (cls === 'internal-error') out.push(finding(meta, 'internal-error', 'info', data, { calls: [c.seq], quotes: [c.classification?.text ?? ''] }, { tool: c.tool }));
    }
    for (const l of run.liveness) {
      if (!l.alive) out.push(finding(meta, 'not-alive', 'fail', { tool: l.tool }, { calls: [l.seq] }, { tool: l.tool }));
    }
    const notes: string[] = [...guarded];
    for (const n of run.notSent) notes.push(`${n.tool}: ${n.probe} not sent: ${n.why}`);
    if (run.beyondMaxTools.length) notes.push(`not probed (beyond max_tools): ${run.beyondMaxTools.join(', ')}`);
    if (run.stopped) notes.push(`probing stopped (${run.stopped.reason}); not reached: ${run.stopped.notReached.join(', ')}`);
    return { id: meta.id, verdict: verdictOf(out), findings: out, notes };
  },
};
