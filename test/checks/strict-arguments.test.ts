/**
 * strict-arguments (SPEC section 5, pack core): the calls robust-input does not send because they
 * are valid apart from one fault, each judged against its control call. Real runs of fixture
 * servers, plus unit tests of the planner.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditFixture, checkOf, findingsOf, graded } from '../helpers/run.js';
import { runCli } from '../helpers/cli.js';
import { planStrict } from '../../src/probes/strict-arguments.js';
import type { Report, ReportCall } from '../../src/report/build.js';
import type { ListedTool } from '../../src/types.js';

const STRICT_PROBES = new Set(['no-arguments', 'extra-only', 'empty-arguments', 'valid-arguments']);

function strictCalls(r: Report, tool: string): ReportCall[] {
  return r.calls.filter((c) => c.tool === tool && STRICT_PROBES.has(c.probe));
}

function paramsOf(c: ReportCall): { arguments?: unknown } {
  return (JSON.parse(c.request) as { params: { arguments?: unknown } }).params;
}

describe('strict/strict-arguments.mjs', () => {
  let r: Report;
  beforeAll(async () => {
    r = await auditFixture('strict/strict-arguments.mjs', {
      probes: [{ tool: 'search', arguments: { q: 'cats' } }],
      checks: { 'protocol-errors': { enabled: false }, 'bounded-limits': { enabled: false }, 'oversized-input': { enabled: false }, concurrency: { enabled: false } },
    });
  }, 60_000);

  it('is partial with one finding per planted fault', () => {
    const c = checkOf(r, 'strict-arguments');
    expect(c.verdict).toBe('partial');
    expect(graded(r, 'strict-arguments')).toEqual(['extra-dropped', 'internal-error', 'refused-no-arguments']);
  });

  it('refused-no-arguments: a zero-argument read tool refused a call without `arguments`, while it answered `{}`', () => {
    const [f] = findingsOf(r, 'strict-arguments', 'refused-no-arguments');
    expect(f!.tool).toBe('server_status');
    expect(f!.message).toBe('server_status: a valid call without `arguments` was refused (rejected), while the same call with `arguments: {}` was answered; some clients omit `arguments` for a tool that takes none');
    const calls = f!.evidence.calls!.map((s) => r.calls.find((c) => c.seq === s)!);
    expect(calls.map((c) => [c.probe, c.class])).toEqual([
      ['no-arguments', 'rejected'],
      ['empty-arguments', 'accepted'],
    ]);
    expect('arguments' in paramsOf(calls[0]!)).toBe(false);
    expect(f!.evidence.quotes).toEqual(['Invalid arguments: expected object, received undefined']);
  });

  it('extra-dropped: list_items ran with sm_unexpected, though its schema forbids undeclared keys', () => {
    const [f] = findingsOf(r, 'strict-arguments', 'extra-dropped');
    expect(f!.tool).toBe('list_items');
    const [probe, control] = f!.evidence.calls!.map((s) => r.calls.find((c) => c.seq === s)!);
    expect(paramsOf(probe!).arguments).toEqual({ sm_unexpected: 'sealmark' });
    expect(paramsOf(control!).arguments).toEqual({});
    expect(f!.evidence.quotes![0]).toContain('sm_unexpected');
  });

  it('internal-error: get_item read arguments.id of a call without arguments, where `{}` was refused cleanly', () => {
    const [f] = findingsOf(r, 'strict-arguments', 'internal-error');
    expect(f!.tool).toBe('get_item');
    expect(f!.data.probe).toBe('no-arguments');
    expect(f!.evidence.quotes![0]).toContain("Cannot read properties of undefined (reading 'id')");
    const control = r.calls.find((c) => c.seq === f!.evidence.calls![1])!;
    expect([control.probe, control.class]).toEqual(['missing-required', 'rejected']);
  });

  it('search: extra-only sends the probes: entry arguments plus sm_unexpected, and the zod issue array is a clean rejection', () => {
    const calls = strictCalls(r, 'search');
    expect(calls.map((c) => [c.probe, paramsOf(c).arguments])).toEqual([
      ['no-arguments', undefined],
      ['valid-arguments', { q: 'cats' }],
      ['extra-only', { q: 'cats', sm_unexpected: 'sealmark' }],
    ]);
    expect(calls.map((c) => c.class)).toEqual(['rejected', 'accepted', 'rejected']);
    expect(checkOf(r, 'strict-arguments').findings.filter((f) => f.tool === 'search' && f.level !== 'info')).toEqual([]);
  });

  it('never sends a valid call to a tool that may write: delete_item gets only the invalid no-arguments call, reset_cache nothing', () => {
    expect(strictCalls(r, 'delete_item').map((c) => c.probe)).toEqual(['no-arguments']);
    expect(strictCalls(r, 'reset_cache')).toEqual([]);
    expect(r.stderrTail).not.toContain('DELETED');
  });

  it('states its coverage: reset_cache is not judged, with why', () => {
    const cov = checkOf(r, 'strict-arguments').coverage!;
    expect(cov.judged).toEqual(['server_status', 'list_items', 'get_item', 'delete_item', 'search']);
    expect(cov.notJudged).toEqual([{ tool: 'reset_cache', why: 'a valid call could run a tool that may write: it states no readOnlyHint: true and has no probes: entry' }]);
  });

  it('robust-input sends none of these calls and is not changed by them', () => {
    expect(r.calls.filter((c) => c.probe === 'no-arguments' || c.probe === 'extra-only').every((c) => STRICT_PROBES.has(c.probe))).toBe(true);
    const robust = checkOf(r, 'robust-input');
    expect(robust.findings.some((f) => f.evidence.calls?.some((s) => STRICT_PROBES.has(r.calls.find((c) => c.seq === s)!.probe)))).toBe(false);
  });
});

describe('correct-sdk.mjs', () => {
  it('passes strict-arguments', async () => {
    const r = await auditFixture('correct-sdk.mjs', { checks: { 'protocol-errors': { enabled: false }, concurrency: { enabled: false }, 'oversized-input': { enabled: false } } });
    const c = checkOf(r, 'strict-arguments');
    expect(c.verdict).toBe('pass');
    expect(graded(r, 'strict-arguments')).toEqual([]);
    expect(c.coverage!.judged.length).toBeGreaterThan(0);
  }, 60_000);
});

describe('firecrawl-mcp 3.26.0 (real server on FastMCP 4.3.2, zod 4): the framework\'s findings name it', () => {
  let r: Report;
  let tmp: string;
  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'sealmark-strict-fastmcp-'));
    const out = join(tmp, 'report.json');
    const run = await runCli(['audit', '--only', 'strict-arguments', '--env', 'FIRECRAWL_API_KEY=fc-test', '--format', 'json', '--output', out, '--', 'node', 'node_modules/firecrawl-mcp/dist/index.js']);
    expect([0, 1], run.stderr).toContain(run.code);
    r = JSON.parse(readFileSync(out, 'utf8')) as Report;
  }, 180_000);
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('is detected as fastmcp 4.3.2 on @modelcontextprotocol/sdk 1.32.2', () => {
    expect(r.target.sdk?.map((s) => `${s.name} ${s.version}`)).toEqual(['fastmcp 4.3.2', '@modelcontextprotocol/sdk 1.32.2']);
  });

  it('extra-dropped names fastmcp 4.3.2 (its listing adds additionalProperties: false; the zod object strips), with .strict() as the fix', () => {
    const f = findingsOf(r, 'strict-arguments', 'extra-dropped');
    expect(f.length).toBeGreaterThan(0);
    for (const x of f) {
      expect(x.sdkCause).toEqual({ sdk: 'fastmcp', version: '4.3.2', dependency: 'fastmcp' });
      expect(x.message).toContain('fastmcp 4.3.2 lists every parameters schema with additionalProperties: false');
      expect(x.message).toContain('`.strict()`');
      expect(x.message).toContain('suppress: entry (check: strict-arguments, messageId: extra-dropped)');
    }
  });

  it('refused-no-arguments names fastmcp 4.3.2 where its reply is FastMCP\'s validation of undefined arguments', () => {
    const f = findingsOf(r, 'strict-arguments', 'refused-no-arguments');
    expect(f.length).toBeGreaterThan(0);
    for (const x of f) {
      expect(x.evidence.quotes![0]).toMatch(/parameter validation failed: root: Invalid input: expected object, received undefined/);
      expect(x.sdkCause).toEqual({ sdk: 'fastmcp', version: '4.3.2', dependency: 'fastmcp' });
      expect(x.message).toContain('`.default({})`');
      expect(x.message).toContain('https://github.com/punkpeye/fastmcp/issues');
    }
  });
});

describe('strict-arguments findings of the author\'s own code name no SDK', () => {
  it('strict/strict-arguments.mjs (no SDK in its package) has no sdkCause', async () => {
    const r = await auditFixture('strict/strict-arguments.mjs', { checks: { 'protocol-errors': { enabled: false }, 'bounded-limits': { enabled: false }, 'oversized-input': { enabled: false }, concurrency: { enabled: false } } });
    for (const f of checkOf(r, 'strict-arguments').findings) expect(f.sdkCause, f.messageId).toBeUndefined();
    expect(findingsOf(r, 'strict-arguments', 'extra-dropped')[0]!.data.sdk).toBe('');
  }, 60_000);
});

function tool(inputSchema: unknown, annotations?: Record<string, unknown>): ListedTool {
  return { index: 0, name: 't', raw: { name: 't', inputSchema, annotations }, inputSchema, annotations };
}

describe('planStrict', () => {
  const strict = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false };
  const optional = { type: 'object', properties: { id: { type: 'string' } }, additionalProperties: false };

  it('a tool with required arguments gets the invalid no-arguments call, read-only or not', () => {
    expect(planStrict(tool(strict)).calls.map((c) => c.probe)).toEqual(['no-arguments']);
    expect(planStrict(tool(strict)).calls[0]!.invalidBecause).toEqual(["(root) must have required property 'id'"]);
  });

  it('a read-only tool: controls first, then the probes; extra-only with sampled valid arguments', () => {
    const { calls } = planStrict(tool(strict, { readOnlyHint: true }));
    expect(calls.map((c) => [c.probe, c.args])).toEqual([
      ['no-arguments', undefined],
      ['valid-arguments', { id: 'sealmark' }],
      ['extra-only', { id: 'sealmark', sm_unexpected: 'sealmark' }],
    ]);
    expect(planStrict(tool(optional, { readOnlyHint: true })).calls.map((c) => c.probe)).toEqual(['empty-arguments', 'no-arguments', 'valid-arguments', 'extra-only']);
  });

  it('a tool that may write gets no valid call; a probes: entry makes it safe and its arguments are used', () => {
    expect(planStrict(tool(optional))).toEqual({ calls: [], notJudged: 'a valid call could run a tool that may write: it states no readOnlyHint: true and has no probes: entry' });
    expect(planStrict(tool(strict), { id: 'mine' }).calls.map((c) => [c.probe, c.args])).toEqual([
      ['no-arguments', undefined],
      ['valid-arguments', { id: 'mine' }],
      ['extra-only', { id: 'mine', sm_unexpected: 'sealmark' }],
    ]);
  });

  // Found by a breaker on server-memory under SEALMARK_NO_OVERLAY=1: a probes: entry for
  // create_entities let strict-arguments send {"name":"create_entities"} with no arguments.
  it('where files are unprotected, a probes: entry licenses nothing of its own to a tool that may write; a read-only one keeps it', () => {
    const why = 'no sandbox (--no-sandbox)';
    for (const schema of [strict, optional]) {
      const plan = planStrict(tool(schema), { id: 'mine' }, why);
      expect(plan.calls).toEqual([]);
      expect(plan.notJudged).toBe(`not sent: it may write (it states no readOnlyHint: true), and ${why}: a tool that acted on invalid input would change your files (--allow-effects sends these calls)`);
    }
    expect(planStrict(tool(strict, { readOnlyHint: true }), { id: 'mine' }, why).calls.map((c) => [c.probe, c.args])).toEqual([
      ['no-arguments', undefined],
      ['valid-arguments', { id: 'mine' }],
      ['extra-only', { id: 'mine', sm_unexpected: 'sealmark' }],
    ]);
    // Without the entry, the read-only claim alone licenses only the invalid call.
    expect(planStrict(tool(strict, { readOnlyHint: true }), undefined, why).calls.map((c) => c.probe)).toEqual(['no-arguments']);
  });

  it('no extra-only where the schema admits undeclared keys', () => {
    const loose = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] };
    expect(planStrict(tool(loose, { readOnlyHint: true })).calls.map((c) => c.probe)).toEqual(['no-arguments']);
  });
});
