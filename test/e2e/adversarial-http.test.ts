/**
 * Hostile and broken HTTP servers (test/fixtures/servers/adversarial-http/, from a newcomer attack
 * run) against `sealmark audit --url` and `call --url`: each test pins a fix. Nothing leaves
 * loopback; the fixtures' "elsewhere" listeners stand for hosts sealmark was never given and log
 * to stderr whatever reaches them.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/build.js';
import { runCli } from '../helpers/cli.js';
import { startHttpFixture, type HttpFixture } from '../helpers/http.js';
import { root } from '../helpers/run.js';

const SLOW = 120_000;
const dir = mkdtempSync(join(tmpdir(), 'sealmark-adv-http-'));
const started: HttpFixture[] = [];
afterAll(async () => {
  await Promise.all(started.map((f) => f.stop()));
  rmSync(dir, { recursive: true, force: true });
});

const fixturePath = (name: string) => join(root, 'test/fixtures/servers/adversarial-http', name);

async function start(name: string, args: string[] = []): Promise<HttpFixture> {
  const f = await startHttpFixture(fixturePath(name), args);
  started.push(f);
  return f;
}

/** Audits `url` (probe limit 2 s) and reads the JSON report. */
async function auditUrl(url: string, extra: string[] = [], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; report: Report }> {
  const out = join(dir, `r-${Math.random().toString(36).slice(2)}.json`);
  const r = await runCli(['audit', '--url', url, '--timeout-probe', '2', '--format', 'json', '--output', out, ...extra], { env });
  return { code: r.code, stderr: r.stderr, report: JSON.parse(readFileSync(out, 'utf8')) as Report };
}

const SECRET_HEADER = 'hdr-SECRET-5c0ffee1';

describe('redirects: sealmark sends nothing to a URL it was not given', () => {
  it('the session-ending DELETE is not redirected elsewhere, and no header travels there', async () => {
    const f = await start('redirects.mjs', ['delete']);
    const { report } = await auditUrl(f.url, ['--header', `X-Api-Key: ${SECRET_HEADER}`, '--only', 'handshake']);
    expect(report.status).toBe('audited');
    await new Promise((r) => setTimeout(r, 300));
    // The server got its DELETE (and answered it with a redirect); nothing reached elsewhere.
    expect(f.stderr()).toContain('DELETE seen');
    expect(f.stderr()).not.toContain('ELSEWHERE');
    expect(f.stderr()).not.toContain(SECRET_HEADER);
  }, SLOW);

  it('a tools/call answered with a redirect is no reply (a protocol error naming where it pointed), never a clean rejection', async () => {
    const f = await start('redirects.mjs', ['call']);
    const { report } = await auditUrl(f.url, ['--only', 'handshake,robust-input']);
    const calls = report.calls.filter((c) => c.method === 'tools/call');
    expect(calls.length).toBeGreaterThan(0);
    for (const c of calls) expect(c.class, c.request).toBe('protocol-error');
    const ri = report.checks.find((c) => c.id === 'robust-input')!;
    expect(ri.findings.some((x) => x.messageId === 'protocol-error' && /HTTP 307 \(to http:\/\/127\.0\.0\.1:\d+\/steal; sealmark does not follow redirects\)/.test(x.message))).toBe(true);
    expect(f.stderr()).not.toContain('ELSEWHERE');
  }, SLOW);
});

describe('refused in the middle of the audit: not audited, with the reason', () => {
  for (const [mode, reason, text] of [
    ['expire', 'session-lost', 'the server ended the session (HTTP 404)'],
    ['unauth', 'unauthorized', 'the server refused sealmark in the middle of the audit (HTTP 401)'],
    ['unauth-json', 'unauthorized', 'the server refused sealmark in the middle of the audit (HTTP 401)'],
    ['forbid', 'unauthorized', 'the server refused sealmark in the middle of the audit (HTTP 403)'],
  ] as const) {
    it(`session-games ${mode} 3: exit 3, ${reason}; the calls made until then are kept`, async () => {
      const f = await start('session-games.mjs', [mode, '3']);
      const { code, report } = await auditUrl(f.url);
      expect(code).toBe(3);
      expect(report.status).toBe('not-audited');
      expect(report.notAudited?.reason).toBe(reason);
      expect(report.notAudited?.message).toContain(text);
      const handshake = report.checks.find((c) => c.id === 'handshake')!;
      expect(handshake.findings[0]?.messageId).toBe(reason);
      expect(report.calls.filter((c) => c.method === 'tools/call').length).toBeGreaterThanOrEqual(3);
      for (const c of report.checks.filter((x) => x.id !== 'handshake')) expect(c.verdict, c.id).toBe('n/a');
    }, SLOW);
  }
});

describe('replies with no answer in them are broken replies at once, not hangs', () => {
  for (const [fixture, mode, problem] of [
    ['content-type-lies.mjs', 'json-as-sse', /the event stream ended without a reply to this request/],
    ['jsonrpc-games.mjs', 'empty-batch', /the body held no reply to this request/],
  ] as const) {
    it(`${fixture} ${mode}`, async () => {
      const f = await start(fixture, [mode]);
      const { report } = await auditUrl(f.url, ['--only', 'handshake,robust-input']);
      const calls = report.calls.filter((c) => c.method === 'tools/call');
      expect(calls.length).toBeGreaterThan(0);
      for (const c of calls) {
        expect(c.reply.kind, c.request).toBe('malformed');
        expect(c.reply.problem).toMatch(problem);
      }
    }, SLOW);
  }

  it('an HTML page in place of JSON is noise the handshake names as HTTP bodies, not stdout lines', async () => {
    const f = await start('content-type-lies.mjs', ['html']);
    const { report } = await auditUrl(f.url, ['--only', 'handshake,robust-input']);
    const noise = report.checks.find((c) => c.id === 'handshake')!.findings.find((x) => x.messageId === 'reply-noise');
    expect(noise?.message).toMatch(/^\d+ HTTP bodies or events \(\d+ bytes\) were not JSON-RPC messages, e\.g\. .*502 Bad Gateway/);
    expect(report.checks.find((c) => c.id === 'handshake')!.findings.some((x) => x.messageId === 'stdout-noise')).toBe(false);
  }, SLOW);

  it('call --url prints why a reply was unreadable instead of "null"', async () => {
    const f = await start('content-type-lies.mjs', ['html']);
    const r = await runCli(['call', '--url', f.url, '--tool', 'get_note', '--args', '{"id":"a"}']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^reply {4}\(none readable: .+\)$/m);
    expect(r.stdout).not.toMatch(/^reply {4}null$/m);
  }, SLOW);
});

describe('the handshake', () => {
  it('a server that never answers server/discover is audited over initialize (the probe times out, then the fallback)', async () => {
    const f = await start('connection-games.mjs', ['discover-hang']);
    const { report } = await auditUrl(f.url, ['--only', 'handshake']);
    expect(report.status).toBe('audited');
    expect(report.protocol).toMatchObject({ era: 'legacy' });
  }, SLOW);

  it('an initialize reply larger than the 16 MiB limit is a prompt http-error naming the limit, not a timeout', async () => {
    const f = await start('huge-handshake.mjs', ['init-json']);
    const { code, report } = await auditUrl(f.url);
    expect(code).toBe(3);
    expect(report.notAudited).toMatchObject({ reason: 'http-error' });
    expect(report.notAudited!.message).toContain('was dropped unread');
  }, SLOW);

  it('a legacy endpoint on another host is refused, and the report says so (not only the first 405)', async () => {
    const f = await start('legacy-endpoint.mjs', ['foreign']);
    const { code, report } = await auditUrl(f.url);
    expect(code).toBe(3);
    expect(report.notAudited!.message).toContain('the endpoint event names "http://10.0.0.1:9/steal"');
    expect(report.notAudited!.message).toContain('sealmark does not send there');
  }, SLOW);
});

describe('sealmark lint on a large listing', () => {
  it('8,000 tools are linted (fingerprints are built from one name table, not one per finding)', async () => {
    const tools = Array.from({ length: 8000 }, (_, i) => ({
      name: `get_note_${i}`,
      description: 'Gets notes.',
      inputSchema: { type: 'object', properties: { limit: { type: 'integer' } } },
    }));
    // Written with a byte order mark, as some editors save JSON.
    writeFileSync(join(dir, 'big.json'), `\uFEFF${JSON.stringify({ tools })}`);
    const r = await runCli(['lint', join(dir, 'big.json'), '--format', 'json', '--output', join(dir, 'big-report.json')]);
    expect([0, 1], r.stderr).toContain(r.code);
    const report = JSON.parse(readFileSync(join(dir, 'big-report.json'), 'utf8')) as Report;
    expect(report.tools.length).toBe(8000);
    expect(report.checks.find((c) => c.id === 'bounded-limits')!.findings.filter((x) => x.messageId === 'no-maximum').length).toBe(8000);
  }, SLOW);
});
