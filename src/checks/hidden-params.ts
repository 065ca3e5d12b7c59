/**
 * hidden-params (pack effects, scored, static): parameters that must not reach the model are
 * really absent from what `tools/list` sends (seed "Never declare a side-effect flag…": "Check
 * what actually goes out in tools/list, not what your decorator says"; SPEC section 5).
 */
import type { Check, CheckMeta } from './check.js';
import { finding, verdictOf } from './finding.js';
import { credentialLike } from '../secrets.js';
import { propertiesOf } from '../schema.js';
import type { Finding } from '../types.js';

export { credentialLike };

export const meta: CheckMeta = {
  id: 'hidden-params',
  title: 'What must stay hidden is not in tools/list',
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
    { id: 'configured', core: true, description: 'Every name listed in the config\'s `hidden_params` (context the model must not see or set: user ids, credentials, `open`).' },
    { id: 'credential-like', core: true, description: 'Credential-like names: api_key, token, password, secret, authorization (and their camelCase and compound forms, e.g. accessToken, client_secret).' },
  ],
  verdicts: [
    { verdict: 'fail', when: 'a configured or credential-like name appears as a property of any tool\'s inputSchema in tools/list' },
    { verdict: 'pass', when: 'none does' },
    { verdict: 'n/a', when: 'no tools were listed' },
  ],
  messages: {
    configured: '{tool}: `{property}` is listed in hidden_params but tools/list still declares it',
    credential: '{tool}: `{property}` looks like a credential; a model can read and set it',
  },
  docs: {
    summary:
      'Frameworks let you hide parameters from the model (FastMCP exclude_args, OpenAI Agents exclude_params, LangChain injected args) to keep user ids and credentials out of its reach. The hiding has failed silently before: only what goes out on the wire counts.',
    how: [
      'The properties of every inputSchema, as tools/list really returned them, are compared with the config\'s `hidden_params` and with credential-like names.',
      'Scoring: scored (pass 1, fail 0).',
    ],
    fix: 'Inject such values in the handler from the session or the environment, never as declared parameters; test what your framework really emits in tools/list.',
    falsePositives: ['A parameter named `token` that is a pagination or search token is flagged; rename it (`page_token` still matches: `cursor` does not).'],
    falseNegatives: ['Only top-level properties are compared; a credential nested in an object parameter is missed.'],
    limits: ['Names only: the check cannot know what a parameter is used for.'],
  },
};

export const check: Check = {
  meta,
  judge(a) {
    if (a.tools.length === 0) return { id: meta.id, verdict: 'n/a', findings: [], notes: ['no tools were listed'] };
    const hidden = new Set(a.config.hidden_params);
    const out: Finding[] = [];
    for (const t of a.tools) {
      for (const p of propertiesOf(t.inputSchema)) {
        const ev = { schemaPaths: [`tools[${t.index}].inputSchema.properties.${p.name}`] };
        if (hidden.has(p.name)) out.push(finding(meta, 'configured', 'fail', { tool: t.name, property: p.name }, ev, { tool: t.name }));
        else if (credentialLike(p.name)) out.push(finding(meta, 'credential', 'fail', { tool: t.name, property: p.name }, ev, { tool: t.name }));
      }
    }
    return { id: meta.id, verdict: verdictOf(out), findings: out, notes: [] };
  },
};
