/**
 * Finding fingerprints: a finding's identity across runs, for `--baseline` (which findings are new,
 * which were fixed) and SARIF `partialFingerprints` (so code scanning tracks one alert over time).
 *
 * A fingerprint names where the finding is and what it says, never the volatile detail: check id,
 * message id, tool, schema paths (with the tool's list position replaced by its name, so a reordered
 * listing changes nothing), and the probe and property of the call behind it. The message data
 * (item counts, times, quoted error text) is left out: a server that changes its wording keeps its
 * findings. Two findings may share a fingerprint; comparisons count them.
 */
import { createHash } from 'node:crypto';
import type { Finding } from '../types.js';

/** What a fingerprint reads of the report beside the finding. */
export interface FingerprintContext {
  tools: readonly { name: string; index: number }[];
  calls: readonly { seq: number; probe: string; target?: string }[];
}

/**
 * The fingerprint of `f`: a readable string, e.g.
 * `robust-input/internal-error/get_note/missing-required:id` or
 * `annotations/no-read-only-hint/open_dashboard/@tool:open_dashboard.annotations`.
 */
export function fingerprintOf(f: Pick<Finding, 'checkId' | 'messageId' | 'tool' | 'evidence'>, ctx: FingerprintContext): string {
  const parts = [f.checkId, f.messageId, f.tool ?? '-'];
  const names = new Map(ctx.tools.map((t) => [t.index, t.name]));
  const paths = (f.evidence.schemaPaths ?? []).map((p) => p.replace(/^tools\[(\d+)\]/, (m, i: string) => `@tool:${names.get(Number(i)) ?? m}`));
  if (paths.length > 0) parts.push([...new Set(paths)].sort().join(','));
  const first = f.evidence.calls?.[0];
  const call = first === undefined ? undefined : ctx.calls.find((c) => c.seq === first);
  if (call) parts.push(call.target === undefined ? call.probe : `${call.probe}:${call.target}`);
  return parts.join('/');
}

/** A fixed-length hash of a fingerprint (hex, 32 characters) for SARIF `partialFingerprints`. */
export function fingerprintHash(fingerprint: string): string {
  return createHash('sha256').update(fingerprint).digest('hex').slice(0, 32);
}
