/**
 * The shape of a check (STYLE: an ESLint rule is data plus one function). A check's `meta` feeds
 * `sealmark explain`, `docs/checks/<id>.md`, the config schema and (later) SARIF rule help; its
 * `judge` reads what the probes recorded and never sends a request.
 */
import type { HandshakeInfo, OpenFailure } from '../target/session.js';
import type { ExitInfo, NoiseLine } from '../target/stdio-transport.js';
import type { Isolation } from '../target/sandbox.js';
import type { Exchange } from '../target/wire.js';
import type { CheckResult, ListedTool, PackId, ProbeCall, Severity, Weight } from '../types.js';
import type { ResolvedConfig } from '../config/schema.js';
import type { ProtocolRun } from '../probes/protocol-errors.js';
import type { RobustRun } from '../probes/robust-input.js';
import type { EffectsRun } from '../probes/effects.js';
import type { LimitsRun } from '../probes/limits.js';
import type { OversizedRun } from '../probes/oversized.js';
import type { ConcurrencyRun } from '../probes/concurrency.js';
import type { DesignRun } from '../probes/design.js';
import type { StrictRun } from '../probes/strict-arguments.js';
import type { ExitCause, Restart } from '../probes/recorder.js';
import type { ServerSdk } from '../target/sdk.js';
import type { SecretHit } from '../secrets.js';

/** A config key a check reads (SPEC section 7). */
export interface CheckConfigKey {
  /** Full dotted key, e.g. `checks.robust-input.max_tools` or `timeout_probe_sec`. */
  key: string;
  /** Default value (`null` = derived; `meaning` says from what). */
  default: number | string | boolean | null;
  /** `locked`: a changed value makes the run non-standard (SPEC section 1). `free`: it does not. */
  standard: 'locked' | 'free';
  meaning: string;
  /**
   * For `checks.<id>.<key>` keys: what a value must be, as plain data (the config module builds
   * the zod schema, so reading a check's meta never loads zod).
   */
  value?: { type: 'integer' | 'number'; min: number; max: number; nullable?: boolean };
}

/** One named way a check exercises the server (SPEC section 1, probe). */
export interface ProbeMeta {
  id: string;
  description: string;
  /** Canonical probes of the check; the others are extra coverage. */
  core: boolean;
  /** A part is a way of reading replies rather than a call of its own. */
  part?: boolean;
}

/** The documentation of a check, as data (rendered by `explain` and docs/checks). */
export interface CheckDocs {
  /** One paragraph: what the check asks and why it matters. */
  summary: string;
  /** How the verdict is established, step by step. */
  how: string[];
  fix: string;
  falsePositives: string[];
  falseNegatives: string[];
  limits: string[];
}

export interface CheckMeta {
  /** Stable kebab-case id, exactly as SPEC section 5 names it. */
  id: string;
  title: string;
  pack: PackId;
  weight: Weight;
  /** `server`: one verdict for the server; findings may name tools. */
  scope: 'server' | 'tool';
  /**
   * True when the check has a static half that reads only the tools/list result: `sealmark lint`
   * runs it on a saved listing (issue 7); the others are n/a there.
   */
  lint?: true;
  /** Where the evidence comes from. */
  decidedBy: 'static' | 'protocol-response' | 'sidechannel';
  /** Methodology version the check first appeared in. */
  since: string;
  /** Default severity of a failure (SPEC section 7 `checks.<id>.severity`). */
  severity: Severity;
  config: CheckConfigKey[];
  probes: ProbeMeta[];
  /** Verdict table: when each verdict is given. */
  verdicts: { verdict: 'pass' | 'partial' | 'fail' | 'n/a'; when: string }[];
  /** Messages keyed by message id; `{name}` placeholders are filled from a finding's data. */
  messages: Record<string, string>;
  docs: CheckDocs;
  /** Gatherers (in src/probes) whose records this check reads. */
  requires: GathererId[];
}

export type GathererId = 'robust-input' | 'strict-arguments' | 'protocol-errors' | 'effects' | 'limits' | 'oversized' | 'concurrency' | 'design';

/** What a run recorded: everything a check may read. */
export interface Artifacts {
  handshake?: HandshakeInfo;
  openFailure?: OpenFailure;
  /** Raw tools/list exchanges (every page). */
  listExchanges: Exchange[];
  listProblem?: string;
  /** The cursor chain of tools/list never ended; the tools read are kept. */
  listUnending?: string;
  tools: ListedTool[];
  /** stdout lines that were not JSON-RPC, over the whole session. */
  noise: { count: number; bytes: number; lines: NoiseLine[] };
  stderrTail: string;
  exit: ExitInfo | null;
  /** Every call made by any gatherer, in order. */
  calls: ProbeCall[];
  robust?: RobustRun;
  strict?: StrictRun;
  protocol?: ProtocolRun;
  effects?: EffectsRun;
  limits?: LimitsRun;
  oversized?: OversizedRun;
  concurrency?: ConcurrencyRun;
  design?: DesignRun;
  /** Secrets in the reply to `initialize` (or `server/discover`): its instructions, serverInfo … */
  handshakeSecrets?: SecretHit[];
  /** The SDKs the server is built on, read from its package or binary (src/target/sdk.ts); absent for a URL. */
  sdk?: ServerSdk[];
  /** Each time the server exited and was started again (SPEC section 3 step 3), in order. */
  restarts?: Restart[];
  /** Each exit of the server and the call it is blamed on (src/probes/recorder.ts). */
  exits?: ExitCause[];
  /** Responses (after the handshake) whose id no request was waiting for. */
  strays: unknown[];
  config: ResolvedConfig;
  /** Set when no server was called (`sealmark lint`): why, in words. */
  offline?: string;
  /** True for a server reached by URL (no process, no stdout, no sandbox). */
  remote?: boolean;
  /** How the server was isolated (absent without a sandbox); the effects checks say what it could not see. */
  isolation?: Isolation;
}

/**
 * Why a gatherer that runs after robust-input has no record: probing stopped after three hangs
 * (robust-input, or limits with the server gone), or the server was gone.
 */
export function whyNotRun(a: Artifacts): string {
  if (a.offline) return a.offline;
  if (a.robust?.stopped?.reason === 'three-hangs') return 'robust-input stopped after three hangs';
  if (a.limits?.stopped?.reason === 'server-gone') return 'the server was gone after the limit values';
  return 'the server was gone';
}

/** Passed to `judge` besides the artifacts. */
export interface JudgeContext {
  /** Builds the `sealmark call` replay line for a tools/call with these arguments. */
  replay: (tool: string, args: unknown, rawArgs?: string) => string;
  /** Builds the `sealmark call --raw-params` line for a request (tools/call, or `method`) whose params were `rawParams` verbatim. */
  replayRawParams?: (rawParams: string, method?: string) => string;
}

export interface Check {
  meta: CheckMeta;
  /** Pure: artifacts in, verdict and findings out. Throws only on a bug (caught per check). */
  judge(artifacts: Artifacts, ctx: JudgeContext): CheckResult;
}
