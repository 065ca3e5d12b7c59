/**
 * Adversarial servers (test/fixtures/servers/adversarial/, written by a tester; what each does is in
 * its header comment): servers that break the handshake, answer with the wrong id, put a BOM before
 * every reply, list schemas that make a naive auditor recurse, allocate or backtrack forever, close
 * stdout, exit mid-run, freeze, or put terminal escapes in tool names. Each is audited with the
 * library and the report is held to SPEC sections 2–5: the right verdict and message id, evidence
 * that says what happened, fast (no wait for a hang limit that does not apply), no crash, nothing
 * left running.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { INVALID_PROBES } from '../../src/checks/robust-input.js';
import { planStrict } from '../../src/probes/strict-arguments.js';
import { LIMITS_PROBES, auditFixture, checkOf, findingsOf, fixture, graded, root } from '../helpers/run.js';
import { runCli } from '../helpers/cli.js';
import type { Report, ReportCall } from '../../src/report/build.js';
import { renderText } from '../../src/report/reporters/text.js';

const execFileP = promisify(execFile);

interface Run {
  report: Report;
  ms: number;
}

/** Every report of this file, for the cross-cutting text check at the end. */
const reports = new Map<string, Report>();

/** Audits `adversarial/<name>` once per (name, config); later calls get the same run. */
const runs = new Map<string, Promise<Run>>();
function run(name: string, raw: Record<string, unknown> = {}, extra: string[] = [], opts: { sandbox?: boolean } = {}): Promise<Run> {
  const key = `${name} ${JSON.stringify(raw)} ${extra.join(' ')} ${opts.sandbox ?? ''}`;
  let p = runs.get(key);
  if (!p) {
    p = (async () => {
      const t0 = Date.now();
      const report = await auditFixture(`adversarial/${name}`, raw, extra, opts);
      const ms = Date.now() - t0;
      reports.set(key, report);
      return { report, ms };
    })();
    runs.set(key, p);
  }
  return p;
}

/** tools/call calls of every gatherer but the limits pack's (whose oversized and concurrent calls have tests of their own). */
const toolCalls = (r: Report): ReportCall[] => r.calls.filter((c) => c.method === 'tools/call' && !LIMITS_PROBES.has(c.probe));
/** Probes of the effects pack (default and filler calls in the sandbox). */
const EFFECT_PROBES = ['default-call', 'filler-call'];
const PROTOCOL_PROBES = ['unknown-method', 'notification-follow-up', 'unknown-tool', 'array-params'];

/** Processes whose command line contains `tag`. */
async function processesWith(tag: string): Promise<{ pid: number; args: string }[]> {
  const { stdout } = await execFileP('ps', ['-eo', 'pid=,args='], { maxBuffer: 16 * 1024 * 1024 });
  const out: { pid: number; args: string }[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^\s*(\d+)\s+(.*)$/.exec(line);
    if (m && m[2]!.includes(tag) && !m[2]!.startsWith('ps ')) out.push({ pid: Number(m[1]), args: m[2]! });
  }
  return out;
}

let tagCounter = 0;
const uniqueTag = (what: string) => `--sealmark-adv-${process.pid}-${++tagCounter}-${what}`;

describe('handshake failures', () => {
  it('init-error.mjs: not audited; handshake fail `init-rejected` quoting the server\'s error code and message', async () => {
    const { report: r, ms } = await run('init-error.mjs');
    expect(r.status).toBe('not-audited');
    expect(r.notAudited?.reason).toBe('init-rejected');
    const h = checkOf(r, 'handshake');
    expect(h.verdict).toBe('fail');
    expect(graded(r, 'handshake')).toEqual(['init-rejected']);
    const [f] = findingsOf(r, 'handshake', 'init-rejected');
    expect(f!.level).toBe('fail');
    expect(f!.message).toContain('Missing API token: set FOO_TOKEN');
    expect(f!.message).toContain('-32000');
    expect(r.notAudited!.message).toContain('Missing API token: set FOO_TOKEN');
    // Every other check is n/a, and nothing was probed.
    for (const c of r.checks.filter((x) => x.id !== 'handshake')) expect(c.verdict, c.id).toBe('n/a');
    expect(r.calls).toEqual([]);
    expect(r.grade.caps.map((c) => c.check)).toContain('handshake');
    expect(ms).toBeLessThan(5_000);
  });

  it('init-garbage.mjs: `init-rejected` at once (not after timeout_init_sec), saying the result is not an object', async () => {
    const { report: r, ms } = await run('init-garbage.mjs');
    expect(r.status).toBe('not-audited');
    expect(r.notAudited?.reason).toBe('init-rejected');
    expect(checkOf(r, 'handshake').verdict).toBe('fail');
    expect(graded(r, 'handshake')).toEqual(['init-rejected']);
    const [f] = findingsOf(r, 'handshake', 'init-rejected');
    expect(f!.message).toMatch(/result is not an object/);
    expect(f!.message).toContain('"hello"');
    expect(ms).toBeLessThan(5_000);
  });

  it('madeup-version.mjs: audited; handshake partial `unknown-version` 2099-01-01; robust-input runs', async () => {
    const { report: r } = await run('madeup-version.mjs');
    expect(r.status).toBe('audited');
    expect(r.protocol?.version).toBe('2099-01-01');
    expect(checkOf(r, 'handshake').verdict).toBe('partial');
    expect(graded(r, 'handshake')).toEqual(['unknown-version']);
    expect(findingsOf(r, 'handshake', 'unknown-version')[0]!.message).toContain('2099-01-01');
    const ri = checkOf(r, 'robust-input');
    expect(ri.verdict).toBe('pass');
    const probes = toolCalls(r).filter((c) => c.tool === 'echo').map((c) => c.probe);
    expect(probes).toEqual(expect.arrayContaining(['missing-required', 'wrong-types', 'nulls', 'extra-argument', 'string-as-object']));
    expect(toolCalls(r).filter((c) => c.tool === 'echo').every((c) => c.class === 'rejected')).toBe(true);
  });

  it('no-serverinfo.mjs: audited; handshake partial `no-server-info` and `no-tools-capability`', async () => {
    const { report: r } = await run('no-serverinfo.mjs');
    expect(r.status).toBe('audited');
    expect(checkOf(r, 'handshake').verdict).toBe('partial');
    expect(graded(r, 'handshake')).toEqual(['no-server-info', 'no-tools-capability']);
    expect(r.protocol?.server.name).toBeNull();
    expect(checkOf(r, 'robust-input').verdict).toBe('pass');
  });
});

describe('replies that cannot be matched or parsed', () => {
  for (const [name, idText] of [
    ['wrong-id.mjs', (id: number) => `answered with id ${id + 1} instead of ${id}`],
    ['string-id.mjs', (id: number) => `answered with id "${id}" instead of ${id}`],
  ] as const) {
    it(`${name}: robust-input partial \`protocol-error\` naming both ids, never \`hang\` outside the concurrency burst, fast`, async () => {
      // hang_ms 2000: in the concurrency burst a misnumbered reply is read as another request's
      // answer (ids are all JSON-RPC has), so one request of the burst is never answered.
      const { report: r, ms } = await run(name, { checks: { 'robust-input': { hang_ms: 2000 } } });
      expect(r.status).toBe('audited');
      expect(checkOf(r, 'robust-input').verdict).toBe('partial');
      expect(graded(r, 'robust-input')).toEqual(['protocol-error']);
      const [f] = findingsOf(r, 'robust-input', 'protocol-error');
      const calls = toolCalls(r).filter((c) => c.tool === 'echo' && INVALID_PROBES.has(c.probe));
      expect(calls.length).toBeGreaterThanOrEqual(5);
      for (const c of calls) {
        expect(c.reply.kind, c.probe).toBe('malformed');
        expect(c.class, c.probe).toBe('protocol-error');
      }
      // The evidence is every echo call, and the message quotes the id sent and the id received.
      expect(f!.evidence.calls).toEqual(calls.map((c) => c.seq));
      const first = JSON.parse(calls[0]!.request) as { id: number };
      expect(f!.message).toContain(idText(first.id));
      expect(r.calls.filter((c) => c.reply.kind === 'hang').map((c) => c.probe)).toEqual(name === 'wrong-id.mjs' ? ['concurrent-call'] : Array(16).fill('concurrent-call'));
      expect(checkOf(r, 'concurrency').verdict).toBe('fail');
      // The misnumbered replies are charged to robust-input (and the burst's to concurrency), not counted again as strays.
      expect(checkOf(r, 'protocol-errors').verdict).toBe('pass');
      expect(ms).toBeLessThan(10_000);
    });
  }

  it('nul-in-line.mjs (a BOM before each reply): robust-input `protocol-error` "not valid JSON", handshake `stdout-noise`, no hang', async () => {
    const { report: r, ms } = await run('nul-in-line.mjs');
    expect(r.status).toBe('audited');
    expect(graded(r, 'robust-input')).toEqual(['protocol-error']);
    const [f] = findingsOf(r, 'robust-input', 'protocol-error');
    expect(f!.message).toMatch(/the reply line is not valid JSON/);
    const calls = toolCalls(r).filter((c) => c.tool === 'echo');
    expect(calls.length).toBeGreaterThanOrEqual(5);
    expect(calls.every((c) => c.class === 'protocol-error')).toBe(true);
    expect(r.calls.some((c) => c.reply.kind === 'hang')).toBe(false);
    expect(checkOf(r, 'handshake').verdict).toBe('partial');
    expect(graded(r, 'handshake')).toEqual(['stdout-noise']);
    const [noise] = findingsOf(r, 'handshake', 'stdout-noise');
    // One noise line per reply to an echo call, the limits pack's calls included.
    expect(noise!.data.count).toBe(r.calls.filter((c) => c.method === 'tools/call' && c.tool === 'echo').length);
    expect(noise!.evidence.quotes![0]!.startsWith('\uFEFF{"jsonrpc"')).toBe(true);
    expect(ms).toBeLessThan(10_000);
  });

  it('dup-response.mjs: protocol-errors partial `stray-response` with the second answers as evidence; robust-input unaffected', async () => {
    const { report: r } = await run('dup-response.mjs');
    expect(checkOf(r, 'protocol-errors').verdict).toBe('partial');
    expect(graded(r, 'protocol-errors')).toEqual(['stray-response']);
    const [f] = findingsOf(r, 'protocol-errors', 'stray-response');
    const echoCalls = toolCalls(r).filter((c) => c.tool === 'echo');
    // Every call answered twice but those of the concurrency burst (that check's own finding).
    const answeredTwice = r.calls.filter((c) => c.method === 'tools/call' && c.tool === 'echo' && c.probe !== 'concurrent-call');
    expect(f!.data.count).toBe(answeredTwice.length);
    expect(graded(r, 'concurrency')).toEqual(['duplicate']);
    expect(f!.evidence.quotes![0]).toContain('ok, done');
    // The first answer is the one read: every invalid call was rejected.
    expect(checkOf(r, 'robust-input').verdict).toBe('pass');
    expect(echoCalls.every((c) => c.class === 'rejected')).toBe(true);
  });

  it('result-shapes.mjs: non-object results and non-array content are `protocol-error` (with a liveness check after each); `{}` and a text block without text read as accepted', async () => {
    // Defensible per SPEC 4 and classify.ts: `{}` is a valid CallToolResult for the SDKs (content
    // defaults to []), so it is a success; a text block without `text` is not inspected. Both are partial anyway.
    const { report: r } = await run('result-shapes.mjs');
    expect(checkOf(r, 'robust-input').verdict).toBe('partial');
    expect(graded(r, 'robust-input')).toEqual(['accepted', 'protocol-error']);
    const byProbe = Object.fromEntries(toolCalls(r).filter((c) => c.tool === 'echo').map((c) => [c.probe, c]));
    // Call n gets shape n: 'just a string', [1,2,3], null, {content:'not an array'}, {}, {content:[{type:'text'}]}.
    for (const p of ['missing-required', 'wrong-types', 'nulls', 'extra-argument']) expect(byProbe[p]?.class, p).toBe('protocol-error');
    expect(byProbe['string-as-object']?.class).toBe('accepted');
    expect(byProbe['no-arguments']?.class).toBe('accepted');
    const [pe] = findingsOf(r, 'robust-input', 'protocol-error');
    expect(pe!.message).toContain('result is not a tool result');
    expect(pe!.evidence.calls).toEqual(['missing-required', 'wrong-types', 'nulls', 'extra-argument'].map((p) => byProbe[p]!.seq));
    // SPEC 3 step 3: after any protocol error, tools/list checks the server is alive.
    for (const seq of pe!.evidence.calls!) {
      const next = r.calls.find((c) => c.seq === seq + 1);
      expect(next?.probe, `after #${seq}`).toBe('liveness');
      expect(next?.method).toBe('tools/list');
    }
    expect(checkOf(r, 'protocol-errors').verdict).toBe('pass');
  });
});

describe('schemas that break naive auditors', () => {
  it('ref-cycle.mjs: completes fast; the cyclic property is untyped (listed, not probed); the other tool is probed in full', async () => {
    const { report: r, ms } = await run('ref-cycle.mjs');
    expect(ms).toBeLessThan(10_000);
    expect(r.status).toBe('audited');
    expect(r.tools.map((t) => t.name)).toEqual(['echo', 'cyclic']);
    const ts = checkOf(r, 'tool-schemas');
    expect(ts.notes.some((n) => /crash/.test(n))).toBe(false);
    expect(ts.verdict).toBe('pass');
    expect(findingsOf(r, 'tool-schemas', 'input-schema-compile')).toEqual([]);
    const [untyped] = findingsOf(r, 'tool-schemas', 'untyped-properties');
    expect(untyped!.tool).toBe('cyclic');
    expect(untyped!.data.names).toBe('x');
    const ri = checkOf(r, 'robust-input');
    expect(ri.notes.some((n) => /crash/.test(n))).toBe(false);
    expect(ri.verdict).toBe('pass');
    // x cannot be malformed (untyped), so cyclic only gets the calls that need no value for it.
    expect(toolCalls(r).filter((c) => c.tool === 'cyclic').map((c) => c.probe).sort()).toEqual(['missing-required', 'no-arguments']);
    expect(toolCalls(r).filter((c) => c.tool === 'echo').length).toBeGreaterThanOrEqual(5);
  });

  it('nested-arrays.mjs: completes fast with bounded memory; the 25-deep array is probed with wrong types and nulls', async () => {
    const heapBefore = process.memoryUsage().heapUsed;
    const { report: r, ms } = await run('nested-arrays.mjs');
    expect(ms).toBeLessThan(10_000);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(500 * 1024 * 1024);
    expect(r.status).toBe('audited');
    expect(checkOf(r, 'tool-schemas').verdict).toBe('pass');
    expect(checkOf(r, 'robust-input').verdict).toBe('pass');
    const calls = toolCalls(r).filter((c) => c.tool === 'deep');
    const byProbe = Object.fromEntries(calls.map((c) => [c.probe, c]));
    expect(JSON.parse(byProbe['wrong-types']!.request).params.arguments).toEqual({ grid: 12345, q: 12345 });
    expect(JSON.parse(byProbe['nulls']!.request).params.arguments).toEqual({ grid: null, q: null });
    expect(calls.every((c) => c.request.length < 2_000)).toBe(true);
  });

  // Were the pattern run on the value sealmark samples, Ajv would backtrack for hours: the test's
  // own time-out is the guard, not a figure asserted here.
  it('redos.mjs: completes (the catastrophic pattern is never run); slowre is probed', async () => {
    const { report: r } = await run('redos.mjs');
    expect(r.status).toBe('audited');
    expect(checkOf(r, 'tool-schemas').verdict).toBe('pass');
    expect(checkOf(r, 'robust-input').verdict).toBe('pass');
    const calls = toolCalls(r).filter((c) => c.tool === 'slowre');
    expect(calls.map((c) => c.probe)).toEqual(expect.arrayContaining(['missing-required', 'wrong-types', 'nulls', 'extra-argument']));
    expect(calls.every((c) => c.class === 'rejected' || c.class === 'rejected-unnamed')).toBe(true);
    // slowre may write (no readOnlyHint), so strict-arguments sends it no valid arguments; were it
    // read-only, its valid arguments would be built without running the pattern.
    expect(calls.some((c) => c.probe === 'extra-only' || c.probe === 'valid-arguments')).toBe(false);
    const slowre = { name: 'slowre', inputSchema: { type: 'object', properties: { code: { type: 'string', minLength: 40, pattern: '^([a-z]+)+!$' }, n: { type: 'integer' } }, required: ['code'], additionalProperties: false } };
    const planned = planStrict({ index: 0, name: 'slowre', raw: slowre, inputSchema: slowre.inputSchema, annotations: { readOnlyHint: true } }).calls;
    expect(planned.find((c) => c.probe === 'extra-only')?.invalidBecause).toEqual(['(root) must NOT have additional properties (sm_unexpected)']);
  });

  it('tools-junk-entries.mjs: each junk entry is its own `malformed-tool`; the good tool is probed under its own name only', async () => {
    const { report: r } = await run('tools-junk-entries.mjs');
    expect(r.status).toBe('audited');
    expect(r.tools.map((t) => t.name)).toEqual(['#0', '#1', '#2', 'noschema', 'echo']);
    expect(checkOf(r, 'tool-schemas').verdict).toBe('fail');
    expect(graded(r, 'tool-schemas')).toEqual(['input-schema-compile', 'malformed-tool']);
    expect(findingsOf(r, 'tool-schemas', 'malformed-tool').map((f) => f.data.index)).toEqual([0, 1, 2]);
    const [nos] = findingsOf(r, 'tool-schemas', 'input-schema-compile');
    expect(nos!.tool).toBe('noschema');
    // The string entry "echo" (#1) is never called as "echo": echo gets one set of probes.
    expect(checkOf(r, 'robust-input').verdict).toBe('pass');
    // robust-input's and protocol-errors' calls only: the effects pack's default-call also sends `{}`
    // to noschema (a named tool with no required argument), which is its own business.
    const probeCalls = toolCalls(r).filter((c) => !EFFECT_PROBES.includes(c.probe));
    const names = new Set(probeCalls.map((c) => JSON.parse(c.request).params?.name as string | undefined).filter((n) => n !== undefined));
    expect([...names].sort()).toEqual(['echo', 'sealmark_no_such_tool']);
    // Nor do the effects probes ever call a junk entry by a made-up name.
    const effectNames = toolCalls(r).filter((c) => EFFECT_PROBES.includes(c.probe)).map((c) => JSON.parse(c.request).params?.name as string);
    for (const n of effectNames) expect(['echo', 'noschema']).toContain(n);
    expect(toolCalls(r).filter((c) => c.tool === 'echo' && c.probe === 'missing-required')).toHaveLength(1);
    const skipped = findingsOf(r, 'robust-input', 'skipped').map((f) => f.data.tool);
    expect(skipped).toEqual(['#0', '#1', '#2', 'noschema']);
  });

  it('odd-formats.mjs: an unknown format and \\p{L} compile; a bad regex and type "any" fail to compile; nothing on stderr', async () => {
    const writes: string[] = [];
    const spies = [
      vi.spyOn(process.stderr, 'write').mockImplementation((s: unknown) => (writes.push(String(s)), true)),
      vi.spyOn(console, 'warn').mockImplementation((...a: unknown[]) => void writes.push(a.join(' '))),
      vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void writes.push(a.join(' '))),
      vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void writes.push(a.join(' '))),
    ];
    let r: Report;
    try {
      r = (await run('odd-formats.mjs')).report;
    } finally {
      for (const s of spies) s.mockRestore();
    }
    expect(writes).toEqual([]);
    expect(checkOf(r, 'tool-schemas').verdict).toBe('fail');
    expect(graded(r, 'tool-schemas')).toEqual(['input-schema-compile']);
    const compile = findingsOf(r, 'tool-schemas', 'input-schema-compile');
    expect(compile.map((f) => f.tool).sort()).toEqual(['anytype', 'badre']);
    expect(compile.find((f) => f.tool === 'badre')!.message).toMatch(/Invalid regular expression/);
    expect(checkOf(r, 'robust-input').verdict).toBe('pass');
    for (const t of ['fmt', 'uni', 'redos']) expect(toolCalls(r).filter((c) => c.tool === t).length, t).toBeGreaterThanOrEqual(5);
    expect(findingsOf(r, 'robust-input', 'skipped').map((f) => f.data.tool).sort()).toEqual(['anytype', 'badre']);
  });

  it('odd-formats.mjs through the CLI: exit 0 (tool-schemas is a warning), stderr empty (no Ajv warning)', async () => {
    if (!existsSync(join(root, 'dist', 'cli.js'))) throw new Error('dist/ is missing: run `npx tsc -p .` first');
    const res = await runCli(['audit', '--', process.execPath, fixture('adversarial/odd-formats.mjs')]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('input-schema-compile');
  });

  it('proto-props.mjs: a server that validates __proto__/constructor/toString properly passes', async () => {
    const { report: r } = await run('proto-props.mjs');
    expect(r.status).toBe('audited');
    expect(checkOf(r, 'tool-schemas').verdict).toBe('pass');
    expect(checkOf(r, 'robust-input').verdict).toBe('pass');
    const calls = toolCalls(r).filter((c) => c.tool === 'proto');
    expect(calls.length).toBeGreaterThanOrEqual(5);
    expect(calls.every((c) => c.class === 'rejected')).toBe(true);
  });

  // SPEC 5 robust-input: wrong-types gives "every typed argument" a wrong value, `__proto__` too: it
  // must go on the wire as an own member (assignment would set the prototype and drop it).
  it('proto-props.mjs: wrong-types and nulls send an own "__proto__" member', async () => {
    const { report: r } = await run('proto-props.mjs');
    const calls = toolCalls(r).filter((c) => c.tool === 'proto');
    const wrong = calls.find((c) => c.probe === 'wrong-types')!;
    const nulls = calls.find((c) => c.probe === 'nulls')!;
    expect(wrong.request).toContain('"__proto__":12345');
    expect(nulls.request).toContain('"__proto__":null');
  });

  // Ajv must not see Object.prototype's `constructor`/`toString` as arguments: the evidence of
  // missing-required names the missing properties.
  it('proto-props.mjs: missing-required {} is invalid because __proto__ and constructor are missing', async () => {
    const { report: r } = await run('proto-props.mjs');
    const mr = toolCalls(r).find((c) => c.tool === 'proto' && c.probe === 'missing-required')!;
    expect(mr.invalidBecause).toEqual(["(root) must have required property '__proto__'", "(root) must have required property 'constructor'"]);
  });
});

describe('servers that go away or go quiet', () => {
  it('close-stdout.mjs (stdout closed, process alive): robust-input fail `exited` ("connection closed"), not `hang`; fast; process ended', async () => {
    const tag = uniqueTag('close-stdout');
    // Without the sandbox: inside it, `unshare` holds the same stdout pipe, so a server that closes
    // its own stdout cannot be told from a silent one (it is then judged by its silence).
    const { report: r, ms } = await run('close-stdout.mjs', {}, [tag], { sandbox: false });
    expect(ms).toBeLessThan(10_000);
    expect(checkOf(r, 'robust-input').verdict).toBe('fail');
    // It closes stdout on its 2nd call, whatever the call: replayed alone, neither candidate does it
    // again, so no call is blamed (case B10).
    expect(graded(r, 'robust-input')).toEqual(['exited-unattributed']);
    const [f] = findingsOf(r, 'robust-input', 'exited-unattributed');
    expect(f!.message).toMatch(/^the server exited during the audit \(connection closed\) and no call is blamed: replayed alone after a restart, none of the 2 candidate calls exited it again; candidates: \d+ \(echo wrong-types\), \d+ \(echo missing-required\)$/);
    expect(r.calls.some((c) => c.reply.kind === 'hang')).toBe(false);
    // Started again for the rest (SPEC section 3 step 3): no check is n/a because of the exit.
    expect(findingsOf(r, 'robust-input', 'server-gone')).toEqual([]);
    expect(checkOf(r, 'protocol-errors').verdict).not.toBe('n/a');
    expect(await processesWith(tag)).toEqual([]);
  });

  it('grandchild.mjs (exits, a grandchild holds stdout): robust-input fail `exited` with exit code 0, not `hang`; fast; grandchild ended', async () => {
    const marker = 'grandchild-marker-gc1';
    const before = (await processesWith(marker)).length;
    const { report: r, ms } = await run('grandchild.mjs');
    expect(ms).toBeLessThan(10_000);
    expect(checkOf(r, 'robust-input').verdict).toBe('fail');
    // It exits on its 2nd call, whatever the call: no call is blamed (case B10).
    expect(graded(r, 'robust-input')).toEqual(['exited-unattributed']);
    const [f] = findingsOf(r, 'robust-input', 'exited-unattributed');
    expect(f!.message).toMatch(/^the server exited during the audit \(exit code 0\) and no call is blamed: replayed alone after a restart, none of the 2 candidate calls exited it again; candidates: \d+ \(echo wrong-types\), \d+ \(echo missing-required\)$/);
    expect(r.calls.some((c) => c.reply.kind === 'hang')).toBe(false);
    expect(checkOf(r, 'protocol-errors').verdict).not.toBe('n/a');
    // Every start's grandchild was ended with its process group.
    expect((await processesWith(marker)).length).toBeLessThanOrEqual(before);
  });

  it('exit0-midrun.mjs: robust-input fail `exited` on the 3rd call with exit code 0; the server is started again for the rest', async () => {
    const { report: r } = await run('exit0-midrun.mjs');
    // Never held up: no call waited out a hang limit, and every start after the exit came back
    // (measured in evidence, not in wall time, which a loaded CI machine stretches past 10 s).
    expect(r.calls.some((c) => c.reply.kind === 'hang')).toBe(false);
    expect(r.restarts?.length).toBeGreaterThan(0);
    expect(r.restarts!.every((x) => x.ok)).toBe(true);
    expect(checkOf(r, 'robust-input').verdict).toBe('fail');
    // It exits on its 3rd call, whatever the call: no call is blamed (case B10).
    expect(graded(r, 'robust-input')).toEqual(['exited-unattributed']);
    const [f] = findingsOf(r, 'robust-input', 'exited-unattributed');
    // stdout ends just before the exit event; the exit code must still be the one reported.
    expect(f!.message).toMatch(/^the server exited during the audit \(exit code 0\) and no call is blamed: replayed alone after a restart, none of the 3 candidate calls exited it again; candidates: \d+ \(echo nulls\), \d+ \(echo wrong-types\), \d+ \(echo missing-required\)$/);
    // SPEC section 3 step 3: the server is started again for the remaining probes and checks.
    expect(findingsOf(r, 'robust-input', 'server-gone')).toEqual([]);
    expect(toolCalls(r).filter((c) => INVALID_PROBES.has(c.probe)).map((c) => [c.probe, c.reply.kind])).toEqual([
      ['missing-required', 'response'],
      ['wrong-types', 'response'],
      ['nulls', 'exited'],
      ['extra-argument', 'response'],
      ['string-as-object', 'response'],
    ]);
    expect(checkOf(r, 'protocol-errors').verdict).not.toBe('n/a');
  });

  it('freeze.mjs: three hangs stop robust-input; protocol-errors fails as not judged (not blamed on unknown-method) and no protocol probe is sent', async () => {
    const { report: r, ms } = await run('freeze.mjs', { timeout_probe_sec: 1, checks: { 'robust-input': { hang_ms: 300 } } });
    expect(ms).toBeLessThan(10_000);
    expect(r.standard).toBe(false);
    expect(checkOf(r, 'robust-input').verdict).toBe('fail');
    expect(graded(r, 'robust-input')).toEqual(['hang']);
    const [hang] = findingsOf(r, 'robust-input', 'hang');
    expect(hang!.message).toContain('within 300 ms');
    expect(hang!.evidence.calls).toHaveLength(3);
    const [stop] = findingsOf(r, 'robust-input', 'three-hangs');
    expect(stop!.message).toContain('not reached: echo');
    // Not blamed on a probe it never sent, and not n/a either: the server stopped answering, so the
    // check fails as not judged (SPEC section 3 step 3).
    const pe = checkOf(r, 'protocol-errors');
    expect(pe.verdict).toBe('fail');
    expect(pe.findings.map((f) => f.messageId)).toEqual(['server-gone-before']);
    expect(pe.findings[0]!.message).toContain('the server stopped answering: robust-input stopped after three hangs');
    expect(pe.notes.join(' ')).toMatch(/three hangs/);
    expect(r.calls.filter((c) => PROTOCOL_PROBES.includes(c.probe))).toEqual([]);
  });
});

describe('paginating forever', () => {
  it('cursor-loop.mjs: stops after 100 pages, handshake partial `tools-list-unending`, audits what was read', async () => {
    const { report: r, ms } = await run('cursor-loop.mjs');
    expect(ms).toBeLessThan(10_000);
    expect(r.status).toBe('audited');
    expect(checkOf(r, 'handshake').verdict).toBe('partial');
    expect(graded(r, 'handshake')).toEqual(['tools-list-unending']);
    expect(findingsOf(r, 'handshake', 'tools-list-unending')[0]!.message).toMatch(/100 pages.*the 100 tools read so far are audited/);
    expect(r.tools).toHaveLength(100);
    expect(r.calls.filter((c) => c.probe === 'tools-list')).toHaveLength(100);
    const [beyond] = findingsOf(r, 'robust-input', 'beyond-max-tools');
    expect(beyond!.data.count).toBe(75);
    expect(checkOf(r, 'robust-input').verdict).toBe('pass');
  });
});

describe('tool names made to attack the text report', () => {
  const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
  const BIDI = /[\u202a-\u202e\u2066-\u2069]/;

  it('weird-names.mjs: the audit completes; bad names, the duplicate and the non-string name are findings', async () => {
    const { report: r, ms } = await run('weird-names.mjs');
    expect(ms).toBeLessThan(10_000);
    expect(r.status).toBe('audited');
    expect(r.tools).toHaveLength(10);
    expect(checkOf(r, 'tool-schemas').verdict).toBe('fail');
    expect(findingsOf(r, 'tool-schemas', 'bad-name').map((f) => f.tool)).toHaveLength(7);
    expect(findingsOf(r, 'tool-schemas', 'duplicate-name').map((f) => f.tool)).toEqual(['dup']);
    expect(findingsOf(r, 'tool-schemas', 'malformed-tool').map((f) => f.data.index)).toEqual([9]);
    // The JSON report keeps the names as the server sent them.
    expect(r.tools[0]!.name).toBe('evil\n\ngrade A 100% · exercised\n');
  });

  it('weird-names.mjs: the text report has no control character, ESC or bidi override from the server, and no forged line', async () => {
    const { report: r } = await run('weird-names.mjs');
    const text = renderText(r, { color: false, verbose: true });
    const lines = text.split('\n');
    for (const l of lines) {
      expect(CONTROL.test(l), JSON.stringify(l)).toBe(false);
      expect(BIDI.test(l), JSON.stringify(l)).toBe(false);
    }
    // Only sealmark's own grade line starts with "grade"; the name's "grade A 100%" stays on its finding's line.
    expect(lines.filter((l) => /^\s*grade\b/.test(l))).toHaveLength(1);
    // The bad names are one grouped line (SPEC section 8), every name escaped on it.
    const bad = lines.filter((l) => l.includes('bad-name:'));
    expect(bad).toHaveLength(1);
    expect(bad[0]).toContain('bad-name: 7 tools: evil');
    expect(bad[0]).toContain('grade A 100%');
    expect(bad[0]).toContain('colour');
    expect(bad[0]).toContain('rtl');
  });
});

describe('every report above, as text', () => {
  // Runs last (vitest keeps file order): no report of this file, rendered as text, carries a control
  // character or bidi override that came from a server (a quoted reply, a stderr line, an error text).
  it('has no control character or bidi override on any line', () => {
    for (const [key, r] of reports) {
      const text = renderText(r, { color: false, verbose: true });
      const bad = text.split('\n').find((l) => /[\u0000-\u0009\u000b-\u001f\u007f\u202a-\u202e\u2066-\u2069]/.test(l));
      expect(bad, `${key}: ${JSON.stringify(bad)}`).toBeUndefined();
    }
  });
});
