/**
 * SPEC section 3 step 3: a server that exits is started again for the remaining probes and checks,
 * the exit stays the finding of the probe that caused it, and a check is never n/a because the
 * server did not stay up (issue 13). Real runs of fixture servers.
 */
import { describe, expect, it } from 'vitest';
import { auditFixture, checkOf, findingsOf } from '../helpers/run.js';
import { renderText } from '../../src/report/reporters/text.js';

describe('exits-on-null.mjs (exits on one probe, starts again fine)', () => {
  it('records the restart after the call it exited on, and the text report says so', async () => {
    const r = await auditFixture('exits-on-null.mjs');
    const exitedOn = r.calls.find((c) => c.probe === 'nulls' && c.tool === 'lookup')!;
    expect(exitedOn.reply.kind).toBe('exited');
    expect(r.restarts).toEqual([{ afterSeq: exitedOn.seq, ok: true }]);
    expect(renderText(r, { color: false, verbose: false })).toContain('restarts  the server exited and was started again 1 time\n');
    expect(r.checks.filter((c) => c.findings.some((f) => f.messageId === 'server-gone-before'))).toEqual([]);
  }, 60_000);
});

describe('adversarial/dies-once.mjs (exits on its first call; a second start fails)', () => {
  it('fails every check the server did not stay up for, saying why, instead of n/a; the failed start is in the report', async () => {
    const r = await auditFixture('adversarial/dies-once.mjs');
    expect(r.restarts).toHaveLength(1);
    expect(r.restarts![0]).toMatchObject({ ok: false, failure: 'the server exited during the handshake (code 3)' });
    expect(checkOf(r, 'robust-input').verdict).toBe('fail');
    for (const id of ['protocol-errors', 'strict-arguments', 'oversized-input', 'concurrency', 'default-call-effects']) {
      const c = checkOf(r, id);
      expect(c.verdict, id).toBe('fail');
      const [f] = findingsOf(r, id, 'server-gone-before');
      expect(f!.message, id).toBe('not judged: the server exited and could not be started again (the server exited during the handshake (code 3)); a check the server did not stay up for counts as failed, not as not applicable');
    }
    // What applies to nothing stays n/a: echo has no count, so bounded-limits is n/a, not failed.
    expect(checkOf(r, 'bounded-limits').verdict).toBe('n/a');
    expect(renderText(r, { color: false, verbose: false })).toContain('restarts  the server exited; starting it again failed: the server exited during the handshake (code 3)\n');
  }, 60_000);
});
