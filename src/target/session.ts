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
import { WireTransport, type Exchange } from './wire.js';
import { Transcript } from './transcript.js';
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
}

/** Why a target could not be audited (exit code 3, SPEC section 2). */
export interface OpenFailure {
  reason: 'spawn-failed' | 'exited-during-init' | 'init-timeout' | 'init-rejected';
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
}

/** One tools/list page request and its exchange. */
export interface ToolsListing {
  /** Tools from all pages, as received (not validated). */
  tools: unknown[];
  exchanges: Exchange[];
  /** Set when a page failed: the reason in words. */
  problem?: string;
}

/** Most pages of tools/list followed before giving up on a server that never ends its cursor chain. */
const MAX_PAGES = 100;

export class Session {
  private constructor(
    readonly target: StdioTargetSpec,
    readonly transport: AuditStdioTransport,
    readonly wire: WireTransport,
    private readonly client: Client,
    readonly handshake: HandshakeInfo,
    readonly transcript: Transcript,
  ) {}

  /**
   * Starts the server and negotiates. Returns the session, or an {@link OpenFailure} saying why
   * the server could not be audited. Never rejects; the process is ended on failure.
   */
  static async open(target: StdioTargetSpec, options: OpenOptions): Promise<Session | OpenFailure> {
    const first = await Session.attempt(target, options, 'auto');
    if (!(first instanceof Session) && first.reason === 'exited-during-init' && first.discoverOnly) {
      // Some legacy servers exit on any request before initialize; the probe cost them their life.
      // Start a fresh process and speak the initialize handshake only.
      return stripFlag(await Session.attempt(target, options, 'legacy'));
    }
    return stripFlag(first);
  }

  private static async attempt(
    target: StdioTargetSpec,
    options: OpenOptions,
    mode: 'auto' | 'legacy',
  ): Promise<Session | (OpenFailure & { discoverOnly?: boolean })> {
    const transport = new AuditStdioTransport(target);
    const transcript = new Transcript(options.transcriptPath);
    transport.taps.push((dir, msg, at) => transcript.write(dir, msg, at));
    const wire = new WireTransport(transport);
    const sentMethods: string[] = [];
    let rawReply: unknown;
    transport.taps.push((dir, msg) => {
      const m = msg as Record<string, unknown>;
      if (dir === 'send' && typeof m.method === 'string') sentMethods.push(m.method);
      if (dir === 'recv' && !('method' in m) && rawReply === undefined) rawReply = m;
    });
    const client = new Client(
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
    const failWith = async (reason: OpenFailure['reason'], message: string, detail: string) => {
      await transport.close(500);
      transcript.close();
      return {
        reason,
        message,
        detail,
        exit: transport.exit,
        stderrTail: transport.stderrText,
        noise: transport.noise,
        discoverOnly: sentMethods.every((m) => m === 'server/discover'),
      };
    };
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((r) => {
      timer = setTimeout(() => r('timeout'), options.initTimeoutMs);
    });
    let outcome: 'ok' | 'timeout' | Error;
    try {
      outcome = await Promise.race([
        client.connect(wire, { timeout: options.initTimeoutMs }).then(() => 'ok' as const),
        deadline,
      ]);
    } catch (err) {
      outcome = err instanceof Error ? err : new Error(String(err));
    } finally {
      clearTimeout(timer);
    }
    if (outcome === 'timeout') {
      return failWith('init-timeout', `no reply to the handshake within ${options.initTimeoutMs / 1000} s`, `${options.initTimeoutMs / 1000} s`);
    }
    if (outcome instanceof Error) {
      const code = (outcome as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EACCES') {
        const why = `${JSON.stringify(target.command)}: ${code === 'ENOENT' ? 'command not found' : 'permission denied'}`;
        return failWith('spawn-failed', `cannot start ${why}`, why);
      }
      // Give a dying process a moment so its exit status is known.
      await new Promise((r) => setTimeout(r, 100));
      if (transport.exit || wire.closed) {
        const e = transport.exit;
        const how = e ? (e.signal ? `signal ${e.signal}` : `code ${e.code}`) : 'closed';
        return failWith('exited-during-init', `the server exited during the handshake (${how})`, how);
      }
      if (/timed? ?out/i.test(outcome.message)) {
        return failWith('init-timeout', `no reply to the handshake within ${options.initTimeoutMs / 1000} s`, `${options.initTimeoutMs / 1000} s`);
      }
      const detail = outcome.message.slice(0, 300);
      return failWith('init-rejected', `the handshake failed: ${detail}`, detail);
    }
    const handshake: HandshakeInfo = {
      protocolVersion: client.getNegotiatedProtocolVersion(),
      era: client.getProtocolEra(),
      serverInfo: client.getServerVersion() as HandshakeInfo['serverInfo'],
      capabilities: client.getServerCapabilities() as Record<string, unknown> | undefined,
      initMs: transport.now(),
      rawReply,
    };
    // The 2026-07-28 envelope rides on every request only when that era was negotiated.
    if (handshake.era !== 'modern') wire.envelope = undefined;
    wire.handshakeDone = true;
    return new Session(target, transport, wire, client, handshake, transcript);
  }

  /** Sends one request; see {@link WireTransport.request}. Never rejects. */
  request(method: string, params: unknown, timeoutMs: number, rawParams?: string): Promise<Exchange> {
    return this.wire.request(method, params, timeoutMs, rawParams);
  }

  /** Sends a notification. Never rejects. */
  notify(method: string, params?: unknown): Promise<string> {
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
      if (seen.has(result.nextCursor)) return { tools, exchanges, problem: `tools/list repeated cursor ${JSON.stringify(result.nextCursor)}` };
      seen.add(result.nextCursor);
      cursor = result.nextCursor;
    }
    return { tools, exchanges, problem: `tools/list did not end after ${MAX_PAGES} pages` };
  }

  /**
   * Liveness: a `tools/list` (first page) answered with a result or an error within `timeoutMs`
   * (SPEC section 3, step 3).
   */
  async alive(timeoutMs: number): Promise<{ alive: boolean; exchange: Exchange }> {
    const ex = await this.request('tools/list', {}, timeoutMs);
    return { alive: ex.reply.kind === 'response' || ex.reply.kind === 'malformed', exchange: ex };
  }

  /** True when the process has exited. */
  get exited(): boolean {
    return this.transport.exit !== null || this.wire.closed;
  }

  /** Ends the process tree and flushes the transcript (SPEC section 3, step 4). Never rejects. */
  async close(): Promise<void> {
    try {
      await this.client.close();
    } catch {
      /* the transport close below is what matters */
    }
    await this.transport.close();
    this.transcript.close();
  }
}

function stripFlag<T>(x: T & { discoverOnly?: boolean }): T {
  if (x && typeof x === 'object' && 'discoverOnly' in x) {
    const { discoverOnly: _ignored, ...rest } = x as Record<string, unknown>;
    return rest as T;
  }
  return x;
}
