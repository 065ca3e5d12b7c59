/**
 * two-step-writes (pack design, scored; SPEC section 5, seed "Side-Effect Boundaries", case C8)
 * against real fixture servers: the seed's propose/execute refund pair (a correct split, yet an
 * approval Boolean), an execute step that takes any proposal id, a one-step deploy, and C8.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { auditFixture, checkOf, findingsOf, graded } from '../helpers/run.js';
import { MADE_UP_PROPOSAL, proposalProperty } from '../../src/probes/design.js';
import { irreversibleKind } from '../../src/naming.js';
import type { Report } from '../../src/report/build.js';
import type { ListedTool } from '../../src/types.js';

const ID = 'two-step-writes';
const QUICK = { checks: { 'protocol-errors': { enabled: false }, 'bounded-limits': { enabled: false }, 'oversized-input': { enabled: false }, concurrency: { enabled: false } } };

const runs: Record<string, Report> = {};
beforeAll(async () => {
  const [pair, any, deploy, c8, pairNoSandbox] = await Promise.all([
    auditFixture('design/refund_pair.mjs', QUICK),
    auditFixture('design/execute_any_proposal.mjs', QUICK),
    auditFixture('design/deploy_single_step.mjs', QUICK),
    auditFixture('effects/c8-cancel-payment.mjs', QUICK),
    auditFixture('design/execute_any_proposal.mjs', QUICK, [], { sandbox: false }),
  ]);
  Object.assign(runs, { pair, any, deploy, c8, pairNoSandbox });
}, 90_000);

describe("the seed's propose/execute refund pair", () => {
  it('is a correct split: the made-up proposal is refused with no effect; only the approval Boolean is partial', () => {
    const r = runs.pair!;
    expect(checkOf(r, ID).verdict).toBe('partial');
    expect(graded(r, ID)).toEqual(['approval-switch']);
    const [f] = findingsOf(r, ID, 'approval-switch');
    expect(f!.message).toBe('execute_refund: approved_by_user is an approval Boolean in the execute step: a filler sets it true, so it approves nothing (see armed-flags)');
    const made = r.calls.find((c) => c.probe === 'made-up-proposal')!;
    expect(JSON.parse(made.request).params.arguments).toEqual({ proposal_id: MADE_UP_PROPOSAL, approved_by_user: true });
    expect(made.class).not.toBe('accepted');
    expect(made.effects).toEqual([]);
    // armed-flags reports the same Boolean from its side.
    expect(checkOf(r, 'armed-flags').findings.some((x) => x.tool === 'execute_refund' && x.data.property === 'approved_by_user')).toBe(true);
  });
});

describe('an execute step that takes any proposal id', () => {
  it('fails with `made-up-proposal-accepted`, the refund written as evidence', () => {
    const r = runs.any!;
    expect(checkOf(r, ID).verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['approval-switch', 'made-up-proposal-accepted']);
    const [f] = findingsOf(r, ID, 'made-up-proposal-accepted');
    // (The effects pack's filler call, with the proposal id "sealmark", had already created the log.)
    expect(f!.message).toBe(`execute_refund: accepted the made-up proposal_id "${MADE_UP_PROPOSAL}", and acted: file: changed ./refunds.log`);
    expect(f!.replay).toBe(`sealmark call --tool execute_refund --args '${JSON.stringify({ proposal_id: MADE_UP_PROPOSAL, approved_by_user: true })}' -- ${r.target.command.join(' ')}`);
  });

  it('without the sandbox the made-up proposal is not sent (it would be a real refund)', () => {
    const r = runs.pairNoSandbox!;
    expect(r.calls.filter((c) => c.probe === 'made-up-proposal')).toEqual([]);
    expect(graded(r, ID)).toEqual(['approval-switch']);
  });
});

describe('irreversible writes in one step', () => {
  it('a one-step deploy is partial `single-step` (deployment)', () => {
    const r = runs.deploy!;
    expect(checkOf(r, ID).verdict).toBe('partial');
    expect(findingsOf(r, ID, 'single-step').map((f) => [f.tool, f.data.kind])).toEqual([['deploy_service', 'deployment']]);
  });

  it('C8: cancel_payment cancels on the filler call nobody approved: `acted-without-proposal`', () => {
    const r = runs.c8!;
    expect(checkOf(r, ID).verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['acted-without-proposal', 'confirm-only', 'single-step']);
    const [f] = findingsOf(r, ID, 'acted-without-proposal');
    expect(f!.message).toBe('cancel_payment: acted on a call nobody approved (filler-call): file: created ./payments.log');
    const call = r.calls.find((c) => c.seq === f!.evidence.calls![0])!;
    expect(JSON.parse(call.request).params.arguments).toEqual({ payment_id: 'sealmark', confirm: true });
  });
});

describe('irreversibleKind and proposalProperty', () => {
  const tool = (properties: Record<string, unknown>, required: string[]): ListedTool => ({ index: 0, name: 'x', raw: {}, inputSchema: { type: 'object', properties, required }, annotations: undefined });
  it.each([
    ['refund_order', 'money'],
    ['sendEmail', 'messages'],
    ['notes.delete', 'deletion'],
    ['deploy-service', 'deployment'],
    ['get_refund', undefined],
    ['propose_refund', undefined],
  ])('%s is %s', (name, kind) => {
    expect(irreversibleKind(name)).toBe(kind);
  });
  it('needs the proposal id to be required', () => {
    expect(proposalProperty(tool({ proposalId: { type: 'string' } }, ['proposalId']))).toBe('proposalId');
    expect(proposalProperty(tool({ proposal_id: { type: 'string' } }, []))).toBeUndefined();
  });
});

describe('beyond max_tools (adversarial-design/execute-beyond-max-tools.mjs)', () => {
  it('says which tools the design pack did not call', async () => {
    const r = await auditFixture('adversarial-design/execute-beyond-max-tools.mjs', QUICK);
    expect(checkOf(r, ID).notes).toContain('not called (beyond max_tools): send_payout');
    expect(r.calls.filter((c) => c.tool === 'send_payout' && c.probe === 'made-up-proposal')).toEqual([]);
  });
});

// Hidden-corpus kind (issue 13): a destructive tool whose only guard is a `confirm` argument is
// judged by two-step-writes, not n/a, though its name carries no irreversible verb.
describe('design/confirm-only.mjs', () => {
  it('judges clear_history: single-step and confirm-only partial, and a fail for acting on the filler call', async () => {
    const r = await auditFixture('design/confirm-only.mjs');
    const c = checkOf(r, 'two-step-writes');
    expect(c.verdict).toBe('fail');
    expect(c.findings.map((f) => [f.messageId, f.level])).toEqual([
      ['single-step', 'partial'],
      ['confirm-only', 'partial'],
      ['acted-without-proposal', 'fail'],
    ]);
    expect(findingsOf(r, 'two-step-writes', 'single-step')[0]!.data.kind).toBe('guarded by a confirm Boolean');
    expect(findingsOf(r, 'two-step-writes', 'confirm-only')[0]!.message).toBe('clear_history: its only guard is the Boolean confirm; a filler sets it true, so it approves nothing: use a propose step and a proposal id');
    const acted = findingsOf(r, 'two-step-writes', 'acted-without-proposal')[0]!;
    expect(acted.data.probe).toBe('filler-call');
    expect(acted.evidence.quotes).toEqual(['created ./history-cleared.log']);
  }, 60_000);
});
