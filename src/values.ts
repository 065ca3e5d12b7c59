/**
 * The one value generator: wrong values for invalid-argument probes, and neutral valid values
 * (the filler of later packs starts from {@link sampleValid}).
 */
import { declaredTypes, jsonTypeOf, propertiesOf, typeAllows, type JsonType, type PropertyInfo } from './schema.js';
import { ARGUMENT_CANARY, credentialLike } from './secrets.js';

/**
 * Wrong-type candidates in the order the seed on robust input gives them: the first one whose JSON
 * type the property does not declare, and that is not one of its enum values, is sent.
 */
export const WRONG_TYPE_CANDIDATES: readonly unknown[] = [12345, 'not-a-valid-value', true, ['x'], { x: 1 }];

/** The value `sm_unexpected` carries in the extra-argument probes. */
export const UNEXPECTED_KEY = 'sm_unexpected';
export const UNEXPECTED_VALUE = 'sealmark';

/** First candidate that violates the property's declared type and is not in its enum; undefined if none. */
export function wrongTypeFor(prop: PropertyInfo): unknown {
  if (prop.types.length === 0) return undefined;
  for (const c of WRONG_TYPE_CANDIDATES) {
    if (typeAllows(prop.types, jsonTypeOf(c))) continue;
    if (prop.enum && prop.enum.some((e) => JSON.stringify(e) === JSON.stringify(c))) continue;
    return c;
  }
  return undefined;
}

/** The object a string argument gets in the string-as-object probe. */
export const OBJECT_FOR_STRING = { x: 1 };

/** Deepest level {@link sampleValid} fills; below it, `null`. */
const MAX_SAMPLE_DEPTH = 6;

/** The neutral word valid strings are filled with. */
export const NEUTRAL_WORD = 'sealmark';

/**
 * A neutral value that the schema should accept: `const`, first enum value, declared `default`,
 * else by type (string: a neutral word fitted to minLength/maxLength/format; number: within bounds;
 * boolean: false; array: `minItems` sampled items; object: its required properties). Depth-limited.
 * Best effort: callers re-validate with Ajv before relying on it.
 */
export function sampleValid(schema: unknown, depth = 0): unknown {
  // Bounded depth (and at most 3 items per array): a small schema of nested arrays with minItems
  // must not make sealmark build millions of values. Ajv rejects what falls short.
  if (depth > MAX_SAMPLE_DEPTH) return null;
  const s = (typeof schema === 'object' && schema !== null ? schema : {}) as Record<string, unknown>;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if ('default' in s) return s.default;
  const types = declaredTypes(s);
  const t: JsonType | undefined = types.find((x) => x !== 'null') ?? types[0];
  switch (t) {
    case 'string':
      return sampleString(s);
    case 'integer':
    case 'number': {
      const min = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : undefined;
      const max = typeof s.maximum === 'number' ? s.maximum : typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - 1 : undefined;
      let v = min !== undefined ? Math.max(min, 1) : 1;
      if (max !== undefined && v > max) v = max;
      return t === 'integer' ? Math.ceil(v) : v;
    }
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array': {
      const n = typeof s.minItems === 'number' ? Math.min(s.minItems, 3) : 0;
      return Array.from({ length: n }, () => sampleValid(s.items, depth + 1));
    }
    case 'object':
      return Object.fromEntries(
        propertiesOf(s)
          .filter((p) => p.required)
          .map((p) => [p.name, sampleProperty(p, depth + 1)]),
      );
    default:
      return NEUTRAL_WORD;
  }
}

/**
 * {@link sampleValid} for a named property: a plain string property whose name reads as a
 * credential (`api_key`, `token`) gets the argument canary, so that a reply repeating it is
 * caught by secret-echo (SPEC section 5: canaries in the arguments of probes).
 */
export function sampleProperty(p: PropertyInfo, depth = 0): unknown {
  const s = p.schema;
  const plain = !('const' in s) && !Array.isArray(s.enum) && !('default' in s) && s.format === undefined && s.pattern === undefined;
  const fits = (typeof s.maxLength !== 'number' || s.maxLength >= ARGUMENT_CANARY.length) && (typeof s.minLength !== 'number' || s.minLength <= ARGUMENT_CANARY.length);
  if (plain && fits && p.types.includes('string') && credentialLike(p.name)) return ARGUMENT_CANARY;
  return sampleValid(s, depth);
}

function sampleString(s: Record<string, unknown>): string {
  switch (s.format) {
    case 'uri':
    case 'url':
      // Loopback only: a server that fetches it must not reach the network.
      return 'http://127.0.0.1:9/sealmark';
    case 'email':
      return 'sealmark@example.invalid';
    case 'date-time':
      return '2026-01-01T00:00:00Z';
    case 'date':
      return '2026-01-01';
    case 'uuid':
      return '00000000-0000-4000-8000-000000000000';
  }
  let v = NEUTRAL_WORD;
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
  while (v.length < min) v += NEUTRAL_WORD;
  return v.slice(0, Math.max(min, Math.min(v.length, max)));
}
