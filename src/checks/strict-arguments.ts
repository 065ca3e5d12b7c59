/**
 * strict-arguments (pack core, scored): what robust-input deliberately does not send, because the
 * call is valid apart from one fault (SPEC section 5). A call that omits `arguments` must be
 * answered when the schema requires nothing and cleanly refused when it requires something; an
 * undeclared key beside valid arguments must be refused where the schema says
 * `additionalProperties: false`, not silently dropped.
 *
 * Every probe is judged against a control call that lacks only the probed fault (`{}`, the valid
 * arguments alone, or robust-input's missing-required `{}`): what the control already shows belongs
 * to the control's check, so one cause is one finding (SPEC section 5, rules every check follows).
 */
import { whyNotRun, type Check, type CheckMeta } from './check.js';
import { coverageIn, finding, group, verdictOf } from './finding.js';
import { exitText } from './robust-input.js';
import type { Finding, ProbeCall, ReplyClass } from '../types.js';
import { sdkAdvice, sdkCause, sdkCauseField, type SdkCause } from '../target/sdk.js';
import { EFFECT_TIMING } from './effects-common.js';

export const meta: CheckMeta = {
  id: 'strict-arguments',
  title: 'Answers a call without arguments, refuses an undeclared key',
  pack: 'core',
  weight: 'scored',
  scope: 'server',
  decidedBy: 'protocol-response',
  since: '0.3',
  severity: 'warning',
  // robust-input's missing-required `{}` call is the control of a no-arguments call that is
  // invalid; without it (robust-input off) that call is judged alone.
  requires: ['strict-arguments'],
  config: [
    { key: 'checks.strict-arguments.max_tools', default: 25, standard: 'locked', value: { type: 'integer', min: 1, max: 10_000 }, meaning: 'Most tools probed, in listing order.' },
    { key: 'timeout_probe_sec', default: 10, standard: 'locked', meaning: 'Seconds a call may take (flag --timeout-probe); feeds the hang limit, as in robust-input.' },
  ],
  probes: [
    { id: 'no-arguments', core: true, description: 'A tools/call whose params omit `arguments` altogether, as some clients send for a tool they think takes none: valid for a tool whose schema requires nothing (sent only to a tool that states readOnlyHint: true or has a probes: entry), invalid for one that requires something (sent to any tool).' },
    { id: 'extra-only', core: true, description: 'Otherwise valid arguments (your probes: entry, else sampled from the schema) plus `sm_unexpected`, where the schema declares additionalProperties: false; sent only to a tool that states readOnlyHint: true or has a probes: entry.' },
    { id: 'empty-arguments', core: false, description: 'The control of a valid no-arguments call: `{}`, the same call with `arguments` present.' },
    { id: 'valid-arguments', core: false, description: 'The control of extra-only: the same arguments without `sm_unexpected`.' },
  ],
  verdicts: [
    { verdict: 'fail', when: 'the server exited or hung on a probe whose control call it answered' },
    { verdict: 'partial', when: 'an undeclared key was dropped and the call ran, a valid call without `arguments` was refused while `{}` was answered, or an unhandled runtime error came back where the control call got none' },
    { verdict: 'pass', when: 'every probe was answered as the schema says: the no-arguments call answered (or cleanly refused where arguments are required), the undeclared key refused' },
    { verdict: 'n/a', when: 'no tool could be probed: every tool that requires nothing or forbids undeclared keys may write (no readOnlyHint: true, no probes: entry)' },
  ],
  messages: {
    'refused-no-arguments': '{tool}: a valid call without `arguments` was refused ({class}), while the same call with `arguments: {}` was answered; some clients omit `arguments` for a tool that takes none{sdk}',
    'extra-dropped': '{tool}: the undeclared key sm_unexpected was dropped and the call ran, though the schema says additionalProperties: false{sdk}',
    'accepted-no-arguments': '{tool}: a call without `arguments` ran, though the tool requires {required}',
    'internal-error': '{tool}: an unhandled runtime error came back to the {probe} call, where the control call got none: {text}',
    exited: '{tool}: the server exited on the {probe} call ({exit}), where it answered the control call',
    hang: '{tool}: no reply to the {probe} call within {ms} ms, where the control call was answered',
    'same-as-control': '{tool}: not judged on {probe}: the control call got the same reply ({class}), which is that call\'s finding',
    'control-refused': '{tool}: not judged on {probe}: the control call without the fault was not answered either ({class}), so the reply says nothing about the fault',
    'control-failed': '{tool}: {probe} not sent: its control call got {class}, which the probe could only repeat',
    'not-judged': '{tool}: not judged: {why}',
    'beyond-max-tools': '{count} tools beyond max_tools ({max}) were not probed: {tools}',
    'server-gone': 'probing stopped because the server is gone and could not be started again; not reached: {tools}',
  },
  docs: {
    summary:
      'Two calls a real client sends that robust-input does not, because they are valid apart from one fault: a tools/call without `arguments` (some clients send it for a tool they think takes none) and valid arguments plus one undeclared key where the schema forbids undeclared keys. A server that refuses the first breaks those clients; one that drops the second silently runs a call its schema says it refuses.',
    how: [
      'Up to max_tools tools (in listing order, minus skip_tools) are looked at.',
      'A tool that requires arguments gets no-arguments: an invalid call, so it may go to any tool. It must be refused. Its control is robust-input\'s missing-required `{}` call: what that call already shows is robust-input\'s finding, not this check\'s.',
      'A tool whose schema requires nothing, that states readOnlyHint: true or has a probes: entry, gets `{}` (empty-arguments) and then no-arguments. When `{}` is answered, no-arguments must be answered too.',
      'A tool whose schema says additionalProperties: false, that states readOnlyHint: true or has a probes: entry, gets valid arguments (valid-arguments; your probes: entry\'s when there is one, else sampled from the schema and proven valid with Ajv) and then the same plus sm_unexpected (extra-only). When the valid arguments are answered, the extra key must be refused.',
      'A call valid apart from the probed fault may run the tool, so it never goes to a tool that may write; such tools are listed as not judged, with why.',
      'A server that exits on a probe is started again for the rest; the exit is the finding of the probe that caused it.',
      'When the server is built on a framework whose own code gives the reply (a table read from its source, src/target/sdk.ts: fastmcp 4.3.2 lists every parameters schema with additionalProperties: false while a zod object strips undeclared keys, and validates a missing `arguments` as undefined, "root: Invalid input: expected object, received undefined"), the finding names the framework and its version, with what your code can change.',
      EFFECT_TIMING,
      'Scoring: scored, so pass = 1 point, partial = 0.5, fail = 0.',
    ],
    fix: 'Treat a missing `arguments` member as `{}` before validating (the MCP schema makes it optional), and validate with a schema that refuses undeclared keys when your inputSchema says additionalProperties: false (zod: .strict(); pydantic: extra="forbid"), or drop additionalProperties: false from the schema if you mean to ignore them. On FastMCP (the finding names it), the listed additionalProperties: false is the framework\'s, so make the parameters object strict (zod .strict(), valibot v.strictObject), and give it a default (zod .default({})) or leave `parameters` out of a tool that takes none, so a missing `arguments` is not refused.',
    falsePositives: [
      'A tool whose answer differs between two identical calls (a random or time-based result that sometimes errors) can make a control call and its probe disagree.',
      'A server that strips undeclared keys on purpose, while its schema says additionalProperties: false, is reported: the schema promises a refusal.',
    ],
    falseNegatives: [
      'A tool that may write (no readOnlyHint: true, no probes: entry) is never sent a call that could run it; add a probes: entry to have it judged.',
      'Only the sm_unexpected key is tried, at the top level.',
    ],
    limits: ['One call of each probe per tool, for the first max_tools tools.'],
  },
};

/** The `{sdk}` data of a finding: the framework that causes it and what the author can do, or nothing. */
function sdkData(cause: SdkCause | undefined, messageId: string): { sdk: string } {
  return { sdk: cause ? `; ${sdkAdvice(cause, meta.id, messageId)}` : '' };
}

/** The finding's `sdkCause` field, when a framework causes it. */
function causeOf(cause: SdkCause | undefined): Pick<Finding, 'sdkCause'> {
  return cause ? { sdkCause: sdkCauseField(cause) } : {};
}

/** A reply that says the tool ran (a failed fetch in the sandbox is still a run). */
const ANSWERED: ReadonlySet<ReplyClass> = new Set(['accepted', 'lenient-downstream']);


export const check: Check = {
  meta,
  judge(a) {
    const run = a.strict;
    if (!run) return { id: meta.id, verdict: 'n/a', findings: [], notes: [`not run: ${whyNotRun(a)}`] };
    const out: Finding[] = [];
    const judged = new Set<string>();
    const notJudged = new Map<string, string>();
    /** Why a tool whose probes were all set aside is not judged (the last reason wins). */
    const why = new Map<string, string>();
    const callsOf = (tool: string, probe: string) => a.calls.filter((c) => c.tool === tool && c.probe === probe);
    const textOf = (c: ProbeCall) => c.classification?.text.slice(0, 200) ?? '';
    for (const t of run.tools) {
      if (t.notJudged && t.probes.length === 0) {
        notJudged.set(t.tool, t.notJudged);
        out.push(finding(meta, 'not-judged', 'info', { tool: t.tool, why: t.notJudged }, {}, { tool: t.tool }));
        continue;
      }
      for (const probe of ['no-arguments', 'extra-only'] as const) {
        const c = callsOf(t.tool, probe)[0];
        const cls = c?.classification?.class;
        if (!c || !cls) {
          // Not sent because its control call hung or ended the server: nothing the probe could add.
          const ctlCall = callsOf(t.tool, probe === 'extra-only' ? 'valid-arguments' : 'empty-arguments')[0];
          const ctlClass = ctlCall?.classification?.class;
          if (ctlCall && (ctlClass === 'hang' || ctlClass === 'exited')) {
            out.push(finding(meta, 'control-failed', 'info', { tool: t.tool, probe, class: ctlClass }, { calls: [ctlCall.seq] }, { tool: t.tool }));
          }
          continue;
        }
        const validCall = probe === 'no-arguments' && !c.invalidBecause;
        const control = probe === 'extra-only' ? callsOf(t.tool, 'valid-arguments')[0] : validCall ? callsOf(t.tool, 'empty-arguments')[0] : callsOf(t.tool, 'missing-required')[0];
        const ctl = control?.classification?.class;
        const base = { tool: t.tool, probe };
        const own = { tool: t.tool };
        const ev = { calls: [c.seq, ...(control ? [control.seq] : [])] };
        const skip = (messageId: 'same-as-control' | 'control-refused', klass: string) => {
          out.push(finding(meta, messageId, 'info', { ...base, class: klass }, ev, own));
          why.set(t.tool, messageId === 'same-as-control' ? `${probe} got the control call's reply (${klass}), judged with that call` : `the control call of ${probe} was not answered (${klass})`);
        };
        // The same reply as the control's is the control's finding (one cause, one finding), except
        // where an answered control is what the probe is judged against.
        const rejection = cls === 'rejected' || cls === 'rejected-unnamed' || cls === 'text-refusal';
        if (ctl === cls && !rejection && !((validCall || probe === 'extra-only') && ANSWERED.has(cls))) {
          skip('same-as-control', cls);
          continue;
        }
        if (cls === 'exited') {
          out.push(finding(meta, 'exited', 'fail', { ...base, exit: exitText(c) }, ev, own));
          judged.add(t.tool);
          continue;
        }
        if (cls === 'hang') {
          out.push(finding(meta, 'hang', 'fail', { ...base, ms: c.exchange.reply.kind === 'hang' ? c.exchange.reply.waitedMs : 0 }, ev, own));
          judged.add(t.tool);
          continue;
        }
        if (cls === 'protocol-error') {
          // robust-input and handshake read malformed replies; here the probe says nothing.
          skip('control-refused', cls);
          continue;
        }
        if (probe === 'no-arguments' && !validCall) {
          judged.add(t.tool);
          if (ANSWERED.has(cls)) out.push(finding(meta, 'accepted-no-arguments', 'partial', { ...base, required: c.invalidBecause?.[0] ?? 'arguments' }, { ...ev, quotes: [textOf(c)].filter(Boolean) }, own));
          else if (cls === 'internal-error') out.push(finding(meta, 'internal-error', 'partial', { ...base, text: textOf(c) }, { ...ev, quotes: [textOf(c)] }, own));
          continue;
        }
        // A valid no-arguments call, or extra-only: judged only when the control was answered.
        if (!ctl || !ANSWERED.has(ctl)) {
          skip('control-refused', ctl ?? 'not sent');
          continue;
        }
        judged.add(t.tool);
        if (cls === 'internal-error') {
          out.push(finding(meta, 'internal-error', 'partial', { ...base, text: textOf(c) }, { ...ev, quotes: [textOf(c)] }, own));
        } else if (probe === 'no-arguments' && !ANSWERED.has(cls)) {
          // The framework's refusal of undefined arguments names it; any other refusal is the author's.
          const cause = sdkCause(a.sdk, 'no-arguments', { kind: 'refused', text: c.classification?.text ?? '' });
          out.push(finding(meta, 'refused-no-arguments', 'partial', { ...base, class: cls, ...sdkData(cause, 'refused-no-arguments') }, { ...ev, quotes: [textOf(c)].filter(Boolean) }, { ...own, ...causeOf(cause) }));
        } else if (probe === 'extra-only' && ANSWERED.has(cls)) {
          const effects = (c.effects ?? []).map((e) => `effect: ${e.kind}: ${e.detail}`);
          const cause = sdkCause(a.sdk, 'extra-key', { kind: 'extra-dropped' });
          out.push(finding(meta, 'extra-dropped', 'partial', { ...base, ...sdkData(cause, 'extra-dropped') }, { ...ev, quotes: [...(c.invalidBecause?.slice(0, 1) ?? []), ...effects] }, { ...own, ...causeOf(cause) }));
        }
      }
      if (!judged.has(t.tool) && !notJudged.has(t.tool)) notJudged.set(t.tool, why.get(t.tool) ?? t.notJudged ?? 'no probe could be judged against its control call');
    }
    if (run.stopped) {
      out.push(finding(meta, 'server-gone', 'info', { tools: run.stopped.notReached.join(', ') }));
      for (const n of run.stopped.notReached) notJudged.set(n.replace(/ \(.*\)$/, ''), 'not reached: the server was gone');
    }
    if (run.beyondMaxTools.length > 0) {
      const max = (a.config.checks['strict-arguments']?.max_tools as number | undefined) ?? 25;
      out.push(finding(meta, 'beyond-max-tools', 'info', { count: run.beyondMaxTools.length, max, tools: run.beyondMaxTools.slice(0, 20).join(', ') + (run.beyondMaxTools.length > 20 ? ', …' : '') }));
      for (const n of run.beyondMaxTools) notJudged.set(n, `beyond max_tools (${max})`);
    }
    const coverage = coverageIn(a.tools.map((x) => x.name), judged, notJudged, a.config.skip_tools);
    const findings = group(out);
    if (judged.size === 0) {
      return { id: meta.id, verdict: 'n/a', findings, notes: ['no tool could be judged: every tool that requires nothing or forbids undeclared keys may write, or its control call was not answered'], coverage };
    }
    return { id: meta.id, verdict: verdictOf(findings), findings, notes: [], coverage };
  },
};
