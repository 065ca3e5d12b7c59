/**
 * The strict-arguments gatherer (SPEC section 5, pack core): the two calls robust-input
 * deliberately does not make, because they are valid apart from the one fault they probe.
 *
 * - `no-arguments`: a `tools/call` whose params omit `arguments` altogether, as some clients send
 *   for a tool they think takes none. To a tool with required arguments it is invalid and may go to
 *   any tool; to a tool whose schema requires nothing it is a valid call, which must be answered.
 * - `extra-only`: otherwise valid arguments plus `sm_unexpected`, where the schema declares
 *   `additionalProperties: false`: the undeclared key must be refused, not silently dropped.
 *
 * A call that is valid apart from the probed fault may run the tool, so it goes only to a tool that
 * states `readOnlyHint: true` or has a `probes:` entry (whose arguments it reuses), never to a tool
 * that may write: the effects pack's `{}` calls, in the sandbox, are where writing tools are called.
 * Where the user's files are unprotected (no copy-on-write layer over them), a tool that may write
 * gets none of these calls, its `probes:` entry notwithstanding (the entry is the user's call, made
 * by robust-input; these are sealmark's), and a read-only tool only with a `probes:` entry.
 */
import { compileSchema, forbidsExtra, propertiesOf, requiredOf } from '../schema.js';
import { UNEXPECTED_KEY, UNEXPECTED_VALUE } from '../values.js';
import type { ResolvedConfig } from '../config/schema.js';
import type { ListedTool } from '../types.js';
import type { Recorder } from './recorder.js';
import type { Sandbox } from '../target/sandbox.js';
import { uncallable } from './callable.js';
import { hangLimitMs, validArgs } from './robust-input.js';
import { claimNotEnough, mayWriteUnprotected, watched } from './watch.js';

/**
 * One planned strict-arguments call. `args` undefined = the `arguments` member is omitted. The two
 * control calls (`empty-arguments`: `{}`, `valid-arguments`: extra-only's arguments without the
 * extra key) say what the tool does without the probed fault, so that only what the fault changes
 * is judged (one cause, one finding).
 */
export interface StrictCall {
  probe: 'no-arguments' | 'extra-only' | 'empty-arguments' | 'valid-arguments';
  args: Record<string, unknown> | undefined;
  /** Ajv's errors for the arguments (`{}` for a no-arguments call); empty = a valid call (a no-arguments call to a tool that requires nothing). */
  invalidBecause: string[];
  /** Where the valid part of the arguments came from. */
  from?: 'probes-entry' | 'sampled';
}

/** Per-tool bookkeeping: the calls sent, or why none could be. */
export interface StrictToolRun {
  tool: string;
  probes: string[];
  /** Why the tool got no call, in words (it may write, its schema does not compile …). */
  notJudged?: string;
}

/** What the strict-arguments gatherer recorded beyond its calls. */
export interface StrictRun {
  tools: StrictToolRun[];
  /** Tools beyond `max_tools`, not probed. */
  beyondMaxTools: string[];
  /** Set when probing stopped early because the server was gone and could not be started again. */
  stopped?: { reason: 'server-gone'; notReached: string[] };
}

/** Most tools probed: `checks.strict-arguments.max_tools` (25 by default, as robust-input). */
export function strictMaxTools(config: ResolvedConfig): number {
  const own = config.checks['strict-arguments']?.max_tools;
  return typeof own === 'number' ? own : 25;
}

/**
 * The strict-arguments calls for one tool, or why it gets none. `userArgs` are the arguments of
 * the tool's first `probes:` entry that expects `ok`, when there is one.
 */
export function planStrict(tool: ListedTool, userArgs?: Record<string, unknown>, unprotected?: string): { calls: StrictCall[]; notJudged?: string } {
  const cannot = uncallable(tool);
  if (cannot) return { calls: [], notJudged: cannot };
  const compiled = compileSchema(tool.inputSchema);
  if (!compiled.ok) return { calls: [], notJudged: `inputSchema does not compile: ${compiled.error}` };
  const readOnly = tool.annotations?.readOnlyHint === true;
  // Where the user's files are unprotected, a probes: entry licenses valid calls only to a tool
  // that states readOnlyHint: true (its entry is the user's own call, sent anyway by robust-input;
  // the calls here are sealmark's), and a tool that may write gets none of them.
  const safe = unprotected ? readOnly && userArgs !== undefined : readOnly || userArgs !== undefined;
  const calls: StrictCall[] = [];
  const required = requiredOf(tool.inputSchema);
  const emptyValid = compiled.validate({}).length === 0;
  // A tool that requires something: omitting `arguments` is invalid, and may go to any tool, but
  // not to one that may write where the user's files are unprotected.
  if (required.length > 0 && !emptyValid) {
    if (unprotected && !readOnly) return { calls, notJudged: `not sent: ${mayWriteUnprotected(unprotected)}` };
    calls.push({ probe: 'no-arguments', args: undefined, invalidBecause: compiled.validate({}) });
  }
  else if (emptyValid && safe) {
    calls.push({ probe: 'empty-arguments', args: {}, invalidBecause: [] });
    calls.push({ probe: 'no-arguments', args: undefined, invalidBecause: [] });
  }
  if (forbidsExtra(tool.inputSchema) && safe) {
    const own = userArgs !== undefined && compiled.validate(userArgs).length === 0 ? userArgs : undefined;
    const base = own ?? validArgs(tool);
    if (base && !(UNEXPECTED_KEY in base)) {
      const args = { ...base, [UNEXPECTED_KEY]: UNEXPECTED_VALUE };
      // Sent only when the schema itself refuses the undeclared key (a patternProperties or a
      // property named sm_unexpected would make it valid).
      const invalidBecause = compiled.validate(args);
      if (invalidBecause.length > 0) {
        const from = own ? 'probes-entry' : 'sampled';
        calls.push({ probe: 'valid-arguments', args: base, invalidBecause: [], from });
        calls.push({ probe: 'extra-only', args, invalidBecause, from });
      }
    }
  }
  if (calls.length > 0) return { calls };
  if (!safe && readOnly && (emptyValid || forbidsExtra(tool.inputSchema))) return { calls, notJudged: `a valid call to this read-only tool was not sent: ${claimNotEnough(unprotected!)}` };
  if (!safe && unprotected && (emptyValid || forbidsExtra(tool.inputSchema))) return { calls, notJudged: `not sent: ${mayWriteUnprotected(unprotected)}` };
  if (!safe && (emptyValid || forbidsExtra(tool.inputSchema))) return { calls, notJudged: 'a valid call could run a tool that may write: it states no readOnlyHint: true and has no probes: entry' };
  return { calls, notJudged: 'nothing to probe: it requires no arguments and does not forbid undeclared keys' };
}

/**
 * Runs strict-arguments over the listed tools (minus `skip_tools`, the first `max_tools`): each
 * planned call, watched in the sandbox; a server that exits is started again for the rest
 * ({@link Recorder.revive}).
 */
export async function gatherStrictArguments(rec: Recorder, tools: ListedTool[], config: ResolvedConfig, sandbox?: Sandbox, unprotected?: string): Promise<StrictRun> {
  const hangMs = hangLimitMs(config);
  const skip = new Set(config.skip_tools);
  const eligible = tools.filter((t) => !skip.has(t.name));
  const limit = strictMaxTools(config);
  // Another instance calls the tools this one does not own (SPEC section 3 step 3, --instances).
  const chosen = eligible.slice(0, limit).filter((t) => rec.owns(t.name));
  const run: StrictRun = { tools: [], beyondMaxTools: eligible.slice(limit).map((t) => t.name) };
  for (const [i, tool] of chosen.entries()) {
    rec.progress({ phase: 'strict-arguments', tool: tool.name, toolIndex: i + 1, toolCount: chosen.length });
    const entry = config.probes.find((p) => p.tool === tool.name && p.expect === 'ok');
    const { calls, notJudged } = planStrict(tool, entry?.arguments as Record<string, unknown> | undefined, unprotected);
    const own: StrictToolRun = { tool: tool.name, probes: [], ...(notJudged ? { notJudged } : {}) };
    run.tools.push(own);
    const declared = propertiesOf(tool.inputSchema).map((p) => p.name);
    let controlFailed = false;
    for (const c of calls) {
      // A probe whose control call hung or took the server down could only repeat that: not sent.
      if (controlFailed && (c.probe === 'no-arguments' || c.probe === 'extra-only')) {
        controlFailed = false;
        continue;
      }
      if (!(await rec.revive())) {
        run.stopped = { reason: 'server-gone', notReached: [`${tool.name} (${c.probe})`, ...chosen.slice(i + 1).map((t) => t.name)] };
        return run;
      }
      // A call the tool may run (a valid one, or extra-only's valid arguments) waits the grace
      // period for what it set off.
      const mayRun = c.invalidBecause.length === 0 || c.probe === 'extra-only';
      const target = c.probe === 'extra-only' ? UNEXPECTED_KEY : c.probe === 'no-arguments' ? '(root)' : undefined;
      const extra = { ...(target ? { target } : {}), ...(c.invalidBecause.length > 0 ? { invalidBecause: c.invalidBecause } : {}) };
      const call = await watched(sandbox, () => rec.toolCall(c.probe, tool.name, c.args, hangMs, declared, extra), { judged: mayRun, tool: tool.name });
      own.probes.push(c.probe);
      const cls = call.classification?.class;
      if (c.probe === 'empty-arguments' || c.probe === 'valid-arguments') controlFailed = cls === 'hang' || cls === 'exited';
    }
  }
  return run;
}
