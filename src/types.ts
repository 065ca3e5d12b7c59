/**
 * The shapes every stage shares (SPEC section 1 vocabulary). Data flows one way:
 * target → session → probes (recorded {@link ProbeCall}s) → checks ({@link CheckResult}) → scoring → report.
 */
import type { Exchange } from './target/wire.js';

export type { Exchange, Reply, WireError } from './target/wire.js';

/** SPEC section 4: what a reply to a probe means. Exactly one per reply. */
export type ReplyClass =
  | 'rejected'
  | 'rejected-unnamed'
  | 'text-refusal'
  | 'lenient-downstream'
  | 'internal-error'
  | 'accepted'
  | 'hang'
  | 'exited'
  | 'protocol-error';

/** One leaked internal found by the leak scan (SPEC section 4). */
export interface Leak {
  /** Which pattern matched: `python-traceback`, `python-frame`, `js-frame`, `package-path`, `windows-path`, `home-path-line`. */
  pattern: LeakPattern;
  /** The matched line, trimmed to 200 characters. */
  line: string;
}

export type LeakPattern =
  | 'python-traceback'
  | 'python-frame'
  | 'js-frame'
  | 'package-path'
  | 'windows-path'
  | 'home-path-line';

/** The classifier's answer for one reply. */
export interface Classification {
  class: ReplyClass;
  /** Declared parameter names (or `(root)`) the reply's text names. */
  named: string[];
  leaks: Leak[];
  /** The text the class was decided from (error message, result text), trimmed to 500 characters. */
  text: string;
  /** Advisory notes, e.g. the SEP-1303 error-channel note. */
  notes: string[];
}

/** Verdict of one check on one target (SPEC section 1). */
export type Verdict = 'pass' | 'partial' | 'fail' | 'n/a';

/** SPEC section 1 weights. */
export type Weight = 'scored' | 'capping' | 'advisory';

/** Severity a check's failure carries in exit codes and SARIF (SPEC section 7 `checks.<id>.severity`). */
export type Severity = 'error' | 'warning' | 'note';

export type PackId = 'core' | 'effects' | 'limits' | 'design' | 'secrets';

/** A JSON-Schema-described tool as listed by the server; anything may be missing or wrong. */
export interface ListedTool {
  /** Position in the tools/list result (0-based, across pages). */
  index: number;
  name: string;
  /** The raw tool object as received. */
  raw: unknown;
  inputSchema: unknown;
  annotations: Record<string, unknown> | undefined;
}

/**
 * One call a probe made, with its meaning. A finding's evidence points at calls by `seq`.
 * `tool` is absent for calls that are not `tools/call` (liveness `tools/list`, unknown methods).
 */
export interface ProbeCall {
  /** Order of the call in the session, from 1. */
  seq: number;
  /** The probe that made it (`wrong-types`, `nulls`, `liveness`, `unknown-method` …). */
  probe: string;
  tool?: string;
  /** The `arguments` member as sent (absent when the probe omitted it). */
  arguments?: unknown;
  /** For schema-invalid probes: what Ajv said is wrong with the arguments (proof of invalidity). */
  invalidBecause?: string[];
  /** For invalid-argument probes: the property the probe broke, or `(root)`. */
  target?: string;
  exchange: Exchange;
  classification?: Classification;
  /**
   * Side effects the sandbox saw for this call, in the order seen (see `Effect` in
   * src/target/sandbox.ts): `lateMs` is set on those that arrived after the call was settled and
   * before the next call of a tool (ms from the reply).
   */
  effects?: { kind: 'shim' | 'network' | 'file'; detail: string; summary?: string; lateMs?: number }[];
  /**
   * Limits probes: the value put in the probed property, as written on the wire (`false`, `-1`,
   * `NaN`, `1,"limit":5` for a duplicate member).
   */
  value?: string;
  /** The `arguments` member exactly as written, when it was raw JSON text (`{"limit":NaN}`). */
  rawArguments?: string;
  /** Secrets the reply carried (src/secrets.ts `scanSecrets`): canaries, the user's secrets, credential patterns. */
  secrets?: { kind: 'env-canary' | 'argument-canary' | 'user-secret' | 'pattern'; name: string; where: 'result' | 'error' }[];
  /** Limits probes: items an accepted reply returned (see `countItems` in src/limits.ts). */
  items?: number;
  /** Which server instance the call went to, from 0 (`--instances`; absent when there was one). */
  instance?: number;
  /**
   * The phase of the audit that made the call: a gatherer's progress phase (`robust-input`,
   * `probes` for the user's probes entries, `strict-arguments`, `effects`, `protocol-errors`,
   * `limits`, `concurrency`, `oversized-input`, `two-step-writes`, `idempotency-key`) or
   * `tools/list` before any.
   */
  gatherer?: string;
  /** A user-probe call: the index of the config's `probes:` entry that made it. */
  probeIndex?: number;
}

/** A piece of evidence attached to a finding. */
export interface Evidence {
  /** `seq` of the calls that support the finding. */
  calls?: number[];
  /** JSON pointer-like paths into a tool's inputSchema / outputSchema. */
  schemaPaths?: string[];
  /** Quoted lines (leaks, stdout noise, error texts). */
  quotes?: string[];
}

/** One thing a check found, keyed by a message id from the check's `meta.messages`. */
export interface Finding {
  checkId: string;
  messageId: string;
  /** The message with its data filled in. */
  message: string;
  data: Record<string, string | number>;
  /** `fail` findings decide a fail verdict, `partial` ones a partial; `info` ones inform. */
  level: 'fail' | 'partial' | 'info';
  tool?: string;
  evidence: Evidence;
  /** A `sealmark call …` line that replays the call behind the finding, when there is one. */
  replay?: string;
  /** The exact request line sent, when the finding comes from a call. */
  request?: string;
  /**
   * Set when an SDK causes the finding (its known reply to the probe, src/target/sdk.ts
   * SDK_BEHAVIOURS; SPEC section 5): the SDK, its version, and the dependency of the server's own
   * package.json that brings it in (absent for a binary). SARIF places such a finding there.
   */
  sdkCause?: { sdk: string; version: string; dependency?: string };
}

/** A check's judgement on one target. */
export interface CheckResult {
  id: string;
  verdict: Verdict;
  findings: Finding[];
  /** Why the verdict is n/a, or what was not reached. */
  notes: string[];
  /** Tools that need a `probes:` entry to be exercised. */
  needsProbe?: string[];
  /** Which tools the verdict rests on, and which it does not (SPEC section 5, coverage is honest). */
  coverage?: Coverage;
}

/**
 * What a check's verdict covers (SPEC section 5, "Coverage is honest"): the tools it judged and
 * every listed tool it did not, with why. A tool not judged never counts as passing (JUnit
 * `<skipped>`). `judged` + `notJudged` together are the tools the check could have looked at.
 */
export interface Coverage {
  /** Names of the tools the verdict judged, in listing order. */
  judged: string[];
  /** Tools not judged, in listing order, each with why (beyond max_tools, skipped, not reached …). */
  notJudged: { tool: string; why: string }[];
}
