/**
 * filler-call-effects (pack effects, scored, sidechannel): what a deterministic argument filler
 * sends to a tool with a flagged property arms no side effect (seed "Never declare a side-effect
 * flag…", its `filled()` and the three-tool example; SPEC section 5).
 */
import type { Check, CheckMeta } from './check.js';
import { effectsNotRun, effectsOf } from './effects-common.js';
import { finding, verdictOf } from './finding.js';

export const meta: CheckMeta = {
  id: 'filler-call-effects',
  title: 'What an argument filler sends arms no side effect',
  pack: 'effects',
  weight: 'scored',
  scope: 'server',
  decidedBy: 'sidechannel',
  since: '0.1',
  severity: 'error',
  requires: ['effects'],
  config: [],
  probes: [
    { id: 'default-call', core: true, description: '`{}` to each tool with a property armed-flags flags (shared with default-call-effects).' },
    { id: 'filler-call', core: true, description: 'The same tool called with what a deterministic filler sends: every boolean true, inverted guards false, the side-effect value of an enum, declared defaults, required properties filled with neutral values.' },
    { id: 'effect-log', core: true, part: true, description: 'The effects the sandbox saw during each call (see default-call-effects).' },
  ],
  verdicts: [
    { verdict: 'fail', when: 'a call to a flagged tool caused an effect; the finding names the exact arguments and the command or connection they triggered' },
    { verdict: 'pass', when: 'no call to a flagged tool caused an effect (a flag tells where to look; only the call tells whether it is armed)' },
    { verdict: 'n/a', when: 'no tool has a flagged property, or the run had no sandbox and no --allow-effects' },
  ],
  messages: {
    effect: '{tool}: the filler arguments {args} caused a side effect: {effect}',
    'default-effect': '{tool}: the {} call to this flagged tool caused a side effect: {effect}',
  },
  docs: {
    summary:
      'A switch declared in a schema is a switch an argument filler will set: the seed\'s router sent `{"notify_channel": true}` and posted a webhook. This check sends what such a filler sends and watches what happens.',
    how: [
      'For each tool with a property flagged by armed-flags, inside the sandbox: a `{}` call and a filler call, one at a time, with the effect log read after each.',
      'An effect during either call fails the check, naming the tool, the exact arguments and the effect (e.g. `shim: curl -s https://hooks.example/notify`).',
      'Scoring: scored (pass 1, fail 0).',
    ],
    fix: 'Remove the switch from the schema and honour it in the handler only from trusted callers (see armed-flags); for sends, payments and deletions use a propose/execute pair.',
    falsePositives: ['A flagged tool whose default call already has an effect fails here and in default-call-effects.'],
    falseNegatives: ['As for default-call-effects: commands by absolute path and effects outside the scratch folders that do not show in the reply are missed.'],
    limits: ['One filler: the one the seed describes. Other fillers (models) choose differently.'],
  },
};

export const check: Check = {
  meta,
  judge(a) {
    const skipped = effectsNotRun(a, meta.id);
    if (skipped) return skipped;
    const flaggedTools = new Set(a.calls.filter((c) => c.probe === 'filler-call').map((c) => c.tool));
    if (flaggedTools.size === 0) return { id: meta.id, verdict: 'n/a', findings: [], notes: ['no tool has a property a filler would arm'] };
    const calls = a.calls.filter((c) => (c.probe === 'filler-call' || c.probe === 'default-call') && flaggedTools.has(c.tool));
    const out = effectsOf(calls).map((e) =>
      e.call.probe === 'default-call'
        ? finding(meta, 'default-effect', 'fail', e.data, e.evidence, { tool: e.call.tool })
        : finding(meta, 'effect', 'fail', e.data, e.evidence, { tool: e.call.tool }),
    );
    return { id: meta.id, verdict: verdictOf(out), findings: out, notes: [] };
  },
};
