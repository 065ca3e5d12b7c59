/**
 * What `sealmark fleet run` says while it runs (SPEC section 2: progress on a TTY, nothing else
 * when piped) and the summary line it ends with either way.
 */
import { METHODOLOGY_VERSION, VERSION } from '../version.js';
import type { FleetOutcome } from './types.js';

/** What a run did. `failed`: jobs sealmark itself could not run (no record); any makes exit code 1. */
export interface FleetSummary {
  /** Jobs the targets gave. */
  total: number;
  /** Jobs not run: recorded under the current ruler before, and not named by --regrade. */
  skipped: number;
  /** Jobs that got a record in this run. */
  ran: number;
  /** Those records by outcome. */
  outcomes: Partial<Record<FleetOutcome, number>>;
  failed: { jobId: string; error: string }[];
  /** ms the run took. */
  ms: number;
  /** Set when the run stopped before every job was done (a queue that went away): why, in one line. */
  stopped?: string;
}

/**
 * The progress line (SPEC section 2: progress on a TTY, nothing else when piped): jobs done/total,
 * running, outcomes so far, rate and ETA, redrawn each second and after each job; one summary line
 * at the end either way.
 */
export class Progress {
  private finished = 0;
  private active = 0;
  private readonly t0 = Date.now();
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly total: number,
    private readonly summary: FleetSummary,
  ) {
    if (out.isTTY) {
      this.timer = setInterval(() => this.draw(), 1000);
      this.timer.unref();
    }
  }

  running(delta: number): void {
    this.active += delta;
    this.draw();
  }

  done(): void {
    this.finished++;
    this.draw();
  }

  private outcomes(none = 'none yet'): string {
    const parts = Object.entries(this.summary.outcomes).map(([k, n]) => `${k} ${n}`);
    if (this.summary.failed.length > 0) parts.push(`failed ${this.summary.failed.length}`);
    return parts.join(', ') || none;
  }

  private draw(): void {
    if (!this.out.isTTY) return;
    const min = (Date.now() - this.t0) / 60_000;
    const rate = min > 0 ? this.finished / min : 0;
    const left = this.total - this.finished;
    const eta = rate > 0 ? `ETA ${formatMinutes(left / rate)}` : 'ETA …';
    this.out.write(`\r\u001b[2Kfleet: ${this.finished}/${this.total} done, ${this.active} running; ${this.outcomes()}; ${rate.toFixed(1)}/min, ${eta}`);
  }

  finish(): void {
    if (this.timer) clearInterval(this.timer);
    const s = this.summary;
    const line = `fleet: ${s.total} jobs: ${s.ran} run (${this.outcomes('none')}), ${s.skipped} already recorded under sealmark ${VERSION} / methodology ${METHODOLOGY_VERSION}, in ${(s.ms / 1000).toFixed(1)} s`;
    this.out.write(`${this.out.isTTY ? '\r\u001b[2K' : ''}${line}\n`);
  }
}

function formatMinutes(m: number): string {
  return m < 1 ? `${Math.ceil(m * 60)} s` : m < 120 ? `${Math.round(m)} min` : `${(m / 60).toFixed(1)} h`;
}
