/**
 * What a tool says about itself, read one way for every design check (SPEC section 5, pack design;
 * seed "Side-Effect Boundaries"; MCP 2025-11-25 `ToolAnnotations`): its hints with the spec's
 * defaults applied, and the verb its name starts with, from one table of read verbs and write verbs.
 */
import { wordsOf } from './words.js';
import { propertiesOf } from './schema.js';
import type { ListedTool } from './types.js';

/**
 * Read verbs: a tool named with one reads as a query (`get_customer`, `listInvoices`, `search-orders`).
 */
export const READ_VERBS: readonly string[] = [
  'get', 'list', 'search', 'find', 'read', 'fetch', 'retrieve', 'describe', 'show', 'query', 'lookup', 'view', 'inspect', 'browse', 'count', 'check', 'validate', 'preview', 'explain', 'resolve',
  // Pure functions of their input: they compute an answer and change nothing (SPEC section 5, the
  // query sense: `decode_token`, `jwt_decode`, `calculate_distance`).
  'decode', 'parse', 'verify', 'calculate', 'compute', 'compare', 'diff',
];

/**
 * Nouns after `add` (or `subtract`) that give it its arithmetic sense (SPEC section 5: `add_time`
 * adds a duration to a date, it stores nothing): such a name carries no write verb.
 */
export const ARITHMETIC_OBJECTS: readonly string[] = [
  'time', 'times', 'duration', 'durations', 'date', 'dates', 'days', 'hours', 'minutes', 'seconds', 'weeks', 'months', 'years', 'interval', 'offset',
  'number', 'numbers', 'integers', 'values', 'two', 'nums',
];

/** Destroying verbs (SPEC section 5 tool-naming): a tool named with one must not state `destructiveHint: false`. */
export const DESTROY_VERBS: readonly string[] = ['delete', 'remove', 'drop', 'purge', 'reset', 'revoke', 'cancel', 'wipe', 'destroy', 'erase', 'truncate', 'terminate', 'kill'];

/**
 * Write verbs: a tool named with one changes something (`send_email`, `refundOrder`, `notes.delete`).
 * Words that name a read as often as a write are in neither table: `open` (open_nodes reads),
 * `trigger`, `order`.
 */
export const WRITE_VERBS: readonly string[] = [
  ...DESTROY_VERBS,
  'create', 'add', 'insert', 'update', 'upsert', 'set', 'put', 'patch', 'edit', 'write', 'save', 'replace', 'strip', 'rename', 'move', 'copy', 'upload', 'import', 'sync', 'merge',
  'send', 'post', 'publish', 'notify', 'email', 'reply', 'forward', 'invite', 'share',
  'pay', 'charge', 'refund', 'transfer', 'purchase', 'buy', 'withdraw', 'payout',
  'deploy', 'release', 'rollback', 'provision', 'scale', 'restart', 'start', 'stop', 'run', 'execute', 'exec', 'schedule', 'apply', 'commit', 'push', 'approve', 'reject', 'submit', 'close', 'archive', 'toggle', 'enable', 'disable', 'lock', 'unlock', 'assign', 'launch', 'confirm',
];

/**
 * Verbs idempotent by nature (SPEC section 5 idempotency-key): doing it twice leaves the world as
 * doing it once (a second delete finds nothing, a second update writes the same value), so a tool
 * named with one needs no idempotency key.
 */
export const IDEMPOTENT_VERBS: readonly string[] = ['delete', 'remove', 'update', 'set', 'put', 'replace', 'upsert', 'stop', 'cancel', 'close'];

/** The verb a tool name carries: the word of the name found in a table, and which table. */
export interface NameVerb {
  verb: string;
  kind: 'read' | 'write';
  destroys: boolean;
}

/**
 * How a server names its tools, read from all of them: `prefix`, the leading words every tool
 * shares (a server or vendor name: `firecrawl_` of `firecrawl_monitor_create`), stripped before the
 * verb is looked for; `verbAt`, where the verb sits in what remains: `start` (verb_noun,
 * `create_entities`) or `end` (noun_verb, `monitor_create`, `pdf_metadata_write`).
 */
export interface NameStyle {
  prefix: string[];
  verbAt: 'start' | 'end';
}

/** The default style: no prefix, verb first (how a lone name is read). */
export const VERB_FIRST: NameStyle = { prefix: [], verbAt: 'start' };

/**
 * The naming style of a server's tools (see {@link NameStyle}). The prefix is the longest run of
 * leading words shared by two or more tools that leaves a word in every name and is not itself a
 * verb of the tables (`get_a`, `get_b` share a verb, not a vendor). `verbAt` is `end` when at least
 * three of the multi-word remainders read only as noun_verb (a table verb last, none first) and they
 * outnumber those that read only as verb_noun; a name with a table word at both ends (`execute_refund`:
 * `refund` is a noun too) votes for neither, and anything else reads verb first.
 */
export function nameStyleOf(tools: readonly Pick<ListedTool, 'name'>[]): NameStyle {
  const words = tools.map((t) => wordsOf(lastSegment(t.name)));
  const prefix: string[] = [];
  if (words.length >= 2) {
    for (let i = 0; ; i++) {
      const w = words[0]![i];
      if (w === undefined || isVerb(w) || !words.every((x) => x[i] === w && x.length > i + 1)) break;
      prefix.push(w);
    }
  }
  let start = 0;
  let end = 0;
  for (const x of words) {
    const rest = x.slice(prefix.length);
    if (rest.length < 2) continue;
    const first = isVerb(rest[0]!);
    const last = isVerb(rest.at(-1)!);
    if (first && !last) start++;
    if (last && !first) end++;
  }
  return { prefix, verbAt: end >= 3 && end > start ? 'end' : 'start' };
}

function isVerb(w: string): boolean {
  return READ_VERBS.includes(w) || WRITE_VERBS.includes(w);
}

function lastSegment(name: string): string {
  return name.split(/[./]/).filter(Boolean).at(-1) ?? name;
}

/**
 * The verb of a tool name: of its last dotted or slashed segment (snake_case, camelCase and
 * kebab-case alike, so `notes.delete` reads delete and `github.create_issue` reads create), with
 * the server's shared prefix stripped (`style`, from {@link nameStyleOf}; default: none), the first
 * word, or under a noun_verb style the last one (`firecrawl_monitor_create` reads create), when it
 * is in the read or write table; undefined otherwise (`simulate-research-query` starts with no verb
 * of either table, and its `query` is a noun; `add_time` is arithmetic, see
 * {@link ARITHMETIC_OBJECTS}, as is a bare `add` whose `tool` takes numbers only). Only one
 * position is read: `search_feedback` on a noun_verb server carries no verb (its `search` is a noun).
 * The git sense: `fetch` in a name that says git (`git_fetch`) is a write.
 */
export function verbOf(name: string, tool?: Pick<ListedTool, 'inputSchema'>, style: NameStyle = VERB_FIRST): NameVerb | undefined {
  const all = wordsOf(name);
  let words = wordsOf(lastSegment(name));
  if (style.prefix.length > 0 && words.length > style.prefix.length && style.prefix.every((p, i) => words[i] === p)) words = words.slice(style.prefix.length);
  const w = style.verbAt === 'end' ? words.at(-1) : words[0];
  if (w === undefined) return undefined;
  // `add_time`, `add_numbers`: arithmetic, not a write (`add` alone is left to the table).
  if (w === 'add' && words[0] === 'add' && words[1] !== undefined && ARITHMETIC_OBJECTS.includes(words[1])) return undefined;
  // `add(a, b)` with numbers only: the schema says arithmetic.
  if (w === 'add' && words.length === 1 && tool && numbersOnly(tool.inputSchema)) return undefined;
  // `git_fetch`: git's fetch updates remote-tracking refs and objects, a write (the git sense).
  if (w === 'fetch' && all.includes('git')) return { verb: w, kind: 'write', destroys: false };
  if (READ_VERBS.includes(w)) return { verb: w, kind: 'read', destroys: false };
  if (WRITE_VERBS.includes(w)) return { verb: w, kind: 'write', destroys: DESTROY_VERBS.includes(w) };
  return undefined;
}

function numbersOnly(schema: unknown): boolean {
  const props = propertiesOf(schema);
  return props.length > 0 && props.every((p) => p.types.length > 0 && p.types.every((t) => t === 'number' || t === 'integer'));
}

/** A tool's hints: each as stated (`undefined` when absent) and as the spec's default fills it in. */
export interface Hints {
  stated: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
  /** With the MCP defaults (2025-11-25 ToolAnnotations): readOnlyHint false, destructiveHint true, idempotentHint false, openWorldHint true. */
  readOnly: boolean;
  destructive: boolean;
  idempotent: boolean;
  openWorld: boolean;
}

/** The hints of a tool; a hint that is not a Boolean counts as absent. */
export function hintsOf(tool: ListedTool): Hints {
  const a = tool.annotations ?? {};
  const b = (k: string) => (typeof a[k] === 'boolean' ? (a[k] as boolean) : undefined);
  const stated = { readOnlyHint: b('readOnlyHint'), destructiveHint: b('destructiveHint'), idempotentHint: b('idempotentHint'), openWorldHint: b('openWorldHint') };
  return {
    stated,
    readOnly: stated.readOnlyHint ?? false,
    destructive: stated.destructiveHint ?? true,
    idempotent: stated.idempotentHint ?? false,
    openWorld: stated.openWorldHint ?? true,
  };
}

/**
 * Verbs of irreversible writes (SPEC section 5 two-step-writes; seed "Side-Effect Boundaries":
 * money out, messages sent, infrastructure changed, data deleted).
 */
export const IRREVERSIBLE_VERBS: Readonly<Record<string, readonly string[]>> = {
  money: ['pay', 'charge', 'refund', 'transfer', 'purchase', 'buy', 'withdraw', 'payout'],
  messages: ['send', 'post', 'publish', 'notify', 'email', 'reply', 'forward', 'invite'],
  deletion: DESTROY_VERBS,
  deployment: ['deploy', 'release', 'rollback', 'provision', 'scale', 'restart'],
};

/** Which kind of irreversible write a tool's name says it makes, if any. */
export function irreversibleKind(name: string): string | undefined {
  const v = verbOf(name);
  if (!v) return undefined;
  return Object.entries(IRREVERSIBLE_VERBS).find(([, verbs]) => verbs.includes(v.verb))?.[0];
}

/** Names of an idempotency key parameter, as word sequences (`idempotency_key`, `requestId`, `client_token`). */
export const KEY_NAMES: readonly (readonly string[])[] = [
  ['idempotency', 'key'], ['idempotency'], ['idem', 'key'], ['request', 'id'], ['client', 'request', 'id'], ['client', 'token'], ['dedupe', 'key'], ['dedup', 'key'], ['dedupe', 'id'], ['operation', 'id'],
];

/** Names of the proposal id an execute step requires (`proposal_id`, `planId`, `preview_id`). */
export const PROPOSAL_NAMES: readonly (readonly string[])[] = [
  ['proposal', 'id'], ['proposal'], ['plan', 'id'], ['preview', 'id'], ['draft', 'id'], ['quote', 'id'], ['confirmation', 'id'], ['approval', 'id'], ['proposal', 'token'], ['confirmation', 'token'],
];

/** True when the words of `name` are exactly one of `names`. */
export function nameIs(name: string, names: readonly (readonly string[])[]): boolean {
  const w = wordsOf(name);
  return names.some((seq) => seq.length === w.length && seq.every((x, i) => w[i] === x));
}
