/**
 * The one recogniser of side-effect switches, and the deterministic filler that arms them (seed
 * "Never declare a side-effect flag in your tool's inputSchema"; SPEC section 5, pack effects).
 * `armed-flags` reports what it finds; `filler-call-effects` calls tools with what the filler sends.
 */
import { propertiesOf, type PropertyInfo } from './schema.js';
import { sampleProperty } from './values.js';
import type { ListedTool } from './types.js';
import { wordsOf } from './words.js';

export { wordsOf };

/**
 * Side-effect verbs (SPEC section 5, armed-flags), each with the word forms that count. A name is
 * split into words (snake_case, kebab-case, camelCase); a word must be one of these forms, so
 * `notify_channel` and `sendEmail` count and `postal_code` does not.
 */
const VERB_FORMS: Record<string, string[]> = {
  send: ['send', 'sends', 'sending'],
  notify: ['notify', 'notifies', 'notification', 'notifications', 'notified'],
  open: ['open', 'opens', 'opened', 'opening'],
  launch: ['launch', 'launches', 'launched'],
  confirm: ['confirm', 'confirms', 'confirmed', 'confirmation'],
  publish: ['publish', 'publishes', 'published'],
  post: ['post', 'posts', 'posted'],
  email: ['email', 'emails', 'mail'],
  charge: ['charge', 'charges', 'charged'],
  pay: ['pay', 'pays', 'paid'],
  purchase: ['purchase', 'purchases', 'buy'],
  delete: ['delete', 'deletes', 'deleted'],
  remove: ['remove', 'removes', 'removed'],
  force: ['force', 'forced'],
  commit: ['commit', 'commits'],
  deploy: ['deploy', 'deploys', 'deployed'],
  execute: ['execute', 'executes', 'exec'],
  submit: ['submit', 'submits', 'submitted'],
};
const VERB_OF = new Map(Object.entries(VERB_FORMS).flatMap(([verb, forms]) => forms.map((f) => [f, verb] as const)));

/** Words of an inverted guard's first word: the rest of the name is what the flag turns off (`skip_send`, `noCommit`, `disable_notify`). */
const NEGATIONS = new Set(['skip', 'no', 'disable']);

/**
 * Safeguards: when a negation turns one of these off (`skipTlsVerification`, `no_verify`,
 * `disable_sandbox`), the dangerous side is `true`, not `false` (a filler's `true` arms it).
 */
const SAFEGUARDS = new Set([
  'verify', 'verification', 'verifications', 'verified', 'tls', 'ssl', 'cert', 'certs', 'certificate', 'certificates', 'check', 'checks', 'checking',
  'validation', 'validate', 'validations', 'confirm', 'confirmation', 'confirmations', 'backup', 'backups', 'sandbox', 'sandboxing', 'auth', 'authentication',
  'authorization', 'security', 'safety', 'safe', 'guard', 'guards', 'protection', 'approval', 'approvals', 'review', 'prompt', 'prompts', 'hooks', 'lint', 'tests',
]);

/**
 * Output-shaping words: a remove/strip verb acting on one of these shapes the reply
 * (`removeBase64Images`, `strip_whitespace`), it deletes nothing stored. Kept narrow: `remove_images`
 * or `delete_tags` could delete stored things, so `images` and `tags` are not here.
 */
const OUTPUT_FORMS = new Set(['base64', 'whitespace', 'whitespaces', 'html', 'markup', 'formatting', 'newlines', 'ansi', 'emoji', 'emojis']);
const SHAPING_VERBS = new Set(['remove', 'delete']);

/**
 * How a boolean that negates something arms (SPEC section 5 armed-flags): `false` for an inverted
 * guard whose rest names an action (`dry_run`, `skip_send`, `no_commit`: false lets it happen),
 * `true` when the rest names a safeguard (`skipTlsVerification`, `no_verify`: true turns the
 * safeguard off); undefined for a name that negates nothing or only filters on a state (`noMerged`).
 * snake_case, camelCase and kebab-case alike.
 */
export function negatedGuard(name: string): 'inverted' | 'safeguard-off' | undefined {
  const w = wordsOf(name);
  if (w.join('') === 'dryrun' || (w[0] === 'dry' && w[1] === 'run')) return 'inverted';
  if (w.length < 2 || !NEGATIONS.has(w[0]!)) return undefined;
  const rest = w.slice(1);
  if (rest.some((x) => SAFEGUARDS.has(x))) return 'safeguard-off';
  // `noMerged`, `no_archived`: a filter on a state (branches not merged), not a guard on an action.
  if (rest.every((x) => /ed$/.test(x))) return undefined;
  return 'inverted';
}

/** Approval booleans a filler sets to true (SPEC section 5). */
const APPROVALS = new Set(['approved', 'approved_by_user', 'approvedbyuser', 'confirm', 'confirmed', 'user_confirmed', 'userconfirmed']);


/** Leading words of a count (`maxCommits`, `num_posts`): what follows is counted, not done. */
const COUNTS = new Set(['max', 'min', 'num', 'limit', 'count', 'total']);

/**
 * The side-effect verb a name carries, if any; undefined for a verb that only shapes the reply
 * (`removeBase64Images`) and for a count of things (`maxCommits`).
 */
export function sideEffectVerb(name: string): string | undefined {
  const words = wordsOf(name);
  if (words.length > 1 && COUNTS.has(words[0]!)) return undefined;
  for (const [i, w] of words.entries()) {
    const v = VERB_OF.get(w);
    if (!v) continue;
    if (SHAPING_VERBS.has(v) && words.slice(i + 1).some((x) => OUTPUT_FORMS.has(x))) continue;
    return v;
  }
  return undefined;
}

/**
 * Word forms that ask for an action when they are an enum value: the verb itself (and `exec`,
 * `buy`, `mail`). A past participle or gerund (`removed`, `published`, `sending`) names a state,
 * as in a status filter `pageStatus: ["same", "changed", "removed"]`, not an action.
 */
function imperativeVerb(value: string): string | undefined {
  for (const w of wordsOf(value)) {
    const v = VERB_OF.get(w);
    if (v && (w === v || w === 'exec' || w === 'buy' || w === 'mail')) return v;
  }
  return undefined;
}

/** Enum values that mark the enum as a state filter: past participles of the verb table and common states. */
const STATES = new Set(['closed', 'all', 'active', 'pending', 'merged', 'archived', 'draft', 'done', 'failed', 'changed', 'new', 'same', 'unchanged']);
function isStateValue(value: string): boolean {
  const w = wordsOf(value);
  return w.length === 1 && (STATES.has(w[0]!) || (VERB_OF.has(w[0]!) && /(ed|id)$/.test(w[0]!)));
}

/** Why a property is flagged; `switch` reasons make a side-effect switch, `default` alone does not. */
export type FlagReason =
  | { kind: 'default'; value: unknown }
  | { kind: 'side-effect-enum'; values: string[] }
  | { kind: 'inverted'; }
  | { kind: 'safeguard-off' }
  | { kind: 'side-effect-name'; verb: string }
  | { kind: 'approval' };

/** A flagged property of a tool. `armedByDefault`: its declared default already arms the switch. */
export interface FlaggedProperty {
  tool: string;
  property: string;
  /** Path in the tool's inputSchema, e.g. `properties.notify_channel`. */
  path: string;
  reasons: FlagReason[];
  /** A side-effect switch (not only a property with a default). */
  isSwitch: boolean;
  armedByDefault: boolean;
}

/** Every flagged top-level property of a tool, in declaration order. */
export function flaggedProperties(tool: ListedTool): FlaggedProperty[] {
  const out: FlaggedProperty[] = [];
  for (const p of propertiesOf(tool.inputSchema)) {
    const reasons: FlagReason[] = [];
    const hasDefault = 'default' in p.schema;
    if (hasDefault) reasons.push({ kind: 'default', value: p.schema.default });
    const hot = sideEffectEnumValues(p);
    if (hot.length > 0) reasons.push({ kind: 'side-effect-enum', values: hot });
    const isBool = p.types.includes('boolean');
    const guard = isBool ? negatedGuard(p.name) : undefined;
    const inverted = guard === 'inverted';
    if (guard) reasons.push({ kind: guard });
    const approval = isBool && APPROVALS.has(wordsOf(p.name).join('_'));
    if (approval) reasons.push({ kind: 'approval' });
    const verb = guard ? undefined : sideEffectVerb(p.name);
    // `email`, `contact_email`: a property that is not a Boolean and ends in email holds an address, not a switch to send one.
    const address = verb === 'email' && !isBool && ['email', 'emails', 'mail'].includes(wordsOf(p.name).at(-1)!);
    if (verb && !approval && !address) reasons.push({ kind: 'side-effect-name', verb });
    if (reasons.length === 0) continue;
    const isSwitch = reasons.some((r) => r.kind !== 'default');
    const d = p.schema.default;
    const armedByDefault =
      hasDefault &&
      ((inverted && d === false) ||
        ((approval || guard === 'safeguard-off' || (isBool && verb !== undefined)) && d === true) ||
        (hot.length > 0 && typeof d === 'string' && hot.includes(d)));
    out.push({ tool: tool.name, property: p.name, path: `properties.${p.name}`, reasons, isSwitch, armedByDefault });
  }
  return out;
}

/** The enum values that ask for a side effect (`send`, `publish`); none when the enum is a state filter (`open`/`closed`, `removed`). */
function sideEffectEnumValues(p: PropertyInfo): string[] {
  const values = (p.enum ?? []).filter((v): v is string => typeof v === 'string');
  const states = values.some(isStateValue);
  return values.filter((v) => imperativeVerb(v) !== undefined && !(states && imperativeVerb(v) === 'open'));
}

/** One line saying why a property is flagged, e.g. `boolean with a side-effect name (notify)`. */
export function describeReasons(f: FlaggedProperty): string {
  return f.reasons
    .map((r) => {
      switch (r.kind) {
        case 'default':
          return `declares default ${JSON.stringify(r.value)}`;
        case 'side-effect-enum':
          return `enum includes ${r.values.map((v) => JSON.stringify(v)).join(', ')}`;
        case 'inverted':
          return 'inverted guard (false arms it)';
        case 'safeguard-off':
          return 'turns a safeguard off (true arms it)';
        case 'approval':
          return 'approval switch (a filler sets it true)';
        case 'side-effect-name':
          return `side-effect name (${r.verb})`;
      }
    })
    .join('; ');
}

/**
 * What a deterministic filler sends (the seed's `filled`, SPEC section 5 filler-call-effects):
 * the side-effect value of an enum, `true` for every boolean but inverted guards (`false`; a guard
 * that turns a safeguard off, `skipTlsVerification`, gets `true` like any boolean), the
 * declared default of anything else, and neutral values for required properties left unset.
 */
export function fillerArgs(tool: ListedTool): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of propertiesOf(tool.inputSchema)) {
    let v: unknown;
    const hot = sideEffectEnumValues(p);
    if (hot.length > 0) v = hot[0];
    else if (p.types.includes('boolean')) v = negatedGuard(p.name) !== 'inverted';
    else if ('default' in p.schema) v = p.schema.default;
    else if (p.required) v = sampleProperty(p);
    if (v !== undefined) Object.defineProperty(out, p.name, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
