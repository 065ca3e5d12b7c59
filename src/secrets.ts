/**
 * Secrets, one place (SPEC section 5 `secret-echo`, section 8): which names hold credentials, the
 * canary secrets sealmark plants in a server's environment and in credential-like arguments, the
 * credential patterns a reply must never carry, and the one scanner that looks for all of them.
 * The redactor (src/redact.ts) hides the same values and patterns in every report and transcript.
 */
import { randomBytes } from 'node:crypto';
import { textLeaves } from './classify.js';
import { wordsOf } from './words.js';

/** Credential-like names (SPEC section 5), matched on the words of a name. */
export const CREDENTIAL_WORDS: readonly (readonly string[])[] = [
  ['api', 'key'], ['apikey'], ['token'], ['password'], ['passwd'], ['secret'], ['authorization'],
  ['auth', 'token'], ['access', 'key'], ['private', 'key'], ['client', 'secret'],
];

/** True when the name reads as a credential (`api_key`, `apiKey`, `access_token`, `client_secret` …). */
export function credentialLike(name: string): boolean {
  const words = wordsOf(name);
  return CREDENTIAL_WORDS.some((seq) => words.some((_, i) => seq.every((w, j) => words[i + j] === w)));
}

/**
 * The canary secret sealmark puts in every credential-like string argument it fills (one per
 * sealmark process, random, so a server cannot know it in advance). Named by
 * {@link ARGUMENT_CANARY_NAME} in redacted output.
 */
export const ARGUMENT_CANARY = `smk_arg_${randomBytes(12).toString('hex')}`;
export const ARGUMENT_CANARY_NAME = 'sealmark-argument-canary';

/** Names of the environment canaries a server is started with (values are random per run). */
export const ENV_CANARY_NAMES: readonly string[] = ['SEALMARK_CANARY_TOKEN', 'SEALMARK_CANARY_API_KEY'];

/** Fresh environment canaries: {@link ENV_CANARY_NAMES} → a random value each (`smk_env_` + 24 hex). */
export function envCanaries(): Record<string, string> {
  return Object.fromEntries(ENV_CANARY_NAMES.map((n) => [n, `smk_env_${randomBytes(12).toString('hex')}`]));
}

/** One credential pattern: its id, how docs show it, and the pattern. */
export interface CredentialPattern {
  readonly id: string;
  readonly what: string;
  readonly pattern: RegExp;
}

/**
 * Credential patterns no reply may carry (SPEC section 5: cloud keys, token prefixes, private
 * keys, JWTs). Each needs enough fixed prefix and length that ordinary text does not match.
 */
export const CREDENTIAL_PATTERNS: readonly CredentialPattern[] = [
  { id: 'aws-access-key', what: 'an AWS access key id (AKIA… / ASIA…)', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { id: 'github-token', what: 'a GitHub token (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b/g },
  { id: 'slack-token', what: 'a Slack token (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-)', pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g },
  { id: 'openai-key', what: 'an OpenAI or Anthropic style API key (sk-…, sk-proj-…, sk-ant-…)', pattern: /\bsk-(?:proj-|ant-[a-z0-9]+-)?[A-Za-z0-9_-]{20,}\b/g },
  { id: 'stripe-key', what: 'a Stripe live key (sk_live_, rk_live_)', pattern: /\b[rs]k_live_[A-Za-z0-9]{16,}\b/g },
  { id: 'google-api-key', what: 'a Google API key (AIza…)', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { id: 'private-key', what: 'a PEM private key block', pattern: /-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----/g },
  { id: 'jwt', what: 'a JSON Web Token (three base64url parts, header and payload starting eyJ)', pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b/g },
];

/** A secret found in a reply. `name`: the canary's or variable's name, or the pattern id. */
export interface SecretHit {
  kind: 'env-canary' | 'argument-canary' | 'user-secret' | 'pattern';
  name: string;
  /** Where in the reply: `result` or `error`. */
  where: 'result' | 'error';
}

/** The secrets one run looks for. */
export interface SecretSet {
  /** Environment canaries: name → value. */
  env: Record<string, string>;
  /** Values the user handed the server (`--env`, config `env`) that look like secrets: name → value. */
  user: Record<string, string>;
}

/** Words that make a variable name a credential wherever they stand (`DB_PASSWORD`, `SECRET_ENV`). */
const CREDENTIAL_ANYWHERE = new Set(['token', 'secret', 'password', 'passwd', 'pwd', 'passphrase', 'apikey', 'credential', 'credentials', 'cookie', 'signature', 'authorization', 'bearer']);
/** Words that make one only as its last word (`API_KEY`, `ACCESS_KEY`, `GITHUB_PAT`, but not `KEYSPACE`, `AUTH_MODE`). */
const CREDENTIAL_LAST = new Set(['key', 'pat', 'pass', 'pin', 'auth']);

/**
 * True when a variable's name says it holds a credential (`API_TOKEN`, `db_password`, `AWS_SECRET_ACCESS_KEY`),
 * read as words, so that `AUTH_MODE` or `KEYSPACE` are not.
 */
export function namedLikeCredential(name: string): boolean {
  const words = wordsOf(name);
  return words.some((w) => CREDENTIAL_ANYWHERE.has(w)) || CREDENTIAL_LAST.has(words[words.length - 1] ?? '');
}

/**
 * What one run looks for: the environment canaries it started the server with, and of what the
 * user handed the server (`--env`, config `env`) the values of credential-named variables that
 * are long enough (8 characters) not to turn up by chance.
 */
export function secretSet(canaries: Record<string, string>, given: Record<string, string>): SecretSet {
  return { env: canaries, user: Object.fromEntries(Object.entries(given).filter(([k, v]) => namedLikeCredential(k) && v.length >= 8)) };
}

/** Most characters of one reply's strings that are scanned; replies are at most 16 MiB lines anyway. */
const MAX_SCAN = 16 * 1024 * 1024;

/**
 * Every secret in a reply (`raw`: the JSON-RPC response as received): the canaries, the user's
 * secrets and the credential patterns, each once, with where it was (a result or an error). Each
 * is looked for in the reply's keys, strings and numbers (at most {@link MAX_SCAN} characters of
 * them), one by one: a secret is one value, never split across two.
 */
export function scanSecrets(raw: unknown, secrets: SecretSet): SecretHit[] {
  if (typeof raw !== 'object' || raw === null) return [];
  const r = raw as { result?: unknown; error?: unknown };
  const hits: SecretHit[] = [];
  for (const where of ['result', 'error'] as const) {
    if (!(where in r)) continue;
    // Keys and numbers too (a secret as a key, a PIN as a number), as deep as a reply can nest.
    const texts = textLeaves(r[where], { keys: true, scalars: true, maxChars: MAX_SCAN, maxItems: Infinity, maxDepth: Infinity });
    const has = (value: string) => texts.some((t) => t.includes(value));
    for (const [name, value] of Object.entries(secrets.env)) if (has(value)) hits.push({ kind: 'env-canary', name, where });
    if (has(ARGUMENT_CANARY)) hits.push({ kind: 'argument-canary', name: ARGUMENT_CANARY_NAME, where });
    for (const [name, value] of Object.entries(secrets.user)) if (has(value)) hits.push({ kind: 'user-secret', name, where });
    for (const p of CREDENTIAL_PATTERNS) {
      const found = texts.some((t) => {
        p.pattern.lastIndex = 0;
        return p.pattern.test(t);
      });
      if (found) hits.push({ kind: 'pattern', name: p.id, where });
    }
  }
  return hits;
}
