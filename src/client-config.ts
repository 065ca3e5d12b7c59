/**
 * Client configuration files (SPEC section 2 `--client-config`, issue 7): the servers a user has
 * set up in Claude Desktop, Claude Code, Cursor, VS Code or a generic file, read into targets
 * sealmark can audit.
 *
 * Shapes read (the top-level key decides):
 * - `mcpServers` (Claude Desktop `claude_desktop_config.json`, Claude Code `.mcp.json`, Cursor
 *   `mcp.json`, generic): `{ name: { command, args?, env?, cwd? } | { url, headers?, type? } }`.
 * - `servers` (VS Code `mcp.json` and the `mcp.servers` of `settings.json`):
 *   `{ name: { type?: 'stdio', command, args?, env?, cwd?, envFile? } | { type: 'http' | 'sse', url, headers? } }`
 *   (`envFile` is read as a dotenv file; the entry's `env` wins over it).
 *
 * Variables are expanded in every string: `${env:NAME}` (VS Code), `${NAME}` and `${NAME:-default}`
 * (Claude Code), and `${workspaceFolder}` / `${userHome}`. `${input:…}` asks the user in VS Code;
 * sealmark cannot, so such an entry is reported as not startable (the others still run).
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { parse as parseJsonc, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { z } from 'zod';
import { UsageError } from './errors.js';

/**
 * One server entry, resolved: a command or a URL, or why it cannot be started, or `disabled` in
 * the file. `secrets`: the values variables put into it (`${env:API_KEY}` in an argument or a URL),
 * by variable name, for the redactor: a configuration uses variables to keep keys out of files,
 * so reports must keep them out too. `label`: the entry as written, for an entry that cannot be used.
 */
export type ClientServer =
  | { name: string; kind: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string; secrets: Record<string, string> }
  | { name: string; kind: 'http'; url: string; headers: Record<string, string>; secrets: Record<string, string> }
  | { name: string; kind: 'invalid'; problem: string; label: string }
  | { name: string; kind: 'disabled' };

/** A client configuration file, read. */
export interface ClientConfig {
  file: string;
  /** Which shape it had: `mcpServers` or `servers`. */
  shape: 'mcpServers' | 'servers';
  servers: ClientServer[];
}

const stringMap = z.record(z.string(), z.string());

const stdioEntry = z.looseObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: stringMap.optional(),
  cwd: z.string().optional(),
  envFile: z.string().optional(),
});

const urlEntry = z.looseObject({
  type: z.enum(['http', 'sse', 'streamable-http', 'streamableHttp']).optional(),
  url: z.string().min(1),
  headers: stringMap.optional(),
});

const fileShape = z.union([
  z.looseObject({ mcpServers: z.record(z.string(), z.unknown()) }),
  z.looseObject({ servers: z.record(z.string(), z.unknown()) }),
  // VS Code's settings.json: { "mcp": { "servers": { … } } }
  z.looseObject({ mcp: z.looseObject({ servers: z.record(z.string(), z.unknown()) }) }),
]);

/**
 * Reads the client configuration at `path`. Throws UsageError (exit 2) when the file cannot be
 * read, is not JSON (comments and trailing commas, which VS Code allows, are accepted), or has
 * neither `mcpServers` nor `servers`. A bad entry does not throw: it becomes `kind: 'invalid'`.
 */
export function readClientConfig(path: string): ClientConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`--client-config ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  // VS Code's files are JSON with comments and trailing commas: read by its own parser.
  const errors: ParseError[] = [];
  const raw: unknown = parseJsonc(text, errors, { allowTrailingComma: true });
  if (errors.length > 0) {
    const e = errors[0]!;
    throw new UsageError(`--client-config ${path}: not JSON (${printParseErrorCode(e.error)} at offset ${e.offset})`);
  }
  const parsed = fileShape.safeParse(raw);
  if (!parsed.success) throw new UsageError(`--client-config ${path}: expected an object with "mcpServers" (Claude Desktop, Claude Code, Cursor) or "servers" (VS Code)`);
  const o = parsed.data as Record<string, unknown>;
  const shape = 'mcpServers' in o ? 'mcpServers' : 'servers';
  const entries = (o.mcpServers ?? o.servers ?? (o.mcp as { servers: unknown }).servers) as Record<string, unknown>;
  return { file: path, shape, servers: Object.entries(entries).map(([name, entry]) => readEntry(name, entry, resolve(path))) };
}

function readEntry(name: string, entry: unknown, file: string): ClientServer {
  const secrets: Record<string, string> = {};
  const vars = variablesFor(file, secrets);
  const base = dirname(file);
  const label = labelOf(entry);
  try {
    if (typeof entry === 'object' && entry !== null && (entry as { disabled?: unknown }).disabled === true) return { name, kind: 'disabled' };
    const isUrl = typeof entry === 'object' && entry !== null && 'url' in entry;
    if (isUrl) {
      const e = urlEntry.safeParse(entry);
      if (!e.success) return { name, kind: 'invalid', problem: issueText(e.error), label };
      return { name, kind: 'http', url: vars(e.data.url), headers: mapValues(e.data.headers ?? {}, vars), secrets };
    }
    const e = stdioEntry.safeParse(entry);
    if (!e.success) return { name, kind: 'invalid', problem: `neither a command nor a url: ${issueText(e.error)}`, label };
    const cwd = e.data.cwd === undefined ? undefined : vars(e.data.cwd);
    // VS Code's envFile: a dotenv file, under the entry's own env.
    const fromFile = e.data.envFile === undefined ? {} : readEnvFile(resolve(base, vars(e.data.envFile)));
    return {
      name,
      kind: 'stdio',
      command: vars(e.data.command),
      args: (e.data.args ?? []).map(vars),
      env: { ...fromFile, ...mapValues(e.data.env ?? {}, vars) },
      ...(cwd !== undefined ? { cwd: isAbsolute(cwd) ? cwd : resolve(base, cwd) } : {}),
      secrets,
    };
  } catch (err) {
    return { name, kind: 'invalid', problem: err instanceof Error ? err.message : String(err), label };
  }
}

/** The entry as written (command and args, or the URL), for the report of one that cannot be used. */
function labelOf(entry: unknown): string {
  if (typeof entry !== 'object' || entry === null) return JSON.stringify(entry) ?? '';
  const e = entry as { command?: unknown; args?: unknown; url?: unknown };
  if (typeof e.url === 'string') return e.url;
  return [e.command, ...(Array.isArray(e.args) ? e.args : [])].filter((x) => typeof x === 'string').join(' ');
}

/** Reads a dotenv file (`KEY=value` lines; dotenv's rules). Throws naming the file. */
function readEnvFile(path: string): Record<string, string> {
  try {
    return parseDotenv(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`envFile ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

/**
 * The variable expander for a file at `file`: `${workspaceFolder}` is the folder holding the
 * `.vscode` (or `.cursor`) folder the file is in, else the file's own folder.
 */
function variablesFor(file: string, secrets: Record<string, string>): (s: string) => string {
  const dir = dirname(file);
  const workspace = ['.vscode', '.cursor'].includes(basename(dir)) ? dirname(dir) : dir;
  return (s) =>
    s.replace(/\$\{([^}]*)\}/g, (whole, inner: string) => {
      if (inner === 'workspaceFolder' || inner === 'workspaceRoot') return workspace;
      if (inner === 'userHome') return homedir();
      if (inner.startsWith('input:')) throw new Error(`${whole} asks the user for a value in VS Code; sealmark cannot (put the value in the file, or use \${env:NAME})`);
      const env = /^env:(.+)$/.exec(inner)?.[1];
      const plain = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/.exec(inner);
      const nameOf = env ?? plain?.[1];
      if (nameOf === undefined) throw new Error(`${whole}: a variable sealmark does not know`);
      const value = process.env[nameOf];
      // As a shell reads ${NAME:-default}: the default also stands in for an empty value.
      if (value !== undefined && (value !== '' || plain?.[2] === undefined)) {
        if (value !== '') secrets[nameOf] = value;
        return value;
      }
      if (plain?.[2] !== undefined) return plain[2];
      throw new Error(`${whole}: ${nameOf} is not set in this environment`);
    });
}

function mapValues(o: Record<string, string>, f: (s: string) => string): Record<string, string> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));
}

function issueText(error: z.ZodError): string {
  const i = error.issues[0]!;
  return `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`;
}
