/**
 * Finding fingerprints: a finding's identity across runs, for `--baseline` (which findings are new,
 * which were fixed) and SARIF `partialFingerprints` (so code scanning tracks one alert over time).
 *
 * A fingerprint names where the finding is and what it says, never the volatile detail: check id,
 * message id, tool, schema paths (with the tool's list position replaced by its name, so a reordered
 * listing changes nothing), and the data values that say which part of the tool it is about
 * ({@link IDENTITY_KEYS}: the property, the kind of oversized input, the secret's name). Not the
 * call behind it: a finding merges every call that showed the fault, and which call came first
 * changes when a server fixes some of them. Not the rest of the data either (item counts, times,
 * quoted error text): a server that changes its wording keeps its findings. Two findings may share
 * a fingerprint; comparisons count them.
 */
import { createHash } from 'node:crypto';
import type { Finding } from '../types.js';

/** Data keys that identify what part of a tool a finding is about (the others are detail). */
export const IDENTITY_KEYS = ['param', 'property', 'what', 'name', 'method'] as const;

/** What a fingerprint reads of the report beside the finding. */
export interface FingerprintContext {
  tools: readonly { name: string; index: number }[];
}

/**
 * The fingerprint of `f`: a readable string, e.g. `robust-input/internal-error/get_note`,
 * `bounded-limits/zero-unlimited/list_recent/param=count` or
 * `annotations/no-read-only-hint/open_dashboard/@tool:open_dashboard.annotations`.
 */
export function fingerprintOf(f: Pick<Finding, 'checkId' | 'messageId' | 'tool' | 'evidence' | 'data'>, ctx: FingerprintContext): string {
  const parts = [f.checkId, f.messageId, f.tool ?? '-'];
  const names = namesOf(ctx.tools);
  const paths = (f.evidence?.schemaPaths ?? []).map((p) => p.replace(/^tools\[(\d+)\]/, (m, i: string) => `@tool:${names.get(Number(i)) ?? m}`));
  if (paths.length > 0) parts.push([...new Set(paths)].sort().join(','));
  for (const k of IDENTITY_KEYS) {
    const v = f.data?.[k];
    if (v !== undefined && v !== '') parts.push(`${k}=${String(v)}`);
  }
  return parts.join('/');
}

/** Tool names by list position, built once per tools array (a listing may hold thousands). */
const NAMES = new WeakMap<readonly { name: string; index: number }[], Map<number, string>>();

function namesOf(tools: readonly { name: string; index: number }[]): Map<number, string> {
  let names = NAMES.get(tools);
  if (!names) {
    names = new Map(tools.map((t) => [t.index, t.name]));
    NAMES.set(tools, names);
  }
  return names;
}

/** A fixed-length hash of a fingerprint (hex, 32 characters) for SARIF `partialFingerprints`. */
export function fingerprintHash(fingerprint: string): string {
  return createHash('sha256').update(fingerprint).digest('hex').slice(0, 32);
}
