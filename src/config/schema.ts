/**
 * What a valid sealmark config is (SPEC section 7): the zod schema of `sealmark.config.json` /
 * `.yaml` / `.yml`, built from the check registry, the parser that applies every default, the
 * error that names each offending key, and the test for a `non-standard` run (SPEC section 1).
 *
 * Where a config comes from (files found upward, `--config`, CLI overrides) is in `./load.ts`.
 *
 * Units: every `*_sec` key is in seconds, every `*_ms` key in milliseconds.
 */
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import type { Severity } from '../types.js';

/** A user's valid call (SPEC section 7 `probes:`). */
export interface UserProbe {
  tool: string;
  arguments: Record<string, unknown>;
  expect: 'ok' | 'error';
}

/**
 * One `suppress:` entry (SPEC section 7): the findings of `check` (of `tool`, with `messageId`,
 * when given) are kept in every report as suppressed with `reason`, and do not count toward the
 * grade, until `until` (an ISO date `YYYY-MM-DD`, inclusive, or an ISO date-time) has passed.
 */
export interface SuppressEntry {
  check: string;
  tool?: string;
  messageId?: string;
  reason: string;
  until?: string;
}

/**
 * A config as written in a file (SPEC section 7), before validation: every key optional. The
 * library's `audit({ config })` takes this; a {@link ResolvedConfig} is one too.
 */
export interface ConfigInput {
  timeout_probe_sec?: number;
  timeout_init_sec?: number;
  checks?: Record<string, { enabled?: boolean; severity?: Severity; [key: string]: unknown }>;
  probes?: { tool: string; arguments?: Record<string, unknown>; expect?: 'ok' | 'error' }[];
  skip_tools?: string[];
  hidden_params?: string[];
  sandbox?: { network?: 'on' | 'off'; shims?: boolean; keep?: boolean };
  env?: Record<string, string>;
  suppress?: SuppressEntry[];
}

/** Per-check settings; check-specific keys beside `enabled` and `severity`. */
export interface CheckSettings {
  enabled: boolean;
  severity?: Severity;
  [key: string]: unknown;
}

/** The validated config with every default applied. Times in seconds as SPEC names them. */
export interface ResolvedConfig {
  timeout_probe_sec: number;
  timeout_init_sec: number;
  checks: Record<string, CheckSettings>;
  probes: UserProbe[];
  skip_tools: string[];
  hidden_params: string[];
  sandbox: { network: 'on' | 'off'; shims: boolean; keep: boolean };
  env: Record<string, string>;
  suppress: SuppressEntry[];
  /**
   * true: the `suppress:` entries are not applied (`--no-suppress`, the library's `suppress:
   * false`; a registry's public grade). Set by sealmark only: never read from a file, and refused
   * (ConfigError) in the library's `audit({ config })`, whose option for it is `suppress: false`.
   */
  ignoreSuppressions?: boolean;
  /** File the config came from, if any. */
  source?: string;
}

/**
 * One check-specific config key, as the check registry declares it (SPEC section 7,
 * `checks.<id>.<name>`).
 */
export interface ConfigKeySpec {
  /** Bare key under `checks.<id>`, e.g. `max_tools`. Never `enabled` or `severity`. */
  name: string;
  /**
   * What a value must be. A schema that accepts numbers must reject Booleans and numeric strings
   * (plain `z.number()` / `z.int()` do; `z.coerce.*` does not and is refused by
   * {@link buildConfigSchema}).
   */
  schema: z.ZodType;
  /** Value used when the key is absent; must satisfy `schema`. `null` conventionally means "derived". */
  default: unknown;
  /** `locked`: a changed value makes the run `non-standard` (SPEC section 1). `free`: it does not. */
  standard: 'locked' | 'free';
}

/** A check as the config sees it: its id and its specific keys (SPEC section 7 `checks.<id>`). */
export interface ConfigCheckSpec {
  /** Stable kebab-case check id, e.g. `robust-input`. */
  id: string;
  keys: ConfigKeySpec[];
  /** The check's message ids (a `suppress:` entry's `messageId` must be one); absent: not checked. */
  messageIds?: readonly string[];
}

/** Defaults of the two locked top-level thresholds, in seconds (SPEC sections 5 and 7). */
export const TIMEOUT_DEFAULTS = {
  /** Per-probe reply limit, seconds. */
  timeout_probe_sec: 10,
  /** Limit for the `initialize` reply, seconds (`handshake`). */
  timeout_init_sec: 30,
} as const;

/** Largest accepted value of either `*_sec` timeout: one hour. */
export const MAX_TIMEOUT_SEC = 3600;

/** The zod schema {@link buildConfigSchema} returns: raw parsed file in, config without `source` out. */
export type ConfigSchema = z.ZodType<Omit<ResolvedConfig, 'source' | 'ignoreSuppressions'>, unknown>;

const CHECK_BASE_KEYS = new Set(['enabled', 'severity']);

/**
 * Builds the strict zod schema of a config file for the given check registry (SPEC section 7).
 *
 * Shape (every object is strict: an unknown key is an error):
 * - `timeout_probe_sec`: number > 0 and ≤ 3600, seconds, default 10, locked.
 * - `timeout_init_sec`: number > 0 and ≤ 3600, seconds, default 30, locked.
 * - `checks`: `{ <id>: { enabled?: boolean (default true), severity?: 'error'|'warning'|'note',
 *   ...the check's own keys with their defaults } }`; only registry ids are accepted, and every
 *   registry check appears in the output.
 * - `probes`: `{ tool: non-empty string, arguments: object (default {}), expect: 'ok'|'error'
 *   (default 'ok') }[]`, default [].
 * - `skip_tools`, `hidden_params`: string[], default [].
 * - `sandbox`: `{ network: 'on'|'off' (default 'off'), shims: boolean (default true),
 *   keep: boolean (default false) }`.
 * - `env`: record of string → string, default {}.
 * - `suppress`: `{ check: a registry id, tool?: non-empty string, messageId?: one of the check's
 *   message ids, reason: non-empty string, until?: ISO date or date-time }[]`, default [].
 *
 * Throws a plain `Error` (a bug in the registry, not in the user's file) on a duplicate check id or
 * key, a key named `enabled`/`severity`, a default its schema rejects, or a key schema that accepts
 * a Boolean without being a Boolean key.
 */
export function buildConfigSchema(checks: readonly ConfigCheckSpec[]): ConfigSchema {
  const checkShape: Record<string, z.ZodType> = {};
  for (const check of checks) {
    if (Object.hasOwn(checkShape, check.id)) throw new Error(`config registry: duplicate check id ${check.id}`);
    const shape: Record<string, z.ZodType> = {
      enabled: z.boolean().default(true),
      severity: z.enum(['error', 'warning', 'note']).optional(),
    };
    for (const key of check.keys) {
      const where = `config registry: checks.${check.id}.${key.name}`;
      if (CHECK_BASE_KEYS.has(key.name) || Object.hasOwn(shape, key.name)) {
        throw new Error(`${where}: duplicate or reserved key name`);
      }
      assertSaneKeySchema(key, where);
      shape[key.name] = key.schema.default(key.default as never);
    }
    checkShape[check.id] = z.strictObject(shape).prefault({});
  }

  const seconds = z.number().positive().max(MAX_TIMEOUT_SEC);
  const schema = z.strictObject({
    timeout_probe_sec: seconds.default(TIMEOUT_DEFAULTS.timeout_probe_sec),
    timeout_init_sec: seconds.default(TIMEOUT_DEFAULTS.timeout_init_sec),
    checks: z.strictObject(checkShape).prefault({}),
    probes: z
      .array(
        z.strictObject({
          tool: z.string().min(1),
          arguments: z.record(z.string(), z.unknown()).default({}),
          expect: z.enum(['ok', 'error']).default('ok'),
        }),
      )
      .default([]),
    skip_tools: z.array(z.string()).default([]),
    hidden_params: z.array(z.string()).default([]),
    sandbox: z
      .strictObject({
        network: z.enum(['on', 'off']).default('off'),
        shims: z.boolean().default(true),
        keep: z.boolean().default(false),
      })
      .prefault({}),
    env: z.record(z.string(), z.string()).default({}),
    suppress: z.array(suppressEntrySchema(checks)).default([]),
  });
  return schema as unknown as ConfigSchema;
}

/** A `suppress:` entry: the check id and message id checked against the registry, a real date. */
function suppressEntrySchema(checks: readonly ConfigCheckSpec[]): z.ZodType {
  const ids = checks.map((c) => c.id);
  return z
    .strictObject({
      check: z.string().refine((id) => ids.includes(id), {
        error: (iss) => {
          const guess = closestName(String(iss.input), ids);
          return `unknown check id ${JSON.stringify(iss.input)} (${guess !== undefined ? `did you mean ${guess}?` : `known: ${ids.join(', ')}`})`;
        },
      }),
      tool: z.string().min(1).optional(),
      messageId: z.string().min(1).optional(),
      reason: z.string().trim().min(1),
      until: z.string().refine(isIsoDate, { error: (iss) => `expected an ISO date such as 2026-12-31 (or a date-time such as 2026-12-31T18:00:00Z), got ${JSON.stringify(iss.input)}` }).optional(),
    })
    .superRefine((e, ctx) => {
      const known = checks.find((c) => c.id === e.check)?.messageIds;
      if (e.messageId === undefined || known === undefined || known.includes(e.messageId)) return;
      const guess = closestName(e.messageId, known);
      ctx.addIssue({
        code: 'custom',
        path: ['messageId'],
        message: `${e.check} has no message id ${JSON.stringify(e.messageId)} (${guess !== undefined ? `did you mean ${guess}?` : `it has ${known.join(', ')}`})`,
      });
    });
}

/** `YYYY-MM-DD` naming a real day, or an ISO 8601 date-time with a time zone (`Z` or an offset). */
function isIsoDate(s: string): boolean {
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (day) {
    const d = new Date(Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3])));
    return d.toISOString().slice(0, 10) === s;
  }
  return z.iso.datetime({ offset: true }).safeParse(s).success;
}

/** Refuses registry key schemas that would break the SPEC section 7 rules. */
function assertSaneKeySchema(key: ConfigKeySpec, where: string): void {
  if (!key.schema.safeParse(key.default).success) {
    throw new Error(`${where}: the default ${JSON.stringify(key.default)} does not satisfy the key's schema`);
  }
  const js = toJsonSchema(key.schema);
  const types = js ? typesOf(js) : new Set<string>();
  if (!types.has('boolean') && (key.schema.safeParse(true).success || key.schema.safeParse(false).success)) {
    throw new Error(`${where}: the schema accepts a Boolean (SPEC section 7: never where a number is expected)`);
  }
  if (typeof key.default === 'number' && !types.has('string') && key.schema.safeParse(String(key.default)).success) {
    throw new Error(`${where}: the schema accepts a numeric string`);
  }
}

/** One problem in a config: the dotted key it concerns and what is wrong. */
export interface ConfigProblem {
  /**
   * Dotted key path (`checks.robust-input.max_tools`, `probes[0].argumnets`), `(root)` for the
   * file as a whole, a CLI option (`--config`, `--only`, `--skip`, `--timeout-probe`), or
   * `(syntax)` for a file that is not valid JSON/YAML.
   */
  key: string;
  /** What is wrong, e.g. `expected an integer from 1 to 10000, got true`. */
  message: string;
  /** 1-based line in the file, for syntax problems. */
  line?: number;
  /** 1-based column in the file, for syntax problems. */
  column?: number;
}

/**
 * A config error (SPEC section 7; the CLI exits 2). `message` has one line per problem, e.g.
 * `sealmark.config.json: checks.robust-input.max_tools: expected an integer from 1 to 10000, got true`
 * (syntax problems say `line N, column M` instead of a key); `key` is the first problem's key.
 */
export class ConfigError extends Error {
  /** Key of the first problem (see {@link ConfigProblem.key}). */
  readonly key: string;
  /** Absolute path of the config file concerned, when there is one. */
  readonly file?: string;
  /** 1-based line of the first problem, when known (syntax errors). */
  readonly line?: number;
  /** Every problem found, in file order. */
  readonly problems: readonly ConfigProblem[];

  /**
   * @param problems at least one problem.
   * @param options.file absolute path of the file; `options.label` is how the message names it
   *   (defaults to `file`; empty string for none).
   */
  constructor(problems: readonly ConfigProblem[], options: { file?: string; label?: string } = {}) {
    const label = options.label ?? options.file ?? '';
    const lines = problems.map((p) => {
      const where =
        p.line !== undefined ? `line ${p.line}${p.column !== undefined ? `, column ${p.column}` : ''}` : p.key;
      return [label, where, p.message].filter((part) => part !== '').join(': ');
    });
    super(lines.join('\n'));
    this.name = 'ConfigError';
    const first = problems[0];
    this.key = first?.key ?? '(root)';
    if (options.file !== undefined) this.file = options.file;
    if (first?.line !== undefined) this.line = first.line;
    this.problems = problems;
  }
}

/**
 * Validates a parsed config file (any JSON/YAML value) against the registry and applies every
 * default (SPEC section 7): every registry check appears in `checks` with `enabled: true` unless
 * the file says otherwise, and with its key defaults. `undefined` or `null` (an empty YAML file)
 * means "no settings".
 *
 * @param raw the parsed file.
 * @param registry the checks known to this build.
 * @param source the file's path; copied to `ResolvedConfig.source` and `ConfigError.file`.
 * @param label how error messages name the file (defaults to `source`).
 * @throws ConfigError listing every problem (unknown key, wrong type, out of range, non-integer),
 *   each naming the full dotted key.
 */
export function parseConfig(
  raw: unknown,
  registry: readonly ConfigCheckSpec[],
  source?: string,
  label?: string,
): ResolvedConfig {
  const input = raw === undefined || raw === null ? {} : raw;
  const schema = buildConfigSchema(registry);
  const result = schema.safeParse(input);
  if (!result.success) {
    const problems = describeIssues(result.error.issues, input, schema, registry);
    throw new ConfigError(problems, { ...(source !== undefined ? { file: source } : {}), ...(label !== undefined ? { label } : {}) });
  }
  const config: ResolvedConfig = { ...result.data };
  if (source !== undefined) config.source = source;
  return config;
}

/**
 * Dotted keys of the locked settings whose value differs from the default (SPEC section 1,
 * standard run): `timeout_probe_sec`, `timeout_init_sec` and each locked `checks.<id>.<key>` of an
 * enabled check (a disabled check's threshold cannot change any verdict). Empty = standard run.
 * Registry order, timeouts first.
 */
export function nonStandardKeys(config: ResolvedConfig, registry: readonly ConfigCheckSpec[]): string[] {
  const out: string[] = [];
  for (const name of ['timeout_probe_sec', 'timeout_init_sec'] as const) {
    if (config[name] !== TIMEOUT_DEFAULTS[name]) out.push(name);
  }
  for (const check of registry) {
    const settings = config.checks[check.id];
    if (settings === undefined || !settings.enabled) continue;
    for (const key of check.keys) {
      if (key.standard !== 'locked') continue;
      const value = Object.hasOwn(settings, key.name) ? settings[key.name] : key.default;
      if (!isDeepStrictEqual(value, key.default)) out.push(`checks.${check.id}.${key.name}`);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Turning zod issues into one sentence per key.

type JsonSchema = Record<string, unknown>;

function toJsonSchema(schema: z.ZodType): JsonSchema | undefined {
  try {
    return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** All `type`s a JSON Schema node allows, through anyOf/oneOf. */
function typesOf(js: JsonSchema): Set<string> {
  const out = new Set<string>();
  const t = js['type'];
  if (typeof t === 'string') out.add(t);
  if (Array.isArray(t)) for (const x of t) if (typeof x === 'string') out.add(x);
  if (t === 'integer') out.add('number');
  for (const k of ['anyOf', 'oneOf'] as const) {
    const branches = js[k];
    if (Array.isArray(branches)) for (const b of branches) if (isRecord(b)) for (const x of typesOf(b)) out.add(x);
  }
  if (js['type'] === 'null' || js['const'] === null) out.add('null');
  return out;
}

/** The schema node at a path of the config (properties, record values, array items). */
function nodeAt(root: JsonSchema | undefined, path: readonly PropertyKey[]): JsonSchema | undefined {
  let node = root;
  for (const seg of path) {
    if (node === undefined) return undefined;
    if (typeof seg === 'number') {
      const items = node['items'];
      node = isRecord(items) ? items : undefined;
    } else {
      const props = node['properties'];
      const additional = node['additionalProperties'];
      if (isRecord(props) && typeof seg === 'string' && isRecord(props[seg])) node = props[seg] as JsonSchema;
      else node = isRecord(additional) ? additional : undefined;
    }
  }
  return node;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const seg of path) {
    if (Array.isArray(value) && typeof seg === 'number') value = value[seg];
    else if (isRecord(value) && typeof seg === 'string' && Object.hasOwn(value, seg)) value = value[seg];
    else return undefined;
  }
  return value;
}

const SAFE = Number.MAX_SAFE_INTEGER;

/** English for what a JSON Schema node accepts: `an integer from 1 to 10000`, `true or false` … */
function describe(js: JsonSchema): string | undefined {
  for (const k of ['anyOf', 'oneOf'] as const) {
    const branches = js[k];
    if (Array.isArray(branches)) {
      const parts = branches.map((b) => (isRecord(b) ? describe(b) : undefined));
      if (parts.some((p) => p === undefined)) return undefined;
      return orList(parts as string[]);
    }
  }
  if ('const' in js) return JSON.stringify(js['const']);
  const en = js['enum'];
  if (Array.isArray(en)) return en.length === 1 ? JSON.stringify(en[0]) : `one of ${orList(en.map((e) => JSON.stringify(e)))}`;
  const type = js['type'];
  if (Array.isArray(type)) {
    const parts = type.map((t) => describe({ ...js, type: t }));
    if (parts.some((p) => p === undefined)) return undefined;
    return orList(parts as string[]);
  }
  switch (type) {
    case 'integer':
    case 'number':
      return describeNumber(js, type === 'integer' ? 'an integer' : 'a number');
    case 'boolean':
      return 'true or false';
    case 'null':
      return 'null';
    case 'string':
      return typeof js['minLength'] === 'number' && js['minLength'] > 0 ? 'a non-empty string' : 'a string';
    case 'array': {
      const items = js['items'];
      if (isRecord(items) && items['type'] === 'string' && Object.keys(items).length === 1) return 'a list of strings';
      return 'a list';
    }
    case 'object': {
      const additional = js['additionalProperties'];
      if (isRecord(additional) && additional['type'] === 'string' && Object.keys(additional).length === 1) {
        return 'an object of string values';
      }
      return 'an object';
    }
    default:
      return undefined;
  }
}

function describeNumber(js: JsonSchema, noun: string): string {
  const bound = (k: string): number | undefined => {
    const v = js[k];
    return typeof v === 'number' && Math.abs(v) < SAFE ? v : undefined;
  };
  const min = bound('minimum');
  const max = bound('maximum');
  const xmin = bound('exclusiveMinimum');
  const xmax = bound('exclusiveMaximum');
  if (min !== undefined && max !== undefined) return `${noun} from ${min} to ${max}`;
  const parts: string[] = [];
  if (min !== undefined) parts.push(`at least ${min}`);
  if (xmin !== undefined) parts.push(`greater than ${xmin}`);
  if (max !== undefined) parts.push(`at most ${max}`);
  if (xmax !== undefined) parts.push(`less than ${xmax}`);
  return parts.length === 0 ? noun : `${noun} ${parts.join(' and ')}`;
}

function orList(parts: string[]): string {
  if (parts.length <= 1) return parts[0] ?? '';
  return `${parts.slice(0, -1).join(', ')} or ${parts[parts.length - 1]}`;
}

/** How a received value reads in a message: `true`, `25.5`, `"10"`, `a list`, `an object`, `nothing`. */
function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    const s = JSON.stringify(value);
    return s.length > 60 ? `${s.slice(0, 57)}…"` : s;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.length === 0 ? 'an empty list' : 'a list';
  if (typeof value === 'object') return 'an object';
  return typeof value;
}

/** `checks.robust-input.max_tools`, `probes[0].tool`, `env["MY VAR"]`; `(root)` for the empty path. */
export function formatKeyPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else {
      const s = String(seg);
      if (/^[A-Za-z0-9_$-]+$/.test(s)) out += out === '' ? s : `.${s}`;
      else out += `[${JSON.stringify(s)}]`;
    }
  }
  return out === '' ? '(root)' : out;
}

/** Optimal-string-alignment distance (a transposition costs 1), for "did you mean". */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array<number>(rows * cols).fill(0);
  const at = (i: number, j: number): number => d[i * cols + j] ?? 0;
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, at(i - 2, j - 2) + 1);
      d[i * cols + j] = v;
    }
  }
  return at(a.length, b.length);
}

/** The closest known name within a small edit distance, if any. */
export function closestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const limit = Math.max(2, Math.floor(name.length / 3));
  for (const k of known) {
    const dist = editDistance(name.toLowerCase(), k.toLowerCase());
    if (dist < bestDistance && dist <= limit) {
      best = k;
      bestDistance = dist;
    }
  }
  return best;
}

function unknownKeyProblem(parent: readonly PropertyKey[], key: string, schemaRoot: JsonSchema | undefined, registry: readonly ConfigCheckSpec[]): ConfigProblem {
  const fullKey = formatKeyPath([...parent, key]);
  const isCheckId = parent.length === 1 && parent[0] === 'checks';
  let known: string[];
  if (isCheckId) known = registry.map((c) => c.id);
  else {
    const props = nodeAt(schemaRoot, parent)?.['properties'];
    known = isRecord(props) ? Object.keys(props) : [];
  }
  const guess = closestName(key, known);
  const what = isCheckId ? 'unknown check id' : 'unknown key';
  const hint = guess !== undefined ? `did you mean ${guess}?` : known.length > 0 ? `known: ${known.join(', ')}` : '';
  return { key: fullKey, message: hint === '' ? what : `${what} (${hint})` };
}

function typeMismatchHint(expectedTypes: Set<string>, value: unknown): string {
  if (expectedTypes.has('number') && !expectedTypes.has('string') && typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) {
    return ' (a string: write the number without quotes)';
  }
  if (expectedTypes.has('string') && !expectedTypes.has('number') && (typeof value === 'number' || typeof value === 'boolean')) {
    return ' (put it in quotes)';
  }
  return '';
}

/** Sort key: the position of each path segment in the user's own file (missing keys last). */
function fileOrder(path: readonly PropertyKey[], raw: unknown): number[] {
  const out: number[] = [];
  let value = raw;
  for (const seg of path) {
    if (Array.isArray(value) && typeof seg === 'number') {
      out.push(seg);
      value = value[seg];
    } else if (isRecord(value) && typeof seg === 'string') {
      const i = Object.keys(value).indexOf(seg);
      out.push(i === -1 ? SAFE : i);
      value = value[seg];
    } else {
      out.push(SAFE);
      value = undefined;
    }
  }
  return out;
}

function compareOrder(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

function describeIssues(
  issues: z.ZodError["issues"],
  raw: unknown,
  schema: ConfigSchema,
  registry: readonly ConfigCheckSpec[],
): ConfigProblem[] {
  const root = toJsonSchema(schema);
  const found: { problem: ConfigProblem; order: number[] }[] = [];
  const seen = new Set<string>();
  const add = (path: readonly PropertyKey[], problem: ConfigProblem): void => {
    const id = `${problem.key}\u0000${problem.message}`;
    if (seen.has(id)) return;
    seen.add(id);
    found.push({ problem, order: fileOrder(path, raw) });
  };
  for (const issue of issues) {
    const path = issue.path;
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) add([...path, key], unknownKeyProblem(path, key, root, registry));
      continue;
    }
    const key = formatKeyPath(path);
    const node = nodeAt(root, path);
    const expected = node ? describe(node) : undefined;
    const value = valueAt(raw, path);
    if (issue.code === 'custom' || expected === undefined) {
      add(path, { key, message: issue.message });
      continue;
    }
    if (value === undefined) {
      add(path, { key, message: `required: expected ${expected}` });
      continue;
    }
    const hint = node ? typeMismatchHint(typesOf(node), value) : '';
    add(path, { key, message: `expected ${expected}, got ${show(value)}${hint}` });
  }
  found.sort((a, b) => compareOrder(a.order, b.order));
  return found.map((f) => f.problem);
}
