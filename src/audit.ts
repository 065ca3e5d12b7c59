/**
 * The engine: target → session → probes → checks → scoring → report (STYLE, one-way flow).
 * `audit()` is what the CLI runs and what the library exports (SPEC section 9).
 */
import { Session, type OpenFailure } from './target/session.js';
import { Sandbox, startSpec, type Isolation } from './target/sandbox.js';
import type { StdioTargetSpec } from './target/stdio-transport.js';
import type { HttpTargetSpec } from './target/http-transport.js';
import { UsageError } from './errors.js';
import { MAX_RESTARTS, Recorder, type InstanceShare, type Progress, type Restart } from './probes/recorder.js';
import { availableParallelism } from 'node:os';
import { defaultConcurrency, instanceCount, listingOrder, mergeDesign, renumberCalls, mergeEffects, mergeLimits, mergeOversized, mergeRobust, mergeStrict, shareTools } from './probes/instances.js';
import { gatherRobustInput, hangLimitMs } from './probes/robust-input.js';
import { gatherProtocolErrors, sendEarly, type EarlyProbe } from './probes/protocol-errors.js';
import { gatherEffects } from './probes/effects.js';
import { closeLateWindow, closeWatch, unprotectedFiles } from './probes/watch.js';
import { adoptLateReplies, awaitDroppedLines, gatherLimits } from './probes/limits.js';
import { gatherOversized } from './probes/oversized.js';
import { gatherConcurrency } from './probes/concurrency.js';
import { gatherDesign } from './probes/design.js';
import { gatherStrictArguments } from './probes/strict-arguments.js';
import { detectSdk, type ServerSdk } from './target/sdk.js';
import type { Artifacts, Check, GathererId } from './checks/check.js';
import { SERVER_GONE_MESSAGE, checks as allChecks } from './checks/index.js';
import { buildReport, type Report, type ReportTarget } from './report/build.js';
import { locateSource } from './report/source.js';
import { defaultConfig } from './config/defaults.js';
import type { ResolvedConfig } from './config/schema.js';
import type { CheckResult, ListedTool } from './types.js';
import { envReplayFlags, rawParamsReplayLine, replayLine } from './replay.js';
import { Redactor } from './redact.js';
import { envCanaries, scanSecrets, secretSet } from './secrets.js';
import type { Launch, PackageRef } from './target/launch.js';
import { prepareStart } from './target/fetch.js';
import { networkAtStart } from './target/network-at-start.js';

/** Options of {@link audit}. */
export interface AuditOptions {
  /** The stdio command and its arguments (give these, or `url`). */
  command?: string;
  args?: string[];
  /**
   * A server reached by URL instead (SPEC section 2 `--url`): Streamable HTTP, with the 2024-11-05
   * HTTP+SSE transport as the fallback. No sandbox: effect probes need `allowEffects`.
   */
  url?: string;
  /** Headers sent with every HTTP request (`--header`); their values are redacted from the report. */
  headers?: Record<string, string>;
  /**
   * Name of the environment variable that holds a bearer token (`--bearer-token-env`): sent as
   * `Authorization: Bearer <token>`, redacted everywhere, and named (not printed) in replay lines.
   * Throws UsageError when the variable is not set.
   */
  bearerTokenEnv?: string;
  /** Validated config; defaults when absent. */
  config?: ResolvedConfig;
  /** Working directory of the server (default: the current one). */
  cwd?: string;
  /** Extra environment for the server (on top of the scrubbed base and `config.env`). */
  env?: Record<string, string>;
  /** Write every JSON-RPC message to this file as JSON lines. */
  transcriptPath?: string;
  /** Called as the run progresses (for a TTY progress line). */
  onProgress?: (p: Progress) => void;
  /** How the target is shown in replay lines (default: command and args). */
  displayCommand?: string[];
  /**
   * `false` runs the server without the sandbox (--no-sandbox): in `cwd` with the user's HOME and
   * network. Default: the sandbox of SPEC section 3, configured by `config.sandbox`.
   */
  sandbox?: boolean;
  /**
   * More values to keep out of the report (keyed by the name the redactor shows), such as what a
   * client configuration's `${env:…}` variables put into a command line or URL. Not sent anywhere.
   */
  secrets?: Record<string, string>;
  /**
   * How replay lines reach the server instead of its command or URL, e.g.
   * `['--client-config', 'mcp.json', '--server', 'notes']` for an entry of a client configuration.
   */
  replayVia?: string[];
  /** `--all`: the default-call probe sends `{}` to every tool, not only those with no required argument. */
  all?: boolean;
  /** `--allow-effects`: effect probes call tools even without the sandbox or its copy-on-write filesystem (on the user's machine, for real). */
  allowEffects?: boolean;
  /**
   * `--package`: a published package to fetch and audit (SPEC section 2); `args` go to the server.
   * Give this or `command`/`url`.
   */
  package?: PackageRef;
  /** How the package was asked for, for the report (default `--package`; `--server-json` …). */
  launcher?: string;
  /**
   * A launch read already (a server.json package, see target/server-json.ts `serverJsonLaunch`):
   * fetched and started as `package` is, with its `docker run` options for oci.
   */
  launch?: Launch;
  /**
   * More canary secrets, by name (a server.json input marked `isSecret` gets one): given to the
   * server in its environment like the environment canaries (stdio), watched by secret-echo and
   * redacted everywhere.
   */
  canaries?: Record<string, string>;
  /** What the report says of where the target came from (`--server-json`: the file, the entry, notes). */
  origin?: ReportTarget['origin'];
  /**
   * The fetch phase (SPEC section 3 step 0) for a launcher line (`npx -y …`, `uvx …`, `pipx run …`,
   * `bunx …`, `docker run …`): the package is installed with the network on into sealmark's cache,
   * then started from there inside the sandbox. Default: on whenever the sandbox is; `false` runs the
   * line as given.
   */
  fetch?: boolean;
  /** `--allow-install-scripts`: npm lifecycle scripts and Python source builds run during the fetch. */
  allowInstallScripts?: boolean;
  /** sealmark's package cache (default `$SEALMARK_CACHE`, `$XDG_CACHE_HOME/sealmark` or `~/.cache/sealmark`). */
  cacheDir?: string;
  /**
   * `--instances`: how many instances of a stdio server run at once (SPEC section 3 step 3). A
   * server with many tools is audited as several instances (probes/instances.ts `instanceCount`:
   * one per 6 tools, at most 4), each a start of its own with a sandbox, an overlay and an effect
   * log of its own, calling its share of the tools from the same starting state; this number only
   * says how many run side by side (1: one after another), so it never changes the answers.
   * Default: twice the cores plus one (probes/instances.ts defaultConcurrency). There is one instance without the sandbox's copy-on-write
   * filesystem (instances would change each other's real files) and for a server reached by URL.
   */
  instances?: number;
}


/** Variables passed through from sealmark's own environment (SPEC section 3: PATH, HOME, LANG, TERM; the rest keep toolchains working). */
const PASS_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TERM', 'TMPDIR', 'USER', 'LOGNAME', 'SHELL', 'SYSTEMROOT', 'npm_config_cache', 'NODE_EXTRA_CA_CERTS'];

/** The environment a server is started with: a scrubbed base plus config `env` and `extra`. */
export function serverEnv(config: ResolvedConfig, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of PASS_ENV) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  return { ...env, ...config.env, ...extra };
}

/**
 * Audits one stdio server and returns the report object, with every value of `config.env` and
 * `env` redacted (SPEC section 8). Never rejects for anything the server does: a server that cannot be started or dies is a verdict (and `report.status` says
 * `not-audited`). Ends every process it started before returning.
 */
export async function audit(options: AuditOptions): Promise<Report> {
  const config = options.config ?? defaultConfig();
  const given = [options.url, options.command, options.package, options.launch].filter((x) => x !== undefined).length;
  if (given > 1) throw new UsageError('give one of a command, a package or a URL');
  if (given === 0) throw new UsageError('no server: give a command, a package or a URL');
  if (options.url !== undefined) return auditSpec(options, config, httpSpec(options), undefined, { ...options.canaries });
  const sandboxed = options.sandbox !== false;
  const start = await prepareStart(options, {
    fetch: sandboxed && options.fetch !== false,
    allowInstallScripts: options.allowInstallScripts,
    cacheDir: options.cacheDir,
    cwd: options.cwd,
    onFetch: (label) => options.onProgress?.({ phase: `fetching ${label}`, calls: 0 }),
  });
  if (!start.ok) {
    const display = options.displayCommand ?? (options.command !== undefined ? [options.command, ...(options.args ?? [])] : []);
    return notStartedReport({ kind: 'stdio', command: display, package: start.package, ...(options.origin ? { origin: options.origin } : {}) }, start, config);
  }
  const fetched = start.package;
  // The environment canaries (SPEC section 5 secret-echo) ride with the server's environment.
  const canaries = { ...envCanaries(), ...options.canaries };
  const env = { ...serverEnv(config, options.env), ...canaries };
  const sandbox = sandboxed ? Sandbox.create(config.sandbox) : undefined;
  try {
    const spec = startSpec(sandbox, start.command, start.args, env, options.cwd);
    // Which SDK it is built on, read from disk before it starts (for the findings an SDK causes).
    const sdk = detectSdk([start.command, ...start.args], options.cwd);
    // Another instance of the server (--instances) starts the same command in a sandbox of its own.
    const instanceSpec = (box: Sandbox) => startSpec(box, start.command, start.args, env, options.cwd);
    return await auditSpec(options, config, spec, sandbox, canaries, fetched, start.pinned, sdk, instanceSpec);
  } finally {
    sandbox?.dispose();
  }
}

/** The HTTP target of `options`: its URL and headers, the bearer token read from its variable. */
export function httpSpec(options: Pick<AuditOptions, 'url' | 'headers' | 'bearerTokenEnv'>): HttpTargetSpec {
  let url: URL;
  try {
    url = new URL(options.url!);
  } catch {
    throw new UsageError(`--url ${JSON.stringify(options.url)}: not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--url ${options.url}: only http: and https: URLs are served by MCP's HTTP transports`);
  const headers = { ...options.headers };
  if (options.bearerTokenEnv !== undefined) {
    const token = process.env[options.bearerTokenEnv];
    if (!token) throw new UsageError(`--bearer-token-env ${options.bearerTokenEnv}: the variable is not set`);
    headers.Authorization = `Bearer ${token}`;
  }
  return { url: url.href, headers };
}

/**
 * The flags a replay line needs to reach the same server: the URL, the headers given (their
 * values redacted in the report like every secret), the bearer token's variable by name.
 */
function httpReplayFlags(options: AuditOptions): string[] {
  return [
    '--url',
    options.url!,
    ...Object.entries(options.headers ?? {}).flatMap(([k, v]) => ['--header', `${k}: ${v}`]),
    ...(options.bearerTokenEnv ? ['--bearer-token-env', options.bearerTokenEnv] : []),
  ];
}

async function auditSpec(
  options: AuditOptions,
  config: ResolvedConfig,
  spec: StdioTargetSpec | HttpTargetSpec,
  sandbox: Sandbox | undefined,
  canaries: Record<string, string>,
  fetched?: ReportTarget['package'],
  pinned?: string[],
  sdk: ServerSdk[] = [],
  instanceSpec?: (box: Sandbox) => StdioTargetSpec,
): Promise<Report> {
  const isHttp = 'url' in spec;
  const display = isHttp ? [] : (options.displayCommand ?? (options.command !== undefined ? [options.command, ...(options.args ?? [])] : [spec.command, ...spec.args]));
  const origin = options.origin ? { origin: options.origin } : {};
  const built = sdk.length > 0 ? { sdk: sdk.map(({ name, version, from }) => ({ name, version, from })) } : {};
  const target: ReportTarget = isHttp ? { kind: 'http', command: [], url: spec.url, ...origin } : { kind: 'stdio', command: display, ...(fetched ? { package: fetched } : {}), ...built, ...origin };
  // The replay needs what the server needed: the config file (its env) and the --env names.
  const via = options.replayVia;
  // The replay runs the server as the audit did: without the sandbox, or with the host network.
  const isolation = isHttp ? [] : !sandbox ? ['--no-sandbox'] : config.sandbox.network === 'on' ? ['--network', 'on'] : [];
  const replayFlags = via
    ? [...via, ...(config.source ? ['--config', config.source] : []), ...isolation]
    : [...(isHttp ? httpReplayFlags(options) : []), ...(config.source ? ['--config', config.source] : []), ...envReplayFlags(options.env ?? {}), ...isolation];
  // A --package replay names the package among its flags; the server's own arguments follow `--`.
  // A launcher line replays with its package pinned to the version audited.
  const trailing = via ? (options.package ? (options.args ?? []) : []) : (pinned ?? display);
  const replay = (tool: string, args: unknown, rawArgs?: string) => replayLine(tool, args, trailing, replayFlags, rawArgs);
  const replayRawParams = (rawParams: string, method?: string) => rawParamsReplayLine(rawParams, trailing, replayFlags, method);
  const enabled = allChecks.filter((c) => config.checks[c.meta.id]?.enabled !== false);
  // What the user handed the server (config env, --env, HTTP headers) may be a credential: never
  // reported. Nor are the canaries: a report that printed them would leak what it is looking for.
  const given = { ...config.env, ...options.env, ...(isHttp ? headerSecrets(spec.headers) : {}), ...options.secrets };
  const redactor = new Redactor({ ...given, ...canaries });
  const secrets = secretSet(canaries, given);
  const started = Date.now();

  options.onProgress?.({ phase: 'starting', calls: 0 });
  const openOptions = { initTimeoutMs: config.timeout_init_sec * 1000, transcriptPath: options.transcriptPath, redactor };
  const opened = await Session.open(spec, openOptions);
  if (!(opened instanceof Session)) {
    const artifacts = emptyArtifacts(config, networkAtStart(opened, sandbox, isHttp || fetched ? undefined : options.command) ?? opened);
    const source = locateSource(display, options.cwd ?? process.cwd(), config.source, []);
    return redactor.value(buildReport({ target, isolation: sandbox?.isolation, config, artifacts, results: judgeAll(enabled, artifacts, replay), startedAt: started, source }));
  }
  // Later starts (restarts, instances) go on in the same transcript; a server that died on the
  // server/discover probe is not probed again (it would die again, and take a start more each time).
  const laterOpen = { ...openOptions, appendTranscript: true, ...(opened.handshake.diedOnProbe ? { legacyOnly: true } : {}) };
  const makeInstance = (session: Session, box: Sandbox | undefined, instance: number, share?: InstanceShare): Recorder => {
    // The next call of a listed tool ends the late window of the last watched call (SPEC section
    // 3): a ping, a tools/list or a protocol probe runs no tool, so what arrives meanwhile is still late.
    const closeWindow = box
      ? (method: string, params: unknown) => {
          const name = method === 'tools/call' && typeof params === 'object' && params !== null ? (params as { name?: unknown }).name : undefined;
          if (typeof name === 'string' && listed.has(name)) closeLateWindow(box);
        }
      : undefined;
    session.onRequest = closeWindow;
    // A server that exits is started again with the same settings (SPEC section 3 step 3); its
    // messages go on in the same transcript.
    const restart = async (): Promise<Session | OpenFailure> => {
      // A server stopped for filling the overlay is not started again: it would fill it again.
      if (box?.overflow) return { reason: 'exited-during-init', message: box.overflow, detail: box.overflow, exit: null, stderrTail: '', noise: [] };
      // What the ended start did is its calls' (late, if after their replies; it has ended, so
      // nothing more comes); the next start gets fresh upper layers, so it sees the user's files,
      // not what the ended start wrote.
      if (box) {
        closeLateWindow(box);
        box.freshStart();
      }
      const again = instance > 0 && instanceSpec && box ? instanceSpec(box) : spec;
      const next = await Session.open(again, { ...laterOpen, ...(instance > 0 ? { instance } : {}) });
      if (next instanceof Session) next.onRequest = closeWindow;
      box?.endStart();
      return next;
    };
    const rec = new Recorder(session, options.onProgress, secrets, restart, share);
    // The overlay's upper layers are in memory: a server that writes past their cap is stopped (its
    // calls in flight then see it exit, and it is not started again).
    if (box) box.onOverflow = () => void rec.session.close();
    return rec;
  };
  const listed = new Set<string>();
  // The sandboxes of the instances after the first (ended with the audit).
  const extras: { rec?: Recorder; sandbox: Sandbox; instance: number }[] = [];
  const recs = [makeInstance(opened, sandbox, 0)];
  /** Set when the tools were shared among instances (gatherShared). */
  let shared = false;
  /** How many instances the tools were shared among, the first included (1 when not shared). */
  let instancesRun = 1;
  try {
    const session = opened;
    const h = session.handshake;
    const handshakeSecrets = [...new Set([h.rawReply, h.initReply])].flatMap((reply) => scanSecrets(reply, secrets));
    const hangMs = hangLimitMs(config);
    recs[0]!.progress({ phase: 'tools/list' });
    const listing = await session.listTools(hangMs);
    for (const ex of listing.exchanges) recs[0]!.add('tools-list', ex);
    // The start-up is over: what the server did until now is the sandbox line's, no call's.
    sandbox?.endStart();
    const tools = listing.tools.map(toListedTool);
    for (const t of tools) listed.add(t.name);
    const artifacts: Artifacts = {
      ...(sandbox ? { isolation: sandbox.isolation } : {}),
      handshake: session.handshake,
      listExchanges: listing.exchanges,
      listProblem: listing.problem,
      listUnending: listing.unending,
      tools,
      noise: { count: 0, bytes: 0, lines: [] },
      stderrTail: '',
      exit: null,
      calls: recs[0]!.calls,
      strays: [],
      config,
      handshakeSecrets,
      remote: session.remote,
      restarts: recs[0]!.restarts,
      exits: recs[0]!.exits,
      sdk,
    };
    const needs = new Set(enabled.flatMap((c) => c.meta.requires));
    if (tools.length > 0 && !listing.problem) {
      // Many tools are shared among instances, each a start of its own in a sandbox of its own,
      // from the same state (SPEC section 3 step 3). Without the copy-on-write filesystem they
      // would share the user's real files, so there is one.
      // The probe many servers never answer goes first, before sealmark's own work on the listing.
      const early = needs.has('protocol-errors') ? sendEarly(recs[0]!, hangMs) : undefined;
      const owner = sandbox?.isolation.filesystem === 'overlay' && instanceSpec ? shareTools(tools, instanceCount(tools.length)) : undefined;
      const count = owner ? new Set(owner.values()).size : 1;
      if (!owner || count === 1) Object.assign(artifacts, await gatherInstance(recs[0]!, sandbox, tools, config, needs, hangMs, options, early));
      // The first instance (the start the handshake was judged on) also makes the whole-server probes.
      else Object.assign(artifacts, await gatherShared(owner, count, tools, needs, hangMs, early, artifacts));
    }
    // A delayed effect of the last watched call is still that call's: read before anything is judged.
    await closeWatch(sandbox);
    for (const rec of recs) for (const s of rec.sessions) await s.close();
    // A reply to a request sealmark stopped waiting for may come until the end: each one found
    // now replaces its call's "no reply" record before anything is judged.
    for (const rec of recs) adoptLateReplies(rec, tools);
    const sessions = recs.flatMap((rec) => rec.sessions);
    if (shared) {
      artifacts.exits = recs.flatMap((rec) => rec.exits);
      // Numbered as one instance numbers them, so that a report's calls read in the same order.
      renumber(artifacts, renumberCalls(artifacts.calls, listingOrder(tools)));
    }
    // What every start of the server wrote: stdout noise and stderr of all, the last one's exit.
    const ts = sessions.map((s) => s.transport);
    artifacts.noise = { count: sum(ts.map((t) => t.noiseCount)), bytes: sum(ts.map((t) => t.noiseBytes)), lines: ts.flatMap((t) => t.noise) };
    artifacts.stderrTail = ts.map((t) => t.stderrText).filter((x) => x !== '').join('\n');
    const t = recs[0]!.session.transport;
    artifacts.exit = t.exit;
    // Refused in the middle of the audit (an expired token, an ended session): what was gathered is
    // kept as evidence, but the server could not be judged, as if the handshake had failed.
    const cut = ts.map((x) => x.exit).find((e) => e?.cutOff);
    if (cut?.cutOff) {
      const why = cut.lost ?? 'the server refused sealmark during the audit';
      const hint = cut.cutOff === 'unauthorized' ? ' (a token that expired, or one without the rights the tools need)' : '';
      artifacts.openFailure = { reason: cut.cutOff, message: `${why}${hint}`, detail: `${why}${hint}`, exit: cut, stderrTail: '', noise: [] };
    }
    artifacts.strays = sessions.flatMap((s) => s.wire.strayResponses.map((x) => x.message));
    const source = locateSource(display, options.cwd ?? process.cwd(), config.source, tools.map((x) => x.name));
    const isolation = sandbox ? withInstances(sandbox.isolation, extras, instancesRun) : undefined;
    return redactor.value(buildReport({ target, isolation, config, artifacts, results: judgeAll(enabled, artifacts, replay, replayRawParams), startedAt: started, source }));
  } finally {
    for (const rec of recs) for (const s of rec.sessions) await s.close();
    for (const e of extras) e.sandbox.dispose();
  }

  /**
   * Audits the tools as `count` instances, `owner` saying which instance calls each tool: the
   * first is the server started for the handshake, which also makes the whole-server probes (and
   * the user's probes of tools not listed); each calls its share of the tools (probes/instances.ts
   * `shareTools`). Each is started when a place is free (at most
   * `options.instances` at once, default twice the cores and one), in a sandbox of its own, lists
   * the tools (a server may need its listing before a call) and calls its share; an instance whose
   * work is done is ended before the next starts. Calls are numbered across all of them. An
   * instance that does not start, or lists other tools, leaves its tools not reached and a failed
   * start in `restarts`. Resolves to the runs merged.
   */
  async function gatherShared(owner: Map<string, number>, count: number, tools: ListedTool[], needs: Set<string>, hangMs: number, early: Promise<EarlyProbe> | undefined, artifacts: Artifacts): Promise<Gathered> {
    shared = true;
    instancesRun = count;
    const first = recs[0]!;
    const share = (instance: number): InstanceShare => ({ log: first.calls, instance, of: count, owns: (tool) => (owner.get(tool) ?? 0) === instance });
    // The first instance's calls are the audit's list: the others' calls go there too.
    first.join(share(0));
    const names = JSON.stringify(tools.map((x) => x.name));
    const failed: Restart[] = [];
    const runs: Gathered[] = [];
    const runOne = async (i: number): Promise<Gathered> => {
      if (i === 0) {
        const out = await gatherInstance(first, sandbox, tools, config, needs, hangMs, options, early);
        await endInstance(first, sandbox);
        return out;
      }
      const box = Sandbox.create(config.sandbox);
      extras.push({ sandbox: box, instance: i });
      options.onProgress?.({ phase: `starting instance ${i + 1} of ${count}`, calls: first.calls.length });
      const s = await Session.open(instanceSpec!(box), { ...laterOpen, instance: i });
      let why = s instanceof Session ? undefined : s.message;
      const listing = s instanceof Session ? await s.listTools(hangMs) : undefined;
      box.endStart();
      if (listing && !why && (listing.problem || JSON.stringify(listing.tools.map((x, k) => toListedTool(x, k).name)) !== names)) {
        why = listing.problem ?? 'it listed other tools than the first instance';
      }
      if (why || !(s instanceof Session) || !listing) {
        if (s instanceof Session) await s.close();
        failed.push({ afterSeq: first.calls.length, ok: false, failure: `instance ${i + 1} of ${count} could not be started: ${why}` });
        const mine = tools.filter((t) => owner.get(t.name) === i).map((t) => t.name);
        return { robust: { tools: [], beyondMaxTools: [], liveness: [], stopped: { reason: 'server-gone', notReached: mine } } };
      }
      const rec = makeInstance(s, box, i, share(i));
      extras[extras.length - 1]!.rec = rec;
      recs.push(rec);
      for (const ex of listing.exchanges) rec.add('instance-list', ex);
      const out = await gatherInstance(rec, box, tools, config, needs, hangMs, options);
      await endInstance(rec, box);
      return out;
    };
    let next = 0;
    const atOnce = Math.max(1, Math.min(count, options.instances ?? defaultConcurrency(availableParallelism())));
    await Promise.all(
      Array.from({ length: atOnce }, async () => {
        while (next < count) {
          const i = next++;
          runs[i] = await runOne(i);
        }
      }),
    );
    recs.sort((a, b) => a.instance - b.instance);
    artifacts.calls = first.calls;
    artifacts.restarts = [...recs.flatMap((rec) => rec.restarts), ...failed];
    return mergeInstances(runs, tools);
  }

  /** Ends an instance whose share is done: its late window read, its sessions closed (their late replies kept). */
  async function endInstance(rec: Recorder, box: Sandbox | undefined): Promise<void> {
    await closeWatch(box);
    for (const s of rec.sessions) await s.close();
  }
}

/**
 * The sandbox as the report states it when the tools were shared among `count` instances: the
 * first instance's isolation, with each other instance's notes that the first does not have
 * (where its folders were kept, an overflow, a watch problem) prefixed `instance i of n: `, and the
 * folders any of them could not protect. The network and the protected folders are the same for
 * all: every instance is made from the same configuration.
 */
function withInstances(first: Isolation, extras: readonly { sandbox: Sandbox; instance: number }[], count: number): Isolation {
  if (extras.length === 0) return first;
  const notes = [...first.notes];
  const unprotected = [...first.unprotected];
  for (const e of [...extras].sort((a, b) => a.instance - b.instance)) {
    const own = e.sandbox.isolation;
    for (const n of own.notes) if (!first.notes.includes(n)) notes.push(`instance ${e.instance + 1} of ${count}: ${n}`);
    for (const u of own.unprotected) if (!unprotected.some((x) => x.path === u.path)) unprotected.push(u);
  }
  return { ...first, notes, unprotected };
}

/**
 * Applies new call numbers (`renum`: old seq → new, from probes/instances.ts `renumberCalls`) to
 * every seq the artifacts hold besides the calls' own: the gatherers' liveness and repeat seqs, the
 * restarts and the exits.
 */
function renumber(a: Artifacts, renum: Map<number, number>): void {
  const n = (seq: number) => renum.get(seq) ?? seq;
  if (a.robust) a.robust.liveness = a.robust.liveness.map(n).sort((x, y) => x - y);
  if (a.protocol) {
    a.protocol.seqs = a.protocol.seqs.map(n);
    for (const x of a.protocol.notifications) x.followUpSeq = n(x.followUpSeq);
  }
  for (const x of a.oversized?.liveness ?? []) x.seq = n(x.seq);
  for (const x of a.design?.repeats ?? []) x.seqs = [n(x.seqs[0]), n(x.seqs[1])];
  for (const x of a.design?.madeUp ?? []) x.seq = n(x.seq);
  if (a.concurrency?.liveness) a.concurrency.liveness.seq = n(a.concurrency.liveness.seq);
  for (const r of a.restarts ?? []) r.afterSeq = n(r.afterSeq);
  for (const e of a.exits ?? []) {
    e.seenAt = n(e.seenAt);
    e.candidates = e.candidates.map(n);
    e.cleared = e.cleared.map(n);
    if (e.culprit !== undefined) e.culprit = n(e.culprit);
    if (e.replay !== undefined) e.replay = n(e.replay);
  }
}

/** The artifacts one instance's gatherers leave (see {@link gatherInstance}). */
type Gathered = Pick<Artifacts, 'robust' | 'strict' | 'effects' | 'protocol' | 'limits' | 'concurrency' | 'oversized' | 'design'>;

/**
 * Runs the gatherers on one instance of the server, over the tools it owns (Recorder.owns), in the
 * order of SPEC section 3 step 3. The whole-server probes (protocol-errors, concurrency) run on the
 * first instance only (instance 0), which is given `earlyProbe`: the array-params probe sent at
 * once after the listing ({@link sendEarly}), so that its hang limit passes beside the rest; it is
 * recorded last.
 */
async function gatherInstance(
  rec: Recorder,
  sandbox: Sandbox | undefined,
  tools: ListedTool[],
  config: ResolvedConfig,
  needs: Set<string>,
  hangMs: number,
  options: AuditOptions,
  earlyProbe?: Promise<EarlyProbe>,
): Promise<Gathered> {
  const out: Gathered = {};
  const first = rec.instance === 0;
  /** A server to call: the live one, or the server started again after it exited. */
  const live = () => rec.revive();
  const early = await earlyProbe;
  if (early?.recorded) await live();
  // Where a lying read-only tool would change the user's real files, its claim licenses no call.
  const unprotected = unprotectedFiles(sandbox, rec.session.remote, options.allowEffects === true);
  if (needs.has('robust-input')) out.robust = await gatherRobustInput(rec, tools, config, sandbox, unprotected);
  if (needs.has('strict-arguments') && !out.robust?.stopped && (await live())) out.strict = await gatherStrictArguments(rec, tools, config, sandbox, unprotected);
  if (needs.has('effects') && (await live())) {
    out.effects = await gatherEffects(rec, tools, config, { sandbox, all: options.all === true, allowEffects: options.allowEffects === true });
  }
  // After robust-input stopped (three hangs, a server that could not be started again) the
  // server cannot be judged on the gatherers below: more requests would only wait out the hang
  // limit and blame the wrong probe. protocol-errors goes before the limits pack, so that a
  // server that dies on a limit value is still judged on protocol mistakes.
  // Its array-params probe is recorded last (finishProtocol), so that its hang limit passes beside the rest.
  let finishProtocol: (() => Promise<void>) | undefined;
  if (first && needs.has('protocol-errors') && !out.robust?.stopped && (await live())) ({ run: out.protocol, finish: finishProtocol } = await gatherProtocolErrors(rec, hangMs, early));
  if (needs.has('limits') && !out.robust?.stopped && (await live())) out.limits = await gatherLimits(rec, tools, config, sandbox, unprotected);
  // (Three hangs in limits with the server still answering is one slow tool, not a wedged server.)
  const stopped = out.robust?.stopped ?? (out.limits?.stopped?.reason === 'server-gone' ? out.limits.stopped : undefined);
  // The two that may take a fragile server down come last.
  if (first && needs.has('concurrency') && !stopped && (await live())) out.concurrency = await gatherConcurrency(rec, tools, config, unprotected);
  if (needs.has('oversized') && !stopped && (await live())) out.oversized = await gatherOversized(rec, tools, config, unprotected);
  // The design pack's real writes (repeats, made-up proposals) last of all: a server that dies
  // on one must not escape the checks above by it.
  if (needs.has('design') && !stopped && (await live())) out.design = await gatherDesign(rec, tools, config, sandbox, options.allowEffects === true);
  await finishProtocol?.();
  if (out.limits) await awaitDroppedLines(rec, hangMs);
  return out;
}

/**
 * The runs of every instance as the one run per gatherer the checks read (probes/instances.ts).
 * A gatherer that did not run on some instance (it stopped before) is merged from those where it ran.
 */
function mergeInstances(runs: Gathered[], tools: ListedTool[]): Gathered {
  const order = listingOrder(tools);
  const all = <K extends keyof Gathered>(k: K) => runs.map((r) => r[k]).filter((x): x is NonNullable<Gathered[K]> => x !== undefined);
  const out: Gathered = {};
  const merge = <K extends keyof Gathered>(k: K, f: (xs: NonNullable<Gathered[K]>[], order: Map<string, number>) => NonNullable<Gathered[K]>) => {
    const xs = all(k);
    if (xs.length > 0) out[k] = f(xs, order);
  };
  merge('robust', mergeRobust);
  merge('strict', mergeStrict);
  merge('effects', mergeEffects);
  merge('limits', mergeLimits);
  merge('oversized', mergeOversized);
  merge('design', mergeDesign);
  if (runs[0]!.protocol) out.protocol = runs[0]!.protocol;
  if (runs[0]!.concurrency) out.concurrency = runs[0]!.concurrency;
  return out;
}

function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

/**
 * The report of a target that was never started: a `--client-config` entry with neither a command
 * nor a URL, or with a variable sealmark cannot fill. Handshake fails with `invalid-entry`.
 */
export function unstartableReport(target: ReportTarget, problem: string, config: ResolvedConfig = defaultConfig()): Report {
  return notStartedReport(target, { reason: 'invalid-entry', message: problem, detail: problem }, config);
}

/**
 * The report of a target that was never started, for any reason that comes before the start: a
 * fetch that failed, a launcher that is missing, a server.json input with no value. Handshake
 * fails with `reason` as its message id; every other check is n/a.
 */
export function notStartedReport(target: ReportTarget, why: Pick<OpenFailure, 'reason' | 'message' | 'detail'>, config: ResolvedConfig = defaultConfig()): Report {
  const failure: OpenFailure = { ...why, exit: null, stderrTail: '', noise: [] };
  const artifacts = emptyArtifacts(config, failure);
  const enabled = allChecks.filter((c) => config.checks[c.meta.id]?.enabled !== false);
  return buildReport({ target, config, artifacts, results: judgeAll(enabled, artifacts, () => ''), startedAt: Date.now() });
}

function emptyArtifacts(config: ResolvedConfig, failure: OpenFailure): Artifacts {
  return {
    openFailure: failure,
    listExchanges: [],
    tools: [],
    noise: { count: failure.noise.length, bytes: failure.noise.reduce((s, n) => s + n.bytes, 0), lines: failure.noise },
    stderrTail: failure.stderrTail,
    exit: failure.exit,
    calls: [],
    strays: [],
    config,
  };
}

/** Reads one listed tool without trusting its shape. */
export function toListedTool(raw: unknown, index: number): ListedTool {
  const t = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const annotations = typeof t.annotations === 'object' && t.annotations !== null ? (t.annotations as Record<string, unknown>) : undefined;
  return { index, name: typeof t.name === 'string' ? t.name : `#${index}`, raw, inputSchema: t.inputSchema, annotations };
}

/** Longest request a finding quotes whole and replays (characters); longer ones are cut and not replayed. */
const MAX_REQUEST_CHARS = 4096;

/**
 * Runs each enabled check's judge; a check that throws becomes an n/a result with the error as a
 * note (Lighthouse: one audit's crash never loses the report). When the target could not be
 * audited, every check but handshake is n/a. Findings that point at a tools/call get its exact
 * request and a replay line.
 */
export function judgeAll(
  enabled: readonly Check[],
  artifacts: Artifacts,
  replay: (tool: string, args: unknown, rawArgs?: string) => string,
  replayRawParams?: (rawParams: string, method?: string) => string,
): CheckResult[] {
  return enabled.map((c) => {
    if (c.meta.id !== 'handshake' && (artifacts.openFailure || artifacts.tools.length === 0 || artifacts.listProblem)) {
      return { id: c.meta.id, verdict: 'n/a', findings: [], notes: ['not checked: the target could not be audited (see handshake)'] };
    }
    try {
      const result = goneBefore(c, artifacts, c.judge(artifacts, { replay, ...(replayRawParams ? { replayRawParams } : {}) }));
      for (const f of result.findings) {
        if (f.replay || !f.evidence.calls?.length) continue;
        const call = artifacts.calls.find((x) => x.seq === f.evidence.calls![0]);
        if (!call) continue;
        const sent = call.exchange.sent;
        // An oversized request is shown by its start; it is too long for a command line to replay.
        f.request ??= sent.length > MAX_REQUEST_CHARS ? `${sent.slice(0, MAX_REQUEST_CHARS)}…` : sent;
        if (call.tool && call.exchange.method === 'tools/call' && sent.length <= MAX_REQUEST_CHARS) f.replay = replay(call.tool, call.arguments, call.rawArguments);
      }
      return result;
    } catch (err) {
      return { id: c.meta.id, verdict: 'n/a', findings: [], notes: [`the check crashed: ${err instanceof Error ? err.message : String(err)}`] };
    }
  });
}

/** The artifact each gatherer leaves (absent when it never ran). */
const GATHERED: Record<GathererId, keyof Artifacts> = {
  'robust-input': 'robust',
  'strict-arguments': 'strict',
  'protocol-errors': 'protocol',
  effects: 'effects',
  limits: 'limits',
  oversized: 'oversized',
  concurrency: 'concurrency',
  design: 'design',
};

/**
 * SPEC section 3 step 3: a check is never n/a because the server did not stay up. When the server
 * was gone for good (a start again failed, or it exited more than MAX_RESTARTS times) or robust-input
 * stopped after three hangs, an n/a check whose gatherer never ran fails instead, saying why:
 * otherwise dying would raise the grade.
 */
function goneBefore(c: Check, a: Artifacts, result: CheckResult): CheckResult {
  if (result.verdict !== 'n/a' || c.meta.id === 'handshake') return result;
  const restarts = a.restarts ?? [];
  const failed = restarts.find((r) => !r.ok);
  const why = failed
    ? `the server exited and could not be started again (${failed.failure ?? 'the start failed'})`
    : restarts.length >= MAX_RESTARTS
      ? `the server exited ${restarts.length + 1} times, and sealmark starts it again at most ${MAX_RESTARTS} times`
      : a.robust?.stopped?.reason === 'three-hangs'
        ? 'the server stopped answering: robust-input stopped after three hangs'
        : undefined;
  // Only an n/a that is about the server being gone (whyNotRun's words), not one where nothing applies.
  const becauseGone = result.notes.some((n) => /the server was gone|after three hangs/.test(n));
  if (!why || !becauseGone || !c.meta.requires.some((g) => a[GATHERED[g]] === undefined)) return result;
  const message = `not judged: ${why}; a check the server did not stay up for counts as failed, not as not applicable`;
  return {
    ...result,
    verdict: 'fail',
    findings: [{ checkId: c.meta.id, messageId: SERVER_GONE_MESSAGE, level: 'fail', data: { why }, message, evidence: {} }, ...result.findings],
  };
}

/**
 * The header values a report must not print, keyed by a name the redactor shows
 * (`[redacted:Authorization]`); the bearer token alone too, since a server may echo it without
 * its scheme.
 */
export function headerSecrets(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    out[k] = v;
    const bearer = /^Bearer\s+(\S+)$/i.exec(v);
    if (bearer) out[`${k} token`] = bearer[1]!;
  }
  return out;
}
