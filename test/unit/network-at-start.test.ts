/**
 * Reading a start that failed for want of the network (src/target/network-at-start.ts) from the
 * stderr real servers print, and from the sandbox's proxy listener.
 */
import { describe, expect, it } from 'vitest';
import { networkAtStart } from '../../src/target/network-at-start.js';
import type { Effect, Sandbox } from '../../src/target/sandbox.js';
import type { OpenFailure } from '../../src/target/session.js';

/** A sandbox with loopback only whose effect log holds `effects`. */
const sandbox = (effects: Effect[] = []) => ({ isolation: { kind: 'sandbox', network: 'namespace', root: '/x', notes: [] }, effectsSince: () => effects, startMark: () => ({ offset: 0, logMtimeMs: -1, files: new Map() }) }) as unknown as Sandbox;
const exited = (stderrTail: string): OpenFailure => ({ reason: 'exited-during-init', message: 'the server exited during the handshake (code 1)', detail: 'code 1', exit: null, stderrTail, noise: [] });

describe('networkAtStart', () => {
  it.each([
    ['Error: getaddrinfo ENOTFOUND api.example.com\n    at GetAddrInfoReqWrap.onlookup', 'api.example.com'],
    ['Error: connect ECONNREFUSED 127.0.0.1:5432', '127.0.0.1:5432'],
    ['net-at-start: cannot reach 203.0.113.1:443 (ENETUNREACH); this server needs the network at start', '203.0.113.1:443'],
    ["requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.example.com', port=443): Max retries exceeded", 'api.example.com:443'],
    // mcp-remote: the error on one line, the host in the dumped cause on another.
    ["[4] Connection error: TypeError: fetch failed\n  cause: Error: getaddrinfo EAI_AGAIN\n    hostname: 'mcp.example.com'", 'mcp.example.com'],
  ])('%j → it tried %s', (stderr, host) => {
    const f = networkAtStart(exited(stderr), sandbox());
    expect(f?.reason).toBe('needs-network');
    expect(f?.message).toBe(`the server needs the network at start-up: it tried ${host}`);
  });

  it('a connection the proxy listener saw names its host', () => {
    const f = networkAtStart(exited(''), sandbox([{ kind: 'network', detail: 'proxy: CONNECT registry.npmjs.org:443 HTTP/1.1' }]), 'npx');
    expect(f?.message).toMatch(/^npx \(a launcher line sealmark could not read as a package launch, so it ran as given and fetched at start\) needs the network at start-up: it tried registry\.npmjs\.org:443$/);
  });

  it('nothing about the network: not this reason; nor with the host network', () => {
    expect(networkAtStart(exited('TypeError: x is not a function'), sandbox())).toBeUndefined();
    const host = { ...sandbox(), isolation: { kind: 'sandbox', network: 'host', root: '/x', notes: [] } } as unknown as Sandbox;
    expect(networkAtStart(exited('Error: getaddrinfo ENOTFOUND api.example.com'), host)).toBeUndefined();
    expect(networkAtStart(exited('Error: getaddrinfo ENOTFOUND api.example.com'), undefined)).toBeUndefined();
  });
});
