/**
 * annotations (pack design, scored): every tool states what it does to the world, the statements
 * agree with each other, and what the sandbox saw a tool do agrees with them (SPEC section 5; MCP
 * 2025-11-25 ToolAnnotations; seed "Side-Effect Boundaries").
 */
import type { Check, CheckMeta } from './check.js';
import { finding, group, verdictOf } from './finding.js';
import { hintsOf, nameStyleOf, verbOf } from '../naming.js';
import type { Finding, ListedTool } from '../types.js';
import { EFFECT_TIMING } from './effects-common.js';
import { LATE_WINDOW_MS } from '../target/sandbox.js';

export const meta: CheckMeta = {
  id: 'annotations',
  title: 'Annotations are stated, consistent and true to behaviour',
  pack: 'design',
  weight: 'scored',
  scope: 'server',
  lint: true,
  decidedBy: 'static',
  since: '0.1',
  severity: 'error',
  // Behaviour is read from the calls of these gatherers (valid calls, default and filler calls).
  requires: ['robust-input', 'effects'],
  config: [],
  probes: [
    { id: 'hints', core: true, part: true, description: 'The annotations of each listed tool, with the MCP defaults for what is absent: readOnlyHint false, destructiveHint true, idempotentHint false, openWorldHint true.' },
    { id: 'behaviour', core: true, part: true, description: 'The effects the sandbox logged during any call sealmark made to the tool (robust-input\'s valid calls and probes: entries, the effects pack\'s default and filler calls, the limits pack\'s calls).' },
  ],
  verdicts: [
    { verdict: 'fail', when: 'a tool states readOnlyHint and destructiveHint both true, a read-only tool changed a file or ran a shimmed command, or a tool stating openWorldHint: false tried the network' },
    { verdict: 'partial', when: 'a tool does not state readOnlyHint, or a tool that is not read-only leaves destructiveHint or idempotentHint unstated (the same annotations pasted on tools whose names read and write are only noted: tool-naming scores each name that contradicts them)' },
    { verdict: 'pass', when: 'every tool states its hints, they agree, and no call contradicted them' },
    { verdict: 'n/a', when: 'the server negotiated MCP 2024-11-05, which has no tool annotations, and states none (where it states some anyway, a missing hint is only noted)' },
  ],
  messages: {
    'no-read-only-hint': '{tool}: readOnlyHint is not stated, so clients must assume the tool writes (MCP default false)',
    'hint-not-boolean': '{tool}: {hint} is {value}, not a Boolean: clients ignore it (or, reading "false" as truthy, trust it wrongly)',
    'missing-write-hints': '{tool}: not read-only, but {missing} not stated ({defaults})',
    contradiction: '{tool}: states readOnlyHint true and destructiveHint true: a tool cannot both only read and destroy',
    blanket: 'all {count} tools carry the same annotations {annotations}, though their names read ({reads}) and write ({writes}); tool-naming scores each name that contradicts them',
    'read-only-effect': '{tool}: states readOnlyHint true, but the sandbox saw it act: {effect}',
    'closed-world-network': '{tool}: states openWorldHint false, but tried the network: {effect}',
  },
  docs: {
    summary:
      'Clients decide from annotations whether to ask before calling a tool: a read-only tool runs without a prompt, a destructive one gets a confirmation. An annotation that is missing makes the client assume the worst (or, worse, assume nothing); one that is wrong lets a write through as a read. sealmark checks that every tool says what it does, that the statements fit together, and that what it saw the tool do in the sandbox matches them.',
    how: [
      'Each tool must state readOnlyHint; a tool that is not read-only must state destructiveHint and idempotentHint (MCP 2025-11-25 defaults when absent: readOnlyHint false, destructiveHint true, idempotentHint false, openWorldHint true). A missing hint is a partial finding.',
      'readOnlyHint true together with destructiveHint true is a contradiction (fail).',
      'When there are three or more tools, all with the same annotations, and the tools\' names include both read verbs and write verbs (src/naming.ts tables, as tool-naming reads them), the annotations were likely pasted, not stated: noted for information only, since the name-against-annotation contradiction is tool-naming\'s finding (one cause, one finding).',
      'Behaviour against claim: a file created, changed or removed, or a shimmed command run (open, sendmail, curl …), during any call to a tool that states readOnlyHint true fails the check; a network attempt during a call to a tool that states openWorldHint false fails it too. A network attempt by a read-only tool that does not claim a closed world is not held against readOnlyHint: reading from the network is what open world means, and the sandbox cannot tell a read from a write there. Each finding quotes the effect and points at the call.',
      EFFECT_TIMING,
      'Scoring: scored (pass 1, partial 0.5, fail 0).',
    ],
    fix: 'State all four hints on every tool, from what the handler really does: readOnlyHint true only for tools that change nothing anywhere (no files, no network writes, no caches outside memory); destructiveHint false only when the tool never deletes or overwrites; openWorldHint false only when it never leaves the process.',
    falsePositives: [
      'A read-only tool that writes a cache or log file in its working directory or HOME is reported (except under ~/.cache and ~/.npm, which the sandbox does not watch); the write is real, so either drop the file or drop the claim.',
      'A read-only tool that reads from the network and states openWorldHint false is reported: MCP counts any outside entity as open world.',
      `A write another tool set off more than ${LATE_WINDOW_MS} ms after its reply (a slow debounce) can land during the read-only tool's call and be blamed on it: the finding's replay line, run alone, shows whether the tool writes.`,
    ],
    falseNegatives: [
      'Behaviour is seen only for calls sealmark made in the sandbox: a read-only tool with required arguments and no probes: entry is only called with invalid arguments, which a good server rejects before acting.',
      'Effects outside the sandbox\'s scratch folders, and network use that bypasses the proxy variables without quoting a failure, are not seen (see default-call-effects).',
    ],
    limits: ['Without the sandbox (--no-sandbox) only the statements are checked.'],
  },
};

export const check: Check = {
  meta,
  judge(a) {
    const out: Finding[] = [];
    // MCP 2024-11-05 has no tool annotations (they came with 2025-03-26): a server that speaks
    // only it cannot state them, so their absence is noted, not graded.
    const noAnnotations = a.handshake?.protocolVersion === '2024-11-05';
    if (noAnnotations && a.tools.every((t) => t.annotations === undefined)) {
      return { id: meta.id, verdict: 'n/a', findings: [], notes: ['the server negotiated MCP 2024-11-05, which has no tool annotations'] };
    }
    const absent: Finding['level'] = noAnnotations ? 'info' : 'partial';
    for (const t of a.tools) {
      const h = hintsOf(t);
      const ev = { schemaPaths: [`tools[${t.index}].annotations`] };
      const raw = t.annotations?.readOnlyHint;
      if (raw !== undefined && typeof raw !== 'boolean') out.push(finding(meta, 'hint-not-boolean', 'partial', { tool: t.name, hint: 'readOnlyHint', value: JSON.stringify(raw) }, ev, { tool: t.name }));
      else if (h.stated.readOnlyHint === undefined) out.push(finding(meta, 'no-read-only-hint', absent, { tool: t.name }, ev, { tool: t.name }));
      if (h.stated.readOnlyHint === true && h.stated.destructiveHint === true) out.push(finding(meta, 'contradiction', 'fail', { tool: t.name }, ev, { tool: t.name }));
      if (h.stated.readOnlyHint === false) {
        const missing = [h.stated.destructiveHint === undefined ? 'destructiveHint' : '', h.stated.idempotentHint === undefined ? 'idempotentHint' : ''].filter(Boolean);
        const defaults = missing.map((m) => `${m} ${m === 'destructiveHint' ? 'true' : 'false'}`);
        if (missing.length > 0) out.push(finding(meta, 'missing-write-hints', absent, { tool: t.name, missing: `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'}`, defaults: `${defaults.length > 1 ? 'defaults' : 'default'}: ${defaults.join(', ')}` }, ev, { tool: t.name }));
      }
    }
    const blanket = blanketOf(a.tools);
    if (blanket) out.push(finding(meta, 'blanket', 'info', blanket, { schemaPaths: a.tools.map((t) => `tools[${t.index}].annotations`) }));
    // One false hint is one fault: every effect that contradicts it, on every call of the tool, is
    // evidence of one finding, which quotes the first and counts the rest.
    const contradicted = new Map<string, { tool: string; messageId: 'closed-world-network' | 'read-only-effect'; first: string; probe: string; effects: Set<string>; calls: number[] }>();
    for (const c of a.calls) {
      if (!c.tool || !c.effects?.length) continue;
      const t = a.tools.find((x) => x.name === c.tool);
      if (!t) continue;
      const h = hintsOf(t);
      for (const e of c.effects) {
        // A network attempt is judged against openWorldHint: reading from the network is what an
        // open-world read-only tool does, and the sandbox cannot tell a GET from a POST.
        const messageId = e.kind === 'network' ? (h.stated.openWorldHint === false ? 'closed-world-network' : undefined) : h.stated.readOnlyHint === true ? 'read-only-effect' : undefined;
        if (!messageId) continue;
        const key = `${messageId}\u0000${t.name}`;
        const seen = contradicted.get(key) ?? { tool: t.name, messageId, first: `${e.kind}: ${e.detail}`, probe: c.probe, effects: new Set<string>(), calls: [] };
        contradicted.set(key, seen);
        seen.effects.add(e.detail);
        if (!seen.calls.includes(c.seq)) seen.calls.push(c.seq);
      }
    }
    for (const x of contradicted.values()) {
      const more = x.effects.size - 1;
      const effect = more > 0 ? `${x.first} (and ${more} more effect${more === 1 ? '' : 's'} on ${x.calls.length} call${x.calls.length === 1 ? '' : 's'}: see the evidence)` : x.first;
      out.push(finding(meta, x.messageId, 'fail', { tool: x.tool, effect, probe: x.probe }, { calls: x.calls, quotes: [...x.effects].slice(0, 10) }, { tool: x.tool }));
    }
    const findings = group(out);
    return { id: meta.id, verdict: verdictOf(findings), findings, notes: [] };
  },
};

/** Same annotations on every one of three or more tools whose names both read and write. */
function blanketOf(tools: ListedTool[]): Record<string, string | number> | undefined {
  if (tools.length < 3) return undefined;
  // Compared with their keys sorted: the same values pasted in another key order are still pasted.
  const texts = tools.map((t) => (t.annotations ? JSON.stringify(Object.fromEntries(Object.entries(t.annotations).sort(([a], [b]) => a.localeCompare(b)))) : 'null'));
  if (texts[0] === 'null' || texts.some((x) => x !== texts[0])) return undefined;
  const style = nameStyleOf(tools);
  const reads = tools.filter((t) => verbOf(t.name, t, style)?.kind === 'read').map((t) => t.name);
  const writes = tools.filter((t) => verbOf(t.name, t, style)?.kind === 'write').map((t) => t.name);
  if (reads.length === 0 || writes.length === 0) return undefined;
  return { count: tools.length, annotations: JSON.stringify(tools[0]!.annotations), reads: reads.join(', '), writes: writes.join(', ') };
}
