/**
 * Launchers (SPEC section 2, section 3 step 0): the command lines that start a published package
 * (`npx -y pkg@1.2.3`, `npm exec`, `uvx`, `uv tool run`, `pipx run`, `bunx`, `docker run`) and the
 * `--package` specs (`npm:@scope/name@1.2.3`, `pypi:name==1.2.3`, `oci:image:tag`), read into one
 * shape, {@link Launch}, so that the fetch phase can install the package with the network on and
 * the audit can start it from that install with the network off.
 *
 * Only what the launcher itself would do is read: its own options that pick a package or a
 * command (`--package`, `-p`, `--from`, `--spec`, `-c` …) and the first word after them. Options
 * sealmark does not know make the line unrecognised, so it is run as given (never guessed at).
 */
import { UsageError } from '../errors.js';

/** The package ecosystems a launcher fetches from. */
export type Ecosystem = 'npm' | 'pypi' | 'oci';

/** A published package, as a launcher or `--package` names it. */
export interface PackageRef {
  ecosystem: Ecosystem;
  /** npm: `@scope/name`; pypi: the distribution name as given; oci: the image without its tag. */
  name: string;
  /** An exact version, a range or tag (`latest`, `^1.2`), or undefined for the newest. oci: the tag or `@sha256:…` digest. */
  version?: string;
  /**
   * The command to run from the package when it is not the package's default: npx's
   * `--package p -c cmd`/`npx -p p cmd`, uvx's `--from p cmd`, pipx's `--spec p cmd`.
   */
  bin?: string;
}

/** A recognised launch: the package, and what the server is given after it. */
export interface Launch {
  package: PackageRef;
  /** Arguments for the server itself (after the package on the launcher's line). */
  args: string[];
  /** The launcher as the user wrote it (`npx`, `uvx`, `pipx`, `bunx`, `docker`, or `--package`). */
  launcher: string;
  /** oci only: `docker run` options the user gave before the image (`-e NAME`, `-v …`), kept in order. */
  runtimeArgs?: string[];
}

/** `name@version` (npm), `name==version` (pypi), `image:tag` (oci): how a package is shown. */
export function packageLabel(ref: PackageRef): string {
  if (ref.ecosystem === 'npm') return ref.version ? `${ref.name}@${ref.version}` : ref.name;
  if (ref.ecosystem === 'pypi') return ref.version ? `${ref.name}==${ref.version}` : ref.name;
  if (!ref.version) return ref.name;
  return ref.version.startsWith('sha256:') ? `${ref.name}@${ref.version}` : `${ref.name}:${ref.version}`;
}

/**
 * The command line a client would write for `ref` (VS Code's mapping of a registry entry, see
 * research/fleet-and-registry.md §1.3): `npx -y name@version`, `uvx name==version`,
 * `docker run -i --rm image:tag`. For reports and messages; sealmark itself starts the install.
 */
export function launcherLine(ref: PackageRef): string[] {
  if (ref.ecosystem === 'npm') return ref.bin ? ['npx', '-y', '-p', packageLabel(ref), ref.bin] : ['npx', '-y', packageLabel(ref)];
  if (ref.ecosystem === 'pypi') return ref.bin ? ['uvx', '--from', packageLabel(ref), ref.bin] : ['uvx', packageLabel(ref)];
  return ['docker', 'run', '-i', '--rm', packageLabel(ref)];
}

/**
 * Reads an npm package spec (`@scope/name@1.2.3`, `name@^1`, `name`). Returns undefined for specs
 * that are not registry packages (a path, a URL, `git+…`, `github:user/repo`, an alias `x@npm:y`).
 */
export function npmSpec(spec: string): { name: string; version?: string } | undefined {
  if (spec === '' || /^(\.|\/|~|file:|git[+:]|https?:|github:|gitlab:|bitbucket:)/.test(spec)) return undefined;
  const at = spec.startsWith('@') ? spec.indexOf('@', 1) : spec.indexOf('@');
  const name = at > 0 ? spec.slice(0, at) : spec;
  const version = at > 0 ? spec.slice(at + 1) : undefined;
  if (!/^(@[a-z0-9][\w.~-]*\/)?[a-z0-9][\w.~-]*$/i.test(name)) return undefined;
  if (version !== undefined && (version === '' || version.startsWith('npm:') || /\s/.test(version))) return undefined;
  return version === undefined ? { name } : { name, version };
}

/**
 * Reads a PEP 508 requirement of the simple kinds launchers take: `name`, `name==1.2.3`,
 * `name@1.2.3` (uvx's exact-version form), `name[extra]==1.2.3`. Returns undefined for anything
 * else (a path, a URL, a version range sealmark would have to resolve like pip).
 */
export function pypiSpec(spec: string): { name: string; version?: string } | undefined {
  const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[A-Za-z0-9._,-]+\])?(?:(==|@)([A-Za-z0-9._+!-]+))?$/.exec(spec);
  if (!m) return undefined;
  const name = m[1]! + (m[2] ?? '');
  return m[4] ? { name, version: m[4] } : { name };
}

/** Reads `image[:tag][@sha256:…]` (an OCI reference). Undefined when it is not one. */
export function ociSpec(spec: string): { name: string; version?: string } | undefined {
  if (!/^[a-z0-9][a-z0-9._\-/:@]*$/i.test(spec) || spec.startsWith('-')) return undefined;
  const digest = spec.indexOf('@sha256:');
  if (digest > 0) return { name: spec.slice(0, digest), version: spec.slice(digest + 1) };
  // A colon after the last slash is the tag; one before it is a registry port (`host:5000/img`).
  const colon = spec.lastIndexOf(':');
  if (colon > spec.lastIndexOf('/')) return { name: spec.slice(0, colon), version: spec.slice(colon + 1) };
  return { name: spec };
}

/**
 * Parses `--package <ecosystem>:<spec>` (SPEC section 2). Throws UsageError naming the flag for
 * an unknown ecosystem or a spec that is not a registry package.
 */
export function parsePackageOption(value: string): PackageRef {
  const colon = value.indexOf(':');
  const eco = colon > 0 ? value.slice(0, colon) : '';
  const spec = value.slice(colon + 1);
  const usage = `--package ${JSON.stringify(value)}: expected npm:<name>[@version], pypi:<name>[==version] or oci:<image>[:tag]`;
  const read = eco === 'npm' ? npmSpec(spec) : eco === 'pypi' ? pypiSpec(spec) : eco === 'oci' ? ociSpec(spec) : undefined;
  if (!read) throw new UsageError(usage);
  return { ecosystem: eco as Ecosystem, ...read };
}

/** Options of uvx and pipx run that take no value and change nothing sealmark reads. */
const UV_FLAGS = ['-q', '--quiet', '--offline', '--no-progress'] as const;
const PIPX_FLAGS = ['--no-cache', '-q', '--quiet'] as const;

/** The last path segment of a command (`/usr/bin/npx` → `npx`). */
function base(command: string): string {
  return command.slice(command.lastIndexOf('/') + 1);
}

/**
 * Recognises a launcher command line (SPEC section 2: `-- npx -y …`, `-- uvx …`, `-- pipx run …`,
 * `-- bunx …`, `-- docker run …`). Returns undefined when the line is not one sealmark can read
 * exactly, so that it runs as given.
 */
export function recognizeLauncher(command: string, args: string[]): Launch | undefined {
  const name = base(command);
  if (name === 'npx' || name === 'bunx') return npxLike(name, args);
  if (name === 'npm' && (args[0] === 'exec' || args[0] === 'x')) return npxLike('npm exec', args.slice(1));
  if (name === 'uvx') return pythonRunner('uvx', args, '--from', UV_FLAGS);
  if (name === 'uv' && args[0] === 'tool' && args[1] === 'run') return pythonRunner('uv tool run', args.slice(2), '--from', UV_FLAGS);
  if (name === 'pipx' && args[0] === 'run') return pythonRunner('pipx run', args.slice(1), '--spec', PIPX_FLAGS);
  if (name === 'docker' && args[0] === 'run') return dockerRun(args.slice(1));
  return undefined;
}

/** npx / npm exec / bunx: `[-y|--yes] [--package p | -p p]… [--] <pkg-or-cmd> args…`. */
function npxLike(launcher: string, args: string[]): Launch | undefined {
  let i = 0;
  const packages: string[] = [];
  let call: string | undefined;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-y' || a === '--yes' || a === '--quiet' || a === '-q' || a === '--no-install' || a === '--bun') continue;
    if (a === '--package' || a === '-p') {
      const p = args[++i];
      if (p === undefined) return undefined;
      packages.push(p);
    } else if (a.startsWith('--package=')) packages.push(a.slice('--package='.length));
    else if (a === '-c' || a === '--call') {
      call = args[++i];
      if (call === undefined) return undefined;
    } else if (a === '--') {
      i++;
      break;
    } else if (a.startsWith('-')) return undefined;
    else break;
  }
  if (packages.length > 1) return undefined;
  const rest = args.slice(i);
  if (packages.length === 1) {
    // `npx -p pkg cmd args…` or `npx -p pkg -c 'cmd args'` (the latter is a shell line: not read).
    if (call !== undefined) return undefined;
    const spec = npmSpec(packages[0]!);
    const bin = rest[0];
    if (!spec || bin === undefined) return undefined;
    return { package: { ecosystem: 'npm', ...spec, bin }, args: rest.slice(1), launcher };
  }
  if (call !== undefined || rest.length === 0) return undefined;
  const spec = npmSpec(rest[0]!);
  if (!spec) return undefined;
  return { package: { ecosystem: 'npm', ...spec }, args: rest.slice(1), launcher };
}

/**
 * uvx / uv tool run (`[--from p] <cmd-or-pkg> args…`) and pipx run (`[--spec p] <app> args…`):
 * `fromFlag` names the option that gives the package when the command is named apart from it.
 */
function pythonRunner(launcher: string, args: string[], fromFlag: '--from' | '--spec', flags: readonly string[]): Launch | undefined {
  let from: string | undefined;
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a === fromFlag) {
      from = args[++i];
      if (from === undefined) return undefined;
    } else if (a.startsWith(`${fromFlag}=`)) from = a.slice(fromFlag.length + 1);
    else if (flags.includes(a)) continue;
    else if (a === '--') {
      i++;
      break;
    } else if (a.startsWith('-')) return undefined;
    else break;
  }
  const rest = args.slice(i);
  if (rest.length === 0) return undefined;
  const spec = pypiSpec(from ?? rest[0]!);
  if (!spec) return undefined;
  return { package: { ecosystem: 'pypi', ...spec, ...(from !== undefined ? { bin: rest[0]! } : {}) }, args: rest.slice(1), launcher };
}

/** `docker run` options that take a value (the ones MCP server lines use); others are flags. */
const DOCKER_VALUE_OPTIONS = new Set(['-e', '--env', '-v', '--volume', '--mount', '-w', '--workdir', '--name', '--env-file', '-u', '--user', '--entrypoint', '--platform', '--network', '--net', '-l', '--label', '--add-host', '--memory', '-m', '--cpus', '--pull']);
const DOCKER_FLAGS = new Set(['-i', '--interactive', '--rm', '-t', '--tty', '-it', '-ti', '--init', '--read-only']);

/** docker run: `[options] <image> args…`. */
function dockerRun(args: string[]): Launch | undefined {
  const runtimeArgs: string[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (DOCKER_FLAGS.has(a)) runtimeArgs.push(a);
    else if (DOCKER_VALUE_OPTIONS.has(a)) {
      const v = args[++i];
      if (v === undefined) return undefined;
      runtimeArgs.push(a, v);
    } else if (/^--[a-z-]+=/.test(a)) runtimeArgs.push(a);
    else if (a.startsWith('-')) return undefined;
    else break;
  }
  const image = args[i];
  const spec = image === undefined ? undefined : ociSpec(image);
  if (!spec) return undefined;
  return { package: { ecosystem: 'oci', ...spec }, args: args.slice(i + 1), launcher: 'docker', runtimeArgs };
}
