/**
 * Where a config comes from (SPEC section 7): `sealmark.config.json`, `.yaml` or `.yml` found upward
 * from the working directory, or the file named by `--config`; then the CLI options that override
 * it (`--timeout-probe`, `--only`, `--skip`, `--env`, SPEC section 2). Validation and defaults are
 * in `./schema.ts`.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, extname, isAbsolute, join, relative, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { configRegistry } from './defaults.js';
import {
  ConfigError,
  MAX_TIMEOUT_SEC,
  closestName,
  parseConfig,
  type ConfigCheckSpec,
  type ConfigProblem,
  type ResolvedConfig,
} from './schema.js';

export {
  ConfigError,
  buildConfigSchema,
  nonStandardKeys,
  parseConfig,
  TIMEOUT_DEFAULTS,
  type CheckSettings,
  type ConfigCheckSpec,
  type ConfigKeySpec,
  type ConfigProblem,
  type ResolvedConfig,
  type UserProbe,
} from './schema.js';

/** File names looked for in each directory, in this order of preference (SPEC section 7). */
export const CONFIG_FILE_NAMES = ['sealmark.config.json', 'sealmark.config.yaml', 'sealmark.config.yml'] as const;

/**
 * The config file that applies to `cwd`: the first of {@link CONFIG_FILE_NAMES} present in `cwd`,
 * else in its parent, and so on up to the filesystem root (SPEC section 7 "found upward").
 * Returns an absolute path, or `undefined` when there is none.
 */
export function findConfigFile(cwd: string): string | undefined {
  let dir = resolve(cwd);
  for (;;) {
    for (const name of CONFIG_FILE_NAMES) {
      const candidate = join(dir, name);
      if (isFile(candidate)) return candidate;
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
  } catch {
    return false;
  }
}

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** A config file to load (JSON or YAML), relative to `cwd`; absent: the file found upward from `cwd`. */
  path?: string;
  /** Directory `path` is relative to and the upward search starts from; default `process.cwd()`. */
  cwd?: string;
  /** The checks known to this build; default the built-in check registry (`configRegistry()`). */
  registry?: readonly ConfigCheckSpec[];
  /**
   * How a missing or unreadable `path` is named in the ConfigError's key: default `path` (this
   * option); the CLI passes `--config`, the library's `audit()` passes `configFile`.
   */
  option?: string;
}

/**
 * Loads the config for a run (SPEC section 7) and returns it with every default applied.
 *
 * - `path` given (`--config`, relative to `cwd`): that file; missing or unreadable → ConfigError
 *   whose key is `option` (default `path`), e.g. `path: file not found: sup/k.json`.
 * - otherwise the file {@link findConfigFile} finds from `cwd`; none → every default.
 *
 * `.json` files are parsed as JSON, `.yaml`/`.yml` as YAML (other extensions: JSON when the text
 * starts with `{`, else YAML). A syntax error → ConfigError with key `(syntax)` and the 1-based
 * `line` of the error. Then {@link parseConfig}: every schema problem named by its dotted key.
 * Messages name a found file relative to `cwd` and an explicit file as the user wrote it;
 * `ResolvedConfig.source` and `ConfigError.file` hold the absolute path. The result is accepted
 * as the library's `audit({ config })`.
 *
 * ```ts
 * const config = loadConfig({ path: 'sealmark.config.yaml', cwd: '/srv/project' });
 * ```
 */
export function loadConfig(opts: LoadConfigOptions = {}): ResolvedConfig {
  const registry = opts.registry ?? configRegistry();
  const cwd = opts.cwd ?? process.cwd();
  let file: string;
  let label: string;
  if (opts.path !== undefined) {
    file = resolve(cwd, opts.path);
    label = opts.path;
  } else {
    const found = findConfigFile(cwd);
    if (found === undefined) return parseConfig({}, registry);
    file = found;
    label = displayPath(cwd, found);
  }

  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? `file not found: ${label}`
        : code === 'EISDIR'
          ? `${label} is a directory, not a config file`
          : `cannot read ${label}: ${(err as Error).message}`;
    throw new ConfigError([{ key: opts.path !== undefined ? (opts.option ?? 'path') : '(root)', message: why }], { file, label: '' });
  }

  const raw = parseText(text.replace(/^\uFEFF/, ''), file, label);
  return parseConfig(raw, registry, file, label);
}

/** `sealmark.config.json` for a file in `cwd`, `../../sealmark.config.yaml` above it. */
function displayPath(cwd: string, file: string): string {
  const rel = relative(resolve(cwd), file);
  return rel === '' || isAbsolute(rel) ? file : rel;
}

function parseText(text: string, file: string, label: string): unknown {
  const ext = extname(file).toLowerCase();
  const asJson = ext === '.json' || (ext !== '.yaml' && ext !== '.yml' && text.trimStart().startsWith('{'));
  return asJson ? parseJson(text, file, label) : parseYaml(text, file, label);
}

function parseJson(text: string, file: string, label: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const message = (err as Error).message;
    let line: number;
    let column: number;
    const lc = /line (\d+) column (\d+)/.exec(message);
    const pos = /at position (\d+)/.exec(message);
    if (lc) {
      line = Number(lc[1]);
      column = Number(lc[2]);
    } else {
      const offset = pos ? Number(pos[1]) : text.length;
      const before = text.slice(0, offset).split('\n');
      line = before.length;
      column = (before[before.length - 1]?.length ?? 0) + 1;
    }
    const reason = message.replace(/\s*\(line \d+ column \d+\)/, '').replace(/ in JSON at position \d+.*$/, '');
    throw new ConfigError([{ key: '(syntax)', message: `invalid JSON: ${reason}`, line, column }], { file, label });
  }
}

function parseYaml(text: string, file: string, label: string): unknown {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const problems: ConfigProblem[] = doc.errors.map((e) => {
      const reason = (e.message.split('\n')[0] ?? e.message).replace(/ at line \d+, column \d+:?\s*$/, '');
      const at = e.linePos?.[0];
      return {
        key: '(syntax)',
        message: `invalid YAML: ${reason}`,
        ...(at ? { line: at.line, column: at.col } : {}),
      };
    });
    throw new ConfigError(problems, { file, label });
  }
  try {
    return doc.toJS() as unknown;
  } catch (err) {
    // e.g. "Excessive alias count": an alias bomb is a bad config file, not a sealmark crash.
    throw new ConfigError([{ key: '(syntax)', message: `invalid YAML: ${err instanceof Error ? err.message : String(err)}` }], { file, label });
  }
}

/** CLI options that override the file (SPEC section 2). */
export interface CliOverrides {
  /** `--timeout-probe <sec>`: seconds, > 0 and ≤ 3600. */
  timeout_probe_sec?: number;
  /** `--only <check,…>`: every other check is disabled (listed ones are enabled). Empty = not given. */
  only?: string[];
  /** `--skip <check,…>`: these checks are disabled (applied after `only`). */
  skip?: string[];
  /** `--env KEY=VALUE`: merged over the file's `env`. */
  env?: Record<string, string>;
}

/**
 * Applies CLI overrides to a resolved config and returns a new config (the input is not changed).
 * `--only` enables the listed checks and disables all others; `--skip` then disables the listed
 * ones; `--timeout-probe` replaces `timeout_probe_sec` (so a changed value makes the run
 * non-standard, see `nonStandardKeys`); `--env` values win over the file's.
 *
 * @param names how errors name each override: the CLI's flags by default; the library passes its
 *   option names (`only`, `skip`, `timeoutProbeSec`).
 * @throws ConfigError with key `--only` / `--skip` for an id the registry does not know (all of
 *   them listed, with a "did you mean"), or `--timeout-probe` for a value out of range.
 */
export function mergeCliOverrides(
  config: ResolvedConfig,
  overrides: CliOverrides,
  registry: readonly ConfigCheckSpec[],
  names: { only: string; skip: string; timeout_probe_sec: string } = { only: '--only', skip: '--skip', timeout_probe_sec: '--timeout-probe' },
): ResolvedConfig {
  const known = registry.map((c) => c.id);
  const problems: ConfigProblem[] = [];
  const ids = (option: string, list: string[] | undefined): Set<string> | undefined => {
    if (list === undefined || list.length === 0) return undefined;
    const cleaned = list.map((s) => s.trim()).filter((s) => s !== '');
    if (cleaned.length === 0) problems.push({ key: option, message: 'no check ids given' });
    for (const id of cleaned) {
      if (known.includes(id)) continue;
      const guess = closestName(id, known);
      problems.push({
        key: option,
        message: `unknown check id ${JSON.stringify(id)} (${guess !== undefined ? `did you mean ${guess}?` : `known: ${known.join(', ')}`})`,
      });
    }
    return new Set(cleaned);
  };
  const only = ids(names.only, overrides.only);
  const skip = ids(names.skip, overrides.skip);

  const timeout = overrides.timeout_probe_sec;
  if (timeout !== undefined && !(typeof timeout === 'number' && Number.isFinite(timeout) && timeout > 0 && timeout <= MAX_TIMEOUT_SEC)) {
    problems.push({
      key: names.timeout_probe_sec,
      message: `expected a number of seconds greater than 0 and at most ${MAX_TIMEOUT_SEC}, got ${String(timeout)}`,
    });
  }
  if (problems.length > 0) throw new ConfigError(problems, { label: '' });

  const checks: ResolvedConfig['checks'] = {};
  for (const [id, settings] of Object.entries(config.checks)) {
    let enabled = settings.enabled;
    if (only !== undefined) enabled = only.has(id);
    if (skip?.has(id)) enabled = false;
    checks[id] = { ...settings, enabled };
  }
  return {
    ...config,
    ...(timeout !== undefined ? { timeout_probe_sec: timeout } : {}),
    checks,
    env: { ...config.env, ...(overrides.env ?? {}) },
  };
}
