/**
 * Adversarial servers for the limits pack (test/fixtures/servers/adversarial-limits/, written by a
 * tester; what each does and what sealmark SHOULD say is in its header comment and the folder's
 * README). Each test pins a bug those fixtures exposed and that was fixed, against a real audit:
 * the splice marker, dying to skip later checks, id-null errors taken as a raw line's reply, slow
 * parse errors matched to the wrong request, a late NaN reply, a late effect blamed on the next
 * call, `$'` in a replay line, unusual schema bounds, the limit-property cap, and redaction of
 * common words. Fixture settings reach the server only through the audit's `env` option.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { audit } from '../../src/audit.js';
import { meta as boundedLimitsMeta } from '../../src/checks/bounded-limits.js';
import { checks as allChecks } from '../../src/checks/index.js';
import { configRegistry } from '../../src/config/defaults.js';
import { parseConfig } from '../../src/config/schema.js';
import type { Report, ReportCall } from '../../src/report/build.js';
import { shellQuote } from '../../src/replay.js';
import { checkOf, findingsOf, fixture, graded } from '../helpers/run.js';

/** Non-standard (hang_ms is a locked threshold): only for runs where a hang is planted, to keep the file fast. */
const SHORT_HANGS = { checks: { 'robust-input': { hang_ms: 2000 } } };

interface Spec {
  /** Path under test/fixtures/servers/. */
  file: string;
  env?: Record<string, string>;
  raw?: Record<string, unknown>;
}

/** Every audit of this file, by label; started together in beforeAll, awaited by the tests. */
const SPECS = {
  marker: { file: 'adversarial-limits/marker-default.mjs' },
  crash: { file: 'adversarial-limits/crash-to-skip.mjs', env: { CRASH: '1', READONLY: '1' }, raw: SHORT_HANGS },
  noCrash: { file: 'adversarial-limits/crash-to-skip.mjs', env: { READONLY: '1' }, raw: SHORT_HANGS },
  crashTwo: { file: 'adversarial-limits/crash-to-skip.mjs', env: { CRASH: '1', READONLY: '1', TWO_TOOLS: '1' } },
  nullId: { file: 'adversarial-limits/null-id-notify.mjs' },
  slowParse1: { file: 'adversarial-limits/slow-parse-error.mjs', env: { PARSE_MS: '350' } },
  slowParse2: { file: 'adversarial-limits/slow-parse-error.mjs', env: { PARSE_MS: '350' } },
  slowParse3: { file: 'adversarial-limits/slow-parse-error.mjs', env: { PARSE_MS: '350' } },
  nanLate: { file: 'adversarial-limits/nan-late-last.mjs' },
  lateEffect: { file: 'adversarial-limits/late-effect.mjs' },
  dollar: { file: 'adversarial-limits/dollar-name.mjs' },
  shapes: { file: 'adversarial-limits/schema-shapes.mjs' },
  anyOf: { file: 'adversarial-limits/optional-anyof.mjs' },
  many: { file: 'adversarial-limits/many-limits.mjs', env: { TOOLS: '1', PROPS: '12' } },
  redactWord: { file: 'limits/clean_limits.mjs', env: { MODE: 'limit' } },
  redactId: { file: 'limits/clean_limits.mjs', env: { PROFILE: 'bounded-limits' } },
} satisfies Record<string, Spec>;
type Label = keyof typeof SPECS;

const command = (file: string) => (file.endsWith('.py') ? 'python3' : process.execPath);

/** Audits one spec once; later calls get the same run. */
const runs = new Map<Label, Promise<Report>>();
function run(label: Label): Promise<Report> {
  let p = runs.get(label);
  if (!p) {
    const s: Spec = SPECS[label];
    p = audit({ command: command(s.file), args: [fixture(s.file)], env: s.env, config: parseConfig(s.raw ?? {}, configRegistry()) });
    // Awaited by its test; this only keeps an early rejection from counting as unhandled.
    p.catch(() => {});
    runs.set(label, p);
  }
  return p;
}

beforeAll(() => {
  for (const label of Object.keys(SPECS) as Label[]) void run(label);
});

/** The raw-text probes of bounded-limits (`raw-one-point-zero`, `raw-nan` … `raw-duplicate`). */
const RAW_PROBES = boundedLimitsMeta.probes.filter((p) => p.id.startsWith('raw-')).map((p) => p.id);
const NOT_JSON_PROBES = ['raw-nan', 'raw-infinity', 'raw-minus-infinity'];
const LIMIT_PROBES = new Set(boundedLimitsMeta.probes.filter((p) => !p.part).map((p) => p.id));

/** The bounded-limits calls of a report (the limits gatherer's probes, liveness pings excluded). */
const limitCalls = (r: Report, tool?: string): ReportCall[] => r.calls.filter((c) => LIMIT_PROBES.has(c.probe) && (tool === undefined || c.tool === tool));
const callOf = (r: Report, tool: string, probe: string): ReportCall => {
  const c = limitCalls(r, tool).find((x) => x.probe === probe);
  if (!c) throw new Error(`no ${probe} call to ${tool}`);
  return c;
};
/**
 * Every check, pack, message and probe id of a report is one sealmark defines (none redacted):
 * each check is in the registry with its pack, each finding's message id is one of its check's
 * messages, and the limits pack's three checks are all there.
 */
function expectOwnIds(r: Report): void {
  const byId = new Map(allChecks.map((c) => [c.meta.id, c.meta]));
  for (const c of r.checks) {
    expect(byId.has(c.id), c.id).toBe(true);
    expect(c.pack, c.id).toBe(byId.get(c.id)!.pack);
    for (const f of c.findings) {
      expect(f.checkId).toBe(c.id);
      expect(Object.keys(byId.get(c.id)!.messages), `${c.id}/${f.messageId}`).toContain(f.messageId);
    }
  }
  expect(r.checks.filter((c) => c.pack === 'limits').map((c) => c.id)).toEqual(['bounded-limits', 'oversized-input', 'concurrency']);
  expect(r.grade.packs.map((p) => p.pack)).toContain('limits');
  for (const c of limitCalls(r)) expect(LIMIT_PROBES.has(c.probe), c.probe).toBe(true);
  expect(limitCalls(r).length).toBeGreaterThan(10);
}

/** The JSON text of `params.arguments` in a tools/call request line (its last member, before the closing `}}`). */
const argumentsText = (request: string): string => {
  const key = '"arguments":';
  const at = request.indexOf(key);
  expect(at).toBeGreaterThan(0);
  expect(request.endsWith('}}')).toBe(true);
  return request.slice(at + key.length, -2);
};

describe('adversarial limits: wire and splice', () => {
  it('marker-default.mjs: an enum value equal to the old splice marker neither crashes the audit nor is spliced; every raw probe sent, the limit spliced', async () => {
    const r = await run('marker');
    expect(r.status).toBe('audited');
    expect(checkOf(r, 'bounded-limits').verdict).toBe('pass');
    expect(graded(r, 'bounded-limits')).toEqual([]);
    const calls = limitCalls(r, 'list_rows');
    expect(calls.map((c) => c.probe)).toEqual(expect.arrayContaining(RAW_PROBES));
    expect(RAW_PROBES).toEqual(['raw-one-point-zero', 'raw-nan', 'raw-infinity', 'raw-minus-infinity', 'raw-huge', 'raw-duplicate']);
    const MODE = '"mode":"sealmark:raw-value:7d1c"';
    for (const probe of RAW_PROBES) {
      const c = callOf(r, 'list_rows', probe);
      // The server's enum value stays as it is; the raw text went in place of limit.
      expect(c.rawArguments, probe).toBe(`{${MODE},"limit":${c.value}}`);
      expect(argumentsText(c.request), probe).toBe(c.rawArguments);
      expect(c.reply.kind, probe).toBe('response');
    }
    // sealmark's own marker (sealmark:raw-value:<random>) is never left on the wire: the only
    // occurrence of the prefix in any request is the fixture's own enum value, as the mode.
    for (const c of r.calls) expect(c.request.replaceAll(MODE, ''), `#${c.seq} ${c.probe}`).not.toContain('sealmark:raw-value:');
    expect(callOf(r, 'list_rows', 'raw-nan').request).toContain(`{${MODE},"limit":NaN}`);
    expect(callOf(r, 'list_rows', 'raw-duplicate').request).toContain(`{${MODE},"limit":1,"limit":51}`);
  });

  it('null-id-notify.mjs: NaN, Infinity and 1e309 admitted; the id-null -32601 answers to notifications are not taken as a raw line\'s reply', async () => {
    const r = await run('nullId');
    expect(r.status).toBe('audited');
    expect(checkOf(r, 'bounded-limits').verdict).toBe('fail');
    expect(graded(r, 'bounded-limits')).toEqual(['admitted']);
    const [f, ...more] = findingsOf(r, 'bounded-limits', 'admitted');
    expect(more).toEqual([]);
    expect(f!.data.values).toBe('NaN (0 items), Infinity (0 items), 1e309 (0 items)');
    expect(f!.evidence.calls).toEqual(['raw-nan', 'raw-infinity', 'raw-huge'].map((p) => callOf(r, 'sample', p).seq));
    expect(findingsOf(r, 'bounded-limits', 'protocol-error')).toEqual([]);
    // Infinity's own reply (accepted, 0 rows) is the one read, not "Method not found" for the cancellation.
    for (const p of ['raw-nan', 'raw-infinity', 'raw-huge']) expect(callOf(r, 'sample', p).class, p).toBe('accepted');
    expect(callOf(r, 'sample', 'raw-minus-infinity').class).toBe('rejected');
  });

  describe('slow-parse-error.mjs (PARSE_MS=350), three audits at once: each late -32700 answers its own raw line', () => {
    for (const label of ['slowParse1', 'slowParse2', 'slowParse3'] as const) {
      it(`${label}: bounded-limits pass, no protocol-error, raw-nan answered -32700`, async () => {
        const r = await run(label);
        expect(r.status).toBe('audited');
        expect(checkOf(r, 'bounded-limits').verdict).toBe('pass');
        expect(graded(r, 'bounded-limits')).toEqual([]);
        expect(findingsOf(r, 'bounded-limits', 'protocol-error')).toEqual([]);
        expect(findingsOf(r, 'bounded-limits', 'dropped')).toEqual([]);
        for (const p of NOT_JSON_PROBES) {
          const c = callOf(r, 'list_items', p);
          expect(c.reply.kind, p).toBe('response');
          expect((c.reply.raw as { error?: { code?: number } }).error?.code, p).toBe(-32700);
        }
        // The probe after each non-JSON line got its own reply (no parse error taken for it).
        for (const p of ['raw-huge', 'raw-duplicate']) {
          const c = callOf(r, 'list_items', p);
          expect(c.reply.kind, p).toBe('response');
          expect(c.class, p).toBe('rejected');
        }
        // Nor are the late parse errors counted as stray responses.
        expect(checkOf(r, 'protocol-errors').verdict).toBe('pass');
      });
    }
  });

  it('nan-late-last.mjs: NaN accepted 1.5 s later, after the limits gatherer returned, is `admitted`, not `dropped`', async () => {
    const r = await run('nanLate');
    expect(r.status).toBe('audited');
    expect(checkOf(r, 'bounded-limits').verdict).toBe('fail');
    expect(graded(r, 'bounded-limits')).toEqual(['admitted']);
    const [f, ...more] = findingsOf(r, 'bounded-limits', 'admitted');
    expect(more).toEqual([]);
    expect(f!.data.values).toBe('NaN (0 items)');
    const nan = callOf(r, 'sample', 'raw-nan');
    expect(f!.evidence.calls).toEqual([nan.seq]);
    expect(nan.class).toBe('accepted');
    expect(nan.reply.kind).toBe('response');
    expect(findingsOf(r, 'bounded-limits', 'dropped')).toEqual([]);
  });
});

describe('adversarial limits: scoring, effects and replay', () => {
  it('crash-to-skip.mjs: exiting on the NaN line scores no better; protocol-errors is still judged (it runs before the limits pack)', async () => {
    const [crash, noCrash] = await Promise.all([run('crash'), run('noCrash')]);
    for (const r of [crash, noCrash]) {
      expect(r.status).toBe('audited');
      expect(r.standard).toBe(false); // hang_ms 2000
    }
    expect(crash.grade.percent).not.toBeNull();
    expect(noCrash.grade.percent).not.toBeNull();
    expect(crash.grade.percent!).toBeLessThanOrEqual(noCrash.grade.percent!);
    // protocol-errors judged in the crashing run, on the notifications it answered, not on the death.
    const pe = checkOf(crash, 'protocol-errors');
    expect(pe.verdict).not.toBe('n/a');
    expect(pe.verdict).toBe('partial');
    expect(graded(crash, 'protocol-errors')).toEqual(['notification-answered']);
    expect(findingsOf(crash, 'protocol-errors', 'died')).toEqual([]);
    // The crash itself is bounded-limits' finding, on each line that is not JSON: the server is
    // started again after each exit (SPEC section 3 step 3), and dies again on the next such line.
    expect(checkOf(crash, 'bounded-limits').verdict).toBe('fail');
    // One cause, one finding: the transport dies on any line that is not JSON, whatever the parameter.
    expect(findingsOf(crash, 'bounded-limits', 'exited')).toEqual([]);
    const [exited, ...more] = findingsOf(crash, 'bounded-limits', 'exited-on-not-json');
    expect(more).toEqual([]);
    expect(exited!.data).toMatchObject({ values: 'NaN, Infinity, -Infinity', count: 3 });
    const nan = callOf(crash, 'find', 'raw-nan');
    expect(exited!.evidence.calls![0]).toBe(nan.seq);
    expect(exited!.replay).toContain("--raw-args '{\"query\":\"sealmark\",\"limit\":NaN}'");
    expect(nan.reply.kind).toBe('exited');
    // The JSON lines after them went to the restarted server, and were answered.
    expect(callOf(crash, 'find', 'raw-huge').reply.kind).toBe('response');
    // And limit: false admitted in both runs.
    for (const r of [crash, noCrash]) expect(findingsOf(r, 'bounded-limits', 'admitted')[0]!.data.values).toContain('false');
  });

  it('crash-to-skip.mjs with two tools: the raw lines the server exited on are not sent again to the second tool (one cause, one restart each)', async () => {
    const r = await run('crashTwo');
    const [exited, ...more] = findingsOf(r, 'bounded-limits', 'exited-on-not-json');
    expect(more).toEqual([]);
    expect(exited!.data).toMatchObject({ values: 'NaN, Infinity, -Infinity', count: 3 });
    expect(limitCalls(r, 'find').filter((c) => NOT_JSON_PROBES.includes(c.probe)).map((c) => c.reply.kind)).toEqual(['exited', 'exited', 'exited']);
    expect(limitCalls(r, 'find_more').filter((c) => NOT_JSON_PROBES.includes(c.probe))).toEqual([]);
    // The JSON lines still went to find_more; the notes say why the others did not.
    expect(limitCalls(r, 'find_more').some((c) => c.probe === 'limit-false')).toBe(true);
    for (const [probe, raw] of [['raw-nan', 'NaN'], ['raw-infinity', 'Infinity'], ['raw-minus-infinity', '-Infinity']]) {
      expect(checkOf(r, 'bounded-limits').notes).toContain(`find_more.limit: ${probe} not sent: the server exited on the raw ${raw} line already (find.limit), before any tool's code: not sent again`);
    }
    expect(r.restarts?.length).toBe(3);
  });

  it('late-effect.mjs: the ping a valid call sets off is not blamed on the next, rejected, call', async () => {
    const r = await run('lateEffect');
    expect(r.status).toBe('audited');
    expect(findingsOf(r, 'bounded-limits', 'effect-on-rejected')).toEqual([]);
    expect(checkOf(r, 'bounded-limits').verdict).toBe('pass');
    const calls = limitCalls(r, 'search');
    expect(calls.length).toBeGreaterThan(10);
    // Every call's effects were read, and only accepted calls had any.
    for (const c of calls) {
      expect(c.effects, c.probe).toBeDefined();
      if (c.effects!.length > 0) expect(c.class, c.probe).toBe('accepted');
    }
    expect(callOf(r, 'search', 'limit-one').effects).toEqual([{ kind: 'shim', detail: 'curl -s http://127.0.0.1:9/usage?limit=1' }]);
  });

  it('dollar-name.mjs: the duplicate member is `admitted`, and its replay line sends the bytes the audit sent (`$\'` kept)', async () => {
    const r = await run('dollar');
    expect(r.status).toBe('audited');
    expect(checkOf(r, 'bounded-limits').verdict).toBe('fail');
    expect(graded(r, 'bounded-limits')).toEqual(['admitted']);
    const [f, ...more] = findingsOf(r, 'bounded-limits', 'admitted');
    expect(more).toEqual([]);
    const dup = callOf(r, 'fetch', 'raw-duplicate');
    expect(f!.evidence.calls).toEqual([dup.seq]);
    expect(dup.value).toBe(`1,"max_$'_rows":11`);
    expect(dup.rawArguments).toBe(`{"max_$'_rows":1,"max_$'_rows":11}`);
    expect(argumentsText(dup.request)).toBe(dup.rawArguments);
    expect(f!.request).toBe(dup.request);
    const target = [process.execPath, fixture('adversarial-limits/dollar-name.mjs')].map(shellQuote).join(' ');
    expect(f!.replay).toBe(`sealmark call --tool fetch --raw-args '{"max_$'\\''_rows":1,"max_$'\\''_rows":11}' -- ${target}`);
    // Every raw call of the tool: rawArguments is exactly what went on the wire.
    for (const p of RAW_PROBES) {
      const c = callOf(r, 'fetch', p);
      expect(argumentsText(c.request), p).toBe(c.rawArguments);
    }
  });
});

describe('adversarial limits: schemas and caps', () => {
  it('schema-shapes.mjs: no false `admitted` for maximum 1e308; integer enum and multipleOf 1 are bounded; only t_max_not_number lacks a maximum', async () => {
    const r = await run('shapes');
    expect(r.status).toBe('audited');
    expect(findingsOf(r, 'bounded-limits', 'admitted').filter((f) => f.tool === 't_huge_max')).toEqual([]);
    // 1e308 is in range, so the duplicate member (and the over-max probe) are judged by what they did.
    for (const p of ['raw-duplicate', 'limit-over-max']) expect(callOf(r, 't_huge_max', p).invalidBecause, p).toBeUndefined();
    const STATIC = ['no-minimum', 'no-maximum', 'number-type', 'untyped'];
    for (const tool of ['t_enum', 't_number_step']) {
      expect(checkOf(r, 'bounded-limits').findings.filter((f) => f.tool === tool && STATIC.includes(f.messageId)), tool).toEqual([]);
    }
    expect(findingsOf(r, 'bounded-limits', 'no-maximum').map((f) => f.tool)).toEqual(['t_max_not_number']);
  });

  it('optional-anyof.mjs: bounds reached through anyOf / oneOf / allOf / $ref count; bounded-limits pass', async () => {
    const r = await run('anyOf');
    expect(r.status).toBe('audited');
    expect(checkOf(r, 'bounded-limits').verdict).toBe('pass');
    expect(graded(r, 'bounded-limits')).toEqual([]);
    // All four limits were probed.
    expect([...new Set(limitCalls(r, 'search').map((c) => c.target))].sort()).toEqual(['limit', 'max_results', 'page_size', 'top_k']);
  });

  it('many-limits.mjs (1 tool, 12 limits): only the first 5 are sent values, the rest listed in a note', async () => {
    const r = await run('many');
    expect(r.status).toBe('audited');
    const bl = checkOf(r, 'bounded-limits');
    expect(bl.notes).toContain('report_1: only the first 5 limit properties were sent values; schema only: max_f, max_g, max_h, max_i, max_j, max_k, max_l');
    const targets = new Set(limitCalls(r).map((c) => c.target));
    expect([...targets].sort()).toEqual(['max_a', 'max_b', 'max_c', 'max_d', 'max_e']);
    // No limit value was sent to a property beyond the fifth; each of the five got the full set
    // (the tool is not read-only, so the values the schema admits, 0, 1, -5 and 1.0, are not sent).
    const beyond = ['max_f', 'max_g', 'max_h', 'max_i', 'max_j', 'max_k', 'max_l'];
    expect(limitCalls(r).filter((c) => beyond.includes(c.target ?? ''))).toEqual([]);
    for (const p of ['max_a', 'max_b', 'max_c', 'max_d', 'max_e']) {
      expect(limitCalls(r).filter((c) => c.target === p).length, p).toBe(limitCalls(r).filter((c) => c.target === 'max_a').length);
    }
  });

  it('redaction: a common word as an --env value (MODE=limit) leaves check, message and pack ids intact', async () => {
    const r = await run('redactWord');
    expect(r.status).toBe('audited');
    // (Each place the marker went, with some context, so that a failure stays readable.)
    expect(JSON.stringify(r).match(/.{0,60}\[redacted:MODE\].{0,20}/g)).toBeNull();
    expectOwnIds(r);
    expect(r.checks.filter((c) => c.pack === 'limits').map((c) => c.id)).toEqual(['bounded-limits', 'oversized-input', 'concurrency']);
    expect(checkOf(r, 'bounded-limits').verdict).toBe('pass');
    // Probe ids and the request lines that carry the word are kept as sent.
    expect(limitCalls(r).map((c) => c.probe)).toContain('limit-false');
    expect(limitCalls(r).some((c) => c.request.includes('"limit":false'))).toBe(true);
  });

  it('redaction: a longer value (PROFILE=bounded-limits, redacted as a possible secret) never touches sealmark\'s own ids', async () => {
    const r = await run('redactId');
    expect(r.status).toBe('audited');
    expectOwnIds(r);
    expect(checkOf(r, 'bounded-limits').verdict).toBe('pass');
  });
});
