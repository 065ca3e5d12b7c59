/**
 * robust-input (pack core, scored): does the server survive and cleanly reject schema-invalid
 * arguments? Seed "Survives malformed tool input"; SPEC section 5.
 */
import type { Check, CheckMeta } from './check.js';
import { coverageIn, finding, group, verdictOf } from './finding.js';
import type { Finding, ProbeCall } from '../types.js';
import { MAX_RESTARTS, type ExitCause } from '../probes/recorder.js';
import type { ExitInfo } from '../target/stdio-transport.js';
import { EFFECT_TIMING } from './effects-common.js';

/** The schema-invalid probes, whose replies decide the verdict. */
export const INVALID_PROBES: ReadonlySet<string> = new Set([
  'missing-required',
  'wrong-types',
  'nulls',
  'extra-argument',
  'string-as-object',
  'nested-string',
  'nested-item',
]);
const VALID_PROBES = new Set(['read-only-no-args', 'user-probe']);

export const meta: CheckMeta = {
  id: 'robust-input',
  title: 'Survives malformed tool input',
  pack: 'core',
  weight: 'scored',
  scope: 'server',
  decidedBy: 'protocol-response',
  since: '0.1',
  severity: 'error',
  requires: ['robust-input'],
  config: [
    { key: 'checks.robust-input.hang_ms', default: null, standard: 'locked', value: { type: 'integer', min: 100, max: 600_000, nullable: true }, meaning: 'Milliseconds a call may go unanswered before it counts as a hang. null derives max(2000, timeout_probe_sec × 1000).' },
    { key: 'checks.robust-input.max_tools', default: 25, standard: 'locked', value: { type: 'integer', min: 1, max: 10_000 }, meaning: 'Most tools probed, in listing order.' },
    { key: 'timeout_probe_sec', default: 10, standard: 'locked', meaning: 'Seconds a probe call may take (flag --timeout-probe); feeds the hang limit.' },
  ],
  probes: [
    { id: 'missing-required', core: true, description: '`{}` to a tool that has required arguments.' },
    { id: 'wrong-types', core: true, description: 'Every typed argument gets the first of 12345, "not-a-valid-value", true, ["x"], {"x": 1} that its declared type does not allow and that is not in its enum.' },
    { id: 'nulls', core: true, description: 'Every typed argument that does not allow null is null.' },
    { id: 'extra-argument', core: true, description: 'The wrong-types arguments plus an undeclared `sm_unexpected`.' },
    { id: 'string-as-object', core: true, description: 'Every string argument gets an object (a second wrong type; the first candidate was a number).' },
    { id: 'nested-string', core: true, description: 'A string in place of a required array-of-object argument (one call per tool that has one).' },
    { id: 'nested-item', core: true, description: 'A required array-of-object argument gets one item lacking a field its items require, the other arguments valid (one call per tool that has one).' },
    { id: 'read-only-no-args', core: false, description: '`{}` to a tool with no arguments that declares readOnlyHint: true: a valid call, counted for coverage. Not sent where a tool that lied would change real files (no sandbox or no copy-on-write filesystem) unless --allow-effects.' },
    { id: 'user-probe', core: false, description: 'Each `probes:` entry of the config, sent as written: a valid call that counts for coverage and is scanned for leaks.' },
    { id: 'robust.lenient-downstream', core: true, part: true, description: 'An error reporting a failed fetch (connection refused, DNS, timeout, TLS) that names no parameter: the invalid argument was used before the server failed.' },
    { id: 'robust.internal-error', core: true, part: true, description: 'An unhandled runtime error (TypeError, Cannot read properties, is not a function, KeyError, AttributeError, NoneType …) or a JSON-RPC -32603: an internals leak, not a validation decision.' },
  ],
  verdicts: [
    { verdict: 'fail', when: 'the server exited (on a call that is blamed for it, or on none that could be: exited-unattributed) or stopped answering, or a call got no reply within the hang limit' },
    { verdict: 'partial', when: 'a reply leaks a stack trace or internal path, a schema-invalid call succeeded without a refusal, an error shows the argument was used downstream (lenient-downstream), an unhandled runtime error came back (internal-error), or a reply was not valid JSON-RPC' },
    { verdict: 'pass', when: 'every invalid call was rejected and the server stayed responsive' },
    { verdict: 'n/a', when: 'no tool has an argument that can be malformed and no valid call was made' },
  ],
  messages: {
    exited: '{tool}: the server exited on the {probe} call ({exit})',
    'exited-unattributed': 'the server exited during the audit ({exit}) and no call is blamed: {why}; candidates: {calls}',
    hang: '{tool}: no reply to the {probe} call within {ms} ms',
    'stopped-answering': '{tool}: the server stopped answering tools/list after this tool\'s calls',
    'three-hangs': 'probing stopped after three hangs; not reached: {tools}',
    'server-gone': 'probing stopped because the server is gone; not reached: {tools}',
    accepted: '{tool}: schema-invalid arguments were accepted ({probe}: {why})',
    'lenient-downstream': '{tool}: the invalid argument was used before the call failed ({probe}): {text}',
    'internal-error': '{tool}: an unhandled runtime error came back instead of a validation error ({probe}): {text}',
    leak: '{tool}: the reply to {probe} leaks internals ({pattern}): {line}',
    'protocol-error': '{tool}: the reply to {probe} is not valid JSON-RPC ({problem})',
    'text-refusal': '{tool}: refused in plain text without isError ({probe}); a client that reads isError cannot tell it from success',
    'rejected-unnamed': '{tool}: rejected without naming the argument ({probe}); a model cannot tell what to fix',
    'sep-1303': '{tool}: invalid arguments answered as JSON-RPC error {code}; since 2025-11-25 (SEP-1303) they belong in a tool result with isError: true',
    'needs-probe': '{tool}: {why}; add a probes: entry to exercise it',
    'not-covered': '{tool}: the read-only tool did not answer its own no-argument call cleanly ({class}); not counted as covered',
    'user-probe-unexpected': '{tool}: your probes: entry expected {expect} but the reply was {class}',
    'beyond-max-tools': '{count} tools beyond max_tools ({max}) were not probed: {tools}',
    skipped: '{tool}: not probed: {why}',
  },
  docs: {
    summary:
      'Calls each tool with arguments that break its own inputSchema, the way a guessing model or a buggy client does, and watches whether the server rejects them cleanly and stays up. A server that dies or hangs on one bad call is an outage for every agent sharing it.',
    how: [
      'Up to max_tools tools (in listing order, minus skip_tools) get the probes above; each probe is skipped where it does not apply, and a property with no declared type is never malformed because any value might be valid.',
      'Every probe\'s arguments are validated with Ajv against the tool\'s own inputSchema (2020-12 unless $schema says otherwise) before they are sent: a value the schema accepts is never sent, so a server is never blamed for accepting valid input.',
      'Each reply gets one class (SPEC section 4): rejected, rejected-unnamed, text-refusal, lenient-downstream, internal-error, accepted, hang, exited or protocol-error; each is also scanned for leaked internals (stack frames, internal paths).',
      'After a tool\'s last probe, and after any protocol error, tools/list is sent to see that the server is still alive. After three hangs probing stops and what was not reached is listed.',
      'An exit is blamed on a call only when that holds: the candidates are the calls in flight when the server exited and the tools/call requests answered up to 1 s before (a server may reply, then crash in work it scheduled). One candidate is the cause; of several, after the restart each is replayed alone (most recent first, watched 200 ms after its reply) and the one that exits the server again is the cause, its replay and the server\'s stderr in the evidence. When none does (or the confirmation restarts, kept apart from the restarts for the remaining probes, are spent, or an earlier exit was reproduced by no single call, as with a server that exits on its n-th call whatever it is), exited-unattributed names the candidates and blames no tool.',
      'A tool with no arguments that declares readOnlyHint: true gets one valid `{}` call; it counts for coverage only when it succeeds. Your probes: entries are sent as valid calls and scanned the same way.',
      EFFECT_TIMING,
      'Scoring: scored, so pass = 1 point, partial = 0.5, fail = 0; a fail lowers the core pack but never caps the letter.',
    ],
    fix: 'Validate arguments against the declared inputSchema before running the tool, and answer a schema-invalid call with a tool result with isError: true whose text names the argument and what is wrong. Do not use an argument before validating it (an upstream request built from it is leniency), do not let runtime errors (TypeError, KeyError) reach the reply, and for arrays of objects check each item\'s required fields. Strip stack traces and file paths from error texts.',
    falsePositives: [
      'Only schema-invalid input is sent (proven with Ajv), so a tool that rejects it cannot have run with unintended input.',
      'Many JavaScript servers coerce 12345 to "12345" for a string argument; that is lenient and usually harmless, and still reads as partial.',
      'The C:\\Users\\… pattern also matches an ordinary message that mentions a Windows user directory.',
      'A slow server can exceed the hang limit under load.',
    ],
    falseNegatives: [
      'A tool with no arguments that is not declared read-only is never called; it is listed as needing a probes: entry.',
      'Only required array-of-object arguments are descended into (nested-string, nested-item); object arguments and optional ones are not.',
      'An undeclared key beside valid arguments, and a call that omits `arguments`, are not sent here (every call here is schema-invalid): strict-arguments sends them, to read-only tools only.',
    ],
    limits: [
      'At most one call per probe per tool, for the first max_tools tools. Fuzzing, oversized input and concurrency belong to pack limits.',
    ],
  },
};

/** How a server ended, in words (see {@link exitText}). */
export function exitWords(exit: ExitInfo | null): string {
  if (!exit) return 'connection closed';
  if (exit.lost) return `connection lost: ${exit.lost}`;
  if (exit.code === null && exit.signal === null) return 'connection lost';
  return exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
}

/** The last lines the server wrote to stderr before the exit, as quotes. */
export function stderrQuotes(cause: ExitCause | undefined): string[] {
  const lines = (cause?.stderrTail ?? '').trim().split('\n').filter((l) => l.trim() !== '');
  return lines.slice(-3).map((l) => `stderr: ${l.slice(0, 200)}`);
}

/** A call by seq in a few words: `get_thing missing-required`, `liveness`. */
function describeCall(calls: ProbeCall[], seq: number): string {
  const c = calls.find((x) => x.seq === seq);
  return c ? [c.tool, c.probe].filter(Boolean).join(' ') : `call ${seq}`;
}

/** The server-level finding for an exit no call is blamed on: the candidates and the stderr tail. */
function unattributed(e: ExitCause, calls: ProbeCall[]): Finding {
  const why =
    e.by === 'none-reproduced'
      ? `replayed alone after a restart, none of the ${e.candidates.length} candidate calls exited it again`
      : e.by === 'no-candidate'
        ? 'no call was in flight or answered shortly before'
        : `${e.candidates.length} calls could have caused it, and they were not replayed alone (${e.unconfirmed ?? 'no confirmation restart was left'})`;
  const list = e.candidates.slice(0, 8).map((s) => `${s} (${describeCall(calls, s)})`).join(', ') + (e.candidates.length > 8 ? ', …' : '');
  // No evidence calls: a finding pointing at a call gets that call's replay line, and this one
  // blames none. The calls are named in the message and quotes.
  const replays = e.cleared.length > 0 ? [`replays that did not exit it: calls ${e.cleared.join(', ')}`] : [];
  return finding(meta, 'exited-unattributed', 'fail', { exit: exitWords(e.exit), why, calls: list || 'none' }, { quotes: [`seen on call ${e.seenAt} (${describeCall(calls, e.seenAt)})`, ...replays, ...stderrQuotes(e)] });
}

/** How an `exited` call ended, in words: `exit code 1`, `signal SIGKILL`, `connection lost: …`. */
export function exitText(call: ProbeCall): string {
  const r = call.exchange.reply;
  if (r.kind !== 'exited' || !r.exit) return 'connection closed';
  // A server reached by URL has no exit status: its connection was lost, for the reason kept.
  if (r.exit.lost) return `connection lost: ${r.exit.lost}`;
  if (r.exit.code === null && r.exit.signal === null) return 'connection lost';
  return r.exit.signal ? `signal ${r.exit.signal}` : `exit code ${r.exit.code}`;
}

export const check: Check = {
  meta,
  judge(a, ctx) {
    const run = a.robust;
    const notes: string[] = [];
    if (!run) return { id: meta.id, verdict: 'n/a', findings: [], notes: ['robust-input did not run'] };
    const out: Finding[] = [];
    const calls = a.calls.filter((c) => c.tool !== undefined && (INVALID_PROBES.has(c.probe) || VALID_PROBES.has(c.probe)));
    const replayOf = (c: ProbeCall) => ({ tool: c.tool, replay: ctx.replay(c.tool!, c.arguments), request: c.exchange.sent });
    const hangMs = (c: ProbeCall) => (c.exchange.reply.kind === 'hang' ? c.exchange.reply.waitedMs : 0);
    const shownReply = new Set<string>();
    const exits = a.exits ?? [];
    const robustSeqs = new Set(calls.map((c) => c.seq));
    // An exit blamed on a call other than the one it was seen on, where either is robust-input's:
    // the finding names the call that reproduced it, with its replay and the server's stderr.
    for (const e of exits) {
      if (e.culprit === undefined || e.culprit === e.seenAt || !(robustSeqs.has(e.seenAt) || robustSeqs.has(e.culprit))) continue;
      const c = a.calls.find((x) => x.seq === e.culprit);
      if (!c?.tool) continue;
      const quotes = [`seen on call ${e.seenAt} (${describeCall(a.calls, e.seenAt)}), which was not the cause`];
      if (e.replay !== undefined) quotes.push(`replayed alone after a restart (call ${e.replay}), this call exited the server again (${exitWords(e.exit)})`);
      out.push(finding(meta, 'exited', 'fail', { tool: c.tool, probe: c.probe, exit: exitWords(e.exit) }, { calls: [c.seq, ...(e.replay !== undefined ? [e.replay] : []), e.seenAt], quotes: [...quotes, ...stderrQuotes(e)] }, replayOf(c)));
    }
    for (const c of calls) {
      const cl = c.classification;
      if (!cl) continue;
      const base = { tool: c.tool!, probe: c.probe };
      const ev = { calls: [c.seq] };
      if (cl.leaks.length > 0) {
        const patterns = [...new Set(cl.leaks.map((l) => l.pattern))].join(', ');
        const lines = [...new Set(cl.leaks.map((l) => l.line))];
        out.push(finding(meta, 'leak', 'partial', { ...base, pattern: patterns, line: lines[0]! }, { calls: [c.seq], quotes: [...lines, `reply to ${c.probe}: ${cl.text.slice(0, 160)}`] }, replayOf(c)));
      }
      const valid = VALID_PROBES.has(c.probe);
      switch (cl.class) {
        case 'exited': {
          const cause = exits.find((e) => e.seenAt === c.seq);
          // Blamed on another call (a reply, then the exit): reported on that call below.
          if (cause && cause.culprit !== undefined && cause.culprit !== c.seq) continue;
          if (cause && cause.culprit === undefined) {
            out.push(unattributed(cause, a.calls));
            continue;
          }
          const again = cause?.replay !== undefined ? [`replayed alone after a restart (call ${cause.replay}), this call exited the server again`] : [];
          out.push(finding(meta, 'exited', 'fail', { ...base, exit: exitText(c) }, { calls: [c.seq, ...(cause?.replay !== undefined ? [cause.replay] : [])], quotes: [...again, ...stderrQuotes(cause)] }, replayOf(c)));
          continue;
        }
        case 'hang':
          out.push(finding(meta, 'hang', 'fail', { ...base, ms: hangMs(c) }, ev, replayOf(c)));
          continue;
        case 'protocol-error': {
          const r = c.exchange.reply;
          out.push(finding(meta, 'protocol-error', 'partial', { ...base, problem: r.kind === 'malformed' ? r.problem : 'result is not a tool result' }, ev, replayOf(c)));
          continue;
        }
      }
      if (valid) {
        if (c.probe === 'read-only-no-args' && cl.class !== 'accepted') {
          out.push(finding(meta, 'not-covered', 'info', { ...base, class: cl.class }, ev, replayOf(c)));
        }
        if (c.probe === 'user-probe') {
          const expect = a.config.probes.find((p) => p.tool === c.tool && JSON.stringify(p.arguments) === JSON.stringify(c.arguments))?.expect ?? 'ok';
          const ok = cl.class === 'accepted';
          if ((expect === 'ok') !== ok) out.push(finding(meta, 'user-probe-unexpected', 'info', { ...base, expect, class: cl.class }, ev, replayOf(c)));
        }
        continue;
      }
      const why = c.invalidBecause?.[0] ?? 'invalid';
      switch (cl.class) {
        case 'accepted': {
          // In the sandbox, what the accepted call set off is shown beside the proof of invalidity
          // (case C7: the undeclared key reached the effect).
          const effects = (c.effects ?? []).map((e) => `effect: ${e.kind}: ${e.detail}`);
          // The server's own reply, labelled with its probe (SPEC section 8): the first one per tool,
          // so the findings grouped from several calls keep room for their effects.
          const reply = cl.text && !shownReply.has(c.tool!) ? [`reply to ${c.probe}: ${cl.text.slice(0, 160)}`] : [];
          shownReply.add(c.tool!);
          out.push(finding(meta, 'accepted', 'partial', { ...base, why }, { calls: [c.seq], quotes: [...(c.invalidBecause?.slice(0, 3) ?? []), ...effects, ...reply] }, replayOf(c)));
          break;
        }
        case 'lenient-downstream':
          out.push(finding(meta, 'lenient-downstream', 'partial', { ...base, text: cl.text.slice(0, 200) }, { calls: [c.seq], quotes: [cl.text.slice(0, 200)] }, replayOf(c)));
          break;
        case 'internal-error':
          out.push(finding(meta, 'internal-error', 'partial', { ...base, text: cl.text.slice(0, 200) }, { calls: [c.seq], quotes: [cl.text.slice(0, 200)] }, replayOf(c)));
          break;
        case 'text-refusal':
          out.push(finding(meta, 'text-refusal', 'info', base, { calls: [c.seq], quotes: [cl.text.slice(0, 200)] }, replayOf(c)));
          break;
        case 'rejected-unnamed':
          out.push(finding(meta, 'rejected-unnamed', 'info', base, { calls: [c.seq], quotes: [cl.text.slice(0, 200)] }, replayOf(c)));
          break;
      }
      if (cl.notes.some((n) => n.startsWith('sep-1303'))) {
        const code = c.exchange.reply.kind === 'response' ? String(c.exchange.reply.error?.code ?? '') : '';
        out.push(finding(meta, 'sep-1303', 'info', { ...base, code }, ev, replayOf(c)));
      }
    }
    // A failed liveness check after a tool's probes: the server stopped answering.
    const own = new Set(run.liveness);
    for (const c of a.calls) {
      if (!own.has(c.seq) || !c.tool) continue;
      // An exit seen on the liveness call but blamed on a call is that call's exited finding.
      const blamed = exits.find((e) => e.seenAt === c.seq);
      if (blamed?.culprit !== undefined && blamed.culprit !== c.seq) continue;
      const k = c.exchange.reply.kind;
      if (k === 'hang' || k === 'exited') out.push(finding(meta, 'stopped-answering', 'fail', { tool: c.tool }, { calls: [c.seq] }));
    }
    if (run.stopped && run.stopped.notReached.length > 0) {
      out.push(finding(meta, run.stopped.reason, 'info', { tools: run.stopped.notReached.join(', ') }));
    }
    const restarts = a.restarts ?? [];
    if (run.stopped?.reason === 'server-gone' && restarts.length >= MAX_RESTARTS && restarts.every((r) => r.ok)) {
      notes.push(`the restart budget ran out: the server exited ${restarts.length + 1} times, and sealmark starts it again at most ${MAX_RESTARTS} times`);
    }
    if (run.beyondMaxTools.length > 0) {
      out.push(finding(meta, 'beyond-max-tools', 'info', { count: run.beyondMaxTools.length, max: a.config.checks['robust-input']?.max_tools as number ?? 25, tools: run.beyondMaxTools.slice(0, 20).join(', ') + (run.beyondMaxTools.length > 20 ? ', …' : '') }));
    }
    for (const t of run.tools) {
      if (t.needsProbe) out.push(finding(meta, 'needs-probe', 'info', { tool: t.tool, why: t.skipped ?? 'no arguments to malform' }, {}, { tool: t.tool }));
      else if (t.skipped) out.push(finding(meta, 'skipped', 'info', { tool: t.tool, why: t.skipped }, {}, { tool: t.tool }));
    }
    const findings = group(out);
    const coverage = robustCoverage(a, run, calls);
    const invalidSent = calls.some((c) => INVALID_PROBES.has(c.probe));
    const validSent = calls.some((c) => VALID_PROBES.has(c.probe));
    if (!invalidSent && !validSent) {
      notes.push('no tool has an argument that can be malformed, and no valid call was made');
      return { id: meta.id, verdict: 'n/a', findings, notes, needsProbe: run.tools.filter((t) => t.needsProbe).map((t) => t.tool), coverage };
    }
    return { id: meta.id, verdict: verdictOf(findings), findings, notes, needsProbe: run.tools.filter((t) => t.needsProbe).map((t) => t.tool), coverage };
  },
};

/**
 * Which tools robust-input judged: those sent a schema-invalid call, and read-only tools whose
 * valid no-argument call was answered (seed: it counts only then); the rest with why.
 */
function robustCoverage(a: Parameters<Check['judge']>[0], run: NonNullable<Parameters<Check['judge']>[0]['robust']>, calls: ProbeCall[]) {
  const judged = new Set<string>();
  for (const c of calls) {
    if (!c.tool) continue;
    if (INVALID_PROBES.has(c.probe) || c.probe === 'user-probe' || (c.probe === 'read-only-no-args' && c.classification?.class === 'accepted')) judged.add(c.tool);
  }
  const why = new Map<string, string>();
  for (const t of run.tools) {
    if (t.needsProbe) why.set(t.tool, `${t.skipped ?? 'no arguments to malform'}: needs a probes: entry`);
    else if (t.skipped) why.set(t.tool, t.skipped);
    else if (t.probes.includes('read-only-no-args')) why.set(t.tool, 'its read-only no-argument call was not answered cleanly');
  }
  for (const n of run.stopped?.notReached ?? []) {
    const tool = n.replace(/ \(.*\)$/, '');
    if (!judged.has(tool)) why.set(tool, run.stopped!.reason === 'three-hangs' ? 'not reached: probing stopped after three hangs' : 'not reached: the server was gone');
  }
  const max = (a.config.checks['robust-input']?.max_tools as number | undefined) ?? 25;
  for (const n of run.beyondMaxTools) why.set(n, `beyond max_tools (${max})`);
  return coverageIn(a.tools.map((x) => x.name), judged, why, a.config.skip_tools);
}
