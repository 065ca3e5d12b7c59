/**
 * tool-naming (pack design, scored, static; SPEC section 5, seed "Side-Effect Boundaries") against
 * fixture servers in every naming style, plus the verb table itself.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { LATER_PACKS_OFF, auditFixture, checkOf, findingsOf } from '../helpers/run.js';
import { verbOf } from '../../src/naming.js';
import type { Report } from '../../src/report/build.js';

const ID = 'tool-naming';
/** Static check: nothing needs to be called. */
const STATIC = { checks: Object.fromEntries(['robust-input', 'strict-arguments', 'protocol-errors', 'default-call-effects', 'filler-call-effects', 'bounded-limits', 'oversized-input', 'concurrency', 'annotations', 'idempotency-key', 'two-step-writes', 'secret-echo'].map((id) => [id, { enabled: false }])) };

const runs: Record<string, Report> = {};
beforeAll(async () => {
  const [styles, blanket, refund, c9] = await Promise.all([
    auditFixture('design/naming_styles.mjs', STATIC),
    auditFixture('design/blanket_annotations.mjs', STATIC),
    auditFixture('design/refund_pair.mjs', STATIC),
    auditFixture('design/readonly_writer.mjs', STATIC),
  ]);
  Object.assign(runs, { styles, blanket, refund, c9 });
}, 60_000);

/** The graded findings: a name alone is partial (SPEC section 5, name heuristics never alone fail). */
const found = (r: Report) => checkOf(r, ID).findings.filter((f) => f.level === 'partial').map((f) => `${f.messageId} ${f.tool}`);

describe('names against stated annotations', () => {
  it('dotted, camelCase and snake_case names: each contradiction, and only those, partial (a name alone)', () => {
    expect(checkOf(runs.styles!, ID).verdict).toBe('partial');
    expect(checkOf(runs.styles!, ID).findings.filter((f) => f.level === 'fail')).toEqual([]);
    expect(found(runs.styles!)).toEqual(['destroy-not-destructive notes.delete', 'query-not-read-only getNotes', 'destroy-not-destructive purge_all']);
    const [f] = findingsOf(runs.styles!, ID, 'query-not-read-only');
    expect(f!.message).toBe('getNotes: the name says get (a query) but the tool states readOnlyHint false');
    expect(f!.evidence.schemaPaths).toEqual(['tools[1].name', 'tools[1].annotations']);
  });

  it('blanket read-only annotations on write names are partial for each write', () => {
    expect(found(runs.blanket!)).toEqual(['write-verb-read-only delete_item', 'destroy-not-destructive delete_item', 'write-verb-read-only send_invite', 'write-verb-read-only update_item']);
  });

  it('case C9: replace_symbol says replace but states readOnlyHint true', () => {
    expect(found(runs.c9!)).toEqual(['write-verb-read-only replace_symbol']);
  });

  it('the seed refund pair reads right: propose (no table verb, listed) and execute', () => {
    expect(checkOf(runs.refund!, ID).verdict).toBe('pass');
    expect(runs.refund!.calls.filter((c) => c.method === 'tools/call')).toEqual([]);
  });
});

describe('verbOf', () => {
  it.each([
    ['get_customer', 'get', 'read'],
    ['listInvoices', 'list', 'read'],
    ['search-orders', 'search', 'read'],
    ['notes.delete', 'delete', 'write'],
    ['github.create_issue', 'create', 'write'],
    ['refundOrder', 'refund', 'write'],
    ['files/remove', 'remove', 'write'],
  ])('%s reads %s (%s)', (name, verb, kind) => {
    expect(verbOf(name)).toMatchObject({ verb, kind });
  });

  it.each(['simulate-research-query', 'open_nodes', 'order_status', 'trigger-long-running-operation', 'echo', ''])('%j carries no verb of either table', (name) => {
    expect(verbOf(name)).toBeUndefined();
  });

  it('marks destroying verbs', () => {
    expect(verbOf('purge_cache')?.destroys).toBe(true);
    expect(verbOf('create_cache')?.destroys).toBe(false);
  });
});

// Issue 13: name heuristics never alone make a fail, and the verb tables know the arithmetic and
// query senses (add_time, add(a, b), jwt_decode) that real servers use.
describe('design/name-senses.mjs', () => {
  let r: Report;
  beforeAll(async () => {
    r = await auditFixture('design/name-senses.mjs', { checks: { ...LATER_PACKS_OFF } });
  }, 60_000);

  it('tool-naming: add_time and add over numbers are arithmetic, jwt_decode a query; delete_note stating readOnlyHint true is partial, not fail', () => {
    const c = checkOf(r, 'tool-naming');
    expect(c.verdict).toBe('partial');
    expect(c.findings.filter((f) => f.level !== 'info').map((f) => [f.messageId, f.tool, f.level])).toEqual([['write-verb-read-only', 'delete_note', 'partial']]);
    expect(c.findings.filter((f) => ['add_time', 'add', 'jwt_decode'].includes(f.tool!) && f.level !== 'info')).toEqual([]);
  });

  it('hidden-params: jwt_decode\'s token is its input, byApiKey and api_key_name are not secrets; set_token is partial by name, login\'s password (format: password) fails', () => {
    const c = checkOf(r, 'hidden-params');
    expect(c.verdict).toBe('fail');
    expect(c.findings.map((f) => [f.messageId, f.tool, f.data.property, f.level])).toEqual([
      ['credential-input', 'jwt_decode', 'token', 'info'],
      ['credential', 'set_token', 'token', 'partial'],
      ['credential-confirmed', 'login', 'password', 'fail'],
    ]);
    expect(findingsOf(r, 'hidden-params', 'credential-confirmed')[0]!.message).toBe('login: `password` holds a credential (format: password); a model can read and set it');
  });
});
