/**
 * default-call-effects (pack effects, scored, sidechannel): a `{}` call reaches only a side-effect
 * free default (seed "Never declare a side-effect flag…": "anything that can call a tool without a
 * human asking must only ever reach that tool's side-effect-free default"; SPEC section 5).
 */
import type { Check, CheckMeta } from './check.js';
import { EFFECT_TIMING, LATE_LIMIT, RATE_LIMIT_RULE, effectsNotRun, effectsOf, unseenWrites } from './effects-common.js';
import { finding, verdictOf } from './finding.js';

export const meta: CheckMeta = {
  id: 'default-call-effects',
  title: 'A call with no arguments has no side effect',
  pack: 'effects',
  weight: 'scored',
  scope: 'server',
  decidedBy: 'sidechannel',
  since: '0.1',
  severity: 'error',
  requires: ['effects'],
  config: [],
  probes: [
    { id: 'default-call', core: true, description: '`{}` to every tool that has no required argument (to every tool with --all), one call at a time inside the sandbox.' },
    { id: 'effect-log', core: true, part: true, description: 'What the sandbox saw during the call: a shimmed command (open, xdg-open, osascript, curl, wget, sendmail, mail, notify-send, gh), a connection to the catch-all proxy or a reply reporting a failed connection, a file created, changed, removed or renamed anywhere the copy-on-write overlay covers (the temp folders, your home, the current directory, every absolute path the command names), or, without the overlay, under the scratch HOME or working directory.' },
  ],
  verdicts: [
    { verdict: 'fail', when: 'any `{}` call caused an effect' },
    { verdict: 'pass', when: 'every `{}` call ran without an effect' },
    { verdict: 'n/a', when: 'no tool can be called with `{}` (use --all), or the run had no sandbox and no --allow-effects' },
  ],
  messages: {
    effect: '{tool}: the {} call caused a side effect: {effect}',
  },
  docs: {
    summary:
      'Auto-invoking routers, retry loops and models that guess call tools with `{}` or next to nothing. Whatever a tool does on that call happens without anyone asking: it must be side-effect free.',
    how: [
      'In the sandbox, each tool with no required argument (every tool with --all) is called with `{}`.',
      EFFECT_TIMING,
      RATE_LIMIT_RULE,
      'Any shim call, network attempt or file change during the call fails the check, with the tool, the exact request and the effect as evidence. Identical effects of one call (an HTTP client retrying one request: three identical proxy CONNECTs) are one finding, quoted with their count.',
      'Without the sandbox no tool is called (n/a) unless --allow-effects is given.',
      'Scoring: scored (pass 1, fail 0).',
    ],
    fix: 'Make the default call return what the tool would do (a URL, a preview) and do nothing; act only on an explicit argument from a trusted caller, and keep that switch out of the schema (see armed-flags).',
    falsePositives: ['A tool that writes a cache file on every call fails; that is still a write nobody asked for.'],
    falseNegatives: [
      'Shims catch commands found through PATH only; an absolute path (/usr/bin/open) is missed unless it shows in the reply. A write outside the folders the overlay covers (or, where overlayfs is not permitted, outside the scratch folders) is missed; the notes name those folders.',
      LATE_LIMIT,
      'A connection made without the proxy variables by a binary called by absolute path shows only if the reply quotes its failure.',
      'The sandbox isolates careless servers, not hostile ones: a server runs as your user and can reach the effect log; a log that shrinks during a call is reported as erased evidence, but subtler tampering is not detected.',
    ],
    limits: ['Tools with required arguments get `{}` only with --all (and then the call is usually rejected).'],
  },
};

export const check: Check = {
  meta,
  judge(a) {
    const skipped = effectsNotRun(a, meta.id);
    if (skipped) return skipped;
    const calls = a.calls.filter((c) => c.probe === 'default-call');
    if (calls.length === 0) return { id: meta.id, verdict: 'n/a', findings: [], notes: ['no tool can be called with {} (no tool without required arguments; --all calls every tool)'] };
    const out = effectsOf(calls).map((e) => finding(meta, 'effect', 'fail', e.data, e.evidence, { tool: e.call.tool }));
    return { id: meta.id, verdict: verdictOf(out), findings: out, notes: unseenWrites(a) };
  },
};
