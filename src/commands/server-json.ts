/**
 * `--server-json <file> [--package-index N | --remote-index N]` for `audit` and `call` (SPEC
 * section 2): one entry of the official registry's server.json, planned by target/server-json.ts,
 * as what the engine starts or connects to.
 */
import type { AuditOptions } from '../audit.js';
import type { OpenFailure } from '../target/session.js';
import type { ReportTarget } from '../report/build.js';
import type { Launch } from '../target/launch.js';
import { planServerJson, readServerJson, serverJsonLaunch } from '../target/server-json.js';
import { envCanaries } from '../secrets.js';
import { UsageError } from './common.js';

/** Where the planned entry leads. `via`: the flags a replay line needs to reach the same entry. */
export type ServerJsonTarget =
  | { kind: 'not-started'; target: ReportTarget; why: Pick<OpenFailure, 'reason' | 'message' | 'detail'> }
  | { kind: 'remote'; url: string; headers: Record<string, string>; canaries: Record<string, string>; origin: NonNullable<ReportTarget['origin']>; via: string[] }
  | { kind: 'launch'; launch: Launch; env: Record<string, string>; canaries: Record<string, string>; origin: NonNullable<ReportTarget['origin']>; display: string[]; via: string[] };

/**
 * Plans the entry of `file` chosen by `--package-index`/`--remote-index` (default: the first
 * package, else the first remote). `given` (the user's `--env`) fills inputs; secret inputs get
 * canaries (watched by secret-echo, redacted everywhere); the other inputs are the server's
 * environment. An entry that cannot be started (`needs-config`, `not-runnable`, a package that
 * serves HTTP itself) is `not-started` with its reason. Throws UsageError for an unreadable or
 * invalid file, or a bad index.
 */
export function serverJsonTarget(file: string, opts: { packageIndex?: string; remoteIndex?: string }, given: Record<string, string>): ServerJsonTarget {
  const doc = readServerJson(file);
  const canaries: Record<string, string> = {};
  const plan = planServerJson(doc, {
    packageIndex: parseIndex('--package-index', opts.packageIndex),
    remoteIndex: parseIndex('--remote-index', opts.remoteIndex),
    given,
    canary: (name) => (canaries[name] ??= envCanaries().SEALMARK_CANARY_TOKEN!),
  });
  const entry = plan.kind === 'remote' ? `remotes[${plan.index}]` : `packages[${plan.index}]`;
  const origin = { kind: 'server-json' as const, file, entry, name: doc.name, version: doc.version ?? null, notes: 'notes' in plan ? plan.notes : [] };
  const index = plan.kind === 'remote' ? ['--remote-index', String(plan.index)] : plan.index >= 0 ? ['--package-index', String(plan.index)] : [];
  const via = ['--server-json', file, ...index, ...Object.keys(given).flatMap((k) => ['--env', k])];
  if (plan.kind === 'needs-config' || plan.kind === 'not-runnable') {
    // The planner's message starts with its kind (`needs-config: …`); the report names the reason apart.
    const message = plan.message.replace(/^(needs-config|not-runnable):\s*/, '');
    return { kind: 'not-started', target: { kind: 'stdio', command: [], origin }, why: { reason: plan.kind, message, detail: message } };
  }
  if (plan.kind === 'remote') return { kind: 'remote', url: plan.url, headers: plan.headers, canaries, origin, via };
  if (plan.transport.type !== 'stdio') {
    const message = `${entry} serves ${plan.transport.type} at ${plan.transport.url}: sealmark does not yet start a package that serves HTTP (start it yourself and use --url)`;
    return { kind: 'not-started', target: { kind: 'stdio', command: plan.command, origin }, why: { reason: 'not-runnable', message, detail: message } };
  }
  const env = Object.fromEntries(Object.entries(plan.env).filter(([k]) => !(k in canaries)));
  return { kind: 'launch', launch: serverJsonLaunch(plan), env, canaries, origin, display: plan.command, via };
}

/** The audit options of a planned entry that can be started or reached. */
export function auditTargetOf(t: Exclude<ServerJsonTarget, { kind: 'not-started' }>): Partial<AuditOptions> & { env: Record<string, string> } {
  if (t.kind === 'remote') return { url: t.url, headers: t.headers, canaries: t.canaries, origin: t.origin, replayVia: t.via, env: {} };
  return { launch: t.launch, env: t.env, canaries: t.canaries, origin: t.origin, displayCommand: t.display, replayVia: t.via };
}

/** Parses an index option (a whole number from 0). Throws UsageError naming the flag. */
function parseIndex(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} ${JSON.stringify(value)}: expected a whole number from 0`);
  return Number(value);
}
