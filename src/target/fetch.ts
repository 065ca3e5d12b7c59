/**
 * The fetch phase (SPEC section 3, step 0): a launched package is installed with the network on,
 * outside the sandbox, into a cache of sealmark's own, so that the server can then be started from
 * that install inside the sandbox with no network at all.
 *
 * - npm: `npm install --prefix <dir> --ignore-scripts <name>@<version>` (the user's npm settings,
 *   such as `npm_config_registry` and `.npmrc`, apply as they would to npx); the server is the
 *   package's bin, as npx picks it.
 * - pypi: a virtual environment made by `python3 -m venv` at its final place (a venv cannot be
 *   moved), then `pip install --only-binary :all: <name>==<version>` (`PIP_INDEX_URL`, or uv's
 *   `UV_INDEX_URL`/`UV_DEFAULT_INDEX`, apply); the server is the distribution's console script, as
 *   uvx and `pipx run` pick it.
 * - oci: `docker pull` unless the image is present; the server is `docker run -i --rm --network
 *   none … image`.
 *
 * Install scripts (npm lifecycle scripts, Python source builds) are off unless
 * `allowInstallScripts`. An install is done once per package version and reused: its folder holds
 * a marker written last, so an interrupted install is never taken for a finished one.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { packageLabel, recognizeLauncher, type Launch, type PackageRef } from './launch.js';
import { findExecutable } from './sandbox.js';

/** Options of {@link fetchLaunch}. Times in ms. */
export interface FetchOptions {
  /** The cache root (default {@link sealmarkCacheDir}). */
  cacheDir?: string;
  /** `--allow-install-scripts`: npm lifecycle scripts run, pip may build from source. */
  allowInstallScripts?: boolean;
  /** The environment the installers run in (default: sealmark's own, so the user's registry settings apply). */
  env?: NodeJS.ProcessEnv;
  /** Longest an install may take before it is ended and reported (default 300,000). */
  timeoutMs?: number;
}

/** A package that is installed and ready to start. */
export interface Installed {
  ok: true;
  /** The package with its exact, resolved version. */
  package: PackageRef & { version: string };
  /** How to start the server: the installed executable and its arguments (the launch's own included). */
  command: string;
  args: string[];
  /** The install's folder in the cache. */
  dir: string;
  /** True when an earlier audit's install was used (nothing was downloaded). */
  reused: boolean;
  /** ms the fetch took. */
  ms: number;
}

/** A fetch that failed: a not-audited reason (exit 3) naming the package and the installer's error. */
export interface FetchFailed {
  ok: false;
  /** `fetch-failed`: the installer failed; `not-runnable`: the package installed but has nothing to run, or the launcher is missing. */
  reason: 'fetch-failed' | 'not-runnable';
  /** One line: `cannot fetch npm package @x/y@1.0.0: npm error 404 Not Found - GET …`. */
  message: string;
  /** The installer's own error lines, as it printed them (at most a few lines). */
  detail: string;
}

/**
 * sealmark's cache root: `$SEALMARK_CACHE`, else `$XDG_CACHE_HOME/sealmark`, else
 * `~/.cache/sealmark`.
 */
export function sealmarkCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SEALMARK_CACHE) return env.SEALMARK_CACHE;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, 'sealmark');
  return join(homedir(), '.cache', 'sealmark');
}

/** An exact version (semver or PEP 440 release), as opposed to a range or a tag. */
const EXACT_NPM = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/**
 * Fetches and installs the package of `launch`. Never rejects: every failure (a package that does
 * not exist, a registry that refuses, a missing installer, a time-out) is a {@link FetchFailed}.
 */
export async function fetchLaunch(launch: Launch, options: FetchOptions = {}): Promise<Installed | FetchFailed> {
  const started = Date.now();
  const opts = { cacheDir: options.cacheDir ?? sealmarkCacheDir(options.env), env: options.env ?? process.env, timeoutMs: options.timeoutMs ?? 300_000, scripts: options.allowInstallScripts === true };
  try {
    const r = launch.package.ecosystem === 'npm' ? await fetchNpm(launch, opts) : launch.package.ecosystem === 'pypi' ? await fetchPypi(launch, opts) : await fetchOci(launch, opts);
    if (r.ok) r.ms = Date.now() - started;
    return r;
  } catch (err) {
    return failed('fetch-failed', launch.package, err instanceof Error ? err.message : String(err));
  }
}

interface Opts {
  cacheDir: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  scripts: boolean;
}

function failed(reason: FetchFailed['reason'], ref: PackageRef, detail: string, what = 'cannot fetch'): FetchFailed {
  const first = detail.split('\n').find((l) => l.trim() !== '') ?? detail;
  return { ok: false, reason, message: `${what} ${ref.ecosystem} package ${packageLabel(ref)}: ${first.trim()}`, detail: detail.trim() };
}

/** The folder name of a package in the cache (`@scope/name` → `@scope+name`). */
function slug(s: string): string {
  return s.replace(/[/\\:]/g, '+');
}

const MARKER = '.sealmark-installed.json';

// ---------------------------------------------------------------------------------------------- npm

async function fetchNpm(launch: Launch, o: Opts): Promise<Installed | FetchFailed> {
  const ref = launch.package;
  if (!findExecutable('npm', o.env.PATH)) return failed('not-runnable', ref, 'npm is not on PATH (it installs npm packages)');
  const npmEnv: NodeJS.ProcessEnv = { ...o.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false', npm_config_yes: 'true' };
  // A registry that answers 5xx is retried by npm for a minute by default: one quick retry here.
  npmEnv.npm_config_fetch_retries ??= '1';
  npmEnv.npm_config_fetch_retry_mintimeout ??= '1000';
  npmEnv.npm_config_fetch_retry_maxtimeout ??= '2000';
  // A registry that never answers would hold npm for its default 5 minutes per request.
  npmEnv.npm_config_fetch_timeout ??= '30000';
  let version = ref.version;
  if (version === undefined || !EXACT_NPM.test(version)) {
    const view = await run('npm', ['view', `${ref.name}@${version ?? 'latest'}`, 'version', '--json'], { env: npmEnv, timeoutMs: o.timeoutMs });
    if (view.code !== 0) return failed('fetch-failed', ref, npmError(view));
    const parsed = safeJson(view.stdout.trim());
    // npm lists the matching versions in no particular order: npx would take the highest.
    const v = Array.isArray(parsed) ? parsed.filter((x): x is string => typeof x === 'string').sort(compareSemver).at(-1) : parsed;
    if (typeof v !== 'string') return failed('fetch-failed', ref, `no version of ${ref.name} matches ${JSON.stringify(version ?? 'latest')}`);
    version = v;
  }
  const exact = { ...ref, version };
  const dir = join(o.cacheDir, 'npm', `${slug(ref.name)}@${version}`);
  if (!existsSync(join(dir, MARKER))) {
    mkdirSync(join(o.cacheDir, 'npm'), { recursive: true });
    const tmp = mkdtempSync(join(o.cacheDir, 'npm', '.install-'));
    partial.add(tmp);
    try {
      writeFileSync(join(tmp, 'package.json'), '{"private":true}\n');
      const args = ['install', '--prefix', tmp, '--no-save', '--no-package-lock', '--omit=dev', '--loglevel=error', ...(o.scripts ? [] : ['--ignore-scripts']), `${ref.name}@${version}`];
      const r = await run('npm', args, { env: npmEnv, timeoutMs: o.timeoutMs, cwd: tmp });
      if (r.code !== 0) return failed('fetch-failed', exact, npmError(r));
      writeFileSync(join(tmp, MARKER), JSON.stringify({ ecosystem: 'npm', name: ref.name, version, installedAt: new Date().toISOString() }) + '\n');
      // Another audit may have finished the same install meanwhile: its folder is in use, and kept.
      if (existsSync(join(dir, MARKER))) return npmStart(launch, exact, dir, true);
      if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
      renameSync(tmp, dir);
    } finally {
      partial.delete(tmp);
      if (existsSync(tmp)) rmSync(tmp, { recursive: true, force: true });
    }
    return npmStart(launch, exact, dir, false);
  }
  return npmStart(launch, exact, dir, true);
}

/** The bin npx would run: the one named, else the only one, else the one named like the package. */
function npmStart(launch: Launch, ref: PackageRef & { version: string }, dir: string, reused: boolean): Installed | FetchFailed {
  let manifest: { bin?: unknown; name?: unknown };
  try {
    manifest = JSON.parse(readFileSync(join(dir, 'node_modules', ref.name, 'package.json'), 'utf8')) as typeof manifest;
  } catch (err) {
    return failed('not-runnable', ref, `the installed package has no readable package.json (${(err as NodeJS.ErrnoException).code ?? String(err)})`, 'cannot start');
  }
  const unscoped = ref.name.slice(ref.name.lastIndexOf('/') + 1);
  const bins = typeof manifest.bin === 'string' ? [unscoped] : typeof manifest.bin === 'object' && manifest.bin !== null ? Object.keys(manifest.bin) : [];
  let bin = ref.bin;
  if (bin === undefined) {
    if (bins.length === 1) bin = bins[0];
    else if (bins.includes(unscoped)) bin = unscoped;
    else if (bins.length === 0) return failed('not-runnable', ref, 'the package declares no bin: there is no server to start', 'cannot start');
    else return failed('not-runnable', ref, `the package has several bins (${bins.join(', ')}) and none is named like it: pick one with npx -p ${ref.name}@${ref.version} <bin>`, 'cannot start');
  }
  const command = join(dir, 'node_modules', '.bin', bin!);
  if (!existsSync(command)) return failed('not-runnable', ref, `the package has no bin named ${bin} (it has: ${bins.join(', ') || 'none'})`, 'cannot start');
  return { ok: true, package: ref, command, args: launch.args, dir, reused, ms: 0 };
}

/** npm's error lines (`npm error …` / `npm ERR! …`), without the pointer to its debug log. */
function npmError(r: RunResult): string {
  if (r.timedOut) return `npm did not finish within ${Math.round(r.timeoutMs / 1000)} s`;
  const lines = r.stderr.split('\n').filter((l) => /^npm (error|ERR!)/.test(l) && !/complete log of this run|A complete log/.test(l) && l.replace(/^npm (error|ERR!)\s*/, '').trim() !== '');
  // `code`, `errno` and `syscall` lines are npm's bookkeeping: the code is kept, the sentence told.
  const text = lines.map((l) => l.replace(/^npm (error|ERR!)\s*/, '')).filter((l) => !/^(code|errno|syscall) \S+$/.test(l));
  const code = /^npm (?:error|ERR!) code (\S+)/m.exec(r.stderr)?.[1];
  const body = text.slice(0, 3).join('; ') || r.stderr.trim().split('\n').slice(-3).join('; ') || `npm exited with code ${r.code}`;
  return code ? `${body} (${code})` : body;
}

// --------------------------------------------------------------------------------------------- pypi

async function fetchPypi(launch: Launch, o: Opts): Promise<Installed | FetchFailed> {
  const ref = launch.package;
  const python = findExecutable('python3', o.env.PATH) ?? findExecutable('python', o.env.PATH);
  if (!python) return failed('not-runnable', ref, 'python3 is not on PATH (it installs pypi packages)');
  const pipEnv: NodeJS.ProcessEnv = { ...o.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1' };
  // The user's uv settings say where their Python packages come from, as uvx would read them.
  pipEnv.PIP_INDEX_URL ??= o.env.UV_INDEX_URL ?? o.env.UV_DEFAULT_INDEX;
  if (pipEnv.PIP_INDEX_URL === undefined) delete pipEnv.PIP_INDEX_URL;
  pipEnv.PIP_RETRIES ??= '1';
  pipEnv.PIP_TIMEOUT ??= '15';
  const binaryOnly = o.scripts ? [] : ['--only-binary', ':all:'];
  const installed = (v: string) => join(o.cacheDir, 'pypi', `${slug(ref.name)}==${v}`);
  let version = ref.version;
  // An exact version installed before starts with no look at the index at all.
  if (version === undefined || !existsSync(join(installed(version), MARKER))) {
    // pip resolves the version without installing anything (pip ≥ 22.2): a distribution the index
    // does not have fails here, in a second, before a virtual environment is made for it.
    const spec = version === undefined ? ref.name : `${ref.name}==${version}`;
    const r = await run(python, ['-m', 'pip', 'install', '--dry-run', '--quiet', '--no-deps', '--ignore-installed', '--report', '-', ...binaryOnly, spec], { env: pipEnv, timeoutMs: o.timeoutMs });
    const report = safeJson(r.stdout) as { install?: { metadata?: { version?: unknown } }[] } | undefined;
    const v = report?.install?.[0]?.metadata?.version;
    if (r.code !== 0 || typeof v !== 'string') return failed('fetch-failed', ref, pipError(r));
    version = v;
  }
  const exact = { ...ref, version };
  const dir = installed(version);
  const reused = existsSync(join(dir, MARKER));
  if (!reused) {
    // A folder without the marker is an install that was interrupted: it is made again.
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(o.cacheDir, 'pypi'), { recursive: true });
    partial.add(dir);
    const venv = await run(python, ['-m', 'venv', dir], { env: pipEnv, timeoutMs: o.timeoutMs });
    if (venv.code !== 0) {
      partial.delete(dir);
      rmSync(dir, { recursive: true, force: true });
      return failed('not-runnable', exact, `python3 -m venv failed: ${lastLines(venv.stderr) || `exit ${venv.code}`}`, 'cannot install');
    }
    const r = await run(join(dir, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', ...binaryOnly, `${ref.name}==${version}`], { env: pipEnv, timeoutMs: o.timeoutMs });
    if (r.code !== 0) {
      partial.delete(dir);
      rmSync(dir, { recursive: true, force: true });
      return failed('fetch-failed', exact, pipError(r));
    }
    writeFileSync(join(dir, MARKER), JSON.stringify({ ecosystem: 'pypi', name: ref.name, version, installedAt: new Date().toISOString() }) + '\n');
    partial.delete(dir);
  }
  return pypiStart(launch, exact, dir, reused);
}

/** The console script uvx would run: the one named, else the one named like the distribution, else the only one. */
async function pypiStart(launch: Launch, ref: PackageRef & { version: string }, dir: string, reused: boolean): Promise<Installed | FetchFailed> {
  const dist = ref.name.replace(/\[.*\]$/, '');
  const script = 'import importlib.metadata as m, json, sys\nd = m.distribution(sys.argv[1])\nprint(json.dumps([e.name for e in d.entry_points if e.group == "console_scripts"]))';
  const r = await run(join(dir, 'bin', 'python'), ['-c', script, dist], { env: { PATH: process.env.PATH ?? '' }, timeoutMs: 30_000 });
  const scripts = safeJson(r.stdout.trim());
  if (r.code !== 0 || !Array.isArray(scripts)) return failed('not-runnable', ref, `cannot read the installed distribution's entry points: ${lastLines(r.stderr)}`, 'cannot start');
  const norm = (s: string) => s.toLowerCase().replace(/[-_.]+/g, '-');
  const names = scripts.filter((s): s is string => typeof s === 'string');
  const bin = ref.bin ?? names.find((s) => norm(s) === norm(dist)) ?? (names.length === 1 ? names[0] : undefined);
  if (bin === undefined) {
    return failed('not-runnable', ref, names.length === 0 ? 'the distribution has no console script: there is no server to start' : `the distribution has several console scripts (${names.join(', ')}) and none is named like it: pick one with uvx --from ${ref.name}==${ref.version} <script>`, 'cannot start');
  }
  const command = join(dir, 'bin', bin);
  if (!existsSync(command)) return failed('not-runnable', ref, `the distribution has no console script named ${bin} (it has: ${names.join(', ') || 'none'})`, 'cannot start');
  return { ok: true, package: ref, command, args: launch.args, dir, reused, ms: 0 };
}

function pipError(r: RunResult): string {
  if (r.timedOut) return `pip did not finish within ${Math.round(r.timeoutMs / 1000)} s`;
  // pip says "no matching distribution" however the index failed; its warnings say why.
  const unreachable = r.stderr.split('\n').find((l) => /^WARNING: Retrying|NewConnectionError|Name or service not known|Temporary failure in name resolution|Connection refused|Max retries exceeded|ConnectTimeoutError|ReadTimeoutError|status code 5\d\d|\b5\d\d\b.*error/i.test(l));
  const lines = r.stderr.split('\n').filter((l) => /^ERROR:|error:/i.test(l.trim()));
  const body = (lines.length ? lines.slice(0, 2).join('; ') : lastLines(r.stderr).replace(/\n/g, '; ')) || `pip exited with code ${r.code}`;
  return unreachable ? `the package index could not be reached: ${unreachable.trim().slice(0, 300)}; ${body}` : body;
}

// ---------------------------------------------------------------------------------------------- oci

async function fetchOci(launch: Launch, o: Opts): Promise<Installed | FetchFailed> {
  const ref = launch.package;
  if (!findExecutable('docker', o.env.PATH)) return failed('not-runnable', ref, 'docker is not on PATH (it runs oci packages)');
  const image = packageLabel(ref);
  const inspect = await run('docker', ['image', 'inspect', '--format', '{{.Id}}', image], { env: o.env, timeoutMs: 30_000 });
  let reused = inspect.code === 0;
  if (!reused) {
    const pull = await run('docker', ['pull', '--quiet', image], { env: o.env, timeoutMs: o.timeoutMs });
    if (pull.code !== 0) return failed('fetch-failed', ref, pull.timedOut ? `docker pull did not finish within ${Math.round(o.timeoutMs / 1000)} s` : lastLines(pull.stderr) || lastLines(inspect.stderr) || `docker pull exited with code ${pull.code}`);
  }
  // The container gets no network of its own (the sandbox's namespace does not reach into it).
  const runtime = launch.runtimeArgs ?? ['-i', '--rm'];
  const args = ['run', ...(runtime.includes('-i') || runtime.includes('--interactive') ? [] : ['-i']), ...runtime.filter((a, i) => !(a === '--network' || a === '--net' || runtime[i - 1] === '--network' || runtime[i - 1] === '--net' || /^--net(work)?=/.test(a))), '--network', 'none', image, ...launch.args];
  return { ok: true, package: { ...ref, version: ref.version ?? 'latest' }, command: 'docker', args, dir: '', reused, ms: 0 };
}

// ------------------------------------------------------------------------------------------ helpers

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  timeoutMs: number;
}

/** Runs an installer to its end (argv, never a shell), keeping at most 1 MiB of each stream. */
function run(command: string, args: string[], opts: { env: NodeJS.ProcessEnv; timeoutMs: number; cwd?: string }): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: opts.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const cap = 1024 * 1024;
    child.stdout.on('data', (d: Buffer) => void (stdout.length < cap && (stdout += d.toString('utf8'))));
    child.stderr.on('data', (d: Buffer) => void (stderr.length < cap && (stderr += d.toString('utf8'))));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, opts.timeoutMs);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      live.delete(child.pid!);
      resolve({ code, stdout, stderr, timedOut, timeoutMs: opts.timeoutMs });
    };
    child.on('error', (err) => {
      stderr += `${command}: ${(err as NodeJS.ErrnoException).code ?? err.message}`;
      onExit(127);
    });
    child.on('close', onExit);
    if (child.pid) live.add(child.pid);
  });
}

/** Installer process groups still running: ended by {@link endAllFetches} when sealmark is interrupted. */
const live = new Set<number>();

function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* gone */
  }
}

/** Install folders not yet complete: removed by {@link endAllFetches} when sealmark is interrupted. */
const partial = new Set<string>();

/** Ends every installer still running and removes its unfinished folder (synchronous: for exit and signal handlers). */
export function endAllFetches(): void {
  for (const pid of live) killGroup(pid);
  live.clear();
  for (const dir of partial) rmSync(dir, { recursive: true, force: true });
  partial.clear();
}

/**
 * Orders two semver versions (`1.2.10` after `1.2.9`; a pre-release before its release), as npm
 * picks the highest version of a range. Build metadata is ignored.
 */
export function compareSemver(a: string, b: string): number {
  const parse = (v: string) => {
    const [core, pre] = v.split('+')[0]!.split(/-(.*)/s) as [string, string | undefined];
    return { nums: core.split('.').map((n) => Number(n) || 0), pre };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) if ((x.nums[i] ?? 0) !== (y.nums[i] ?? 0)) return (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
  if (x.pre === y.pre) return 0;
  if (x.pre === undefined) return 1;
  if (y.pre === undefined) return -1;
  const xs = x.pre.split('.');
  const ys = y.pre.split('.');
  for (let i = 0; i < Math.max(xs.length, ys.length); i++) {
    const p = xs[i];
    const q = ys[i];
    if (p === undefined) return -1;
    if (q === undefined) return 1;
    if (p === q) continue;
    const pn = /^\d+$/.test(p);
    const qn = /^\d+$/.test(q);
    if (pn && qn) return Number(p) - Number(q);
    if (pn !== qn) return pn ? -1 : 1;
    return p < q ? -1 : 1;
  }
  return 0;
}

function lastLines(text: string, n = 3): string {
  return text.trim().split('\n').slice(-n).join('\n');
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Whether `ref` names one exact version that an earlier fetch installed in `cacheDir`: starting it
 * then downloads nothing and asks no registry (npm `name@1.2.3`, PyPI `name==1.2.3`). A range, a
 * tag, no version, or an OCI image (the container engine decides) is never taken as installed.
 */
export function installedAlready(ref: PackageRef, cacheDir: string = sealmarkCacheDir()): boolean {
  if (ref.version === undefined) return false;
  if (ref.ecosystem === 'npm') return EXACT_NPM.test(ref.version) && existsSync(join(cacheDir, 'npm', `${slug(ref.name)}@${ref.version}`, MARKER));
  if (ref.ecosystem === 'pypi') return existsSync(join(cacheDir, 'pypi', `${slug(ref.name)}==${ref.version}`, MARKER));
  return false;
}

/** Lists the installs in the cache (for `explain` and tests): `npm/@scope+name@1.0.0`, … */
export function cachedInstalls(cacheDir: string = sealmarkCacheDir()): string[] {
  const out: string[] = [];
  for (const eco of ['npm', 'pypi']) {
    const d = join(cacheDir, eco);
    if (!existsSync(d)) continue;
    for (const name of readdirSync(d)) if (existsSync(join(d, name, MARKER))) out.push(`${eco}/${name}`);
  }
  return out;
}

/** What a report says of a launched package (SPEC section 3 step 0; report `target.package`). */
export interface FetchedPackage {
  ecosystem: PackageRef['ecosystem'];
  name: string;
  /** The exact version started; null when the fetch failed before it was resolved. */
  version: string | null;
  /** How it was asked for: `npx`, `npm exec`, `uvx`, `uv tool run`, `pipx run`, `bunx`, `docker`, `--package`, `--server-json`. */
  launcher: string;
  /** An earlier audit's install was used: nothing was downloaded. */
  reused: boolean;
  /** `project`: an unversioned `npx` line named a package the project has installed, and that install was started. Absent: sealmark's cache. */
  from?: 'project';
}

/**
 * The project's own install of an unversioned npm launch (`npx tsx`, `npx -y my-server`): the
 * nearest `node_modules/<name>` from `cwd` upward, as npx finds it. Undefined when there is none
 * or the line names a version (then the cache's exact install is used).
 */
function projectInstall(launch: Launch, cwd: string): Installed | FetchFailed | undefined {
  const ref = launch.package;
  if (ref.ecosystem !== 'npm' || ref.version !== undefined || launch.launcher === '--package' || launch.launcher === '--server-json') return undefined;
  for (let dir = cwd; ; dir = dirname(dir)) {
    const manifest = join(dir, 'node_modules', ref.name, 'package.json');
    if (existsSync(manifest)) {
      let version: unknown;
      try {
        version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown }).version;
      } catch {
        return undefined;
      }
      return typeof version === 'string' ? npmStart(launch, { ...ref, version }, dir, true) : undefined;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** What to start, after the fetch phase: the command and arguments, and the package when one was fetched. */
export type Prepared =
  | {
      ok: true;
      command: string;
      args: string[];
      package?: FetchedPackage;
      /**
       * The launcher line as given, with the package pinned to the version that was started
       * (`npx -y pkg` → `npx -y pkg@1.2.3`), for replay lines: a replay runs what was audited, not
       * whatever is newest by then. Absent when the line named an exact version already.
       */
      pinned?: string[];
    }
  | { ok: false; reason: FetchFailed['reason']; message: string; detail: string; package: FetchedPackage };

/**
 * The fetch phase for one target (shared by `audit` and `call`, so that a replay starts the same
 * install as the audit it replays): a `launch` (a server.json package) or a `--package` is always fetched; a launcher line (`npx -y …`,
 * `uvx …`) is fetched when `fetch` is true (the sandbox is on) and run as given otherwise; any
 * other command is left as it is. Never rejects.
 */
export async function prepareStart(
  target: { command?: string; args?: string[]; package?: PackageRef; launcher?: string; launch?: Launch },
  options: FetchOptions & { fetch: boolean; onFetch?: (label: string) => void; cwd?: string },
): Promise<Prepared> {
  const args = target.args ?? [];
  const launch: Launch | undefined = target.launch
    ? target.launch
    : target.package
    ? { package: target.package, args, launcher: target.launcher ?? '--package' }
    : options.fetch && target.command !== undefined
      ? recognizeLauncher(target.command, args)
      : undefined;
  if (!launch) return { ok: true, command: target.command ?? '', args };
  // `npx tsx`, `npx my-server` in a project that has it: npx runs the project's own install, with
  // no registry; so does sealmark (the sandbox starts elsewhere, where npx would not find it).
  const local = projectInstall(launch, options.cwd ?? process.cwd());
  if (local?.ok) return { ok: true, command: local.command, args: local.args, package: { ecosystem: 'npm', name: local.package.name, version: local.package.version, launcher: launch.launcher, reused: true, from: 'project' } };
  options.onFetch?.(packageLabel(launch.package));
  const got = await fetchLaunch(launch, options);
  if (!got.ok) {
    const pkg: FetchedPackage = { ecosystem: launch.package.ecosystem, name: launch.package.name, version: launch.package.version ?? null, launcher: launch.launcher, reused: false };
    return { ok: false, reason: got.reason, message: got.message, detail: got.detail, package: pkg };
  }
  const pinned = pinnedLine(target, launch, got.package);
  return { ok: true, command: got.command, args: got.args, package: { ecosystem: got.package.ecosystem, name: got.package.name, version: got.package.version, launcher: launch.launcher, reused: got.reused }, ...(pinned ? { pinned } : {}) };
}

/** The launcher line of `target` with its package word pinned to `resolved`'s version (see {@link Prepared}). */
export function pinnedLine(target: { command?: string; args?: string[] }, launch: Launch, resolved: PackageRef & { version: string }): string[] | undefined {
  if (target.command === undefined || launch.package.version === resolved.version || launch.package.ecosystem === 'oci') return undefined;
  const args = target.args ?? [];
  const word = packageLabel({ ...launch.package, bin: undefined });
  const at = args.findIndex((a) => a === word || a === `--package=${word}`);
  if (at < 0) return undefined;
  const exact = packageLabel({ ...resolved, bin: undefined });
  const out = [...args];
  out[at] = args[at]!.startsWith('--package=') ? `--package=${exact}` : exact;
  return [target.command, ...out];
}
