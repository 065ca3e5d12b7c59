/**
 * `--fetch-rate` (SPEC section 10 conduct): how often package jobs of one registry type may start
 * a fetch. One token bucket per registry type (npm, pypi, oci).
 */
import { installedAlready } from '../target/fetch.js';
import type { JobSpec } from './targets.js';

/**
 * The registry whose fetch token `spec` spends before it starts, or null when it fetches nothing:
 * no package (a remote, a plain command), or an exact version already in sealmark's cache
 * (`cacheDir`), which starts with no download and no registry query.
 */
export function fetchTokenOf(spec: Pick<JobSpec, 'fetch' | 'package'>, cacheDir?: string): JobSpec['fetch'] {
  if (!spec.fetch) return null;
  return spec.package && installedAlready(spec.package, cacheDir) ? null : spec.fetch;
}

/** Tokens a registry's fetch bucket holds at most: a burst of at most this many fetches. */
export const FETCH_BURST = 10;

/** A token bucket per registry type: `ratePerMin` tokens a minute, at most {@link FETCH_BURST} saved up. */
export class FetchLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(private readonly ratePerMin: number) {}

  /** Resolves once a fetch from `registry` may start (spending one token). */
  async take(registry: string): Promise<void> {
    const cap = Math.min(FETCH_BURST, Math.max(1, this.ratePerMin));
    const perMs = this.ratePerMin / 60_000;
    for (;;) {
      const b = this.buckets.get(registry) ?? { tokens: cap, at: Date.now() };
      const t = Date.now();
      b.tokens = Math.min(cap, b.tokens + (t - b.at) * perMs);
      b.at = t;
      this.buckets.set(registry, b);
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return;
      }
      await sleep(Math.ceil((1 - b.tokens) / perMs));
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
