/**
 * The library's `audit()` (SPEC section 9): the engine of src/audit.ts with the config taken as the
 * CLI takes it. `config` is an object validated exactly as a config file is; `configFile` a path
 * loaded as `--config` loads it; with neither, the file found upward from the working directory, as
 * on the command line. `only`, `skip`, `timeoutProbeSec` and `suppress: false` are `--only`,
 * `--skip`, `--timeout-probe` and `--no-suppress`.
 */
import { audit as runAudit, type AuditOptions } from './audit.js';
import { configRegistry } from './config/defaults.js';
import { loadConfig, mergeCliOverrides } from './config/load.js';
import { ConfigError, parseConfig, type ConfigInput, type ResolvedConfig } from './config/schema.js';
import type { Report } from './report/build.js';

/** Options of the library's {@link audit}: those of the engine, with the config as the CLI takes it. */
export interface LibraryAuditOptions extends Omit<AuditOptions, 'config'> {
  /**
   * The config as an object, validated as a config file is (SPEC section 7): an unknown key, a
   * wrong type or a value out of range throws ConfigError naming the key. A config from
   * `loadConfig()` or `defaultConfig()` is accepted as well (it is valid). Not with `configFile`.
   * Not `null` or a non-object (ConfigError, key `config`); `ignoreSuppressions` is no config key
   * (ConfigError naming it): the option is `suppress: false`.
   */
  config?: ConfigInput;
  /**
   * A config file (JSON or YAML), relative to `cwd` (default: the current directory), loaded as
   * `--config` loads it; missing or unreadable: ConfigError with key `configFile`.
   */
  configFile?: string;
  /** `--only`: run only these check ids. */
  only?: string[];
  /** `--skip`: do not run these check ids. */
  skip?: string[];
  /** `--timeout-probe`: seconds a probe call may take (replaces `timeout_probe_sec`; a changed value is non-standard). */
  timeoutProbeSec?: number;
  /** `false` is `--no-suppress`: the config's `suppress:` entries are not applied (the report says so). */
  suppress?: boolean;
}

/**
 * Audits one server and resolves to the JSON report object (docs/report-schema.md), as
 * `sealmark audit --format json` prints it. Rejects with ConfigError (the CLI's exit 2; its `key`
 * names the option or config key) for a bad config (key `config` when it is `null` or no object,
 * `ignoreSuppressions` when it carries that key: pass `suppress: false`), a missing `configFile`
 * (key `configFile`), `config` and `configFile` both given, or an unknown `only` / `skip` id or a
 * bad `timeoutProbeSec` (keys `only`, `skip`, `timeoutProbeSec`); with UsageError for a target given wrong (no command, URL or package, or more than
 * one). Never rejects for anything the server does: a server that cannot be started or dies is a
 * verdict (`report.status` is `not-audited`).
 *
 * ```ts
 * const report = await audit({ command: 'node', args: ['build/index.js'], config: { skip_tools: ['wipe'] } });
 * ```
 */
export async function audit(options: LibraryAuditOptions): Promise<Report> {
  const { config, configFile, only, skip, timeoutProbeSec, suppress, ...engine } = options;
  return runAudit({ ...engine, config: resolveLibraryConfig({ config, configFile, only, skip, timeoutProbeSec, suppress, cwd: options.cwd }) });
}

/**
 * The config of a library run (see {@link LibraryAuditOptions}): `config` validated as a file is,
 * else `configFile` loaded, else the file found upward from `cwd`; then `only`, `skip`,
 * `timeoutProbeSec` and `suppress: false` applied as the CLI applies its flags.
 *
 * @throws ConfigError naming the key: `config` when it is not an object (`null`, an array, a
 *   string), `ignoreSuppressions` when `config` carries it (it is no config key: the option is
 *   `suppress: false`), `configFile` for a missing or unreadable file or with `config` as well,
 *   and the dotted key of every problem in the config itself.
 */
export function resolveLibraryConfig(o: Pick<LibraryAuditOptions, 'config' | 'configFile' | 'only' | 'skip' | 'timeoutProbeSec' | 'suppress' | 'cwd'>): ResolvedConfig {
  const registry = configRegistry();
  const cwd = o.cwd ?? process.cwd();
  if (o.config !== undefined && o.configFile !== undefined) {
    throw new ConfigError([{ key: 'configFile', message: 'give config or configFile, not both' }], { label: '' });
  }
  let base: ResolvedConfig;
  if (o.config !== undefined) {
    const raw: unknown = o.config;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      const got = raw === null ? 'null' : Array.isArray(raw) ? 'an array' : `${typeof raw} ${JSON.stringify(raw)}`;
      throw new ConfigError([{ key: 'config', message: `expected a config object (or leave config out for the file found upward), got ${got}` }], { label: '' });
    }
    // A resolved config (loadConfig, defaultConfig) is a valid config file but for where it came
    // from, which no file holds. Whether suppressions apply is the `suppress` option, not config.
    const { source, ...input } = raw as Partial<ResolvedConfig>;
    if (source !== undefined && typeof source !== 'string') {
      throw new ConfigError([{ key: 'source', message: `expected the path of the file the config came from, got ${JSON.stringify(source)}` }], { label: 'config' });
    }
    if (Object.hasOwn(input, 'ignoreSuppressions')) {
      throw new ConfigError([{ key: 'ignoreSuppressions', message: 'not a config key: to apply no suppress: entries, pass the audit option suppress: false (the CLI\'s --no-suppress)' }], { label: 'config' });
    }
    base = parseConfig(input, registry, source, 'config');
  } else {
    base = loadConfig({ ...(o.configFile !== undefined ? { path: o.configFile } : {}), cwd, registry, option: 'configFile' });
  }
  const merged = mergeCliOverrides(
    base,
    {
      ...(o.timeoutProbeSec !== undefined ? { timeout_probe_sec: o.timeoutProbeSec } : {}),
      ...(o.only !== undefined ? { only: o.only } : {}),
      ...(o.skip !== undefined ? { skip: o.skip } : {}),
    },
    registry,
    { only: 'only', skip: 'skip', timeout_probe_sec: 'timeoutProbeSec' },
  );
  return o.suppress === false ? { ...merged, ignoreSuppressions: true } : merged;
}
