// The loopback package registries (test/helpers/registries.ts), exercised with the real npm, npx,
// python3 -m venv and pip clients. Nothing here leaves 127.0.0.1.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { NPM_FIXTURES_DIR, REPO_ROOT, startNpmRegistry, startPypiIndex, type NpmRegistry, type PypiIndex } from '../helpers/registries.js';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Wall time in milliseconds. */
  ms: number;
}

/** Runs a command asynchronously (the registries live in this process, so spawnSync would deadlock). */
function run(cmd: string, args: string[], opts: { env?: Record<string, string>; input?: string; cwd?: string; timeoutMs?: number } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(cmd, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin.on('error', () => {}); // a server that exits without reading
    child.stdin.end(opts.input ?? '');
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 45_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'registries-test', version: '0' } },
};
const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' };
const lines = (...msgs: object[]): string => msgs.map((m) => JSON.stringify(m) + '\n').join('');
const replies = (stdout: string): { id: number; result?: any; error?: any }[] =>
  stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('startNpmRegistry', () => {
  let registry: NpmRegistry;
  let work: string;
  let n = 0;
  const prefix = (): string => join(work, `prefix-${++n}`);

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'sealmark-test-registries-npm-'));
    registry = await startNpmRegistry();
  });
  afterAll(async () => {
    await registry?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('serves the packument under both spellings of a scoped name, tarballs matching dist, and 404 like the real registry', async () => {
    expect(registry.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(registry.packages.map((p) => `${p.name}@${p.version}`).sort()).toEqual([
      '@fixture/echo-server@1.0.0',
      '@fixture/echo-server@1.1.0',
      '@fixture/hangs-at-start@1.0.0',
      '@fixture/install-script@1.0.0',
      '@fixture/net-at-start@1.0.0',
    ]);
    const encoded = await fetch(`${registry.url}/@fixture%2fecho-server`);
    const plain = await fetch(`${registry.url}/@fixture/echo-server`);
    expect(encoded.status).toBe(200);
    expect(encoded.headers.get('content-type')).toBe('application/json');
    const doc = await encoded.json();
    expect(await plain.json()).toEqual(doc);
    expect(doc.name).toBe('@fixture/echo-server');
    expect(doc['dist-tags']).toEqual({ latest: '1.1.0' });
    expect(Object.keys(doc.versions).sort()).toEqual(['1.0.0', '1.1.0']);
    const v1 = doc.versions['1.0.0'];
    expect(v1).toMatchObject({ name: '@fixture/echo-server', version: '1.0.0', bin: { 'echo-server': 'server.mjs' }, dependencies: {} });
    expect(v1.dist.tarball).toBe(`${registry.url}/@fixture/echo-server/-/echo-server-1.0.0.tgz`);

    const tgz = Buffer.from(await (await fetch(v1.dist.tarball)).arrayBuffer());
    expect(createHash('sha1').update(tgz).digest('hex')).toBe(v1.dist.shasum);
    expect(`sha512-${createHash('sha512').update(tgz).digest('base64')}`).toBe(v1.dist.integrity);

    const scripted = await (await fetch(`${registry.url}/@fixture%2finstall-script`)).json();
    expect(scripted.versions['1.0.0'].hasInstallScript).toBe(true);
    expect(doc.versions['1.0.0'].hasInstallScript).toBeUndefined();

    for (const path of ['/@fixture%2fmissing', '/left-pad', '/@fixture/echo-server/-/echo-server-9.9.9.tgz']) {
      const res = await fetch(registry.url + path);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toEqual({ error: 'Not found' });
    }
    expect(registry.requests).toContain('GET /@fixture%2fecho-server');
    expect(registry.requests).toContain('GET /@fixture/echo-server');
  });

  test('the echo-server version folders ship byte-identical server files (only package.json differs)', () => {
    const a = readFileSync(join(NPM_FIXTURES_DIR, 'echo-server-1.0.0', 'server.mjs'));
    expect(readFileSync(join(NPM_FIXTURES_DIR, 'echo-server-1.1.0', 'server.mjs')).equals(a)).toBe(true);
  });

  test('npm install --ignore-scripts installs a pinned version whose bin speaks MCP; the log shows packument then tarball', async () => {
    const dir = prefix();
    registry.requests.length = 0;
    const install = await run('npm', ['install', '--prefix', dir, '--ignore-scripts', '@fixture/echo-server@1.0.0'], { env: registry.env() });
    expect(install.code, install.stderr).toBe(0);
    expect(registry.requests).toEqual(['GET /@fixture%2fecho-server', 'GET /@fixture/echo-server/-/echo-server-1.0.0.tgz']);

    const call = (id: number, name: string, args: unknown): object => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    const server = await run(join(dir, 'node_modules', '.bin', 'echo-server'), [], {
      input: lines(
        INIT,
        INITIALIZED,
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        call(3, 'echo', { text: 'hi' }),
        call(4, 'echo', { text: 7 }),
        call(5, 'add', { a: 2 }),
        call(6, 'add', { a: 2, b: 3 }),
        { jsonrpc: '2.0', id: 7, method: 'ping' },
        { jsonrpc: '2.0', id: 8, method: 'resources/list' },
      ),
    });
    expect(server.code, server.stderr).toBe(0);
    const r = replies(server.stdout);
    expect(r.map((x) => x.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]); // the notification got no answer
    expect(r[0]!.result).toEqual({
      protocolVersion: '2025-06-18',
      capabilities: { tools: {} },
      serverInfo: { name: '@fixture/echo-server', version: '1.0.0' },
    });
    expect(r[1]!.result.tools.map((t: { name: string }) => t.name)).toEqual(['echo', 'add']);
    expect(r[1]!.result.tools[0].annotations).toEqual({ readOnlyHint: true });
    expect(r[2]!.result).toEqual({ content: [{ type: 'text', text: 'hi' }] });
    expect(r[3]!.result.isError).toBe(true);
    expect(r[3]!.result.content[0].text).toContain('"text"');
    expect(r[4]!.result.isError).toBe(true);
    expect(r[4]!.result.content[0].text).toContain('"b"');
    expect(r[5]!.result.content[0].text).toBe('5');
    expect(r[6]!.result).toEqual({});
    expect(r[7]!.error.code).toBe(-32601);
  });

  test('npx -y runs a pinned version (1.1.0) with an initialize line piped in', async () => {
    const ran = await run('npx', ['-y', '@fixture/echo-server@1.1.0'], { env: registry.env(), input: lines(INIT), cwd: work });
    expect(ran.code, ran.stderr).toBe(0);
    expect(replies(ran.stdout)[0]!.result.serverInfo).toEqual({ name: '@fixture/echo-server', version: '1.1.0' });
  });

  test("a second install through the same env takes the tarball from npm's cache (only the packument is fetched again)", async () => {
    const env = registry.env();
    const first = await run('npm', ['install', '--prefix', prefix(), '--ignore-scripts', '@fixture/echo-server@1.0.0'], { env });
    expect(first.code, first.stderr).toBe(0);
    registry.requests.length = 0;
    const second = await run('npm', ['install', '--prefix', prefix(), '--ignore-scripts', '@fixture/echo-server@1.0.0'], { env });
    expect(second.code, second.stderr).toBe(0);
    expect(registry.requests).toEqual(['GET /@fixture%2fecho-server']);
  });

  test('--ignore-scripts keeps the postinstall marker away; without it npm runs the script (the fixture works)', async () => {
    const off = prefix();
    const ignored = await run('npm', ['install', '--prefix', off, '--ignore-scripts', '@fixture/install-script@1.0.0'], { env: registry.env() });
    expect(ignored.code, ignored.stderr).toBe(0);
    expect(existsSync(join(off, 'node_modules', '@fixture', 'install-script', 'server.mjs'))).toBe(true);
    expect(existsSync(join(off, 'node_modules', '@fixture', 'install-script', 'postinstall-ran'))).toBe(false);

    const on = prefix();
    const scripted = await run('npm', ['install', '--prefix', on, '@fixture/install-script@1.0.0'], { env: registry.env() });
    expect(scripted.code, scripted.stderr).toBe(0);
    expect(existsSync(join(on, 'node_modules', '@fixture', 'install-script', 'postinstall-ran'))).toBe(true);

    const ask = lines(INIT, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'postinstall_ran', arguments: {} } });
    for (const [dir, answer] of [[off, 'no'], [on, 'yes']] as const) {
      const server = await run(join(dir, 'node_modules', '.bin', 'install-script'), [], { input: ask });
      expect(replies(server.stdout)[1]!.result.content[0].text, dir).toBe(answer);
    }
  });

  test('net-at-start exits 1 naming the host it could not reach, and serves once it can connect', async () => {
    const dir = prefix();
    const install = await run('npm', ['install', '--prefix', dir, '--ignore-scripts', '@fixture/net-at-start@1.0.0'], { env: registry.env() });
    expect(install.code, install.stderr).toBe(0);
    const bin = join(dir, 'node_modules', '.bin', 'net-at-start');

    const port = await closedPort();
    const refused = await run(bin, [], { env: { FIXTURE_NET_TARGET: `127.0.0.1:${port}` }, input: lines(INIT) });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(`net-at-start: cannot reach 127.0.0.1:${port} (ECONNREFUSED); this server needs the network at start\n`);

    const listener = createServer((s) => s.destroy());
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    try {
      const target = `127.0.0.1:${(listener.address() as AddressInfo).port}`;
      const served = await run(bin, [], { env: { FIXTURE_NET_TARGET: target }, input: lines(INIT) });
      expect(served.code, served.stderr).toBe(0);
      expect(replies(served.stdout)[0]!.result.serverInfo.name).toBe('@fixture/net-at-start');
    } finally {
      await new Promise<void>((r) => listener.close(() => r()));
    }
  });

  test('a missing package fails with E404 at once (npm does not retry a 404)', async () => {
    registry.requests.length = 0;
    const ran = await run('npm', ['install', '--prefix', prefix(), '--ignore-scripts', '@fixture/missing@1.0.0'], { env: registry.env() });
    expect(ran.code).not.toBe(0);
    expect(ran.stderr).toContain('npm error code E404');
    expect(ran.stderr).toContain(`404 Not Found - GET ${registry.url}/@fixture%2fmissing - Not found`);
    expect(ran.ms).toBeLessThan(10_000); // ~0.5 s here
    expect(new Set(registry.requests)).toEqual(new Set(['GET /@fixture%2fmissing']));
  });

  test('error500 mode fails npm with E500; the failFast env makes it fail within seconds', async () => {
    registry.setMode('error500');
    try {
      expect(registry.mode).toBe('error500');
      registry.requests.length = 0;
      const ran = await run('npm', ['install', '--prefix', prefix(), '--ignore-scripts', '@fixture/echo-server@1.0.0'], { env: registry.env({ failFast: true }) });
      expect(ran.code).not.toBe(0);
      expect(ran.stderr).toContain('npm error code E500');
      expect(ran.ms).toBeLessThan(10_000); // ~0.4 s here; npm's default retries take ~70 s
      expect(registry.requests).toEqual(['GET /@fixture%2fecho-server']); // fetch_retries=0: one attempt
    } finally {
      registry.setMode('ok');
    }
  });

  test('hang mode: npm gives up after the failFast timeout, unless its cache already holds the packument', async () => {
    const env = registry.env({ failFast: true, timeoutMs: 1_500 });
    const warm = await run('npm', ['install', '--prefix', prefix(), '--ignore-scripts', '@fixture/echo-server@1.0.0'], { env });
    expect(warm.code, warm.stderr).toBe(0);
    registry.setMode('hang');
    try {
      // Never fetched before (and unknown anyway): nothing to fall back on.
      const cold = await run('npm', ['install', '--prefix', prefix(), '--ignore-scripts', '@fixture/never-fetched@1.0.0'], { env });
      expect(cold.code).not.toBe(0);
      expect(cold.stderr).toContain('network timeout');
      expect(cold.ms).toBeGreaterThanOrEqual(1_500);
      expect(cold.ms).toBeLessThan(15_000); // ~2-3.5 s here

      // On a network error (not on a 500) npm quietly serves the stale cached packument, and the
      // tarball comes from its cache by integrity: the install succeeds with the registry down.
      registry.requests.length = 0;
      const cached = await run('npm', ['install', '--prefix', prefix(), '--ignore-scripts', '@fixture/echo-server@1.0.0'], { env });
      expect(cached.code, cached.stderr).toBe(0);
      expect(registry.requests).toEqual(['GET /@fixture%2fecho-server']);
    } finally {
      registry.setMode('ok');
    }
  });

  test('close() stops listening, removes the npm cache folder and is idempotent', async () => {
    const own = await startNpmRegistry({ folders: ['echo-server-1.0.0'] });
    const cache = own.env().npm_config_cache!;
    expect(cache.startsWith(join(tmpdir(), 'sealmark-test-'))).toBe(true);
    const hanging = (own.setMode('hang'), fetch(`${own.url}/@fixture%2fecho-server`).catch((e: Error) => e));
    await new Promise((r) => setTimeout(r, 100));
    const ran = await run('npm', ['install', '--prefix', prefix(), '--ignore-scripts', '@fixture/echo-server@1.0.0'], {
      env: own.env({ failFast: true, timeoutMs: 300 }),
    }); // writes into the cache (logs at least)
    expect(ran.code).not.toBe(0);
    expect(existsSync(cache)).toBe(true);
    await own.close(); // must not wait for the hanging request
    expect(await hanging).toBeInstanceOf(Error);
    expect(existsSync(cache)).toBe(false);
    await expect(fetch(`${own.url}/@fixture%2fecho-server`)).rejects.toThrow();
    await own.close();
  });

  test('mirror: a real server and its whole dependency closure from node_modules; npm installs it from the registry alone', async () => {
    const PKG = '@modelcontextprotocol/server-everything';
    const VERSION = '2026.8.31';
    const started = Date.now();
    const own = await startNpmRegistry({ folders: [], mirror: [PKG] });
    try {
      const startMs = Date.now() - started;
      const stats = own.mirrorStats!;
      expect(own.packages).toEqual([]);
      expect(stats.packages).toBe(own.mirrored.length);
      expect(stats.packages).toBeGreaterThan(50); // 108 here: 3,873 files, 19 MB unpacked, 4 MB of tarballs
      expect(stats.ms).toBeLessThanOrEqual(startMs);
      expect(stats.ms, 'building the mirror').toBeLessThan(15_000); // ~0.5 s here on an idle machine
      expect(own.mirrored.find((p) => p.name === PKG)).toMatchObject({ version: VERSION, dir: realpathSync(join(REPO_ROOT, 'node_modules', PKG)) });

      // The packument: the installed package.json without its `_` fields, with dist for our tarball.
      const doc = await (await fetch(`${own.url}/@modelcontextprotocol%2fserver-everything`)).json();
      expect(doc['dist-tags']).toEqual({ latest: VERSION });
      const v = doc.versions[VERSION];
      const installed = JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', PKG, 'package.json'), 'utf8'));
      expect(v).toMatchObject({ name: PKG, version: VERSION, dependencies: installed.dependencies, bin: installed.bin });
      expect(Object.keys(v).filter((k) => k.startsWith('_'))).toEqual(['_id']);
      const tgz = Buffer.from(await (await fetch(v.dist.tarball)).arrayBuffer());
      expect(v.dist.tarball.startsWith(`${own.url}/`)).toBe(true);
      expect(`sha512-${createHash('sha512').update(tgz).digest('base64')}`).toBe(v.dist.integrity);
      expect(createHash('sha1').update(tgz).digest('hex')).toBe(v.dist.shasum);
      // Several installed versions of one name (content-type nested under express and others) are all served.
      const multi = own.mirrored.filter((p, i, all) => all.some((q, j) => j !== i && q.name === p.name));
      expect(multi.length).toBeGreaterThan(1);
      const name = multi[0]!.name;
      const versions = multi.filter((p) => p.name === name).map((p) => p.version);
      const multiDoc = await (await fetch(`${own.url}/${name.replace('/', '%2f')}`)).json();
      expect(Object.keys(multiDoc.versions).sort()).toEqual([...versions].sort());
      expect(multiDoc['dist-tags'].latest).toBe(versions[versions.length - 1]); // mirrored is sorted by version

      // The real client, with an empty npm cache: everything it installs came from this registry.
      const env = own.env();
      expect(readdirSync(env.npm_config_cache!)).toEqual([]);
      own.requests.length = 0;
      const dir = prefix();
      const install = await run('npm', ['install', '--prefix', dir, '--ignore-scripts', `${PKG}@${VERSION}`], { env, timeoutMs: 120_000 });
      expect(install.code, install.stderr).toBe(0);
      // No 404 for any dependency; the one request answered 404 is npm asking after an optional
      // peer it then does not install (npm/cli#9876), absent from this repository's node_modules too.
      expect(stats.absentOptional).toEqual(['@cfworker/json-schema']);
      expect(own.notFound).toEqual(stats.absentOptional.map((n) => `GET /${n.replace('/', '%2f')}`));
      expect(existsSync(join(dir, 'node_modules', '@cfworker'))).toBe(false);
      // Every installed name@version is a mirrored one, and its tarball was fetched here.
      // (From npm's hidden lockfile; its `resolved` URLs may be left out by npm config, so the
      // tarball requests are matched by name and version.)
      const tree = JSON.parse(readFileSync(join(dir, 'node_modules', '.package-lock.json'), 'utf8')).packages as Record<string, { version: string }>;
      const mirrored = new Map(own.mirrored.map((p) => [`${p.name}@${p.version}`, p]));
      const entries = Object.entries(tree);
      expect(entries.length).toBeGreaterThan(50);
      for (const [path, entry] of entries) {
        const id = `${path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${entry.version}`;
        expect(mirrored.has(id), id).toBe(true);
        expect(own.requests).toContain(`GET ${new URL(mirrored.get(id)!.tarball).pathname}`);
      }
      expect(own.requests.every((q) => q.startsWith('GET /'))).toBe(true);

      // It works: the bin starts and lists its tools.
      const server = await run(join(dir, 'node_modules', '.bin', 'mcp-server-everything'), [], {
        input: lines(INIT, INITIALIZED, { jsonrpc: '2.0', id: 2, method: 'tools/list' }),
        timeoutMs: 10_000,
      });
      const r = replies(server.stdout);
      expect(r.find((x) => x.id === 1)?.result.serverInfo.name, server.stderr).toBe('mcp-servers/everything');
      expect(r.find((x) => x.id === 2)?.result.tools.length).toBeGreaterThan(10);
    } finally {
      await own.close();
    }
  }, 180_000);

  test('rejects two folders holding the same name@version', async () => {
    await expect(startNpmRegistry({ folders: ['echo-server-1.0.0', 'echo-server-1.0.0'] })).rejects.toThrow(/both @fixture\/echo-server@1\.0\.0/);
  });
});

describe('startPypiIndex', () => {
  let index: PypiIndex;
  let work: string;
  let pip: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'sealmark-test-registries-pypi-'));
    index = await startPypiIndex();
    // Offline: the venv's pip comes from ensurepip's bundled wheel.
    const venv = await run('python3', ['-m', 'venv', join(work, 'v')], { env: index.env() });
    expect(venv.code, venv.stderr).toBe(0);
    pip = join(work, 'v', 'bin', 'pip');
  });
  afterAll(async () => {
    await index?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('serves a PEP 503 index: the project list, the project page under any spelling with #sha256 links, the wheel', async () => {
    expect(index.wheels.map((w) => `${w.name}@${w.version} ${w.filename}`)).toEqual([
      'fixture-echo-server@1.0.0 fixture_echo_server-1.0.0-py3-none-any.whl',
    ]);
    const root = await fetch(`${index.url}/simple/`);
    expect(root.headers.get('content-type')).toContain('text/html');
    expect(await root.text()).toContain('<a href="/simple/fixture-echo-server/">fixture-echo-server</a>');

    const wheel = index.wheels[0]!;
    for (const spelling of ['fixture-echo-server/', 'Fixture_Echo.Server/', 'fixture-echo-server']) {
      const page = await fetch(`${index.url}/simple/${spelling}`);
      expect(page.status, spelling).toBe(200);
      expect(await page.text()).toContain(`href="/files/${wheel.filename}#sha256=${wheel.sha256}"`);
    }
    const bytes = Buffer.from(await (await fetch(wheel.url)).arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(wheel.sha256);
    expect((await fetch(`${index.url}/simple/fixture-missing/`)).status).toBe(404);
    expect((await fetch(`${index.url}/files/nope.whl`)).status).toBe(404);
  });

  test("the wheel is a valid zip whose RECORD lists every file's sha256 and size", async () => {
    const file = join(work, index.wheels[0]!.filename);
    writeFileSync(file, index.wheels[0]!.bytes);
    const check = [
      'import base64, csv, hashlib, io, sys, zipfile',
      'z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None',
      'rec = [n for n in z.namelist() if n.endswith(".dist-info/RECORD")][0]',
      'rows = list(csv.reader(io.StringIO(z.read(rec).decode())))',
      'assert sorted(r[0] for r in rows) == sorted(z.namelist()), (rows, z.namelist())',
      'for p, h, size in rows:',
      '    if p == rec: assert h == "" and size == ""; continue',
      '    d = z.read(p); assert h == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode(), p',
      '    assert int(size) == len(d), p',
      'print(z.read("fixture_echo_server-1.0.0.dist-info/entry_points.txt").decode(), end="")',
    ].join('\n');
    const ran = await run('python3', ['-c', check, file]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe('[console_scripts]\nfixture-echo-server = fixture_echo_server.server:main\n');
  });

  test('pip installs the pinned wheel from the index only, and its console script answers MCP', async () => {
    index.requests.length = 0;
    const install = await run(pip, ['install', '--only-binary', ':all:', 'fixture-echo-server==1.0.0'], { env: index.env() });
    expect(install.code, install.stderr).toBe(0);
    expect(install.stdout).toContain('Successfully installed fixture-echo-server-1.0.0');
    expect(index.requests).toEqual(['GET /simple/fixture-echo-server/', `GET /files/${index.wheels[0]!.filename}`]);

    const server = await run(join(work, 'v', 'bin', 'fixture-echo-server'), [], {
      input: lines(
        INIT,
        INITIALIZED,
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: {} } },
        { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2 } } },
        { jsonrpc: '2.0', id: 5, method: 'nope' },
      ),
    });
    expect(server.code, server.stderr).toBe(0);
    const r = replies(server.stdout);
    expect(r.map((x) => x.id)).toEqual([1, 2, 3, 4, 5]);
    expect(r[0]!.result.serverInfo).toEqual({ name: 'fixture-echo-server', version: '1.0.0' });
    expect(r[1]!.result.tools.map((t: { name: string }) => t.name)).toEqual(['echo', 'add']);
    expect(r[2]!.result).toEqual({ content: [{ type: 'text', text: 'Invalid arguments for tool echo: missing required parameter "text"' }], isError: true });
    expect(r[3]!.result.content[0].text).toBe('3');
    expect(r[4]!.error.code).toBe(-32601);
  });

  test("env() shuts out pip's configured extra indexes and find-links", async () => {
    // idna is a py3-none-any wheel in this machine's local pip config (file:///opt/pypi); elsewhere this is trivially true.
    const ran = await run(pip, ['download', '--no-deps', '--only-binary', ':all:', '-d', join(work, 'dl'), 'idna'], { env: index.env() });
    expect(ran.code).not.toBe(0);
    expect(ran.stderr).toContain('No matching distribution found for idna');
  });

  test('a missing project and error500 mode both fail pip at once, alike at default verbosity; -vv names the 500', async () => {
    const missing = await run(pip, ['install', '--only-binary', ':all:', 'fixture-missing==1.0.0'], { env: index.env() });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('No matching distribution found for fixture-missing==1.0.0');

    index.setMode('error500');
    try {
      index.requests.length = 0;
      // `pip download` always asks the index (`pip install` would find it installed by the test above).
      const get = ['download', '--no-deps', '--only-binary', ':all:', '-d', join(work, 'dl'), 'fixture-echo-server==1.0.0'];
      const failed = await run(pip, get, { env: index.env() });
      expect(failed.code).not.toBe(0);
      expect(failed.stderr).toBe(
        'ERROR: Could not find a version that satisfies the requirement fixture-echo-server==1.0.0 (from versions: none)\n' +
          'ERROR: No matching distribution found for fixture-echo-server==1.0.0\n',
      ); // pip logs index errors at debug level only
      expect(failed.stdout).not.toContain('500');
      expect(failed.ms).toBeLessThan(10_000); // PIP_RETRIES=0: ~0.5 s here
      expect(index.requests).toEqual(['GET /simple/fixture-echo-server/']);

      const verbose = await run(pip, [...get, '-vv'], { env: index.env() });
      expect(verbose.code).not.toBe(0);
      expect(verbose.stdout).toMatch(/Could not fetch URL http:\/\/127\.0\.0\.1:\d+\/simple\/fixture-echo-server\/: .*too many 500 error responses/);
    } finally {
      index.setMode('ok');
    }
  });

  test('hang mode: pip gives up after PIP_TIMEOUT (5 s)', async () => {
    index.setMode('hang');
    try {
      const ran = await run(pip, ['install', '--only-binary', ':all:', 'fixture-hangs==1.0.0'], { env: index.env() });
      expect(ran.code).not.toBe(0);
      expect(ran.ms).toBeGreaterThanOrEqual(5_000);
      expect(ran.ms).toBeLessThan(20_000);
    } finally {
      index.setMode('ok');
    }
  });

  test('close() stops listening and is idempotent', async () => {
    const own = await startPypiIndex();
    expect((await fetch(`${own.url}/simple/`)).status).toBe(200);
    await own.close();
    await expect(fetch(`${own.url}/simple/`)).rejects.toThrow();
    await own.close();
  });
});
