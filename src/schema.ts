/**
 * The one schema walker: compiles a tool's inputSchema / outputSchema with Ajv in the dialect it
 * declares, and reads its properties the way every probe and check needs them.
 *
 * Dialect (MCP 2025-11-25 `basic/index.mdx`, SEP-1613): JSON Schema 2020-12 unless `$schema` says
 * otherwise; draft-07 is common in the wild (SDK 1.x with zod emits it), 2019-09 and draft-06 are
 * understood too. An unknown `$schema` is reported as a compile error.
 *
 * A keyword the dialect does not define (OpenAPI's `nullable`, `example`, `discriminator`, `x-*`)
 * is ignored, never a compile error (SPEC section 5, "Schemas are judged in their declared
 * dialect"); {@link foreignKeywords} names them for an advisory note. Only the formats JSON Schema
 * defines are checked: OpenAPI's (`int64`, `byte`, `password` …) are unknown, hence ignored.
 */
import { createRequire } from 'node:module';
import type { ErrorObject, ValidateFunction } from 'ajv';

const require = createRequire(import.meta.url);
// Ajv ships CommonJS; loading it through require keeps the constructors' types simple under NodeNext.
type AjvLike = {
  compile: (schema: object) => ValidateFunction;
  errorsText: (errors?: ErrorObject[] | null) => string;
};
type AjvCtor = new (opts: Record<string, unknown>) => AjvLike;

/**
 * The regular-expression engine Ajv uses for `pattern` and `patternProperties`. A server's schema
 * is untrusted input: a pattern with nested quantifiers such as `^([a-z]+)+!$` backtracks for
 * minutes on a modest string and would block sealmark's event loop (no timer or signal handler
 * could run). Such patterns, and strings over {@link MAX_PATTERN_INPUT} characters, are not tested:
 * the value is taken to match, which can only make sealmark send fewer probes, never blame a server.
 */
const MAX_PATTERN_INPUT = 10_000;

/** True for a pattern that can backtrack exponentially: a quantified group that holds a quantifier, or a backreference. */
export function isRiskyPattern(pattern: string): boolean {
  return /\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)\s*(?:[+*]|\{\d+,\d*\})/.test(pattern) || /\\[1-9]/.test(pattern);
}

function safeRegExp(pattern: string, flags: string): { test: (s: string) => boolean } {
  if (isRiskyPattern(pattern)) return { test: () => true };
  const re = new RegExp(pattern, flags);
  return { test: (s: string) => s.length > MAX_PATTERN_INPUT || re.test(s) };
}
safeRegExp.code = 'sealmarkSafeRegExp';

/**
 * The formats JSON Schema defines that ajv-formats implements. ajv-formats also knows OpenAPI's
 * (`int32`, `int64`, `float`, `double`, `byte`, `binary`, `password`) and its own (`url`,
 * `iso-time` …); a JSON Schema validator does not, so they are ignored here too: `byte` checked as
 * base64 would make sealmark call a plain string invalid and blame a server for accepting it.
 */
const JSON_SCHEMA_FORMATS = [
  'date-time', 'date', 'time', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uri', 'uri-reference',
  'uri-template', 'uuid', 'json-pointer', 'relative-json-pointer', 'regex',
] as const;

/** Formats OpenAPI 3 defines on top of JSON Schema (named in the foreign-keyword note). */
const OPENAPI_FORMATS = new Set(['int32', 'int64', 'float', 'double', 'byte', 'binary', 'password']);

const ajvOptions = {
  strict: false,
  allErrors: true,
  validateFormats: true,
  validateSchema: true,
  // Unknown formats ("phone-number") are ignored, silently: sealmark's stderr is not the place.
  logger: false,
  code: { regExp: safeRegExp },
  // `constructor` or `toString` inherited from Object.prototype is not an argument that was sent.
  ownProperties: true,
};
const instances = new Map<string, AjvLike>();

function ajvFor(dialect: Dialect): AjvLike {
  let ajv = instances.get(dialect);
  if (ajv) return ajv;
  const addFormats = require('ajv-formats') as (a: AjvLike, formats: readonly string[]) => void;
  if (dialect === '2020-12') ajv = new (require('ajv/dist/2020').default as AjvCtor)(ajvOptions);
  else if (dialect === '2019-09') ajv = new (require('ajv/dist/2019').default as AjvCtor)(ajvOptions);
  else if (dialect === 'draft-04') ajv = new (require('ajv-draft-04').default as AjvCtor)(ajvOptions);
  else {
    ajv = new (require('ajv').default as AjvCtor)(ajvOptions);
    if (dialect === 'draft-06') {
      (ajv as unknown as { addMetaSchema: (s: object) => void }).addMetaSchema(require('ajv/dist/refs/json-schema-draft-06.json'));
    }
  }
  addFormats(ajv, JSON_SCHEMA_FORMATS);
  instances.set(dialect, ajv);
  return ajv;
}

export type Dialect = '2020-12' | '2019-09' | 'draft-07' | 'draft-06' | 'draft-04';

/** The dialect a schema declares, or `undefined` for a `$schema` sealmark does not know. */
export function dialectOf(schema: unknown): Dialect | undefined {
  const s = (schema as { $schema?: unknown } | null)?.$schema;
  if (s === undefined) return '2020-12';
  if (typeof s !== 'string') return undefined;
  if (/json-schema\.org\/draft\/2020-12\/schema/.test(s)) return '2020-12';
  if (/json-schema\.org\/draft\/2019-09\/schema/.test(s)) return '2019-09';
  if (/json-schema\.org\/draft-07\/schema/.test(s)) return 'draft-07';
  if (/json-schema\.org\/draft-06\/schema/.test(s)) return 'draft-06';
  if (/json-schema\.org\/draft-04\/schema/.test(s)) return 'draft-04';
  return undefined;
}

/**
 * A compiled schema, or why it would not compile. `limit: true` marks a failure of sealmark's own
 * limits (a schema nested deeper than the stack allows), which is not the server's fault.
 */
export type Compiled =
  | { ok: true; dialect: Dialect; validate: (value: unknown) => string[] }
  | { ok: false; error: string; limit?: boolean };

/**
 * Compiled schemas by their JSON text: servers list many identical schemas, and Ajv keeps every
 * schema it compiled, so compiling each text once bounds both time and memory. Past
 * {@link MAX_CACHED} texts the cache and the Ajv instances are dropped and start again.
 */
const compiledCache = new Map<string, Compiled>();
const MAX_CACHED = 2000;

/**
 * Compiles `schema` in its dialect. `validate` returns Ajv's errors as `"<instancePath> <message>"`
 * strings (empty when valid). Never throws: a bad schema is `{ ok: false, error }`.
 */
export function compileSchema(schema: unknown): Compiled {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    return { ok: false, error: 'schema is not an object' };
  }
  let key: string;
  try {
    key = JSON.stringify(schema);
  } catch {
    return { ok: false, error: 'schema cannot be serialised' };
  }
  const cached = compiledCache.get(key);
  if (cached) return cached;
  if (compiledCache.size >= MAX_CACHED) {
    compiledCache.clear();
    instances.clear();
  }
  const dialect = dialectOf(schema);
  let result: Compiled;
  if (!dialect) {
    result = { ok: false, error: `unsupported $schema ${JSON.stringify((schema as { $schema?: unknown }).$schema)}` };
  } else {
    try {
      let fn: ValidateFunction;
      const forAjv = withoutThrowingNullable(schema) as object;
      try {
        fn = ajvFor(dialect).compile(forAjv);
      } catch (err) {
        // Two different schemas that share an `$id` clash inside one Ajv: compile this one alone.
        if (!(err instanceof Error && /already exists/.test(err.message))) throw err;
        instances.delete(dialect);
        fn = ajvFor(dialect).compile(forAjv);
      }
      result = {
        ok: true,
        dialect,
        // A validator that throws (a $ref cycle Ajv compiled but cannot run) proves nothing
        // invalid: the value is taken as valid, so no probe is built on it and no reply is blamed.
        validate: (value) => {
          try {
            return fn(value) ? [] : (fn.errors ?? []).map(formatAjvError);
          } catch {
            return [];
          }
        },
      };
    } catch (err) {
      result =
        err instanceof RangeError
          ? { ok: false, error: `sealmark cannot compile a schema this deep (${err.message})`, limit: true }
          : { ok: false, error: err instanceof Error ? err.message : String(err) };
    }
  }
  compiledCache.set(key, result);
  return result;
}

/** Keywords whose value is data, never a schema: nothing under them is a keyword. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'example']);
/** Keywords whose value maps names (not keywords) to schemas. */
const MAP_KEYWORDS = new Set(['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas', 'dependencies']);
/** Keywords whose value is a schema or an array of schemas. */
const SUBSCHEMA_KEYWORDS = new Set([
  'items', 'additionalItems', 'prefixItems', 'contains', 'additionalProperties', 'propertyNames', 'not', 'if', 'then', 'else',
  'allOf', 'anyOf', 'oneOf', 'unevaluatedItems', 'unevaluatedProperties', 'contentSchema',
]);

/**
 * Ajv reads OpenAPI's `nullable` in every dialect: `nullable: true` beside a `type` also admits
 * `null`, which is kept (it only widens what sealmark takes as valid, so no server is blamed for
 * accepting a null it declared), but Ajv refuses to compile `nullable` without a `type`, with a
 * non-boolean value, or `nullable: false` beside `type: "null"`, where OpenAPI gives it no effect
 * and JSON Schema ignores it. Returns `schema` itself when there is no such `nullable`, else a copy
 * without them. Values of data keywords (`enum`, `const`, `default`, `examples`) are left alone;
 * unknown keywords are walked, since a `$ref` may point into them (`#/components/schemas/…`).
 */
function withoutThrowingNullable(node: unknown): unknown {
  if (Array.isArray(node)) {
    let changed = false;
    const out = node.map((x) => {
      const y = withoutThrowingNullable(x);
      if (y !== x) changed = true;
      return y;
    });
    return changed ? out : node;
  }
  if (typeof node !== 'object' || node === null) return node;
  const n = node as Record<string, unknown>;
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(n)) {
    if (k === 'nullable' && !nullableAjvCanRead(n)) {
      changed = true;
      continue;
    }
    let nv = v;
    if (DATA_KEYWORDS.has(k)) nv = v;
    else if (MAP_KEYWORDS.has(k) && typeof v === 'object' && v !== null && !Array.isArray(v)) {
      let mapChanged = false;
      const m: Record<string, unknown> = {};
      for (const [name, sub] of Object.entries(v as Record<string, unknown>)) {
        m[name] = withoutThrowingNullable(sub);
        if (m[name] !== sub) mapChanged = true;
      }
      if (mapChanged) nv = m;
    } else nv = withoutThrowingNullable(v);
    if (nv !== v) changed = true;
    out[k] = nv;
  }
  return changed ? out : node;
}

function nullableAjvCanRead(s: Record<string, unknown>): boolean {
  if (typeof s.nullable !== 'boolean') return false;
  const types = typeof s.type === 'string' ? [s.type] : Array.isArray(s.type) ? s.type : [];
  if (types.length === 0) return false;
  return !(types.includes('null') && s.nullable === false);
}

const DRAFT_04_KEYWORDS = [
  '$schema', 'id', '$ref', 'title', 'description', 'default', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum',
  'exclusiveMinimum', 'maxLength', 'minLength', 'pattern', 'additionalItems', 'items', 'maxItems', 'minItems', 'uniqueItems',
  'maxProperties', 'minProperties', 'required', 'additionalProperties', 'definitions', 'properties', 'patternProperties',
  'dependencies', 'enum', 'type', 'format', 'allOf', 'anyOf', 'oneOf', 'not',
];
const DRAFT_06_KEYWORDS = [...DRAFT_04_KEYWORDS.filter((k) => k !== 'id'), '$id', 'const', 'contains', 'propertyNames', 'examples'];
const DRAFT_07_KEYWORDS = [...DRAFT_06_KEYWORDS, '$comment', 'if', 'then', 'else', 'readOnly', 'writeOnly', 'contentMediaType', 'contentEncoding'];
const DRAFT_2019_KEYWORDS = [
  ...DRAFT_07_KEYWORDS, '$anchor', '$defs', '$recursiveRef', '$recursiveAnchor', '$vocabulary', 'unevaluatedItems',
  'unevaluatedProperties', 'dependentRequired', 'dependentSchemas', 'maxContains', 'minContains', 'deprecated', 'contentSchema',
];
/** Keywords of each dialect (the 2020-12 meta-schema still lists `definitions`, `dependencies` and `$recursive*`). */
const KEYWORDS: Record<Dialect, ReadonlySet<string>> = {
  'draft-04': new Set(DRAFT_04_KEYWORDS),
  'draft-06': new Set(DRAFT_06_KEYWORDS),
  'draft-07': new Set(DRAFT_07_KEYWORDS),
  '2019-09': new Set(DRAFT_2019_KEYWORDS),
  '2020-12': new Set([...DRAFT_2019_KEYWORDS, 'prefixItems', '$dynamicRef', '$dynamicAnchor']),
};
/** OpenAPI 3 Schema Object fields that JSON Schema does not define. */
const OPENAPI_KEYWORDS = new Set(['nullable', 'example', 'discriminator', 'xml', 'externalDocs']);

/** A keyword (or format) a schema uses that its dialect does not define. */
export interface ForeignKeyword {
  /** The keyword, or `format: "<name>"` for an unknown format. */
  name: string;
  /** True for OpenAPI's own keywords, formats and `x-` extensions. */
  openapi: boolean;
}

/**
 * Keywords used anywhere at a schema position of `schema` that `dialect` does not define, and
 * formats JSON Schema does not define, each once, in the order met. Validators ignore them (and
 * {@link compileSchema} does): this is for an advisory note. Values of unknown keywords are not
 * walked (what is inside `discriminator` or `x-order` is not a schema).
 */
export function foreignKeywords(schema: unknown, dialect: Dialect = dialectOf(schema) ?? '2020-12'): ForeignKeyword[] {
  const known = KEYWORDS[dialect];
  const formats = new Set<string>(JSON_SCHEMA_FORMATS);
  const found = new Map<string, ForeignKeyword>();
  const walk = (node: unknown, depth: number): void => {
    if (depth > 64) return;
    if (Array.isArray(node)) {
      for (const x of node) walk(x, depth + 1);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
      if (!known.has(k)) {
        if (!found.has(k)) found.set(k, { name: k, openapi: OPENAPI_KEYWORDS.has(k) || k.startsWith('x-') });
        continue;
      }
      if (k === 'format' && typeof v === 'string' && !formats.has(v)) {
        const name = `format: ${JSON.stringify(v)}`;
        if (!found.has(name)) found.set(name, { name, openapi: OPENAPI_FORMATS.has(v) });
      } else if (MAP_KEYWORDS.has(k) && typeof v === 'object' && v !== null && !Array.isArray(v)) {
        for (const sub of Object.values(v as Record<string, unknown>)) walk(sub, depth + 1);
      } else if (SUBSCHEMA_KEYWORDS.has(k)) walk(v, depth + 1);
    }
  };
  walk(schema, 0);
  return [...found.values()];
}

function formatAjvError(e: ErrorObject): string {
  const where = e.instancePath === '' ? '(root)' : e.instancePath;
  const extra =
    e.keyword === 'additionalProperties'
      ? ` (${String((e.params as { additionalProperty?: unknown }).additionalProperty)})`
      : e.keyword === 'required'
        ? ''
        : '';
  return `${where} ${e.message ?? e.keyword}${extra}`;
}

/** JSON types sealmark distinguishes (JSON Schema `type` values). */
export type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object' | 'null';

/** One declared property of an object schema. */
export interface PropertyInfo {
  name: string;
  schema: Record<string, unknown>;
  /** Declared JSON types; empty = untyped (cannot be probed, SPEC section 5 robust-input). */
  types: JsonType[];
  required: boolean;
  /** `enum` (or `const`) values, when declared. */
  enum?: unknown[];
  /** For an array of objects: the item schema. */
  itemObject?: Record<string, unknown>;
}

const JSON_TYPES: JsonType[] = ['string', 'number', 'integer', 'boolean', 'array', 'object', 'null'];

/** Resolves a local `#/…` `$ref` inside `root` (one level at a time). Returns `node` when it has none. */
export function deref(node: unknown, root: unknown, depth = 0): Record<string, unknown> {
  if (typeof node !== 'object' || node === null) return {};
  const n = node as Record<string, unknown>;
  if (typeof n.$ref === 'string' && n.$ref.startsWith('#') && depth < 20) {
    const path = n.$ref.slice(1).split('/').filter(Boolean).map((p) => decodeURIComponent(p.replace(/~1/g, '/').replace(/~0/g, '~')));
    let cur: unknown = root;
    for (const p of path) cur = (cur as Record<string, unknown> | undefined)?.[p];
    return deref(cur, root, depth + 1);
  }
  return n;
}

/**
 * Declared JSON types of a property schema: from `type` (string or array), else from every branch
 * of `anyOf`/`oneOf` when all branches are typed, else from `enum`/`const` values. `[]` = untyped.
 */
export function declaredTypes(schema: unknown, root: unknown = schema, depth = 0): JsonType[] {
  // Bounded: a $ref cycle through anyOf/oneOf ends here as "untyped".
  if (depth > 16) return [];
  const s = deref(schema, root);
  const t = s.type;
  if (typeof t === 'string') return JSON_TYPES.includes(t as JsonType) ? [t as JsonType] : [];
  if (Array.isArray(t)) return t.filter((x): x is JsonType => JSON_TYPES.includes(x as JsonType));
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = s[key];
    if (Array.isArray(branches) && branches.length > 0) {
      const all = branches.map((b) => declaredTypes(b, root, depth + 1));
      if (all.some((x) => x.length === 0)) return [];
      return [...new Set(all.flat())];
    }
  }
  const values = Array.isArray(s.enum) ? s.enum : 'const' in s ? [s.const] : undefined;
  if (values && values.length > 0) return [...new Set(values.map(jsonTypeOf))];
  return [];
}

/** JSON type of a value (`integer` for whole numbers). */
export function jsonTypeOf(v: unknown): JsonType {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'string') return 'string';
  return 'object';
}

/** True when a value of JSON type `vt` satisfies one of `declared` (an integer satisfies `number`). */
export function typeAllows(declared: JsonType[], vt: JsonType): boolean {
  return declared.includes(vt) || (vt === 'integer' && declared.includes('number'));
}

/** The properties of an object schema (top level), in declaration order. `[]` when it has none. */
export function propertiesOf(schema: unknown): PropertyInfo[] {
  const root = schema;
  const s = deref(schema, root);
  const props = s.properties;
  if (typeof props !== 'object' || props === null || Array.isArray(props)) return [];
  const required = new Set(Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === 'string') : []);
  return Object.entries(props as Record<string, unknown>).map(([name, raw]) => {
    const ps = deref(raw, root);
    const info: PropertyInfo = { name, schema: ps, types: declaredTypes(ps, root), required: required.has(name) };
    if (Array.isArray(ps.enum)) info.enum = ps.enum;
    else if ('const' in ps) info.enum = [ps.const];
    if (info.types.includes('array')) {
      const items = deref(ps.items, root);
      if (declaredTypes(items, root).includes('object')) info.itemObject = resolveDeep(items, root);
    }
    return info;
  });
}

/** Copies `node` with local `$ref`s resolved in `properties` (one level), so it can stand alone. */
function resolveDeep(node: Record<string, unknown>, root: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = { ...node };
  if (typeof node.properties === 'object' && node.properties !== null) {
    out.properties = Object.fromEntries(
      Object.entries(node.properties as Record<string, unknown>).map(([k, v]) => [k, deref(v, root)]),
    );
  }
  return out;
}

/** The `required` names of an object schema that are strings. */
export function requiredOf(schema: unknown): string[] {
  const s = deref(schema, schema);
  return Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === 'string') : [];
}

/** True when the schema states `additionalProperties: false` at its root. */
export function forbidsExtra(schema: unknown): boolean {
  return deref(schema, schema).additionalProperties === false;
}
