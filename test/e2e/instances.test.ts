/**
 * Several sandboxed instances of one server (SPEC section 3 step 3, issue 15): a server with many
 * tools is audited as several instances, each with a sandbox, an overlay and an effect log of its
 * own, calling its share of the tools; `--instances` says how many run at once, and the answers
 * are the same whatever it says: the same verdicts, finding fingerprints, messages and evidence
 * (the calls a finding points at: their tool, probe, request and effects).
 *
 * The server is overlay/data-writer.mjs with 12 more read-only tools (25 in all, so five instances
 * share the tools, and the first also makes the whole-server probes),
 * pointed at a data folder of the user's: thirteen tools each with its own write (two of them late,
 * after the reply), so an effect put on the wrong instance's call, or lost between instances,
 * changes a finding; the read-only ones get robust-input's and the limits pack's probes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { audit, toListedTool } from '../../src/audit.js';
import { configRegistry } from '../../src/config/defaults.js';
import { parseConfig } from '../../src/config/schema.js';
import { networkNamespaceAvailable } from '../../src/target/sandbox.js';
import { instanceCount, shareTools } from '../../src/probes/instances.js';
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

/** The transcript's lines: instance (0 when absent), time (ms), direction and message. */
function linesOf(path: string): { instance: number; at: number; dir: string; message: { method?: string; raw?: string } }[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { instance?: number; t: string; dir: string; message: { method?: string; raw?: string } })
    .map((l) => ({ instance: l.instance ?? 0, at: Date.parse(l.t), dir: l.dir, message: l.message }));
}

/** A tools/call line: a message, or raw text (the limits pack's `NaN` lines are kept as written). */
const isCall = (l: { dir: string; message: { method?: string; raw?: string } }) => l.dir === 'send' && (l.message.method === 'tools/call' || (l.message.raw ?? '').includes('"method":"tools/call"'));

/** [first, last] line time of each instance. */
function spans(path: string): [number, number][] {
  const out: [number, number][] = [];
  for (const l of linesOf(path)) {
    const s = (out[l.instance] ??= [l.at, l.at]);
    s[1] = l.at;
  }
  return out;
}

describe.runIf(linux)('an audit of 25 tools, shared among five sandboxed instances', () => {
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
    const args = [fixture('overlay/data-writer.mjs'), '--data', data, '--extra', '12'];
    // One at a time, then the default (twice the cores and one at once) as a user runs it, with a
    // temp folder of its own to show that every instance's sandbox is removed.
    one = await audit({ command: process.execPath, args, config: config(), instances: 1, transcriptPath: join(dir, 'one.jsonl') });
    mkdirSync(join(dir, 'tmp'));
    const out = join(dir, 'four.json');
    const run = await runCli(['audit', '--quiet', '--format', 'json', '--output', out, '--transcript', join(dir, 'four.jsonl'), '--', process.execPath, ...args], { env: { TMPDIR: join(dir, 'tmp') } });
    expect(run.code, run.stderr).toBe(1);
    four = JSON.parse(readFileSync(out, 'utf8')) as Report;
  }, 240_000);
  afterAll(() => {
    rmSync(data, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives the same verdicts, fingerprints, messages and evidence one at a time and side by side', () => {
    expect(four.status).toBe('audited');
    expect(four.tools).toHaveLength(25);
    expect(said(four)).toEqual(said(one));
    expect(four.grade).toEqual(one.grade);
    // The effects were seen at all (an audit that saw none would also be the same).
    const effects = one.calls.filter((c) => c.probe === 'default-call' && (c.effects?.length ?? 0) > 0).map((c) => c.tool);
    expect(effects.length).toBeGreaterThanOrEqual(10);
  });

  it('calls each tool on one instance, the one the share gives it; the whole-server probes go to the first', () => {
    expect(instanceCount(25)).toBe(5);
    // The listing as the server gave it (the report keeps names only), from the transcript.
    const reply = linesOf(join(dir, 'four.jsonl')).find((l) => l.dir === 'recv' && 'result' in l.message && Array.isArray((l.message as { result: { tools?: unknown } }).result.tools))!;
    const listed = (reply.message as unknown as { result: { tools: unknown[] } }).result.tools.map(toListedTool);
    const owner = shareTools(listed, 5);
    // Neighbours in the listing together: each share is one run of the listing.
    const order = four.tools.map((t) => owner.get(t.name)!);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(new Set(order)).toEqual(new Set([0, 1, 2, 3, 4]));
    const seen = new Map<string, Set<number>>();
    for (const c of four.calls) {
      expect(c.instance, `call ${c.seq}`).toBeDefined();
      if (!c.tool || WHOLE_SERVER.has(c.probe)) continue;
      (seen.get(c.tool) ?? seen.set(c.tool, new Set()).get(c.tool)!).add(c.instance!);
    }
    expect([...seen.keys()].sort()).toEqual(four.tools.map((t) => t.name).sort());
    for (const [tool, at] of seen) expect([...at], tool).toEqual([owner.get(tool)]);
    for (const c of four.calls.filter((x) => ['array-params', 'unknown-method', 'concurrent-call'].includes(x.probe))) expect(c.instance).toBe(0);
    expect(new Set(four.calls.map((c) => c.instance))).toEqual(new Set([0, 1, 2, 3, 4]));
    // One at a time, the calls went to the same instances.
    expect(one.calls.map((c) => [c.tool, c.probe, c.instance])).toEqual(four.calls.map((c) => [c.tool, c.probe, c.instance]));
  });

  it('runs the instances one after another with --instances 1, and side by side by default', () => {
    const serial = spans(join(dir, 'one.jsonl'));
    expect(serial).toHaveLength(5);
    for (const k of [1, 2, 3, 4]) expect(serial[k]![0], `instance ${k}`).toBeGreaterThanOrEqual(serial[k - 1]![1]);
    const side = spans(join(dir, 'four.jsonl'));
    expect(side).toHaveLength(5);
    // Side by side (at least three at once on a machine of one core): the next ones started before the first was done.
    for (const k of [1, 2, 3]) expect(side[k]![0], `instance ${k}`).toBeLessThan(side[0]![1]);
  });

  it('numbers the calls once across the instances, and the transcript lines of each instance say which it is', () => {
    expect(four.calls.map((c) => c.seq)).toEqual(four.calls.map((_, i) => i + 1));
    // The array-params probe is judged after every other gatherer of every instance, and numbered so.
    const at = four.calls.findIndex((c) => c.probe === 'array-params');
    expect(four.calls.slice(at + 1).map((c) => c.probe)).toEqual(['liveness']);
    const lines = linesOf(join(dir, 'four.jsonl'));
    for (const k of [1, 2, 3, 4]) {
      const mine = lines.filter((l) => l.instance === k);
      // Each started as the first did: the same handshake, then its own listing.
      expect(mine[0]!.message.method, `instance ${k}`).toBe(lines[0]!.message.method);
      expect(mine.some((l) => l.dir === 'send' && l.message.method === 'initialize')).toBe(true);
      expect(mine.some((l) => l.dir === 'send' && l.message.method === 'tools/list')).toBe(true);
      // Its lines are its calls' (every call the report says went to it, and no other).
      const calls = four.calls.filter((c) => c.instance === k && c.method === 'tools/call');
      expect(calls.length, `instance ${k}`).toBeGreaterThan(0);
      expect(mine.filter(isCall).length).toBe(calls.length);
    }
    // No line was lost to another instance's writes: every request sent has its line.
    const sent = lines.filter(isCall).length;
    expect(sent).toBe(four.calls.filter((c) => c.method === 'tools/call').length);
  });

  it('leaves the user’s files as they were, and no sandbox behind', () => {
    expect(hashes(data)).toEqual(before);
    expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
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
      const r = await audit({ command: process.execPath, args: [fixture('overlay/data-writer.mjs'), '--data', data, '--extra', '12'], config, sandbox: false, instances: 4 });
      expect(r.status).toBe('audited');
      expect(r.calls.every((c) => c.instance === undefined)).toBe(true);
      expect(hashes(data)).toEqual(before);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  }, 120_000);
});

describe.runIf(linux)('a tool that ends its instance while the first instance waits on the protocol probes', () => {
  // instances-exit.mjs: 12 tools (three instances share them; the first also makes the whole-server probes);
  // t12 exits on null, and the array-params request is never answered, so the first instance's
  // protocol probes are still under way (for the hang limit) when t12's instance exits.
  let report: Report;
  beforeAll(async () => {
    const config = parseConfig({ checks: { 'robust-input': { hang_ms: 4000 } } }, configRegistry());
    report = await audit({ command: process.execPath, args: [fixture('instances-exit.mjs')], config });
  }, 120_000);

  it('ran as three instances, and t12’s instance ended during the first instance’s protocol probes', () => {
    expect(new Set(report.calls.map((c) => c.instance))).toEqual(new Set([0, 1, 2]));
    const exited = report.calls.filter((c) => c.reply.kind === 'exited');
    expect(exited.map((c) => [c.probe, c.tool])).toEqual([['liveness', 't12']]);
    expect(exited[0]!.instance).toBeGreaterThan(0);
    const arrayParams = report.calls.find((c) => c.probe === 'array-params')!;
    expect(arrayParams.reply.kind).toBe('hang');
  });

  it('the exit is robust-input’s finding after t12; protocol-errors judges only the first instance’s calls', () => {
    const robust = report.checks.find((c) => c.id === 'robust-input')!;
    expect(robust.verdict).toBe('fail');
    expect(robust.findings.map((f) => [f.messageId, f.level])).toEqual([['stopped-answering', 'fail']]);
    const exited = report.calls.find((c) => c.reply.kind === 'exited')!;
    expect(robust.findings[0]!.evidence.calls).toEqual([exited.seq]);
    const protocol = report.checks.find((c) => c.id === 'protocol-errors')!;
    expect(protocol.findings.map((f) => f.messageId)).toEqual(['no-reply']);
    const evidence = protocol.findings.flatMap((f) => f.evidence.calls ?? []);
    for (const seq of evidence) expect(report.calls.find((c) => c.seq === seq)?.instance).toBe(0);
  });
});
