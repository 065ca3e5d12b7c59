/**
 * Builds the versioned report object (SPEC section 8). Reporters render it and know nothing of how
 * it was produced; `sealmark report` (later) re-renders a saved one. The JSON schema is documented
 * in docs/report-schema.md; bump {@link REPORT_SCHEMA_VERSION} on any incompatible change.
 */
import { ownCopy } from '../classify.js';
import { requiredOf } from '../schema.js';
import { checkById } from '../checks/index.js';
import type { Artifacts } from '../checks/check.js';
import type { FetchedPackage } from '../target/fetch.js';
import type { Isolation } from '../target/sandbox.js';
import type { ResolvedConfig } from '../config/schema.js';
import { nonStandardKeysOf } from '../config/defaults.js';
import { packs } from '../packs.js';
import { grade, type CoverageLevel, type Grade } from '../scoring.js';
import type { CheckResult, Finding, PackId, ProbeCall, Severity, Weight } from '../types.js';
import { METHODOLOGY_VERSION, VERSION } from '../version.js';
import { fingerprintOf } from './fingerprint.js';
import type { TargetSource } from './source.js';
import { applySuppressions, type Suppressions } from './suppress.js';

/** Version of the report's JSON shape. */
export const REPORT_SCHEMA_VERSION = 1;

/**
 * A finding as reported: `fingerprint` is its identity across runs (see fingerprint.ts);
 * `baselineState` is set when the run was compared with a `--baseline` report.
 */
export interface ReportFinding extends Finding {
  fingerprint: string;
  baselineState?: 'new' | 'unchanged';
  /**
   * Set when a `suppress:` entry of the config matched the finding (SPEC section 7): it is kept,
   * but counts toward neither its check's verdict nor the grade. See suppress.ts.
   */
  suppressed?: { reason: string; until?: string };
}

/** A check's result with the data a reader needs beside it. */
export interface ReportCheck extends Omit<CheckResult, 'findings'> {
  findings: ReportFinding[];
  title: string;
  pack: PackId;
  weight: Weight;
  severity: Severity;
}

/** A finding named in a baseline comparison (the finding itself is in `checks[]`, or was fixed). */
export interface FindingRef {
  fingerprint: string;
  checkId: string;
  messageId: string;
  level: Finding['level'];
  tool?: string;
  message: string;
}

/**
 * The comparison with a `--baseline` report: `new` failing/partial findings that the baseline did
 * not have, `fixed` ones it had and this run has not, and how many are `unchanged`.
 */
export interface BaselineComparison {
  /** The baseline file as given on the command line. */
  file: string;
  /** `generatedAt` of the baseline run. */
  generatedAt: string;
  new: FindingRef[];
  fixed: FindingRef[];
  unchanged: number;
}

/** One call as kept in the report: what was sent, what came back, what it meant. */
export interface ReportCall {
  seq: number;
  probe: string;
  tool?: string;
  method: string;
  /** The exact line written to the server. */
  request: string;
  /**
   * `response`, `malformed`, `hang` or `exited`. `raw`: the reply as parsed, when there was one and
   * its JSON text fits in 4 KiB; otherwise `rawText`, the first 4,096 characters of that text.
   * `problem`: what was wrong with a malformed reply. `waitedMs`: the hang limit a hang was waited
   * out for (ms); `runDelayMs`: the wall time beyond it that the server's threads spent waiting
   * for a CPU, not counted against the server (absent when none).
   */
  reply: { kind: string; raw?: unknown; rawText?: string; problem?: string; waitedMs?: number; runDelayMs?: number };
  class?: string;
  leaks?: { pattern: string; line: string }[];
  invalidBecause?: string[];
  /**
   * Side effects the sandbox saw for the call (effects-pack and sandboxed limits calls); `summary`
   * for a write seen through the overlay; `lateMs` (ms after the reply) for one that arrived after
   * the call was settled, before the next call of a tool.
   */
  effects?: { kind: string; detail: string; summary?: string; lateMs?: number }[];
  /** The property the probe filled or broke. */
  target?: string;
  /** Limits probes: the value sent, as written on the wire. */
  value?: string;
  /** The `arguments` member as written, when it was raw JSON text. */
  rawArguments?: string;
  /** Limits probes: items an accepted reply returned. */
  items?: number;
  /** The server instance the call went to, from 0 (`--instances`; absent when the audit ran one). */
  instance?: number;
  /** Secrets the reply carried: `{ kind, name, where }` (the values themselves are never reported). */
  secrets?: { kind: string; name: string; where: string }[];
  durationMs: number;
}

export interface Report {
  schemaVersion: number;
  methodologyVersion: string;
  cliVersion: string;
  generatedAt: string;
  /** ms the run took. */
  durationMs: number;
  /**
   * What was audited. `cwd`, `configFile` and `entry` (absolute paths) say where it came from on
   * disk, for SARIF locations; see source.ts.
   */
  target: ReportTarget & Partial<TargetSource>;
  /** `not-audited`: the target could not be started, initialized or listed (exit code 3). */
  status: 'audited' | 'not-audited';
  notAudited?: { reason: string; message: string; notChecked: string[] };
  protocol: { version: string | null; era: string | null; server: { name: string | null; version: string | null } } | null;
  /**
   * How the server was isolated (SPEC section 3). `kind`: `sandbox` (scratch HOME and working
   * directory, logging shims, and `network: namespace` when loopback-only isolation worked) or
   * `none` (--no-sandbox). `filesystem`: `overlay` (copy-on-write over `protected`, real paths),
   * `scratch` (only the scratch folders watched) or `none`; `unprotected`: folders the server could
   * write that no overlay covered, with why. `note`: the same in words, with what was not isolated.
   */
  sandbox: {
    kind: 'sandbox' | 'none';
    network: 'namespace' | 'host';
    filesystem: 'overlay' | 'scratch' | 'none';
    protected: string[];
    unprotected: { path: string; why: string }[];
    note: string;
  };
  /** false when a locked threshold was changed (SPEC section 1); the keys are listed. */
  standard: boolean;
  nonStandardKeys: string[];
  coverage: { level: CoverageLevel; tools: { name: string; level: CoverageLevel }[] };
  grade: Grade;
  checks: ReportCheck[];
  tools: { name: string; index: number }[];
  calls: ReportCall[];
  /** The last lines the server wrote to stderr (for a crash). */
  stderrTail: string;
  /**
   * Each time the server exited during the audit and was started again (SPEC section 3 step 3):
   * after which call (`afterSeq`), whether the new start worked, and why not. Absent when it never
   * exited.
   */
  restarts?: { afterSeq: number; ok: boolean; failure?: string; why?: string }[];
  /** Present when the run was compared with a `--baseline` report. */
  baseline?: BaselineComparison;
  /** The config's `suppress:` entries: whether they were applied (not with --no-suppress) and what each did. */
  suppressions: Suppressions;
}

const MAX_RAW_CHARS = 4096;

/**
 * What was audited: `stdio` (a command), `http` (`url`, Streamable HTTP or HTTP+SSE) or
 * `tools-file` (`file`, a saved tools/list read by `sealmark lint`). `command` is how the target is
 * written in replay lines: the stdio command, or empty for the other kinds.
 */
export interface ReportTarget {
  kind: 'stdio' | 'http' | 'tools-file';
  command: string[];
  url?: string;
  file?: string;
  /**
   * A launched package (SPEC section 3 step 0): what the fetch phase resolved and installed.
   * `version` is the exact version started (null when a fetch failed before resolving it);
   * `launcher` is how it was asked for (`npx`, `uvx`, `--package` …); `reused` says an earlier
   * audit's install was used.
   */
  package?: FetchedPackage;
  /**
   * The MCP SDKs a stdio server is built on, outermost first (`fastmcp` before the
   * `@modelcontextprotocol/sdk` under it), read before it started from its package's dependencies
   * (`from: package`) or from the module and crate names in its binary (`from: binary`). Findings an
   * SDK causes name it (SPEC section 5).
   */
  sdk?: { name: string; version: string; from: 'package' | 'binary' }[];
  /**
   * Where the target came from when it was not given directly: `--server-json` (the file, the
   * entry as `packages[N]` or `remotes[N]`, and what reading it noted: an optional input left out,
   * an unknown schema date).
   */
  origin?: { kind: 'server-json'; file: string; entry: string; name: string; version: string | null; notes: string[] };
}

/** Reasons that come before the server is started: no sandbox was made. */
const NOT_STARTED = new Set(['fetch-failed', 'not-runnable', 'needs-config']);

/** The sandbox fields of a report where no sandbox was made (`protected` and `unprotected` are given empty). */
const NO_SANDBOX = { kind: 'none', network: 'host', filesystem: 'none' } as const;

/** The sandbox line of a report (SPEC section 3 asks for a clear note when isolation is missing). */
function sandboxOf(iso: Isolation | undefined, kind: ReportTarget['kind']): Report['sandbox'] {
  const none = NO_SANDBOX;
  if (kind === 'tools-file') return { ...none, protected: [], unprotected: [], note: 'no server was run: sealmark lint read a saved tools/list' };
  if (kind === 'http') return { ...none, protected: [], unprotected: [], note: 'a server reached by URL: sealmark cannot isolate it or see its side effects' };
  if (!iso) return { ...none, protected: [], unprotected: [], note: 'no sandbox (--no-sandbox): the server ran in the current directory with your HOME and network; only its environment was scrubbed. Whatever it writes of its own accord on any call (a log of each call, its config) is real and was not watched' };
  const fs =
    iso.filesystem === 'overlay'
      ? `scratch HOME and working directory; copy-on-write filesystem over ${iso.protected.join(', ')} (the server read your files, and its writes went to the overlay)`
      : 'scratch HOME and working directory';
  // Folders left open for the same reason are one clause (without the overlay, every one is).
  const byWhy = new Map<string, string[]>();
  for (const u of iso.unprotected) byWhy.set(u.why, [...(byWhy.get(u.why) ?? []), u.path]);
  const open = [...byWhy].map(([why, paths]) => `not protected: ${paths.join(', ')} (${why})`);
  const parts = [fs, ...open, `network ${iso.network === 'namespace' ? 'loopback only' : 'of the host'}`, ...iso.notes];
  return { kind: 'sandbox', network: iso.network, filesystem: iso.filesystem, protected: iso.protected, unprotected: iso.unprotected, note: parts.join('; ') };
}

/** Input of {@link buildReport}. `startedAt` is ms since the epoch. */
export interface BuildInput {
  /** What was audited; a bare array is a stdio command. */
  target: string[] | ReportTarget;
  /** How the target was isolated; absent with --no-sandbox. */
  isolation?: Isolation;
  config: ResolvedConfig;
  artifacts: Artifacts;
  results: CheckResult[];
  startedAt: number;
  /** Where the target came from on disk (absent for a target that never started). */
  source?: TargetSource;
}

/** Assembles the report from the run's artifacts and the checks' results. */
export function buildReport({ target, isolation, config, artifacts: a, results, startedAt, source }: BuildInput): Report {
  const calls = a.calls.map(toReportCall);
  const tools = a.tools.map((t) => ({ name: t.name, index: t.index }));
  const judged: ReportCheck[] = results.map((r) => {
    const m = checkById(r.id)!.meta;
    const severity = (config.checks[r.id]?.severity as Severity | undefined) ?? m.severity;
    const findings = r.findings.map((f) => ({ ...f, fingerprint: fingerprintOf(f, { tools }) }));
    return { ...r, findings, title: m.title, pack: m.pack, weight: m.weight, severity };
  });
  // Suppressions change verdicts here, after the checks and before scoring (SPEC section 7).
  const { checks, suppressions } = applySuppressions(judged, config.suppress ?? [], { apply: config.ignoreSuppressions !== true, now: new Date() });
  const g = grade(
    checks.map((c) => ({ id: c.id, pack: c.pack, weight: c.weight, verdict: c.verdict })),
    packs.map((p) => p.id),
  );
  const failure = a.openFailure;
  const noTools = !failure && (a.tools.length === 0 || !!a.listProblem);
  const nonStandard = nonStandardKeysOf(config);
  const h = a.handshake;
  return {
    schemaVersion: REPORT_SCHEMA_VERSION,
    methodologyVersion: METHODOLOGY_VERSION,
    cliVersion: VERSION,
    generatedAt: new Date().toISOString(),
    durationMs: Date.now() - startedAt,
    target: { ...(Array.isArray(target) ? { kind: 'stdio' as const, command: target } : target), ...source },
    status: failure || noTools ? 'not-audited' : 'audited',
    notAudited: failure
      ? { reason: failure.reason, message: failure.message, notChecked: checks.filter((c) => c.id !== 'handshake').map((c) => c.id) }
      : noTools
        ? { reason: a.listProblem ? 'tools-list-failed' : 'empty-tools', message: a.listProblem ?? 'tools/list returned no tools', notChecked: checks.filter((c) => c.id !== 'handshake').map((c) => c.id) }
        : undefined,
    protocol: h
      ? {
          version: h.protocolVersion ?? null,
          era: h.era ?? null,
          server: { name: strOrNull(h.serverInfo?.name), version: strOrNull(h.serverInfo?.version) },
        }
      : null,
    sandbox:
      failure?.reason === 'invalid-entry'
        ? { ...NO_SANDBOX, protected: [], unprotected: [], note: 'not started: the client configuration entry cannot be used as it is' }
        : failure && NOT_STARTED.has(failure.reason)
          ? { ...NO_SANDBOX, protected: [], unprotected: [], note: 'not started: the server was never run' }
        : sandboxOf(isolation, Array.isArray(target) ? 'stdio' : target.kind),
    standard: nonStandard.length === 0,
    nonStandardKeys: nonStandard,
    coverage: coverageOf(a),
    ...(a.restarts && a.restarts.length > 0 ? { restarts: a.restarts.map((r) => ({ ...r })) } : {}),
    grade: g,
    checks,
    tools,
    calls,
    stderrTail: a.stderrTail.slice(-4000),
    suppressions,
  };
}

function strOrNull(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

/** Probes whose calls are valid by construction (a `probes:` entry, or arguments built to the schema). */
const VALID_PROBES = new Set(['read-only-no-args', 'user-probe', 'empty-arguments', 'valid-arguments']);

/**
 * Coverage (SPEC section 1): a tool is `exercised` when a valid call was answered without error: a
 * `probes:` entry, robust-input's read-only-no-args, strict-arguments' valid controls, or the
 * effects pack's `{}` call to a tool whose schema requires nothing (mcp-time's current_time answered
 * it, and was graded hygiene-only); the run is `exercised` when any tool is.
 */
function coverageOf(a: Artifacts): Report['coverage'] {
  const requiresNothing = new Set(a.tools.filter((t) => requiredOf(t.inputSchema).length === 0).map((t) => t.name));
  const exercised = new Set(
    a.calls
      .filter((c) => (VALID_PROBES.has(c.probe) || (c.probe === 'default-call' && requiresNothing.has(c.tool!))) && c.classification?.class === 'accepted')
      .map((c) => c.tool!),
  );
  const tools = a.tools.map((t) => ({ name: t.name, level: (exercised.has(t.name) ? 'exercised' : 'hygiene-only') as CoverageLevel }));
  return { level: exercised.size > 0 ? 'exercised' : 'hygiene-only', tools };
}

/**
 * The first `max` characters of `JSON.stringify(value)` for a value parsed from JSON (plain objects,
 * arrays, strings, numbers, booleans, null), and whether the whole text is longer (`cut`). Only
 * that much is written: a 7 MB listing is not serialised whole for its first 4 KiB. The text is an
 * own string, never a slice that keeps a larger one alive.
 */
export function jsonHead(value: unknown, max: number): { text: string; cut: boolean } {
  let out = '';
  const put = (piece: string): boolean => {
    out += piece;
    return out.length > max;
  };
  const write = (v: unknown): boolean => {
    if (Array.isArray(v)) {
      if (put('[')) return true;
      for (let i = 0; i < v.length; i++) {
        if (i > 0 && put(',')) return true;
        if (write(v[i] === undefined || typeof v[i] === 'function' ? null : v[i])) return true;
      }
      return put(']');
    }
    if (typeof v === 'object' && v !== null) {
      if (put('{')) return true;
      let first = true;
      for (const [k, x] of Object.entries(v)) {
        if (x === undefined || typeof x === 'function') continue;
        if (!first && put(',')) return true;
        first = false;
        if (put(`${JSON.stringify(k)}:`) || write(x)) return true;
      }
      return put('}');
    }
    // A long string is quoted from its head only: the rest could not be shown anyway.
    if (typeof v === 'string' && v.length > max) return put(JSON.stringify(v.slice(0, max + 1)).slice(0, -1));
    return put(JSON.stringify(v) ?? 'null');
  };
  const cut = write(value);
  return { text: cut ? ownCopy(out.slice(0, max)) : out, cut };
}

function toReportCall(c: ProbeCall): ReportCall {
  const r = c.exchange.reply;
  const reply: ReportCall['reply'] = { kind: r.kind };
  if (r.kind === 'response' || r.kind === 'malformed') {
    const head = jsonHead(r.raw, MAX_RAW_CHARS);
    if (head.cut) reply.rawText = head.text;
    else reply.raw = r.raw;
    if (r.kind === 'malformed') reply.problem = r.problem;
  } else if (r.kind === 'hang') {
    reply.waitedMs = r.waitedMs;
    if (r.runDelayMs) reply.runDelayMs = r.runDelayMs;
  }
  const out: ReportCall = {
    seq: c.seq,
    probe: c.probe,
    tool: c.tool,
    method: c.exchange.method,
    request: c.exchange.sent.length > MAX_RAW_CHARS ? ownCopy(c.exchange.sent.slice(0, MAX_RAW_CHARS) + '…') : c.exchange.sent,
    reply,
    durationMs: c.exchange.durationMs,
  };
  if (c.classification) {
    out.class = c.classification.class;
    if (c.classification.leaks.length > 0) out.leaks = c.classification.leaks;
  }
  if (c.invalidBecause) out.invalidBecause = c.invalidBecause;
  if (c.effects) out.effects = c.effects;
  if (c.target !== undefined) out.target = c.target;
  if (c.value !== undefined) out.value = c.value;
  if (c.rawArguments !== undefined) out.rawArguments = c.rawArguments;
  if (c.items !== undefined) out.items = c.items;
  if (c.instance !== undefined) out.instance = c.instance;
  if (c.secrets) out.secrets = c.secrets;
  return out;
}

/** The target in words: the stdio command, the URL, or `tools file <path>` (for reports' headers). */
export function targetLabel(t: ReportTarget): string {
  if (t.kind === 'http') return t.url ?? '(url)';
  if (t.kind === 'tools-file') return `tools file ${t.file ?? '(given as data)'}`;
  // A server.json entry that was never started has no command: the file and entry say what it was.
  if (t.command.length === 0 && t.origin) return `${t.origin.name} (${t.origin.file}, ${t.origin.entry})`;
  if (t.command.length === 0 && t.package) return `${t.package.ecosystem}:${t.package.name}${t.package.version ? `@${t.package.version}` : ''}`;
  return t.command.join(' ');
}

/** All findings of a report, in check order. */
export function allFindings(report: Report): ReportFinding[] {
  return report.checks.flatMap((c) => c.findings);
}

/**
 * A check's coverage in words (SPEC section 5, coverage is honest): `judged 25 of 59 tools`, and
 * the tools not judged grouped by why, at most `max` names per reason: `not judged: beyond
 * max_tools (25): t26, t27, … (34)`. Empty for a check without coverage.
 */
export function coverageLines(c: Pick<ReportCheck, 'coverage'>, max = 8): { summary?: string; notJudged: string[] } {
  const cov = c.coverage;
  if (!cov) return { notJudged: [] };
  const total = cov.judged.length + cov.notJudged.length;
  const byWhy = new Map<string, string[]>();
  for (const n of cov.notJudged) byWhy.set(n.why, [...(byWhy.get(n.why) ?? []), n.tool]);
  const notJudged = [...byWhy].map(([why, tools]) => `not judged: ${why}: ${tools.slice(0, max).join(', ')}${tools.length > max ? `, … (${tools.length})` : ''}`);
  return { summary: `judged ${cov.judged.length} of ${total} tool${total === 1 ? '' : 's'}`, notJudged };
}
