/**
 * idempotency-key (pack design, scored; SPEC section 5, seed "Side-Effect Boundaries", case C10)
 * against real fixture servers: a mailer that sends twice on a retry, one that de-duplicates by
 * key, and the static half on tools without a probes: entry.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { auditFixture, checkOf, findingsOf, graded } from '../helpers/run.js';
import { REPEAT_KEY, keyProperty, writesNonIdempotently } from '../../src/probes/design.js';
import type { Report } from '../../src/report/build.js';
import type { ListedTool } from '../../src/types.js';

const ID = 'idempotency-key';
const MAIL = { tool: 'send_message', arguments: { inbox: 'ops', to: ['a@example.invalid'], subject: 's', text: 't' } };
const QUICK = { checks: { 'protocol-errors': { enabled: false }, 'bounded-limits': { enabled: false }, 'oversized-input': { enabled: false }, concurrency: { enabled: false } } };

const runs: Record<string, Report> = {};
beforeAll(async () => {
  const [twice, dedupe, noProbe, noSandbox, refund] = await Promise.all([
    auditFixture('design/mailer_twice.mjs', { ...QUICK, probes: [MAIL] }),
    auditFixture('design/mailer_dedupe.mjs', { ...QUICK, probes: [MAIL] }),
    auditFixture('design/mailer_twice.mjs', QUICK),
    auditFixture('design/mailer_twice.mjs', { ...QUICK, probes: [MAIL] }, [], { sandbox: false }),
    auditFixture('design/refund_pair.mjs', QUICK),
  ]);
  Object.assign(runs, { twice, dedupe, noProbe, noSandbox, refund });
}, 90_000);

const callsOf = (r: Report, probe: string) => r.calls.filter((c) => c.probe === probe);

describe('C10: a mailer that sends twice on a retry, with no key', () => {
  it('fails with `double-effect`, both calls and both effects as evidence, and no second `no-key` finding for the same cause', () => {
    const r = runs.twice!;
    expect(checkOf(r, ID).verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['double-effect']);
    const [f] = findingsOf(r, ID, 'double-effect');
    expect(f!.message).toBe('send_message: the same call twice made two effects, and the tool offers no key to tell them apart: file: changed ./outbox.log');
    const [first, second] = f!.evidence.calls!.map((s) => r.calls.find((c) => c.seq === s)!);
    expect([first!.probe, second!.probe]).toEqual(['repeat-first', 'repeat-second']);
    // robust-input's own call of the probes: entry created the outbox; each repeat appended to it.
    // Each append grows the outbox (the overlay's summary gives the sizes before and after).
    const [a, b] = [first!.effects![0]!, second!.effects![0]!];
    expect([first!.effects, second!.effects].map((e) => e!.map((x) => [x.kind, x.detail]))).toEqual([[['file', 'changed ./outbox.log']], [['file', 'changed ./outbox.log']]]);
    const [, a0, a1] = /^(\d+) → (\d+) bytes$/.exec(a.summary ?? '') ?? [];
    const [, b0, b1] = /^(\d+) → (\d+) bytes$/.exec(b.summary ?? '') ?? [];
    expect(Number(a1)).toBeGreaterThan(Number(a0));
    expect(b0).toBe(a1);
    expect(Number(b1)).toBeGreaterThan(Number(b0));
    // The exact arguments of the probes: entry, twice; no key was added (none is offered).
    for (const c of [first!, second!]) expect(JSON.parse(c.request).params.arguments).toEqual(MAIL.arguments);
    expect(f!.replay).toBe(`sealmark call --tool send_message --args '${JSON.stringify(MAIL.arguments)}' -- ${r.target.command.join(' ')}`);
  });

  it('without a probes: entry only the static half runs: `no-key`, and the tool is listed as not repeated', () => {
    const r = runs.noProbe!;
    expect(checkOf(r, ID).verdict).toBe('partial');
    expect(graded(r, ID)).toEqual(['no-key']);
    expect(findingsOf(r, ID, 'not-repeated').map((f) => f.tool)).toEqual(['send_message']);
    expect(callsOf(r, 'repeat-first')).toEqual([]);
  });

  it('without the sandbox the write is never repeated', () => {
    const r = runs.noSandbox!;
    expect(callsOf(r, 'repeat-first')).toEqual([]);
    expect(checkOf(r, ID).notes).toEqual(['no sandbox (--no-sandbox) and no --allow-effects: no write was repeated and no made-up proposal sent']);
  });
});

describe('a mailer that de-duplicates by idempotency_key', () => {
  it('passes: the second call with the same key had no effect (`key-honoured`)', () => {
    const r = runs.dedupe!;
    expect(checkOf(r, ID).verdict).toBe('pass');
    const [f] = findingsOf(r, ID, 'key-honoured');
    expect(f!.message).toBe(`send_message: the second call with the same key "${REPEAT_KEY}" had no effect`);
    const [first, second] = callsOf(r, 'repeat-first').concat(callsOf(r, 'repeat-second'));
    expect(JSON.parse(first!.request).params.arguments).toEqual({ ...MAIL.arguments, idempotency_key: REPEAT_KEY });
    // The first call with the key is a new intent (the probes: entry's own call had no key): it sends.
    expect(first!.effects).toEqual([{ kind: 'file', detail: 'changed ./outbox.log', summary: expect.stringMatching(/^\d+ → \d+ bytes$/) }]);
    expect(second!.effects).toEqual([]);
  });
});

describe('the refund pair', () => {
  it('execute_refund writes and is not idempotent, and offers no key: `no-key`; propose_refund is read-only', () => {
    expect(findingsOf(runs.refund!, ID, 'no-key').map((f) => f.tool)).toEqual(['execute_refund']);
  });
});

describe('writesNonIdempotently and keyProperty', () => {
  const tool = (name: string, annotations: Record<string, unknown> | undefined, properties: Record<string, unknown> = {}): ListedTool => ({ index: 0, name, raw: {}, inputSchema: { type: 'object', properties }, annotations });
  it('reads the hints with the MCP defaults, and the name', () => {
    expect(writesNonIdempotently(tool('send_email', undefined))).toBe(true);
    expect(writesNonIdempotently(tool('send_email', { idempotentHint: true }))).toBe(false);
    expect(writesNonIdempotently(tool('get_email', undefined))).toBe(false);
    expect(writesNonIdempotently(tool('mailer', { readOnlyHint: false }))).toBe(true);
    expect(writesNonIdempotently(tool('delete_all', { readOnlyHint: true }))).toBe(false);
  });
  it('finds a key in any naming style, string-typed', () => {
    expect(keyProperty(tool('t', undefined, { idempotencyKey: { type: 'string' } }))).toBe('idempotencyKey');
    expect(keyProperty(tool('t', undefined, { 'client-token': { type: 'string' } }))).toBe('client-token');
    expect(keyProperty(tool('t', undefined, { request_id: { type: 'integer' } }))).toBeUndefined();
    expect(keyProperty(tool('t', undefined, { key: { type: 'string' } }))).toBeUndefined();
  });
});
