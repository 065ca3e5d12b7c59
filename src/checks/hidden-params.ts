/**
 * hidden-params (pack effects, scored, static): parameters that must not reach the model are
 * really absent from what `tools/list` sends (seed "Never declare a side-effect flag…": "Check
 * what actually goes out in tools/list, not what your decorator says"; SPEC section 5).
 */
import type { Check, CheckMeta } from './check.js';
import { finding, verdictOf } from './finding.js';
import { credentialLike } from '../secrets.js';
import { propertiesOf, type PropertyInfo } from '../schema.js';
import { wordsOf } from '../words.js';
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
    { verdict: 'fail', when: 'a name listed in hidden_params appears as a property of a tool\'s inputSchema, or a credential-like string property whose schema confirms it holds a secret (format: password, writeOnly: true, or a description that says key, secret, password, credential or token)' },
    { verdict: 'partial', when: 'a credential-like name alone (a string property named api_key, token, password …): a name is a heuristic, and never alone makes a fail (SPEC section 5)' },
    { verdict: 'pass', when: 'none does' },
    { verdict: 'n/a', when: 'no tools were listed' },
  ],
  messages: {
    configured: '{tool}: `{property}` is listed in hidden_params but tools/list still declares it',
    credential: '{tool}: `{property}` looks like a credential; a model can read and set it',
    'credential-confirmed': '{tool}: `{property}` holds a credential ({why}); a model can read and set it',
    'credential-input': '{tool}: `{property}` is named like a credential, but reading one is the tool\'s job ({verb}); not counted',
  },
  docs: {
    summary:
      'Frameworks let you hide parameters from the model (FastMCP exclude_args, OpenAI Agents exclude_params, LangChain injected args) to keep user ids and credentials out of its reach. The hiding has failed silently before: only what goes out on the wire counts.',
    how: [
      'The properties of every inputSchema, as tools/list really returned them, are compared with the config\'s `hidden_params` and with credential-like names.',
      'A credential-like name counts only on a string property (a boolean `byApiKey` or a number is a switch or a count, not a secret), and not when the words after it say it is about a credential rather than one (`api_key_name`, `token_type`, `token_count`, `api_key_env`) or the words before make it a cursor (`page_token`, `next_token`).',
      'A tool whose job is to read a credential (its name says decode, parse, verify, validate, inspect or introspect: `jwt_decode`, `verify_token`) takes one as its input: noted, not counted.',
      'A credential-like name alone is partial; it is a fail when the schema confirms it: `format: "password"`, `writeOnly: true`, or a description that says it is a key, secret, password, credential or token.',
      'Scoring: scored (pass 1, partial 0.5, fail 0).',
    ],
    fix: 'Inject such values in the handler from the session or the environment, never as declared parameters; test what your framework really emits in tools/list.',
    falsePositives: ['A parameter named `token` that is a search or sync token (without a word that says so) is flagged as partial; rename it (`cursor`, `page_token`).'],
    falseNegatives: ['Only top-level properties are compared; a credential nested in an object parameter is missed.'],
    limits: ['Names only: the check cannot know what a parameter is used for.'],
  },
};

/** Words after a credential word that make the name about a credential, not one (`api_key_name`). */
const ABOUT_WORDS = new Set(['name', 'names', 'id', 'ids', 'type', 'types', 'count', 'limit', 'expiry', 'expires', 'expiration', 'url', 'uri', 'endpoint', 'file', 'path', 'env', 'var', 'variable', 'header', 'prefix', 'length', 'hint', 'label', 'scope', 'scopes']);
/** Words before `token` that make it a cursor (`page_token`, `next_token`). */
const CURSOR_WORDS = new Set(['page', 'next', 'continuation', 'pagination', 'cursor', 'sync', 'start', 'resume']);
/** Verbs of a tool whose job is to read a credential it is given. */
const READS_CREDENTIAL = new Set(['decode', 'parse', 'verify', 'validate', 'inspect', 'introspect', 'check']);

/** Why a credential-like property is not one: its type, or the words around the credential word. */
function notACredential(p: PropertyInfo): boolean {
  if (p.types.length > 0 && !p.types.includes('string')) return true;
  const w = wordsOf(p.name);
  const last = w.at(-1) ?? '';
  if (w.length > 1 && ABOUT_WORDS.has(last)) return true;
  const at = w.findIndex((x) => x === 'token');
  return at > 0 && CURSOR_WORDS.has(w[at - 1]!);
}

/** What in the schema confirms that a credential-like property holds a secret, if anything. */
function confirmation(schema: unknown): string | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const s = schema as { format?: unknown; writeOnly?: unknown; description?: unknown };
  if (s.format === 'password') return 'format: password';
  if (s.writeOnly === true) return 'writeOnly: true';
  if (typeof s.description === 'string' && /\b(api[ _-]?key|secret|password|credential|access[ _-]?token|bearer|auth(?:entication)?[ _-]?token)\b/i.test(s.description)) {
    return `described as ${JSON.stringify(s.description.slice(0, 80))}`;
  }
  return undefined;
}

export const check: Check = {
  meta,
  judge(a) {
    if (a.tools.length === 0) return { id: meta.id, verdict: 'n/a', findings: [], notes: ['no tools were listed'] };
    const hidden = new Set(a.config.hidden_params);
    const out: Finding[] = [];
    for (const t of a.tools) {
      const toolWords = wordsOf(t.name);
      const readsOne = toolWords.find((w) => READS_CREDENTIAL.has(w));
      for (const p of propertiesOf(t.inputSchema)) {
        const ev = { schemaPaths: [`tools[${t.index}].inputSchema.properties.${p.name}`] };
        const data = { tool: t.name, property: p.name };
        if (hidden.has(p.name)) {
          out.push(finding(meta, 'configured', 'fail', data, ev, { tool: t.name }));
          continue;
        }
        if (!credentialLike(p.name) || notACredential(p)) continue;
        if (readsOne) {
          out.push(finding(meta, 'credential-input', 'info', { ...data, verb: readsOne }, ev, { tool: t.name }));
          continue;
        }
        const why = confirmation(p.schema);
        if (why) out.push(finding(meta, 'credential-confirmed', 'fail', { ...data, why }, ev, { tool: t.name }));
        else out.push(finding(meta, 'credential', 'partial', data, ev, { tool: t.name }));
      }
    }
    return { id: meta.id, verdict: verdictOf(out), findings: out, notes: [] };
  },
};
