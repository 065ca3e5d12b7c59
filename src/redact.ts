/**
 * The one redactor (SPEC section 8): values given to the server through `--env` or the config's
 * `env`, and sealmark's own canaries, never appear in a report or a transcript. Each occurrence
 * becomes `[redacted:KEY]`; text matching a credential pattern (src/secrets.ts) becomes
 * `[redacted:<pattern id>]`, so a token a server leaked is not printed again in a CI log.
 * Left alone, because they are not secrets and hiding them would hide the evidence: values shorter
 * than {@link MIN_SECRET_LENGTH} characters (`1`, `on`), numbers, and absolute filesystem paths
 * (`MEMORY_FILE_PATH=/tmp/x/memory.jsonl`), unless the variable's name says it holds a credential;
 * and values of other variables shorter than {@link MIN_PLAIN_SECRET_LENGTH} (`MODE=limit`): a
 * common word is not a secret, and hiding it would garble every text it occurs in. sealmark's own
 * identifiers in a report (check, message, probe and pack ids, verdicts, classes) are never touched.
 */

import { ARGUMENT_CANARY, ARGUMENT_CANARY_NAME, CREDENTIAL_PATTERNS, namedLikeCredential } from './secrets.js';

/** Shortest value treated as a secret. */
export const MIN_SECRET_LENGTH = 4;
/** Shortest value of a variable whose name does not say credential that is treated as a secret. */
export const MIN_PLAIN_SECRET_LENGTH = 8;

/** Report keys whose values are sealmark's own identifiers, never a server's text. */
const OWN_KEYS = new Set(['id', 'checkId', 'messageId', 'pack', 'probe', 'class', 'verdict', 'level', 'weight', 'severity', 'kind', 'method', 'status', 'letter', 'check', 'pattern', 'schemaVersion', 'methodologyVersion', 'cliVersion']);

export class Redactor {
  private readonly pairs: { plain: string; mark: string }[];

  /**
   * `secrets`: name → value, e.g. the merged `env` a server was started with by the user and the
   * environment canaries. The argument canary is always redacted.
   */
  constructor(secrets: Record<string, string> = {}) {
    this.pairs = Object.entries({ ...secrets, [ARGUMENT_CANARY_NAME]: ARGUMENT_CANARY })
      .filter(([k, v]) => isSecret(k, v))
      // Longest first, so a secret that contains another is replaced whole.
      .sort((a, b) => b[1].length - a[1].length)
      .map(([k, v]) => ({ plain: v, mark: `[redacted:${k}]` }));
  }

  /** Redacts plain text: the secrets, then the credential patterns. */
  text(s: string): string {
    let out = s;
    for (const p of this.pairs) out = out.split(p.plain).join(p.mark);
    for (const p of CREDENTIAL_PATTERNS) out = out.replace(p.pattern, `[redacted:${p.id}]`);
    return out;
  }

  /**
   * A deep copy of `value` with every secret redacted in every string (keys included). Strings
   * only: replacing inside JSON text could hit JSON's own tokens (`true`, a number) and break it.
   */
  value<T>(value: T): T {
    return this.walk(value, 0) as T;
  }

  private walk(v: unknown, depth: number): unknown {
    if (typeof v === 'string') return this.text(v);
    if (typeof v !== 'object' || v === null || depth > 200) return v;
    if (Array.isArray(v)) return v.map((x) => this.walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[this.text(k)] = OWN_KEYS.has(k) && typeof x === 'string' ? x : this.walk(x, depth + 1);
    return out;
  }
}


/** Whether the value of variable `name` is to be redacted (see {@link Redactor}). */
export function isSecret(name: string, value: string): boolean {
  if (value.length < MIN_SECRET_LENGTH) return false;
  if (namedLikeCredential(name)) return true;
  if (value.length < MIN_PLAIN_SECRET_LENGTH) return false;
  if (/^-?\d+(\.\d+)?$/.test(value) || /^(true|false|null|yes|no|on|off)$/i.test(value)) return false;
  if (/^(\/|[A-Za-z]:[\\/])[^\s:@]*$/.test(value)) return false;
  return true;
}
