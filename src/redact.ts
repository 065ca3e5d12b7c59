/**
 * The one redactor (SPEC section 8): values given to the server through `--env` or the config's
 * `env`, and sealmark's own canaries, never appear in a report or a transcript. Each occurrence
 * becomes `[redacted:KEY]`; text matching a credential pattern (src/secrets.ts) becomes
 * `[redacted:<pattern id>]`, so a token a server leaked is not printed again in a CI log.
 * Left alone, because they are not secrets and hiding them would hide the evidence: values shorter
 * than {@link MIN_SECRET_LENGTH} characters (`1`, `on`), numbers, and absolute filesystem paths
 * (`MEMORY_FILE_PATH=/tmp/x/memory.jsonl`), unless the variable's name says it holds a credential;
 * and values of other variables shorter than {@link MIN_PLAIN_SECRET_LENGTH} (`MODE=limit`) or made of
 * lowercase words only (`LABEL=read_graph`): a common word is not a secret, and hiding it would
 * garble every text it occurs in. sealmark's own
 * identifiers in a report (check, message, probe and pack ids, verdicts, classes) are never touched.
 */

import { ARGUMENT_CANARY, ARGUMENT_CANARY_NAME, CREDENTIAL_PATTERNS, namedLikeCredential } from './secrets.js';

/** Shortest value treated as a secret. */
export const MIN_SECRET_LENGTH = 4;
/** Shortest value of a variable whose name does not say credential that is treated as a secret. */
export const MIN_PLAIN_SECRET_LENGTH = 8;

/**
 * Identifiers sealmark itself writes into a report (check, pack, message and probe ids, reply
 * classes, verdicts …), registered by the modules that define them. A string under one of the
 * {@link OWN_KEYS} that is exactly one of these is left alone, so that `MODE=limit` never turns
 * `bounded-limits` into `bounded-[redacted:MODE]s`; a server's own data under the same keys
 * (`structuredContent.id`) is never one of them by chance and is redacted like any other text.
 */
const OWN_VALUES = new Set<string>();
const OWN_KEYS = new Set(['id', 'checkId', 'messageId', 'pack', 'probe', 'class', 'verdict', 'level', 'weight', 'severity', 'kind', 'method', 'status', 'letter', 'check', 'pattern']);

/** Registers identifiers of sealmark's own (see {@link OWN_VALUES}). */
export function registerOwnIdentifiers(values: Iterable<string>): void {
  for (const v of values) OWN_VALUES.add(v);
}

/** Deepest level of a value redacted; anything deeper is replaced by a note, never copied unread. */
const MAX_DEPTH = 200;

export class Redactor {
  private readonly pairs: Pair[];

  /**
   * `secrets`: name → value, e.g. the merged `env` a server was started with by the user and the
   * environment canaries. The argument canary is always redacted. Each secret is also looked for
   * as JSON writes it (a `"` or `\` inside escaped), and, at the very start or end of a text, cut
   * short (a quote or a tail truncated through the middle of a secret still hides it).
   */
  constructor(secrets: Record<string, string> = {}) {
    const pairs: Pair[] = [];
    for (const [k, v] of Object.entries({ ...secrets, [ARGUMENT_CANARY_NAME]: ARGUMENT_CANARY })) {
      if (!isSecret(k, v)) continue;
      const mark = `[redacted:${k}]`;
      // A cut piece of a plain value must be as long as a plain secret: `memory` at the end of
      // `server-memory` is a word, not the start of MEMORY_FILE_PATH=memory-store.jsonl.
      const minCut = namedLikeCredential(k) || k === ARGUMENT_CANARY_NAME || /^smk_/.test(v) ? MIN_CUT : MIN_PLAIN_SECRET_LENGTH;
      pairs.push(pair(v, mark, minCut));
      const escaped = JSON.stringify(v).slice(1, -1);
      if (escaped !== v) pairs.push(pair(escaped, mark, minCut));
    }
    // Longest first, so a secret that contains another is replaced whole.
    this.pairs = pairs.sort((a, b) => b.plain.length - a.plain.length);
  }

  /** Redacts plain text: the secrets (whole, escaped, or cut at either end), then the credential patterns. */
  text(s: string): string {
    let out = s;
    for (const p of this.pairs) if (out.includes(p.plain)) out = out.split(p.plain).join(p.mark);
    for (const p of this.pairs) out = cutEnds(out, p);
    for (const p of CREDENTIAL_PATTERNS) out = out.replace(p.pattern, `[redacted:${p.id}]`);
    return out;
  }

  /**
   * `value` with every secret redacted in every string (keys included) and in every number equal
   * to a numeric secret: the objects and arrays that held one are new, the rest are `value`'s own
   * (never mutated here). Strings only otherwise: replacing inside JSON text could hit
   * JSON's own tokens (`true`, a number) and break it.
   */
  value<T>(value: T): T {
    return this.walk(value, 0) as T;
  }

  private walk(v: unknown, depth: number): unknown {
    if (depth > MAX_DEPTH) return '[not shown: nested deeper than 200 levels]';
    if (typeof v === 'string') return this.text(v);
    if (typeof v === 'number') {
      const hit = this.pairs.find((p) => p.plain === String(v));
      return hit ? hit.mark : v;
    }
    if (typeof v !== 'object' || v === null) return v;
    // What holds no secret is returned as it is, not copied: a report of 100,000 values is
    // redacted without building a second one beside it.
    if (Array.isArray(v)) {
      let changed = false;
      const out = v.map((x) => {
        const y = this.walk(x, depth + 1);
        if (y !== x) changed = true;
        return y;
      });
      return changed ? out : v;
    }
    // Own properties, whatever the key: a tool named `__proto__` is a key, not a prototype.
    let changed = false;
    const entries = Object.entries(v).map(([k, x]) => {
      const key = this.text(k);
      const value = OWN_KEYS.has(k) && typeof x === 'string' && OWN_VALUES.has(x) ? x : this.walk(x, depth + 1);
      if (key !== k || value !== x) changed = true;
      return [key, value] as const;
    });
    return changed ? Object.fromEntries(entries) : v;
  }
}

/** Shortest piece of a secret hidden when a text was cut through it (characters). */
const MIN_CUT = 6;

/**
 * A secret and how it is hidden: its pieces a cut text may start or end with (at least `minCut`
 * characters, longest first), made once, since every string of every report is looked at.
 */
interface Pair {
  plain: string;
  mark: string;
  minCut: number;
  /** The secret's first n characters, n from its length − 1 down to minCut. */
  heads: string[];
  /** The secret's last n characters, n from its length − 1 down to minCut. */
  tails: string[];
}

function pair(plain: string, mark: string, minCut: number): Pair {
  const heads: string[] = [];
  const tails: string[] = [];
  for (let n = plain.length - 1; n >= minCut; n--) {
    heads.push(plain.slice(0, n));
    tails.push(plain.slice(plain.length - n));
  }
  return { plain, mark, minCut, heads, tails };
}

/** Hides a secret cut short at the start or the end of `s` (a truncated quote or tail). */
function cutEnds(s: string, p: Pair): string {
  if (s.length < p.minCut) return s;
  let out = s;
  const end = out.endsWith('…') ? out.slice(0, -1) : out;
  for (const head of p.heads) {
    if (end.endsWith(head)) {
      out = end.slice(0, end.length - head.length) + p.mark + out.slice(end.length);
      break;
    }
  }
  for (const tail of p.tails) {
    if (out.startsWith(tail)) {
      out = p.mark + out.slice(tail.length);
      break;
    }
  }
  return out;
}

/** Whether the value of variable `name` is to be redacted (see {@link Redactor}). */
export function isSecret(name: string, value: string): boolean {
  if (value.length < MIN_SECRET_LENGTH) return false;
  if (namedLikeCredential(name)) return true;
  if (value.length < MIN_PLAIN_SECRET_LENGTH) return false;
  if (/^-?\d+(\.\d+)?$/.test(value) || /^(true|false|null|yes|no|on|off)$/i.test(value)) return false;
  // Lowercase words and lists of them (`read_graph`, `write_now,delete_victim`): a mode or a tool
  // name, not a secret (secrets carry digits or capitals), and hiding one garbles every tool name.
  if (/^[a-z][a-z_.,\- ]*$/.test(value)) return false;
  // A path, spaces and all (`/home/me/My Notes/memory.jsonl`): no secret, and reports must show it.
  if (/^(\/|[A-Za-z]:[\\/])[^:@\t\r\n]*$/.test(value)) return false;
  return true;
}
