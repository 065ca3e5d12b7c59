/**
 * armed-flags (pack effects, scored, static; SPEC section 5) against real fixture servers — the
 * seed's three-tool server, cases C6 and C8, and two controls — plus unit tests of the recogniser
 * and the filler in src/flags.ts (`wordsOf`, `sideEffectVerb`, `flaggedProperties`, `fillerArgs`)
 * on hand-made tools.
 *
 * armed-flags is static: the dynamic checks are switched off here, so no tool is called.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { auditFixture, checkOf, findingsOf, graded, LATER_PACKS_OFF } from '../helpers/run.js';
import { check as armedFlags } from '../../src/checks/armed-flags.js';
import type { Artifacts } from '../../src/checks/check.js';
import { fillerArgs, flaggedProperties, sideEffectVerb, wordsOf, type FlaggedProperty } from '../../src/flags.js';
import type { Report } from '../../src/report/build.js';
import type { ListedTool } from '../../src/types.js';

// --- helpers -------------------------------------------------------------------------------------

/** Only the static checks run: nothing is called. */
const STATIC_ONLY = {
  checks: {
    ...LATER_PACKS_OFF,
    'robust-input': { enabled: false }, 'strict-arguments': { enabled: false },
    'protocol-errors': { enabled: false },
    'default-call-effects': { enabled: false },
    'filler-call-effects': { enabled: false },
  },
};

const memo = new Map<string, Promise<Report>>();
function run(name: string): Promise<Report> {
  let p = memo.get(name);
  if (!p) {
    p = auditFixture(`effects/${name}`, STATIC_ONLY);
    memo.set(name, p);
  }
  return p;
}

/** A hand-made listed tool. */
function tool(name: string, properties: Record<string, unknown>, required: string[] = [], index = 0): ListedTool {
  const inputSchema = { type: 'object', properties, ...(required.length ? { required } : {}) };
  return { index, name, raw: { name, inputSchema }, inputSchema, annotations: undefined };
}

/** The single element of `xs` (fails the test when there is not exactly one). */
function one<T>(xs: T[]): T {
  expect(xs).toHaveLength(1);
  return xs[0] as T;
}

/** The one element of `xs` that matches (fails the test when none does). */
function find<T>(xs: T[], pred: (x: T) => boolean): T {
  const x = xs.find(pred);
  expect(x).toBeDefined();
  return x as T;
}

/** Runs the armed-flags judge on hand-made tools. */
function judge(tools: ListedTool[]) {
  return armedFlags.judge({ tools, calls: [] } as unknown as Artifacts, { replay: () => '' });
}

// --- fixtures ------------------------------------------------------------------------------------

describe('seed-three-tools.mjs (the seed\'s three-tool server)', () => {
  let r: Report;
  beforeAll(async () => {
    r = await run('seed-three-tools.mjs');
  });

  it('is partial with exactly three switch findings and nothing armed', () => {
    const c = checkOf(r, 'armed-flags');
    expect(c.verdict).toBe('partial');
    expect(graded(r, 'armed-flags')).toEqual(['switch']);
    expect(findingsOf(r, 'armed-flags', 'armed')).toEqual([]);
    expect(c.findings.map((f) => `${f.tool}.${f.data.property}`)).toEqual(['post_update.notify_channel', 'export.mode', 'export.dry_run']);
    expect(c.findings.every((f) => f.level === 'partial')).toBe(true);
  });

  it('flags post_update.notify_channel for its side-effect name (notify)', () => {
    const f = find(findingsOf(r, 'armed-flags', 'switch'), (x) => x.data.property === 'notify_channel');
    expect(f.tool).toBe('post_update');
    expect(f.evidence.schemaPaths).toEqual(['tools[0].inputSchema.properties.notify_channel']);
    expect(f.data.why).toBe('side-effect name (notify)');
    expect(f.message).toBe('post_update.notify_channel: a side-effect switch a filler would set (side-effect name (notify))');
  });

  it('flags export.mode because its enum includes "send"', () => {
    const f = find(findingsOf(r, 'armed-flags', 'switch'), (x) => x.data.property === 'mode');
    expect(f.tool).toBe('export');
    expect(f.evidence.schemaPaths).toEqual(['tools[2].inputSchema.properties.mode']);
    expect(f.data.why).toBe('enum includes "send"');
  });

  it('flags export.dry_run as an inverted guard with a default, but not armed: true is the safe side', () => {
    const f = find(checkOf(r, 'armed-flags').findings, (x) => x.data.property === 'dry_run');
    expect(f.messageId).toBe('switch');
    expect(f.level).toBe('partial');
    expect(f.evidence.schemaPaths).toEqual(['tools[2].inputSchema.properties.dry_run']);
    expect(f.data.why).toBe('declares default true; inverted guard (false arms it)');
  });

  it('does not flag show_dashboard (no properties)', () => {
    expect(checkOf(r, 'armed-flags').findings.filter((f) => f.tool === 'show_dashboard')).toEqual([]);
  });

  it('calls nothing (static check, dynamic checks off)', () => {
    expect(r.calls.filter((c) => c.method === 'tools/call')).toEqual([]);
  });
});

describe('c6-maintain.mjs (case C6)', () => {
  it('fails armed on maintain.dry_run: its default false arms an inverted guard', async () => {
    const r = await run('c6-maintain.mjs');
    const c = checkOf(r, 'armed-flags');
    expect(c.verdict).toBe('fail');
    expect(graded(r, 'armed-flags')).toEqual(['armed']);
    const f = one(findingsOf(r, 'armed-flags', 'armed'));
    expect(f.level).toBe('fail');
    expect(f.tool).toBe('maintain');
    expect(f.data.property).toBe('dry_run');
    expect(f.data.default).toBe('false');
    expect(f.evidence.schemaPaths).toEqual(['tools[0].inputSchema.properties.dry_run']);
    expect(f.message).toBe('maintain.dry_run: the declared default false arms a side-effect switch (declares default false; inverted guard (false arms it))');
    // namespace (a plain string) is not flagged
    expect(c.findings.some((x) => x.data.property === 'namespace')).toBe(false);
  });
});

describe('c8-cancel-payment.mjs (case C8)', () => {
  it('is partial with a switch on confirm (approval) and nothing on payment_id', async () => {
    const r = await run('c8-cancel-payment.mjs');
    const c = checkOf(r, 'armed-flags');
    expect(c.verdict).toBe('partial');
    expect(graded(r, 'armed-flags')).toEqual(['switch']);
    const sw = one(findingsOf(r, 'armed-flags', 'switch'));
    expect(sw.data.property).toBe('confirm');
    expect(sw.data.why).toBe('approval switch (a filler sets it true)');
    expect(sw.evidence.schemaPaths).toEqual(['tools[0].inputSchema.properties.confirm']);
    expect(c.findings.some((f) => f.data.property === 'payment_id')).toBe(false);
  });
});

describe('controls', () => {
  it('clean-effects.mjs passes with no findings at all', async () => {
    const c = checkOf(await run('clean-effects.mjs'), 'armed-flags');
    expect(c.verdict).toBe('pass');
    expect(c.findings).toEqual([]);
  });

  it('dashboard-fixed.mjs passes: the `open` switch is not in the schema', async () => {
    const c = checkOf(await run('dashboard-fixed.mjs'), 'armed-flags');
    expect(c.verdict).toBe('pass');
    expect(c.findings).toEqual([]);
  });
});

// --- unit: wordsOf and sideEffectVerb ----------------------------------------------------------------

describe('wordsOf', () => {
  it('splits snake_case, kebab-case and camelCase into lower-case words', () => {
    expect(wordsOf('notify_channel')).toEqual(['notify', 'channel']);
    expect(wordsOf('notify-users')).toEqual(['notify', 'users']);
    expect(wordsOf('sendEmail')).toEqual(['send', 'email']);
    expect(wordsOf('skipConfirm')).toEqual(['skip', 'confirm']);
    expect(wordsOf('postal_code')).toEqual(['postal', 'code']);
  });
});

describe('sideEffectVerb', () => {
  it('finds the verb in camelCase and kebab-case names', () => {
    expect(sideEffectVerb('sendEmail')).toBe('send');
    expect(sideEffectVerb('notify-users')).toBe('notify');
    expect(sideEffectVerb('notify_channel')).toBe('notify');
    expect(sideEffectVerb('publish')).toBe('publish');
  });

  it('matches whole words only: postal_code and openai_model are not flagged', () => {
    expect(sideEffectVerb('postal_code')).toBeUndefined();
    expect(sideEffectVerb('openai_model')).toBeUndefined();
    expect(sideEffectVerb('compost')).toBeUndefined();
    expect(sideEffectVerb('preview')).toBeUndefined();
  });

  it('flags open_count (a documented false positive of the name heuristic)', () => {
    expect(sideEffectVerb('open_count')).toBe('open');
  });
});

// --- unit: flaggedProperties -----------------------------------------------------------------------

describe('flaggedProperties', () => {
  const byProp = (t: ListedTool) => (name: string): FlaggedProperty => find(flaggedProperties(t), (f) => f.property === name);

  it('flags camelCase sendEmail and kebab notify-users as side-effect names, and not postal_code', () => {
    const f = byProp(tool('t', { sendEmail: { type: 'boolean' }, 'notify-users': { type: 'string' }, postal_code: { type: 'string' } }));
    expect(flaggedProperties(tool('t', { sendEmail: { type: 'boolean' }, 'notify-users': { type: 'string' }, postal_code: { type: 'string' } })).map((x) => x.property)).toEqual(['sendEmail', 'notify-users']);
    expect(f('sendEmail').reasons).toEqual([{ kind: 'side-effect-name', verb: 'send' }]);
    expect(f('sendEmail').isSwitch).toBe(true);
    expect(f('sendEmail').armedByDefault).toBe(false);
    expect(f('sendEmail').path).toBe('properties.sendEmail');
    expect(f('notify-users').reasons).toEqual([{ kind: 'side-effect-name', verb: 'notify' }]);
  });

  it('flags open_count as a switch (documented false positive)', () => {
    const f = one(flaggedProperties(tool('t', { open_count: { type: 'integer' } })));
    expect(f.property).toBe('open_count');
    expect(f.reasons).toEqual([{ kind: 'side-effect-name', verb: 'open' }]);
    expect(f.isSwitch).toBe(true);
  });

  it('reads skipConfirm and no_verify as turning a safeguard off (true arms them), not as a confirm verb', () => {
    const f = byProp(tool('t', { skipConfirm: { type: 'boolean' }, no_verify: { type: 'boolean', default: true } }));
    expect(f('skipConfirm').reasons).toEqual([{ kind: 'safeguard-off' }]);
    expect(f('skipConfirm').isSwitch).toBe(true);
    expect(f('skipConfirm').armedByDefault).toBe(false);
    expect(f('no_verify').reasons).toEqual([{ kind: 'default', value: true }, { kind: 'safeguard-off' }]);
    expect(f('no_verify').armedByDefault).toBe(true);
  });

  it('reads skip_send and noCommit as inverted guards: the prefix negates an action, so false arms them', () => {
    const f = byProp(tool('t', { skip_send: { type: 'boolean', default: false }, noCommit: { type: 'boolean' }, disable_notify: { type: 'boolean' } }));
    expect(f('skip_send').reasons).toEqual([{ kind: 'default', value: false }, { kind: 'inverted' }]);
    expect(f('skip_send').armedByDefault).toBe(true);
    expect(f('noCommit').reasons).toEqual([{ kind: 'inverted' }]);
    expect(f('disable_notify').reasons).toEqual([{ kind: 'inverted' }]);
  });

  it('reads skipTlsVerification, skip_tls_verification and disableSandbox as turning a safeguard off', () => {
    const f = byProp(tool('t', { skipTlsVerification: { type: 'boolean', default: false }, skip_tls_verification: { type: 'boolean' }, disableSandbox: { type: 'boolean' } }));
    expect(f('skipTlsVerification').reasons).toEqual([{ kind: 'default', value: false }, { kind: 'safeguard-off' }]);
    expect(f('skipTlsVerification').armedByDefault).toBe(false);
    expect(f('skip_tls_verification').reasons).toEqual([{ kind: 'safeguard-off' }]);
    expect(f('disableSandbox').reasons).toEqual([{ kind: 'safeguard-off' }]);
  });

  it('reads git-mcp\'s noMerged as a state filter and maxCommits as a count: neither is flagged; noCommit stays an inverted guard', () => {
    expect(flaggedProperties(tool('git_branch', { noMerged: { type: 'boolean' }, maxCommits: { type: 'integer' } }))).toEqual([]);
    expect(sideEffectVerb('maxCommits')).toBeUndefined();
    expect(byProp(tool('t', { noCommit: { type: 'boolean', default: false } }))('noCommit').armedByDefault).toBe(true);
  });

  it('does not read an enum of states (past participles) as side-effect values: pageStatus ["same","changed","new","removed"]', () => {
    expect(flaggedProperties(tool('t', { pageStatus: { type: 'string', enum: ['same', 'changed', 'new', 'removed'] } }))).toEqual([]);
    expect(flaggedProperties(tool('t', { state: { type: 'string', enum: ['open', 'closed', 'all'] } }))).toEqual([]);
    expect(flaggedProperties(tool('t', { status: { type: 'string', enum: ['sending', 'published'] } }))).toEqual([]);
    const f = byProp(tool('t', { action: { type: 'string', enum: ['keep', 'delete', 'deleted'] } }));
    expect(f('action').reasons).toEqual([{ kind: 'side-effect-enum', values: ['delete'] }]);
  });

  it('does not read a remove verb acting on the reply\'s form (removeBase64Images, strip whitespace) as a side effect; remove_images stays flagged', () => {
    expect(sideEffectVerb('removeBase64Images')).toBeUndefined();
    expect(sideEffectVerb('remove_html')).toBeUndefined();
    expect(sideEffectVerb('remove_images')).toBe('remove');
    expect(sideEffectVerb('delete_backup')).toBe('delete');
  });

  it('arms an inverted guard whose default is false, not one whose default is true', () => {
    const f = byProp(tool('t', { dry_run: { type: 'boolean', default: false }, dryRun: { type: 'boolean', default: true } }));
    expect(f('dry_run').armedByDefault).toBe(true);
    expect(f('dryRun').armedByDefault).toBe(false);
    expect(f('dryRun').reasons).toEqual([{ kind: 'default', value: true }, { kind: 'inverted' }]);
  });

  it('flags an enum ["preview","publish"] by its side-effect value; armed when that value is the default', () => {
    const f = byProp(tool('t', { mode: { type: 'string', enum: ['preview', 'publish'] }, how: { type: 'string', enum: ['preview', 'publish'], default: 'publish' } }));
    expect(f('mode').reasons).toEqual([{ kind: 'side-effect-enum', values: ['publish'] }]);
    expect(f('mode').armedByDefault).toBe(false);
    expect(f('how').armedByDefault).toBe(true);
  });

  it('reads confirm / approved_by_user as approval switches, armed by default true', () => {
    const f = byProp(tool('t', { confirm: { type: 'boolean' }, approved_by_user: { type: 'boolean', default: true } }));
    expect(f('confirm').reasons).toEqual([{ kind: 'approval' }]);
    expect(f('approved_by_user').reasons).toEqual([{ kind: 'default', value: true }, { kind: 'approval' }]);
    expect(f('confirm').armedByDefault).toBe(false);
    expect(f('approved_by_user').armedByDefault).toBe(true);
  });

  it('a property with only a default is flagged but is not a switch', () => {
    const f = one(flaggedProperties(tool('t', { limit: { type: 'integer', default: 10 } })));
    expect(f.reasons).toEqual([{ kind: 'default', value: 10 }]);
    expect(f.isSwitch).toBe(false);
    expect(f.armedByDefault).toBe(false);
  });

  it('flags nothing on a tool with neutral names and no defaults', () => {
    expect(flaggedProperties(tool('t', { city: { type: 'string' }, format: { type: 'string', enum: ['csv', 'json'] } }))).toEqual([]);
  });
});

describe('armed-flags judge on hand-made tools', () => {
  it('a default-only property is an info `default-only` finding and is not scored (pass)', () => {
    const res = judge([tool('list', { limit: { type: 'integer', default: 10 } })]);
    expect(res.verdict).toBe('pass');
    expect(res.findings.map((f) => [f.messageId, f.level])).toEqual([['default-only', 'info']]);
    expect(one(res.findings).message).toBe('list.limit: declares a default (declares default 10); schema-default populators send it on every call');
  });

  it('a side-effect boolean defaulting to true fails `armed`', () => {
    const res = judge([tool('post', { sendEmail: { type: 'boolean', default: true } })]);
    expect(res.verdict).toBe('fail');
    expect(res.findings.map((f) => f.messageId)).toEqual(['armed']);
    expect(one(res.findings).data.default).toBe('true');
  });

  it('is n/a with no tools', () => {
    expect(judge([]).verdict).toBe('n/a');
  });
});

// --- unit: fillerArgs --------------------------------------------------------------------------------

describe('fillerArgs', () => {
  it('sets booleans true and inverted guards false (a safeguard turned off gets true), whatever their defaults', () => {
    expect(
      fillerArgs(
        tool('t', {
          notify_channel: { type: 'boolean' },
          verbose: { type: 'boolean', default: false },
          dry_run: { type: 'boolean', default: true },
          skipConfirm: { type: 'boolean' },
          skip_send: { type: 'boolean' },
          skipTlsVerification: { type: 'boolean', default: false },
        }),
      ),
    ).toEqual({ notify_channel: true, verbose: true, dry_run: false, skipConfirm: true, skip_send: false, skipTlsVerification: true });
  });

  it('picks the side-effect value of an enum (over its default), applies declared defaults', () => {
    expect(
      fillerArgs(
        tool('t', {
          mode: { type: 'string', enum: ['preview', 'publish'], default: 'preview' },
          limit: { type: 'integer', default: 10 },
          url: { type: 'string', default: 'http://feeds.example.com/rss' },
        }),
      ),
    ).toEqual({ mode: 'publish', limit: 10, url: 'http://feeds.example.com/rss' });
  });

  it('fills required strings with a neutral word and leaves optional plain properties out', () => {
    const args = fillerArgs(tool('cancel_payment', { payment_id: { type: 'string' }, note: { type: 'string' }, confirm: { type: 'boolean' } }, ['payment_id']));
    expect(Object.keys(args)).toEqual(['payment_id', 'confirm']);
    expect(typeof args.payment_id).toBe('string');
    expect(String(args.payment_id).length).toBeGreaterThan(0);
    expect(args.confirm).toBe(true);
  });

  it('sends the seed\'s filler arguments for post_update and export', () => {
    expect(fillerArgs(tool('post_update', { message: { type: 'string' }, notify_channel: { type: 'boolean' } }))).toEqual({ notify_channel: true });
    expect(fillerArgs(tool('export', { mode: { type: 'string', enum: ['preview', 'send'] }, dry_run: { type: 'boolean', default: true } }))).toEqual({ mode: 'send', dry_run: false });
  });

  it('leaves a neutral enum without a default out', () => {
    expect(fillerArgs(tool('t', { format: { type: 'string', enum: ['csv', 'json'] } }))).toEqual({});
  });
});

describe('flaggedProperties: an address is not a switch (temporal-cortex, firecrawl)', () => {
  const tool = (properties: Record<string, unknown>): ListedTool => ({ index: 0, name: 't', raw: {}, inputSchema: { type: 'object', properties }, annotations: undefined });
  it('a string named email, contact_email or attendeeEmail holds an address: not flagged', () => {
    const t = tool({ email: { type: 'string' }, contact_email: { type: 'string' }, attendeeEmail: { type: 'string' } });
    expect(flaggedProperties(t)).toEqual([]);
  });
  it('a Boolean email, and a send_email string, are still switches', () => {
    const t = tool({ email: { type: 'boolean' }, send_email: { type: 'string' } });
    expect(flaggedProperties(t).map((f) => [f.property, f.reasons])).toEqual([
      ['email', [{ kind: 'side-effect-name', verb: 'email' }]],
      ['send_email', [{ kind: 'side-effect-name', verb: 'send' }]],
    ]);
  });
});
