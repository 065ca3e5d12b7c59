/**
 * The one redactor (SPEC section 8): values given to the server through `--env` or the config's
 * `env` never appear in a report or a transcript. Each occurrence becomes `[redacted:KEY]`.
 * Left alone, because they are not secrets and hiding them would hide the evidence: values shorter
 * than {@link MIN_SECRET_LENGTH} characters (`1`, `on`), numbers, and absolute filesystem paths
 * (`MEMORY_FILE_PATH=/tmp/x/memory.jsonl`), unless the variable's name says it holds a credential.
 */

/** Shortest value treated as a secret. */
export const MIN_SECRET_LENGTH = 4;

export class Redactor {
  private readonly pairs: { plain: string; mark: string }[];

  /** `secrets`: name → value, e.g. the merged `env` a server was started with by the user. */
  constructor(secrets: Record<string, string> = {}) {
    this.pairs = Object.entries(secrets)
      .filter(([k, v]) => isSecret(k, v))
      // Longest first, so a secret that contains another is replaced whole.
      .sort((a, b) => b[1].length - a[1].length)
      .map(([k, v]) => ({ plain: v, mark: `[redacted:${k}]` }));
  }

  /** True when there is nothing to redact. */
  get empty(): boolean {
    return this.pairs.length === 0;
  }

  /** Redacts plain text. */
  text(s: string): string {
    let out = s;
    for (const p of this.pairs) out = out.split(p.plain).join(p.mark);
    return out;
  }

  /**
   * A deep copy of `value` with every secret redacted in every string (keys included). Strings
   * only: replacing inside JSON text could hit JSON's own tokens (`true`, a number) and break it.
   */
  value<T>(value: T): T {
    if (this.empty) return value;
    return this.walk(value, 0) as T;
  }

  private walk(v: unknown, depth: number): unknown {
    if (typeof v === 'string') return this.text(v);
    if (typeof v !== 'object' || v === null || depth > 200) return v;
    if (Array.isArray(v)) return v.map((x) => this.walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[this.text(k)] = this.walk(x, depth + 1);
    return out;
  }
}

/** Names that say a variable holds a credential. */
const CREDENTIAL_NAME = /key|token|secret|passw|pwd|auth|credential|cookie|session|private|signature/i;

/** Whether the value of variable `name` is to be redacted (see {@link Redactor}). */
export function isSecret(name: string, value: string): boolean {
  if (value.length < MIN_SECRET_LENGTH) return false;
  if (CREDENTIAL_NAME.test(name)) return true;
  if (/^-?\d+(\.\d+)?$/.test(value) || /^(true|false|null|yes|no|on|off)$/i.test(value)) return false;
  if (/^(\/|[A-Za-z]:[\\/])[^\s:@]*$/.test(value)) return false;
  return true;
}
