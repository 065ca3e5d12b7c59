/**
 * The fetch phase end to end (SPEC section 3 step 0), through the real binary against loopback
 * package registries this file starts and stops (test/helpers/registries.ts): nothing here leaves
 * loopback.
 *
 * 1. npm: `audit -- npx -y @fixture/echo-server@1.0.0` and `audit --package npm:…` fetch the
 *    package into sealmark's cache, then audit it in the sandbox with no network; a second audit
 *    reuses the install without a single request to the registry; a range resolves to the newest
 *    version; a replay (`call --package`) starts the same install offline.
 * 2. Failures, each at once (the reason of the fetch, never a handshake time-out) and with exit 3: a package that does not exist (npm's E404), a
 *    registry that answers 500, a registry that never answers (the fetch time-out is not reached:
 *    npm's own request time-out is), a server that needs the network at start-up (the host it
 *    tried), an oci package where docker cannot run it.
 * 3. Install scripts are off unless --allow-install-scripts.
 * 4. pypi: `--package pypi:fixture-echo-server==1.0.0` and `-- uvx fixture-echo-server==1.0.0` /
 *    `-- pipx run fixture-echo-server` through a virtual environment and pip, against a loopback
 *    simple index.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliRun } from '../helpers/cli.js';
import { root } from '../helpers/run.js';
import { startNpmRegistry, startPypiIndex, type NpmRegistry, type PypiIndex } from '../helpers/registries.js';
import { networkNamespaceAvailable } from '../../src/target/sandbox.js';
import type { Report } from '../../src/report/build.js';

const SLOW = 180_000;
const namespaces = networkNamespaceAvailable().ok;

let npm: NpmRegistry;
let work: string;

beforeAll(async () => {
  npm = await startNpmRegistry();
  work = mkdtempSync(join(tmpdir(), 'sealmark-fetch-test-'));
}, 120_000);

afterAll(async () => {
  await npm?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A cache of sealmark's own for one group of tests. */
function cache(name: string): string {
  return join(work, `cache-${name}`);
}

/** Runs sealmark with the loopback npm registry and `cacheDir` as sealmark's cache; times the run. */
async function sealmark(args: string[], cacheDir: string, env: Record<string, string> = {}): Promise<CliRun & { ms: number; report?: Report }> {
  const started = Date.now();
  const r = await runCli(args, { env: { ...npm.env(), SEALMARK_CACHE: cacheDir, ...env }, cwd: work });
  const ms = Date.now() - started;
  let report: Report | undefined;
  if (args.includes('json')) {
    try {
      report = JSON.parse(r.stdout) as Report;
    } catch {
      /* not a report: the assertions below say so */
    }
  }
  return { ...r, ms, report };
}

function verdict(report: Report, id: string): string | undefined {
  return report.checks.find((c) => c.id === id)?.verdict;
}

describe('npm packages', () => {
  it(
    'audit -- npx -y @fixture/echo-server@1.0.0 fetches, then audits with no network; a second audit reuses the install',
    async () => {
      const dir = cache('npm');
      npm.requests.length = 0;
      const first = await sealmark(['audit', '--format', 'json', '--timeout-probe', '3', '--', 'npx', '-y', '@fixture/echo-server@1.0.0'], dir);
      expect(first.report, first.stderr).toBeDefined();
      const r = first.report!;
      expect(r.status, JSON.stringify(r.notAudited)).toBe('audited');
      expect(r.target.package).toEqual({ ecosystem: 'npm', name: '@fixture/echo-server', version: '1.0.0', launcher: 'npx', reused: false });
      expect(r.target.command).toEqual(['npx', '-y', '@fixture/echo-server@1.0.0']);
      expect(verdict(r, 'handshake')).toBe('pass');
      expect(r.protocol?.server.name).toBe('@fixture/echo-server');
      if (namespaces) expect(r.sandbox.network).toBe('namespace');
      expect(npm.requests.some((q) => q.includes('.tgz'))).toBe(true);
      expect(readdirSync(join(dir, 'npm'))).toEqual(['@fixture+echo-server@1.0.0']);

      npm.requests.length = 0;
      const second = await sealmark(['audit', '--format', 'json', '--timeout-probe', '3', '--package', 'npm:@fixture/echo-server@1.0.0'], dir);
      const r2 = second.report!;
      expect(r2.status).toBe('audited');
      expect(r2.target.package).toEqual({ ecosystem: 'npm', name: '@fixture/echo-server', version: '1.0.0', launcher: '--package', reused: true });
      // Reused: not one request reached the registry.
      expect(npm.requests).toEqual([]);
      // The same verdicts by either way of naming the package.
      expect(r2.checks.map((c) => [c.id, c.verdict])).toEqual(r.checks.map((c) => [c.id, c.verdict]));
      // Replays of a --package audit name the package, and the server's arguments follow --.
      const replay = r2.checks.flatMap((c) => c.findings).find((f) => f.replay)?.replay;
      if (replay) expect(replay).toMatch(/^sealmark call --package npm:@fixture\/echo-server@1\.0\.0 /);
    },
    SLOW,
  );

  it(
    'a range resolves to the newest matching version, and the text report names it',
    async () => {
      const r = await sealmark(['audit', '--timeout-probe', '3', '--only', 'handshake', '--', 'npx', '-y', '@fixture/echo-server'], cache('npm'));
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/package +npm @fixture\/echo-server 1\.1\.0 \(via npx; fetched and installed, then started from that install\)/);
      expect(r.stdout).toMatch(/server +@fixture\/echo-server 1\.1\.0/);
    },
    SLOW,
  );

  it(
    'a launcher line sealmark cannot read runs as given; when it reaches for the registry at start, the launcher is named, not the server',
    async () => {
      // `--registry` is an npx option sealmark does not read: the line runs as given, in the sandbox.
      const r = await sealmark(['audit', '--format', 'json', '--', 'npx', '-y', `--registry=${npm.url}`, '@fixture/echo-server@1.0.0'], cache('unread'), { npm_config_cache: join(work, 'npm-cache-unread') });
      expect(r.code).toBe(3);
      expect(r.report?.target.package).toBeUndefined();
      if (namespaces) {
        expect(r.report?.notAudited?.reason).toBe('needs-network');
        expect(r.report?.notAudited?.message).toMatch(/^npx \(a launcher line sealmark could not read as a package launch, so it ran as given and fetched at start\) needs the network at start-up: it tried /);
      }
    },
    SLOW,
  );

  it(
    'an unversioned npx line naming a package the project has installed starts that install, as npx would, with no request',
    async () => {
      npm.requests.length = 0;
      const r = await runCli(['audit', '--format', 'json', '--only', 'handshake', '--', 'npx', '-y', '@modelcontextprotocol/server-memory'], { env: { ...npm.env(), SEALMARK_CACHE: cache('project') }, cwd: root });
      const report = JSON.parse(r.stdout) as Report;
      expect(report.status, r.stderr).toBe('audited');
      expect(report.target.package).toEqual({ ecosystem: 'npm', name: '@modelcontextprotocol/server-memory', version: '2026.8.31', launcher: 'npx', reused: true, from: 'project' });
      expect(report.protocol?.server.name).toBe('memory-server');
      expect(npm.requests).toEqual([]);
      expect(existsSync(cache('project'))).toBe(false);
    },
    SLOW,
  );

  it(
    'call --package replays against the cached install, with the registry down',
    async () => {
      const dir = cache('npm');
      await sealmark(['audit', '--only', 'handshake', '--package', 'npm:@fixture/echo-server@1.0.0'], dir);
      npm.setMode('error500');
      try {
        npm.requests.length = 0;
        const r = await sealmark(['call', '--package', 'npm:@fixture/echo-server@1.0.0', '--tool', 'echo', '--args', '{"text":"hello"}'], dir);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toMatch(/^reply .*hello/m);
        expect(npm.requests).toEqual([]);
      } finally {
        npm.setMode('ok');
      }
    },
    SLOW,
  );

  it(
    'a package that does not exist: exit 3 at once (the reason of the fetch, never a handshake time-out), npm\'s 404 quoted and the package named',
    async () => {
      const r = await sealmark(['audit', '--format', 'json', '--', 'npx', '-y', '@fixture/does-not-exist@1.0.0'], cache('missing'));
      expect(r.code).toBe(3);
      expect(r.report?.notAudited?.reason).toBe('fetch-failed');
      expect(r.report?.notAudited?.message).toMatch(/^cannot fetch npm package @fixture\/does-not-exist@1\.0\.0: .*404/);
      expect(r.report?.target.package).toMatchObject({ name: '@fixture/does-not-exist', version: '1.0.0', launcher: 'npx' });
      const handshake = r.report!.checks.find((c) => c.id === 'handshake')!;
      expect(handshake.findings[0]?.messageId).toBe('fetch-failed');
      expect(r.report?.sandbox.note).toMatch(/never run/);
      expect(r.stderr).toMatch(/could not be audited: cannot fetch npm package @fixture\/does-not-exist@1\.0\.0/);
    },
    SLOW,
  );

  it(
    'a registry that answers 500: exit 3 at once (the reason of the fetch, never a handshake time-out), with the status',
    async () => {
      npm.setMode('error500');
      try {
        // A fresh npm cache too, so that npm must ask the registry.
        const npmCache = join(work, 'npm-cache-500');
        const r = await sealmark(['audit', '--format', 'json', '--package', 'npm:@fixture/echo-server@1.0.0'], cache('e500'), { npm_config_cache: npmCache });
        expect(r.code).toBe(3);
        expect(r.report?.notAudited?.reason).toBe('fetch-failed');
        expect(r.report?.notAudited?.message).toMatch(/@fixture\/echo-server@1\.0\.0: .*500/);
        expect(existsSync(join(cache('e500'), 'npm', '@fixture+echo-server@1.0.0'))).toBe(false);
      } finally {
        npm.setMode('ok');
      }
    },
    SLOW,
  );

  it.runIf(namespaces)(
    'a server that reaches for the network while starting is reported as needing it, with the host it tried',
    async () => {
      const r = await sealmark(['audit', '--format', 'json', '--package', 'npm:@fixture/net-at-start@1.0.0'], cache('net'));
      expect(r.code).toBe(3);
      expect(r.report?.notAudited?.reason).toBe('needs-network');
      expect(r.report?.notAudited?.message).toBe('the server needs the network at start-up: it tried 203.0.113.1:443');
      const f = r.report!.checks.find((c) => c.id === 'handshake')!.findings[0]!;
      expect(f.messageId).toBe('needs-network');
      expect(f.message).toMatch(/--network on/);
    },
    SLOW,
  );

  it(
    'install scripts are off unless --allow-install-scripts',
    async () => {
      const off = cache('scripts-off');
      const r = await sealmark(['audit', '--only', 'handshake', '--package', 'npm:@fixture/install-script@1.0.0'], off);
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(join(off, 'npm', '@fixture+install-script@1.0.0', 'node_modules', '@fixture', 'install-script', 'postinstall-ran'))).toBe(false);
      const on = cache('scripts-on');
      const r2 = await sealmark(['audit', '--only', 'handshake', '--allow-install-scripts', '--package', 'npm:@fixture/install-script@1.0.0'], on);
      expect(r2.code, r2.stderr).toBe(0);
      expect(existsSync(join(on, 'npm', '@fixture+install-script@1.0.0', 'node_modules', '@fixture', 'install-script', 'postinstall-ran'))).toBe(true);
    },
    SLOW,
  );
});

describe('oci packages', () => {
  it(
    'docker that cannot run the image: exit 3 at once (the reason of the fetch, never a handshake time-out), docker\'s own words quoted',
    async () => {
      // This machine has the docker client and no engine (or no docker at all): both are reasons.
      const r = await sealmark(['audit', '--format', 'json', '--package', 'oci:example.invalid/mcp/none:1.0.0'], cache('oci'), { DOCKER_HOST: 'unix:///nonexistent/docker.sock' });
      expect(r.code).toBe(3);
      expect(['fetch-failed', 'not-runnable']).toContain(r.report?.notAudited?.reason);
      expect(r.report?.notAudited?.message).toMatch(/oci package example\.invalid\/mcp\/none:1\.0\.0: \S/);
    },
    SLOW,
  );
});

/** pip in a fresh virtual environment works here (python3 with venv and ensurepip). */
const venvWorks = (() => {
  const d = mkdtempSync(join(tmpdir(), 'sealmark-venv-probe-'));
  try {
    return spawnSync('python3', ['-m', 'venv', join(d, 'v')], { timeout: 60_000 }).status === 0;
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
})();

describe.runIf(venvWorks)('pypi packages (python3 -m venv and pip, against a loopback simple index)', () => {
  let pypi: PypiIndex;
  beforeAll(async () => {
    pypi = await startPypiIndex();
  }, 60_000);
  afterAll(async () => {
    await pypi?.close();
  });

  it(
    '--package pypi:fixture-echo-server==1.0.0 fetches and audits; uvx and pipx run lines reuse the install',
    async () => {
      const dir = cache('pypi');
      pypi.requests.length = 0;
      const first = await sealmark(['audit', '--format', 'json', '--timeout-probe', '3', '--package', 'pypi:fixture-echo-server==1.0.0'], dir, pypi.env());
      const r = first.report!;
      expect(r.status, first.stderr).toBe('audited');
      expect(r.target.package).toEqual({ ecosystem: 'pypi', name: 'fixture-echo-server', version: '1.0.0', launcher: '--package', reused: false });
      expect(verdict(r, 'handshake')).toBe('pass');
      expect(pypi.requests.some((q) => q.includes('.whl'))).toBe(true);

      pypi.requests.length = 0;
      const second = await sealmark(['audit', '--format', 'json', '--timeout-probe', '3', '--', 'uvx', 'fixture-echo-server==1.0.0'], dir, pypi.env());
      expect(second.report?.target.package).toEqual({ ecosystem: 'pypi', name: 'fixture-echo-server', version: '1.0.0', launcher: 'uvx', reused: true });
      expect(pypi.requests).toEqual([]);
      expect(second.report!.checks.map((c) => [c.id, c.verdict])).toEqual(r.checks.map((c) => [c.id, c.verdict]));

      // Without a version, pip resolves the newest one (a look at the index), then the install is reused.
      const third = await sealmark(['audit', '--format', 'json', '--only', 'handshake', '--', 'pipx', 'run', 'fixture-echo-server'], dir, pypi.env());
      expect(third.report?.target.package).toEqual({ ecosystem: 'pypi', name: 'fixture-echo-server', version: '1.0.0', launcher: 'pipx run', reused: true });
    },
    SLOW,
  );

  it(
    'a distribution the index does not have: exit 3 at once (the reason of the fetch, never a handshake time-out), pip\'s error quoted',
    async () => {
      const r = await sealmark(['audit', '--format', 'json', '--package', 'pypi:fixture-missing==1.0.0'], cache('pypi-missing'), pypi.env());
      expect(r.code).toBe(3);
      expect(r.report?.notAudited?.reason).toBe('fetch-failed');
      expect(r.report?.notAudited?.message).toMatch(/^cannot fetch pypi package fixture-missing==1\.0\.0: .*(No matching distribution|Could not find a version)/);
      expect(existsSync(join(cache('pypi-missing'), 'pypi', 'fixture-missing==1.0.0'))).toBe(false);
    },
    SLOW,
  );
});
