/**
 * two-step-writes (pack design, scored): an irreversible write (money out, a message sent,
 * infrastructure changed, data deleted) is split into propose and execute, and execute acts only
 * on a real proposal (seed "Side-Effect Boundaries": propose_refund, then execute_refund with the
 * proposal ID after explicit approval; SPEC section 5; case C8).
 */
import { whyNotRun, type Check, type CheckMeta } from './check.js';
import { finding, group, verdictOf } from './finding.js';
import { IRREVERSIBLE_VERBS, PROPOSAL_NAMES, irreversibleKind } from '../naming.js';
import { MADE_UP_PROPOSAL, proposalProperty } from '../probes/design.js';
import { propertiesOf } from '../schema.js';
import { flaggedProperties } from '../flags.js';
import type { Finding, ListedTool } from '../types.js';
import { EFFECT_TIMING } from './effects-common.js';

export const meta: CheckMeta = {
  id: 'two-step-writes',
  title: 'Irreversible writes are proposed, then executed on a real proposal',
  pack: 'design',
  weight: 'scored',
  scope: 'server',
  lint: true,
  decidedBy: 'sidechannel',
  since: '0.1',
  severity: 'error',
  requires: ['design', 'effects'],
  config: [],
  probes: [
    { id: 'made-up-proposal', core: true, description: `In the sandbox, each execute step (a tool that requires a proposal id) is called with a proposal id no propose step issued (\`proposal-\` and 16 hex digits, or a 9-digit number for a numeric id; new each run so that no server can recognise it), its Boolean switches true (as a filler sends them) and its other required arguments filled: it must refuse, with no effect.` },
    { id: 'effect-log', core: true, part: true, description: 'The effects the sandbox saw during every call to an irreversible single-step tool (the effects pack\'s filler and default calls, probes: entries).' },
  ],
  verdicts: [
    { verdict: 'fail', when: 'an execute step acted on a made-up proposal id, or an irreversible single-step tool acted on a call sealmark made (no human approved anything)' },
    { verdict: 'partial', when: 'an irreversible tool takes no proposal id, or an execute step carries an approval Boolean a filler sets true' },
    { verdict: 'pass', when: 'every irreversible tool is an execute step that refused the made-up proposal, with no approval switch' },
    { verdict: 'n/a', when: 'no tool is irreversible by its name, none is guarded by a confirm Boolean, and none requires a proposal id' },
  ],
  messages: {
    'single-step': '{tool}: an irreversible write ({kind}) in one step: it takes no proposal id from a propose step',
    'acted-without-proposal': '{tool}: acted on a call nobody approved ({probe}): {effect}',
    'made-up-proposal-accepted': '{tool}: accepted the made-up {property} "{value}"{effect}',
    'made-up-proposal-no-answer': '{tool}: on a made-up {property}, {what} instead of a refusal',
    'approval-switch': '{tool}: {property} is an approval Boolean in the execute step: a filler sets it true, so it approves nothing (see armed-flags)',
    'confirm-only': '{tool}: its only guard is the Boolean {property}; a filler sets it true, so it approves nothing: use a propose step and a proposal id',
  },
  docs: {
    summary:
      'An agent that refunds, sends, deploys or deletes on its own can ruin somebody\'s day. The seed\'s pattern: a propose tool builds the action and returns an id, a human approves it, and only then does an execute tool act, given that id. An execute tool that acts on any id, or an approval flag the model can simply set to true, defeats the pattern.',
    how: [
      `A tool is irreversible when its name starts with one of these verbs: ${Object.entries(IRREVERSIBLE_VERBS).map(([k, v]) => `${k}: ${v.join(', ')}`).join('; ')}.`,
      'A tool is irreversible too when its only guard is an approval Boolean (confirm, confirmed, approved, user_confirmed …): such a guard is what a propose step should be, and a filler sets it true (partial `confirm-only`, beside `single-step`).',
      `It is an execute step when it requires a proposal id: a property named ${PROPOSAL_NAMES.map((p) => p.join('_')).join(', ')} (any naming style). An irreversible tool that is not an execute step is partial; if the sandbox saw it act on a call sealmark made of its own accord (a filler or default call: nobody approved it), it fails. Calls from your probes: entries are yours, and do not count.`,
      'Each execute step is called in the sandbox with that made-up proposal id: an accepted reply, or any effect, fails; the server exiting on it fails, and no reply within the hang limit is partial (neither is a refusal).',
      'A Boolean property of an execute step that armed-flags reads as an approval or a side-effect switch (approved_by_user, confirm) is partial: a filler sets it true.',
      EFFECT_TIMING,
      'Scoring: scored (pass 1, partial 0.5, fail 0).',
    ],
    fix: 'Split the tool: a propose step that returns a proposal with an id and changes nothing, and an execute step that requires that id, looks it up, refuses ids it did not issue, and acts once. Keep the approval out of the model\'s reach (the client asks the human), not in a Boolean argument.',
    falsePositives: ['A tool whose name starts with an irreversible verb but only acts on reversible test data is still asked to be split.'],
    falseNegatives: [
      'Irreversible tools named without one of the verbs above are not recognised.',
      'Without the sandbox (and without --allow-effects) the made-up proposal is not sent.',
    ],
    limits: ['The made-up proposal is sent only to tools that require a proposal id by one of the names above.'],
  },
};

/** Probes that replay the user's own `probes:` entries. */
const FROM_USER = new Set(['user-probe', 'repeat-first', 'repeat-second']);

export const check: Check = {
  meta,
  judge(a) {
    const irreversible = a.tools
      .map((t) => ({ t, kind: irreversibleKind(t.name) ?? guardedKind(t), proposal: proposalProperty(t) }))
      .filter((x) => x.kind !== undefined || x.proposal !== undefined);
    if (irreversible.length === 0) return { id: meta.id, verdict: 'n/a', findings: [], notes: ['no tool is irreversible by its name, none is guarded by a confirm Boolean, and none requires a proposal id'] };
    const out: Finding[] = [];
    const notes: string[] = [];
    if (!a.design) notes.push(`the made-up proposals were not sent (${whyNotRun(a)})`);
    else if (!a.design.ran) notes.push(a.design.why ?? 'the made-up proposals were not sent');
    if (a.design?.beyondMaxTools.length) notes.push(`not called (beyond max_tools): ${a.design.beyondMaxTools.join(', ')}`);
    for (const { t, kind, proposal } of irreversible) {
      const ev = { schemaPaths: [`tools[${t.index}].inputSchema`] };
      if (!proposal) {
        out.push(finding(meta, 'single-step', 'partial', { tool: t.name, kind: kind! }, ev, { tool: t.name }));
        // A confirm Boolean in place of a proposal guards nothing: a filler sets it true.
        for (const g of approvalSwitches(t)) out.push(finding(meta, 'confirm-only', 'partial', { tool: t.name, property: g }, { schemaPaths: [`tools[${t.index}].inputSchema.properties.${g}`] }, { tool: t.name }));
        // Calls the user vouched for (a probes: entry, and its repeats) are not "nobody approved".
        for (const c of a.calls.filter((x) => x.tool === t.name && x.effects?.length && x.classification?.class === 'accepted' && !FROM_USER.has(x.probe))) {
          const effect = c.effects!.map((e) => `${e.kind}: ${e.detail}`).join('; ');
          out.push(finding(meta, 'acted-without-proposal', 'fail', { tool: t.name, probe: c.probe, effect }, { calls: [c.seq], quotes: c.effects!.map((e) => e.detail) }, { tool: t.name }));
        }
        continue;
      }
      const switches = flaggedProperties(t).filter((f) => f.isSwitch && propertiesOf(t.inputSchema).find((p) => p.name === f.property)?.types.includes('boolean'));
      for (const s of switches) out.push(finding(meta, 'approval-switch', 'partial', { tool: t.name, property: s.property }, { schemaPaths: [`tools[${t.index}].inputSchema.properties.${s.property}`] }, { tool: t.name }));
      const m = a.design?.madeUp.find((x) => x.tool === t.name);
      const c = m ? a.calls.find((x) => x.seq === m.seq) : undefined;
      if (!c) continue;
      const cls = c.classification?.class;
      if (cls === 'exited' || cls === 'hang') {
        // Not acting is not refusing: a server that dies or stalls on a bad id refuses nobody.
        out.push(finding(meta, 'made-up-proposal-no-answer', cls === 'exited' ? 'fail' : 'partial', { tool: t.name, property: proposal, what: cls === 'exited' ? 'the server exited' : 'no reply came within the hang limit' }, { calls: [c.seq] }, { tool: t.name }));
        continue;
      }
      const acted = cls === 'accepted' || (c.effects?.length ?? 0) > 0;
      if (acted) {
        const effect = c.effects?.length ? `, and acted: ${c.effects.map((e) => `${e.kind}: ${e.detail}`).join('; ')}` : '';
        const value = String(JSON.parse(c.exchange.sent).params?.arguments?.[proposal] ?? MADE_UP_PROPOSAL);
        out.push(finding(meta, 'made-up-proposal-accepted', 'fail', { tool: t.name, property: proposal, value, effect }, { calls: [c.seq], quotes: c.effects?.map((e) => e.detail) }, { tool: t.name }));
      }
    }
    // One finding per tool, message and effect, every call as evidence.
    const findings = group(out, (f) => String(f.data.effect ?? ''));
    return { id: meta.id, verdict: verdictOf(findings), findings, notes };
  },
};

/** The approval Booleans of a tool (confirm, approved_by_user …), from the flag reader of armed-flags. */
function approvalSwitches(t: ListedTool): string[] {
  return flaggedProperties(t)
    .filter((f) => f.reasons.some((r) => r.kind === 'approval'))
    .map((f) => f.property);
}

/**
 * Why a tool whose name carries no irreversible verb is irreversible all the same: it is guarded by
 * an approval Boolean (a destructive tool whose only guard is `confirm`: hidden-corpus kind of
 * issue 13).
 */
function guardedKind(t: ListedTool): string | undefined {
  // A stated destructiveHint alone does not make a tool irreversible (write_file overwrites, and
  // is destructive by MCP's definition); a confirm Boolean says the author thinks it needs approval.
  if (t.annotations?.readOnlyHint !== true && approvalSwitches(t).length > 0) return 'guarded by a confirm Boolean';
  return undefined;
}
