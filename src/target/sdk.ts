/**
 * Which MCP SDK a stdio server is built on, read from disk before it starts (SPEC section 5, rules
 * every check follows: "A finding that an SDK causes says so, with the SDK name and version"):
 *
 * - a JavaScript entry: the SDK packages that Node would resolve from the entry's folder upward
 *   (`node_modules/@modelcontextprotocol/sdk/package.json` …), nested or hoisted;
 * - a native binary: the module versions a Go build embeds (`github.com/mark3labs/mcp-go v0.33.0`,
 *   `github.com/modelcontextprotocol/go-sdk v1.4.1`) and the crate paths a Rust build keeps in its
 *   panic locations (`rmcp-1.1.1/src/…`).
 *
 * Reading never throws and never runs anything; what cannot be read is simply not named.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, realpathSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';

/** One SDK or framework found, outermost first (`fastmcp` before the `@modelcontextprotocol/sdk` under it). */
export interface ServerSdk {
  /** Package, module or crate name as its ecosystem spells it. */
  name: string;
  version: string;
  /** Where it was read: an npm package manifest, or the strings of a native binary. */
  from: 'package' | 'binary';
  /** `typescript` for the official TypeScript SDK (v1 `@modelcontextprotocol/sdk`, v2 `@modelcontextprotocol/server`), `go`, `rust`, or the framework's own name. */
  family: 'typescript' | 'go' | 'rust' | 'framework';
}

/** npm packages looked for, frameworks first: what their servers' replies are shaped by. */
const NPM_SDKS: readonly { name: string; family: ServerSdk['family'] }[] = [
  { name: 'fastmcp', family: 'framework' },
  { name: 'tmcp', family: 'framework' },
  { name: '@modelcontextprotocol/server', family: 'typescript' },
  { name: '@modelcontextprotocol/sdk', family: 'typescript' },
];

/** Most bytes of a native binary searched for module and crate names. */
const MAX_BINARY_BYTES = 128 * 1024 * 1024;

/**
 * The SDKs of the server `command` starts (`[command, ...args]`, relative paths against `cwd`):
 * the first argument that names an existing file is the entry (`node dist/index.js`), else the
 * command itself when it is a path or found on `PATH`. Empty when nothing is known.
 */
export function detectSdk(command: readonly string[], cwd = process.cwd(), path = process.env.PATH ?? ''): ServerSdk[] {
  try {
    const entry = entryOf(command, cwd, path);
    if (!entry) return [];
    return isNative(entry) ? binarySdks(entry) : npmSdks(dirname(entry));
  } catch {
    return [];
  }
}

function entryOf(command: readonly string[], cwd: string, path: string): string | undefined {
  const first = command[0] ?? '';
  for (const word of command.slice(1)) {
    if (word === '' || word.startsWith('-')) continue;
    const file = isAbsolute(word) ? word : resolve(cwd, word);
    if (isFile(file)) return realpathSync(file);
  }
  if (first.includes('/')) {
    const file = isAbsolute(first) ? first : resolve(cwd, first);
    return isFile(file) ? realpathSync(file) : undefined;
  }
  // A bare command name: the file PATH would run (a binary package's bin on PATH).
  for (const dir of path.split(delimiter)) {
    const file = join(dir, first);
    if (dir !== '' && isFile(file)) {
      const real = realpathSync(file);
      // An interpreter (node, python3) says nothing of the server.
      return /\/(node|python\d*(\.\d+)?|bun|deno|uv|uvx|npx|docker)$/.test(real) ? undefined : real;
    }
  }
  return undefined;
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** ELF, Mach-O or PE: a native binary rather than a script. */
function isNative(file: string): boolean {
  const head = Buffer.alloc(4);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, head, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  const magic = head.toString('hex');
  return magic === '7f454c46' || magic === 'cffaedfe' || magic === 'cefaedfe' || head.subarray(0, 2).toString('latin1') === 'MZ';
}

/**
 * The SDK packages the server's own package depends on (the nearest package.json above `dir` with
 * a name: its dependencies, optional and peer dependencies), each resolved as Node would from that
 * package, and, under a framework found, the SDK the framework itself depends on.
 */
function npmSdks(dir: string): ServerSdk[] {
  const own = packageAbove(dir);
  if (!own) return [];
  const out: ServerSdk[] = [];
  const visit = (pkgDir: string, deps: Set<string>) => {
    for (const { name, family } of NPM_SDKS) {
      if (!deps.has(name) || out.some((o) => o.name === name)) continue;
      const found = resolvePackage(pkgDir, name);
      if (!found) continue;
      out.push({ name, version: found.version, from: 'package', family });
      if (family === 'framework') visit(found.dir, found.deps);
    }
  };
  visit(own.dir, own.deps);
  return out;
}

interface PackageInfo {
  dir: string;
  version: string;
  deps: Set<string>;
}

function readPackage(dir: string): (PackageInfo & { name?: string }) | undefined {
  const file = join(dir, 'package.json');
  if (!existsSync(file)) return undefined;
  const m = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown; dependencies?: object; optionalDependencies?: object; peerDependencies?: object };
  const deps = new Set([...Object.keys(m.dependencies ?? {}), ...Object.keys(m.optionalDependencies ?? {}), ...Object.keys(m.peerDependencies ?? {})]);
  return { dir, version: typeof m.version === 'string' ? m.version : '?', deps, ...(typeof m.name === 'string' ? { name: m.name } : {}) };
}

/** The nearest package.json above `dir` that names a package: the server's own. */
function packageAbove(dir: string): PackageInfo | undefined {
  for (let d = dir; ; d = dirname(d)) {
    const p = readPackage(d);
    if (p?.name !== undefined) return p;
    if (dirname(d) === d) return undefined;
  }
}

/** `name` as Node resolves it from package `from`: the nearest `node_modules/<name>` upward. */
function resolvePackage(from: string, name: string): PackageInfo | undefined {
  for (let d = from; ; d = dirname(d)) {
    const p = readPackage(join(d, 'node_modules', name));
    if (p) return p;
    if (dirname(d) === d) return undefined;
  }
}

/** Module and crate names a native binary carries, with their versions. */
function binarySdks(file: string): ServerSdk[] {
  const size = Math.min(statSync(file).size, MAX_BINARY_BYTES);
  const buf = Buffer.alloc(size);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buf, 0, size, 0);
  } finally {
    closeSync(fd);
  }
  const text = buf.toString('latin1');
  const out: ServerSdk[] = [];
  const go = [
    ['github.com/mark3labs/mcp-go', /github\.com\/mark3labs\/mcp-go\s+(v\d+\.\d+\.\d+[\w.+-]*)/],
    ['github.com/modelcontextprotocol/go-sdk', /github\.com\/modelcontextprotocol\/go-sdk\s+(v\d+\.\d+\.\d+[\w.+-]*)/],
  ] as const;
  for (const [name, re] of go) {
    const m = re.exec(text);
    if (m) out.push({ name, version: m[1]!, from: 'binary', family: 'go' });
  }
  const rust = /[/\\]rmcp-(\d+\.\d+\.\d+[\w.+-]*)[/\\]src[/\\]/.exec(text);
  if (rust) out.push({ name: 'rmcp', version: rust[1]!, from: 'binary', family: 'rust' });
  return out;
}

/** `fastmcp 3.26.0 on @modelcontextprotocol/sdk 1.32.2`: the SDKs of a server in words. */
export function sdkLabel(sdks: readonly ServerSdk[]): string {
  return sdks.map((s) => `${s.name} ${s.version}`).join(' on ');
}
