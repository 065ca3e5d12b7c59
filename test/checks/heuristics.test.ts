/**
 * The name heuristics of armed-flags, tool-naming, idempotency-key and annotations against fixture
 * servers shaped like real published ones (SPEC section 5, "Rules every check follows": name
 * heuristics alone never make a fail; one cause is one finding):
 * heuristics/vendor_prefixed.mjs (firecrawl-mcp's shape) and heuristics/dedupe_store.mjs
 * (server-memory's shape), plus unit tests of nameStyleOf / verbOf.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { auditFixture, checkOf, findingsOf, graded, LATER_PACKS_OFF } from '../helpers/run.js';
import { nameStyleOf, verbOf } from '../../src/naming.js';
import type { Report } from '../../src/report/build.js';

const QUICK = { checks: { 'protocol-errors': { enabled: false }, 'bounded-limits': { enabled: false }, 'oversized-input': { enabled: false }, concurrency: { enabled: false } } };
const ENTITY = { tool: 'create_entities', arguments: { entities: [{ name: 'a', entityType: 't' }] } };
const LOG = { tool: 'append_log', arguments: { text: 't' } };

const runs: Record<string, Report> = {};
beforeAll(async () => {
  const [vendor, dedupe, dedupeStatic, createOnce] = await Promise.all([
    auditFixture('heuristics/vendor_prefixed.mjs', { checks: { ...LATER_PACKS_OFF, ...QUICK.checks, 'idempotency-key': { enabled: true }, annotations: { enabled: true }, 'tool-naming': { enabled: true } } }),
    auditFixture('heuristics/dedupe_store.mjs', { ...QUICK, probes: [ENTITY, LOG] }),
    auditFixture('heuristics/dedupe_store.mjs', QUICK),
    auditFixture('heuristics/create_once.mjs', { ...QUICK, probes: [{ tool: 'create_folder', arguments: { name: 'x' } }] }),
  ]);
  Object.assign(runs, { vendor, dedupe, dedupeStatic, createOnce });
}, 120_000);

describe('heuristics/vendor_prefixed.mjs (firecrawl-mcp shape)', () => {
  it('armed-flags: skipTlsVerification turns a safeguard off (true arms it), its default false is not armed; removeBase64Images and pageStatus are no switches', () => {
    const r = runs.vendor!;
    expect(checkOf(r, 'armed-flags').verdict).toBe('partial');
    expect(graded(r, 'armed-flags')).toEqual(['switch']);
    const [s] = findingsOf(r, 'armed-flags', 'switch');
    expect(findingsOf(r, 'armed-flags', 'switch')).toHaveLength(1);
    expect(s!.tool).toBe('acme_scrape');
    expect(s!.data.property).toBe('skipTlsVerification');
    expect(s!.data.why).toBe('declares default false; turns a safeguard off (true arms it)');
    expect(s!.evidence.schemaPaths).toEqual(['tools[0].inputSchema.properties.skipTlsVerification']);
    const info = findingsOf(r, 'armed-flags', 'default-only');
    expect(info.map((f) => [f.data.property, f.level, f.data.why])).toEqual([['removeBase64Images', 'info', 'declares default true']]);
    expect(checkOf(r, 'armed-flags').findings.some((f) => f.data.property === 'pageStatus')).toBe(false);
  });

  it('tool-naming: reads the verb after the shared prefix, last on a noun_verb server; only the planted write-verb-read-only, no false contradiction', () => {
    const r = runs.vendor!;
    const c = checkOf(r, 'tool-naming');
    expect(c.verdict).toBe('partial');
    expect(graded(r, 'tool-naming')).toEqual(['write-verb-read-only']);
    const [f] = findingsOf(r, 'tool-naming', 'write-verb-read-only');
    expect(findingsOf(r, 'tool-naming', 'write-verb-read-only')).toHaveLength(1);
    expect([f!.tool, f!.data.verb]).toEqual(['acme_pdf_metadata_write', 'write']);
    expect(f!.evidence.schemaPaths).toEqual(['tools[9].name', 'tools[9].annotations']);
    // acme_search_feedback (readOnlyHint false) is not read as the query `search`.
    expect(c.findings.filter((x) => x.tool === 'acme_search_feedback').map((x) => x.messageId)).toEqual(['no-verb']);
    expect(findingsOf(r, 'tool-naming', 'no-verb').map((x) => x.tool)).toEqual(['acme_scrape', 'acme_search_feedback']);
  });

  it('idempotency-key: an unstated idempotentHint is noted, not scored (annotations owns it); idempotent verbs need no key', () => {
    const r = runs.vendor!;
    const c = checkOf(r, 'idempotency-key');
    expect(c.verdict).toBe('pass');
    expect(graded(r, 'idempotency-key')).toEqual([]);
    const keys = findingsOf(r, 'idempotency-key', 'no-key');
    expect(keys.map((f) => [f.tool, f.level])).toEqual([['acme_scrape', 'info'], ['acme_search_feedback', 'info'], ['acme_monitor_create', 'info']]);
    expect(keys[0]!.data.hint).toBe('not stated: scored by annotations');
    expect(keys[0]!.message).toContain('if a repeat has one effect, state idempotentHint: true; otherwise accept an idempotency key');
    expect(c.notes).toContain('idempotent by the nature of their verb, no key needed: acme_monitor_update (update), acme_monitor_delete (delete), acme_interact_stop (stop)');
  });

  it('annotations: missing-write-hints names only the default of the missing hint; the same cause is scored here once', () => {
    const r = runs.vendor!;
    expect(checkOf(r, 'annotations').verdict).toBe('partial');
    expect(graded(r, 'annotations')).toEqual(['missing-write-hints']);
    const m = findingsOf(r, 'annotations', 'missing-write-hints');
    expect(m.map((f) => f.tool)).toEqual(['acme_scrape', 'acme_search_feedback', 'acme_monitor_create', 'acme_monitor_update', 'acme_monitor_delete', 'acme_interact_stop']);
    expect(m[0]!.data.defaults).toBe('default: idempotentHint false');
    expect(m[0]!.message).toBe('acme_scrape: not read-only, but idempotentHint is not stated (default: idempotentHint false)');
  });
});

describe('heuristics/create_once.mjs (a repeat that fails is no de-duplication)', () => {
  it('the first call has the effect and the repeats fail: no `one-effect` advice, `no-key` stands', () => {
    const r = runs.createOnce!;
    const repeats = r.calls.filter((c) => c.probe === 'repeat-first' || c.probe === 'repeat-second');
    expect(repeats.map((c) => [c.probe, c.class])).toEqual([['repeat-first', expect.any(String)], ['repeat-second', expect.any(String)]]);
    expect(repeats.every((c) => (c.reply.raw as { result?: { isError?: boolean } }).result?.isError === true)).toBe(true);
    expect(findingsOf(r, 'idempotency-key', 'one-effect')).toEqual([]);
    expect(findingsOf(r, 'idempotency-key', 'no-key').map((f) => f.tool)).toEqual(['create_folder']);
  });
});

describe('heuristics/dedupe_store.mjs (server-memory shape)', () => {
  it('with probes: entries, a repeat of create_entities makes one effect (the graph is rewritten with the same bytes): `one-effect` (info) and no `no-key`; append_log fails double-effect only', () => {
    const r = runs.dedupe!;
    expect(checkOf(r, 'idempotency-key').verdict).toBe('fail');
    // append_log: one cause (no key, no de-duplication), one finding: the double effect, not also no-key.
    expect(graded(r, 'idempotency-key')).toEqual(['double-effect']);
    expect(findingsOf(r, 'idempotency-key', 'double-effect').map((f) => f.tool)).toEqual(['append_log']);
    expect(findingsOf(r, 'idempotency-key', 'no-key')).toEqual([]);
    const [one] = findingsOf(r, 'idempotency-key', 'one-effect');
    expect([one!.tool, one!.level, one!.data.times]).toEqual(['create_entities', 'info', 3]);
    const calls = one!.evidence.calls!.map((s) => r.calls.find((c) => c.seq === s)!);
    expect(calls.map((c) => c.probe).slice(-2)).toEqual(['repeat-first', 'repeat-second']);
    expect(calls[0]!.effects).toEqual([{ kind: 'file', detail: 'created ./graph.jsonl', summary: '30 bytes' }]);
    expect(calls.slice(1).map((c) => c.effects ?? [])).toEqual([[], []]);
    expect(one!.evidence.quotes).toEqual(['created ./graph.jsonl']);
  });

  it('without entries the stated idempotentHint false stands: `no-key` partial for both, with both fixes in the advice', () => {
    const r = runs.dedupeStatic!;
    expect(checkOf(r, 'idempotency-key').verdict).toBe('partial');
    const keys = findingsOf(r, 'idempotency-key', 'no-key');
    expect(keys.map((f) => [f.tool, f.level, f.data.hint])).toEqual([['create_entities', 'partial', 'false'], ['append_log', 'partial', 'false']]);
  });
});

describe('nameStyleOf / verbOf', () => {
  const names = (xs: string[]) => xs.map((name) => ({ name }));
  it('strips a vendor prefix and reads noun_verb names from the end', () => {
    const tools = names(['firecrawl_monitor_create', 'firecrawl_monitor_delete', 'firecrawl_monitor_list', 'firecrawl_search_feedback', 'firecrawl_search', 'firecrawl_scrape']);
    const style = nameStyleOf(tools);
    expect(style).toEqual({ prefix: ['firecrawl'], verbAt: 'end' });
    expect(tools.map((t) => verbOf(t.name, undefined, style)?.verb)).toEqual(['create', 'delete', 'list', undefined, 'search', undefined]);
  });

  it('vaulttools: pdf_metadata_write, file_zip_create and image_exif_strip read as writes', () => {
    const tools = names(['vaulttools_pdf_metadata_write', 'vaulttools_file_zip_create', 'vaulttools_image_exif_strip', 'vaulttools_image_exif_read', 'vaulttools_dev_uuid']);
    const style = nameStyleOf(tools);
    expect(style).toEqual({ prefix: ['vaulttools'], verbAt: 'end' });
    expect(tools.map((t) => verbOf(t.name, undefined, style)?.kind)).toEqual(['write', 'write', 'write', 'read', undefined]);
  });

  it('a shared verb is not a prefix, and verb_noun servers keep reading the first word (execute_refund, propose_refund)', () => {
    expect(nameStyleOf(names(['get_a', 'get_b']))).toEqual({ prefix: [], verbAt: 'start' });
    const refund = names(['propose_refund', 'execute_refund']);
    const style = nameStyleOf(refund);
    expect(style).toEqual({ prefix: [], verbAt: 'start' });
    expect(refund.map((t) => verbOf(t.name, undefined, style)?.verb)).toEqual([undefined, 'execute']);
    expect(nameStyleOf(names(['create_entities', 'delete_entities', 'read_graph', 'open_nodes']))).toEqual({ prefix: [], verbAt: 'start' });
  });

  it('git-mcp: the `git` prefix is stripped, and git_fetch is a write (git sense), not a query', () => {
    const git = names(['git_fetch', 'git_commit', 'git_show', 'git_status']);
    const style = nameStyleOf(git);
    expect(style).toEqual({ prefix: ['git'], verbAt: 'start' });
    expect(git.map((t) => verbOf(t.name, undefined, style)?.kind)).toEqual(['write', 'write', 'read', undefined]);
    expect(verbOf('fetch_url')?.kind).toBe('read');
  });
});
