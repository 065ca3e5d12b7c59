/**
 * The sandbox's quiet period on a loaded machine (SPEC section 3: a call's effects are settled when
 * no effect event has come for a quiet period). Seen in a full test run: a debounced write that
 * landed while sealmark was not scheduled was read only after the next call was sent, and blamed
 * on it. The waits below are asserted only from below: load can make them longer, never shorter.
 */
import { appendFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Sandbox, STALL_TOLERANCE_MS } from '../../src/target/sandbox.js';

const busy = (ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    /* the event loop is held: nothing of ours runs */
  }
};

describe('Sandbox.quiet', () => {
  let box: Sandbox | undefined;
  afterEach(() => box?.dispose());

  /** A sandbox watching its effect log (wrap plans it and starts the watch; nothing is started). */
  const watching = (): Sandbox => {
    box = Sandbox.create({ network: 'off', shims: true, keep: false });
    box.wrap('true', [], { PATH: process.env.PATH ?? '' });
    return box;
  };

  it('reads an event already pending before it calls the sandbox quiet', async () => {
    const s = watching();
    const from = Date.now();
    // A shim line lands while sealmark is busy past the end of the quiet period.
    appendFileSync(s.logPath, 'shim\tcurl http://example.com\n');
    busy(150);
    const waited = await s.quiet(from, 100);
    // The event is read, and the quiet period counted again from it.
    expect(s.eventsSince(from)).toBe(true);
    expect(waited).toBeGreaterThanOrEqual(90);
  });

  it('starts the quiet period again after a stall of its own timer', async () => {
    const s = watching();
    const from = Date.now();
    // 30 ms into a 100 ms quiet period the machine holds sealmark for 250 ms.
    setTimeout(() => busy(250), 30);
    const waited = await s.quiet(from, 100);
    expect(250 - 100).toBeGreaterThan(STALL_TOLERANCE_MS);
    // Woken at about 280 ms, 180 ms late: quiet is counted again from there, 100 ms more.
    expect(waited).toBeGreaterThanOrEqual(370);
    expect(s.eventsSince(from)).toBe(false);
  });

  it('still ends at the longest wait, which a stall lengthens at most twofold', async () => {
    const s = watching();
    const from = Date.now();
    const writer = setInterval(() => appendFileSync(s.logPath, 'shim\tcurl x\n'), 20);
    try {
      const waited = await s.quiet(from, 100, 300);
      expect(waited).toBeGreaterThanOrEqual(295);
      // The writer never stops: only the longest wait (300 ms, at most doubled by stalls) ends it.
      expect(waited).toBeLessThan(3_000);
    } finally {
      clearInterval(writer);
    }
  });
});
