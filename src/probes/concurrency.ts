/**
 * The concurrency gatherer (SPEC section 5, concurrency): 16 invalid tools/call requests and one
 * tools/list written at once, as a client running several model turns in parallel does, then a
 * liveness tools/list. Every id must be answered exactly once.
 */
import type { ResolvedConfig } from '../config/schema.js';
import { propertiesOf } from '../schema.js';
import type { ListedTool, ProbeCall } from '../types.js';
import type { Recorder } from './recorder.js';
import { hangLimitMs, maxTools, planSafely } from './robust-input.js';

/** Concurrent invalid calls (SPEC section 5). */
export const CONCURRENT_CALLS = 16;
/** ms to keep listening after the burst for a second answer to an id already answered. */
export const DUPLICATE_WINDOW_MS = 250;
/** The tool name used when no tool can be given an invalid call: an unknown tool is invalid too. */
export const NO_SUCH_TOOL = 'sealmark_no_such_tool';

/** What the concurrency gatherer did besides its calls. */
export interface ConcurrencyRun {
  /** Request ids of the burst (16 tools/call and the tools/list). */
  ids: number[];
  /** Responses with one of those ids that came after the id was answered (second answers). */
  duplicates: { id: number; message: unknown }[];
  /** Responses during the burst that named no id of it (a wrong or null id). */
  foreign: unknown[];
  /** How the invalid calls were chosen. */
  source: 'tools' | 'unknown-tool';
  /** The tools/list after the burst (answered at once as exited when the server had exited). */
  liveness?: { seq: number; alive: boolean };
}

/**
 * Sends the burst: each call is the first planned robust-input probe of a tool, round robin over
 * the tools that have one among the first `checks.robust-input.max_tools` (skip_tools left out;
 * where `unprotected`, probes/watch.ts unprotectedFiles, only tools stating readOnlyHint: true) (a
 * call to a tool name that does not exist when none has), plus one
 * tools/list; waits for every reply (each up to the hang limit), listens
 * {@link DUPLICATE_WINDOW_MS} more for second answers, then checks the server is alive.
 */
export async function gatherConcurrency(rec: Recorder, tools: ListedTool[], config: ResolvedConfig, unprotected?: string): Promise<ConcurrencyRun> {
  const hangMs = hangLimitMs(config);
  const skip = new Set(config.skip_tools);
  const planned = tools
    .filter((t) => !skip.has(t.name))
    // Where the user's files are unprotected, invalid input goes only to tools that state they are read-only.
    .filter((t) => !unprotected || t.annotations?.readOnlyHint === true)
    .slice(0, maxTools(config))
    .map((t) => ({ tool: t, probe: planSafely(t).plan[0] }))
    .filter((x): x is { tool: ListedTool; probe: NonNullable<typeof x.probe> } => x.probe !== undefined);
  rec.progress({ phase: 'concurrency' });
  const strayStart = rec.session.wire.strayResponses.length;
  const calls: Promise<ProbeCall>[] = [];
  for (let k = 0; k < CONCURRENT_CALLS; k++) {
    const pick = planned.length > 0 ? planned[k % planned.length] : undefined;
    if (pick) {
      const declared = propertiesOf(pick.tool.inputSchema).map((p) => p.name);
      calls.push(rec.toolCall('concurrent-call', pick.tool.name, pick.probe.args, hangMs, declared, { target: `${pick.probe.probe}: ${pick.probe.target}`, invalidBecause: pick.probe.invalidBecause }));
    } else {
      calls.push(rec.toolCall('concurrent-call', NO_SUCH_TOOL, {}, hangMs, []));
    }
  }
  const list = rec.session.request('tools/list', {}, hangMs).then((ex) => rec.add('concurrent-list', ex));
  const done = await Promise.all([...calls, list]);
  await new Promise((r) => setTimeout(r, DUPLICATE_WINDOW_MS));
  const ids = new Set(done.map((c) => c.exchange.id));
  const run: ConcurrencyRun = { ids: [...ids], duplicates: [], foreign: [], source: planned.length > 0 ? 'tools' : 'unknown-tool' };
  for (const s of rec.session.wire.strayResponses.slice(strayStart)) {
    const id = (s.message as { id?: unknown }).id;
    if (typeof id === 'number' && ids.has(id)) run.duplicates.push({ id, message: s.message });
    else run.foreign.push(s.message);
  }
  // Sent even to a server known gone (answered at once as exited): the recorded exit is what the
  // recorder weighs the burst's calls against when it starts the server again.
  const { alive, exchange } = await rec.session.alive(hangMs);
  run.liveness = { seq: rec.add('liveness', exchange).seq, alive };
  return run;
}
