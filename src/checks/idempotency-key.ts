/**
 * idempotency-key (pack design, scored): a tool that writes and is not idempotent accepts an
 * idempotency key, and the same call made twice has one effect (seed "Side-Effect Boundaries":
 * "If a network blip causes the same write to be called twice, the system should detect it and
 * refuse the duplicate"; SPEC section 5; case C10).
 */
import { whyNotRun, type Artifacts, type Check, type CheckMeta } from './check.js';
import { finding, verdictOf } from './finding.js';
import { KEY_NAMES, IDEMPOTENT_VERBS, verbOf, nameStyleOf } from '../naming.js';
import { keyProperty, writesNonIdempotently } from '../probes/design.js';
import type { Finding, ProbeCall } from '../types.js';
import { isErrorResult } from '../classify.js';
import { EFFECT_TIMING } from './effects-common.js';

export const meta: CheckMeta = {
  id: 'idempotency-key',
  title: 'Writes that are not idempotent take a key, and a repeat has one effect',
  pack: 'design',
  weight: 'scored',
  scope: 'server',
  lint: true,
  decidedBy: 'sidechannel',
  since: '0.1',
  severity: 'warning',
  requires: ['design'],
  config: [],
  probes: [
    { id: 'repeat-first', core: true, description: 'In the sandbox, a writing, non-idempotent tool with a `probes:` entry is called with that entry\'s arguments (plus the key, when the tool offers one and the entry sets none).' },
    { id: 'repeat-second', core: true, description: 'The very same call again, as a retry loop or a network blip sends it.' },
  ],
  verdicts: [
    { verdict: 'fail', when: 'both calls of a repeat had effects (no key offered, or the same key ignored)' },
    { verdict: 'partial', when: 'a tool that writes and states idempotentHint false offers no idempotency key, and no repeat showed it de-duplicating (an absent idempotentHint is the annotations check\'s finding, only noted here; a tool whose verb is idempotent by nature needs no key)' },
    { verdict: 'pass', when: 'every such tool offers a key, and every repeat had at most one effect' },
    { verdict: 'n/a', when: 'no tool writes non-idempotently (readOnlyHint or idempotentHint true, or no write in its name or hints)' },
  ],
  messages: {
    'no-key': '{tool}: writes and is not declared idempotent (idempotentHint {hint}), but offers no idempotency key ({names}): if a repeat has one effect, state idempotentHint: true; otherwise accept an idempotency key',
    'one-effect': '{tool}: the same call made again had no effect ({times} calls, one effect): it de-duplicates, so state idempotentHint: true',
    'double-effect': '{tool}: the same call twice made two effects, and the tool offers no key to tell them apart: {effect}',
    'key-ignored': '{tool}: the same call twice with the same {key} made two effects: {effect}',
    'key-honoured': '{tool}: the second call with the same {key} had no effect',
    'not-repeated': '{tool}: not repeated: it needs a probes: entry (a valid call) to be called twice',
  },
  docs: {
    summary:
      'Retries happen: a client times out and sends again, a model calls the same tool twice in one turn. A read repeated is harmless; a refund, an email or an order repeated is not. A write that is not idempotent should take a key that makes the second call a no-op, as payment APIs do.',
    how: [
      'A tool writes and is not idempotent when, with the MCP defaults applied, readOnlyHint and idempotentHint are both false, and it says it writes: it states readOnlyHint false or its name starts with a write verb (the tables of tool-naming).',
      `Statically, such a tool must offer a string property named like a key: ${KEY_NAMES.map((k) => k.join('_')).join(', ')} (any naming style). A missing key is partial when the tool states idempotentHint: false; when idempotentHint is not stated at all, the annotations check scores that (one cause, one finding) and the missing key is only noted here.`,
      `A tool whose name's verb is idempotent by nature (${IDEMPOTENT_VERBS.join(', ')}) needs no key: doing it twice leaves the world as doing it once.`,
      'Behaviour wins over the statement: when the same call (same arguments) was made again in the sandbox and only the first made an effect, the tool de-duplicates; that is noted (`one-effect`, with the advice to state idempotentHint: true) instead of asking for a key.',
      `Dynamically, in the sandbox, each such tool with a \`probes:\` entry (expect ok) is called twice with the entry's arguments, plus a key made up for the run (\`repeat-\` and 16 hex digits, new each run so that no server can recognise it) in its key property when it offers one. When the first call had an effect (the effect log of default-call-effects), the second must have none: two effects fail the check.`,
      EFFECT_TIMING,
      'Scoring: scored (pass 1, partial 0.5, fail 0).',
    ],
    fix: 'Accept an idempotency key (or derive one from the conversation and the request, as the seed shows for Stripe), remember the keys you have acted on, and answer a repeated key with the first result instead of acting again.',
    falsePositives: ['A tool that de-duplicates (a repeat has one effect) but states idempotentHint: false is asked for a key unless a probes: entry lets sealmark repeat the call; state idempotentHint: true.'],
    falseNegatives: [
      'Without a probes: entry the repeat is not made (listed as not repeated); effects outside the sandbox\'s scratch folders are not seen.',
      'A key property named otherwise (`nonce`, `token`) is not recognised.',
    ],
    limits: ['Without the sandbox (and without --allow-effects) only the static half runs.'],
  },
};

export const check: Check = {
  meta,
  judge(a) {
    const out: Finding[] = [];
    const style = nameStyleOf(a.tools);
    const writers = a.tools.filter((t) => writesNonIdempotently(t, style));
    if (writers.length === 0) return { id: meta.id, verdict: 'n/a', findings: [], notes: ['no tool writes non-idempotently'] };
    // MCP 2024-11-05 has no annotations: an absent idempotentHint there says nothing (noted only).
    const noAnnotations = a.handshake?.protocolVersion === '2024-11-05';
    const natural: string[] = [];
    const deduped = dedupedTools(a);
    for (const t of writers) {
      const verb = verbOf(t.name, t, style)?.verb;
      if (verb !== undefined && IDEMPOTENT_VERBS.includes(verb)) {
        natural.push(`${t.name} (${verb})`);
        continue;
      }
      if (keyProperty(t) || deduped.has(t.name)) continue;
      const stated = t.annotations?.idempotentHint === false;
      // An unstated idempotentHint is annotations' finding (missing-write-hints): noted here, not scored again.
      const level = stated ? 'partial' : 'info';
      const hint = stated ? 'false' : noAnnotations ? 'absent: MCP 2024-11-05 has no annotations' : 'not stated: scored by annotations';
      out.push(finding(meta, 'no-key', level, { tool: t.name, hint, names: 'idempotency_key, request_id, client_token, dedupe_key …' }, { schemaPaths: [`tools[${t.index}].inputSchema.properties`] }, { tool: t.name }));
    }
    const notes: string[] = [];
    if (natural.length) notes.push(`idempotent by the nature of their verb, no key needed: ${natural.join(', ')}`);
    const run = a.design;
    if (!run) notes.push(`the repeats were not made (${whyNotRun(a)})`);
    else if (!run.ran) notes.push(run.why ?? 'the repeats were not made');
    if (a.design?.beyondMaxTools.length) notes.push(`not called (beyond max_tools): ${a.design.beyondMaxTools.join(', ')}`);
    for (const name of run?.notRepeated ?? []) out.push(finding(meta, 'not-repeated', 'info', { tool: name }, {}, { tool: name }));
    for (const r of run?.repeats ?? []) {
      const [first, second] = r.seqs.map((s) => a.calls.find((c) => c.seq === s));
      const one = deduped.get(r.tool);
      if (one) {
        out.push(finding(meta, 'one-effect', 'info', { tool: r.tool, times: one.length }, { calls: one, quotes: a.calls.find((c) => c.seq === one[0])?.effects?.map((e) => e.detail) ?? [] }, { tool: r.tool }));
        continue;
      }
      if (!first?.effects?.length) {
        notes.push(`${r.tool}: the first call had no effect the sandbox could see, so the repeat says nothing`);
        continue;
      }
      const key = r.key !== undefined ? `key ${JSON.stringify(r.key)}` : '';
      if (second?.effects?.length) {
        const effect = second.effects.map((e) => `${e.kind}: ${e.detail}`).join('; ');
        out.push(finding(meta, r.key !== undefined ? 'key-ignored' : 'double-effect', 'fail', { tool: r.tool, key, effect }, { calls: [...r.seqs], quotes: [...first.effects, ...second.effects].map((e) => e.detail) }, { tool: r.tool }));
      } else if (r.key !== undefined) {
        out.push(finding(meta, 'key-honoured', 'info', { tool: r.tool, key }, { calls: [...r.seqs] }, { tool: r.tool }));
      }
    }
    // One cause, one finding: a double effect already says the tool offers no key.
    const doubled = new Set(out.filter((f) => f.messageId === 'double-effect').map((f) => f.tool));
    const findings = out.filter((f) => !(f.messageId === 'no-key' && doubled.has(f.tool)));
    return { id: meta.id, verdict: verdictOf(findings), findings, notes };
  },
};

/**
 * Tools the sandbox saw de-duplicate without a key: a repeat made (no key sent) whose calls, with
 * every earlier call of the same tool with the very same arguments (robust-input's call of the
 * probes: entry), made exactly one effect, on the first of them, and every later one succeeded (a
 * repeat that failed, "destination already exists", did nothing because it failed: that is no
 * de-duplication). Maps the tool to those calls' seqs.
 */
function dedupedTools(a: Artifacts): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const r of a.design?.repeats ?? []) {
    if (r.key !== undefined) continue;
    const second = a.calls.find((c) => c.seq === r.seqs[1]);
    if (!second) continue;
    const same = JSON.stringify(second.arguments ?? null);
    const calls = a.calls.filter((c) => c.tool === r.tool && c.seq <= r.seqs[1] && JSON.stringify(c.arguments ?? null) === same);
    const withEffect = calls.filter((c) => c.effects?.length);
    if (calls.length >= 2 && withEffect.length === 1 && withEffect[0] === calls[0] && calls.slice(1).every(succeeded)) out.set(r.tool, calls.map((c) => c.seq));
  }
  return out;
}

/** A call the tool answered with a result that is not an error (`isError` absent or false). */
function succeeded(c: ProbeCall): boolean {
  const r = c.exchange.reply;
  return r.kind === 'response' && !r.error && !isErrorResult(r);
}
