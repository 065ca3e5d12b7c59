/**
 * secret-echo (pack secrets, capping): no reply carries a secret: not the canaries sealmark plants
 * in the server's environment and in credential-like arguments, not the credentials the user
 * handed the server, not anything shaped like a credential (SPEC section 5; a failure caps the
 * grade at D, SPEC section 6).
 */
import type { Check, CheckMeta } from './check.js';
import { finding, verdictOf } from './finding.js';
import { CREDENTIAL_PATTERNS, ENV_CANARY_NAMES } from '../secrets.js';
import type { Finding } from '../types.js';

export const meta: CheckMeta = {
  id: 'secret-echo',
  title: 'No reply carries a secret',
  pack: 'secrets',
  weight: 'capping',
  scope: 'server',
  decidedBy: 'protocol-response',
  since: '0.1',
  severity: 'error',
  // It reads every reply the checks' calls brought back; robust-input's calls (valid ones among
  // them) are the least it needs, so `--only secret-echo` still calls the tools.
  requires: ['robust-input'],
  config: [],
  probes: [
    { id: 'env-canary', core: true, description: `The server starts with canary secrets in its environment (${ENV_CANARY_NAMES.join(', ')}, random values each run).` },
    { id: 'argument-canary', core: true, description: 'Every credential-like string argument sealmark fills (api_key, token, password …) carries a canary secret, random per run.' },
    { id: 'reply-scan', core: true, part: true, description: 'Every reply sealmark records (the initialize reply with its instructions and serverInfo, tools/list, every tools/call of every check, liveness and protocol probes) is scanned, result and error alike, for the canaries, for the values of credential-named variables given with --env or the config\'s env, and for credential patterns.' },
  ],
  verdicts: [
    { verdict: 'fail', when: 'a reply carried a canary, a credential you gave the server, or text shaped like a credential (caps the grade at D)' },
    { verdict: 'pass', when: 'no recorded reply carried any of them' },
    { verdict: 'n/a', when: 'no tool was called (and nothing else leaked)' },
  ],
  messages: {
    'env-canary': '{tool}: the {where} carries the environment canaries {name}: the server hands out its environment',
    'argument-canary': '{tool}: the {where} repeats the canary sealmark passed in a credential-like argument',
    'user-secret': '{tool}: the {where} carries the value of {name}, which you gave the server as a credential',
    pattern: '{tool}: the {where} carries {what}',
  },
  docs: {
    summary:
      'Whatever a tool returns goes into a model\'s context, a chat log and often a third party\'s servers. A tool that prints its environment, an error that quotes the bearer token it failed with, or a debug reply with a private key hands a credential to everyone downstream. sealmark plants canary secrets and looks for them, and for anything shaped like a credential, in every reply.',
    how: [
      `The server is started with ${ENV_CANARY_NAMES.join(' and ')} in its environment, each a random value (smk_env_ and 24 hex digits), beside the scrubbed base environment.`,
      'Every credential-like string property sealmark fills with a valid value (robust-input\'s valid parts, the limits pack\'s other arguments, the effects filler) gets the argument canary (smk_arg_ and 24 hex digits) instead of the neutral word.',
      'Every recorded reply (result and error, structuredContent included) is scanned for the canaries, for the values (8 characters or more) of variables whose name says credential (key, token, secret, password …) given with --env or the config\'s env, and for these patterns: ' +
        CREDENTIAL_PATTERNS.map((p) => `${p.id} (${p.what})`).join('; ') + '.',
      'Any hit fails the check, with the call and the part of the reply; the values are redacted in every report format and in the transcript.',
      'Scoring: capping. A fail counts 0 in pack secrets and caps the overall grade at D.',
    ],
    fix: 'Never return the process environment, request headers or credentials; build error texts from a fixed message and the argument names, not from the configuration or the failed request; if a tool must show configuration, list names and mask values.',
    falsePositives: [
      'A tool whose purpose is to return a token (a login tool issuing a JWT) fails by design: say so in a review, or exclude it with skip_tools.',
      'Text that happens to match a credential pattern (a test fixture key in documentation) fails.',
    ],
    falseNegatives: [
      'A server that reads only specific variable names (GITHUB_TOKEN) and leaks those does not leak the canaries; pass your own token with --env to have it looked for.',
      'Secrets written to stderr, to files or to the network are not replies and are not scanned (the effects pack sees some of them).',
      'A secret transformed before it is returned (base64, truncated, hashed) is not recognised.',
    ],
    limits: ['Only replies sealmark recorded are scanned: tools it never called cannot leak here.'],
  },
};

const PATTERN_WHAT = new Map(CREDENTIAL_PATTERNS.map((p) => [p.id, p.what]));

export const check: Check = {
  meta,
  judge(a) {
    const replied = a.calls.filter((c) => c.exchange.reply.kind === 'response' || c.exchange.reply.kind === 'malformed');
    const leaked = replied.some((c) => c.secrets?.length) || (a.handshakeSecrets?.length ?? 0) > 0;
    if (!leaked && !replied.some((c) => c.exchange.method === 'tools/call')) {
      return { id: meta.id, verdict: 'n/a', findings: [], notes: ['no tool was called, so no tool reply could be scanned'] };
    }
    // One finding per tool, kind of secret and part of the reply; the names found, all calls as evidence.
    const byKey = new Map<string, { kind: string; tool: string | undefined; label: string; where: string; names: Set<string>; calls: number[] }>();
    for (const c of replied) {
      for (const h of c.secrets ?? []) {
        const key = `${h.kind}\u0000${c.tool ?? c.exchange.method}\u0000${h.where}${h.kind === 'pattern' ? `\u0000${h.name}` : ''}`;
        const entry = byKey.get(key) ?? { kind: h.kind, tool: c.tool, label: c.tool ?? c.exchange.method, where: h.where, names: new Set<string>(), calls: [] };
        entry.names.add(h.name);
        if (!entry.calls.includes(c.seq)) entry.calls.push(c.seq);
        byKey.set(key, entry);
      }
    }
    // The handshake's reply (instructions, serverInfo) reaches clients' logs and often the model too.
    for (const h of a.handshakeSecrets ?? []) {
      const key = `${h.kind}\u0000initialize\u0000${h.where}${h.kind === 'pattern' ? `\u0000${h.name}` : ''}`;
      const entry = byKey.get(key) ?? { kind: h.kind, tool: undefined, label: 'initialize', where: h.where, names: new Set<string>(), calls: [] };
      entry.names.add(h.name);
      byKey.set(key, entry);
    }
    const findings: Finding[] = [...byKey.values()].map((e) => {
      const names = [...e.names].join(', ');
      const data = { tool: e.label, name: names, where: e.where, what: PATTERN_WHAT.get(names) ?? names };
      return finding(meta, e.kind, 'fail', data, { calls: e.calls }, { tool: e.tool });
    });
    return { id: meta.id, verdict: verdictOf(findings), findings, notes: [] };
  },
};
