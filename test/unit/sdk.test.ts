/**
 * src/target/sdk.ts's table of what each SDK does (SPEC section 5, rules every check follows): an
 * SDK is named only for the reply its row records, and the advice is what the author can do.
 */
import { describe, expect, it } from 'vitest';
import { compareVersions, SDK_BEHAVIOURS, sdkAdvice, sdkCause, type ServerSdk } from '../../src/target/sdk.js';

const ts = (version: string): ServerSdk => ({ name: '@modelcontextprotocol/sdk', version, from: 'package', family: 'typescript' });
const rmcp = (version: string): ServerSdk => ({ name: 'rmcp', version, from: 'binary', family: 'rust' });
const fastmcp: ServerSdk = { name: 'fastmcp', version: '4.3.2', from: 'package', family: 'framework' };

describe('sdkCause', () => {
  it('TS SDK 0.5–1.x: a dropped array-params request is the SDK\'s; an unknown method answered with a result or another code is not', () => {
    for (const v of ['0.5.0', '0.6.0', '1.0.1', '1.26.0', '1.32.2']) {
      expect(sdkCause([ts(v)], 'array-params', { kind: 'no-reply' })?.sdk.version).toBe(v);
      expect(sdkCause([ts(v)], 'unknown-method', { kind: 'result' })).toBeUndefined();
      expect(sdkCause([ts(v)], 'unknown-method', { kind: 'error', code: -32603 })).toBeUndefined();
    }
    // A reply the SDK does not give (an exit, a success) is the author's.
    expect(sdkCause([ts('1.32.2')], 'array-params', { kind: 'exited' })).toBeUndefined();
    expect(sdkCause([ts('1.32.2')], 'array-params', { kind: 'result' })).toBeUndefined();
    // Outside the verified range: not named.
    expect(sdkCause([ts('0.4.0')], 'array-params', { kind: 'no-reply' })).toBeUndefined();
    expect(sdkCause([ts('2.0.0')], 'array-params', { kind: 'no-reply' })).toBeUndefined();
  });

  it('under a framework, the SDK that causes it is named with the framework above it, and the framework is the dependency', () => {
    const c = sdkCause([fastmcp, ts('1.32.2')], 'array-params', { kind: 'no-reply' })!;
    expect(c.sdk.name).toBe('@modelcontextprotocol/sdk');
    expect(c.label).toBe('fastmcp 4.3.2 on @modelcontextprotocol/sdk 1.32.2');
    expect(c.dependency).toBe('fastmcp');
  });

  it('rmcp exits on array params, on NaN and on an out-of-range number (1e309); a binary has no dependency line', () => {
    for (const probe of ['array-params', 'not-json-line', 'number-out-of-range'] as const) {
      for (const v of ['0.16.0', '1.1.1']) {
        const c = sdkCause([rmcp(v)], probe, { kind: 'exited' });
        expect(c?.sdk.name, `${probe} ${v}`).toBe('rmcp');
        expect(c?.dependency).toBeUndefined();
      }
    }
    expect(sdkCause([rmcp('1.1.1')], 'unknown-method', { kind: 'exited' })).toBeUndefined();
  });

  it('mcp-go answers every such probe correctly: nothing is ever its fault', () => {
    const go: ServerSdk = { name: 'github.com/mark3labs/mcp-go', version: 'v0.33.0', from: 'binary', family: 'go' };
    expect(sdkCause([go], 'array-params', { kind: 'error', code: -32600 })).toBeUndefined();
    expect(SDK_BEHAVIOURS.filter((b) => b.sdk === go.name).every((b) => !b.fault)).toBe(true);
  });

  it('fastmcp: a refusal of undefined arguments is named only when its text is FastMCP\'s', () => {
    const text = "MCP error -32602: Tool 'x' parameter validation failed: root: Invalid input: expected object, received undefined. Please check";
    expect(sdkCause([fastmcp, ts('1.32.2')], 'no-arguments', { kind: 'refused', text })?.sdk.name).toBe('fastmcp');
    expect(sdkCause([fastmcp, ts('1.32.2')], 'no-arguments', { kind: 'refused', text: 'arguments are required' })).toBeUndefined();
    expect(sdkCause([fastmcp, ts('1.32.2')], 'extra-key', { kind: 'extra-dropped' })?.sdk.name).toBe('fastmcp');
    expect(sdkCause([ts('1.32.2')], 'extra-key', { kind: 'extra-dropped' })).toBeUndefined();
  });
});

describe('sdkAdvice', () => {
  it('with no fixed release: no upgrade, but suppress (with the check and message id) and report upstream', () => {
    const a = sdkAdvice(sdkCause([ts('1.32.2')], 'array-params', { kind: 'no-reply' })!, 'protocol-errors', 'no-reply');
    expect(a).not.toMatch(/upgrade/);
    expect(a).toContain('no release of @modelcontextprotocol/sdk is known to answer otherwise');
    expect(a).toContain('suppress: entry (check: protocol-errors, messageId: no-reply)');
  });

  it('with a fixed release the server is below: upgrade to it', () => {
    const c = sdkCause([ts('1.0.1')], 'array-params', { kind: 'no-reply' })!;
    const fixed = { ...c, behaviour: { ...c.behaviour, fixedIn: '1.40.0' } };
    expect(sdkAdvice(fixed, 'protocol-errors', 'no-reply')).toMatch(/upgrade @modelcontextprotocol\/sdk to 1\.40\.0 or later/);
  });
});

describe('compareVersions', () => {
  it('compares part by part, with or without a v', () => {
    expect(compareVersions('1.32.2', '1.4.0')).toBe(1);
    expect(compareVersions('v0.33.0', 'v0.34.0')).toBe(-1);
    expect(compareVersions('2.0.0', '2.0.0')).toBe(0);
  });
});
