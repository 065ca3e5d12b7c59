/**
 * The design gatherer (SPEC section 5, pack design): calls that test what a tool's design
 * promises, inside the sandbox only. idempotency-key: a tool that writes and is not idempotent,
 * given a valid call (a `probes:` entry), is called twice with the same arguments (and the same
 * key when it offers one). two-step-writes: an execute step is called with a made-up proposal id.
 */
import { randomBytes } from 'node:crypto';
import type { ResolvedConfig } from '../config/schema.js';
import { hintsOf, KEY_NAMES, nameIs, nameStyleOf, PROPOSAL_NAMES, verbOf, type NameStyle } from '../naming.js';
import { propertiesOf, requiredOf } from '../schema.js';
import type { Sandbox } from '../target/sandbox.js';
import type { ListedTool } from '../types.js';
import { sampleProperty } from '../values.js';
import { uncallable } from './callable.js';
import type { Recorder } from './recorder.js';
import { hangLimitMs, maxTools } from './robust-input.js';
import { watched, writesReachYourFiles } from './watch.js';

/** The key value sealmark sends to both calls of a repeated write (random per run: no server can special-case it). */
export const REPEAT_KEY = `repeat-${randomBytes(8).toString('hex')}`;
/** The proposal id no proposal step ever issued (random per run); a numeric id gets {@link MADE_UP_NUMBER}. */
export const MADE_UP_PROPOSAL = `proposal-${randomBytes(8).toString('hex')}`;
export const MADE_UP_NUMBER = 900_000_000 + randomBytes(3).readUIntBE(0, 3);

/**
 * A tool that writes and is not idempotent: its hints (MCP defaults applied) or its name say so;
 * `style` is the server's naming style ({@link nameStyleOf}: a shared vendor prefix, verb first or last).
 */
export function writesNonIdempotently(tool: ListedTool, style?: NameStyle): boolean {
  const h = hintsOf(tool);
  if (h.readOnly || h.idempotent) return false;
  return h.stated.readOnlyHint === false || verbOf(tool.name, tool, style)?.kind === 'write';
}

/** The tool's idempotency key property, if it offers one. */
export function keyProperty(tool: ListedTool): string | undefined {
  return propertiesOf(tool.inputSchema).find((p) => p.types.includes('string') && nameIs(p.name, KEY_NAMES))?.name;
}

/** The proposal id an execute step requires, if it requires one (a string or a number). */
export function proposalProperty(tool: ListedTool): string | undefined {
  const required = new Set(requiredOf(tool.inputSchema));
  return propertiesOf(tool.inputSchema).find((p) => required.has(p.name) && nameIs(p.name, PROPOSAL_NAMES))?.name;
}

/** What the design gatherer did. */
export interface DesignRun {
  ran: boolean;
  why?: string;
  /** Tools called twice with the same intent: the two calls' seqs and the key sent (if any). */
  repeats: { tool: string; key?: string; seqs: [number, number] }[];
  /** Writing, non-idempotent tools not repeated for want of a valid call. */
  notRepeated: string[];
  /** Execute steps sent a made-up proposal id: the call's seq. */
  madeUp: { tool: string; property: string; seq: number }[];
  /** Tools beyond `checks.robust-input.max_tools`, neither repeated nor sent a made-up proposal. */
  beyondMaxTools: string[];
}

/**
 * Runs the repeats and the made-up proposals, one call at a time, in the sandbox (or with
 * --allow-effects). Without either, nothing is called: these are real writes.
 */
export async function gatherDesign(rec: Recorder, tools: ListedTool[], config: ResolvedConfig, sandbox: Sandbox | undefined, allowEffects: boolean): Promise<DesignRun> {
  const run: DesignRun = { ran: false, repeats: [], notRepeated: [], madeUp: [], beyondMaxTools: [] };
  const uncontained = writesReachYourFiles(sandbox, rec.session.remote);
  if (uncontained && !allowEffects) {
    run.why = `${uncontained} and no --allow-effects: no write was repeated and no made-up proposal sent`;
    return run;
  }
  run.ran = true;
  const hangMs = hangLimitMs(config);
  const skip = new Set(config.skip_tools);
  const eligible = tools.filter((t) => !skip.has(t.name) && !uncallable(t));
  run.beyondMaxTools = eligible.slice(maxTools(config)).map((t) => t.name);
  // Another instance calls the tools this one does not own (SPEC section 3 step 3, --instances).
  const chosen = eligible.slice(0, maxTools(config)).filter((t) => rec.owns(t.name));
  const style = nameStyleOf(tools);
  for (const tool of chosen) {
    if (!(await rec.revive())) break;
    const declared = propertiesOf(tool.inputSchema).map((p) => p.name);
    const proposal = proposalProperty(tool);
    if (proposal) {
      rec.progress({ phase: 'two-step-writes', tool: tool.name });
      const args: Record<string, unknown> = {};
      for (const p of propertiesOf(tool.inputSchema)) {
        if (p.name === proposal) args[p.name] = p.types.includes('string') || p.types.length === 0 ? MADE_UP_PROPOSAL : MADE_UP_NUMBER;
        // Approval switches set as a filler would: the proposal id alone must stop the call.
        else if (p.types.includes('boolean')) args[p.name] = true;
        else if (p.required) args[p.name] = sampleProperty(p);
      }
      const c = await watched(sandbox, () => rec.toolCall('made-up-proposal', tool.name, args, hangMs, declared, { target: proposal }), { always: true, blames: true });
      run.madeUp.push({ tool: tool.name, property: proposal, seq: c.seq });
    }
    if (!writesNonIdempotently(tool, style)) continue;
    const entry = config.probes.find((p) => p.tool === tool.name && p.expect === 'ok');
    if (!entry) {
      run.notRepeated.push(tool.name);
      continue;
    }
    rec.progress({ phase: 'idempotency-key', tool: tool.name });
    const key = keyProperty(tool);
    const args: Record<string, unknown> = { ...entry.arguments };
    if (key && !(key in args)) args[key] = REPEAT_KEY;
    const first = await watched(sandbox, () => rec.toolCall('repeat-first', tool.name, args, hangMs, declared), { always: true, blames: true });
    const second = await watched(sandbox, () => rec.toolCall('repeat-second', tool.name, args, hangMs, declared), { always: true, blames: true });
    run.repeats.push({ tool: tool.name, key: key ? String(args[key]) : undefined, seqs: [first.seq, second.seq] });
  }
  return run;
}
