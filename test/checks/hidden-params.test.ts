/**
 * hidden-params (pack effects, scored, static; SPEC section 5) against real fixture servers — a
 * "decorator" that fails to hide context parameters, and a control — plus unit tests of
 * `credentialLike`.
 *
 * hidden-params is static: the dynamic checks are switched off here, so no tool is called.
 */
import { describe, expect, it } from 'vitest';
import { auditFixture, checkOf, findingsOf, graded, LATER_PACKS_OFF } from '../helpers/run.js';
import { credentialLike } from '../../src/checks/hidden-params.js';

const STATIC_ONLY = {
  ...LATER_PACKS_OFF,
  'robust-input': { enabled: false }, 'strict-arguments': { enabled: false },
  'protocol-errors': { enabled: false },
  'default-call-effects': { enabled: false },
  'filler-call-effects': { enabled: false },
};
const ID = 'hidden-params';

describe('hidden-param-leak.mjs (the hiding decorator strips nothing)', () => {
  it('partial `credential` for get_profile.api_key and search.token (names alone), and nothing else by default', async () => {
    const r = await auditFixture('effects/hidden-param-leak.mjs', { checks: STATIC_ONLY });
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('partial');
    expect(graded(r, ID)).toEqual(['credential']);
    const fs = findingsOf(r, ID, 'credential');
    expect(fs.map((f) => [f.tool, f.data.property, f.level])).toEqual([
      ['get_profile', 'api_key', 'partial'],
      ['search', 'token', 'partial'],
    ]);
    expect(fs.map((f) => f.evidence.schemaPaths)).toEqual([['tools[0].inputSchema.properties.api_key'], ['tools[1].inputSchema.properties.token']]);
    expect(fs[0]!.message).toBe('get_profile: `api_key` looks like a credential; a model can read and set it');
    // user_id is not credential-like: only a configured hidden_params entry catches it
    expect(c.findings.some((f) => f.data.property === 'user_id')).toBe(false);
  });

  it('with hidden_params: [user_id], also fails `configured` for get_profile.user_id', async () => {
    const r = await auditFixture('effects/hidden-param-leak.mjs', { checks: STATIC_ONLY, hidden_params: ['user_id'] });
    const c = checkOf(r, ID);
    expect(c.verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['configured', 'credential']);
    const conf = findingsOf(r, ID, 'configured');
    expect(conf.map((f) => [f.tool, f.data.property])).toEqual([['get_profile', 'user_id']]);
    expect(conf[0]!.evidence.schemaPaths).toEqual(['tools[0].inputSchema.properties.user_id']);
    expect(conf[0]!.message).toBe('get_profile: `user_id` is listed in hidden_params but tools/list still declares it');
    expect(findingsOf(r, ID, 'credential').map((f) => `${f.tool}.${f.data.property}`)).toEqual(['get_profile.api_key', 'search.token']);
  });
});

describe('controls', () => {
  it('clean-effects.mjs passes with no findings', async () => {
    const c = checkOf(await auditFixture('effects/clean-effects.mjs', { checks: STATIC_ONLY }), ID);
    expect(c.verdict).toBe('pass');
    expect(c.findings).toEqual([]);
  });

  it('dashboard-fixed.mjs passes with hidden_params: [open] — open is not in tools/list', async () => {
    const c = checkOf(await auditFixture('effects/dashboard-fixed.mjs', { checks: STATIC_ONLY, hidden_params: ['open'] }), ID);
    expect(c.verdict).toBe('pass');
    expect(c.findings).toEqual([]);
  });
});

describe('credentialLike', () => {
  it('matches credential names in snake_case, camelCase and compound forms', () => {
    for (const n of ['apiKey', 'api_key', 'API_KEY', 'access_token', 'accessToken', 'clientSecret', 'client_secret', 'password', 'authorization', 'token', 'secret']) {
      expect(credentialLike(n), n).toBe(true);
    }
  });

  it('matches page_token too (a documented false positive: a pagination token reads as a credential)', () => {
    expect(credentialLike('page_token')).toBe(true);
  });

  // Decision: names are matched on whole words, so `tokenizer` (one word, not `token`) is NOT
  // credential-like; likewise `tokens_used`-style counters would need the exact word `token`.
  it('does not match tokenizer (whole-word match), cursor or page_size', () => {
    for (const n of ['tokenizer', 'cursor', 'page_size', 'keyword', 'user_id', 'query']) {
      expect(credentialLike(n), n).toBe(false);
    }
  });
});
