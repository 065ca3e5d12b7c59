/**
 * Protocol versions sealmark knows (SPEC section 3, step 2). Kept apart from the session so that
 * reading it (handshake's judge, explain) does not load the MCP client.
 */

/** Every published MCP version: the initialize handshake ones, then 2026-07-28 (stateless). */
export const KNOWN_PROTOCOL_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'] as const;

/** True when `v` is a protocol version sealmark knows. */
export function isKnownProtocolVersion(v: unknown): boolean {
  return typeof v === 'string' && (KNOWN_PROTOCOL_VERSIONS as readonly string[]).includes(v);
}
