/**
 * SPEC section 3 step 3: a server that exits is started again for the remaining probes and checks,
 * the exit stays the finding of the probe that caused it, and a check is never n/a because the
 * server did not stay up (issue 13). Real runs of fixture servers.
 */
import { rmSync } from 'node:fs';
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
    // Its marker outlives a start only outside every overlay (see the fixture).
    const marker = `/dev/shm/sealmark-dies-once-${process.pid}-${Date.now()}`;
    let r: Awaited<ReturnType<typeof auditFixture>>;
    try {
      r = await auditFixture('adversarial/dies-once.mjs', {}, [marker]);
    } finally {
      rmSync(marker, { force: true });
    }
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

describe('adversarial/late-exit.mjs (replies to get_thing {}, then exits 40 ms later; case B10)', () => {
  const report = auditFixture('adversarial/late-exit.mjs');
  it('blames the call that reproduces the exit when replayed alone, with its replay line and the stderr line, not the call in flight', async () => {
    const r = await report;
    const exited = findingsOf(r, 'robust-input', 'exited');
    expect(exited.map((f) => [f.tool, f.data.probe])).toEqual([['get_thing', 'missing-required']]);
    const [f] = exited;
    expect(f!.message).toBe('get_thing: the server exited on the missing-required call (exit code 5)');
    expect(f!.replay).toMatch(/^sealmark call --tool get_thing --args '\{\}' -- \S*node \S*late-exit\.mjs$/);
    expect(f!.evidence.quotes).toContain('stderr: late exit after missing id');
    expect(f!.evidence.quotes!.some((q) => /^replayed alone after a restart \(call \d+\), this call exited the server again \(exit code 5\)$/.test(q))).toBe(true);
    // The call the exit was seen on is named as not the cause, and is no finding of its own.
    const replaySeq = f!.evidence.calls![1]!;
    expect(r.calls.find((c) => c.seq === replaySeq)).toMatchObject({ probe: 'exit-replay', tool: 'get_thing' });
    expect(findingsOf(r, 'robust-input', 'stopped-answering')).toEqual([]);
    expect(checkOf(r, 'robust-input').verdict).toBe('fail');
  }, 60_000);
  it('concurrency: the burst re-triggering the same input crash is the same exit, referenced, not a second fail', async () => {
    const r = await report;
    const c = checkOf(r, 'concurrency');
    expect(c.findings.filter((x) => x.level === 'fail')).toEqual([]);
    const [same] = findingsOf(r, 'concurrency', 'same-exit');
    expect(same!.message).toMatch(/^the server exited during the burst on get_thing with the arguments of robust-input's missing-required call \(call \d+\): the same exit robust-input reports, not scored twice$/);
    expect(c.verdict).toBe('pass');
  }, 60_000);
});

describe('adversarial/late-exit-once.mjs (exits once, 40 ms after a call; no replay reproduces it)', () => {
  it('reports the exit without blaming a tool, listing the candidates and the stderr tail', async () => {
    const r = await auditFixture('adversarial/late-exit-once.mjs');
    expect(findingsOf(r, 'robust-input', 'exited')).toEqual([]);
    const [f] = findingsOf(r, 'robust-input', 'exited-unattributed');
    expect(f!.level).toBe('fail');
    expect(f!.tool).toBeUndefined();
    expect(f!.message).toMatch(/^the server exited during the audit \(exit code 6\) and no call is blamed: replayed alone after a restart, none of the \d+ candidate calls exited it again; candidates: \d+ \(echo [a-z-]+\)/);
    expect(f!.evidence.quotes).toContain('stderr: late exit once');
    expect(f!.evidence.quotes![0]).toMatch(/^seen on call \d+ \(echo [a-z-]+\)$/);
    expect(f!.evidence.quotes).toContainEqual(expect.stringMatching(/^replays that did not exit it: calls \d+(, \d+)*$/));
    // It points at no call, so it has no replay line that would blame one.
    expect(f!.evidence.calls ?? []).toEqual([]);
    expect(f!.replay).toBeUndefined();
    expect(checkOf(r, 'robust-input').verdict).toBe('fail');
  }, 60_000);
});
