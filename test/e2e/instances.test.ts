/**
 * Several sandboxed instances of one server (`--instances`, SPEC section 3 step 3, issue 15): the
 * tools are shared out among instances, each with a sandbox, an overlay and an effect log of its
 * own, and the audit gives the answers one instance gives: the same verdicts, finding fingerprints,
 * messages and evidence (the calls a finding points at: their tool, probe, request and effects).
 *
 * The server is overlay/data-writer.mjs, pointed at a data folder of the user's: thirteen tools,
 * each with its own write (two of them late, after the reply), so an effect put on the wrong
 * instance's call, or lost between instances, changes a finding.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { audit } from '../../src/audit.js';
import { configRegistry } from '../../src/config/defaults.js';
import { parseConfig } from '../../src/config/schema.js';
import { networkNamespaceAvailable } from '../../src/target/sandbox.js';
import { shareTools } from '../../src/probes/instances.js';
import type { Report } from '../../src/report/build.js';
import { fixture } from '../helpers/run.js';
import { runCli } from '../helpers/cli.js';
import { hashes, makeData } from '../helpers/data.js';

const linux = process.platform === 'linux' && networkNamespaceAvailable().ok;

/** The probes that are about the whole server: they run once, on the first instance. */
const WHOLE_SERVER = new Set(['array-params', 'unknown-method', 'unknown-tool', 'concurrent-call', 'concurrent-list', 'tools-list', 'instance-list', 'liveness']);

/** What a finding says, with the numbers that differ from run to run (a pid in a file name, ms) taken out. */
function said(report: Report): unknown[] {
  const norm = (s: string) => s.replace(/fixture-\d+/g, 'fixture-N').replace(/\d+ ms/g, 'N ms');
  const callOf = (seq: number) => report.calls.find((c) => c.seq === seq)!;
  return report.checks.map((c) => ({
    id: c.id,
    verdict: c.verdict,
    notes: c.notes.map(norm),
    findings: c.findings.map((f) => ({
      messageId: f.messageId,
      fingerprint: f.fingerprint,
      message: norm(f.message),
      calls: (f.evidence.calls ?? []).map((seq) => {
        const x = callOf(seq);
        return { tool: x.tool, probe: x.probe, request: x.request.replace(/"id":\d+,/, ''), effects: (x.effects ?? []).map((e) => norm(`${e.kind} ${e.detail} ${e.summary ?? ''}${e.lateMs !== undefined ? ' late' : ''}`)) };
      }),
    })),
  }));
}

describe.runIf(linux)('an audit shared among four sandboxed instances', () => {
  let data: string;
  let before: Record<string, string>;
  let dir: string;
  let one: Report;
  let four: Report;
  const config = () => parseConfig({}, configRegistry());

  beforeAll(async () => {
    data = makeData();
    before = hashes(data);
    dir = mkdtempSync(join(tmpdir(), 'sealmark-instances-test-'));
    const args = [fixture('overlay/data-writer.mjs'), '--data', data];
    one = await audit({ command: process.execPath, args, config: config(), instances: 1, transcriptPath: join(dir, 'one.jsonl') });
    four = await audit({ command: process.execPath, args, config: config(), instances: 4, transcriptPath: join(dir, 'four.jsonl') });
  }, 180_000);
  afterAll(() => {
    rmSync(data, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives the verdicts, fingerprints, messages and evidence of one instance', () => {
    expect(four.status).toBe('audited');
    expect(said(four)).toEqual(said(one));
    expect(four.grade).toEqual(one.grade);
    // The effects were seen at all (an audit that saw none would also be the same).
    const effects = one.calls.filter((c) => c.probe === 'default-call' && (c.effects?.length ?? 0) > 0).map((c) => c.tool);
    expect(effects.length).toBeGreaterThanOrEqual(10);
  });

  it('calls each tool on one instance, the one the share gives it; the whole-server probes go to the first', () => {
    const owner = shareTools(four.tools.map((t, index) => ({ index, name: t.name, raw: {}, inputSchema: {}, annotations: undefined })), 4);
    const seen = new Map<string, Set<number>>();
    for (const c of four.calls) {
      expect(c.instance, `call ${c.seq}`).toBeDefined();
      if (!c.tool || WHOLE_SERVER.has(c.probe)) continue;
      (seen.get(c.tool) ?? seen.set(c.tool, new Set()).get(c.tool)!).add(c.instance!);
    }
    expect([...seen.keys()].sort()).toEqual(four.tools.map((t) => t.name).sort());
    for (const [tool, at] of seen) expect([...at], tool).toEqual([owner.get(tool)]);
    for (const c of four.calls.filter((x) => ['array-params', 'unknown-method', 'concurrent-call'].includes(x.probe))) expect(c.instance).toBe(0);
    expect(new Set(four.calls.map((c) => c.instance))).toEqual(new Set([0, 1, 2, 3]));
    // One instance: no call says which.
    expect(one.calls.every((c) => c.instance === undefined)).toBe(true);
  });

  it('numbers the calls once across the instances, and the transcript lines of each instance say which it is', () => {
    expect(four.calls.map((c) => c.seq)).toEqual(four.calls.map((_, i) => i + 1));
    const lines = readFileSync(join(dir, 'four.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { instance?: number; dir: string; message: { method?: string } });
    for (const k of [1, 2, 3]) {
      const mine = lines.filter((l) => l.instance === k);
      // Each started as the first did: the same handshake, then its own listing.
      expect(mine[0]!.message.method, `instance ${k}`).toBe(lines[0]!.message.method);
      expect(mine.some((l) => l.dir === 'send' && l.message.method === 'initialize')).toBe(true);
      expect(mine.some((l) => l.dir === 'send' && l.message.method === 'tools/list')).toBe(true);
      // Its lines are its calls' (every call the report says went to it, and no other).
      const calls = four.calls.filter((c) => c.instance === k && c.method === 'tools/call');
      expect(calls.length, `instance ${k}`).toBeGreaterThan(0);
      expect(mine.filter((l) => l.dir === 'send' && l.message.method === 'tools/call').length).toBe(calls.length);
    }
    // No line was lost to another instance's writes: every request sent has its line.
    const sent = lines.filter((l) => l.dir === 'send' && l.message.method === 'tools/call').length;
    expect(sent).toBe(four.calls.filter((c) => c.method === 'tools/call').length);
  });

  it('leaves the user’s files as they were, and no sandbox behind', () => {
    expect(hashes(data)).toEqual(before);
    const left = readdirSync(tmpdir()).filter((n) => /^sealmark-(sandbox|upper)/.test(n) && existsSync(join(tmpdir(), n)));
    expect(left).toEqual([]);
  });
});

describe('--instances on the command line', () => {
  it('a value that is not an integer from 1 to 16 is a usage error naming the flag', async () => {
    for (const bad of ['0', '17', 'two', '1.5']) {
      const r = await runCli(['audit', '--instances', bad, '--', process.execPath, fixture('overlay/data-writer.mjs')]);
      expect(r.code, bad).toBe(2);
      expect(r.stderr).toContain(`--instances "${bad}": expected an integer from 1 to 16`);
    }
  });

  it.runIf(linux)('without the sandbox the audit runs one instance (instances would change each other’s real files)', async () => {
    const data = makeData();
    const before = hashes(data);
    try {
      const config = parseConfig({ checks: { 'default-call-effects': { enabled: false }, 'filler-call-effects': { enabled: false }, 'idempotency-key': { enabled: false }, 'two-step-writes': { enabled: false } } }, configRegistry());
      const r = await audit({ command: process.execPath, args: [fixture('overlay/data-writer.mjs'), '--data', data], config, sandbox: false, instances: 4 });
      expect(r.status).toBe('audited');
      expect(r.calls.every((c) => c.instance === undefined)).toBe(true);
      expect(hashes(data)).toEqual(before);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  }, 120_000);
});
