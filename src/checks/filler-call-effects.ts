/**
 * filler-call-effects (pack effects, scored, sidechannel): what a deterministic argument filler
 * sends to a tool with a flagged property arms no side effect (seed "Never declare a side-effect
 * flag…", its `filled()` and the three-tool example; SPEC section 5).
 */
import type { Check, CheckMeta } from './check.js';
import { EFFECT_TIMING, LATE_LIMIT, RATE_LIMIT_RULE, distinctEffects, effectsNotRun, effectsOf, type DistinctEffect, unseenWrites } from './effects-common.js';
import { coverageIn, finding, group, verdictOf } from './finding.js';
import { needsControl } from '../probes/effects.js';
import type { Finding, ProbeCall } from '../types.js';

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
    { id: 'filler-control', core: true, description: 'Made only when the filler call had an effect and the `{}` call was refused (a required argument missing): the filler\'s arguments with the optional flagged properties left out and required switches unarmed (a boolean flipped, an enum value that is no side-effect verb), the required arguments filled the same way. It tells what any valid call does.' },
    { id: 'effect-log', core: true, part: true, description: 'The effects the sandbox saw during each call (see default-call-effects).' },
  ],
  verdicts: [
    { verdict: 'fail', when: 'the filler arguments caused an effect that neither the `{}` call nor the control call to the same tool had; the finding names the exact arguments and the command or connection they triggered' },
    { verdict: 'pass', when: 'the filler arguments added no effect (a flag tells where to look; only the call tells whether it is armed). An effect the `{}` call already had is default-call-effects\' finding, and one the control call had too is what any valid call does: neither is this check\'s' },
    { verdict: 'n/a', when: 'no tool has a flagged property, no flagged tool could be judged (its `{}` call was refused and no control call was possible), or the run had no sandbox and no --allow-effects' },
  ],
  messages: {
    effect: '{tool}: the filler arguments {args} caused a side effect: {effect}',
    'default-effect': '{tool}: the {} call already caused this effect ({effect}): default-call-effects\' finding, not counted here',
    'control-effect': '{tool}: the control call {control}, without the flagged properties, had this effect too ({effect}): it is what any valid call does, not what the filler arguments added',
  },
  docs: {
    summary:
      'A switch declared in a schema is a switch an argument filler will set: the seed\'s router sent `{"notify_channel": true}` and posted a webhook. This check sends what such a filler sends and watches what happens.',
    how: [
      'For each tool with a property flagged by armed-flags, inside the sandbox: a `{}` call and a filler call, one at a time, with the effect log read after each.',
      'An effect of the filler call that the `{}` call to the same tool did not have fails the check, naming the tool, the exact arguments and the effect (e.g. `shim: curl -s https://hooks.example/notify`): only what the filler arguments added is blamed (SPEC section 5, one cause is one finding). An effect both calls had is noted here and failed by default-call-effects.',
      'When the `{}` call was refused (a required argument missing) and the filler call had an effect, `{}` cannot tell what the flagged properties added: a control call is made with the filler\'s arguments minus the optional flagged properties (required switches unarmed, required arguments filled the same way). An effect it had too is noted, not blamed: it is what any valid call to the tool does. When no control is possible (a required enum whose every value is a side-effect verb) the tool is not judged, and the coverage says so.',
      'Identical effects of one call (an HTTP client retrying the same request) are one effect, quoted with their count; effects are compared as kind and target (digits blanked, `created` and `changed` of one file alike).',
      EFFECT_TIMING,
      RATE_LIMIT_RULE,
      'Scoring: scored (pass 1, fail 0).',
    ],
    fix: 'Remove the switch from the schema and honour it in the handler only from trusted callers (see armed-flags); for sends, payments and deletions use a propose/execute pair.',
    falsePositives: ['An effect that depends on state or on the value (a file named after an argument, a second file the filler call writes because the first exists) can read as new: the effect\'s text is compared, not its cause.'],
    falseNegatives: ['As for default-call-effects: commands by absolute path and writes outside the folders the overlay covers that do not show in the reply are missed.', LATE_LIMIT],
    limits: ['One filler: the one the seed describes. Other fillers (models) choose differently.'],
  },
};

/**
 * What an effect is about, for comparing calls of one tool: kind and detail with digits blanked
 * (ids, times, ports vary between calls) and `created`/`changed` of one file alike (the file the
 * first call created, the next call changes).
 */
function shape(e: DistinctEffect): string {
  return `${e.kind}: ${e.detail.replace(/^(created|changed) /, 'wrote ').replace(/\d+/g, '#')}`;
}

/** Reply classes of a control call that answered (its effects are complete). */
const UNANSWERED: ReadonlySet<string> = new Set(['hang', 'exited']);

export const check: Check = {
  meta,
  judge(a) {
    const skipped = effectsNotRun(a, meta.id);
    if (skipped) return skipped;
    const flaggedTools = [...new Set(a.calls.filter((c) => c.probe === 'filler-call').map((c) => c.tool!))];
    if (flaggedTools.length === 0) return { id: meta.id, verdict: 'n/a', findings: [], notes: ['no tool has a property a filler would arm'] };
    const out: Finding[] = [];
    const notes: string[] = [];
    const judged = new Set<string>();
    const notJudged = new Map<string, string>();
    for (const tool of flaggedTools) {
      // The last call of each: one refused for a rate limit was made again, and the later is judged.
      const of = (probe: string) => a.calls.filter((c) => c.probe === probe && c.tool === tool).at(-1);
      const dflt = of('default-call');
      const filler = of('filler-call')!;
      const control = of('filler-control');
      // The {} call's effects are default-call-effects' finding: noted here, never blamed.
      const known = new Set<string>();
      for (const e of effectsOf(dflt ? [dflt] : [])) {
        known.add(shape(e.effect));
        out.push(finding(meta, 'default-effect', 'info', e.data, e.evidence, { tool }));
      }
      const controlShapes = new Set(control ? distinctEffects(control).map(shape) : []);
      const blame = judgeable(dflt, filler, control, a.effects?.controls?.find((c) => c.tool === tool));
      if ('why' in blame) {
        notJudged.set(tool, blame.why);
        notes.push(`${tool}: not judged: ${blame.why}`);
        continue;
      }
      judged.add(tool);
      for (const e of effectsOf([filler])) {
        const s = shape(e.effect);
        if (known.has(s)) continue;
        if (blame.by === 'same' || controlShapes.has(s)) {
          const used = blame.by === 'same' ? filler : control!;
          out.push(finding(meta, 'control-effect', 'info', { ...e.data, control: JSON.stringify(used.arguments ?? {}) }, { calls: [...new Set([filler.seq, used.seq])], quotes: e.evidence.quotes }, { tool }));
          continue;
        }
        out.push(finding(meta, 'effect', 'fail', e.data, e.evidence, { tool }));
      }
    }
    if (a.effects?.stopped) notes.push(a.effects.stopped);
    notes.push(...unseenWrites(a));
    const findings = group(out);
    const coverage = coverageIn(flaggedTools, judged, notJudged, a.config.skip_tools);
    if (judged.size === 0) return { id: meta.id, verdict: 'n/a', findings, notes, coverage };
    return { id: meta.id, verdict: verdictOf(findings), findings, notes, coverage };
  },
};

/**
 * Whether a tool's filler call can be judged: by `control` (the `{}` call, or the control call,
 * shows what the tool does without the flagged properties), by `same` (the control would equal
 * the filler arguments: the filler call is its own control), or `why` not.
 */
function judgeable(
  dflt: ProbeCall | undefined,
  filler: ProbeCall,
  control: ProbeCall | undefined,
  planned: { same?: boolean; why?: string } | undefined,
): { by: 'control' | 'same' } | { why: string } {
  if (!needsControl(dflt, filler)) return { by: 'control' };
  if (planned?.same) return { by: 'same' };
  const refused = `its {} call was refused (${dflt?.classification?.class ?? 'not made'}), so it cannot tell what the filler arguments added`;
  if (planned?.why) return { why: `${refused}, and no control call is possible: ${planned.why}` };
  if (!control) return { why: `${refused}, and the control call was not made (the server was gone first)` };
  const cls = control.classification?.class ?? '';
  if (UNANSWERED.has(cls)) return { why: `${refused}, and the control call (#${control.seq}) got no full answer (${cls})` };
  return { by: 'control' };
}
