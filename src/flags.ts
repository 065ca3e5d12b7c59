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

/** Inverted guards: a boolean whose `false` arms the effect (`dry_run`, `skip_*`, `no_*`, `disable_*`). */
const INVERTED = /^(dry_?run|dryrun|skip_|no_|disable_)|^(dryRun|skip[A-Z]|no[A-Z]|disable[A-Z])/;

/** Approval booleans a filler sets to true (SPEC section 5). */
const APPROVALS = new Set(['approved', 'approved_by_user', 'approvedbyuser', 'confirm', 'confirmed', 'user_confirmed', 'userconfirmed']);


/** The side-effect verb a name carries, if any. */
export function sideEffectVerb(name: string): string | undefined {
  for (const w of wordsOf(name)) {
    const v = VERB_OF.get(w);
    if (v) return v;
  }
  return undefined;
}

/** Why a property is flagged; `switch` reasons make a side-effect switch, `default` alone does not. */
export type FlagReason =
  | { kind: 'default'; value: unknown }
  | { kind: 'side-effect-enum'; values: string[] }
  | { kind: 'inverted'; }
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
    const inverted = isBool && INVERTED.test(p.name);
    if (inverted) reasons.push({ kind: 'inverted' });
    const approval = isBool && APPROVALS.has(wordsOf(p.name).join('_'));
    if (approval) reasons.push({ kind: 'approval' });
    const verb = inverted ? undefined : sideEffectVerb(p.name);
    if (verb && !approval) reasons.push({ kind: 'side-effect-name', verb });
    if (reasons.length === 0) continue;
    const isSwitch = reasons.some((r) => r.kind !== 'default');
    const d = p.schema.default;
    const armedByDefault =
      hasDefault &&
      ((inverted && d === false) ||
        ((approval || (isBool && verb !== undefined)) && d === true) ||
        (hot.length > 0 && typeof d === 'string' && hot.includes(d)));
    out.push({ tool: tool.name, property: p.name, path: `properties.${p.name}`, reasons, isSwitch, armedByDefault });
  }
  return out;
}

function sideEffectEnumValues(p: PropertyInfo): string[] {
  return (p.enum ?? []).filter((v): v is string => typeof v === 'string' && sideEffectVerb(v) !== undefined);
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
 * the side-effect value of an enum, `true` for every boolean but inverted guards (`false`), the
 * declared default of anything else, and neutral values for required properties left unset.
 */
export function fillerArgs(tool: ListedTool): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of propertiesOf(tool.inputSchema)) {
    let v: unknown;
    const hot = sideEffectEnumValues(p);
    if (hot.length > 0) v = hot[0];
    else if (p.types.includes('boolean')) v = !(INVERTED.test(p.name));
    else if ('default' in p.schema) v = p.schema.default;
    else if (p.required) v = sampleProperty(p);
    if (v !== undefined) Object.defineProperty(out, p.name, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
