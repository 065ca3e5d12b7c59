/**
 * handshake (pack core, capping): the server starts, negotiates a known protocol version, says who
 * it is, offers tools, lists them, and writes nothing but JSON-RPC to stdout. SPEC section 5;
 * MCP 2025-11-25 `basic/transports.mdx` (stdio: "MUST NOT write anything to its stdout that is
 * not a valid MCP message") and `basic/lifecycle.mdx`.
 */
import type { Check, CheckMeta } from './check.js';
import type { OpenFailure } from '../target/session.js';
import { finding, verdictOf } from './finding.js';
import { isKnownProtocolVersion } from '../protocol.js';
import type { Finding } from '../types.js';

/** Why a target could not be audited; each is also a message id below. */
const OPEN_FAILURES = ['spawn-failed', 'exited-during-init', 'init-timeout', 'init-rejected', 'connect-failed', 'tls-error', 'unauthorized', 'http-error', 'invalid-entry', 'session-lost', 'fetch-failed', 'not-runnable', 'needs-config', 'needs-network'] as const satisfies readonly OpenFailure['reason'][];

export const meta: CheckMeta = {
  id: 'handshake',
  title: 'Starts, negotiates and lists its tools',
  pack: 'core',
  weight: 'capping',
  scope: 'server',
  decidedBy: 'protocol-response',
  since: '0.1',
  severity: 'error',
  requires: [],
  config: [{ key: 'timeout_init_sec', default: 30, standard: 'locked', meaning: 'Seconds the server has to answer the handshake (initialize, or server/discover on 2026-07-28).' }],
  probes: [
    { id: 'negotiate', core: true, description: 'server/discover (2026-07-28), falling back to initialize + notifications/initialized (2024-11-05 … 2025-11-25), through the official MCP client.' },
    { id: 'tools-list', core: true, description: 'tools/list, following nextCursor to the last page.' },
    { id: 'stdout', core: true, description: 'Every stdout line of the whole session is read; a line that is not a JSON-RPC message is noise.' },
  ],
  verdicts: [
    { verdict: 'fail', when: 'no answer to the handshake within timeout_init_sec, the process exited or could not start, tools/list failed, or it listed no tools (silence is never a pass)' },
    { verdict: 'partial', when: 'the tools/list cursor chain never ended (a repeated cursor, or more than 100 pages), stdout (for a server reached by URL, a response body or event) carried something that is not JSON-RPC, the version is not one sealmark knows, serverInfo is missing, or no tools capability was declared' },
    { verdict: 'pass', when: 'a known version was negotiated, the server identified itself, declared tools and listed at least one, and stdout carried only JSON-RPC' },
  ],
  messages: {
    'spawn-failed': 'the server could not be started: {detail}',
    'exited-during-init': 'the server exited during the handshake ({detail})',
    'init-timeout': 'no reply to the handshake within {seconds} s',
    'init-rejected': 'the handshake failed: {detail}',
    'connect-failed': 'the server could not be reached: {detail}',
    'tls-error': 'the TLS connection failed: {detail}',
    unauthorized: 'the server refused sealmark: {detail}',
    'http-error': 'the handshake failed at the HTTP level: {detail}',
    'invalid-entry': 'the client configuration entry cannot be started: {detail}',
    'session-lost': 'the server ended its session during the audit, so it could not be judged: {detail}',
    'fetch-failed': 'the package could not be fetched: {detail}',
    'not-runnable': 'the target cannot be started here: {detail}',
    'needs-config': 'the server needs configuration sealmark was not given: {detail}',
    'needs-network': 'the server needs the network at start-up, and the sandbox has none: {detail}',
    'tools-list-failed': 'tools/list failed: {reason}',
    'empty-tools': 'tools/list returned no tools; nothing could be checked',
    'tools-list-unending': '{reason}; the {count} tools read so far are audited',
    'stdout-noise': '{count} stdout lines ({bytes} bytes) were not JSON-RPC messages, e.g. {first}',
    'reply-noise': '{count} HTTP bodies or events ({bytes} bytes) were not JSON-RPC messages, e.g. {first}',
    'unknown-version': 'negotiated protocol version {version} is not one sealmark knows',
    'no-server-info': 'the initialize result has no serverInfo',
    'no-tools-capability': 'the server did not declare the tools capability',
    negotiated: 'negotiated {version} ({era}) with {server}',
  },
  docs: {
    summary:
      'The first thing any client does: start the server, agree on a protocol version, and list the tools. A server that cannot do this cannot be used, so a failure caps the grade at F.',
    how: [
      'The official MCP TypeScript client (v2) probes with server/discover and falls back to the initialize handshake, so every published version (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28) can be negotiated.',
      'A launched package (npx, uvx, pipx run, bunx, docker run, --package, --server-json) is fetched first, with the network on and outside the sandbox, into sealmark\'s own cache; a fetch that fails (a package that does not exist, a registry that refuses, a missing launcher) fails here at once with the installer\'s error, and the server is then started from the install with no network.',
      'A server that reaches for the network while starting (a connection seen by the sandbox, or a failed connection in its stderr) is reported as needing the network at start-up, with the host it tried, not as a time-out.',
      'The handshake must complete within timeout_init_sec (30 s by default, locked). A process that cannot be started, exits, or stays silent fails the check and the run exits with code 3.',
      'tools/list is followed through nextCursor to the end; an error or an empty list fails.',
      'Every stdout line of the whole session is read; lines that are not JSON-RPC (a banner printed with console.log, a debug print) are quoted as evidence.',
      'Scoring: capping, so pass = 1, partial = 0.5, fail = 0, and a fail caps the overall letter at F.',
    ],
    fix: 'Write logs to stderr, never stdout (console.error in Node, print(..., file=sys.stderr) in Python). Answer initialize promptly, before any slow start-up work; declare capabilities.tools and a serverInfo with name and version; list at least one tool.',
    falsePositives: [
      'A server that needs credentials or a network service to start fails here when they are missing; pass them with --env.',
      'A server that needs credentials or a network service to start is reported as such; it may work once given them (--env, or --network on, which lets its effects out too).',
    ],
    falseNegatives: ['Only stdio is read for noise; an HTTP server is judged on its responses alone.'],
    limits: ['The handshake is done once; reconnection and session expiry are not tested.'],
  },
};

export const check: Check = {
  meta,
  judge(a) {
    const out: Finding[] = [];
    const f = a.openFailure;
    if (f) {
      const data: Record<string, string | number> = f.reason === 'init-timeout' ? { seconds: a.config.timeout_init_sec } : { detail: f.detail };
      const quotes = [f.stderrTail.trim().split('\n').slice(-5).join('\n')].filter((q) => q !== '');
      const id = OPEN_FAILURES.find((r) => r === f.reason) ?? 'init-rejected';
      out.push(finding(meta, id, 'fail', data, { quotes }));
      return { id: meta.id, verdict: 'fail', findings: out, notes: [] };
    }
    const h = a.handshake!;
    out.push(
      finding(meta, 'negotiated', 'info', {
        version: h.protocolVersion ?? 'unknown',
        era: eraWords(h.era),
        server: `${String(h.serverInfo?.name ?? '?')} ${String(h.serverInfo?.version ?? '')}`.trim(),
      }),
    );
    if (a.listProblem) out.push(finding(meta, 'tools-list-failed', 'fail', { reason: a.listProblem }, { calls: [] }));
    else if (a.tools.length === 0) out.push(finding(meta, 'empty-tools', 'fail', {}));
    if (a.listUnending) out.push(finding(meta, 'tools-list-unending', 'partial', { reason: a.listUnending, count: a.tools.length }));
    if (a.noise.count > 0) {
      const quotes = a.noise.lines.slice(0, 5).map((l) => (l.kind === 'oversized' ? `[${l.bytes} bytes] ${l.excerpt.slice(0, 80)}…` : l.excerpt));
      // Over HTTP the noise is in response bodies and events, not on a stdout.
      out.push(finding(meta, a.remote ? 'reply-noise' : 'stdout-noise', 'partial', { count: a.noise.count, bytes: a.noise.bytes, first: JSON.stringify(quotes[0] ?? '') }, { quotes }));
    }
    if (!isKnownProtocolVersion(h.protocolVersion)) out.push(finding(meta, 'unknown-version', 'partial', { version: String(h.protocolVersion) }));
    // serverInfo is required on initialize; on 2026-07-28 it is only a SHOULD in discover's _meta.
    if (h.era !== 'modern' && (!h.serverInfo || typeof h.serverInfo.name !== 'string')) out.push(finding(meta, 'no-server-info', 'partial', {}));
    if (!h.capabilities || typeof h.capabilities.tools !== 'object') out.push(finding(meta, 'no-tools-capability', 'partial', {}));
    return { id: meta.id, verdict: verdictOf(out), findings: out, notes: [] };
  },
};

/**
 * How a session was negotiated, in words: `legacy` is the initialize handshake (2024-11-05 to
 * 2025-11-25), `modern` the stateless 2026-07-28 protocol (server/discover, no session).
 */
export function eraWords(era: string | null | undefined): string {
  return era === 'legacy' ? 'initialize handshake' : era === 'modern' ? 'stateless, server/discover' : 'unknown';
}
