/**
 * annotations (pack design, scored; SPEC section 5, MCP 2025-11-25 ToolAnnotations) against real
 * fixture servers: stated hints, contradictions, blanket annotations, and behaviour against claim
 * in the sandbox (case C9: a read-only tool that writes a file; a closed-world tool that fetches).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { audit } from '../../src/audit.js';
import { renderText } from '../../src/report/reporters/text.js';
import { configRegistry } from '../../src/config/defaults.js';
import { parseConfig } from '../../src/config/schema.js';
import { LATER_PACKS_OFF, auditFixture, checkOf, findingsOf, fixture, graded } from '../helpers/run.js';
import { hintsOf } from '../../src/naming.js';
import type { Report } from '../../src/report/build.js';
import type { ListedTool } from '../../src/types.js';

const ID = 'annotations';
/** Only what these tests need: robust-input's valid calls and the effects pack's calls feed behaviour. */
const QUICK = { checks: { 'protocol-errors': { enabled: false }, 'bounded-limits': { enabled: false }, 'oversized-input': { enabled: false }, concurrency: { enabled: false } } };
const probes = (tool: string, args: Record<string, unknown>) => ({ ...QUICK, probes: [{ tool, arguments: args }] });

const scratch = mkdtempSync(join(tmpdir(), 'sealmark-annotations-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const runs: Record<string, Report> = {};
beforeAll(async () => {
  const jobs = {
    c9: auditFixture('design/readonly_writer.mjs', probes('replace_symbol', { file: 'a.txt', symbol: 'x', replacement: 'y' })),
    c9NoProbe: auditFixture('design/readonly_writer.mjs', QUICK),
    logger: auditFixture('design/readonly_logger.mjs', QUICK),
    closed: auditFixture('design/closed_world_fetch.mjs', probes('lookup_docs', { topic: 'x' })),
    blanket: auditFixture('design/blanket_annotations.mjs', probes('send_invite', { email: 'a@example.invalid' })),
    unannotated: auditFixture('design/unannotated.mjs', QUICK),
    refund: auditFixture('design/refund_pair.mjs', QUICK),
    // Without the sandbox the server runs in the directory it is given: a temporary one, not the repository.
    c9NoSandbox: audit({
      command: process.execPath,
      args: [fixture('design/readonly_writer.mjs')],
      config: parseConfig(probes('replace_symbol', { file: 'a.txt', symbol: 'x', replacement: 'y' }), configRegistry()),
      sandbox: false,
      cwd: scratch,
    }),
  };
  const done = await Promise.all(Object.entries(jobs).map(async ([k, p]) => [k, await p] as const));
  for (const [k, r] of done) runs[k] = r;
}, 120_000);

describe('C9: a read-only tool that writes a file', () => {
  it('fails with `read-only-effect`, the file as evidence, from the probes: call', () => {
    const r = runs.c9!;
    expect(checkOf(r, ID).verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['read-only-effect']);
    const [f] = findingsOf(r, ID, 'read-only-effect');
    expect(f!.message).toBe('replace_symbol: states readOnlyHint true, but the sandbox saw it act: file: created ./a.txt');
    const call = r.calls.find((c) => c.seq === f!.evidence.calls![0])!;
    expect([call.probe, call.tool, call.class]).toEqual(['user-probe', 'replace_symbol', 'accepted']);
    expect(call.effects).toEqual([{ kind: 'file', detail: 'created ./a.txt', summary: '2 bytes' }]);
    expect(f!.replay).toBe(`sealmark call --tool replace_symbol --args '{"file":"a.txt","symbol":"x","replacement":"y"}' -- ${process.execPath} ${r.target.command[1]}`);
  });

  it('without a valid call the claim cannot be tested: the statements alone pass', () => {
    expect(checkOf(runs.c9NoProbe!, ID).verdict).toBe('pass');
    expect(runs.c9NoProbe!.calls.filter((c) => c.effects?.length)).toEqual([]);
  });

  it('without the sandbox nothing is watched: no effects recorded, the statements alone judged', () => {
    const r = runs.c9NoSandbox!;
    expect(r.sandbox.kind).toBe('none');
    expect(r.calls.find((c) => c.probe === 'user-probe')!.effects).toBeUndefined();
    expect(checkOf(r, ID).verdict).toBe('pass');
    // The write happened for real, in the directory the server was given.
    expect(readdirSync(scratch)).toEqual(['a.txt']);
  });
});

describe('a read-only tool that writes a new file on every call', () => {
  it('is one read-only-effect finding: the first write quoted, the others counted, every call in the evidence', () => {
    const r = runs.logger!;
    const writes = r.calls.filter((c) => c.tool === 'get_time' && c.effects?.length);
    expect(writes.length).toBeGreaterThanOrEqual(2);
    const fs = findingsOf(r, ID, 'read-only-effect');
    expect(fs).toHaveLength(1);
    const more = writes.length - 1;
    expect(fs[0]!.message).toBe(`get_time: states readOnlyHint true, but the sandbox saw it act: file: ${writes[0]!.effects![0]!.detail} (and ${more} more effect${more === 1 ? '' : 's'} on ${writes.length} calls: see the evidence)`);
    expect(fs[0]!.evidence.calls).toEqual(writes.map((c) => c.seq));
    expect(fs[0]!.evidence.quotes).toEqual(writes.map((c) => c.effects![0]!.detail).slice(0, 10));
  });
});

describe('a closed-world tool that fetches', () => {
  it('fails with `closed-world-network`, not `read-only-effect` (reading the network is what open world means)', () => {
    const r = runs.closed!;
    expect(graded(r, ID)).toEqual(['closed-world-network']);
    const [f] = findingsOf(r, ID, 'closed-world-network');
    expect(f!.tool).toBe('lookup_docs');
    expect(String(f!.data.effect)).toMatch(/^network: the reply reports a failed connection: fetch failed/);
  });
});

describe('blanket annotations', () => {
  it('notes `blanket` (info: tool-naming scores the names) naming the reads and writes, and fails on send_invite running `mail`', () => {
    const r = runs.blanket!;
    expect(checkOf(r, ID).verdict).toBe('fail');
    expect(graded(r, ID)).toEqual(['read-only-effect']);
    const [b] = findingsOf(r, ID, 'blanket');
    expect(b!.level).toBe('info');
    expect(b!.data).toEqual({
      count: 5,
      annotations: '{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}',
      reads: 'get_item, list_items',
      writes: 'delete_item, send_invite, update_item',
    });
    const [e] = findingsOf(r, ID, 'read-only-effect');
    expect(e!.tool).toBe('send_invite');
    expect(String(e!.data.effect)).toMatch(/^shim: mail -s invite a@example\.invalid/);
  });
});

describe('stated hints', () => {
  it('a server with no annotations: `no-read-only-hint` for each tool, partial', () => {
    const r = runs.unannotated!;
    expect(checkOf(r, ID).verdict).toBe('partial');
    expect(findingsOf(r, ID, 'no-read-only-hint').map((f) => f.tool)).toEqual(['get_status', 'create_ticket', 'purge_cache']);
  });

  it('the refund pair states every hint consistently: pass', () => {
    expect(checkOf(runs.refund!, ID).verdict).toBe('pass');
    expect(checkOf(runs.refund!, ID).findings).toEqual([]);
  });
});

describe('hintsOf', () => {
  const tool = (annotations: Record<string, unknown> | undefined): ListedTool => ({ index: 0, name: 't', raw: {}, inputSchema: {}, annotations });
  it('applies the MCP defaults to what is absent, and ignores what is not a Boolean', () => {
    expect(hintsOf(tool(undefined))).toEqual({ stated: { readOnlyHint: undefined, destructiveHint: undefined, idempotentHint: undefined, openWorldHint: undefined }, readOnly: false, destructive: true, idempotent: false, openWorld: true });
    const h = hintsOf(tool({ readOnlyHint: 'yes', destructiveHint: false, openWorldHint: false }));
    expect([h.stated.readOnlyHint, h.readOnly, h.destructive, h.openWorld]).toEqual([undefined, false, false, false]);
  });
});

describe('pasted or malformed annotations (adversarial-design fixtures)', () => {
  it('the same annotations with their keys in another order are still `blanket`', async () => {
    const r = await auditFixture('adversarial-design/blanket-reordered.mjs', QUICK);
    expect(findingsOf(r, ID, 'blanket')).toHaveLength(1);
  });

  it('a hint given as a string is `hint-not-boolean`, not "not stated"', async () => {
    const r = await auditFixture('adversarial-design/naming-evasions.mjs', QUICK);
    const [f] = findingsOf(r, ID, 'hint-not-boolean');
    expect([f!.tool, f!.data.hint]).toEqual(['archive_note', 'readOnlyHint']);
    expect(findingsOf(r, ID, 'no-read-only-hint').filter((x) => x.tool === 'archive_note')).toEqual([]);
  });
});

// MCP 2024-11-05 has no tool annotations: a server that speaks only it is not graded on them.
describe('design/old-protocol.mjs (MCP 2024-11-05 only)', () => {
  it('annotations is n/a with the reason, not a partial per tool', async () => {
    const r = await auditFixture('design/old-protocol.mjs', { checks: { ...LATER_PACKS_OFF, annotations: { enabled: true }, 'idempotency-key': { enabled: true } } });
    expect(r.protocol?.version).toBe('2024-11-05');
    const c = checkOf(r, 'annotations');
    expect(c.verdict).toBe('n/a');
    expect(c.notes).toEqual(['the server negotiated MCP 2024-11-05, which has no tool annotations']);
    expect(c.findings).toEqual([]);
    // idempotency-key: the absent idempotentHint of a 2024-11-05 server is noted, not graded.
    const keys = findingsOf(r, 'idempotency-key', 'no-key');
    // set_title: `set` is idempotent by nature, no key asked for.
    expect(keys.map((f) => [f.tool, f.level])).toEqual([['save_note', 'info'], ['add_tag', 'info']]);
    expect(keys[0]!.data.hint).toBe('absent: MCP 2024-11-05 has no annotations');
    // Two identical findings stay two lines; a third like them makes one grouped line (SPEC section 8).
    const text = renderText(r, { color: false, verbose: true });
    expect(text.match(/info no-key: (save_note|add_tag): /g)).toHaveLength(2);
    const three = structuredClone(r);
    const ik3 = three.checks.find((x) => x.id === 'idempotency-key')!;
    const like = structuredClone(ik3.findings.find((f) => f.messageId === 'no-key' && f.tool === 'add_tag')!);
    ik3.findings.push({ ...like, tool: 'tag_more', data: { ...like.data, tool: 'tag_more' }, message: like.message.replace('add_tag', 'tag_more') });
    const grouped = renderText(three, { color: false, verbose: true });
    expect(grouped).toContain('      info no-key: 3 tools: save_note, add_tag, tag_more\n');
    expect(grouped.match(/no-key/g)).toHaveLength(1);
    // Findings that differ in more than their tool are not grouped.
    ik3.findings.find((f) => f.messageId === 'no-key' && f.tool === 'add_tag')!.data.hint = 'something else';
    const apart = renderText(three, { color: false, verbose: true });
    expect(apart).not.toContain('no-key: 3 tools:');
    expect(apart.match(/no-key/g)).toHaveLength(3);
  }, 60_000);
});
