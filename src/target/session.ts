/**
 * A session: one started, connected and initialized server (SPEC section 3, steps 1, 2 and 4).
 *
 * The official v2 client (`@modelcontextprotocol/client`) negotiates the era and version: it probes
 * with `server/discover` (2026-07-28, stateless) and falls back to the `initialize` handshake
 * (2024-11-05 … 2025-11-25). After that every request goes through the {@link WireTransport}, so a
 * malformed reply is evidence, never an exception.
 */
import { Client } from '@modelcontextprotocol/client';
import { AuditStdioTransport, type ExitInfo, type NoiseLine, type StdioTargetSpec } from './stdio-transport.js';
import { AuditHttpTransport, HttpFailure, type HttpTargetSpec } from './http-transport.js';
import type { AuditTransport } from './transport.js';
import { WireTransport, type Exchange, type RequestOptions } from './wire.js';
import { Transcript } from './transcript.js';
import type { Redactor } from '../redact.js';
import { VERSION } from '../version.js';


/** What the handshake established. */
export interface HandshakeInfo {
  /** Negotiated protocol version as the server stated it (may be unknown to sealmark). */
  protocolVersion: string | undefined;
  /** `modern` = 2026-07-28 stateless, `legacy` = the initialize handshake. */
  era: 'legacy' | 'modern' | undefined;
  serverInfo: { name?: unknown; version?: unknown } | undefined;
  capabilities: Record<string, unknown> | undefined;
  /** ms from start until the handshake completed. */
  initMs: number;
  /** The raw reply to `initialize` or `server/discover`, as received. */
  rawReply: unknown;
  /** The raw reply to `initialize` when one was sent (after a refused `server/discover`, it differs from `rawReply`). */
  initReply?: unknown;
  /**
   * True when the first process exited on the `server/discover` probe without answering anything,
   * and this session is a second start that spoke the initialize handshake only. Later starts of
   * the same server (restarts, instances) then skip the probe ({@link OpenOptions.legacyOnly}).
   */
  diedOnProbe?: boolean;
}

/** Why a target could not be audited (exit code 3, SPEC section 2). */
export interface OpenFailure {
  /**
   * Stdio: `spawn-failed`, `exited-during-init`. URL: `connect-failed` (no connection),
   * `tls-error`, `unauthorized` (401 or 403, at the handshake or later), `http-error` (another
   * status, on both transports), `session-lost` (the server ended its session during the audit).
   * Both: `init-timeout`, `init-rejected`. `invalid-entry`: a `--client-config` entry that names
   * no command or URL, or needs a value sealmark cannot supply.
   * Before the start (SPEC section 3 step 0): `fetch-failed` (the package could not be fetched or
   * installed), `not-runnable` (no launcher for it, or nothing in it to run), `needs-config` (a
   * required server.json input with no value). `needs-network`: the server reached for the
   * network while starting, and the sandbox has none.
   */
  reason:
    | 'spawn-failed'
    | 'exited-during-init'
    | 'init-timeout'
    | 'init-rejected'
    | 'connect-failed'
    | 'tls-error'
    | 'unauthorized'
    | 'http-error'
    | 'invalid-entry'
    | 'session-lost'
    | 'fetch-failed'
    | 'not-runnable'
    | 'needs-config'
    | 'needs-network';
  /** One line for a human, e.g. `the server exited during the handshake (code 3)`. */
  message: string;
  /** The particular part of `message` (`code 3`, `command not found`, the SDK's error text). */
  detail: string;
  exit: ExitInfo | null;
  stderrTail: string;
  noise: NoiseLine[];
}

/** Options of {@link Session.open}. Times in ms. */
export interface OpenOptions {
  /** No answer to the handshake within this many ms fails it (SPEC `timeout_init_sec` × 1000). */
  initTimeoutMs: number;
  /** File to write every JSON-RPC message to, as JSON lines. */
  transcriptPath?: string;
  /** Secrets kept out of the transcript. */
  redactor?: Redactor;
  /** Append to the transcript rather than start it afresh (a restart of the same audit). */
  appendTranscript?: boolean;
  /** The server instance this session is (`--instances`): its transcript lines say `"instance": n`. */
  instance?: number;
  /**
   * Speak the initialize handshake only, without the `server/discover` probe: for a later start of
   * a server whose first start died on the probe ({@link HandshakeInfo.diedOnProbe}).
   */
  legacyOnly?: boolean;
}

/** One tools/list page request and its exchange. */
export interface ToolsListing {
  /** Tools from all pages, as received (not validated). */
  tools: unknown[];
  exchanges: Exchange[];
  /** Set when a page failed: the reason in words (nothing can be audited). */
  problem?: string;
  /** Set when the cursor chain never ended (a repeated cursor, or past the page limit): the tools read so far are kept. */
  unending?: string;
}

/** Most pages of tools/list followed before giving up on a server that never ends its cursor chain. */
const MAX_PAGES = 100;

export class Session {
  private constructor(
    readonly target: StdioTargetSpec | HttpTargetSpec,
    readonly transport: AuditTransport,
    readonly wire: WireTransport,
    private readonly client: Client | undefined,
    readonly handshake: HandshakeInfo,
    readonly transcript: Transcript,
  ) {}

  /**
   * Starts the server and negotiates. Returns the session, or an {@link OpenFailure} saying why
   * the server could not be audited. Never rejects; the process is ended on failure.
   */
  static async open(target: StdioTargetSpec | HttpTargetSpec, options: OpenOptions): Promise<Session | OpenFailure> {
    // One transcript across attempts, so a restart does not erase the first exchange.
    const transcript = new Transcript(options.transcriptPath, options.redactor, options.appendTranscript === true, options.instance);
    const first = await Session.attempt(target, options, options.legacyOnly ? 'legacy' : 'auto', transcript);
    if (first instanceof Session) return first;
    let result: Session | Attempted = first;
    if (first.retry === 'sse') {
      // MCP 2025-03-26 backwards compatibility: a POST refused with 400, 404 or 405 may mean the
      // 2024-11-05 HTTP+SSE transport. Its failure is reported only when it fails differently.
      const sse = await Session.attempt(target, options, 'sse', transcript);
      // The HTTP+SSE attempt's own failure tells more than the first one, unless its GET was
      // refused too (then the server speaks neither transport, and the first refusal is the news).
      const refusedToo = !(sse instanceof Session) && sse.reason === 'http-error' && /^HTTP \d/.test(sse.detail);
      result = refusedToo ? first : sse;
    } else if (first.retry === 'legacy') {
      // Some legacy servers exit on any request before initialize; the probe cost them their life.
      // Start a fresh process and speak the initialize handshake only.
      result = await Session.attempt(target, options, 'legacy', transcript);
      if (result instanceof Session) result.handshake.diedOnProbe = true;
    } else if (first.retry === 'manual') {
      // The server answered initialize with a result the official client refuses (a version it does
      // not know, no serverInfo): sealmark completes the handshake itself, so that handshake can
      // give its partial verdict and the audit go on (SPEC section 5, handshake).
      result = await Session.attempt(target, options, 'manual', transcript);
    }
    if (result instanceof Session) return result;
    transcript.close();
    const { retry: _retry, ...failure } = result;
    return failure;
  }

  private static async attempt(target: StdioTargetSpec | HttpTargetSpec, options: OpenOptions, mode: 'auto' | 'legacy' | 'manual' | 'sse', transcript: Transcript): Promise<Session | Attempted> {
    const http = 'url' in target ? new AuditHttpTransport(target, mode === 'sse' ? 'sse' : 'streamable') : undefined;
    const transport: AuditTransport = http ?? new AuditStdioTransport(target as StdioTargetSpec);
    transport.taps.push((dir, msg, at) => transcript.write(dir, msg, at));
    const wire = new WireTransport(transport);
    const sentMethods: string[] = [];
    let initId: unknown;
    let initReply: Record<string, unknown> | undefined;
    let rawReply: unknown;
    let badInit: (reason: string) => void = () => {};
    const badInitReply = new Promise<{ bad: string }>((r) => {
      badInit = (bad) => r({ bad });
    });
    transport.taps.push((dir, msg) => {
      const m = msg as Record<string, unknown>;
      if (dir === 'send' && typeof m.method === 'string') {
        sentMethods.push(m.method);
        if (m.method === 'initialize') initId = m.id;
      }
      if (dir !== 'recv' || 'method' in m) return;
      if (rawReply === undefined) rawReply = m;
      if (initId !== undefined && m.id === initId && initReply === undefined) {
        initReply = m;
        // The SDK waits out its timeout on a result it cannot parse; sealmark need not.
        if ('result' in m && (typeof m.result !== 'object' || m.result === null || Array.isArray(m.result))) {
          badInit(`the initialize result is not an object: ${JSON.stringify(m.result)?.slice(0, 100)}`);
        }
      }
    });
    const failWith = async (reason: OpenFailure['reason'], message: string, detail: string, retry?: Attempted['retry']): Promise<Attempted> => {
      await transport.close(500);
      return { reason, message, detail, exit: transport.exit, stderrTail: transport.stderrText, noise: transport.noise, retry };
    };
    let client: Client | undefined;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((r) => {
      timer = setTimeout(() => r('timeout'), options.initTimeoutMs);
    });
    let outcome: 'ok' | 'timeout' | { bad: string } | Error;
    try {
      let connecting: Promise<'ok'>;
      if (mode === 'manual') {
        connecting = manualHandshake(wire, options.initTimeoutMs).then((r) => {
          rawReply = r;
          return 'ok' as const;
        });
      } else {
        client = new Client(
          { name: 'sealmark', version: VERSION },
          {
            capabilities: {},
            versionNegotiation:
              mode === 'auto'
                ? { mode: 'auto', probe: { timeoutMs: Math.min(5000, Math.max(500, Math.floor(options.initTimeoutMs / 2))) } }
                : { mode: 'legacy' },
          },
        );
        // The SDK reports stray or unparsable messages here; they are evidence kept by the transport.
        client.onerror = () => {};
        connecting = client.connect(wire, { timeout: options.initTimeoutMs }).then(() => 'ok' as const);
      }
      outcome = await Promise.race([connecting, deadline, badInitReply]);
    } catch (err) {
      outcome = err instanceof Error ? err : new Error(String(err));
    } finally {
      clearTimeout(timer);
    }
    const seconds = `${options.initTimeoutMs / 1000} s`;
    if (outcome === 'timeout') return failWith('init-timeout', `no reply to the handshake within ${seconds}`, seconds);
    if (typeof outcome === 'object' && 'bad' in outcome) return failWith('init-rejected', `the handshake failed: ${outcome.bad}`, outcome.bad);
    if (outcome instanceof Error && http) {
      const f = outcome instanceof HttpFailure ? outcome : http.lastFailure;
      if (f) return failWith(...httpFailure(f, target as HttpTargetSpec, mode));
    }
    if (outcome instanceof Error) {
      const code = (outcome as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EACCES') {
        const why = `${JSON.stringify((target as StdioTargetSpec).command)}: ${code === 'ENOENT' ? 'command not found' : 'permission denied'}`;
        return failWith('spawn-failed', `cannot start ${why}`, why);
      }
      // What the server itself said to initialize decides before how the process ended: the SDK
      // closes the connection (and so ends the process) on a reply it refuses.
      if (initReply && 'error' in initReply) {
        const e = initReply.error as { code?: unknown; message?: unknown } | null;
        const detail = `the server answered initialize with error ${String(e?.code)}: ${String(e?.message).slice(0, 200)}`;
        return failWith('init-rejected', `the handshake failed: ${detail}`, detail);
      }
      if (initReply && mode !== 'manual') {
        return failWith('init-rejected', `the handshake failed: ${outcome.message.slice(0, 300)}`, outcome.message.slice(0, 300), 'manual');
      }
      // Give a dying process a moment so its exit status is known.
      await new Promise((r) => setTimeout(r, 100));
      if (transport.exit || wire.closed) {
        const e = transport.exit;
        const how = e ? (e.signal ? `signal ${e.signal}` : `code ${e.code}`) : 'closed';
        // An exit before any answer may be the probe's doing, even where initialize went out
        // too: a server slow to start (rmcp servers under load) reads the probe only after the
        // SDK has waited it out and sent initialize, then exits on it (rmcp: "expect initialized
        // request, but received ... server/discover"). A fresh start that hears initialize
        // first tells; a server that exits whatever it is sent fails that start too.
        const unanswered = rawReply === undefined && sentMethods.includes('server/discover');
        return failWith('exited-during-init', `the server exited during the handshake (${how})`, how, mode === 'auto' && unanswered ? 'legacy' : undefined);
      }
      if (/timed? ?out/i.test(outcome.message)) return failWith('init-timeout', `no reply to the handshake within ${seconds}`, seconds);
      const detail = outcome.message.slice(0, 300);
      return failWith('init-rejected', `the handshake failed: ${detail}`, detail);
    }
    let handshake: HandshakeInfo;
    if (client) {
      handshake = {
        protocolVersion: client.getNegotiatedProtocolVersion(),
        era: client.getProtocolEra(),
        serverInfo: client.getServerVersion() as HandshakeInfo['serverInfo'],
        capabilities: client.getServerCapabilities() as Record<string, unknown> | undefined,
        initMs: transport.now(),
        rawReply,
        initReply,
      };
    } else {
      const result = ((rawReply as { result?: unknown }).result ?? {}) as Record<string, unknown>;
      handshake = {
        protocolVersion: typeof result.protocolVersion === 'string' ? result.protocolVersion : undefined,
        era: 'legacy',
        serverInfo: isObject(result.serverInfo) ? (result.serverInfo as HandshakeInfo['serverInfo']) : undefined,
        capabilities: isObject(result.capabilities) ? (result.capabilities as Record<string, unknown>) : undefined,
        initMs: transport.now(),
        rawReply,
      };
    }
    // The 2026-07-28 envelope rides on every request only when that era was negotiated.
    if (handshake.era !== 'modern') wire.envelope = undefined;
    wire.handshakeDone = true;
    if (http) {
      http.handshakeDone = true;
      if (handshake.protocolVersion) http.protocolVersion = handshake.protocolVersion;
    }
    return new Session(target, transport, wire, client, handshake, transcript);
  }

  /**
   * Called, synchronously, with the method and params of each request or notification sealmark
   * sends after the handshake: the audit closes the late window of the last watched call at the
   * next call of a tool (its effects end where the next tool's work may begin).
   */
  onRequest?: (method: string, params: unknown) => void;

  /** Sends one request; see {@link WireTransport.request}. Never rejects. */
  request(method: string, params: unknown, timeoutMs: number, opts?: RequestOptions): Promise<Exchange> {
    this.onRequest?.(method, params);
    return this.wire.request(method, params, timeoutMs, opts);
  }

  /** Sends a notification. Never rejects. */
  notify(method: string, params?: unknown): Promise<string> {
    this.onRequest?.(method, params);
    return this.wire.notify(method, params);
  }

  /**
   * `tools/list`, following `nextCursor` to the end (at most {@link MAX_PAGES} pages). Each page is
   * read permissively: a page without a `tools` array ends the listing with a `problem`.
   */
  async listTools(timeoutMs: number): Promise<ToolsListing> {
    const tools: unknown[] = [];
    const exchanges: Exchange[] = [];
    let cursor: string | undefined;
    const seen = new Set<string>();
    for (let page = 0; page < MAX_PAGES; page++) {
      const ex = await this.request('tools/list', cursor === undefined ? {} : { cursor }, timeoutMs);
      exchanges.push(ex);
      const r = ex.reply;
      if (r.kind !== 'response') return { tools, exchanges, problem: `tools/list: ${r.kind}` };
      if (r.error) return { tools, exchanges, problem: `tools/list answered with error ${String(r.error.code)}: ${String(r.error.message)}` };
      const result = r.result as { tools?: unknown; nextCursor?: unknown } | null;
      if (!result || !Array.isArray(result.tools)) return { tools, exchanges, problem: 'tools/list result has no tools array' };
      tools.push(...result.tools);
      if (typeof result.nextCursor !== 'string' || result.nextCursor === '') return { tools, exchanges };
      if (seen.has(result.nextCursor)) return { tools, exchanges, unending: `tools/list repeated the cursor ${JSON.stringify(result.nextCursor.slice(0, 80))}` };
      seen.add(result.nextCursor);
      cursor = result.nextCursor;
    }
    return { tools, exchanges, unending: `tools/list did not end after ${MAX_PAGES} pages` };
  }

  /**
   * Liveness: a `tools/list` (first page) answered with a result or an error within `timeoutMs`
   * (SPEC section 3, step 3). A server that was still at work on a request sealmark gave up on (a
   * 100,000-path read past the hang limit) answers what comes after it late without being gone: when
   * such a request is pending and the first `tools/list` is not answered, a second one is sent and
   * waited for as long, and the server is alive if it answers. The exchange returned is the last.
   */
  async alive(timeoutMs: number): Promise<{ alive: boolean; exchange: Exchange }> {
    const busy = this.wire.abandonedCount > 0;
    const answered = (e: Exchange) => e.reply.kind === 'response' || e.reply.kind === 'malformed';
    let ex = await this.request('tools/list', {}, timeoutMs);
    if (!answered(ex) && busy && ex.reply.kind === 'hang' && !this.exited) ex = await this.request('tools/list', {}, timeoutMs);
    return { alive: answered(ex), exchange: ex };
  }

  /** True for a server reached by URL: sealmark did not start it and cannot sandbox it. */
  get remote(): boolean {
    return 'url' in this.target;
  }

  /** True when the process has exited. */
  get exited(): boolean {
    return this.transport.exit !== null || this.wire.closed;
  }

  /** Ends the process tree and flushes the transcript (SPEC section 3, step 4). Never rejects. */
  async close(): Promise<void> {
    try {
      await this.client?.close();
    } catch {
      /* the transport close below is what matters */
    }
    await this.transport.close();
    this.transcript.close();
  }
}

/** A failed attempt, and whether another kind of attempt may succeed. */
type Attempted = OpenFailure & { retry?: 'legacy' | 'manual' | 'sse' };

/**
 * The reason, message, detail and retry for an HTTP failure during the handshake: 401 and 403 name
 * the header to set; 400, 404 and 405 on Streamable HTTP are retried as HTTP+SSE (MCP 2025-03-26
 * backwards compatibility).
 */
function httpFailure(f: HttpFailure, target: HttpTargetSpec, mode: string): [OpenFailure['reason'], string, string, Attempted['retry']?] {
  if (f.kind === 'tls') return ['tls-error', f.message, f.message];
  if (f.kind === 'connect') return ['connect-failed', f.message, f.message];
  if (f.kind === 'protocol') return ['http-error', `the handshake failed: ${f.message}`, f.message];
  if (f.status === 401 || f.status === 403) {
    const sent = Object.keys(target.headers).some((h) => h.toLowerCase() === 'authorization');
    const hint = sent
      ? 'the Authorization header was sent and refused: check the token'
      : "set the Authorization header: --bearer-token-env VAR (the token read from $VAR) or --header 'Authorization: Bearer …'";
    const challenge = f.wwwAuthenticate ? ` (WWW-Authenticate: ${f.wwwAuthenticate.slice(0, 200)})` : '';
    const message = `the server answered ${f.status}${challenge}: ${hint}`;
    return ['unauthorized', message, message];
  }
  const retry = mode !== 'sse' && (f.status === 400 || f.status === 404 || f.status === 405) ? 'sse' : undefined;
  return ['http-error', `the handshake failed: ${f.message}`, f.message, retry];
}

function isObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * sealmark's own initialize handshake (2025-11-25 offered), for a server whose initialize result
 * the official client refuses. Resolves to the raw reply; rejects when it is not a result object.
 */
async function manualHandshake(wire: WireTransport, timeoutMs: number): Promise<unknown> {
  await wire.start();
  const ex = await wire.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'sealmark', version: VERSION } }, timeoutMs);
  const r = ex.reply;
  if (r.kind === 'hang') throw new Error('timed out');
  if (r.kind === 'exited') throw new Error('the server exited');
  if (r.kind !== 'response' || r.error || !isObject(r.result)) throw new Error('the initialize reply is not a result object');
  await wire.notify('notifications/initialized');
  return r.raw;
}
