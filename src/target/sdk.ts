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

/**
 * A request whose reply an SDK's (or framework's) own layer decides before the server's code sees
 * it: the protocol-errors probes (`unknown-method`, `unknown-notification`, `array-params`), the
 * lines a JSON parser reads (`not-json-line`: NaN, Infinity, not JSON at all;
 * `number-out-of-range`: a literal such as 1e309, past the double range) and the two
 * strict-arguments probes (`extra-key`: valid arguments plus an undeclared key; `no-arguments`: a
 * tools/call without `arguments`).
 */
export type SdkProbe = 'unknown-method' | 'unknown-notification' | 'array-params' | 'not-json-line' | 'number-out-of-range' | 'extra-key' | 'no-arguments';

/**
 * What came back to one probe, as a check saw it: a JSON-RPC error (`code`, its message as
 * `text`), no reply while the server lived on (`no-reply`), an exit, a result, a notification
 * answered, an undeclared key dropped while the call ran (`extra-dropped`), or a refusal (an error
 * or isError result) whose text is `text`.
 */
export type ObservedReply =
  | { kind: 'error'; code: number; text?: string }
  | { kind: 'no-reply' }
  | { kind: 'exited' }
  | { kind: 'result' }
  | { kind: 'answered' }
  | { kind: 'ignored' }
  | { kind: 'extra-dropped' }
  | { kind: 'refused'; text: string };

/**
 * What one SDK does, on every server built on it, for one probe: one row of {@link SDK_BEHAVIOURS}.
 * `reply` is what it sends (a `refused` reply's `text` is a pattern of its message); `fault` says
 * whether that reply is one sealmark reports (a correct -32601 is not). `versions` is the range
 * `[min, below)`; `verified` names the versions read or run to establish the row, and how.
 */
export interface SdkBehaviour {
  sdk: string;
  versions: { min: string; below: string };
  probe: SdkProbe;
  reply: { kind: 'error'; code: number } | { kind: 'no-reply' } | { kind: 'exited' } | { kind: 'ignored' } | { kind: 'extra-dropped' } | { kind: 'refused'; text: RegExp };
  fault: boolean;
  /** The first release that answers correctly, when one is known; absent: none is. */
  fixedIn?: string;
  verified: string;
  /** Where to report it. */
  upstream: string;
  /** What the server's author can change in their own code, when anything (else only suppress and report). */
  authorFix?: string;
  /** How the SDK causes it, in words after its label, where "exits on this message / drops this request unanswered / gives this reply before the server's own code runs" would not say it. */
  says?: string;
}

const TS_SDK = { sdk: '@modelcontextprotocol/sdk', versions: { min: '0.5.0', below: '2.0.0' }, upstream: 'https://github.com/modelcontextprotocol/typescript-sdk/issues' } as const;
const TS_SEEN = 'read in node_modules at 0.5.0, 0.6.0, 1.0.1, 1.26.0, 1.30.0 and 1.32.2';
const RMCP = { sdk: 'rmcp', versions: { min: '0.16.0', below: '2.0.0' }, upstream: 'https://github.com/modelcontextprotocol/rust-sdk/issues' } as const;
const RMCP_SEEN = 'run at 0.16.0 (@vaulttools/mcp 0.1.7) and 1.1.1 (@temporal-cortex/cortex-mcp 0.9.1)';
const MCP_GO = { sdk: 'github.com/mark3labs/mcp-go', versions: { min: 'v0.33.0', below: 'v0.34.0' }, upstream: 'https://github.com/mark3labs/mcp-go/issues' } as const;
const MCP_GO_SEEN = 'run at v0.33.0 (mcp-time 0.4.0)';
const FASTMCP = { sdk: 'fastmcp', versions: { min: '4.3.2', below: '5.0.0' }, upstream: 'https://github.com/punkpeye/fastmcp/issues' } as const;

/**
 * What each known SDK does for each probe it answers before the server's code, established from
 * its source in node_modules or by running a real server on it (`verified`). A finding names an SDK
 * only when the reply observed is the one its row records (SPEC section 5, rules every check
 * follows): a server on the same SDK whose own code answers differently (a low-level `Server` with
 * a `fallbackRequestHandler`) gets the finding as its author's.
 */
export const SDK_BEHAVIOURS: readonly SdkBehaviour[] = [
  // protocol.js _onrequest: no handler and no fallbackRequestHandler → ErrorCode.MethodNotFound.
  { ...TS_SDK, probe: 'unknown-method', reply: { kind: 'error', code: -32601 }, fault: false, verified: `${TS_SEEN} (shared/protocol.js _onrequest)` },
  // protocol.js _onnotification: no handler → ignored (never answered).
  { ...TS_SDK, probe: 'unknown-notification', reply: { kind: 'ignored' }, fault: false, verified: `${TS_SEEN} (shared/protocol.js _onnotification)` },
  {
    ...TS_SDK,
    probe: 'array-params',
    reply: { kind: 'no-reply' },
    fault: true,
    verified: `${TS_SEEN}: shared/stdio.js deserializeMessage runs JSONRPCMessageSchema.parse, whose RequestSchema allows only object params; the ZodError goes to the transport's onerror and the request is never answered`,
  },
  { ...TS_SDK, probe: 'not-json-line', reply: { kind: 'no-reply' }, fault: true, verified: `${TS_SEEN}: shared/stdio.js deserializeMessage's JSON.parse throws, server/stdio.js processReadBuffer hands it to onerror and reads on` },
  { ...RMCP, probe: 'unknown-method', reply: { kind: 'error', code: -32601 }, fault: false, verified: RMCP_SEEN },
  { ...RMCP, probe: 'unknown-notification', reply: { kind: 'ignored' }, fault: false, verified: RMCP_SEEN },
  // serde_json fails on the whole message, and rmcp's stdio transport ends the service ("serve finished, quit_reason: Closed").
  { ...RMCP, probe: 'array-params', reply: { kind: 'exited' }, fault: true, verified: `${RMCP_SEEN}: params [] makes the message undecodable and the server exits 0` },
  { ...RMCP, probe: 'not-json-line', reply: { kind: 'exited' }, fault: true, verified: `${RMCP_SEEN}: a line with NaN or Infinity is not JSON to serde_json, and the server exits 0` },
  { ...RMCP, probe: 'number-out-of-range', reply: { kind: 'exited' }, fault: true, verified: `${RMCP_SEEN}: serde_json refuses 1e309 ("number out of range"), and the server exits 0` },
  { ...MCP_GO, probe: 'unknown-method', reply: { kind: 'error', code: -32601 }, fault: false, verified: MCP_GO_SEEN },
  { ...MCP_GO, probe: 'array-params', reply: { kind: 'error', code: -32600 }, fault: false, verified: MCP_GO_SEEN },
  { ...MCP_GO, probe: 'not-json-line', reply: { kind: 'error', code: -32700 }, fault: false, verified: MCP_GO_SEEN },
  { ...MCP_GO, probe: 'number-out-of-range', reply: { kind: 'error', code: -32600 }, fault: false, verified: MCP_GO_SEEN },
  // tmcp's own JSON-RPC layer (not the official SDK): "MCP error -32601: Method … not found".
  { sdk: 'tmcp', versions: { min: '1.20.0', below: '2.0.0' }, upstream: 'https://github.com/paoloricciuti/tmcp/issues', probe: 'unknown-method', reply: { kind: 'error', code: -32601 }, fault: false, verified: 'run at 1.20.0 (mcp-omnisearch 0.0.15)' },
  {
    ...FASTMCP,
    probe: 'extra-key',
    reply: { kind: 'extra-dropped' },
    fault: true,
    verified:
      'read in node_modules at 4.3.2 (firecrawl-mcp 3.26.0): tools/list passes every parameters schema through xsschema strictJsonSchema, which sets additionalProperties: false on it and its nested objects, while tools/call validates with the Standard Schema itself, and a zod (or valibot) object strips unknown keys by default',
    authorFix: 'make the parameters object strict, so that it refuses what the listed schema forbids (zod: `.strict()` or z.strictObject; valibot: v.strictObject)',
    says: 'lists every parameters schema with additionalProperties: false, while the tool call is validated by the parameters schema itself, which strips an undeclared key unless it is strict',
  },
  {
    ...FASTMCP,
    probe: 'no-arguments',
    reply: { kind: 'refused', text: /parameter validation failed: root: .*(received undefined|Required)/i },
    fault: true,
    verified: "read in node_modules at 4.3.2 (firecrawl-mcp 3.26.0): tools/call passes request.params.arguments as sent to parameters['~standard'].validate, so a missing `arguments` is validated as undefined (zod 4: \"root: Invalid input: expected object, received undefined\")",
    authorFix: "give the parameters schema a default, so that a missing `arguments` validates as {} (zod: `.default({})`), or leave `parameters` out of a tool that takes none",
    says: 'validates a missing `arguments` as undefined, before the tool\'s own code runs',
  },
];

/** An SDK found to cause a finding: the row it matched, in words for a message and as data for a report. */
export interface SdkCause {
  sdk: ServerSdk;
  /** `fastmcp 4.3.2 on @modelcontextprotocol/sdk 1.32.2`: the SDK and the frameworks above it. */
  label: string;
  /** The package the server's own manifest depends on that brings it in (the outermost framework); absent for a binary. */
  dependency?: string;
  behaviour: SdkBehaviour;
}

/** `1.32.2`, `v0.33.0` → [1, 32, 2]; a pre-release tag is ignored. */
function versionParts(v: string): number[] {
  return v.replace(/^v/, '').split(/[-+]/)[0]!.split('.').map((x) => Number.parseInt(x, 10) || 0);
}

/** -1, 0 or 1 as `a` is below, equal to or above `b` (numeric, part by part). */
export function compareVersions(a: string, b: string): number {
  const x = versionParts(a);
  const y = versionParts(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

function replyMatches(known: SdkBehaviour['reply'], seen: ObservedReply): boolean {
  if (known.kind !== seen.kind) return false;
  if (known.kind === 'error' && seen.kind === 'error') return known.code === seen.code;
  if (known.kind === 'refused' && seen.kind === 'refused') return known.text.test(seen.text);
  return true;
}

/**
 * The SDK that causes `seen` for `probe` on a server built on `sdks` (outermost first), or
 * undefined: only when a detected SDK has a row for the probe, its version is in the row's range,
 * the row is a fault, and `seen` is that row's reply. Anything else is the author's.
 */
export function sdkCause(sdks: readonly ServerSdk[] | undefined, probe: SdkProbe, seen: ObservedReply): SdkCause | undefined {
  for (const [i, s] of (sdks ?? []).entries()) {
    const row = SDK_BEHAVIOURS.find(
      (b) => b.sdk === s.name && b.probe === probe && compareVersions(s.version, b.versions.min) >= 0 && compareVersions(s.version, b.versions.below) < 0,
    );
    if (!row || !row.fault || !replyMatches(row.reply, seen)) continue;
    const outer = sdks![0]!;
    return { sdk: s, label: sdkLabel(sdks!.slice(0, i + 1)), behaviour: row, ...(s.from === 'package' ? { dependency: outer.name } : {}) };
  }
  return undefined;
}

/**
 * What the server's author can do about a finding `cause` explains (SPEC section 5: the advice is
 * the author's to act on): upgrade to the release that answers correctly when the table knows one
 * and the server is below it; otherwise say that no release is known to, that every server on the
 * SDK does the same, what (if anything) their own code can change, and that they can accept it
 * with a `suppress:` entry (SPEC section 7) for `check`/`messageId` and report it upstream.
 */
export function sdkAdvice(cause: SdkCause, check: string, messageId: string): string {
  const { sdk, behaviour: b } = cause;
  const how = b.says ?? (b.reply.kind === 'exited' ? 'exits on this message' : b.reply.kind === 'no-reply' ? 'drops this request unanswered' : 'gives this reply');
  const who = `${cause.label} ${how}${b.says ? '' : " before the server's own code runs"}, the same on every server on ${sdk.name} ${sdk.version}`;
  if (b.fixedIn && compareVersions(sdk.version, b.fixedIn) < 0) return `${who}: upgrade ${sdk.name} to ${b.fixedIn} or later, which answers correctly`;
  const accept = `with a suppress: entry (check: ${check}, messageId: ${messageId}) and report it upstream (${b.upstream})`;
  return `${who}; no release of ${sdk.name} is known to answer otherwise${b.authorFix ? `; in your code, ${b.authorFix}, or accept it ${accept}` : `: accept it ${accept}`}`;
}

/** A finding's `sdkCause` field (src/types.ts Finding) for `cause`: `{ sdk, version, dependency? }`. */
export function sdkCauseField(cause: SdkCause): { sdk: string; version: string; dependency?: string } {
  return { sdk: cause.sdk.name, version: cause.sdk.version, ...(cause.dependency ? { dependency: cause.dependency } : {}) };
}
