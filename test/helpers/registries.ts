/**
 * Test helpers: loopback package registries, so that the fetch phase (npm install / pip install into
 * sealmark's cache) can be tested without ever leaving 127.0.0.1.
 *
 *   startNpmRegistry()  a minimal npm registry serving the packages under test/fixtures/packages/npm/,
 *                       and (option `mirror`) real packages with their whole dependency closure as
 *                       installed in this repository's node_modules, tarred and gzipped in process
 *   startPypiIndex()    a PEP 503 "simple" index serving wheels built from test/fixtures/packages/pypi/
 *
 * Both listen on 127.0.0.1 on a free port, log every request, can be switched at runtime to answer
 * 500 or to never answer, and remove every temp folder they made on close() (folders are named
 * sealmark-test-* under os.tmpdir(); a process that exits without close() removes them too).
 * test/fixtures/packages/README.md describes the fixture packages.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { devNull, tmpdir } from 'node:os';
import { basename, dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateRawSync, gzipSync } from 'node:zlib';

/** This repository's root: the folder whose node_modules `mirror` packages come from by default. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** test/fixtures/packages/npm/: one folder per package version (package.json + server file). */
export const NPM_FIXTURES_DIR = fileURLToPath(new URL('../fixtures/packages/npm/', import.meta.url));
/** test/fixtures/packages/pypi/: one folder per distribution (pyproject.toml + import package). */
export const PYPI_FIXTURES_DIR = fileURLToPath(new URL('../fixtures/packages/pypi/', import.meta.url));

/**
 * How a registry answers: 'ok' serves normally; 'error500' answers every request with HTTP 500 and
 * a JSON body; 'hang' reads every request and never answers (the socket stays open until the client
 * gives up or close() is called).
 */
export type RegistryMode = 'ok' | 'error500' | 'hang';

export interface LoopbackRegistry {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:41234. */
  readonly url: string;
  /** The current mode. */
  readonly mode: RegistryMode;
  /** Changes how the following requests are answered (requests already hanging stay hung). */
  setMode(mode: RegistryMode): void;
  /**
   * Every request received so far, in arrival order, as `<METHOD> <path as sent>`, e.g.
   * `GET /@fixture%2fecho-server` or `GET /simple/fixture-echo-server/`. Logged in every mode.
   * Tests may clear it (`requests.length = 0`).
   */
  readonly requests: string[];
  /**
   * The requests (as in `requests`) that were answered 404, in arrival order: a package or file the
   * registry does not have. Tests may clear it.
   */
  readonly notFound: string[];
  /**
   * Stops listening, drops open (also hanging) connections and removes this registry's temp folders,
   * including the client cache that env() points at. Idempotent; resolves once the server is closed.
   */
  close(): Promise<void>;
}

export interface NpmEnvOptions {
  /**
   * Make npm give up quickly on a failing registry: no retries (npm_config_fetch_retries=0, and
   * retry waits of 100 ms), so a 500 fails in ~0.4 s instead of after npm's default 2 retries
   * (waits of 10 s and 60 s: ~70 s); and a request timeout of `timeoutMs`
   * (npm_config_fetch_timeout; npm's default is 5 minutes, which 'hang' mode would hit).
   * A 404 needs none of this: npm never retries it (~0.5 s). Default false: npm's own settings.
   */
  failFast?: boolean;
  /** With failFast: npm_config_fetch_timeout in milliseconds. Default 3000. */
  timeoutMs?: number;
}

/** A name@version the npm registry serves. */
export interface NpmServedPackage {
  name: string;
  version: string;
  /** Absolute tarball URL, e.g. http://127.0.0.1:41234/@fixture/echo-server/-/echo-server-1.0.0.tgz. */
  tarball: string;
  /** sha1 of the tarball, hex. */
  shasum: string;
  /** sha512 of the tarball as an SRI string (`sha512-<base64>`). */
  integrity: string;
}

export interface NpmFixturePackage extends NpmServedPackage {
  /** The folder under test/fixtures/packages/npm/ it was packed from. */
  folder: string;
}

export interface NpmMirroredPackage extends NpmServedPackage {
  /** The installed folder it was tarred from (real path), e.g. /work/main/node_modules/express/node_modules/content-type. */
  dir: string;
  /** Files in the tarball. */
  files: number;
  /** Size of the tarball (gzipped), bytes. */
  bytes: number;
  /** Sum of the files' sizes, bytes. */
  unpackedBytes: number;
}

/** What building the mirror took (see StartNpmRegistryOptions.mirror). */
export interface NpmMirrorStats {
  /** name@version pairs served. */
  packages: number;
  files: number;
  /** All tarballs together (gzipped), bytes. */
  bytes: number;
  unpackedBytes: number;
  /** Wall time of walking the tree and building every tarball, ms. */
  ms: number;
  /**
   * Optional dependencies and optional peers that a mirrored package declares but that are not
   * installed, so not served, sorted. npm (11.x) still asks for the packument of an optional peer
   * it will not install (npm/cli#9876) and takes the 404 in its stride: such requests are the only
   * 404s an install of a mirrored package should see.
   */
  absentOptional: string[];
}

export interface NpmRegistry extends LoopbackRegistry {
  /** The fixture packages served, one entry per name@version. */
  readonly packages: readonly NpmFixturePackage[];
  /** The mirrored packages served (option `mirror`), one entry per name@version, sorted; empty without it. */
  readonly mirrored: readonly NpmMirroredPackage[];
  /** What building the mirror took; undefined without `mirror`. */
  readonly mirrorStats: NpmMirrorStats | undefined;
  /**
   * The environment that points the npm client (npm, npx) at this registry, to be merged over
   * process.env: npm_config_registry (this url), npm_config_cache (a temp folder of this registry's,
   * removed on close), update notifier, audit and fund off, and no proxy for 127.0.0.1.
   * Every call returns the same cache folder, and npm's cache matters:
   *  - it keeps tarballs by integrity, so a second install through this env fetches the packument
   *    again but not the tarball. To prove an install was reused, assert that no request arrived;
   *  - on a network error or timeout (mode 'hang', not 'error500') npm quietly falls back to a
   *    cached packument, so a package installed before still installs with the registry down.
   *    Use a package not fetched before (or a fresh registry) to see the failure.
   */
  env(options?: NpmEnvOptions): Record<string, string>;
}

export interface StartNpmRegistryOptions {
  /** Folder names under test/fixtures/packages/npm/ to serve. Default: all of them. */
  folders?: string[];
  /** Initial mode. Default 'ok'. */
  mode?: RegistryMode;
  /**
   * Names of packages installed in `mirrorFrom`'s node_modules (e.g.
   * `['@modelcontextprotocol/server-everything']`) to serve as well, with their whole production
   * dependency closure as installed there, so that `npm install <name>@<installed version>` through
   * env() is satisfied by this registry alone. From each package.json the walk follows
   * `dependencies` and non-optional `peerDependencies` (both must be installed, or the start
   * rejects naming what is missing), and `optionalDependencies` and optional peers when installed;
   * each is resolved as Node does: `<pkg>/node_modules/<dep>` first, then up the tree (never above
   * `mirrorFrom`). Every name@version found (several versions of one name when nested) is tarred from
   * its installed folder in process: entries under `package/`, nested node_modules left out,
   * symlinks skipped, file modes kept, fixed mtimes; gzipped and held in memory for the registry's
   * lifetime. Its packument version is the installed package.json without `_`-prefixed fields, plus
   * `_id` and `dist` {tarball, shasum, integrity} of that tarball; `dist-tags.latest` is the highest
   * version. A name@version both mirrored and a fixture rejects. Default: none.
   */
  mirror?: string[];
  /** The folder whose node_modules `mirror` reads. Default {@link REPO_ROOT}. */
  mirrorFrom?: string;
}

/**
 * Starts a minimal npm registry on 127.0.0.1 (random free port) serving the fixture packages
 * (and, with `mirror`, installed packages with their dependency closure).
 *
 * At start it packs the fixture folders with `npm pack --ignore-scripts` (offline, in an isolated
 * cache; no script runs, nothing touches the network) and keeps the tarballs in memory. It serves
 *   GET /<name>                       the packument (name, dist-tags.latest = highest version,
 *                                     versions[v] = package.json + _id + dist {tarball, shasum,
 *                                     integrity}, plus hasInstallScript when it has one); scoped
 *                                     names as /@scope%2fname or /@scope/name
 *   GET /<name>/-/<base>-<v>.tgz      the tarball (base = name without scope)
 * Anything else gets 404 `{"error":"Not found"}`, as registry.npmjs.org answers.
 *
 * Rejects when a folder is missing or has no valid package.json, two folders hold the same
 * name@version, npm pack fails (with npm's stderr), or a mirrored package or one of its required
 * dependencies is not installed.
 */
export async function startNpmRegistry(options: StartNpmRegistryOptions = {}): Promise<NpmRegistry> {
  const folders = options.folders ?? listDirs(NPM_FIXTURES_DIR);
  const dirs = new TempDirs();
  try {
    const packed = await packNpmFolders(folders, dirs);
    const mirror = options.mirror?.length ? buildNpmMirror(options.mirror, options.mirrorFrom ?? REPO_ROOT) : undefined;
    for (const m of mirror?.packages ?? []) {
      const clash = packed.find((p) => p.manifest.name === m.manifest.name && p.manifest.version === m.manifest.version);
      if (clash) throw new Error(`${m.manifest.name}@${m.manifest.version} is both the npm fixture ${clash.folder} and mirrored from ${m.dir}`);
    }
    const cacheDir = dirs.make('npm-cache');
    const packuments = new Map<string, Record<string, unknown>>();
    const tarballs = new Map<string, Buffer>();
    const packages: NpmFixturePackage[] = [];
    const mirrored: NpmMirroredPackage[] = [];

    const core = await listen(options.mode ?? 'ok', (req, res, url) => {
      let path: string;
      try {
        path = decodeURIComponent(new URL(req.url ?? '/', url).pathname);
      } catch {
        return sendJson(res, 400, { error: 'Bad request' });
      }
      const tarball = tarballs.get(path);
      if (tarball && (req.method === 'GET' || req.method === 'HEAD')) {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': tarball.length });
        return void res.end(req.method === 'HEAD' ? undefined : tarball);
      }
      const packument = packuments.get(path.slice(1));
      if (packument && (req.method === 'GET' || req.method === 'HEAD')) return sendJson(res, 200, packument);
      sendJson(res, 404, { error: 'Not found' });
    }, dirs);

    /** Adds one name@version: its tarball and its packument entry. */
    const serve = (manifest: PackedFolder['manifest'], tgz: Buffer): NpmServedPackage => {
      const base = manifest.name.split('/').pop()!;
      const tarballPath = `/${manifest.name}/-/${base}-${manifest.version}.tgz`;
      const pkg: NpmServedPackage = {
        name: manifest.name,
        version: manifest.version,
        tarball: core.url + tarballPath,
        shasum: createHash('sha1').update(tgz).digest('hex'),
        integrity: `sha512-${createHash('sha512').update(tgz).digest('base64')}`,
      };
      tarballs.set(tarballPath, tgz);
      const doc = (packuments.get(pkg.name) ?? { _id: pkg.name, name: pkg.name, 'dist-tags': {}, versions: {} }) as {
        'dist-tags': Record<string, string>;
        versions: Record<string, unknown>;
      };
      const scripts = (manifest.scripts ?? {}) as Record<string, unknown>;
      doc.versions[pkg.version] = {
        ...manifest,
        _id: `${pkg.name}@${pkg.version}`,
        dependencies: manifest.dependencies ?? {},
        ...(['preinstall', 'install', 'postinstall'].some((s) => s in scripts) ? { hasInstallScript: true } : {}),
        dist: { tarball: pkg.tarball, shasum: pkg.shasum, integrity: pkg.integrity },
      };
      const latest = doc['dist-tags'].latest;
      if (latest === undefined || compareVersions(pkg.version, latest) > 0) doc['dist-tags'].latest = pkg.version;
      packuments.set(pkg.name, doc);
      return pkg;
    };
    for (const p of packed) packages.push({ ...serve(p.manifest, p.tgz), folder: p.folder });
    for (const m of mirror?.packages ?? []) {
      mirrored.push({ ...serve(m.manifest, m.tgz), dir: m.dir, files: m.files, bytes: m.tgz.length, unpackedBytes: m.unpackedBytes });
    }

    // Object.assign onto the handle (not a spread) keeps its live `mode` getter.
    return Object.assign(core.handle, {
      packages,
      mirrored,
      mirrorStats: mirror?.stats,
      env: ({ failFast = false, timeoutMs = 3_000 }: NpmEnvOptions = {}) => ({
        npm_config_registry: core.url,
        npm_config_cache: cacheDir,
        npm_config_update_notifier: 'false',
        npm_config_audit: 'false',
        npm_config_fund: 'false',
        npm_config_noproxy: '127.0.0.1,localhost',
        ...(failFast
          ? { npm_config_fetch_retries: '0', npm_config_fetch_retry_mintimeout: '100', npm_config_fetch_retry_maxtimeout: '100', npm_config_fetch_timeout: String(timeoutMs) }
          : {}),
      }),
    });
  } catch (err) {
    dirs.removeAll();
    throw err;
  }
}

export interface PypiFixtureWheel {
  /** The distribution name as written in pyproject.toml, e.g. fixture-echo-server. */
  name: string;
  version: string;
  /** The folder under test/fixtures/packages/pypi/ it was built from. */
  folder: string;
  /** e.g. fixture_echo_server-1.0.0-py3-none-any.whl */
  filename: string;
  /** Absolute URL of the wheel (without the #sha256 fragment). */
  url: string;
  /** sha256 of the wheel file, hex. */
  sha256: string;
  /** The wheel's bytes. */
  bytes: Buffer;
}

export interface PypiIndex extends LoopbackRegistry {
  /** The wheels served, one per fixture folder. */
  readonly wheels: readonly PypiFixtureWheel[];
  /**
   * The environment that points pip (and uv) at this index, to be merged over process.env:
   * PIP_INDEX_URL / UV_INDEX_URL / UV_DEFAULT_INDEX = `<url>/simple/`, no pip cache, no version check,
   * no retries, a 5 s timeout (PIP_TIMEOUT and its alias PIP_DEFAULT_TIMEOUT, which would otherwise
   * race), and pip's config files, find-links and extra indexes switched off (PIP_CONFIG_FILE=os.devnull,
   * PIP_FIND_LINKS='', PIP_EXTRA_INDEX_URL='') so nothing but this index can satisfy an install;
   * NO_PROXY for 127.0.0.1.
   */
  env(): Record<string, string>;
}

export interface StartPypiIndexOptions {
  /** Folder names under test/fixtures/packages/pypi/ to serve. Default: all of them. */
  folders?: string[];
  /** Initial mode. Default 'ok'. */
  mode?: RegistryMode;
}

/**
 * Starts a PEP 503 "simple" index on 127.0.0.1 (random free port) serving one py3-none-any wheel per
 * fixture folder, built in memory at start (no Python involved). It serves
 *   GET /simple/                 an HTML list of the projects
 *   GET /simple/<name>/          the project page: <a href="/files/<wheel>#sha256=<hex>"> per wheel;
 *                                any spelling that normalizes (PEP 503) to the project's name works
 *   GET /files/<wheel>           the wheel
 * Anything else gets 404. The wheel holds the folder's import packages, METADATA, WHEEL, a
 * console_scripts entry_points.txt from [project.scripts] and a RECORD with sha256 hashes.
 *
 * Rejects when a folder lacks a pyproject.toml with [project] name and version, or an import package.
 */
export async function startPypiIndex(options: StartPypiIndexOptions = {}): Promise<PypiIndex> {
  const folders = options.folders ?? listDirs(PYPI_FIXTURES_DIR);
  const dirs = new TempDirs();
  const built = folders.map(buildWheel);
  const byProject = new Map<string, typeof built>();
  for (const w of built) byProject.set(normalizeProject(w.name), [...(byProject.get(normalizeProject(w.name)) ?? []), w]);

  const core = await listen(options.mode ?? 'ok', (req, res, url) => {
    let path: string;
    try {
      path = decodeURIComponent(new URL(req.url ?? '/', url).pathname);
    } catch {
      return sendHtml(res, 400, '<h1>400 Bad Request</h1>');
    }
    const isRead = req.method === 'GET' || req.method === 'HEAD';
    if (isRead && path === '/simple/') {
      const links = [...byProject.keys()].map((p) => `<a href="/simple/${p}/">${p}</a><br/>`);
      return sendHtml(res, 200, simplePage('Simple index', links));
    }
    const project = /^\/simple\/([^/]+)\/?$/.exec(path);
    const wheels = project ? byProject.get(normalizeProject(project[1]!)) : undefined;
    if (isRead && project && wheels) {
      const links = wheels.map((w) => {
        const py = w.requiresPython ? ` data-requires-python="${escapeHtml(w.requiresPython)}"` : '';
        return `<a href="/files/${w.filename}#sha256=${w.sha256}"${py}>${w.filename}</a><br/>`;
      });
      return sendHtml(res, 200, simplePage(`Links for ${project[1]}`, links));
    }
    const file = /^\/files\/([^/]+)$/.exec(path);
    const wheel = file ? built.find((w) => w.filename === file[1]) : undefined;
    if (isRead && wheel) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': wheel.bytes.length });
      return void res.end(req.method === 'HEAD' ? undefined : wheel.bytes);
    }
    sendHtml(res, 404, '<h1>404 Not Found</h1>');
  }, dirs);

  const index = `${core.url}/simple/`;
  return Object.assign(core.handle, {
    wheels: built.map(({ requiresPython: _, ...w }) => ({ ...w, url: `${core.url}/files/${w.filename}` })),
    env: () => ({
      PIP_INDEX_URL: index,
      UV_INDEX_URL: index,
      UV_DEFAULT_INDEX: index,
      PIP_DISABLE_PIP_VERSION_CHECK: '1',
      PIP_NO_CACHE_DIR: '1',
      PIP_RETRIES: '0',
      PIP_TIMEOUT: '5',
      PIP_DEFAULT_TIMEOUT: '5',
      PIP_CONFIG_FILE: devNull,
      PIP_FIND_LINKS: '',
      PIP_EXTRA_INDEX_URL: '',
      NO_PROXY: '127.0.0.1,localhost',
      no_proxy: '127.0.0.1,localhost',
    }),
  });
}

// ---------------------------------------------------------------------------------------------
// The shared HTTP core: loopback listener, modes, request log, close.

type Handler = (req: IncomingMessage, res: ServerResponse, base: string) => void;

async function listen(
  initialMode: RegistryMode,
  handler: Handler,
  dirs: TempDirs,
): Promise<{ url: string; handle: LoopbackRegistry }> {
  let mode = initialMode;
  const requests: string[] = [];
  const notFound: string[] = [];
  const server = createServer((req, res) => {
    const line = `${req.method} ${req.url}`;
    requests.push(line);
    res.once('finish', () => {
      if (res.statusCode === 404) notFound.push(line);
    });
    req.resume(); // drain any body
    if (mode === 'hang') return;
    if (mode === 'error500') return sendJson(res, 500, { error: 'Internal Server Error' });
    handler(req, res, url);
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  let closing: Promise<void> | undefined;
  const handle: LoopbackRegistry = {
    url,
    get mode() {
      return mode;
    },
    setMode(next: RegistryMode) {
      mode = next;
    },
    requests,
    notFound,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }).finally(() => dirs.removeAll())),
  };
  return { url, handle };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(html) });
  res.end(html);
}

/** Temp folders sealmark-test-<what>-XXXXXX under os.tmpdir(), removed on removeAll() or at process exit. */
class TempDirs {
  private readonly dirs: string[] = [];
  private readonly onExit = (): void => this.removeAll();

  make(what: string): string {
    if (this.dirs.length === 0) process.once('exit', this.onExit);
    const dir = mkdtempSync(join(tmpdir(), `sealmark-test-${what}-`));
    this.dirs.push(dir);
    return dir;
  }

  /** Removes one folder made here now (e.g. a scratch folder no longer needed). */
  remove(dir: string): void {
    rmSync(dir, { recursive: true, force: true });
    const i = this.dirs.indexOf(dir);
    if (i >= 0) this.dirs.splice(i, 1);
  }

  removeAll(): void {
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    process.removeListener('exit', this.onExit);
  }
}

function listDirs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

// ---------------------------------------------------------------------------------------------
// npm: packing the fixture folders.

interface PackedFolder {
  folder: string;
  manifest: { name: string; version: string; [key: string]: unknown };
  tgz: Buffer;
}

async function packNpmFolders(folders: string[], dirs: TempDirs): Promise<PackedFolder[]> {
  const manifests = folders.map((folder) => {
    const file = join(NPM_FIXTURES_DIR, folder, 'package.json');
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as PackedFolder['manifest'];
    if (typeof manifest.name !== 'string' || typeof manifest.version !== 'string') {
      throw new Error(`${file}: package.json needs a name and a version`);
    }
    return { folder, manifest };
  });
  const seen = new Map<string, string>();
  for (const { folder, manifest } of manifests) {
    const id = `${manifest.name}@${manifest.version}`;
    if (seen.has(id)) throw new Error(`npm fixtures ${seen.get(id)} and ${folder} are both ${id}`);
    seen.set(id, folder);
  }
  if (folders.length === 0) return [];

  const scratch = dirs.make('npm-pack');
  try {
    const out = await new Promise<string>((resolve, reject) => {
      execFile(
        'npm',
        ['pack', '--ignore-scripts', '--json', '--pack-destination', scratch, ...folders.map((f) => join(NPM_FIXTURES_DIR, f))],
        {
          cwd: scratch,
          timeout: 60_000,
          env: {
            ...process.env,
            npm_config_cache: join(scratch, 'cache'),
            npm_config_offline: 'true',
            npm_config_registry: 'http://127.0.0.1:9/', // never used (offline); never the real one
            npm_config_update_notifier: 'false',
            npm_config_audit: 'false',
            npm_config_fund: 'false',
          },
        },
        (err, stdout, stderr) => (err ? reject(new Error(`npm pack failed: ${err.message}\n${stderr}`)) : resolve(stdout)),
      );
    });
    const results = JSON.parse(out) as { name: string; version: string; filename: string }[];
    return manifests.map(({ folder, manifest }) => {
      const r = results.find((x) => x.name === manifest.name && x.version === manifest.version);
      if (!r) throw new Error(`npm pack printed no result for ${manifest.name}@${manifest.version}`);
      return { folder, manifest, tgz: readFileSync(join(scratch, r.filename)) };
    });
  } finally {
    dirs.remove(scratch);
  }
}

/** Compares dotted numeric versions (1.10.0 > 1.9.0); a pre-release suffix sorts before its release. */
function compareVersions(a: string, b: string): number {
  const parse = (v: string): { nums: number[]; pre: boolean } => {
    const [core = '', pre] = v.split('-', 2);
    return { nums: core.split('.').map(Number), pre: pre !== undefined };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < Math.max(x.nums.length, y.nums.length); i++) {
    const d = (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
    if (d !== 0) return d;
  }
  return Number(y.pre) - Number(x.pre);
}

// ---------------------------------------------------------------------------------------------
// npm: mirroring installed packages (with their dependency closure) from a node_modules tree.

interface MirroredBuild {
  manifest: PackedFolder['manifest'];
  dir: string;
  tgz: Buffer;
  files: number;
  unpackedBytes: number;
}

/** npm pack's fixed mtime for every entry (1985-10-26T08:15:00Z), so tarballs do not depend on when they were built. */
const NPM_MTIME = 499162500;

/**
 * Walks the dependency closure of `names` as installed under `root`/node_modules and tars every
 * name@version found (see StartNpmRegistryOptions.mirror).
 */
function buildNpmMirror(names: string[], root: string): { packages: MirroredBuild[]; stats: NpmMirrorStats } {
  const started = Date.now();
  const top = realpathSync(root);
  const byId = new Map<string, MirroredBuild>();
  const visited = new Set<string>(); // real dirs
  const absentOptional = new Set<string>();
  const queue: string[] = [];

  const readManifest = (dir: string): PackedFolder['manifest'] => {
    const file = join(dir, 'package.json');
    const raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    if (typeof raw.name !== 'string' || typeof raw.version !== 'string') throw new Error(`${file}: package.json needs a name and a version`);
    return Object.fromEntries(Object.entries(raw).filter(([k]) => !k.startsWith('_'))) as PackedFolder['manifest'];
  };

  for (const name of names) {
    const dir = resolveInstalled(name, top, top);
    if (!dir) throw new Error(`mirror: ${name} is not installed in ${join(top, 'node_modules')}`);
    queue.push(dir);
  }
  while (queue.length > 0) {
    const dir = queue.shift()!;
    if (visited.has(dir)) continue;
    visited.add(dir);
    const manifest = readManifest(dir);
    const id = `${manifest.name}@${manifest.version}`;
    if (manifest.bundleDependencies || manifest.bundledDependencies) throw new Error(`mirror: ${id} bundles dependencies, which the mirror does not support`);
    if (!byId.has(id)) byId.set(id, { manifest, dir, ...tarPackage(dir) });

    const deps = (field: string): string[] => Object.keys((manifest[field] ?? {}) as Record<string, unknown>);
    const peerMeta = (manifest.peerDependenciesMeta ?? {}) as Record<string, { optional?: boolean }>;
    const required = [...deps('dependencies'), ...deps('peerDependencies').filter((d) => peerMeta[d]?.optional !== true)];
    const optional = [...deps('optionalDependencies'), ...deps('peerDependencies').filter((d) => peerMeta[d]?.optional === true)];
    for (const dep of new Set([...required, ...optional])) {
      const found = resolveInstalled(dep, dir, top);
      if (found) queue.push(found);
      else if (required.includes(dep) && !optional.includes(dep)) {
        throw new Error(`mirror: ${id} (${dir}) depends on ${dep}, which is not installed where Node would find it`);
      } else absentOptional.add(dep);
    }
  }

  const packages = [...byId.values()].sort((a, b) => a.manifest.name.localeCompare(b.manifest.name) || compareVersions(a.manifest.version, b.manifest.version));
  const stats: NpmMirrorStats = {
    packages: packages.length,
    files: packages.reduce((n, p) => n + p.files, 0),
    bytes: packages.reduce((n, p) => n + p.tgz.length, 0),
    unpackedBytes: packages.reduce((n, p) => n + p.unpackedBytes, 0),
    ms: Date.now() - started,
    absentOptional: [...absentOptional].filter((name) => !packages.some((p) => p.manifest.name === name)).sort(),
  };
  return { packages, stats };
}

/**
 * Where Node finds package `name` from a package folder `from`: `<from>/node_modules/<name>`,
 * then `<ancestor>/node_modules/<name>` for each ancestor (skipping node_modules folders
 * themselves), never above `top`. The real path of the folder, or undefined.
 */
function resolveInstalled(name: string, from: string, top: string): string | undefined {
  for (let dir = from; ; ) {
    if (basename(dir) !== 'node_modules') {
      const candidate = join(dir, 'node_modules', ...name.split('/'));
      if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    }
    if (dir === top || !(dir + sep).startsWith(top + sep)) return undefined;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** A gzipped tarball of an installed package folder: regular files under `package/`, node_modules left out. */
function tarPackage(dir: string): { tgz: Buffer; files: number; unpackedBytes: number } {
  const blocks: Buffer[] = [];
  let files = 0;
  let unpackedBytes = 0;
  const walk = (sub: string): void => {
    const entries = readdirSync(join(dir, sub), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(rel);
      } else if (entry.isFile()) {
        const full = join(dir, rel);
        const data = readFileSync(full);
        blocks.push(...tarEntry(`package/${rel}`, statSync(full).mode & 0o777, data));
        files++;
        unpackedBytes += data.length;
      } // symlinks and anything else: left out, as npm pack does
    }
  };
  walk('');
  blocks.push(Buffer.alloc(1024)); // end of archive: two zero blocks
  return { tgz: gzipSync(Buffer.concat(blocks)), files, unpackedBytes };
}

/**
 * One ustar file entry (header, data, padding). A path too long for ustar's name (100 bytes) is
 * split over its prefix field (155 bytes) at a `/`; one that cannot be split so gets a PAX `path`
 * record before it.
 */
function tarEntry(path: string, mode: number, data: Buffer): Buffer[] {
  const out: Buffer[] = [];
  const full = Buffer.from(path, 'utf8');
  let name = full;
  let prefix = Buffer.alloc(0);
  if (full.length > 100) {
    let split = -1;
    for (let i = full.length - 1; i >= 0; i--) {
      if (full[i] === 0x2f && i <= 155 && full.length - i - 1 <= 100 && full.length - i - 1 > 0) {
        split = i;
        break;
      }
    }
    if (split >= 0) {
      prefix = full.subarray(0, split);
      name = full.subarray(split + 1);
    } else {
      const record = paxRecord('path', path);
      out.push(tarHeader(Buffer.from('PaxHeader/entry', 'utf8'), Buffer.alloc(0), 0o644, record.length, 'x'), ...padded(record));
      name = full.subarray(full.length - 100); // a fallback that readers ignore in favour of the PAX path
    }
  }
  out.push(tarHeader(name, prefix, mode, data.length, '0'), ...padded(data));
  return out;
}

/** A PAX extended header record `<length> <key>=<value>\n`, the length counting itself. */
function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`;
  const bodyLen = Buffer.byteLength(body);
  let len = bodyLen + String(bodyLen).length;
  if (String(len).length > String(bodyLen).length) len++; // the length grew a digit
  return Buffer.from(`${len}${body}`, 'utf8');
}

function padded(data: Buffer): Buffer[] {
  const rest = data.length % 512;
  return rest === 0 ? [data] : [data, Buffer.alloc(512 - rest)];
}

function tarHeader(name: Buffer, prefix: Buffer, mode: number, size: number, type: '0' | 'x'): Buffer {
  const h = Buffer.alloc(512);
  const octal = (value: number, offset: number, width: number): void => {
    h.write(value.toString(8).padStart(width - 1, '0') + '\0', offset, width, 'ascii');
  };
  name.copy(h, 0, 0, 100);
  octal(mode, 100, 8);
  octal(0, 108, 8); // uid
  octal(0, 116, 8); // gid
  octal(size, 124, 12);
  octal(NPM_MTIME, 136, 12);
  h.fill(0x20, 148, 156); // checksum field counts as spaces
  h.write(type, 156, 1, 'ascii');
  h.write('ustar\0', 257, 6, 'ascii');
  h.write('00', 263, 2, 'ascii');
  prefix.copy(h, 345, 0, 155);
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'ascii');
  return h;
}

// ---------------------------------------------------------------------------------------------
// pypi: building wheels.

interface BuiltWheel {
  name: string;
  version: string;
  folder: string;
  filename: string;
  sha256: string;
  bytes: Buffer;
  requiresPython: string | undefined;
}

/** PEP 503 normalized project name. */
function normalizeProject(name: string): string {
  return name.replace(/[-_.]+/g, '-').toLowerCase();
}

/**
 * Reads the `key = "string"` lines of a pyproject.toml's [project] and [project.scripts] tables
 * (all the fixtures need; not a TOML parser).
 */
function readPyproject(file: string): { project: Record<string, string>; scripts: Record<string, string> } {
  const tables: Record<string, Record<string, string>> = {};
  let table = '';
  for (const raw of readFileSync(file, 'utf8').split(/\r?\n/)) {
    const line = raw.trim();
    const header = /^\[([^\]]+)\]$/.exec(line);
    if (header) table = header[1]!.trim();
    const pair = /^("?)([A-Za-z0-9_.-]+)\1\s*=\s*"((?:[^"\\]|\\.)*)"\s*(#.*)?$/.exec(line);
    if (pair) (tables[table] ??= {})[pair[2]!] = JSON.parse(`"${pair[3]!}"`) as string;
  }
  return { project: tables['project'] ?? {}, scripts: tables['project.scripts'] ?? {} };
}

function buildWheel(folder: string): BuiltWheel {
  const root = join(PYPI_FIXTURES_DIR, folder);
  const pyproject = join(root, 'pyproject.toml');
  const { project, scripts } = readPyproject(pyproject);
  const { name, version } = project;
  if (!name || !version) throw new Error(`${pyproject}: [project] needs name and version`);

  const files: [string, Buffer][] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== '__pycache__') walk(full);
      else if (entry.isFile() && !entry.name.endsWith('.pyc')) files.push([relative(root, full).split(sep).join('/'), readFileSync(full)]);
    }
  };
  const packages = listDirs(root).filter((d) => d !== '__pycache__' && statSync(join(root, d, '__init__.py'), { throwIfNoEntry: false }));
  if (packages.length === 0) throw new Error(`${root}: no import package (a folder with __init__.py)`);
  for (const p of packages) walk(join(root, p));

  const dist = name.replace(/[^\w.]+/g, '_').replace(/[-_.]+/g, '_');
  const distInfo = `${dist}-${version}.dist-info`;
  const metadata = [
    'Metadata-Version: 2.1',
    `Name: ${name}`,
    `Version: ${version}`,
    ...(project.description ? [`Summary: ${project.description}`] : []),
    ...(project['requires-python'] ? [`Requires-Python: ${project['requires-python']}`] : []),
    '',
  ].join('\n');
  files.push([`${distInfo}/METADATA`, Buffer.from(metadata)]);
  files.push([`${distInfo}/WHEEL`, Buffer.from('Wheel-Version: 1.0\nGenerator: sealmark-test-registries\nRoot-Is-Purelib: true\nTag: py3-none-any\n')]);
  const entries = Object.entries(scripts);
  if (entries.length) {
    files.push([`${distInfo}/entry_points.txt`, Buffer.from(`[console_scripts]\n${entries.map(([k, v]) => `${k} = ${v}\n`).join('')}`)]);
  }
  files.push([`${distInfo}/top_level.txt`, Buffer.from(packages.map((p) => `${p}\n`).join(''))]);
  const record = files.map(([path, data]) => `${path},sha256=${createHash('sha256').update(data).digest('base64url')},${data.length}\n`);
  files.push([`${distInfo}/RECORD`, Buffer.from(`${record.join('')}${distInfo}/RECORD,,\n`)]);

  const bytes = zip(files);
  return {
    name,
    version,
    folder,
    filename: `${dist}-${version}-py3-none-any.whl`,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    bytes,
    requiresPython: project['requires-python'],
  };
}

function simplePage(title: string, links: string[]): string {
  return `<!DOCTYPE html>\n<html><head><meta name="pypi:repository-version" content="1.0"><title>${escapeHtml(title)}</title></head>\n<body><h1>${escapeHtml(title)}</h1>\n${links.join('\n')}\n</body></html>\n`;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

// ---------------------------------------------------------------------------------------------
// A minimal zip writer (deflate, fixed 1980-01-01 timestamps, regular files with mode 0644).

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (const byte of data) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function zip(files: [string, Buffer][]): Buffer {
  const DOS_DATE = (0 << 9) | (1 << 5) | 1; // 1980-01-01
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [path, data] of files) {
    const name = Buffer.from(path, 'utf8');
    const packed = deflateRawSync(data);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // flags: UTF-8 names
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt16LE(0, 10); // time
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28); // extra length
    locals.push(local, name, packed);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by: unix, 2.0
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(DOS_DATE, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    // extra, comment, disk start, internal attributes: 0
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38); // external attributes: regular file, rw-r--r--
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + packed.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}
