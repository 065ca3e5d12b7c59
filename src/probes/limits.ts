/**
 * The limits gatherer (SPEC section 5, bounded-limits; seed on the Boolean limit): sends every
 * count-like and duration-like property the values a careless caller or a broken client sends in
 * place of a count, with the other arguments valid, some of them as raw JSON text that
 * JSON.stringify cannot write, and records what each call admitted: its reply class, the items it
 * returned and, in the sandbox, the effects it caused.
 */
import { randomBytes } from 'node:crypto';
import type { ResolvedConfig } from '../config/schema.js';
import { boundsOf, countItems, limitProperties, type LimitProperty } from '../limits.js';
import { compileSchema, propertiesOf } from '../schema.js';
import type { Sandbox } from '../target/sandbox.js';
import { readResponse } from '../target/wire.js';
import type { ListedTool, ProbeCall } from '../types.js';
import { sampleValid } from '../values.js';
import { uncallable } from './callable.js';
import { claimNotEnough, mayWriteUnprotected, pastRateLimit, watched } from './watch.js';
import type { Recorder } from './recorder.js';
import type { Session } from '../target/session.js';
import { MAX_HANGS, hangLimitMs, maxTools, validArgs } from './robust-input.js';

/**
 * Limit properties probed per tool (15 calls each): a tool with hundreds of counts would otherwise
 * take minutes. The rest are read statically only, and listed.
 */
export const MAX_LIMIT_PROPERTIES = 5;

/** The value sent in place of a count when no maximum is declared (SPEC section 5: 10^9). */
export const NO_MAXIMUM_PROBE = 1_000_000_000;

/**
 * ms to keep waiting for the reply to a line that is not JSON (`NaN`, `Infinity`) once the server
 * has answered a `tools/list` sent after it: a server that drops such a line never answers it
 * (the official SDKs log the parse error and read on), and waiting out the whole hang limit for
 * each token would only slow the run. A reply that still comes later replaces the "dropped"
 * record before the gatherer returns, so a slow tool that accepted `NaN` is not let off.
 */
export const DROPPED_LINE_GRACE_MS = 300;

/** Probes whose text is not JSON: a silent server may have dropped the line (see {@link limitValues}). */
const NOT_JSON_PROBES = new Set(['raw-nan', 'raw-infinity', 'raw-minus-infinity']);

/** One value a limits probe puts in the probed property. */
export interface LimitValue {
  /** Probe id (`limit-false`, `raw-nan` …), as `explain bounded-limits` lists them. */
  probe: string;
  /** The JSON value sent, for probes that JSON.stringify can write. */
  json?: unknown;
  /** Raw JSON text spliced in place of the value (`NaN`, `1.0`, `1,"limit":5`). */
  raw?: string;
  /** The raw text is not JSON at all: a silent server may have dropped the line. */
  notJson?: boolean;
  /** Sent only where a valid call exists: it serves the item comparison only. */
  admissionOnly?: boolean;
  /** For the duplicate member: the later value, the one JSON.parse and Python's json keep. */
  last?: number;
}

/**
 * The values sent to one limit property, in order (SPEC section 5 bounded-limits): Booleans, zero
 * and one (the item comparison), negatives, a numeric string, a fraction, one past the maximum
 * (10^9 without one); then raw JSON text: `1.0`, `NaN`, `Infinity`, `-Infinity`, `1e309` and the
 * property given twice, first 1 and then one past the maximum (5, the seed's number, without one).
 */
export function limitValues(lp: LimitProperty): LimitValue[] {
  const bounds = boundsOf(lp);
  const over = bounds.max !== undefined ? Math.floor(bounds.max) + 1 : NO_MAXIMUM_PROBE;
  const second = bounds.max !== undefined ? Math.floor(bounds.max) + 1 : 5;
  const key = JSON.stringify(lp.property.name);
  return [
    { probe: 'limit-false', json: false },
    { probe: 'limit-true', json: true },
    { probe: 'limit-zero', json: 0, admissionOnly: true },
    { probe: 'limit-one', json: 1, admissionOnly: true },
    { probe: 'limit-negative', json: -1 },
    { probe: 'limit-minus-five', json: -5, admissionOnly: true },
    { probe: 'limit-string', json: '1' },
    { probe: 'limit-fraction', json: 1.5 },
    { probe: 'limit-over-max', json: over },
    { probe: 'raw-one-point-zero', raw: '1.0' },
    { probe: 'raw-nan', raw: 'NaN', notJson: true },
    { probe: 'raw-infinity', raw: 'Infinity', notJson: true },
    { probe: 'raw-minus-infinity', raw: '-Infinity', notJson: true },
    { probe: 'raw-huge', raw: '1e309' },
    { probe: 'raw-duplicate', raw: `1,${key}:${JSON.stringify(second)}`, last: second },
  ];
}

/**
 * How findings name the value of a limits call: `limit = -1`, and for the duplicate member
 * (whose wire text `1,"limit":5` reads badly after `limit =`) `a duplicate "limit" member (1 then 5)`.
 * `value` is the call's `value` as {@link gatherLimits} records it.
 */
export function valueLabel(property: string, probe: string, value: string): string {
  const key = `1,${JSON.stringify(property)}:`;
  if (probe === 'raw-duplicate' && value.startsWith(key)) return `a duplicate ${JSON.stringify(property)} member (1 then ${value.slice(key.length)})`;
  return `${property} = ${value}`;
}

/**
 * What a raw value means to a JSON Schema validator, for re-validation with Ajv: `1.0` is the
 * integer 1 (JSON Schema: the same mathematical number); the non-JSON tokens and `1e309` (which a
 * JavaScript parser reads as Infinity) are never valid numbers; a duplicate member is read with
 * its last value, as JSON.parse and Python's json read it.
 */
function meaningOf(v: LimitValue): { value: unknown } | undefined {
  if (v.raw === undefined) return { value: v.json };
  if (v.raw === '1.0') return { value: 1 };
  if (v.last !== undefined) return { value: v.last };
  return undefined;
}

/** How one limit property was exercised. */
export interface LimitParamRun {
  tool: string;
  property: string;
  kind: LimitProperty['kind'];
  /**
   * Where a valid call comes from: a `probes:` entry, or a read-only tool whose required
   * arguments sealmark filled. Undefined: no valid call, so no item comparison.
   */
  validCall?: 'probes' | 'read-only';
  /** Probes sent, by id. */
  sent: string[];
  /** Probes not sent and why (a schema-valid value to a tool that may write). */
  notSent: { probe: string; why: string }[];
  /** Why no probe was sent at all. */
  skipped?: string;
}

/** What the limits gatherer did besides its calls. */
export interface LimitsRun {
  params: LimitParamRun[];
  /** Tools with limit properties beyond `max_tools`, not probed. */
  beyondMaxTools: string[];
  /** Limit properties beyond the first {@link MAX_LIMIT_PROPERTIES} of a tool, not probed (their schemas are still read). */
  beyondMaxProperties: { tool: string; properties: string[] }[];
  stopped?: { reason: 'three-hangs' | 'server-gone'; notReached: string[] };
  /** Whether effects were read from the sandbox during these calls. */
  effectsWatched: boolean;
}

/**
 * Marker spliced out of the serialised request and replaced by raw text: random per process, so
 * no schema default or enum value a server declares can be it.
 */
const RAW_MARKER = `sealmark:raw-value:${randomBytes(12).toString('hex')}`;

/**
 * Sends the limit values to every limit property of every callable tool (up to
 * `checks.robust-input.max_tools` tools), one call at a time. A value the tool's own schema
 * accepts is sent only where a valid call is allowed (a `probes:` entry; a read-only tool unless
 * `unprotected`, probes/watch.ts unprotectedFiles, says the user's files are not protected): such
 * a call does real work. Where `unprotected` is set, a tool that may write gets no value at all
 * unless it has a `probes:` entry. Stops after three hangs or when the server is gone, naming what was not reached.
 */
export async function gatherLimits(rec: Recorder, tools: ListedTool[], config: ResolvedConfig, sandbox: Sandbox | undefined, unprotected?: string): Promise<LimitsRun> {
  const run = await probeAll(rec, tools, config, sandbox, unprotected);
  adoptLateReplies(rec, tools);
  return run;
}

/**
 * Replies to non-JSON lines sealmark took as dropped (it stops waiting early, see
 * {@link DROPPED_LINE_GRACE_MS}) that came after all: each becomes its call's reply, classified
 * and scanned again, with the time it took. Safe to call more than once (the audit calls it again
 * at the end, for replies that came after the limits pack). A call that waited out the hang limit
 * stays a hang, whenever its reply came.
 */
export function adoptLateReplies(rec: Recorder, tools: ListedTool[]): void {
  // Request ids restart with each start of the server: a late reply belongs to its own session's call.
  const late = new Map<Session, Map<unknown, { atMs: number; message: unknown }>>();
  for (const s of rec.sessions) late.set(s, new Map(s.wire.lateResponses.map((l) => [l.id, l])));
  for (const call of rec.ownCalls) {
    const l = late.get(rec.sessionOf(call))?.get(call.exchange.id);
    if (!l || call.exchange.reply.kind !== 'hang' || !NOT_JSON_PROBES.has(call.probe)) continue;
    call.exchange.reply = readResponse(l.message as Record<string, unknown>);
    call.exchange.durationMs = l.atMs - call.exchange.startedAtMs;
    const tool = tools.find((t) => t.name === call.tool);
    call.classification = rec.classify(call.exchange.reply, tool ? propertiesOf(tool.inputSchema).map((p) => p.name) : []);
    const reply = call.exchange.reply;
    rec.rescan(call);
    const countable = tool ? safeLimitProperties(tool).some((lp) => lp.property.name === call.target && lp.kind === 'count') : false;
    if (countable && call.classification.class === 'accepted' && reply.kind === 'response') {
      const items = countItems(reply.result);
      if (items !== undefined) call.items = items;
    }
  }
}

/** How often {@link awaitDroppedLines} looks for late replies, in ms. */
const DROPPED_POLL_MS = 25;

/**
 * Waits, before an instance of the server is closed, for the replies to its non-JSON lines that
 * were recorded as dropped: until each is answered (kept in `wire.lateResponses`, adopted by
 * {@link adoptLateReplies}), its server has exited, or it has been waited for `hangMs` since it was
 * sent. A reply within the hang limit is an answer (SPEC section 3 step 3), so a slow tool that
 * accepted `NaN` after the limits pack had moved on is judged on it, whatever ran after.
 *
 * It waits only where such a reply can come: when the server has answered at least one non-JSON
 * line of this instance (its parser reads `NaN`, so an unanswered line may be a tool still at
 * work). A server that answered none drops them in its parser (the TypeScript SDK's stdio
 * transport does) and will never answer: waiting there would be idle time on every audit.
 * Resolves at once when nothing is outstanding, or once `hangMs` (ms) has passed since the last
 * such line.
 */
export async function awaitDroppedLines(rec: Recorder, hangMs: number): Promise<void> {
  const mine = rec.ownCalls.filter((c) => NOT_JSON_PROBES.has(c.probe));
  const reads = (c: ProbeCall) => c.exchange.reply.kind === 'response' || c.exchange.reply.kind === 'malformed' || rec.sessionOf(c).wire.lateResponses.some((l) => l.id === c.exchange.id);
  if (!mine.some(reads)) return;
  const outstanding = () =>
    mine.filter((c) => {
      if (c.exchange.reply.kind !== 'hang' || c.exchange.durationMs >= hangMs) return false;
      const s = rec.sessionOf(c);
      if (s.transport.exit) return false;
      return !s.wire.lateResponses.some((l) => l.id === c.exchange.id) && s.transport.now() - c.exchange.startedAtMs < hangMs;
    });
  while (outstanding().length > 0) await new Promise((r) => setTimeout(r, DROPPED_POLL_MS));
}

async function probeAll(rec: Recorder, tools: ListedTool[], config: ResolvedConfig, sandbox: Sandbox | undefined, unprotected?: string): Promise<LimitsRun> {
  const hangMs = hangLimitMs(config);
  const skip = new Set(config.skip_tools);
  const withLimits = tools.filter((t) => !skip.has(t.name) && !uncallable(t) && safeLimitProperties(t).length > 0);
  const cap = maxTools(config);
  // Another instance calls the tools this one does not own (SPEC section 3 step 3, --instances).
  const chosen = withLimits.slice(0, cap).filter((t) => rec.owns(t.name));
  const run: LimitsRun = { params: [], beyondMaxTools: withLimits.slice(cap).map((t) => t.name), beyondMaxProperties: [], effectsWatched: sandbox !== undefined };
  let hangs = 0;
  /**
   * Raw lines the server already exited on (NaN, Infinity, 1e309: probe → the tool.property it was
   * sent to). Such a line is refused by the line reader before any tool's code runs, so sending it
   * again for another parameter would only spend a restart on the same cause (SPEC section 5: one
   * cause, one finding); bounded-limits reports it once, whatever the parameter.
   */
  const exitedOn = new Map<string, string>();

  for (const [i, tool] of chosen.entries()) {
    rec.progress({ phase: 'limits', tool: tool.name, toolIndex: i + 1, toolCount: chosen.length });
    const declared = propertiesOf(tool.inputSchema).map((p) => p.name);
    const compiled = compileSchema(tool.inputSchema);
    const userProbe = config.probes.find((p) => p.tool === tool.name && p.expect === 'ok');
    const sampled = validArgs(tool);
    const base = userProbe?.arguments ?? (sampled && withSmallLimits(tool, sampled));
    const readOnly = tool.annotations?.readOnlyHint === true;
    const validCall = userProbe ? 'probes' : sampled && readOnly && !unprotected ? 'read-only' : undefined;
    const lps = safeLimitProperties(tool);
    if (lps.length > MAX_LIMIT_PROPERTIES) run.beyondMaxProperties.push({ tool: tool.name, properties: lps.slice(MAX_LIMIT_PROPERTIES).map((lp) => lp.property.name) });
    for (const lp of lps.slice(0, MAX_LIMIT_PROPERTIES)) {
      const entry: LimitParamRun = { tool: tool.name, property: lp.property.name, kind: lp.kind, sent: [], notSent: [] };
      if (validCall) entry.validCall = validCall;
      run.params.push(entry);
      if (!compiled.ok) {
        entry.skipped = `inputSchema does not compile: ${compiled.error}`;
        continue;
      }
      // A probes: entry licenses its own call, not the values sealmark puts in it.
      if (unprotected && !readOnly) {
        entry.skipped = mayWriteUnprotected(unprotected);
        continue;
      }
      if (!base) {
        entry.skipped = 'no valid arguments could be built for the other properties, so a rejection would say nothing about this one';
        continue;
      }
      const others: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(base)) {
        if (k !== lp.property.name) Object.defineProperty(others, k, { value: v, enumerable: true, writable: true, configurable: true });
      }
      for (const v of limitValues(lp)) {
        if (v.admissionOnly && !validCall) continue;
        const meaning = meaningOf(v);
        const args = withProperty(others, lp.property.name, meaning ? meaning.value : RAW_MARKER);
        const invalidBecause = meaning ? compiled.validate(args) : [`${v.raw} is not a finite JSON number`];
        if (invalidBecause.length === 0 && !validCall) {
          const why = readOnly && unprotected ? `the schema admits this value, and ${claimNotEnough(unprotected)}` : 'the schema admits this value and the tool may write: sent only to a read-only tool or one with a probes: entry';
          entry.notSent.push({ probe: v.probe, why });
          continue;
        }
        const before = exitedOn.get(v.probe);
        if (before !== undefined) {
          entry.notSent.push({ probe: v.probe, why: `the server exited on the raw ${v.raw} line already (${before}), before any tool's code: not sent again` });
          continue;
        }
        const sentArgs = v.raw !== undefined ? withProperty(others, lp.property.name, RAW_MARKER) : args;
        const call = await send(rec, {
          tool: tool.name,
          v,
          args: sentArgs,
          hangMs,
          declared,
          sandbox,
          readOnly: tool.annotations?.readOnlyHint === true,
          countable: lp.kind === 'count',
          extra: {
            target: lp.property.name,
            // A function, not a string: `$'` in a property name must not be read as a replacement pattern.
            rawArguments: v.raw !== undefined ? JSON.stringify(sentArgs).replace(JSON.stringify(RAW_MARKER), () => v.raw!) : undefined,
            value: v.raw ?? JSON.stringify(v.json),
            invalidBecause: invalidBecause.length > 0 ? invalidBecause : undefined,
          },
        });
        entry.sent.push(v.probe);
        const cls = call.classification?.class;
        if (cls === 'exited' && (v.notJson || v.probe === 'raw-huge')) exitedOn.set(v.probe, `${tool.name}.${lp.property.name}`);
        if (!(await rec.revive())) {
          run.stopped = { reason: 'server-gone', notReached: notReached(chosen, i, tool.name, lp) };
          return run;
        }
        if (cls === 'hang' && !v.notJson && ++hangs >= MAX_HANGS) {
          run.stopped = { reason: 'three-hangs', notReached: notReached(chosen, i, tool.name, lp) };
          return run;
        }
        if (cls === 'hang' || cls === 'protocol-error') {
          const { alive, exchange } = await rec.session.alive(hangMs);
          rec.add('liveness', exchange, { tool: tool.name });
          if (!alive && !(await rec.restartIfGone())) {
            run.stopped = { reason: 'server-gone', notReached: notReached(chosen, i, tool.name, lp) };
            return run;
          }
        }
      }
    }
  }
  return run;
}

/**
 * Sampled arguments with every duration property set to its smallest sampled value (1, or the
 * minimum), optional ones too: left out, a duration takes the server's default, and a default of
 * ten seconds would make every probe of another property wait it out. Counts are left alone: two
 * counts are often exclusive (`head` and `tail`), and a rejection for that would hide the probe.
 */
function withSmallLimits(tool: ListedTool, sampled: Record<string, unknown>): Record<string, unknown> {
  const compiled = compileSchema(tool.inputSchema);
  if (!compiled.ok) return sampled;
  const out = { ...sampled };
  for (const lp of safeLimitProperties(tool)) {
    if (lp.kind !== 'duration' || lp.property.name in out) continue;
    const { default: _ignored, ...schema } = lp.property.schema;
    const value = lp.property.types.length === 0 ? 1 : sampleValid(schema);
    Object.defineProperty(out, lp.property.name, { value, enumerable: true, writable: true, configurable: true });
  }
  return compiled.validate(out).length === 0 ? out : sampled;
}

/** Limit properties of a tool; a schema sealmark cannot read has none (tool-schemas reports it). */
export function safeLimitProperties(tool: ListedTool): LimitProperty[] {
  try {
    return limitProperties(tool);
  } catch {
    return [];
  }
}

function withProperty(others: Record<string, unknown>, name: string, value: unknown): Record<string, unknown> {
  const out = { ...others };
  // defineProperty: a property named `__proto__` must become a key of its own.
  Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  return out;
}

/** One limits probe to send: the tool, the value, the arguments it goes in, and how to watch it. */
interface Send {
  tool: string;
  v: LimitValue;
  args: Record<string, unknown>;
  hangMs: number;
  declared: string[];
  sandbox: Sandbox | undefined;
  /** The tool states readOnlyHint: true. */
  readOnly: boolean;
  /** The property is a count (items are counted), not a duration. */
  countable: boolean;
  extra: Partial<ProbeCall>;
}

/**
 * Sends one limits probe, watched for effects, and records what it admitted (made once more when
 * it was refused for a rate limit: watch.ts pastRateLimit). A line that is not
 * JSON is followed by a `ping`; once that is answered, the probe's reply is waited for
 * {@link DROPPED_LINE_GRACE_MS} more and then recorded as dropped (a `hang` of the time waited).
 * Its effects are settled after the quiet period except after a rejected call to a tool that
 * claims to be read-only: after an accepted call a late effect would otherwise land on the next
 * call, and a rejected call to a tool that may write is exactly where a late effect matters.
 */
function send(rec: Recorder, s: Send): Promise<ProbeCall> {
  const admitted = (c: ProbeCall) => c.classification?.class === 'accepted' || c.classification?.class === 'lenient-downstream';
  return pastRateLimit(() => watched(s.sandbox, () => make(rec, s), { judged: (c) => !s.readOnly || admitted(c), tool: s.tool }));
}

async function make(rec: Recorder, s: Send): Promise<ProbeCall> {
  const { tool, v, args, hangMs, declared, extra } = s;
  const splice = v.raw !== undefined ? { marker: RAW_MARKER, text: v.raw } : undefined;
  let call: ProbeCall;
  if (v.notJson) {
    const stop = new AbortController();
    const pending = rec.toolCall(v.probe, tool, args, hangMs, declared, extra, { splice, signal: stop.signal });
    // A ping (every MCP server must answer one, MCP 2025-11-25 basic/utilities/ping) behind the
    // line: cheaper than a tools/list, whose whole listing would be kept for every probe.
    const follow = rec.session.request('ping', {}, hangMs).then(async (exchange) => {
      rec.add('liveness', exchange, { tool });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([pending, new Promise((r) => (timer = setTimeout(r, DROPPED_LINE_GRACE_MS)))]);
      clearTimeout(timer);
      stop.abort();
    });
    call = await pending;
    stop.abort();
    await follow;
  } else {
    call = await rec.toolCall(v.probe, tool, args, hangMs, declared, extra, { splice });
  }
  const reply = call.exchange.reply;
  // Items say how much work a count admitted; a duration admits time, not items.
  if (s.countable && call.classification?.class === 'accepted' && reply.kind === 'response') {
    const items = countItems(reply.result);
    if (items !== undefined) call.items = items;
  }
  return call;
}

/** What a stop left out: the rest of this tool (its current property's later values, its later properties) and the later tools. */
function notReached(chosen: ListedTool[], i: number, tool: string, lp: LimitProperty): string[] {
  return [`${tool} (the values of ${lp.property.name} after the last one sent, and any later limit property)`, ...chosen.slice(i + 1).map((t) => t.name)];
}
