/**
 * `sealmark audit --server-json` end to end (SPEC section 2; the registry's server.json,
 * research/fleet-and-registry.md §1.3), through the real binary, against a loopback npm registry
 * and a loopback HTTP fixture: an npm package entry is fetched and audited offline with its
 * arguments and environment; a required input with no value is `needs-config` naming it; a
 * registry type sealmark cannot start is `not-runnable`; a remote is audited with `--url`
 * semantics, its header variable filled from `--env` (or a canary, which the server refuses); a
 * replay reaches the same entry.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliRun } from '../helpers/cli.js';
import { startNpmRegistry, type NpmRegistry } from '../helpers/registries.js';
import { startHttpFixture, type HttpFixture } from '../helpers/http.js';
import { expectNoCanary, root } from '../helpers/run.js';
import type { Report } from '../../src/report/build.js';

const SLOW = 180_000;
const FIXTURES = join(root, 'test', 'fixtures', 'server-json');
const TOKEN = `tok-${randomBytes(12).toString('hex')}`;

let npm: NpmRegistry;
let bearer: HttpFixture;
let work: string;

beforeAll(async () => {
  npm = await startNpmRegistry({ folders: ['echo-server-1.0.0'] });
  bearer = await startHttpFixture('bearer.mjs', [], { FIXTURE_TOKEN: TOKEN });
  work = mkdtempSync(join(tmpdir(), 'sealmark-server-json-test-'));
}, 120_000);

afterAll(async () => {
  await npm?.close();
  await bearer?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function sealmark(args: string[], env: Record<string, string> = {}): Promise<CliRun & { ms: number; report?: Report }> {
  const started = Date.now();
  const r = await runCli(args, { env: { ...npm.env(), SEALMARK_CACHE: join(work, 'cache'), ...env }, cwd: work });
  let report: Report | undefined;
  try {
    report = JSON.parse(r.stdout) as Report;
  } catch {
    /* not JSON */
  }
  if (report) expectNoCanary(report, args.join(' '));
  return { ...r, ms: Date.now() - started, report };
}

describe('--server-json', () => {
  it(
    'an npm entry: fetched, started with its arguments (defaults filled) and audited offline; the secret is a canary',
    async () => {
      const r = await sealmark(['audit', '--format', 'json', '--timeout-probe', '3', '--server-json', join(FIXTURES, 'npm.json')]);
      const rep = r.report!;
      expect(rep.status, r.stderr).toBe('audited');
      expect(rep.target.command).toEqual(['npx', '-y', '@fixture/echo-server@1.0.0', '--log-level', 'info', './echo data', '--read-only']);
      expect(rep.target.package).toEqual({ ecosystem: 'npm', name: '@fixture/echo-server', version: '1.0.0', launcher: '--server-json', reused: false });
      expect(rep.target.origin).toMatchObject({ kind: 'server-json', entry: 'packages[0]', name: 'io.github.fixture/echo-server', version: '1.0.0' });
      expect(rep.checks.find((c) => c.id === 'handshake')?.verdict).toBe('pass');
      expect(rep.checks.find((c) => c.id === 'secret-echo')?.verdict).toBe('pass');
      const replay = rep.checks.flatMap((c) => c.findings).find((f) => f.replay)?.replay;
      if (replay) expect(replay).toMatch(/^sealmark call --server-json \S+npm\.json --package-index 0 --tool /);
      // The replay's way in: call --server-json reaches the same entry, from the same install.
      npm.requests.length = 0;
      const call = await sealmark(['call', '--server-json', join(FIXTURES, 'npm.json'), '--package-index', '0', '--tool', 'echo', '--args', '{"text":"from server.json"}']);
      expect(call.code, call.stderr).toBe(0);
      expect(call.stdout).toMatch(/^reply .*from server\.json/m);
      expect(npm.requests).toEqual([]);
    },
    SLOW,
  );

  it('a required input with no default: needs-config, naming it, before anything starts', async () => {
    const r = await sealmark(['audit', '--format', 'json', '--server-json', join(FIXTURES, 'needs-config.json')]);
    expect(r.code).toBe(3);
    expect(r.report?.notAudited?.reason).toBe('needs-config');
    expect(r.report?.notAudited?.message).toMatch(/workspace/);
    expect(r.report?.notAudited?.message).toMatch(/--env ECHO_DB_URL=VALUE/);
    expect(r.report?.checks.find((c) => c.id === 'handshake')?.findings[0]?.messageId).toBe('needs-config');
    // The text report's target line names the entry, though nothing was started.
    const text = await sealmark(['audit', '--server-json', join(FIXTURES, 'needs-config.json')]);
    expect(text.stdout).toMatch(/^target +io\.github\.fixture\/echo-server-db \(\S+needs-config\.json, packages\[0\]\)$/m);
    // Given with --env, the same entry starts.
    const ok = await sealmark(['audit', '--format', 'json', '--only', 'handshake', '--env', 'ECHO_DB_URL=sqlite::memory:', '--env', 'workspace=/tmp', '--server-json', join(FIXTURES, 'needs-config.json')]);
    expect(ok.report?.status, ok.stderr).toBe('audited');
    expect(ok.report?.target.command).toEqual(['npx', '-y', '@fixture/echo-server@1.0.0', '/tmp']);
  }, SLOW);

  it('a registry type sealmark cannot start: not-runnable, with the reason', async () => {
    const r = await sealmark(['audit', '--format', 'json', '--server-json', join(FIXTURES, 'nuget.json')]);
    expect(r.code).toBe(3);
    expect(r.report?.notAudited?.reason).toBe('not-runnable');
    expect(r.report?.notAudited?.message).toMatch(/^packages\[0\] \(Fixture.EchoServer\) is a NuGet package/);
  });

  it('usage errors name the flag or the field', async () => {
    const bad = await sealmark(['audit', '--server-json', join(FIXTURES, 'malformed.json')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/malformed\.json: \S+/);
    const idx = await sealmark(['audit', '--server-json', join(FIXTURES, 'npm.json'), '--package-index', '5']);
    expect(idx.code).toBe(2);
    expect(idx.stderr).toMatch(/--package-index 5: .*1 package/);
    const stray = await sealmark(['audit', '--package-index', '0', '--', 'node', 'x.js']);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toMatch(/--package-index and --remote-index go with --server-json/);
  });

  it(
    'a remote: audited by URL with its header variable from --env; without it the canary is refused (unauthorized)',
    async () => {
      const file = join(work, 'remote.json');
      writeFileSync(
        file,
        JSON.stringify({
          $schema: 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json',
          name: 'io.github.fixture/bearer',
          description: 'the bearer HTTP fixture as a remote',
          version: '1.0.0',
          remotes: [{ type: 'streamable-http', url: bearer.url, headers: [{ name: 'Authorization', value: 'Bearer {api_key}', isSecret: true, variables: { api_key: { isRequired: true, isSecret: true } } }] }],
        }),
      );
      const ok = await sealmark(['audit', '--format', 'json', '--timeout-probe', '3', '--server-json', file, '--env', 'api_key'], { api_key: TOKEN });
      expect(ok.report?.status, ok.stderr).toBe('audited');
      expect(ok.report?.target).toMatchObject({ kind: 'http', url: bearer.url, origin: { entry: 'remotes[0]' } });
      expect(ok.stdout).not.toContain(TOKEN);
      const gated = await sealmark(['audit', '--format', 'json', '--server-json', file]);
      expect(gated.code).toBe(3);
      expect(gated.report?.notAudited?.reason).toBe('unauthorized');
    },
    SLOW,
  );
});
