/**
 * bounded-limits (pack limits, scored): a count or a duration a caller chooses is bounded by its
 * schema and by the server, and only a real integer in range is admitted (seed on the Boolean
 * limit: "reject ambiguous resource limits before admitting any work"; SPEC section 5).
 */
import { whyNotRun, type Check, type CheckMeta } from './check.js';
import { EFFECT_TIMING, distinctEffects, effectQuote, effectText, rateLimitRule } from './effects-common.js';
import { finding, verdictOf } from './finding.js';
import { upstreamFailureLine } from '../classify.js';
import {
  COUNT_DESCRIPTION,
  COUNT_NAMES,
  COUNT_PREFIXES,
  COUNT_SUFFIXES,
  DURATION_WORDS,
  boundsOf,
  limitProperties,
  type LimitProperty,
} from '../limits.js';
import { DROPPED_LINE_GRACE_MS, MAX_LIMIT_PROPERTIES, NO_MAXIMUM_PROBE, valueLabel } from '../probes/limits.js';
import { hangLimitMs } from '../probes/robust-input.js';
import { sdkAdvice, sdkCause, sdkCauseField, type SdkProbe } from '../target/sdk.js';
import type { Finding, ListedTool, ProbeCall } from '../types.js';

const REJECTED = new Set(['rejected', 'rejected-unnamed', 'text-refusal']);
const ADMITTED = new Set(['accepted', 'lenient-downstream']);

export const meta: CheckMeta = {
  id: 'bounded-limits',
  title: 'Counts and durations are bounded, and only real integers in range are admitted',
  pack: 'limits',
  weight: 'scored',
  scope: 'server',
  lint: true,
  decidedBy: 'protocol-response',
  since: '0.1',
  severity: 'error',
  requires: ['limits'],
  config: [],
  probes: [
    { id: 'limit-false', core: true, description: '`false` in place of the count, the other arguments valid (a Boolean passes `isinstance(x, int)` in Python and reads as 0).' },
    { id: 'limit-true', core: true, description: '`true` in place of the count.' },
    { id: 'limit-zero', core: true, description: '`0`, only where a valid call exists: its item count is compared with that of `1`.' },
    { id: 'limit-one', core: true, description: '`1`, only where a valid call exists: the item count the others are compared with.' },
    { id: 'limit-negative', core: true, description: '`-1` (SQLite reads a negative LIMIT as no limit; a Python slice `items[:-1]` keeps all but one).' },
    { id: 'limit-minus-five', core: false, description: '`-5`, only where a valid call exists, for the item comparison (a slice from the end).' },
    { id: 'limit-string', core: true, description: 'The string `"1"`.' },
    { id: 'limit-fraction', core: true, description: '`1.5`.' },
    { id: 'limit-over-max', core: true, description: `One past the declared maximum; ${NO_MAXIMUM_PROBE} (10^9) when there is none.` },
    { id: 'raw-one-point-zero', core: true, description: 'Raw JSON text `1.0`: the integer 1 to JSON Schema, a float to Python; it must be rejected or treated as 1.' },
    { id: 'raw-nan', core: true, description: 'Raw text `NaN` (not JSON; Python\'s json module and some others parse it).' },
    { id: 'raw-infinity', core: true, description: 'Raw text `Infinity`.' },
    { id: 'raw-minus-infinity', core: true, description: 'Raw text `-Infinity`.' },
    { id: 'raw-huge', core: true, description: 'Raw JSON number `1e309`: valid JSON that overflows a double to Infinity.' },
    { id: 'raw-duplicate', core: true, description: 'The property twice in one object, `{"limit":1,"limit":N}`, N one past the maximum (5 without one): a parser that keeps the last member reads N.' },
    { id: 'items', core: true, part: true, description: 'Items an accepted reply returned: the length of `structuredContent` when it is an array, else of its (longest) array member; else the number of content blocks when there are several; else a JSON array (or an object with an array member) in the one text block; else its non-empty lines.' },
    { id: 'effect-log', core: false, part: true, description: 'In the sandbox, the effects seen during each call (as default-call-effects reads them, identical ones counted once): a call with a value the schema forbids must have none, unless its reply shows the tool used the value (then it was not rejected at all); the effects of valid calls are expected.' },
  ],
  verdicts: [
    { verdict: 'fail', when: 'a value the schema forbids was accepted, or was used for an upstream request that the sandbox refused, or was rejected only after an effect; 0 or a negative returned more items than 1; or a value got no reply (hang) or killed the server' },
    { verdict: 'partial', when: 'the schema leaves a limit unbounded (no type, `number` for a count, no minimum ≥ 0, no maximum), or a value raised an unhandled error' },
    { verdict: 'pass', when: 'every limit is an integer (or bounded number, for durations) from ≥ 0 to a maximum, and every value above was rejected or read as the schema says' },
    { verdict: 'n/a', when: 'no tool has a count-like or duration-like property' },
  ],
  messages: {
    untyped: '{tool}: {param} is a {kind} with no declared type, so any value is valid by the schema',
    'number-type': '{tool}: {param} is a count typed `number`, so 1.5 is valid by the schema; declare `integer`',
    'no-minimum': '{tool}: {param} has {lower}, so a negative {kind} is valid by the schema; declare `minimum: 0` (or 1)',
    'no-maximum': '{tool}: {param} has no maximum, so any {kind} a caller asks for is valid by the schema; declare the largest the server will do',
    admitted: '{tool}: {param} = {values} accepted though the schema forbids {them}',
    'zero-unlimited': '{tool}: {param} = 0 returned {zero} items, more than {param} = 1 ({one}): zero means unlimited',
    'negative-slices': '{tool}: {param} = {value} returned {negative} items, more than {param} = 1 ({one}): a negative {kind} admits more work, not less',
    'used-upstream': '{tool}: {param} = {values} not rejected before an effect, though the schema forbids {them}: the tool connected out ({effect}) and its reply reports the upstream failure ({reply})',
    'effect-on-rejected': '{tool}: {what} was rejected, but the sandbox saw an effect during the call: {effect}',
    'zero-not-compared': '{tool}: whether {param} = 0 means unlimited is not judged: {param} = 0 and {param} = 1 both failed upstream ({reply}), so no items came back to compare',
    'no-answer': '{tool}: {what} got no reply within {waited} ms',
    exited: '{tool}: the server exited on {what}',
    'exited-on-not-json': 'the server exited on request lines its parser cannot read ({values}: not JSON, or a number past the double range), whatever the parameter ({count} calls); JSON-RPC answers such a line with a -32700 parse error{sdk}',
    'internal-error': '{tool}: {what} raised an unhandled error instead of a validation error',
    'protocol-error': '{tool}: {what} was answered with a broken JSON-RPC reply ({problem})',
    dropped: '{tool}: the lines with {param} = {values} (not JSON) were dropped without a reply; JSON-RPC asks for a -32700 parse error with id null',
    'first-member': '{tool}: with {param} given twice the server read the first member ({items} items, as for 1)',
  },
  docs: {
    summary:
      'A limit that accepts `false`, reads 0 as "no limit", slices with a negative, or takes `NaN` admits unbounded work. Python counts a Boolean as an integer, a JavaScript `limit || all` turns 0 into everything, SQLite reads `LIMIT -1` as no limit: ordinary code, each one step from a runaway batch. The schema must bound every count, and the server must reject every value that is not a real integer in range before it does any work.',
    how: [
      `Limit properties are recognised by name (whole names ${COUNT_NAMES.join(', ')}; first word ${COUNT_PREFIXES.join(' or ')} before another word; last word ${COUNT_SUFFIXES.join(' or ')}; snake_case, camelCase, kebab-case and dotted names alike), as durations by their last word (${DURATION_WORDS.join(', ')}) or a first word timeout, or as counts by a description matching ${String(COUNT_DESCRIPTION)}; and only when typed integer or number, or untyped.`,
      'Statically, a count must be `integer`, a duration `integer` or `number`, each with `minimum` ≥ 0 and a `maximum` (`exclusiveMinimum`/`exclusiveMaximum` count as bounds). Each gap is a partial finding with the schema path.',
      'Dynamically, each value of the probe list is sent in place of the property, the other arguments taken from the tool\'s `probes:` entry (expect ok) or sampled from its schema and proven valid with Ajv. Values the schema forbids must be rejected: accepted (or failing downstream after acceptance) is a fail. A value the schema allows (−1 without a minimum, 10^9 without a maximum) is judged by what it did, not by being accepted; it is sent only where a valid call is allowed (a `probes:` entry or a read-only tool), because it is a real call.',
      `Raw JSON text is written on the wire by sealmark itself. \`NaN\` and \`Infinity\` are not JSON: a parse error (-32700), an invalid-params error or a refusal is right; a line dropped without any reply is noted (sealmark moves on ${DROPPED_LINE_GRACE_MS} ms after the server answered a ping sent behind it, and, when the server answered another such line, so its parser reads them, it waits for the line's reply up to the hang limit before it closes the server, so a slow tool's late answer is still judged). \`1.0\` is the integer 1 to JSON Schema, so accepting it is right unless 1 is out of range. A duplicate member whose later value is over the maximum must be rejected, unless the item count shows the server read the first one.`,
      'Where a valid call exists, the items returned for 0, −1 and −5 are compared with those for 1: more items than 1 returned (and more than one item) fails as "zero means unlimited" or "a negative admits more work".',
      'In the sandbox, every call\'s effects are read (after the quiet period below, except a rejected call to a tool that states `readOnlyHint: true`, read at its reply); a call with a value the schema forbids that was rejected but had an effect fails (the work was admitted before the rejection). Identical effects of one call (an HTTP client retrying) are one finding, quoted with their count. A call with a value the schema admits (0 and 1 of the item comparison) is a valid call: its effects are expected and not judged.',
      'An error that names no parameter and reports an upstream HTTP failure (`Request failed with status code 502`), while the sandbox saw the tool connect out during the call, is not a rejection: the tool ran and its request was refused by the sandbox\'s proxy, so a forbidden value there was used (`used-upstream`). When 0 and 1 both fail that way, the zero comparison is not judged (`zero-not-compared`), neither passed nor failed.',
      'A hang (no reply within the hang limit of robust-input) or the server exiting on a value fails. Probing stops after three hangs or when the server is gone, and says what was not reached.',
      rateLimitRule('A call with a limit value'),
      EFFECT_TIMING,
      'Scoring: scored (pass 1, partial 0.5, fail 0).',
    ],
    fix: 'Declare every count as `{"type": "integer", "minimum": 0, "maximum": N}` with N the most the server will do, and validate with exact types (`type(x) is int` in Python, `Number.isInteger` in JavaScript, a JSON Schema validator) before any work. Give 0 one meaning (no items) and never fall back to "all" on a falsy value; reject negatives instead of slicing with them; reject duplicate members and non-JSON constants when you parse (Python: `object_pairs_hook`, `parse_constant`).',
    falsePositives: [
      'A property named like a count that is not one (`n` as a node id, `depth` of a colour) is probed as a count; exclude its tool with `skip_tools` or rename the property.',
      'A tool whose limit 1 legitimately returns one group of many items can look like 0 returning more than 1; the comparison only fails when 0 or a negative returns more items than 1 did and more than one item.',
    ],
    falseNegatives: [
      'Item counts are read from the reply only; a tool that admits work it does not return (an in-memory batch, a queue) is caught by the effect log in the sandbox, or not at all.',
      'Limits nested below the top level of the arguments are not recognised.',
      'A tool whose other required arguments sealmark cannot fill validly gets no dynamic probes (give it a `probes:` entry).',
      'Without a valid call (no `probes:` entry, not read-only) item counts are not compared.',
    ],
    limits: [
      'Up to `checks.robust-input.max_tools` tools are probed, and the first 5 limit properties of each; the others are listed (their schemas are still read).',
      'Raw JSON probes write text that is not JSON on purpose; MCP asks clients to send only valid messages, so a server that drops those lines is noted, not failed.',
    ],
  },
};

/** The raw probes whose line is not JSON at all (NaN and Infinity tokens). */
const NOT_JSON: ReadonlySet<string> = new Set(['raw-nan', 'raw-infinity', 'raw-minus-infinity']);

/** Raw lines a strict parser may refuse outright: not JSON, or 1e309 (valid JSON past the double range). */
const UNREADABLE: ReadonlySet<string> = new Set([...NOT_JSON, 'raw-huge']);

/** The limit probes, by id (every call of the limits gatherer but liveness). */
const PROBE_IDS = new Set(meta.probes.filter((p) => !p.part).map((p) => p.id));

export const check: Check = {
  meta,
  judge(a) {
    const statics = a.tools.flatMap((t) => staticFindings(t));
    const props = a.tools.reduce((n, t) => n + safeCount(t), 0);
    if (props === 0) return { id: meta.id, verdict: 'n/a', findings: [], notes: ['no tool has a count-like or duration-like property'] };
    const notes: string[] = [];
    const dynamic: Finding[] = [];
    const run = a.limits;
    if (!run) notes.push(`the limit values were not sent (${whyNotRun(a)}); only the schemas were read`);
    for (const p of run?.params ?? []) {
      const label = `${p.tool}.${p.property}`;
      if (p.skipped) notes.push(`${label}: not probed: ${p.skipped}`);
      for (const n of p.notSent) notes.push(`${label}: ${n.probe} not sent: ${n.why}`);
      const calls = a.calls.filter((c) => c.tool === p.tool && c.target === p.property && PROBE_IDS.has(c.probe));
      dynamic.push(...judgeCalls(p.tool, p.property, p.kind, calls, hangLimitMs(a.config)));
      // A duration admits time, not items: only counts are compared.
      if (p.kind !== 'count') continue;
      if (p.validCall && !p.skipped) dynamic.push(...compareItems(p.tool, p.property, p.kind, calls, notes));
      else if (calls.length > 0) notes.push(`${label}: item counts not compared: no valid call (give the tool a probes: entry, or it is not read-only)`);
    }
    if (run?.beyondMaxTools.length) notes.push(`not probed (beyond max_tools): ${run.beyondMaxTools.join(', ')}`);
    for (const b of run?.beyondMaxProperties ?? []) notes.push(`${b.tool}: only the first ${MAX_LIMIT_PROPERTIES} limit properties were sent values; schema only: ${b.properties.join(', ')}`);
    if (run?.stopped) notes.push(`probing stopped (${run.stopped.reason}); not reached: ${run.stopped.notReached.join(', ')}`);
    // One cause, one finding: the exits on lines that are not JSON, over every tool and parameter.
    const own = new Set((run?.params ?? []).map((p) => `${p.tool}\u0000${p.property}`));
    const notJson = a.calls.filter((c) => UNREADABLE.has(c.probe) && c.classification?.class === 'exited' && own.has(`${c.tool}\u0000${c.target}`));
    if (notJson.length > 0) {
      // The SDK is named only when exiting is what its line reader is known to do (src/target/sdk.ts).
      const probes: SdkProbe[] = [...new Set(notJson.map((c): SdkProbe => (c.probe === 'raw-huge' ? 'number-out-of-range' : 'not-json-line')))];
      const cause = probes.map((p) => sdkCause(a.sdk, p, { kind: 'exited' })).find((c) => c !== undefined);
      const sdk = cause ? `; ${sdkAdvice(cause, meta.id, 'exited-on-not-json')}` : '';
      const values = [...new Set(notJson.map((c) => c.value ?? ''))].join(', ');
      dynamic.push(finding(meta, 'exited-on-not-json', 'fail', { values, count: notJson.length, sdk }, { calls: notJson.map((c) => c.seq) }, cause ? { sdkCause: sdkCauseField(cause) } : {}));
    }
    const findings = [...statics, ...dynamic];
    return { id: meta.id, verdict: verdictOf(findings), findings, notes };
  },
};

function safeCount(t: ListedTool): number {
  try {
    return limitProperties(t).length;
  } catch {
    return 0;
  }
}

/** The static half: what the schema of each limit property admits. */
function staticFindings(t: ListedTool): Finding[] {
  let props: LimitProperty[];
  try {
    props = limitProperties(t);
  } catch {
    return [];
  }
  const out: Finding[] = [];
  for (const lp of props) {
    const ev = { schemaPaths: [`tools[${t.index}].inputSchema.${lp.path}`] };
    const data = { tool: t.name, param: lp.property.name, kind: lp.kind };
    const b = boundsOf(lp);
    if (b.types.length === 0) out.push(finding(meta, 'untyped', 'partial', data, ev, { tool: t.name }));
    else if (lp.kind === 'count' && b.types.includes('number') && !b.types.includes('integer')) out.push(finding(meta, 'number-type', 'partial', data, ev, { tool: t.name }));
    if (b.min === undefined || b.min < 0) {
      out.push(finding(meta, 'no-minimum', 'partial', { ...data, lower: b.min === undefined ? 'no minimum' : `minimum ${b.min}` }, ev, { tool: t.name }));
    }
    if (b.max === undefined) out.push(finding(meta, 'no-maximum', 'partial', data, ev, { tool: t.name }));
  }
  return out;
}

/**
 * The line of the reply of a call that ran and failed upstream (see {@link upstreamFailureLine}):
 * an error naming no parameter that quotes an HTTP 5xx, while the sandbox saw a network effect
 * during the call. Undefined for any other call.
 */
function failedUpstream(c: ProbeCall): string | undefined {
  if (c.classification?.class !== 'rejected-unnamed') return undefined;
  if (!c.effects?.some((e) => e.kind === 'network')) return undefined;
  return upstreamFailureLine(c.classification.text);
}

/** The dynamic half: each call's reply class, and its effects when it was rejected. */
function judgeCalls(tool: string, param: string, kind: string, calls: ProbeCall[], hangMs: number): Finding[] {
  const out: Finding[] = [];
  const data = (c: ProbeCall) => ({ tool, param, kind, value: c.value ?? '', what: valueLabel(param, c.probe, c.value ?? '') });
  const ev = (c: ProbeCall, quotes: string[] = []) => ({ calls: [c.seq], quotes: quotes.filter(Boolean) });
  const one = calls.find((c) => c.probe === 'limit-one')?.items;
  const admitted: ProbeCall[] = [];
  const upstream: { c: ProbeCall; line: string }[] = [];
  const dropped: ProbeCall[] = [];
  for (const c of calls) {
    const cls = c.classification?.class;
    const reply = c.exchange.reply;
    const line = failedUpstream(c);
    if (line !== undefined) {
      // The tool ran with the value; for a value the schema admits that is what it should do.
      if (c.invalidBecause) upstream.push({ c, line });
      continue;
    }
    if (cls && REJECTED.has(cls)) {
      // A valid call (0 and 1 of the item comparison) may do its work: only a forbidden value's effect counts.
      if (!c.invalidBecause) continue;
      for (const e of distinctEffects(c)) out.push(finding(meta, 'effect-on-rejected', 'fail', { ...data(c), effect: effectText(e) }, ev(c, [effectQuote(e)]), { tool }));
      continue;
    }
    if (cls && ADMITTED.has(cls)) {
      if (!c.invalidBecause) continue;
      if (c.probe === 'raw-duplicate' && c.items !== undefined && one !== undefined && c.items <= one) {
        out.push(finding(meta, 'first-member', 'info', { ...data(c), items: c.items }, ev(c), { tool }));
        continue;
      }
      admitted.push(c);
      continue;
    }
    if (cls === 'hang' && reply.kind === 'hang') {
      const notJson = NOT_JSON.has(c.probe);
      if (notJson && reply.waitedMs < hangMs) dropped.push(c);
      else out.push(finding(meta, 'no-answer', 'fail', { ...data(c), waited: reply.waitedMs }, ev(c), { tool }));
    } else if (cls === 'exited') {
      // A line that is not JSON kills the transport before any tool or parameter is read: one
      // finding for the server (see the judge), not one per parameter.
      if (!UNREADABLE.has(c.probe)) out.push(finding(meta, 'exited', 'fail', data(c), ev(c), { tool }));
    } else if (cls === 'internal-error') {
      out.push(finding(meta, 'internal-error', 'partial', data(c), ev(c, [c.classification?.text ?? '']), { tool }));
    } else if (cls === 'protocol-error') {
      const problem = reply.kind === 'malformed' ? reply.problem : 'not a JSON-RPC response';
      out.push(finding(meta, 'protocol-error', 'partial', { ...data(c), problem }, ev(c), { tool }));
    }
  }
  if (dropped.length > 0) {
    out.push(finding(meta, 'dropped', 'info', { tool, param, values: dropped.map((c) => c.value).join(', ') }, { calls: dropped.map((c) => c.seq) }, { tool }));
  }
  if (upstream.length > 0) {
    const effects = distinctEffects(upstream[0]!.c).filter((e) => e.kind === 'network');
    out.push(
      finding(
        meta,
        'used-upstream',
        'fail',
        { tool, param, kind, values: upstream.map(({ c }) => shown(param, c)).join(', '), them: upstream.length === 1 ? 'it' : 'them', effect: effects.map(effectText).join('; '), reply: upstream[0]!.line },
        { calls: upstream.map(({ c }) => c.seq), quotes: [upstream[0]!.line, ...effects.map(effectQuote)] },
        { tool },
      ),
    );
  }
  if (admitted.length > 0) {
    const values = admitted.map((c) => (c.items !== undefined ? `${shown(param, c)} (${itemsText(c.items)})` : shown(param, c)));
    out.push(
      finding(
        meta,
        'admitted',
        'fail',
        { tool, param, kind, values: values.join(', '), them: admitted.length === 1 ? 'it' : 'them' },
        { calls: admitted.map((c) => c.seq), quotes: admitted.flatMap((c) => c.invalidBecause?.slice(0, 1) ?? []) },
        { tool },
      ),
    );
  }
  return out;
}

/** Item counts of 0 and negatives against 1 (only where a valid call exists). */
function compareItems(tool: string, param: string, kind: string, calls: ProbeCall[], notes: string[]): Finding[] {
  const by = (probe: string) => calls.find((c) => c.probe === probe);
  const oneCall = by('limit-one');
  const one = oneCall?.items;
  const zeroCall = by('limit-zero');
  const failed = (c: ProbeCall | undefined) => (c ? (failedUpstream(c) ?? (c.classification?.class === 'lenient-downstream' ? c.classification.text : undefined)) : undefined);
  const zeroFailed = failed(zeroCall);
  const oneFailed = failed(oneCall);
  if (zeroFailed !== undefined && oneFailed !== undefined) {
    // Neither a pass nor a fail: the sandbox kept the tool from fetching what it would count.
    return [finding(meta, 'zero-not-compared', 'info', { tool, param, kind, reply: oneFailed }, { calls: [zeroCall!.seq, oneCall!.seq], quotes: [zeroFailed, oneFailed] }, { tool })];
  }
  if (one === undefined) {
    const why = !oneCall
      ? `${param} = 1 was not sent`
      : oneFailed !== undefined
        ? `${param} = 1 failed upstream (${oneFailed}), so no items came back`
        : `${param} = 1 was not accepted with a countable reply (${oneCall.classification?.class ?? 'no reply'})`;
    notes.push(`${tool}.${param}: item counts not compared: ${why}`);
    return [];
  }
  const out: Finding[] = [];
  const more = (c: ProbeCall | undefined) => c?.items !== undefined && c.items > one && c.items > 1;
  const zero = by('limit-zero');
  if (zero && more(zero)) {
    out.push(finding(meta, 'zero-unlimited', 'fail', { tool, param, kind, zero: zero.items!, one }, { calls: [zero.seq, oneCall!.seq] }, { tool }));
  }
  const negatives = [by('limit-negative'), by('limit-minus-five')].filter(more) as ProbeCall[];
  if (negatives.length > 0) {
    const n = negatives[0]!;
    out.push(
      finding(
        meta,
        'negative-slices',
        'fail',
        { tool, param, kind, value: negatives.map((c) => c.value).join(' and '), negative: negatives.map((c) => c.items).join(' and '), one },
        { calls: [...negatives.map((c) => c.seq), oneCall!.seq], quotes: negatives.map((c) => `${param} = ${c.value}: ${itemsText(c.items!)}; ${param} = 1: ${itemsText(one)}`) },
        { tool: n.tool },
      ),
    );
  }
  return out;
}

/** A value in a list after `{param} =`: the value as sent, the duplicate member described (see {@link valueLabel}). */
function shown(param: string, c: ProbeCall): string {
  const label = valueLabel(param, c.probe, c.value ?? '');
  return label.startsWith(`${param} = `) ? label.slice(param.length + 3) : label;
}

/** `1 item`, `5 items`. */
function itemsText(n: number): string {
  return `${n} ${n === 1 ? 'item' : 'items'}`;
}
