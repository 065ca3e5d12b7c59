/**
 * armed-flags (pack effects, scored, static): properties a deterministic filler would arm (seed
 * "Never declare a side-effect flag in your tool's inputSchema"; SPEC section 5).
 */
import type { Check, CheckMeta } from './check.js';
import { finding, verdictOf } from './finding.js';
import { describeReasons, flaggedProperties } from '../flags.js';
import type { Finding } from '../types.js';

export const meta: CheckMeta = {
  id: 'armed-flags',
  title: 'No side-effect switch a filler can arm',
  pack: 'effects',
  weight: 'scored',
  scope: 'server',
  lint: true,
  decidedBy: 'static',
  since: '0.1',
  severity: 'warning',
  requires: [],
  config: [],
  probes: [
    { id: 'defaults', core: true, description: 'Any property with a `default`: schema-default populators (Ajv useDefaults, zod .default()) fill it on every call.' },
    { id: 'side-effect-enum', core: true, description: 'An enum with a value that asks for a side effect: a side-effect verb in its base form (`send`, `publish` …). A past participle or state (`removed`, `published`, `open` beside `closed`) is a state filter, not an action.' },
    { id: 'inverted-guard', core: true, description: 'A boolean named like an inverted guard (`dry_run`, `skip_*`, `no_*`, `disable_*`, any naming style): false arms it when the rest names an action (`skip_send`, `noCommit`); true arms it when the rest names a safeguard (`skipTlsVerification`, `no_verify`, `disable_sandbox`: verification, TLS, checks, confirmation, backups, sandbox, auth …).' },
    { id: 'side-effect-name', core: true, description: 'Any property whose name carries a side-effect verb: send, notify, open, launch, confirm, publish, post, email, charge, pay, purchase, delete, remove, force, commit, deploy, execute, submit (as words of snake_case, camelCase or kebab-case names).' },
    { id: 'approval', core: true, description: 'Approval booleans (`approved`, `approved_by_user`, `confirm`, `user_confirmed`): a filler sets them true.' },
  ],
  verdicts: [
    { verdict: 'fail', when: 'a side-effect switch whose declared default arms it (an inverted guard defaulting to false, a safeguard-off guard, side-effect or approval boolean defaulting to true, a side-effect enum value as default)' },
    { verdict: 'partial', when: 'side-effect switches are declared at all' },
    { verdict: 'pass', when: 'no tool declares a side-effect switch (properties with a plain default are listed, not scored)' },
    { verdict: 'n/a', when: 'no tools were listed' },
  ],
  messages: {
    armed: '{tool}.{property}: the declared default {default} arms a side-effect switch ({why})',
    switch: '{tool}.{property}: a side-effect switch a filler would set ({why})',
    'default-only': '{tool}.{property}: declares a default ({why}); schema-default populators send it on every call',
  },
  docs: {
    summary:
      'Argument fillers set every boolean to true, apply every declared default and pick enum values; strict function calling forces a value for every property. A switch that gates a send, an open, a payment or a deletion, declared in the schema, will be set by something with no judgment.',
    how: [
      'Each top-level property of each tool\'s inputSchema is matched against the rules listed under Probes; names are split into words, so `notify_channel` and `sendEmail` match and `postal_code` does not.',
      'A switch whose own default arms it fails the check; any declared switch makes it partial; a property that only declares a default is listed as information.',
      'Nothing is called: filler-call-effects calls the flagged tools to see whether a switch is really armed.',
      'Scoring: scored (pass 1, partial 0.5, fail 0).',
    ],
    fix: 'Leave side-effect switches out of the inputSchema and honour them in the handler only when a trusted caller passes them (`args.open === true`); make the default call side-effect free; for irreversible actions use a propose/execute pair instead of an approval Boolean.',
    falsePositives: [
      'The name match is a heuristic: a harmless `open_count` is flagged.',
      'A remove/delete verb acting on the reply\'s form (base64, whitespace, html, markup, formatting) is not a side effect (`removeBase64Images`); one acting on a thing that may be stored is still flagged (`remove_images`, `delete_tags`), even where it only shapes the reply.',
    ],
    falseNegatives: ['A switch called `x` is missed; nested properties are not walked.'],
    limits: ['Static: a flag tells where to look, only a call tells whether it is armed (filler-call-effects).'],
  },
};

export const check: Check = {
  meta,
  judge(a) {
    if (a.tools.length === 0) return { id: meta.id, verdict: 'n/a', findings: [], notes: ['no tools were listed'] };
    const out: Finding[] = [];
    for (const t of a.tools) {
      for (const f of flaggedProperties(t)) {
        const ev = { schemaPaths: [`tools[${t.index}].inputSchema.${f.path}`] };
        const why = describeReasons(f);
        const data = { tool: f.tool, property: f.property, why };
        if (f.armedByDefault) {
          const d = f.reasons.find((r) => r.kind === 'default');
          out.push(finding(meta, 'armed', 'fail', { ...data, default: JSON.stringify(d && 'value' in d ? d.value : null) }, ev, { tool: f.tool }));
        } else if (f.isSwitch) out.push(finding(meta, 'switch', 'partial', data, ev, { tool: f.tool }));
        else out.push(finding(meta, 'default-only', 'info', data, ev, { tool: f.tool }));
      }
    }
    return { id: meta.id, verdict: verdictOf(out), findings: out, notes: [] };
  },
};
