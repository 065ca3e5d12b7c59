/**
 * The official MCP registry's `server.json` (SPEC section 2 `--server-json`, section 3 step 0,
 * section 10): read and checked, then turned into what sealmark starts or connects to.
 *
 * Sources of the rules (cited again where each applies):
 * - The format: the registry's schema, `modelcontextprotocol/registry:docs/reference/server-json/`,
 *   dated 2025-12-11 (the newest dated one), and the unreleased draft generated from
 *   `docs/reference/api/openapi.yaml` (components `Package`, `Input`, `InputWithVariables`,
 *   `KeyValueInput`, `PositionalArgument`, `NamedArgument`, `LocalTransport`, `RemoteTransport`).
 * - The list API's items `{server, _meta}`: `openapi.yaml` (`GET /v0.1/servers`).
 * - Package entry → command line: VS Code, `microsoft/vscode:src/vs/platform/mcp/common/
 *   mcpManagementService.ts`, `getMcpServerConfigurationFromManifest` and `getCommandName`
 *   (the spec itself defines no mapping). Argument order there is
 *   `[docker run -i --rm] runtimeArguments [docker -e NAME…] identifier[@version] packageArguments`.
 * - Which names a package's transport URL may use: the registry's validator
 *   (`internal/validators`, `collectAvailableVariables`): environment variable names, argument
 *   names and argument `valueHint`s of the same package.
 *
 * Where VS Code would prompt the user (an input with no fixed value), sealmark cannot: it fills
 * what it can without asking (the user's `--env` values, then canaries for secrets, then defaults)
 * and reports the rest as `needs-config` (SPEC section 10), never as a failed audit.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { UsageError } from '../errors.js';
import { npmSpec, ociSpec, packageLabel, pypiSpec, type Launch, type PackageRef } from './launch.js';

// ---------------------------------------------------------------------------------------------
// The document
// ---------------------------------------------------------------------------------------------

/**
 * `Input` (schema 2025-12-11 and draft): a value the client may have to ask for. `value` is fixed
 * by the publisher ("should not be configurable by end users") and may hold `{curly}` references
 * to `variables` (see {@link ServerJsonInputWithVariables}); `default` is what a client offers.
 * `format` is `string`, `number`, `boolean` or `filepath` in the schema; read as a free string.
 */
export interface ServerJsonInput {
  description?: string;
  isRequired?: boolean;
  isSecret?: boolean;
  default?: string;
  value?: string;
  placeholder?: string;
  choices?: string[];
  format?: string;
}

/** `InputWithVariables`: an {@link ServerJsonInput} whose `value` may use `{name}` from `variables`. */
export interface ServerJsonInputWithVariables extends ServerJsonInput {
  variables?: Record<string, ServerJsonInput>;
}

/** `KeyValueInput`: an environment variable or a header (`name` is its name). */
export interface ServerJsonKeyValueInput extends ServerJsonInputWithVariables {
  name: string;
}

/**
 * `PositionalArgument` (a value put on the command line as is; the schema requires `value` or
 * `valueHint`, and `valueHint` is a label, "not part of the command line") or `NamedArgument`
 * (`name` with its dashes, e.g. `--port`, then its value).
 */
export type ServerJsonArgument =
  | (ServerJsonInputWithVariables & { type: 'positional'; valueHint?: string; isRepeated?: boolean })
  | (ServerJsonInputWithVariables & { type: 'named'; name: string; isRepeated?: boolean });

/**
 * `LocalTransport`: `{type: 'stdio'}`, or `streamable-http`/`sse` with a `url` (templated from
 * the package's own inputs) and `headers`. `type` is read as a free string so that a document
 * with a transport sealmark does not know still reads (that package is then `not-runnable`).
 */
export interface ServerJsonTransport {
  type: string;
  url?: string;
  headers?: ServerJsonKeyValueInput[];
}

/**
 * `Package`. `registryType` is a free string in the schema (the docs list npm, pypi, nuget, oci,
 * mcpb, cargo, go); `identifier` is the package name (npm, pypi, nuget), the image reference with
 * its tag or digest (oci, since 2025-10-11), or the download URL (mcpb). `transport` is required
 * by the schema; a document without one is read as stdio (with a note).
 */
export interface ServerJsonPackage {
  registryType: string;
  identifier: string;
  version?: string;
  registryBaseUrl?: string;
  fileSha256?: string;
  runtimeHint?: string;
  transport?: ServerJsonTransport;
  runtimeArguments?: ServerJsonArgument[];
  packageArguments?: ServerJsonArgument[];
  environmentVariables?: ServerJsonKeyValueInput[];
  /** Draft only: steps shown to the user after install, never run by clients (kept to note them). */
  postInstallInstructions?: unknown[];
}

/**
 * `RemoteTransport`: a server someone hosts, `streamable-http` or `sse` (free string, as above),
 * with a `url` that may use `{name}` from `variables` (added in 2025-12-11) and `headers`.
 */
export interface ServerJsonRemote {
  type: string;
  url: string;
  headers?: ServerJsonKeyValueInput[];
  variables?: Record<string, ServerJsonInput>;
}

/**
 * A `server.json` (`ServerDetail`), as sealmark reads it: the fields that decide what to run,
 * plus the identity fields for reports. Unknown fields are dropped. `packages` and `remotes` are
 * always arrays (empty when absent). `official`: the registry's own metadata when the document was
 * one item of its list API (`_meta["io.modelcontextprotocol.registry/official"]`: `status`,
 * `publishedAt`, `updatedAt`, `isLatest` …), as given.
 */
export interface ServerJson {
  $schema?: string;
  name: string;
  version: string;
  description?: string;
  title?: string;
  websiteUrl?: string;
  repository?: { url?: string; source?: string; subfolder?: string; id?: string };
  packages: ServerJsonPackage[];
  remotes: ServerJsonRemote[];
  official?: Record<string, unknown>;
}

/**
 * The dated schemas the registry has published (its server-json CHANGELOG.md): 2025-07-09 (the
 * first, snake_case), 09-16 (camelCase), 09-29, 10-11, 10-17, 12-11 (the newest).
 */
export const KNOWN_SCHEMA_DATES: readonly string[] = ['2025-07-09', '2025-09-16', '2025-09-29', '2025-10-11', '2025-10-17', '2025-12-11'];

/** The newest dated schema whose rules this module follows. */
export const CURRENT_SCHEMA_DATE = '2025-12-11';

const input = z.object({
  description: z.string().optional(),
  isRequired: z.boolean().optional(),
  isSecret: z.boolean().optional(),
  default: z.string().optional(),
  value: z.string().optional(),
  placeholder: z.string().optional(),
  choices: z.array(z.string()).optional(),
  format: z.string().optional(),
});
const variables = z.record(z.string(), input);
const keyValue = input.extend({ name: z.string(), variables: variables.optional() });
const positional = input
  .extend({ type: z.literal('positional'), valueHint: z.string().optional(), isRepeated: z.boolean().optional(), variables: variables.optional() })
  .superRefine((a, ctx) => {
    // PositionalArgument: anyOf required valueHint / required value.
    if (a.value === undefined && a.valueHint === undefined) ctx.addIssue({ code: 'custom', path: ['valueHint'], message: 'missing: a positional argument needs "value" or "valueHint"' });
  });
const named = input.extend({ type: z.literal('named'), name: z.string(), isRepeated: z.boolean().optional(), variables: variables.optional() });
const argument = z.discriminatedUnion('type', [positional, named]);
const HTTP_TYPES = ['streamable-http', 'sse'];
const transport = z
  .object({ type: z.string(), url: z.string().optional(), headers: z.array(keyValue).optional() })
  .superRefine((t, ctx) => {
    if (HTTP_TYPES.includes(t.type) && t.url === undefined) ctx.addIssue({ code: 'custom', path: ['url'], message: `missing (expected a string: a ${t.type} transport needs a url)` });
  });
const packageSchema = z.object({
  registryType: z.string(),
  identifier: z.string(),
  version: z.string().optional(),
  registryBaseUrl: z.string().optional(),
  fileSha256: z.string().optional(),
  runtimeHint: z.string().optional(),
  transport: transport.optional(),
  runtimeArguments: z.array(argument).optional(),
  packageArguments: z.array(argument).optional(),
  environmentVariables: z.array(keyValue).optional(),
  postInstallInstructions: z.array(z.unknown()).optional(),
});
const remote = z.object({ type: z.string(), url: z.string(), headers: z.array(keyValue).optional(), variables: variables.optional() });
const serverSchema = z.object({
  $schema: z.string().optional(),
  name: z.string(),
  version: z.string(),
  description: z.string().optional(),
  title: z.string().optional(),
  websiteUrl: z.string().optional(),
  repository: z.object({ url: z.string().optional(), source: z.string().optional(), subfolder: z.string().optional(), id: z.string().optional() }).optional(),
  packages: z.array(packageSchema).optional(),
  remotes: z.array(remote).optional(),
});

/**
 * The text of the file at `path` as UTF-8, without a leading byte-order mark. Throws UsageError
 * (exit 2) naming the file when it cannot be read. Shared by every reader of target files.
 */
export function readTextFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Reads the `server.json` at `path` (UTF-8, a BOM allowed) with {@link parseServerJson}.
 * Throws UsageError (exit 2) naming the file when it cannot be read, is not JSON, or is not a
 * valid server.json (the message names the first wrong field, e.g.
 * `<path>: packages[1].registryType: expected a string (got 3)`).
 */
export function readServerJson(path: string): ServerJson {
  const text = readTextFile(path);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${path}: not JSON (${(err as Error).message})`);
  }
  return parseServerJson(raw, path);
}

/**
 * Checks a parsed `server.json` (or one item of the registry's list API, `{server: {...}, _meta:
 * {...}}`, whose `.server` is taken and whose official `_meta` goes to `official`) against the
 * 2025-12-11 schema, as permissively as that schema is: `registryType` and transport types are
 * free strings, unknown fields are ignored, `null` counts as absent, `$schema` may be any string
 * (an unknown date becomes a note of {@link planServerJson}). Stricter than the schema nowhere;
 * laxer in three places: `description` may be absent, a package's `transport` may be absent,
 * and `version: "latest"` or a range is kept (each noted by the plan).
 *
 * Throws UsageError `${label}: ${field}: ${problem}` for the first wrong field in file order
 * (`packages[1].registryType: expected a string (got 3)`, `server.name: missing (expected a
 * string)`), with a hint when the document uses the 2025-07-09 snake_case names; and for a whole
 * page of the list API (`{servers: [...]}`), which holds many servers rather than one.
 */
export function parseServerJson(raw: unknown, label: string): ServerJson {
  if (!isObject(raw)) throw new UsageError(`${label}: expected a server.json object (got ${show(raw)})`);
  let doc: Record<string, unknown> = raw;
  let prefix: PropertyKey[] = [];
  let official: Record<string, unknown> | undefined;
  if (!('name' in raw) && Array.isArray(raw.servers)) {
    throw new UsageError(`${label}: a page of the registry's list API (${raw.servers.length} servers), not one server.json: give one item (its server object) as a file`);
  }
  if (!('name' in raw) && isObject(raw.server)) {
    // One item of GET /v0.1/servers: {server: ServerDetail, _meta: {"io.modelcontextprotocol.registry/official": …}}
    doc = raw.server;
    prefix = ['server'];
    const meta = raw._meta;
    const o = isObject(meta) ? meta['io.modelcontextprotocol.registry/official'] : undefined;
    if (isObject(o)) official = o;
  }
  const cleaned = dropNulls(doc);
  const parsed = serverSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issues = [...parsed.error.issues].sort((a, b) => compareOrder(fileOrder(a.path, doc), fileOrder(b.path, doc)));
    const first = issues[0]!;
    throw new UsageError(`${label}: ${formatPath([...prefix, ...first.path])}: ${problemOf(first, doc)}`);
  }
  const d = parsed.data;
  const out: ServerJson = { ...d, packages: d.packages ?? [], remotes: d.remotes ?? [] };
  if (official) out.official = official;
  return out;
}

// ---------------------------------------------------------------------------------------------
// The plan
// ---------------------------------------------------------------------------------------------

/** Options of {@link planServerJson}. */
export interface ServerJsonPlanOptions {
  /** `--package-index N` (from 0, as `packages[N]`). */
  packageIndex?: number;
  /** `--remote-index N` (from 0, as `remotes[N]`). */
  remoteIndex?: number;
  /**
   * The canary secret for a secret input, by the input's id (environment variable or header
   * name, variable name, argument `valueHint` or name without dashes). The caller records what
   * it hands out: that is what sealmark's secret-echo check then looks for.
   */
  canary: (name: string) => string;
  /**
   * The user's values (`--env NAME=VALUE`), by id: an environment variable or header by its
   * name, a `{variable}` by its key, a positional argument by its `valueHint`, a named argument
   * by its name without leading dashes (VS Code's input id) or with them. A given value beats a
   * default and a canary, never a publisher's fixed `value`. Given names no input used are added
   * to a package's `env` (and passed with `docker run -e NAME` for oci).
   */
  given?: Record<string, string>;
}

/**
 * What to do with one entry of a server.json:
 * - `package`: fetch `package` (a launch.ts {@link PackageRef}) and start it with `runtimeArgs`
 *   (for the runtime: npx, uvx, docker), `args` (for the server) and `env`. `command` is the line
 *   a client would run, for display and replay (`npx -y id@version …`, `uvx id==version …`,
 *   `docker run -i --rm … image …`); it reads back through launch.ts `recognizeLauncher`.
 *   `transport`: stdio, or the URL (and headers) the started package serves on.
 * - `remote`: connect to `url` with `headers`.
 * - `needs-config`: a required input has no value, default or given value; `variable` is its id,
 *   `where` the list that declares it (`packages[0].environmentVariables`), `message` says how
 *   to give it (`--env NAME=VALUE`).
 * - `not-runnable`: sealmark cannot start this entry (a registry type it has no launcher for, a
 *   transport it cannot speak, an identifier that is no package name; `index` -1 when the document
 *   lists nothing at all).
 * `secretNames`: the ids under which a secret was put in (environment variable and header names,
 * whose values are in `env`/`headers`; argument and variable ids for a secret inside an argument or
 * URL). `notes`: what the report should say (an unknown `$schema` date, an optional input left out,
 * a version or tag ignored …).
 */
export type ServerJsonPlan =
  | {
      kind: 'package';
      index: number;
      package: PackageRef;
      runtimeArgs: string[];
      args: string[];
      env: Record<string, string>;
      secretNames: string[];
      transport: { type: 'stdio' } | { type: 'streamable-http' | 'sse'; url: string; headers: Record<string, string> };
      command: string[];
      notes: string[];
    }
  | { kind: 'remote'; index: number; type: 'streamable-http' | 'sse'; url: string; headers: Record<string, string>; secretNames: string[]; notes: string[] }
  | { kind: 'needs-config'; index: number; variable: string; where: string; message: string }
  | { kind: 'not-runnable'; index: number; message: string };

/** The `package` case of {@link ServerJsonPlan}. */
export type ServerJsonPackagePlan = Extract<ServerJsonPlan, { kind: 'package' }>;
/** The `remote` case of {@link ServerJsonPlan}. */
export type ServerJsonRemotePlan = Extract<ServerJsonPlan, { kind: 'remote' }>;

/**
 * Plans one entry of `doc`: `packages[opts.packageIndex]`, `remotes[opts.remoteIndex]`, or by
 * default the first package, else the first remote (VS Code installs the first package, or
 * `remotes[0]`). Never throws for what the document holds (an entry sealmark cannot start is
 * `not-runnable`, a missing input `needs-config`); throws UsageError only for the options: both
 * indexes given, or one out of range (`--package-index 3: server.json has 2 packages (give 0 to 1)`).
 *
 * Package mapping (VS Code `getMcpServerConfigurationFromManifest`): npm → `npx -y
 * [runtimeArgs] id@version [args]` (VS Code omits `-y`; npx assumes it without a TTY, SPEC asks
 * for it); pypi → `uvx [runtimeArgs] id==version [args]`; oci → `docker run -i --rm [runtimeArgs]
 * -e NAME… image[:version] [args]`, the version appended only when the identifier has no tag or
 * digest (VS Code appends it always; the 2025-10-11 schema moved the tag into the identifier).
 * nuget (`dnx`), mcpb, cargo, go and any other type: `not-runnable`. `runtimeHint` is ignored,
 * as VS Code does (the command follows `registryType`).
 *
 * Inputs, each resolved in this order: the publisher's `value` (its `{var}`s substituted), the
 * user's given value, a canary (`isSecret`), the `default`. With none: a required input is
 * `needs-config` (all such inputs are named in the message, the first in `variable`), an optional
 * one is left out with a note. Arguments (`processArguments` in VS Code): a positional argument
 * is its value (a `valueHint` is a label, never sent: VS Code's fallback of sending the hint as
 * a literal is not followed); a named one is `[name, value]` as two argv words (as VS Code); a
 * named argument with no value anywhere is a bare flag when required and left out when optional,
 * unless it plainly takes a value (`choices`, `placeholder`, or a `format` other than boolean),
 * which makes it `needs-config` when required. `isRepeated` with one value is sent once. Every
 * `{var}` is replaced (VS Code replaces the first only); one not in `variables` stays as written
 * (schema: "should remain unchanged"), with a note. A URL (remote, or a package's own HTTP
 * transport) cannot have a hole: a `{var}` in it with no value is `needs-config` even when
 * optional.
 */
export function planServerJson(doc: ServerJson, opts: ServerJsonPlanOptions): ServerJsonPlan {
  if (opts.packageIndex !== undefined && opts.remoteIndex !== undefined) {
    throw new UsageError(`--package-index ${opts.packageIndex} and --remote-index ${opts.remoteIndex}: give one or the other`);
  }
  const notes = schemaNotes(doc);
  if (opts.packageIndex !== undefined) {
    checkIndex('--package-index', opts.packageIndex, doc.packages.length, 'package');
    return planPackage(doc, opts.packageIndex, opts, notes);
  }
  if (opts.remoteIndex !== undefined) {
    checkIndex('--remote-index', opts.remoteIndex, doc.remotes.length, 'remote');
    return planRemote(doc, opts.remoteIndex, opts, notes);
  }
  if (doc.packages.length > 0) return planPackage(doc, 0, opts, notes);
  if (doc.remotes.length > 0) return planRemote(doc, 0, opts, notes);
  return { kind: 'not-runnable', index: -1, message: `${doc.name} lists no packages and no remotes: nothing to start or connect to` };
}

/**
 * The {@link Launch} of a package plan (launcher `--server-json`), for the fetch phase: oci's
 * `runtimeArgs` are the `docker run` options before the image (`-i --rm`, the runtime arguments,
 * `-e NAME` for each environment variable), as launch.ts reads a `docker run` line. For npm and
 * pypi, runtime arguments (options for npx/uvx themselves) have no place in a Launch and are
 * dropped; the plan's `notes` mention them.
 */
export function serverJsonLaunch(plan: ServerJsonPackagePlan): Launch {
  const launch: Launch = { package: plan.package, args: plan.args, launcher: '--server-json' };
  if (plan.package.ecosystem === 'oci') launch.runtimeArgs = ['-i', '--rm', ...plan.runtimeArgs, ...Object.keys(plan.env).flatMap((n) => ['-e', n])];
  return launch;
}

/** Notes on `$schema`: a date sealmark does not know, the draft, or a URL that is no official schema. */
function schemaNotes(doc: ServerJson): string[] {
  const url = doc.$schema;
  if (url === undefined) return [];
  if (/\/server-json\/draft\/server\.schema\.json$/.test(url) || /\/schemas\/draft\/server\.schema\.json$/.test(url)) {
    return [`$schema is the registry's unreleased draft: read by the ${CURRENT_SCHEMA_DATE} rules and the draft's additions`];
  }
  const m = /\/schemas\/(\d{4}-\d{2}-\d{2})\/server\.schema\.json$/.exec(url);
  if (!m) return [`$schema ${clip(url)} is not an official server.json schema URL: read by the ${CURRENT_SCHEMA_DATE} rules`];
  const date = m[1]!;
  if (KNOWN_SCHEMA_DATES.includes(date)) return [];
  return [`$schema ${date} is a schema date sealmark does not know (newest known: ${CURRENT_SCHEMA_DATE}): read by the ${CURRENT_SCHEMA_DATE} rules, unknown fields ignored`];
}

function checkIndex(flag: string, index: number, count: number, what: string): void {
  if (Number.isInteger(index) && index >= 0 && index < count) return;
  const has = count === 0 ? `no ${what}s` : `${count} ${what}${count === 1 ? '' : 's'}`;
  throw new UsageError(`${flag} ${index}: server.json has ${has}${count > 0 ? ` (give ${count === 1 ? '0' : `0 to ${count - 1}`})` : ''}`);
}

/** What a not-runnable entry can point to instead: the entries sealmark can start or reach. */
function alternatives(doc: ServerJson, except: string): string {
  const alt: string[] = [];
  doc.packages.forEach((p, i) => {
    if (`packages[${i}]` !== except && LAUNCHERS[p.registryType] && (p.transport === undefined || LOCAL_TYPES.includes(p.transport.type))) alt.push(`--package-index ${i} (${p.registryType})`);
  });
  doc.remotes.forEach((r, i) => {
    if (`remotes[${i}]` !== except && HTTP_TYPES.includes(r.type)) alt.push(`--remote-index ${i} (${r.type})`);
  });
  return alt.length > 0 ? `; this server.json also has ${alt.join(', ')}` : '';
}

const LOCAL_TYPES = ['stdio', ...HTTP_TYPES];

/** The command each ecosystem is started with (VS Code `getCommandName`). */
const LAUNCHERS: Record<string, string> = { npm: 'npx', pypi: 'uvx', oci: 'docker' };

/** Why a registry type has no launcher in sealmark (package-types.mdx of the registry docs). */
const NOT_RUNNABLE: Record<string, string> = {
  nuget: 'a NuGet package (VS Code starts it with dnx)',
  mcpb: 'an MCP bundle (a download to check against fileSha256 and unpack)',
  cargo: 'a Rust crate (installed once, then run by binary name)',
  go: 'a Go module',
};

const PUBLIC_REGISTRIES: Record<string, string[]> = {
  npm: ['https://registry.npmjs.org', 'https://registry.npmjs.org/'],
  pypi: ['https://pypi.org', 'https://pypi.org/', 'https://pypi.org/simple', 'https://pypi.org/simple/'],
};

function planPackage(doc: ServerJson, index: number, opts: ServerJsonPlanOptions, notes: string[]): ServerJsonPlan {
  const p = doc.packages[index]!;
  const at = `packages[${index}]`;
  const launcher = LAUNCHERS[p.registryType];
  if (!launcher) {
    const what = NOT_RUNNABLE[p.registryType] ?? `of registry type ${JSON.stringify(p.registryType)}`;
    return { kind: 'not-runnable', index, message: `not-runnable: ${at} (${clip(p.identifier)}) is ${what.startsWith('of ') ? `a package ${what}` : what}, which sealmark cannot start yet${alternatives(doc, at)}` };
  }
  const transportType = p.transport?.type ?? 'stdio';
  if (p.transport === undefined) notes.push(`${at} has no transport (the schema requires one): started as stdio`);
  if (!LOCAL_TYPES.includes(transportType)) {
    return { kind: 'not-runnable', index, message: `not-runnable: ${at} serves the transport ${JSON.stringify(transportType)}, which sealmark cannot speak (stdio, streamable-http or sse)${alternatives(doc, at)}` };
  }

  // The package itself.
  const eco = p.registryType as PackageRef['ecosystem'];
  let ref: PackageRef;
  let image: string;
  if (eco === 'oci') {
    const spec = ociSpec(p.identifier);
    if (!spec) return { kind: 'not-runnable', index, message: `not-runnable: ${at}.identifier ${JSON.stringify(clip(p.identifier))} is not an image reference${alternatives(doc, at)}` };
    ref = { ecosystem: 'oci', name: spec.name };
    if (spec.version !== undefined) {
      ref.version = spec.version;
      if (p.version !== undefined && p.version !== spec.version) notes.push(`${at}.version ${p.version} ignored: the identifier carries its own ${spec.version.startsWith('sha256:') ? 'digest' : 'tag'}`);
    } else if (p.version !== undefined) ref.version = p.version;
    else notes.push(`${at}.identifier has no tag or digest: docker takes :latest`);
    image = packageLabel(ref);
  } else {
    const spec = eco === 'npm' ? npmSpec(p.identifier) : pypiSpec(p.identifier);
    if (!spec || spec.version !== undefined) {
      return { kind: 'not-runnable', index, message: `not-runnable: ${at}.identifier ${JSON.stringify(clip(p.identifier))} is not ${eco === 'npm' ? 'an npm' : 'a PyPI'} package name${alternatives(doc, at)}` };
    }
    ref = { ecosystem: eco, name: spec.name };
    if (p.version !== undefined) ref.version = p.version;
    image = packageLabel(ref);
    if (p.version === 'latest') notes.push(`${at}.version "latest" is refused by the registry's schema: run as given`);
    if (p.registryBaseUrl !== undefined && !PUBLIC_REGISTRIES[eco]!.includes(p.registryBaseUrl)) {
      notes.push(`${at}.registryBaseUrl ${clip(p.registryBaseUrl)} is not the public registry: the package is fetched from the registry sealmark's ${launcher} is set up with`);
    }
  }
  if (p.runtimeHint !== undefined && p.runtimeHint !== launcher) notes.push(`${at}.runtimeHint ${JSON.stringify(p.runtimeHint)} ignored: ${p.registryType} packages start with ${launcher} (as in VS Code)`);
  if (p.postInstallInstructions?.length) notes.push(`${at} has ${p.postInstallInstructions.length} postInstallInstructions (draft): shown to users by clients, not run by sealmark`);

  const ctx = new Ctx(opts, notes, at);
  const runtimeArgs = resolveArguments(p.runtimeArguments ?? [], `${at}.runtimeArguments`, ctx);
  const env: Record<string, string> = {};
  const secretNames: string[] = [];
  const envIds = new Set<string>();
  (p.environmentVariables ?? []).forEach((v, j) => {
    envIds.add(v.name);
    const r = resolveInput(v, v.name, { list: `${at}.environmentVariables`, index: j, what: 'environment variable' }, ctx);
    if (r === undefined) return;
    env[v.name] = r.value;
    ctx.ids.set(v.name, r.value);
    if (r.secret) addOnce(secretNames, v.name);
  });
  const args = resolveArguments(p.packageArguments ?? [], `${at}.packageArguments`, ctx);
  if (runtimeArgs.length > 0 && eco !== 'oci') notes.push(`${at}.runtimeArguments (${runtimeArgs.join(' ')}) are options for ${launcher} itself: they are in the command shown, not applied to sealmark's own start from its install`);

  let planTransport: ServerJsonPackagePlan['transport'] = { type: 'stdio' };
  if (transportType !== 'stdio') {
    const t = p.transport!;
    const url = fillPackageUrl(t.url!, `${at}.transport.url`, ctx, p);
    const headers = resolveHeaders(t.headers ?? [], `${at}.transport.headers`, ctx);
    for (const n of headers.secretNames) addOnce(secretNames, n);
    if (url !== undefined) {
      planTransport = { type: transportType as 'streamable-http' | 'sse', url, headers: headers.values };
      notes.push(`${at} serves ${transportType} at ${clip(url)}: started first, then reached by URL`);
    }
  }
  for (const n of ctx.secretIds) addOnce(secretNames, n);

  const needs = ctx.needsConfig(index);
  if (needs) return needs;

  // The user's other --env values go to the server too (docker passes only what -e names).
  for (const [name, value] of Object.entries(opts.given ?? {})) {
    if (!envIds.has(name) && !ctx.consumed.has(name)) env[name] = value;
  }

  let command: string[];
  if (eco === 'npm') command = ['npx', '-y', ...runtimeArgs, image, ...args];
  else if (eco === 'pypi') command = ['uvx', ...runtimeArgs, image, ...args];
  else command = ['docker', 'run', '-i', '--rm', ...runtimeArgs, ...Object.keys(env).flatMap((n) => ['-e', n]), image, ...args];

  return { kind: 'package', index, package: ref, runtimeArgs, args, env, secretNames, transport: planTransport, command, notes };
}

function planRemote(doc: ServerJson, index: number, opts: ServerJsonPlanOptions, notes: string[]): ServerJsonPlan {
  const r = doc.remotes[index]!;
  const at = `remotes[${index}]`;
  if (!HTTP_TYPES.includes(r.type)) {
    return { kind: 'not-runnable', index, message: `not-runnable: ${at} is of transport type ${JSON.stringify(r.type)}, which sealmark cannot speak (streamable-http or sse)${alternatives(doc, at)}` };
  }
  const ctx = new Ctx(opts, notes, at);
  const url = fillUrl(r.url, r.variables, `${at}.variables`, ctx);
  const headers = resolveHeaders(r.headers ?? [], `${at}.headers`, ctx);
  const needs = ctx.needsConfig(index);
  if (needs) return needs;
  if (!isHttpUrl(url!)) return { kind: 'not-runnable', index, message: `not-runnable: ${at}.url is ${JSON.stringify(clip(url!))} once its variables are filled: not an http(s) URL` };
  const secretNames = [...headers.secretNames];
  for (const n of ctx.secretIds) addOnce(secretNames, n);
  return { kind: 'remote', index, type: r.type as 'streamable-http' | 'sse', url: url!, headers: headers.values, secretNames, notes };
}

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

/** Where an input is declared: the list, its index there, and what kind of input it is. */
interface Site {
  list: string;
  index: number;
  what: 'environment variable' | 'header' | 'argument';
}

/** One required input with nothing to fill it. */
interface Need {
  variable: string;
  where: string;
  /** `the environment variable NAME (no default)`. */
  text: string;
}

/** The state of one plan: the options, what is still missing, the ids filled so far. */
class Ctx {
  readonly given: Record<string, string>;
  readonly needs: Need[] = [];
  /** Given names some input used (or that a fixed value overrode): not passed on as env. */
  readonly consumed = new Set<string>();
  /** Ids of secrets put in arguments and URLs. */
  readonly secretIds: string[] = [];
  /** Values by id (env names, valueHints, argument names), for a package's transport URL. */
  readonly ids = new Map<string, string>();
  /** Ids declared by the package but left without a value. */
  readonly unset = new Set<string>();

  constructor(readonly opts: ServerJsonPlanOptions, readonly notes: string[], readonly owner: string) {
    this.given = opts.given ?? {};
  }

  /** The user's value for `id` (marked used), if given. */
  take(id: string): string | undefined {
    if (!Object.hasOwn(this.given, id)) return undefined;
    this.consumed.add(id);
    return this.given[id];
  }

  need(variable: string, where: string, text: string): void {
    if (!this.needs.some((n) => n.variable === variable && n.where === where)) this.needs.push({ variable, where, text });
  }

  /** The needs-config outcome when something required is missing. */
  needsConfig(index: number): ServerJsonPlan | undefined {
    const first = this.needs[0];
    if (!first) return undefined;
    const also = [...new Set(this.needs.slice(1).map((n) => n.variable))].filter((v) => v !== first.variable).map((v) => `--env ${v}=VALUE`);
    const message = `needs-config: ${this.owner} requires ${first.text}: give it with --env ${first.variable}=VALUE${also.length ? `; also needed: ${also.join(', ')}` : ''}`;
    return { kind: 'needs-config', index, variable: first.variable, where: first.where, message };
  }
}

/** `(no default)`, with the choices when there are some. */
function noDefault(i: ServerJsonInput): string {
  return i.choices?.length ? `(no default; one of ${i.choices.map((c) => JSON.stringify(c)).join(', ')})` : '(no default)';
}

/**
 * Fills the `{var}`s of a fixed value from `vars`. Returns the text and whether a secret went in,
 * or undefined when a variable has no value: then a need is recorded if the variable or the input
 * is required (`required`), else the caller leaves the input out.
 */
function fillTemplate(
  template: string,
  vars: Record<string, ServerJsonInput> | undefined,
  required: boolean,
  item: string,
  label: string,
  ctx: Ctx,
): { text: string; secret: boolean; missing?: string } {
  let secret = false;
  let missing: string | undefined;
  const undeclared = new Set<string>();
  const text = template.replace(/\{([^{}\s]+)\}/g, (whole, key: string) => {
    const v = vars && Object.hasOwn(vars, key) ? vars[key]! : undefined;
    if (!v) {
      undeclared.add(key);
      return whole;
    }
    let value = v.value ?? ctx.take(key);
    if (value === undefined && v.isSecret) value = ctx.opts.canary(key);
    value ??= v.default;
    if (value === undefined) {
      if (v.isRequired || required) ctx.need(key, `${item}.variables`, `the variable ${key} of ${label} ${noDefault(v)}`);
      missing ??= key;
      return whole;
    }
    if (v.isSecret) secret = true;
    return value;
  });
  if (undeclared.size > 0) ctx.notes.push(`${item}${label === item ? '' : ` (${label})`}: {${[...undeclared].join('}, {')}} not declared in its variables, sent as written`);
  return missing === undefined ? { text, secret } : { text, secret, missing };
}

/**
 * An environment variable or header: fixed value (templated), given, canary (secret), default.
 * Undefined when it has none (then a need or a note is recorded).
 */
function resolveInput(i: ServerJsonKeyValueInput, id: string, site: Site, ctx: Ctx): { value: string; secret: boolean } | undefined {
  const item = `${site.list}[${site.index}]`;
  const label = `the ${site.what} ${id}`;
  if (i.value !== undefined) {
    if (Object.hasOwn(ctx.given, id)) {
      ctx.consumed.add(id);
      ctx.notes.push(`--env ${id} not used for ${label}: server.json fixes its value`);
    }
    const r = fillTemplate(i.value, i.variables, i.isRequired === true, item, label, ctx);
    if (r.missing !== undefined) {
      if (!i.isRequired && !i.variables?.[r.missing]?.isRequired) ctx.notes.push(`${item} (${id}) left out: optional, and its variable ${r.missing} has no value or default`);
      return undefined;
    }
    return { value: r.text, secret: r.secret || i.isSecret === true };
  }
  const given = ctx.take(id);
  if (given !== undefined) return { value: given, secret: i.isSecret === true };
  if (i.isSecret) return { value: ctx.opts.canary(id), secret: true };
  if (i.default !== undefined) return { value: i.default, secret: false };
  if (i.isRequired) ctx.need(id, site.list, `${label} ${noDefault(i)}`);
  else ctx.notes.push(`${item} (${id}) left out: optional, with no value or default`);
  return undefined;
}

/** Headers (`KeyValueInput[]`): values by name, and the names that carry a secret. */
function resolveHeaders(list: ServerJsonKeyValueInput[], where: string, ctx: Ctx): { values: Record<string, string>; secretNames: string[] } {
  const values: Record<string, string> = {};
  const secretNames: string[] = [];
  list.forEach((h, j) => {
    const r = resolveInput(h, h.name, { list: where, index: j, what: 'header' }, ctx);
    if (r === undefined) return;
    values[h.name] = r.value;
    if (r.secret) addOnce(secretNames, h.name);
  });
  return { values, secretNames };
}

/** True when a named argument plainly takes a value rather than being a flag. */
function takesValue(a: ServerJsonInput): boolean {
  return (a.choices?.length ?? 0) > 0 || a.placeholder !== undefined || (a.format !== undefined && a.format !== 'boolean');
}

/** runtimeArguments / packageArguments → argv words (VS Code `processArguments`, with sealmark's rules for unset inputs). */
function resolveArguments(list: ServerJsonArgument[], where: string, ctx: Ctx): string[] {
  const argv: string[] = [];
  list.forEach((a, j) => {
    const item = `${where}[${j}]`;
    const id = a.type === 'positional' ? a.valueHint ?? `${item}` : a.name.replace(/^--?/, '');
    const label = a.type === 'named' ? `the argument ${a.name}` : a.valueHint !== undefined ? `the argument ${a.valueHint}` : item;
    let value: string | undefined;
    let secret = false;
    if (a.value !== undefined) {
      for (const key of a.type === 'named' ? [id, a.name] : a.valueHint !== undefined ? [id] : []) {
        if (!Object.hasOwn(ctx.given, key)) continue;
        ctx.consumed.add(key);
        ctx.notes.push(`--env ${key} not used for ${label}: server.json fixes its value`);
      }
      const r = fillTemplate(a.value, a.variables, a.isRequired === true, item, label, ctx);
      if (r.missing !== undefined) {
        if (!a.isRequired && !a.variables?.[r.missing]?.isRequired) ctx.notes.push(`${item} (${a.type === 'named' ? a.name : id}) left out: optional, and its variable ${r.missing} has no value or default`);
        ctx.unset.add(id);
        return;
      }
      value = r.text;
      secret = r.secret || a.isSecret === true;
    } else {
      value = ctx.take(id) ?? (a.type === 'named' ? ctx.take(a.name) : undefined);
      if (value === undefined && a.isSecret) {
        value = ctx.opts.canary(id);
        secret = true;
      }
      value ??= a.default;
    }
    if (value === undefined) {
      ctx.unset.add(id);
      if (a.type === 'named' && !takesValue(a)) {
        // A flag: sent alone when required, left out when optional.
        if (a.isRequired) argv.push(a.name);
        else ctx.notes.push(`${item} (${a.name}) left out: an optional flag with no value`);
        return;
      }
      if (a.isRequired) ctx.need(id, where, `${label} ${noDefault(a)}`);
      else ctx.notes.push(`${item} (${a.type === 'named' ? a.name : id}) left out: optional, with no value or default`);
      return;
    }
    if (secret) addOnce(ctx.secretIds, id);
    if (a.type === 'named') {
      argv.push(a.name, value);
      ctx.ids.set(a.name, value);
    } else argv.push(value);
    ctx.ids.set(id, value);
  });
  return argv;
}

/** A remote's URL with its `variables` filled (2025-12-11). A `{var}` with no value is a need even when optional. */
function fillUrl(url: string, vars: Record<string, ServerJsonInput> | undefined, where: string, ctx: Ctx): string | undefined {
  let missing = false;
  const undeclared: string[] = [];
  const text = url.replace(/\{([^{}\s]+)\}/g, (whole, key: string) => {
    const v = vars && Object.hasOwn(vars, key) ? vars[key]! : undefined;
    if (!v) {
      undeclared.push(key);
      return whole;
    }
    let value = v.value ?? ctx.take(key);
    if (value === undefined && v.isSecret) {
      value = ctx.opts.canary(key);
      addOnce(ctx.secretIds, key);
    }
    value ??= v.default;
    if (value === undefined) {
      ctx.need(key, where, `the URL variable ${key} ${noDefault(v)}`);
      missing = true;
      return whole;
    }
    return value;
  });
  if (undeclared.length > 0) ctx.notes.push(`${where.replace(/\.variables$/, '.url')}: {${undeclared.join('}, {')}} not declared in its variables, sent as written`);
  return missing ? undefined : text;
}

/**
 * A package's own transport URL: `{name}` is an environment variable name, an argument's
 * `valueHint` or name (with or without dashes) of the same package (the registry's
 * `collectAvailableVariables`), filled from what the package was given, else from `given`.
 */
function fillPackageUrl(url: string, where: string, ctx: Ctx, p: ServerJsonPackage): string | undefined {
  let missing = false;
  const unknown: string[] = [];
  const declared = new Set<string>();
  for (const e of p.environmentVariables ?? []) declared.add(e.name);
  for (const a of [...(p.runtimeArguments ?? []), ...(p.packageArguments ?? [])]) {
    if (a.type === 'named') declared.add(a.name).add(a.name.replace(/^--?/, ''));
    else if (a.valueHint !== undefined) declared.add(a.valueHint);
  }
  const text = url.replace(/\{([^{}\s]+)\}/g, (whole, key: string) => {
    const value = ctx.ids.get(key) ?? ctx.take(key);
    if (value !== undefined) return value;
    if (declared.has(key)) {
      ctx.need(key, where, `${key} for its transport URL ${clip(url)} (no value or default)`);
      missing = true;
    } else unknown.push(key);
    return whole;
  });
  if (unknown.length > 0) ctx.notes.push(`${where}: {${unknown.join('}, {')}} is none of the package's inputs, sent as written`);
  return missing ? undefined : text;
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function addOnce(list: string[], item: string): void {
  if (!list.includes(item)) list.push(item);
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

function clip(s: string, max = 120): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** The document with every `null` property removed (Go encoders write absent optionals as null). */
function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (!isObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = dropNulls(x);
  return out;
}

/** `packages[1].registryType`, `remotes[0].variables["tenant id"]`. */
function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && /^[A-Za-z_$][\w$-]*$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out === '' ? '(root)' : out;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const seg of path) {
    if (Array.isArray(v) && typeof seg === 'number') v = v[seg];
    else if (isObject(v) && typeof seg === 'string') v = v[seg];
    else return undefined;
  }
  return v;
}

/** The position of each path segment in the file (missing keys after the present ones). */
function fileOrder(path: readonly PropertyKey[], root: unknown): number[] {
  const order: number[] = [];
  let v = root;
  for (const seg of path) {
    if (Array.isArray(v) && typeof seg === 'number') {
      order.push(seg);
      v = v[seg];
    } else if (isObject(v) && typeof seg === 'string') {
      const keys = Object.keys(v);
      const i = keys.indexOf(seg);
      order.push(i < 0 ? keys.length : i);
      v = v[seg];
    } else order.push(Number.MAX_SAFE_INTEGER);
  }
  return order;
}

function compareOrder(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

const EXPECTED: Record<string, string> = { string: 'a string', boolean: 'a boolean (true or false)', array: 'an array', object: 'an object', record: 'an object', number: 'a number' };

function show(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return JSON.stringify(clip(v, 40));
  return String(v);
}

/** `camelCase` → `snake_case`, to spot documents written for the 2025-07-09 schema. */
function snake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** One sentence for a zod issue, from the value actually in the file. */
function problemOf(issue: z.core.$ZodIssue, root: unknown): string {
  const value = valueAt(root, issue.path);
  if (issue.code === 'invalid_type') {
    const expected = EXPECTED[issue.expected] ?? issue.expected;
    if (value !== undefined) return `expected ${expected} (got ${show(value)})`;
    const key = issue.path[issue.path.length - 1];
    const parent = valueAt(root, issue.path.slice(0, -1));
    const old = typeof key === 'string' ? snake(key) : undefined;
    if (old && old !== key && isObject(parent) && old in parent) {
      return `missing (expected ${expected}); the document has "${old}", the snake_case name of the 2025-07-09 schema, renamed to "${String(key)}" in 2025-09-16`;
    }
    return `missing (expected ${expected})`;
  }
  if (issue.code === 'invalid_union' && 'discriminator' in issue && issue.discriminator) {
    const options = (issue as { options?: unknown[] }).options ?? [];
    const expected = options.map((o) => JSON.stringify(o)).join(' or ');
    return value === undefined ? `missing (expected ${expected})` : `expected ${expected} (got ${show(value)})`;
  }
  return issue.message;
}
