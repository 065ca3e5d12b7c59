/**
 * tool-naming (pack design, scored, static): a tool's name says whether it reads or writes, and
 * says the same as its annotations (seed "Side-Effect Boundaries": "Read tools should sound like
 * queries … Write tools should sound like verbs with a target"; SPEC section 5).
 */
import type { Check, CheckMeta } from './check.js';
import { finding, verdictOf } from './finding.js';
import { DESTROY_VERBS, READ_VERBS, WRITE_VERBS, hintsOf, nameStyleOf, verbOf } from '../naming.js';
import type { Finding } from '../types.js';

export const meta: CheckMeta = {
  id: 'tool-naming',
  title: 'Names say read or write, as the annotations do',
  pack: 'design',
  weight: 'scored',
  scope: 'server',
  lint: true,
  decidedBy: 'static',
  since: '0.1',
  severity: 'warning',
  requires: [],
  config: [],
  probes: [{ id: 'names', core: true, part: true, description: 'The verb each tool name carries (with the prefix every tool shares stripped, the first word, or the last on a noun_verb server, found in the read or write table), against the annotations the tool states.' }],
  verdicts: [
    { verdict: 'fail', when: 'a name contradicts the annotations and the tool\'s behaviour confirms the name: a write verb or a destroying verb on a tool that states readOnlyHint true or destructiveHint false, and a call to it wrote a file or ran a command in the sandbox' },
    { verdict: 'partial', when: 'a name alone contradicts the stated annotations (a write verb with readOnlyHint true, a query name with readOnlyHint false, a destroying verb with destructiveHint false): a name is a heuristic, and never alone makes a fail (SPEC section 5)' },
    { verdict: 'pass', when: 'no name contradicts its tool\'s stated annotations' },
    { verdict: 'n/a', when: 'no tool name carries a verb from either table' },
  ],
  messages: {
    'write-verb-read-only': '{tool}: the name says {verb} (a write) but the tool states readOnlyHint true',
    'query-not-read-only': '{tool}: the name says {verb} (a query) but the tool states readOnlyHint false',
    'destroy-not-destructive': '{tool}: the name says {verb} (it destroys) but the tool states destructiveHint false',
    'no-verb': '{tool}: the name carries no read or write verb, so it does not say what the tool does',
    confirmed: '{tool}: the name says {verb}, and a call to it did write ({effect}), though the tool states {hint}',
  },
  docs: {
    summary:
      'The name is the one part of a tool a model always reads. A name that sounds like a query on a tool that writes, or a read-only claim on a tool called delete, misleads the model and the client about what a call will do.',
    how: [
      `A name's verb is the first word of its last dotted or slashed segment (snake_case, camelCase and kebab-case alike: \`notes.delete\` reads delete, \`github.create_issue\` reads create), when it is in one of two tables. A prefix every tool shares (a vendor or server name: \`firecrawl_\`, \`vaulttools_\`) is stripped first; when more of the server's names end with a table verb than start with one (noun_verb style: \`monitor_create\`, \`pdf_metadata_write\`), the last word is read instead of the first. Read verbs: ${READ_VERBS.join(', ')}. Write verbs: ${WRITE_VERBS.join(', ')}; of these, destroying verbs: ${DESTROY_VERBS.join(', ')}.`,
      'Only stated annotations are compared (a missing hint is the annotations check\'s finding): a write verb with readOnlyHint true, a read verb with readOnlyHint false, and a destroying verb with destructiveHint false are each partial: the name alone is a heuristic.',
      'A contradiction is a fail only when behaviour confirms the name: a write or destroying verb on a tool that states readOnlyHint true or destructiveHint false, where one of sealmark\'s calls to it (in the sandbox) wrote a file or ran a command.',
      'The verb tables know the senses that are not writes: `add_time` and `add(a, b)` over numbers are arithmetic, `decode_token` and `jwt_decode` compute an answer from their input.',
      'A name with no verb from either table is listed for information.',
      'Scoring: scored (pass 1, partial 0.5, fail 0).',
    ],
    fix: 'Name reads as queries (get_, list_, search_ …) and writes as a verb and a target (refund_order, send_email); then make the annotations say the same thing, or fix whichever of the two is wrong.',
    falsePositives: ['A verb used as a noun (`check_list` for a checklist getter) is read as the verb; rename the tool or ignore the finding.'],
    falseNegatives: ['A verb missing from both tables is not recognised; the tool is listed as carrying no verb.'],
    limits: ['English verbs only.'],
  },
};

export const check: Check = {
  meta,
  judge(a) {
    const out: Finding[] = [];
    let withVerb = 0;
    const style = nameStyleOf(a.tools);
    for (const t of a.tools) {
      const v = verbOf(t.name, t, style);
      if (!v) {
        out.push(finding(meta, 'no-verb', 'info', { tool: t.name }, {}, { tool: t.name }));
        continue;
      }
      withVerb++;
      const h = hintsOf(t).stated;
      const data = { tool: t.name, verb: v.verb };
      const ev = { schemaPaths: [`tools[${t.index}].name`, `tools[${t.index}].annotations`] };
      // Behaviour that confirms a write name: a call to the tool that wrote or ran something.
      const wrote = a.calls.find((c) => c.tool === t.name && c.effects?.some((e) => e.kind === 'file' || e.kind === 'shim'));
      const confirm = (hint: string) => {
        const e = wrote!.effects!.find((x) => x.kind === 'file' || x.kind === 'shim')!;
        out.push(finding(meta, 'confirmed', 'fail', { ...data, effect: `${e.kind}: ${e.detail}`.slice(0, 200), hint }, { ...ev, calls: [wrote!.seq], quotes: [e.detail] }, { tool: t.name }));
      };
      if (v.kind === 'write' && h.readOnlyHint === true) {
        if (wrote) confirm('readOnlyHint true');
        else out.push(finding(meta, 'write-verb-read-only', 'partial', data, ev, { tool: t.name }));
      }
      if (v.kind === 'read' && h.readOnlyHint === false) out.push(finding(meta, 'query-not-read-only', 'partial', data, ev, { tool: t.name }));
      if (v.destroys && h.destructiveHint === false) {
        if (wrote && h.readOnlyHint !== true) confirm('destructiveHint false');
        else if (!wrote) out.push(finding(meta, 'destroy-not-destructive', 'partial', data, ev, { tool: t.name }));
      }
    }
    if (withVerb === 0) return { id: meta.id, verdict: 'n/a', findings: out, notes: ['no tool name carries a read or write verb'] };
    return { id: meta.id, verdict: verdictOf(out), findings: out, notes: [] };
  },
};
