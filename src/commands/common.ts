/** Helpers shared by the commands: usage errors, option parsing, config resolution. */
import { loadConfig, mergeCliOverrides } from '../config/load.js';
import { configRegistry } from '../config/defaults.js';
import type { ResolvedConfig } from '../config/schema.js';

import { UsageError } from '../errors.js';

export { UsageError };

/**
 * Parses repeated `--env KEY=VALUE` options; a bare `--env KEY` takes the value from sealmark's own
 * environment (as replay lines write it, so no secret is printed). Throws UsageError for an empty
 * name or a bare name that is not set.
 */
export function parseEnvList(list: string[] | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of list ?? []) {
    const eq = entry.indexOf('=');
    if (eq === 0 || entry === '') throw new UsageError(`--env ${JSON.stringify(entry)}: expected KEY=VALUE or KEY`);
    if (eq === -1) {
      const v = process.env[entry];
      if (v === undefined) throw new UsageError(`--env ${entry}: not set in this environment (give --env ${entry}=VALUE)`);
      env[entry] = v;
    } else env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

/** Parses a seconds option: a positive number. Throws UsageError naming the flag. */
export function parseSeconds(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !Number.isFinite(n) || n <= 0) {
    throw new UsageError(`${flag} ${JSON.stringify(value)}: expected a positive number of seconds`);
  }
  return n;
}

/** Splits a comma-separated list option. */
export function parseList(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',').map((s) => s.trim());
}

/**
 * The config for a run: the file (`--config`, else found upward from `cwd`), then flags.
 * Throws ConfigError (exit 2) naming the key.
 */
export function resolveConfig(opts: { config?: string; timeoutProbe?: string; only?: string; skip?: string; env?: string[] }, cwd: string): ResolvedConfig {
  const registry = configRegistry();
  const base = loadConfig({ path: opts.config, cwd, registry, option: '--config' });
  return mergeCliOverrides(
    base,
    {
      timeout_probe_sec: parseSeconds('--timeout-probe', opts.timeoutProbe),
      only: parseList(opts.only),
      skip: parseList(opts.skip),
      env: parseEnvList(opts.env),
    },
    registry,
  );
}

/** Requires a server command after `--`. */
export function requireCommand(command: string[], usage: string): [string, ...string[]] {
  if (command.length === 0 || !command[0]) throw new UsageError(`no server command given. Usage: ${usage}`);
  return command as [string, ...string[]];
}

/**
 * Parses repeated `--header 'Name: value'` options (RFC 9110 field names). Throws UsageError for
 * a missing colon or a name that is not a header name.
 */
export function parseHeaders(list: string[] | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const entry of list ?? []) {
    const colon = entry.indexOf(':');
    const name = colon < 0 ? '' : entry.slice(0, colon).trim();
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new UsageError(`--header ${JSON.stringify(entry)}: expected 'Name: value'`);
    headers[name] = entry.slice(colon + 1).trim();
  }
  return headers;
}

/**
 * The target of `audit` / `call`: a command after `--`, or `--url` (with `--header` and
 * `--bearer-token-env`), never both. Throws UsageError.
 */
export function targetOf(
  command: string[],
  opts: { url?: string; header?: string[]; bearerTokenEnv?: string },
  usage: string,
): { command: [string, ...string[]] } | { url: string; headers: Record<string, string>; bearerTokenEnv?: string } {
  if (opts.url !== undefined) {
    if (command.length > 0) throw new UsageError('--url takes no server command: give one or the other');
    return { url: opts.url, headers: parseHeaders(opts.header), ...(opts.bearerTokenEnv !== undefined ? { bearerTokenEnv: opts.bearerTokenEnv } : {}) };
  }
  if (opts.header?.length || opts.bearerTokenEnv !== undefined) throw new UsageError('--header and --bearer-token-env go with --url');
  // A URL where the command goes would fail as "command not found": say what was meant instead.
  if (command.length === 1 && /^https?:\/\//i.test(command[0]!)) throw new UsageError(`${command[0]} is a URL, not a command: give it as --url ${command[0]}`);
  return { command: requireCommand(command, usage) };
}
