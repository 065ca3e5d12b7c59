/**
 * filler-call-effects (pack effects, scored, sidechannel): what a deterministic argument filler
 * sends to a tool with a flagged property arms no side effect (seed "Never declare a side-effect
 * flag…", its `filled()` and the three-tool example; SPEC section 5).
 */
import type { Check, CheckMeta } from './check.js';
import { effectsNotRun, effectsOf } from './effects-common.js';
import { finding, group, verdictOf } from './finding.js';

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
    { verdict: 'fail', when: 'the filler arguments caused an effect the `{}` call to the same tool did not; the finding names the exact arguments and the command or connection they triggered' },
    { verdict: 'pass', when: 'the filler arguments added no effect (a flag tells where to look; only the call tells whether it is armed). An effect the `{}` call already had is default-call-effects\' finding, not this one\'s' },
    { verdict: 'n/a', when: 'no tool has a flagged property, or the run had no sandbox and no --allow-effects' },
  ],
  messages: {
    effect: '{tool}: the filler arguments {args} caused a side effect: {effect}',
    'default-effect': '{tool}: the {} call already caused this effect ({effect}): default-call-effects\' finding, not counted here',
  },
  docs: {
    summary:
      'A switch declared in a schema is a switch an argument filler will set: the seed\'s router sent `{"notify_channel": true}` and posted a webhook. This check sends what such a filler sends and watches what happens.',
    how: [
      'For each tool with a property flagged by armed-flags, inside the sandbox: a `{}` call and a filler call, one at a time, with the effect log read after each.',
      'An effect of the filler call that the `{}` call to the same tool did not have fails the check, naming the tool, the exact arguments and the effect (e.g. `shim: curl -s https://hooks.example/notify`): only what the filler arguments added is blamed (SPEC section 5, one cause is one finding). An effect both calls had is noted here and failed by default-call-effects.',
      'Scoring: scored (pass 1, fail 0).',
    ],
    fix: 'Remove the switch from the schema and honour it in the handler only from trusted callers (see armed-flags); for sends, payments and deletions use a propose/execute pair.',
    falsePositives: ['An effect that depends on state (a file the `{}` call created, changed again by the filler call) can read as new: the effect\'s text is compared, not its cause.'],
    falseNegatives: ['As for default-call-effects: commands by absolute path and effects outside the scratch folders that do not show in the reply are missed.'],
    limits: ['One filler: the one the seed describes. Other fillers (models) choose differently.'],
  },
};

/** An effect's text with what varies between two calls of one tool (numbers, ids) blanked out. */
function shape(effect: string): string {
  return effect.replace(/\d+/g, '#');
}

export const check: Check = {
  meta,
  judge(a) {
    const skipped = effectsNotRun(a, meta.id);
    if (skipped) return skipped;
    const flaggedTools = new Set(a.calls.filter((c) => c.probe === 'filler-call').map((c) => c.tool));
    if (flaggedTools.size === 0) return { id: meta.id, verdict: 'n/a', findings: [], notes: ['no tool has a property a filler would arm'] };
    const calls = a.calls.filter((c) => (c.probe === 'filler-call' || c.probe === 'default-call') && flaggedTools.has(c.tool));
    const effects = effectsOf(calls);
    // What the `{}` call of each tool did: the filler call is blamed only for what it added.
    const byDefault = new Map<string, Set<string>>();
    for (const e of effects) {
      if (e.call.probe !== 'default-call') continue;
      const seen = byDefault.get(e.call.tool!) ?? new Set<string>();
      seen.add(shape(e.data.effect!));
      byDefault.set(e.call.tool!, seen);
    }
    const out = effects.flatMap((e) => {
      if (e.call.probe === 'default-call') return [finding(meta, 'default-effect', 'info', e.data, e.evidence, { tool: e.call.tool })];
      if (byDefault.get(e.call.tool!)?.has(shape(e.data.effect!))) return [];
      return [finding(meta, 'effect', 'fail', e.data, e.evidence, { tool: e.call.tool })];
    });
    const findings = group(out);
    return { id: meta.id, verdict: verdictOf(findings), findings, notes: [] };
  },
};
