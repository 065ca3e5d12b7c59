/**
 * The data model of `sealmark fleet` (SPEC section 10): a job is one (server, version, target) to
 * grade, a record is what one job gave under one ruler. The runner (run.ts) makes records, the
 * store (store.ts) keeps them, the leaderboard (board.ts) only reads them.
 */
import type { Report } from '../report/build.js';

/**
 * What a job ended with. `graded`: the audit ran and the report has a grade. Every other value is
 * an outcome that is not a grade (SPEC section 10), never shown as an F, always with a `reason`:
 * `handshake` (started, but the handshake check failed: it exited or hung during initialize, or
 * listed 0 tools; the report holds the evidence), `needs-config` (a required input without a
 * default, named), `fetch-failed` (the package could not be fetched or installed),
 * `fails-offline` (it reached for the network while starting, and the sandbox has none),
 * `auth-gated` (a remote answered 401/403), `not-runnable` (no way to start it: an unsupported
 * registry type, nothing to run, a bad entry), `timeout` (the job's deadline ended it).
 */
export type FleetOutcome =
  | 'graded'
  | 'handshake'
  | 'needs-config'
  | 'fetch-failed'
  | 'fails-offline'
  | 'auth-gated'
  | 'not-runnable'
  | 'timeout';

/** The ruler a record was made with: a grade is comparable only under the same ruler. */
export interface Ruler {
  /** package.json version of the sealmark that ran the audit. */
  sealmarkVersion: string;
  /** The report's `methodologyVersion`: changes whenever a check's rules change. */
  methodologyVersion: string;
}

/**
 * Where a job's target came from and how it starts. `entry` is `packages[N]`, `remotes[N]`, a
 * client-config server name, or `line N` of a launch-line file.
 */
export interface FleetTarget {
  kind: 'package' | 'remote' | 'client-config' | 'launch-line';
  entry: string;
  /** One line for people: `npm @example/weather-mcp@1.4.0`, `https://…/mcp`, `npx -y pkg@1.0.0`. */
  label: string;
}

/**
 * One job: one target of one version of one server. `id` is deterministic: the same (server,
 * version, target entry, target label) always gives the same id, so a re-run finds its work done.
 */
export interface FleetJob {
  id: string;
  /** The registry name (`io.github.example/weather`), else the config's server name or the launch line. */
  server: string;
  /** The version the entry declares, null when it declares none (a launch line without one). */
  version: string | null;
  target: FleetTarget;
  /** The file the job was read from (absolute path). */
  source: string;
}

/** What one finished job gave under one ruler, as the store keeps it. Times: ISO 8601 and ms. */
export interface FleetRecord {
  jobId: string;
  server: string;
  version: string | null;
  target: FleetTarget;
  ruler: Ruler;
  outcome: FleetOutcome;
  /** Why, in one line, for every outcome but `graded` (null there). */
  reason: string | null;
  /** The overall grade for `graded` (letter null when no scored check applied), else null. */
  grade: { letter: string | null; percent: number | null } | null;
  /** Pack id → percent (null when no check of the pack applied); empty when not graded. */
  packs: Record<string, number | null>;
  finishedAt: string;
  durationMs: number;
  /** How many times the job ran before this record (1 unless a flaky outcome was retried). */
  attempts: number;
  /**
   * Set on a remote whose tools were not called (no `--call-remotes`): it was listed, linted and
   * its handshake graded only (fleet/attempt.ts listOnlyChecks), so its grade says nothing of its
   * calls. Absent on every other record.
   */
  listOnly?: true;
  /** The full JSON report, when the audit produced one (not for a `timeout` or a fetch that never started). */
  report: Report | null;
}
