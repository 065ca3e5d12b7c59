/**
 * What the wire needs of a transport beyond the SDK's `Transport`: taps on every message, raw
 * writes, a clock, and the hooks by which a transport reports a reply it could not deliver as a
 * message. Implemented by the stdio transport (a process) and the HTTP transport (a URL).
 */
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import type { ExitInfo, NoiseLine, WireTap } from './stdio-transport.js';

export interface AuditTransport extends Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  /** Every tap is called for each message both ways (`raw` text for lines that are not JSON). */
  readonly taps: WireTap[];
  /** Set once the process has ended or the server can no longer be reached. */
  exit: ExitInfo | null;
  /** What the server sent that was not JSON-RPC: stdout lines, or SSE events and bodies. */
  readonly noise: NoiseLine[];
  noiseCount: number;
  noiseBytes: number;
  /** The end of the server's stderr (empty for a server reached by URL). */
  readonly stderrText: string;
  /** The server's process id, for a server sealmark started (absent or null for one reached by URL). */
  readonly pid?: number | null;
  /** ms since the transport was made. */
  now(): number;
  /** Writes one message as raw text (already tapped by the caller). Never rejects. */
  writeLine(line: string): Promise<void>;
  /** Ends the connection (and the process); resolves when it has. Never rejects. */
  close(graceMs?: number): Promise<void>;
  /** A reply to request `id` too large to read (`bytes` long); true when the wire settled it. */
  onOversized?: (id: number, bytes: number) => boolean;
  /** A line or body that is not JSON. */
  onUnparsed?: (text: string) => void;
  /**
   * A reply the transport tied to request `id` by how it came (the body of that request's own HTTP
   * response), whatever its JSON-RPC id says (null for a parse error); true when the wire settled it.
   */
  onAnswer?: (id: number, message: Record<string, unknown>) => boolean;
  /** Request `id` got an answer that is no reply at all (an empty 200, a 202 to a request); true when settled. */
  onBroken?: (id: number, problem: string) => boolean;
  /**
   * Request `id` was refused at the HTTP level with `status` and a body that is no JSON-RPC reply.
   * Streamable HTTP allows it (MCP 2025-03-26: an invalid message gets 400, whose body MAY be a
   * JSON-RPC error); the wire records it as an error reply with the status as its code.
   */
  onRejected?: (id: number, status: number, body: string) => boolean;
}
