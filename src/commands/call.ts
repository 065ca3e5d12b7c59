/**
 * `sealmark call --tool <name> --args '<json>' -- <command>`: replays one tools/call (the repro
 * line of every finding) and prints what was sent, the raw reply and its class (SPEC section 4).
 */
import { randomBytes } from 'node:crypto';
import { headerSecrets, httpSpec, serverEnv } from '../audit.js';
import { networkAtStart } from '../target/network-at-start.js';
import { readClientConfig } from '../client-config.js';
import type { HttpTargetSpec } from '../target/http-transport.js';
import { Sandbox, startSpec } from '../target/sandbox.js';
import { closeWatch, watched } from '../probes/watch.js';
import type { ProbeCall } from '../types.js';
import type { StdioTargetSpec } from '../target/stdio-transport.js';
import { classifyReply } from '../classify.js';
import { defaultConfig } from '../config/defaults.js';
import { propertiesOf } from '../schema.js';
import { Session } from '../target/session.js';
import { Redactor } from '../redact.js';
import { safeText } from '../report/reporters/text.js';
import { ARGUMENT_CANARY, ARGUMENT_CANARY_NAME, envCanaries, scanSecrets, secretSet, type SecretSet } from '../secrets.js';
import { UsageError, parseEnvList, parseSeconds, resolveConfig, targetOf } from './common.js';
import { parsePackageOption } from '../target/launch.js';
import { prepareStart } from '../target/fetch.js';
import { serverJsonTarget } from './server-json.js';

/** How reports write the argument canary (src/redact.ts). */
const CANARY_PLACEHOLDER = `[redacted:${ARGUMENT_CANARY_NAME}]`;

/** Stands in the params for `--raw-args` until the wire splices the text in. */
const RAW_MARKER = `sealmark:raw-args:${randomBytes(12).toString('hex')}`;

export interface CallCliOptions {
  /** The tool; not needed with `rawParams`. */
  tool?: string;
  /**
   * `--raw-params <text>`: the whole params member of the tools/call written verbatim (`[]`): the
   * replay of protocol-errors' array-params probe, which names no tool.
   */
  rawParams?: string;
  /**
   * `--method <name>` (with `rawParams`): the request's method instead of `tools/call`: the replay
   * of protocol-errors' unknown-method probe (`sealmark/no-such-method` with params `{}`).
   */
  method?: string;
  /** `--client-config <file> --server <name>`: the server of that entry (how client-config replays are written). */
  clientConfig?: string;
  server?: string;
  url?: string;
  header?: string[];
  bearerTokenEnv?: string;
  args?: string;
  /** The arguments member as raw text, written verbatim (see `--raw-args`). */
  rawArgs?: string;
  config?: string;
  /** false with --no-sandbox. */
  sandbox?: boolean;
  /** `--network on|off`: the sandbox's network, as in the audit (default off: loopback only). */
  network?: 'on' | 'off';
  timeoutProbe?: string;
  env?: string[];
  /** `--package npm:…`: the published package an audit fetched (the replay of a `--package` audit). */
  package?: string;
  /** `--server-json <file> [--package-index N | --remote-index N]`: the entry an audit of that file reached. */
  serverJson?: string;
  packageIndex?: string;
  remoteIndex?: string;
  allowInstallScripts?: boolean;
}

/**
 * The stderr line (exit 3) when the server could not be started or reached, worded for `call`:
 * `sealmark: no call was made: cannot connect to http://127.0.0.1:1/mcp: ECONNREFUSED` (`why`
 * already redacted; control characters escaped here).
 */
function notCalled(why: string): string {
  return `sealmark: no call was made: ${safeText(why)}\n`;
}

/** Runs the call; resolves to 0 when a reply (of any class) was read, 3 when the server could not be reached. */
export async function runCall(command: string[], opts: CallCliOptions): Promise<number> {
  const entry = opts.clientConfig !== undefined ? clientEntry(command, opts) : undefined;
  if (opts.package !== undefined && (entry || opts.url !== undefined)) throw new UsageError('--package takes no --url or --client-config');
  const pkg = opts.package !== undefined ? parsePackageOption(opts.package) : undefined;
  const planned = opts.serverJson !== undefined ? serverJsonTarget(opts.serverJson, opts, parseEnvList(opts.env)) : undefined;
  if (planned?.kind === 'not-started') {
    process.stderr.write(notCalled(planned.why.message));
    return 3;
  }
  const launch = planned?.kind === 'launch' ? planned : undefined;
  const fromJson = planned?.kind === 'remote' ? { url: planned.url, headers: planned.headers } : launch ? { command: [] as string[] } : undefined;
  const target = entry ?? fromJson ?? (pkg ? { command: command as [string, ...string[]] } : undefined) ?? targetOf(command, opts, "sealmark call --tool <name> --args '<json>' -- <command> [args…]   or   sealmark call --url <url> --tool <name> --args '<json>'");
  const http = 'url' in target ? httpSpec(target) : undefined;
  const masked = http && Object.entries(http.headers).find(([, v]) => v.includes('[redacted:'));
  if (masked) {
    throw new UsageError(`--header ${masked[0]}: the value is the placeholder a report prints for a secret; give the real value again, or pass a token with --bearer-token-env VAR`);
  }
  let args: unknown;
  if (opts.args !== undefined && opts.rawArgs !== undefined) throw new UsageError('give --args or --raw-args, not both');
  if (opts.rawParams !== undefined && (opts.tool !== undefined || opts.args !== undefined || opts.rawArgs !== undefined)) {
    throw new UsageError('--raw-params is the whole params member: give it without --tool, --args or --raw-args');
  }
  if (opts.method !== undefined && opts.rawParams === undefined) throw new UsageError("--method takes --raw-params '<text>' (the params member of that request, e.g. '{}')");
  if (opts.rawParams === undefined && opts.tool === undefined) throw new UsageError("--tool <name> is required (or --raw-params '<text>' for a params member written verbatim)");
  // stdio frames a message by its line: a newline in raw text would end the request and start another.
  for (const [flag, v] of [['--raw-args', opts.rawArgs], ['--raw-params', opts.rawParams]] as const) {
    if (v !== undefined && /[\r\n]/.test(v)) throw new UsageError(`${flag}: the text must be one line; a newline would end the request and start another`);
  }
  // A report shows the argument canary redacted; the replay sends this process's canary in its
  // place, so that an echo of it is caught again (secret-echo `argument-canary`).
  const rawArgs = opts.rawArgs?.replaceAll(CANARY_PLACEHOLDER, ARGUMENT_CANARY);
  if (rawArgs !== undefined) args = RAW_MARKER;
  if (opts.args !== undefined) {
    try {
      args = JSON.parse(opts.args.replaceAll(CANARY_PLACEHOLDER, ARGUMENT_CANARY));
    } catch (err) {
      throw new UsageError(`--args is not JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const timeoutMs = (parseSeconds('--timeout-probe', opts.timeoutProbe) ?? 10) * 1000;
  // The config file, when given, supplies the server's env (as in the audit that printed the line).
  const loaded = opts.config !== undefined ? resolveConfig({ config: opts.config }, process.cwd()) : defaultConfig();
  // `--network on` as in the audit that printed the line (a server that needs the network to start).
  const config = opts.network ? { ...loaded, sandbox: { ...loaded.sandbox, network: opts.network } } : loaded;
  const given = { ...config.env, ...(entry && 'env' in entry ? entry.env : {}), ...launch?.env, ...parseEnvList(opts.env), ...(http ? headerSecrets(http.headers) : {}) };
  // What variables put into the entry's command line or URL is redacted too, but not given to the server.
  const hidden = entry?.secrets ?? {};
  // The same environment canaries as an audit, so that a secret-echo finding replays.
  const canaries = { ...envCanaries(), ...planned?.canaries };
  const env = { ...serverEnv(config, given), ...canaries };
  const secrets = secretSet(canaries, { ...given, ...hidden });
  const redactor = new Redactor({ ...given, ...hidden, ...canaries });
  if (http) return callIn(http, undefined, { ...opts, rawArgs }, args, timeoutMs, config.timeout_init_sec * 1000, secrets, redactor);
  const cmd = (target as { command: string[] }).command;
  // The same fetch phase as the audit: a replay starts the install the audit started.
  const start = await prepareStart(launch ? { launch: launch.launch } : pkg ? { package: pkg, args: cmd } : { command: cmd[0], args: cmd.slice(1) }, { fetch: opts.sandbox !== false, allowInstallScripts: opts.allowInstallScripts === true, cwd: entry && 'cwd' in entry ? entry.cwd : undefined });
  if (!start.ok) {
    process.stderr.write(notCalled(redactor.text(start.message)));
    return 3;
  }
  // Replays run in the sandbox too: replaying an effect finding must not open, send or write for real.
  const sandbox = opts.sandbox === false ? undefined : Sandbox.create(config.sandbox);
  try {
    const spec = startSpec(sandbox, start.command, start.args, env, entry && 'cwd' in entry ? entry.cwd : undefined);
    return await callIn(spec, sandbox, { ...opts, rawArgs }, args, timeoutMs, config.timeout_init_sec * 1000, secrets, redactor, start.package ? undefined : cmd[0]);
  } finally {
    sandbox?.dispose();
  }
}

async function callIn(
  spec: StdioTargetSpec | HttpTargetSpec,
  sandbox: Sandbox | undefined,
  opts: CallCliOptions,
  args: unknown,
  timeoutMs: number,
  initTimeoutMs: number,
  secrets: SecretSet,
  redactor: Redactor,
  launcherCommand?: string,
): Promise<number> {
  const opened = await Session.open(spec, { initTimeoutMs, redactor });
  if (!(opened instanceof Session)) {
    // The same reading as the audit's: a server that reached for the network while starting says so.
    const why = networkAtStart(opened, sandbox, launcherCommand) ?? opened;
    process.stderr.write(notCalled(redactor.text(why.message)));
    return 3;
  }
  try {
    const listing = await opened.listTools(timeoutMs);
    const tool = listing.tools.find((t) => (t as { name?: unknown })?.name === opts.tool) as { inputSchema?: unknown } | undefined;
    const params: unknown = opts.rawParams !== undefined ? RAW_MARKER : { name: opts.tool, ...(args !== undefined ? { arguments: args } : {}) };
    const raw = opts.rawParams ?? opts.rawArgs;
    const splice = raw !== undefined ? { marker: RAW_MARKER, text: raw } : undefined;
    const declaredParams = propertiesOf(tool?.inputSchema).map((p) => p.name);
    // The audit's effect rules (src/probes/watch.ts), the failed fetch a reply reports and the late
    // effects of the call included: a replay shows what its finding quotes.
    const made = await watched(
      sandbox,
      async (): Promise<ProbeCall> => {
        const exchange = await opened.request(opts.method ?? 'tools/call', params, timeoutMs, { splice });
        return { seq: 1, probe: 'call', exchange, classification: classifyReply({ reply: exchange.reply, declaredParams, protocolVersion: opened.handshake.protocolVersion }) };
      },
      { always: true, blames: true },
    );
    await closeWatch(sandbox);
    const ex = made.exchange;
    const effects = made.effects ?? [];
    const cl = made.classification!;
    const out: string[] = [];
    out.push(`protocol ${opened.handshake.protocolVersion ?? '?'}${tool || opts.tool === undefined ? '' : `  (note: ${opts.tool} is not in tools/list)`}`);
    out.push(`sent     ${ex.sent}`);
    const r = ex.reply;
    const shown = r.kind === 'malformed' && r.raw === null ? `(none readable: ${r.problem})` : r.kind === 'response' || r.kind === 'malformed' ? JSON.stringify(r.raw) : r.kind === 'hang' ? `no reply within ${r.waitedMs} ms` : r.exit?.lost ? `the connection was lost: ${r.exit.lost}` : 'the server exited';
    out.push(`reply    ${shown}`);
    out.push(`class    ${cl.class}`);
    for (const l of cl.leaks) out.push(`leak     ${l.pattern}: ${l.line}`);
    for (const n of cl.notes) out.push(`note     ${n}`);
    for (const e of effects) out.push(`effect   ${e.kind}: ${e.detail}${e.summary ? ` (${e.summary})` : ''}${e.lateMs !== undefined ? ` (late: ${e.lateMs} ms after the reply)` : ''}`);
    const r2 = ex.reply;
    const hits = r2.kind === 'response' || r2.kind === 'malformed' ? scanSecrets(r2.raw, secrets) : [];
    for (const h of hits) out.push(`secret   ${h.kind} ${h.name} in the ${h.where}`);
    const iso = sandbox?.isolation;
    const files = iso?.filesystem === 'overlay' ? 'copy-on-write filesystem' : 'scratch folders only (no copy-on-write filesystem)';
    out.push(iso ? `sandbox  ${iso.network === 'namespace' ? 'network loopback only' : 'host network'}; ${files}; ${effects.length} side effect${effects.length === 1 ? '' : 's'} seen` : 'url' in spec ? 'sandbox  none (a server reached by URL)' : 'sandbox  none (--no-sandbox)');
    // The canaries and your credentials are looked for, never printed.
    // Server text (leaked lines, notes) never reaches the terminal raw.
    process.stdout.write(redactor.text(out.map(safeText).join('\n')) + '\n');
    return 0;
  } finally {
    await opened.close();
  }
}

/** The target of `call --client-config <file> --server <name>`. Throws UsageError. */
function clientEntry(
  command: string[],
  opts: CallCliOptions,
): ({ command: [string, ...string[]]; env: Record<string, string>; cwd?: string } | { url: string; headers: Record<string, string> }) & { secrets: Record<string, string> } {
  if (command.length > 0 || opts.url !== undefined) throw new UsageError('--client-config takes no server command and no --url');
  if (opts.server === undefined) throw new UsageError('--client-config needs --server <name> for call');
  const servers = readClientConfig(opts.clientConfig!).servers;
  const e = servers.find((s) => s.name === opts.server);
  if (!e) throw new UsageError(`--server ${JSON.stringify(opts.server)}: ${opts.clientConfig} has no such server (it has ${servers.map((s) => JSON.stringify(s.name)).join(', ')})`);
  if (e.kind === 'invalid') throw new UsageError(`--server ${e.name}: ${e.problem}`);
  if (e.kind === 'disabled') throw new UsageError(`--server ${e.name}: disabled in ${opts.clientConfig}`);
  if (e.kind === 'http') return { url: e.url, headers: e.headers, secrets: e.secrets };
  return { command: [e.command, ...e.args], env: e.env, ...(e.cwd !== undefined ? { cwd: e.cwd } : {}), secrets: e.secrets };
}
