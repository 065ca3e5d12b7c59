/**
 * Transport to a server reached by URL (SPEC section 2 `--url`; MCP 2025-03-26 … 2026-07-28
 * Streamable HTTP, and the 2024-11-05 HTTP+SSE transport as the fallback).
 *
 * sealmark writes its own requests (raw text included: `NaN`, a duplicate member), so this is its
 * own client of the transport, built on Node's fetch and `eventsource-parser`:
 *
 * - `streamable`: every message is a POST to the URL with `Accept: application/json,
 *   text/event-stream`. The reply is the response body, plain JSON or an SSE stream. The
 *   `Mcp-Session-Id` a server returns is kept and sent back; the negotiated version goes out as
 *   `MCP-Protocol-Version`; the 2026-07-28 headers `Mcp-Method` and `Mcp-Name` are set from the
 *   message. A body whose message has id null (a parse error) answers the request of that POST.
 * - `sse` (legacy): a GET opens an event stream whose first `endpoint` event names the URL to
 *   POST to; replies come back as `message` events on the stream.
 *
 * Event streams are read as real servers write them (MCP 2025-11-25 § Sending Messages to the
 * Server, § Resumability and Redelivery; the official SDK's client does the same):
 *
 * - An event with empty data is no message: the priming event a server SHOULD send first (an event
 *   id and empty data, so that the client can resume), or an empty keep-alive. Comments
 *   (`: keepalive`) never reach here (the parser drops them), nor do `ping`/`keepalive`/`heartbeat`
 *   events. None of these is noise. Every other event is delivered in order (notifications, server
 *   requests and progress may come before the reply).
 * - Each stream's last event id and `retry:` value are kept. When a POST's stream ends or breaks
 *   before any reply came on it, and it carried an event id, it is resumed: after the `retry` delay
 *   (capped at {@link MAX_RESUME_DELAY_MS}), a GET to the endpoint with `Accept: text/event-stream`,
 *   `Last-Event-ID`, the session id and the version header; the events of that stream are the
 *   rest of the POST's stream. At most {@link MAX_IDLE_RESUMES} resumes in a row may bring no new
 *   event, {@link MAX_RESUMES} in all. A GET refused (405, 404, 400 …) or a stream with no event id
 *   leaves the request without a reply: a broken reply naming the ended stream, as without resuming.
 * - An event whose id and data were delivered already (a replay on a resumed stream) is not
 *   delivered again: MCP event ids are unique across the streams of a session.
 *
 * An HTTP failure is evidence, not an exception, once the handshake is done: the request it
 * answered gets a `malformed` reply naming the status. During the handshake it rejects `send`
 * with {@link HttpFailure}, which the session turns into a clear reason (401/403 name the header
 * to set; TLS errors are named as such).
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createParser } from 'eventsource-parser';
import { MAX_LINE_BYTES, type ExitInfo, type NoiseLine, type WireTap } from './stdio-transport.js';
import type { AuditTransport } from './transport.js';

/** Options of {@link AuditHttpTransport}. */
export interface HttpTargetSpec {
  url: string;
  /** Headers sent with every request (`--header`, the bearer token). Values are secrets to the report. */
  headers: Record<string, string>;
}

/** Why a request could not be made or was refused at the HTTP level. */
export class HttpFailure extends Error {
  override name = 'HttpFailure';
  constructor(
    message: string,
    /** The HTTP status, when there was a response. */
    readonly status?: number,
    /** `connect` (no connection), `tls` (certificate or handshake), `http` (a status), `protocol` (an unusable answer). */
    readonly kind: 'connect' | 'tls' | 'http' | 'protocol' = 'http',
    readonly wwwAuthenticate?: string,
  ) {
    super(message);
  }
}

const MAX_NOISE_KEPT = 20;
const NOISE_EXCERPT_CHARS = 200;
/** How long a legacy server has to send its `endpoint` event (ms). */
const ENDPOINT_TIMEOUT_MS = 10_000;
/** The wait before resuming a stream when the server gave no `retry:` (ms). */
const DEFAULT_RESUME_DELAY_MS = 100;
/** The longest wait before resuming a stream, whatever `retry:` says (ms): a probe has seconds, not minutes. */
const MAX_RESUME_DELAY_MS = 5_000;
/** Resumes in a row that may bring no new event before the request is given up as broken. */
const MAX_IDLE_RESUMES = 2;
/** Resumes of one request's stream in all (a server that closes every stream at once, polling). */
const MAX_RESUMES = 20;
/** Event ids remembered for spotting a redelivered event. */
const MAX_EVENT_IDS_KEPT = 50_000;
/** SSE event types that are keep-alives, not messages. */
const KEEP_ALIVE_EVENTS = new Set(['ping', 'keepalive', 'keep-alive', 'heartbeat']);

/** What one request's event stream carried so far: its POST response, then the GETs that resumed it. */
interface StreamState {
  /** The id of the last event (`Last-Event-ID` when resuming); an empty `id:` resets it. */
  lastEventId?: string;
  /** The stream's last `retry:` value (ms). */
  retryMs?: number;
  /** A reply came (no resume needed): on the POST's own stream any response, on a resumed stream the request's own. */
  replied: boolean;
}

/** What {@link AuditHttpTransport.deliverText} found in one body or event. */
interface Delivered {
  /** It held a response (any id). */
  response: boolean;
  /** It answered request `id` (a response with that id, or id null), or the wire settled `id` by it. */
  own: boolean;
}

export class AuditHttpTransport implements AuditTransport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  onOversized?: (id: number, bytes: number) => boolean;
  onUnparsed?: (text: string) => void;
  onAnswer?: (id: number, message: Record<string, unknown>) => boolean;
  onBroken?: (id: number, problem: string) => boolean;
  onRejected?: (id: number, status: number, body: string) => boolean;

  readonly noise: NoiseLine[] = [];
  noiseCount = 0;
  noiseBytes = 0;
  exit: ExitInfo | null = null;
  readonly taps: WireTap[] = [];
  readonly stderrText = '';
  /** The session id the server gave (2025-03-26 … 2025-11-25), sent back on every request. */
  sessionId: string | undefined;
  /** The negotiated protocol version, sent as `MCP-Protocol-Version` once known. */
  protocolVersion: string | undefined;
  /** Set by the session once the SDK client is done: from then on HTTP failures are evidence. */
  handshakeDone = false;
  /** The status of the last HTTP failure during the handshake (the session decides on a fallback by it). */
  lastFailure: HttpFailure | undefined;

  private readonly startedAt = Date.now();
  private readonly abort = new AbortController();
  private closed = false;
  /** Legacy mode: the URL the `endpoint` event named. */
  private postUrl: string | undefined;
  /** The server's last `retry:` on any stream (ms): the resume delay of a stream that gave none. */
  private retryMs: number | undefined;
  /** Event id -> digest of its data, for every event delivered: a second delivery is a redelivery. */
  private readonly deliveredEvents = new Map<string, string>();

  constructor(
    readonly spec: HttpTargetSpec,
    readonly mode: 'streamable' | 'sse' = 'streamable',
  ) {}

  now(): number {
    return Date.now() - this.startedAt;
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  /** Streamable: nothing to open. Legacy: opens the event stream and waits for its `endpoint` event. */
  async start(): Promise<void> {
    if (this.mode === 'streamable' || this.postUrl) return;
    const res = await this.fetch(this.spec.url, { method: 'GET', headers: this.headersFor(undefined, 'text/event-stream') });
    if (!res.ok) throw await this.failureOf(res);
    if (!contentType(res).startsWith('text/event-stream')) {
      throw new HttpFailure(`GET ${this.spec.url} answered ${contentType(res) || 'no content type'}, not an event stream`, res.status, 'protocol');
    }
    let gotEndpoint: (url: string) => void = () => {};
    let badEndpoint: (data: string) => void = () => {};
    const endpoint = new Promise<string>((resolve, reject) => {
      gotEndpoint = resolve;
      badEndpoint = (data) => reject(new HttpFailure(`the endpoint event names ${JSON.stringify(clip(data, 200))}, not a URL on ${new URL(this.spec.url).origin}; sealmark does not send there`, undefined, 'protocol'));
    });
    void this.readEvents(res, undefined, (event, data, redelivered) => {
      if (redelivered) return;
      if (event === 'endpoint') {
        // The endpoint must be on the server's own origin: sealmark never sends elsewhere.
        let url: URL | undefined;
        try {
          url = new URL(data, this.spec.url);
        } catch {
          url = undefined;
        }
        if (url && url.origin === new URL(this.spec.url).origin) gotEndpoint(url.href);
        else badEndpoint(data);
      }
      else this.deliverText(data, undefined);
    }).then(() => this.lost('the event stream ended'));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new HttpFailure(`no endpoint event on ${this.spec.url} within ${ENDPOINT_TIMEOUT_MS / 1000} s`, undefined, 'protocol')), ENDPOINT_TIMEOUT_MS);
    });
    try {
      this.postUrl = await Promise.race([endpoint, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const at = this.now();
    for (const tap of this.taps) tap('send', message, at);
    await this.post(JSON.stringify(message), message as Record<string, unknown>);
  }

  writeLine(line: string): Promise<void> {
    return this.post(line, undefined).catch(() => {});
  }

  /**
   * POSTs one message. `message` is the parsed form when there is one; raw lines are read for
   * their id, method and tool name with patterns. Rejects with {@link HttpFailure} during the
   * handshake; afterwards failures settle the request they belong to.
   */
  private async post(body: string, message: Record<string, unknown> | undefined): Promise<void> {
    if (this.closed) return;
    const id = message ? (typeof message.id === 'number' ? message.id : undefined) : numberId(body);
    const isRequest = message ? 'method' in message && 'id' in message : /"method"\s*:/.test(body) && id !== undefined;
    let res: Response;
    try {
      res = await this.fetch(this.postUrl ?? this.spec.url, { method: 'POST', headers: this.headersFor(message ?? body, 'application/json, text/event-stream', true), body });
    } catch (err) {
      // Aborted by our own close (the SDK gave up on its probe): not the server's failure.
      if (this.closed) return;
      const failure = err instanceof HttpFailure ? err : new HttpFailure(String(err), undefined, 'connect');
      if (!this.handshakeDone) {
        this.lastFailure = failure;
        throw failure;
      }
      // The server cannot be reached any more: from the wire's side, it is gone.
      if (failure.kind === 'connect') this.lost(failure.message);
      else if (id !== undefined) this.onBroken?.(id, failure.message);
      return;
    }
    const sid = res.headers.get('mcp-session-id');
    if (sid) this.sessionId = sid;
    if (this.mode === 'sse') {
      // Legacy: the POST is only accepted here; the reply comes on the event stream.
      if (!res.ok) await this.httpError(res, id, message);
      else await res.body?.cancel().catch(() => {});
      return;
    }
    if (res.status === 202 || res.status === 204) {
      await res.body?.cancel().catch(() => {});
      if (isRequest && id !== undefined && this.handshakeDone) this.onBroken?.(id, `HTTP ${res.status} with no body: the request got no reply`);
      return;
    }
    const type = contentType(res);
    if (type.startsWith('text/event-stream')) {
      // The reply comes as events, read in the background: a stream may stay open after it.
      void this.followStream(res, id, isRequest ? (message ? message.id : id) : undefined);
      return;
    }
    if (!res.ok) return this.httpError(res, id, message);
    const text = await this.readBody(res, id);
    if (text === undefined) return;
    if (text.trim() === '') {
      if (isRequest && id !== undefined && this.handshakeDone) this.onBroken?.(id, `HTTP ${res.status} with an empty body`);
      return;
    }
    this.deliverText(text, id);
    // A body that held no reply to this request (an empty batch, another id) is its reply, missing.
    if (isRequest && id !== undefined && this.handshakeDone) this.onBroken?.(id, `HTTP ${res.status}: the body held no reply to this request`);
  }

  /** An HTTP error status: a JSON-RPC reply in its body is still the reply; otherwise a failure. */
  private async httpError(res: Response, id: number | undefined, message: Record<string, unknown> | undefined): Promise<void> {
    const text = (await this.readBody(res, undefined)) ?? '';
    const parsed = safeJson(text);
    const rpc = parsed !== undefined && typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && (parsed as Record<string, unknown>).jsonrpc === '2.0' ? (parsed as Record<string, unknown>) : undefined;
    // Refused in the middle of the audit (the token expired, the session ended; MCP 2025-03-26: an
    // ended session is answered 404, whatever the body says): the server can no longer be audited.
    const sessionGone = res.status === 404 && this.sessionId !== undefined && this.mode === 'streamable';
    if (this.handshakeDone && (res.status === 401 || res.status === 403 || sessionGone)) {
      const what = sessionGone ? 'the server ended the session (HTTP 404)' : `the server refused sealmark in the middle of the audit (HTTP ${res.status})`;
      this.lost(what, sessionGone ? 'session-lost' : 'unauthorized');
      return;
    }
    if (rpc && ('result' in rpc || 'error' in rpc)) {
      const at = this.now();
      for (const tap of this.taps) tap('recv', rpc, at);
      if (this.handshakeDone) {
        if (id !== undefined && (rpc.id === id || rpc.id === null || rpc.id === undefined) && this.onAnswer?.(id, rpc)) return;
        this.onmessage?.(rpc as JSONRPCMessage);
        return;
      }
      // During the handshake the SDK gets the JSON-RPC error under its own id (a modern server's
      // 400 with id null must read as a refusal, so that the client falls back).
      const failure = new HttpFailure(`HTTP ${res.status}: ${errorText(rpc)}`, res.status, 'http', res.headers.get('www-authenticate') ?? undefined);
      this.lastFailure = failure;
      const sdkId = message?.id;
      if ((typeof sdkId === 'number' || typeof sdkId === 'string') && 'method' in message! && (res.status === 400 || res.status === 404)) {
        this.onmessage?.({ ...rpc, id: sdkId } as JSONRPCMessage);
        return;
      }
      throw failure;
    }
    const where = res.status >= 300 && res.status < 400 ? ` (to ${clip(res.headers.get('location') ?? 'nowhere', 200)}; sealmark does not follow redirects)` : '';
    const failure = new HttpFailure(`HTTP ${res.status}${where}${text.trim() ? `: ${clip(text.trim(), 200)}` : ''}`, res.status, 'http', res.headers.get('www-authenticate') ?? undefined);
    if (!this.handshakeDone) {
      this.lastFailure = failure;
      throw failure;
    }
    if (id === undefined) return;
    // A status that says the request itself is invalid is a refusal of it (an error reply with the
    // status as its code); a 5xx is the server failing. Any other status (a redirect, 410, 429 …)
    // is no reply to the request at all.
    if (REFUSING.has(res.status) || res.status >= 500) this.onRejected?.(id, res.status, text);
    else this.onBroken?.(id, failure.message);
  }

  /**
   * Reads the event stream of the POST of request `id`, delivering its events; when it ends before
   * a reply came and carried an event id, resumes it (MCP 2025-11-25 § Resumability and
   * Redelivery: GET with `Last-Event-ID`) until the reply comes or the bounds are reached. A
   * request left without a reply is a broken reply, naming the ended stream and the resume tried.
   */
  private async followStream(res: Response, id: number | undefined, requestId: unknown): Promise<void> {
    const isRequest = requestId !== undefined;
    const stream: StreamState = { replied: false };
    let resumed = false;
    const onEvent = (_event: string, data: string, redelivered: boolean): void => {
      const got = this.deliverText(data, id, redelivered, requestId);
      // On the POST's own stream any response is its reply (as the SDK's client reads it: a reply
      // under a wrong id is the wire's to judge). A resumed stream may replay others' replies.
      if (resumed ? got.own : got.response || got.own) stream.replied = true;
    };
    await this.readEvents(res, id, onEvent, { stream });
    const ended = `HTTP ${res.status}: the event stream ended without a reply to this request`;
    let problem = ended;
    let idle = 0;
    let resumes = 0;
    // The SDK's own requests (string ids, as its discovery probe's) are resumed too. 2026-07-28
    // has no resumption (no GET, and a closed stream is the cancellation).
    const resumable = isRequest && !(this.protocolVersion !== undefined && this.protocolVersion >= '2026-07-28');
    while (resumable && !stream.replied && stream.lastEventId !== undefined && idle < MAX_IDLE_RESUMES && resumes < MAX_RESUMES) {
      const from = stream.lastEventId;
      // Aborted by close(): the wait never holds the process up.
      await sleep(Math.min(stream.retryMs ?? this.retryMs ?? DEFAULT_RESUME_DELAY_MS, MAX_RESUME_DELAY_MS), undefined, { signal: this.abort.signal }).catch(() => {});
      if (this.closed || this.exit) return;
      resumes += 1;
      const tried = `resuming it (GET with Last-Event-ID ${clip(from, 80)})`;
      let got: Response;
      try {
        got = await this.fetch(this.spec.url, { method: 'GET', headers: { ...this.headersFor(undefined, 'text/event-stream'), 'last-event-id': from } });
      } catch (err) {
        if (this.closed) return;
        problem = `${ended}; ${tried} failed: ${err instanceof Error ? err.message : String(err)}`;
        idle += 1;
        continue;
      }
      if (!got.ok || !contentType(got).startsWith('text/event-stream')) {
        await got.body?.cancel().catch(() => {});
        problem = `${ended}; ${tried} was answered ${got.ok ? `${contentType(got) || 'no content type'}, not an event stream` : `HTTP ${got.status}`}`;
        // A server busy or failing for now may do better on the next try; any other answer says
        // it does not resume streams (405: no GET stream at all).
        if (got.status >= 500 || got.status === 429) {
          idle += 1;
          continue;
        }
        break;
      }
      const sid = got.headers.get('mcp-session-id');
      if (sid) this.sessionId = sid;
      resumed = true;
      await this.readEvents(got, id, onEvent, { stream, stop: () => stream.replied });
      if (stream.lastEventId === from) idle += 1;
      else idle = 0;
      problem = `${ended}; resumed ${resumes === 1 ? 'once' : `${resumes} times`} (GET with Last-Event-ID), and no reply came on the resumed stream either`;
    }
    // The wire ignores this when the request was answered (its reply came, or a wrong-id reply
    // settled it); a request still waiting (the only reply had another id) gets it at once.
    if (isRequest && id !== undefined && this.handshakeDone && !this.closed) this.onBroken?.(id, problem);
  }

  /**
   * Parses text that should be one JSON-RPC message or an array of them, and hands each on (with
   * `dryRun`, a redelivered event: only what it holds is told, nothing is delivered again).
   */
  private deliverText(text: string, id: number | undefined, dryRun = false, requestId: unknown = id): Delivered {
    const found: Delivered = { response: false, own: false };
    const parsed = safeJson(text);
    if (parsed === undefined) {
      if (dryRun) return found;
      this.addNoise('not-json', text);
      if (id !== undefined && this.onBroken?.(id, `the reply is not valid JSON: ${JSON.stringify(text.slice(0, 80))}`)) return { response: false, own: true };
      this.onUnparsed?.(text);
      return found;
    }
    for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
      if (typeof m !== 'object' || m === null || (m as Record<string, unknown>).jsonrpc !== '2.0') {
        if (!dryRun) this.addNoise('not-jsonrpc', JSON.stringify(m) ?? String(m));
        continue;
      }
      const msg = m as Record<string, unknown>;
      if (!('method' in msg)) {
        found.response = true;
        if (requestId !== undefined && (msg.id === requestId || msg.id === null)) found.own = true;
      }
      if (dryRun) continue;
      const at = this.now();
      for (const tap of this.taps) tap('recv', msg, at);
      // A reply whose id cannot be read (null) answers the request of this very POST.
      if (id !== undefined && !('method' in msg) && msg.id === null && this.handshakeDone && this.onAnswer?.(id, msg)) continue;
      this.onmessage?.(msg as JSONRPCMessage);
    }
    return found;
  }

  /** Reads a whole body, at most {@link MAX_LINE_BYTES}; a longer one is dropped and reported for `id`. */
  private async readBody(res: Response, id: number | undefined): Promise<string | undefined> {
    const chunks: Uint8Array[] = [];
    const complete = await this.readLimited(res, id, (chunk) => void chunks.push(chunk), { bounded: true, brokenIsReply: true });
    return complete ? Buffer.concat(chunks).toString('utf8') : undefined;
  }

  /**
   * Reads an event stream to its end (or until `opts.stop()` says so), calling `onEvent(event,
   * data, redelivered)` for each event that is a message: events with empty data (priming events,
   * keep-alives) and keep-alive event types are skipped; comments never reach here. The stream's
   * last event id and `retry:` go to `opts.stream`. `redelivered` is set for an event whose id and
   * data were delivered already on some stream of this session. Resolves to true when the stream
   * was read to its end.
   */
  private async readEvents(
    res: Response,
    id: number | undefined,
    onEvent: (event: string, data: string, redelivered: boolean) => void,
    opts: { stream?: StreamState; stop?: () => boolean } = {},
  ): Promise<boolean> {
    // Bytes since the last whole event: the legacy stream (no request of its own) carries the whole
    // session and has no limit in all, but no one event may pass MAX_LINE_BYTES.
    let sinceEvent = 0;
    const parser = createParser({
      onRetry: (ms) => {
        if (opts.stream) opts.stream.retryMs = ms;
        this.retryMs = ms;
      },
      onEvent: (e) => {
        sinceEvent = 0;
        // As the SSE standard's last event ID: an `id:` sets it, an empty one clears it.
        if (e.id !== undefined && opts.stream) opts.stream.lastEventId = e.id === '' ? undefined : e.id;
        // (A legacy `endpoint` event with empty data still names a URL: the stream's own.)
        const empty = e.data.trim() === '' && !(this.mode === 'sse' && e.event === 'endpoint');
        if (empty || (e.event !== undefined && KEEP_ALIVE_EVENTS.has(e.event.toLowerCase()))) return;
        onEvent(e.event ?? 'message', e.data, e.id ? this.redelivered(e.id, e.data) : false);
      },
    });
    const decoder = new TextDecoder();
    return this.readLimited(
      res,
      id,
      (chunk) => {
        sinceEvent += chunk.byteLength;
        if (id === undefined && sinceEvent > MAX_LINE_BYTES) {
          this.addNoise('oversized', '', sinceEvent);
          this.lost(`an event on the stream passed ${MAX_LINE_BYTES} bytes`);
          return false;
        }
        parser.feed(decoder.decode(chunk, { stream: true }));
        return !opts.stop?.();
      },
      { bounded: id !== undefined, brokenIsReply: false },
    );
  }

  /** True when an event with this id and data was delivered already; else remembers it. */
  private redelivered(eventId: string, data: string): boolean {
    const digest = createHash('sha256').update(data).digest('base64');
    if (this.deliveredEvents.get(eventId) === digest) return true;
    this.deliveredEvents.set(eventId, digest);
    if (this.deliveredEvents.size > MAX_EVENT_IDS_KEPT) this.deliveredEvents.delete(this.deliveredEvents.keys().next().value!);
    return false;
  }

  /**
   * Reads a response body chunk by chunk. When `bounded`, past {@link MAX_LINE_BYTES} the body is
   * cancelled, kept as oversized noise and reported for request `id` when there is one; `onChunk`
   * returning false cancels it too. A body that breaks off is reported for `id` when
   * `brokenIsReply`. Resolves to true when the body was read to its end.
   */
  private async readLimited(res: Response, id: number | undefined, onChunk: (chunk: Uint8Array) => boolean | void, opts: { bounded: boolean; brokenIsReply: boolean }): Promise<boolean> {
    const reader = res.body?.getReader();
    if (!reader) return true;
    let bytes = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return true;
        bytes += value.byteLength;
        if (opts.bounded && bytes > MAX_LINE_BYTES) {
          await reader.cancel().catch(() => {});
          this.addNoise('oversized', '', bytes);
          if (id !== undefined) this.onOversized?.(id, bytes);
          // During the handshake the SDK would wait out its timeout for a reply that was dropped.
          if (!this.handshakeDone && id !== undefined) {
            this.lastFailure = new HttpFailure(`a reply of more than ${MAX_LINE_BYTES} bytes (the limit) was dropped unread`, res.status, 'protocol');
            this.lost(this.lastFailure.message);
          }
          return false;
        }
        if (onChunk(value) === false) {
          await reader.cancel().catch(() => {});
          return false;
        }
      }
    } catch (err) {
      // An aborted or broken stream ends here; a request it left unanswered waits out its limit.
      if (opts.brokenIsReply && id !== undefined && this.handshakeDone) this.onBroken?.(id, `the reply body broke off: ${String(err)}`);
      return false;
    }
  }

  /** The headers of one request: the user's, the session, the protocol version, 2026-07-28's method headers. */
  private headersFor(message: Record<string, unknown> | string | undefined, accept: string, json = false): Record<string, string> {
    const h: Record<string, string> = { ...this.spec.headers, accept };
    if (json) h['content-type'] = 'application/json';
    if (this.sessionId) h['mcp-session-id'] = this.sessionId;
    const meta = typeof message === 'object' ? ((message.params as { _meta?: Record<string, unknown> } | undefined)?._meta ?? undefined) : undefined;
    const fromMeta = meta?.['io.modelcontextprotocol/protocolVersion'];
    const version = typeof fromMeta === 'string' ? fromMeta : typeof message === 'string' ? /"io\.modelcontextprotocol\/protocolVersion"\s*:\s*"([^"]+)"/.exec(message)?.[1] ?? this.protocolVersion : this.protocolVersion;
    if (version) h['mcp-protocol-version'] = version;
    if (version && version >= '2026-07-28') {
      const method = typeof message === 'object' ? message.method : typeof message === 'string' ? /"method"\s*:\s*"([^"]+)"/.exec(message)?.[1] : undefined;
      if (typeof method === 'string') h['mcp-method'] = method;
      const name = typeof message === 'object' ? (message.params as { name?: unknown } | undefined)?.name : typeof message === 'string' ? /"params"\s*:\s*\{[^]*?"name"\s*:\s*"([^"]+)"/.exec(message)?.[1] : undefined;
      if (typeof name === 'string' && (method === 'tools/call' || method === 'prompts/get')) h['mcp-name'] = name;
    }
    return h;
  }

  private async fetch(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, { ...init, signal: this.abort.signal, redirect: 'manual' });
    } catch (err) {
      throw connectFailure(url, err);
    }
  }

  private async failureOf(res: Response): Promise<HttpFailure> {
    const text = ((await this.readBody(res, undefined)) ?? '').trim();
    return new HttpFailure(`HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`, res.status, 'http', res.headers.get('www-authenticate') ?? undefined);
  }

  private addNoise(kind: NoiseLine['kind'], text: string, bytes = Buffer.byteLength(text)): void {
    this.noiseCount += 1;
    this.noiseBytes += bytes;
    if (this.noise.length < MAX_NOISE_KEPT) this.noise.push({ kind, excerpt: text.slice(0, NOISE_EXCERPT_CHARS), bytes, atMs: this.now() });
  }

  /**
   * The server is gone (connection refused, the legacy stream ended, sealmark refused or its session
   * ended): every waiting request ends. `why` is kept with the exit for the report.
   */
  private lost(why: string, cutOff?: ExitInfo['cutOff']): void {
    if (this.closed || this.exit) return;
    this.exit = { code: null, signal: null, atMs: this.now(), lost: why, ...(cutOff ? { cutOff } : {}) };
    this.onerror?.(new Error(why));
    this.onclose?.();
  }

  /** Ends the session: a DELETE when the server gave a session id (2025 Streamable HTTP), then every open stream. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.sessionId && this.mode === 'streamable' && !this.exit) {
      // Never redirected: nothing goes to a URL sealmark was not given.
      await fetch(this.spec.url, { method: 'DELETE', headers: this.headersFor(undefined, 'application/json, text/event-stream'), signal: AbortSignal.timeout(2000), redirect: 'manual' })
        .then((r) => r.body?.cancel())
        .catch(() => {});
    }
    this.closed = true;
    this.abort.abort();
    this.onclose?.();
  }
}

/** Statuses that refuse the request itself as invalid (MCP Streamable HTTP answers an invalid message 400). */
const REFUSING = new Set([400, 404, 405, 406, 409, 413, 415, 422]);

/** `s` cut to `n` characters, marked when cut (URLs and bodies in messages). */
function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

function contentType(res: Response): string {
  return (res.headers.get('content-type') ?? '').toLowerCase();
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function numberId(line: string): number | undefined {
  const m = /"id"\s*:\s*(\d+)/.exec(line);
  return m ? Number(m[1]) : undefined;
}

function errorText(rpc: Record<string, unknown>): string {
  const e = rpc.error as { code?: unknown; message?: unknown } | undefined;
  return e ? `JSON-RPC error ${String(e.code)}: ${String(e.message).slice(0, 200)}` : 'a JSON-RPC result';
}

/** Names a failed fetch: a TLS problem (by its OpenSSL code), else a connection failure. */
function connectFailure(url: string, err: unknown): HttpFailure {
  if (err instanceof HttpFailure) return err;
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? (err as NodeJS.ErrnoException).code;
  const detail = (cause?.message ?? (err instanceof Error ? err.message : String(err))).trim();
  if (code && /CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME|HOSTNAME/i.test(code)) {
    return new HttpFailure(`TLS error reaching ${clip(url, 200)}: ${code} (${clip(detail, 300)})`, undefined, 'tls');
  }
  if ((err as Error).name === 'AbortError') return new HttpFailure(`request to ${clip(url, 200)} aborted`, undefined, 'connect');
  return new HttpFailure(`cannot connect to ${clip(url, 200)}: ${clip(code ?? detail, 300)}`, undefined, 'connect');
}
