/**
 * Bad input to sealmark itself: a stdout flood, a 20 MB reply line, and servers that hang, exit or
 * never answer. sealmark must finish, stay bounded, and leave no process behind (SPEC section 3,
 * step 4: "no orphan processes").
 *
 * The report does not expose the server's pid, so each audit passes the fixture an extra, unique
 * argument (the fixtures ignore unknown arguments) and `ps` is searched for it during and after the run.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { LATER_PACKS_OFF, auditFixture, checkOf, findingsOf, fixtureCommand } from '../helpers/run.js';
import { audit } from '../../src/audit.js';
import { INVALID_PROBES } from '../../src/checks/robust-input.js';
import { networkNamespaceAvailable } from '../../src/target/sandbox.js';
import { configRegistry } from '../../src/config/defaults.js';
import { parseConfig } from '../../src/config/schema.js';
import type { Report } from '../../src/report/build.js';

const execFileP = promisify(execFile);

/** Processes whose command line contains `tag`. */
async function processesWith(tag: string): Promise<{ pid: number; args: string }[]> {
  const { stdout } = await execFileP('ps', ['-eo', 'pid=,args='], { maxBuffer: 16 * 1024 * 1024 });
  const out: { pid: number; args: string }[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^\s*(\d+)\s+(.*)$/.exec(line);
    if (m && m[2]!.includes(tag)) out.push({ pid: Number(m[1]), args: m[2]! });
  }
  return out;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

let counter = 0;

/**
 * Audits a fixture while watching its process; returns the report, the pids seen, and what is left
 * after. `ps` runs only a few times (300 ms after the start, and when robust-input starts), so the
 * watching does not slow the audit down.
 */
async function watchedAudit(
  name: string,
  raw: Record<string, unknown> = {},
  extra: string[] = [],
): Promise<{ report: Report; seen: number[]; left: { pid: number; args: string }[]; ms: number }> {
  const tag = `--sealmark-test-tag-${process.pid}-${++counter}-${name.replace(/\W/g, '_')}`;
  const seen = new Set<number>();
  const snapshots: Promise<void>[] = [];
  const snapshot = () => {
    snapshots.push(
      processesWith(tag).then((ps) => {
        for (const p of ps) seen.add(p.pid);
      }),
    );
  };
  const { command, args } = fixtureCommand(name);
  const timer = setTimeout(snapshot, 300);
  let probing = false;
  const t0 = Date.now();
  const report = await audit({
    command,
    args: [...args, ...extra, tag],
    config: parseConfig(raw, configRegistry()),
    onProgress: (p) => {
      if (p.phase === 'robust-input' && !probing) {
        probing = true;
        snapshot();
      }
    },
  });
  const ms = Date.now() - t0;
  clearTimeout(timer);
  await Promise.all(snapshots);
  const left = await processesWith(tag);
  return { report, seen: [...seen], left, ms };
}

function expectNoneLeft(w: { seen: number[]; left: { pid: number; args: string }[] }, mustHaveSeen: boolean): void {
  if (mustHaveSeen) expect(w.seen.length, 'the server process was seen while it ran').toBeGreaterThan(0);
  expect(w.left).toEqual([]);
  for (const pid of w.seen) expect(isAlive(pid), `pid ${pid}`).toBe(false);
}

describe('stdout-flood.mjs: 50 MB of garbage lines before every reply', () => {
  it('completes with a bounded `stdout-noise` finding; replies are still matched; nothing left running', async () => {
    const w = await watchedAudit('stdout-flood.mjs', { checks: { ...LATER_PACKS_OFF, 'protocol-errors': { enabled: false } } });
    const r = w.report;
    expect(r.status).toBe('audited');
    expect(checkOf(r, 'handshake').verdict).toBe('partial');
    const [f] = findingsOf(r, 'handshake', 'stdout-noise');
    // Every flood line was counted: 51,200 lines of 1,023 bytes (plus newline) per tools/call.
    const toolCalls = r.calls.filter((c) => c.method === 'tools/call').length;
    expect(toolCalls).toBeGreaterThanOrEqual(5);
    expect(f!.data.count).toBe(51_200 * toolCalls);
    expect(f!.data.bytes).toBe(51_200 * 1023 * toolCalls);
    expect(Number(f!.data.bytes)).toBeGreaterThanOrEqual(50 * 1024 * 1024);
    // Only a few lines kept, each cut short.
    expect(f!.evidence.quotes!.length).toBeGreaterThan(0);
    expect(f!.evidence.quotes!.length).toBeLessThanOrEqual(5);
    for (const q of f!.evidence.quotes!) {
      expect(q.startsWith('garbage xxx')).toBe(true);
      expect(q.length).toBeLessThanOrEqual(200);
    }
    expect(JSON.stringify(r).length).toBeLessThan(500_000);
    // The replies behind the flood were read and classified.
    expect(checkOf(r, 'robust-input').verdict).not.toBe('fail');
    // robust-input's invalid calls are all refused (strict-arguments' valid ones are answered).
    expect(r.calls.filter((c) => c.method === 'tools/call' && INVALID_PROBES.has(c.probe)).every((c) => c.class === 'rejected')).toBe(true);
    expectNoneLeft(w, true);
  });
});

describe('huge-reply.mjs: a 20 MB reply line to every call', () => {
  it('drops each reply at the line limit quickly (well under the hang limit) and reports `protocol-error`', async () => {
    const w = await watchedAudit('huge-reply.mjs', { checks: { ...LATER_PACKS_OFF, 'protocol-errors': { enabled: false } } });
    const r = w.report;
    const hangLimitMs = 10_000;
    expect(r.status).toBe('audited');
    // robust-input's calls (and their liveness follow-ups) only: the effects pack's default-call
    // and strict-arguments' calls to dump also get the 20 MB line, but they are not robust-input's evidence.
    const calls = r.calls.filter((c) => c.method === 'tools/call' && INVALID_PROBES.has(c.probe));
    expect(calls.length).toBeGreaterThanOrEqual(4);
    for (const c of calls) {
      expect(c.class, c.probe).toBe('protocol-error');
      expect(c.reply.kind).toBe('malformed');
      expect(c.durationMs, c.probe).toBeLessThan(hangLimitMs);
      expect(JSON.stringify(c.reply).length, "the 20 MB line is not kept").toBeLessThan(1000);
    }
    const [f] = findingsOf(r, 'robust-input', 'protocol-error');
    expect(f!.level).toBe('partial');
    expect(f!.message).toMatch(/^dump: the reply to wrong-types is not valid JSON-RPC \(reply of \d+ bytes exceeds the 16777216 byte line limit and was dropped unread\)$/);
    expect(Number(/reply of (\d+) bytes/.exec(f!.message)![1])).toBeGreaterThan(20 * 1024 * 1024);
    expect(f!.evidence.calls).toEqual(calls.map((c) => c.seq));
    expect(checkOf(r, 'robust-input').verdict).toBe('partial');
    // After each protocol error, liveness: the server is asked, and answers.
    for (const c of calls) {
      const next = r.calls.find((x) => x.seq === c.seq + 1)!;
      expect(next.probe).toBe('liveness');
      expect(next.reply.kind).toBe('response');
    }
    // A huge line is not stdout noise when it answered a request in flight.
    expect(findingsOf(r, 'handshake', 'stdout-noise')).toEqual([]);
    expect(JSON.stringify(r).length).toBeLessThan(500_000);
    expectNoneLeft(w, true);
  });
});

describe('no process is left behind', () => {
  it('a server that hangs on calls', async () => {
    const w = await watchedAudit('hangs-on-wrong-type.mjs', { checks: { 'robust-input': { hang_ms: 300 }, 'protocol-errors': { enabled: false } } });
    expect(checkOf(w.report, 'robust-input').verdict).toBe('fail');
    expectNoneLeft(w, true);
  });

  it('a server that never answers initialize (timeout_init_sec 1)', async () => {
    const w = await watchedAudit('never-initializes.mjs', { timeout_init_sec: 1 });
    expect(w.report.notAudited?.reason).toBe('init-timeout');
    expect(w.ms).toBeLessThan(5000);
    expectNoneLeft(w, true);
  });

  it('a server that exits during the handshake', async () => {
    const w = await watchedAudit('exits-during-init.mjs');
    expect(w.report.notAudited?.reason).toBe('exited-during-init');
    expectNoneLeft(w, false);
  });

  it('a server that exits on a probe', async () => {
    const w = await watchedAudit('exits-on-null.mjs');
    expect(checkOf(w.report, 'robust-input').verdict).toBe('fail');
    expectNoneLeft(w, false);
  });

  it('an SDK server and a Python server, after a full audit', async () => {
    const sdk = await watchedAudit('correct-sdk.mjs', { checks: { 'protocol-errors': { enabled: false } } });
    expect(sdk.report.status).toBe('audited');
    expectNoneLeft(sdk, true);
    const py = await watchedAudit('c2_traceback.py', { checks: { 'robust-input': { hang_ms: 2000 } } });
    expect(py.report.status).toBe('audited');
    expectNoneLeft(py, true);
  });
});

/**
 * True while `pid` runs. A killed process whose parent died waits as a zombie until init reaps it
 * (this sandbox's init does not), so a zombie counts as ended.
 */
/**
 * The processes whose command line holds `tag` still running 2 s after an audit returned (SIGKILL
 * was sent at close; the kernel ends a process a moment later on a busy machine). Any found are
 * killed, so a failing test leaves nothing behind.
 */
async function leftWith(tag: string): Promise<{ pid: number; args: string }[]> {
  const deadline = Date.now() + 2000;
  let left = (await processesWith(tag)).filter((p) => running(p.pid));
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    left = (await processesWith(tag)).filter((p) => running(p.pid));
  }
  for (const p of left) process.kill(p.pid, 'SIGKILL');
  return left;
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('the whole process tree ends at close (SPEC section 3, step 4)', () => {
  const ns = networkNamespaceAvailable();
  // Skipped, with the reason, where user namespaces are not permitted (the process group still ends).
  it.skipIf(!ns.ok)(`in the sandbox, a grandchild in its own session (setsid) ends too${ns.ok ? '' : ` [skipped: ${ns.why}]`}`, async () => {
    const tag = `sealmark-setsid-${process.pid}-${Date.now()}`;
    const report = await auditFixture('spawns-setsid-grandchild.mjs', { checks: { 'protocol-errors': { enabled: false } } }, [tag]);
    expect(report.status).toBe('audited');
    expect(report.sandbox).toMatchObject({ kind: 'sandbox', network: 'namespace' });
    const deadline = Date.now() + 2000;
    let left = await processesWith(tag);
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      left = (await processesWith(tag)).filter((p) => running(p.pid));
    }
    expect(left).toEqual([]);
  });

  it.runIf(process.platform === 'linux')('with --no-sandbox, a double-forked grandchild in its own session (setsid) ends too: sealmark tracks the whole tree by its mark', async () => {
    const tag = `sealmark-setsid-nosandbox-${process.pid}-${Date.now()}`;
    const report = await auditFixture('spawns-setsid-grandchild.mjs', { checks: { 'protocol-errors': { enabled: false } } }, [tag], { sandbox: false });
    expect(report.status).toBe('audited');
    expect(report.sandbox.kind).toBe('none');
    expect(await leftWith(tag)).toEqual([]);
  });

  // In the sandbox nothing looks at /proc: the pid namespace alone ends what the server started.
  it.skipIf(!ns.ok)(`in the sandbox, a grandchild that ignores SIGTERM ends with the pid namespace${ns.ok ? '' : ` [skipped: ${ns.why}]`}`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sealmark-tree-ns-'));
    const tag = `sealmark-sigterm-ns-${process.pid}-${Date.now()}`;
    try {
      // The pid file lands in the sandbox's copy-on-write layer, never in `dir`.
      const report = await auditFixture('spawns-grandchild.mjs', { checks: { 'protocol-errors': { enabled: false } } }, [join(dir, 'grandchild.pid'), tag]);
      expect(report.status).toBe('audited');
      expect(report.sandbox).toMatchObject({ kind: 'sandbox', network: 'namespace' });
      expect(readdirSync(dir)).toEqual([]);
      expect(await leftWith(tag)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a grandchild that ignores SIGTERM is gone after the audit (--no-sandbox)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sealmark-tree-'));
    const tag = `sealmark-sigterm-${process.pid}-${Date.now()}`;
    try {
      const pidFile = join(dir, 'grandchild.pid');
      // The group kill and the tree kill at work (the grandchild is found by its tag).
      const report = await auditFixture('spawns-grandchild.mjs', { checks: { 'protocol-errors': { enabled: false } } }, [pidFile, tag], { sandbox: false });
      expect(report.status).toBe('audited');
      expect(Number(readFileSync(pidFile, 'utf8'))).toBeGreaterThan(0);
      expect(await leftWith(tag)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

});

/**
 * A server busy past the hang limit is slow, not gone (found by a breaker on server-filesystem under
 * load): busy-reader.mjs works 3.75 s on the 100,000 paths of the oversized-array probe and reads
 * nothing meanwhile. With a 1.5 s limit, the probe gets no answer; the server is still at work on
 * it, so it is started again, and the deep-object probe goes to the new start instead of waiting
 * behind the busy call and being blamed for its time. No liveness check is failed.
 */
describe('a server still at work on a call past the hang limit (busy-reader.mjs)', () => {
  it('gets one no-answer for that call: no not-alive, and the next probe goes to a fresh start', async () => {
    const report = await auditFixture('busy-reader.mjs', { checks: { 'robust-input': { hang_ms: 1500 } } });
    const over = checkOf(report, 'oversized-input');
    expect(over.findings.map((f) => [f.messageId, f.tool, f.data.param, f.data.what])).toEqual([['no-answer', 'read_paths', 'paths', 'a 100,000-item array']]);
    const array = report.calls.find((x) => x.probe === 'oversized-array')!;
    expect(report.restarts?.map((r) => [r.afterSeq, r.ok, r.why])).toEqual([[array.seq, true, 'still at work on the oversized-array call to read_paths']]);
    const calls = report.calls.filter((c) => c.seq > array.seq);
    // Then protocol-errors' array-params probe, judged after every gatherer, and its liveness check.
    expect(calls.map((c) => [c.probe, c.class ?? c.reply.kind])).toEqual([
      ['deep-object', 'rejected'],
      ['liveness', 'response'],
      ['array-params', 'response'],
      ['liveness', 'response'],
    ]);
  });
});

/**
 * A server that answers a tools/list while a call past the hang limit is still at work, and runs
 * its calls one after another (found on server-filesystem in a fleet run at --jobs 8): a liveness
 * check says nothing about whether the next call will wait. queued-reader.mjs computes 5 s on the
 * oversized-array probe and 0.3 s on any call; with a 2 s limit the deep-object probe sent after
 * the hang would wait 3 s behind the array and be a hang of its own. Its CPU time says it is still
 * at work: it is started again, and the deep-object probe is judged on its own.
 */
describe('a server that runs calls in turn, still at work on one past the hang limit (queued-reader.mjs)', () => {
  it('gets one no-answer, for the array; the deep-object probe goes to a fresh start', async () => {
    const report = await auditFixture('queued-reader.mjs', { checks: { 'robust-input': { hang_ms: 2000 }, 'bounded-limits': { enabled: false }, concurrency: { enabled: false } } });
    const over = checkOf(report, 'oversized-input');
    expect(over.findings.map((f) => [f.messageId, f.tool, f.data.param, f.data.what])).toEqual([['no-answer', 'read_paths', 'paths', 'a 100,000-item array']]);
    const array = report.calls.find((x) => x.probe === 'oversized-array')!;
    expect(report.restarts?.map((r) => [r.afterSeq, r.ok, r.why])).toEqual([[array.seq, true, 'still at work on the oversized-array call to read_paths']]);
    expect(report.calls.filter((c) => c.seq > array.seq).map((c) => [c.probe, c.class ?? c.reply.kind])).toEqual([
      ['deep-object', 'rejected'],
      ['liveness', 'response'],
      ['array-params', 'response'],
      ['liveness', 'response'],
    ]);
  });
});
