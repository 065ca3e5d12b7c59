/**
 * Reading a start that failed for want of the network (SPEC section 3 step 0: "a server that
 * reaches for the network during start-up is reported as such, the connection it tried quoted"):
 * the sandbox's effect log (the proxy listener) and the server's stderr, read with the
 * failed-fetch vocabulary of the classifier (`lenient-downstream`).
 */
import { FETCH_FAILURE_TERMS } from '../classify.js';
import type { Sandbox } from './sandbox.js';
import type { OpenFailure } from './session.js';

/**
 * A handshake that failed because the server reached for the network while starting (SPEC section
 * 3 step 0): a connection the sandbox saw (the proxy listener), or a failed connection in its
 * stderr, read with the failed-fetch vocabulary of `lenient-downstream`. Only where the sandbox
 * took the network away; undefined when nothing points at the network.
 */
export function networkAtStart(failure: OpenFailure, sandbox: Sandbox | undefined, command?: string): OpenFailure | undefined {
  if (!sandbox || sandbox.isolation.network !== 'namespace') return undefined;
  if (failure.reason !== 'exited-during-init' && failure.reason !== 'init-timeout' && failure.reason !== 'init-rejected') return undefined;
  const seen = sandbox.effectsSince(sandbox.startMark()).find((e) => e.kind === 'network');
  const lines = failure.stderrTail.split('\n');
  const line = lines.find((l) => FETCH_FAILURE_TERMS.some((t) => !t.only && t.pattern.test(l)));
  if (!seen && !line) return undefined;
  // The host may stand on another line than the error (`hostname: 'api.x.com'` in a dumped error).
  const host = seen ? seen.detail.replace(/^proxy:\s*/, '').replace(/^CONNECT\s+/, '').replace(/\s+HTTP\/[\d.]+$/, '') : (lines.map(hostIn).find((h) => h !== undefined) ?? line!.trim().slice(0, 200));
  // A launcher sealmark could not read (an option it does not know) fetches at start: that is npx, not the server.
  const name = command?.slice(command.lastIndexOf('/') + 1);
  const launcher = name !== undefined && LAUNCHERS.has(name);
  const who = launcher ? `${name} (a launcher line sealmark could not read as a package launch, so it ran as given and fetched at start)` : 'the server';
  const fix = launcher ? `write the line as sealmark reads it (npx -y <package>@<version> …), or use --package` : 'give it the network with --network on (its effects then reach the network too), or configure it to start offline';
  const detail = `it tried ${host} (${failure.message}); ${fix}`;
  return { ...failure, reason: 'needs-network', message: `${who} needs the network at start-up: it tried ${host}`, detail };
}

/** Commands that fetch a package when they start (SPEC section 2). */
const LAUNCHERS = new Set(['npx', 'npm', 'bunx', 'uvx', 'uv', 'pipx', 'docker', 'pnpx', 'pnpm', 'yarn']);

/** The host a failed-connection line names (`getaddrinfo ENOTFOUND api.x.com`, `connect ECONNREFUSED 1.2.3.4:443`, urllib3's `host='x', port=443`). */
function hostIn(line: string): string | undefined {
  const node = /\b(?:ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|ETIMEDOUT|ECONNRESET)\s+([^\s,;)'"]+)/.exec(line);
  if (node) return node[1];
  const dumped = /\bhostname:\s*'([^']+)'/.exec(line);
  if (dumped) return dumped[1];
  const py = /host='([^']+)'(?:,\s*port=(\d+))?/.exec(line);
  if (py) return py[2] ? `${py[1]}:${py[2]}` : py[1];
  const url = /\b(?:https?|wss?):\/\/[^\s'"<>)]+/.exec(line);
  if (url) return url[0];
  return /(?:\b(?:\d{1,3}\.){3}\d{1,3}|\[[0-9a-f:]+\]|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}):\d{2,5}\b/i.exec(line)?.[0];
}

