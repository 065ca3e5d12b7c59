/**
 * The one recogniser of resource limits (SPEC section 5, pack limits; seed on the Boolean limit):
 * which properties of a tool are counts or durations, what their schema bounds them to, and how
 * many items a reply returned. Pure data in, data out: the limits gatherer and the bounded-limits
 * check both read it, and `sealmark explain bounded-limits` lists its tables.
 */
import { wordsOf } from './words.js';
import { declaredTypes, deref, propertiesOf, type PropertyInfo } from './schema.js';
import type { ListedTool } from './types.js';

/** Whole names (as lower-case words joined by `_`) that are counts (SPEC section 5 bounded-limits). */
export const COUNT_NAMES: readonly string[] = [
  'limit', 'count', 'n', 'depth', 'top_k', 'top_n', 'page_size', 'per_page', 'max_results', 'batch_size',
];
/** First words that make a count (`max_items`, `maxTokens`, `num_results`, `numBeams`). */
export const COUNT_PREFIXES: readonly string[] = ['max', 'num'];
/** Last words that make a count (`row_limit`, `rateLimit`, `retry_count`). */
export const COUNT_SUFFIXES: readonly string[] = ['limit', 'count'];
/**
 * Description phrases that make a numeric property a count whatever its name (`head`: "returns
 * only the first N lines"; `count`-free names such as `steps`: "Number of steps").
 */
export const COUNT_DESCRIPTION = /\b(?:first|last|top) N\b|\bnumber of\b|\bmax(?:imum)? (?:number|count|amount)\b|\bhow many\b|\bup to N\b/i;
/**
 * Words that make a duration (case C5 `wait(seconds)`): a wait the caller chooses is a resource
 * limit too. Matched as the last word of the name (`timeout_ms`, `delaySeconds`, `duration`).
 */
export const DURATION_WORDS: readonly string[] = [
  'seconds', 'secs', 'sec', 'ms', 'millis', 'milliseconds', 'minutes', 'mins', 'timeout', 'delay', 'duration', 'interval', 'ttl', 'age',
];

/** A count-like or duration-like property of a tool. */
export interface LimitProperty {
  property: PropertyInfo;
  kind: 'count' | 'duration';
  /** Why it was recognised: `name`, or `description` (the phrase that matched). */
  because: string;
  /** Path in the tool's inputSchema, e.g. `properties.limit`. */
  path: string;
  /** The tool's whole inputSchema, against which local `$ref`s resolve. */
  root: unknown;
}

/**
 * The count-like and duration-like top-level properties of a tool: recognised by name (the tables
 * above; snake_case, camelCase, kebab-case and dotted names read the same) or by description, and
 * only when the declared type is `integer` or `number`, or when no type is declared at all (a
 * count nobody typed is still a count). A property declared only as string, boolean, array or
 * object is never a limit.
 */
export function limitProperties(tool: ListedTool): LimitProperty[] {
  const out: LimitProperty[] = [];
  for (const p of propertiesOf(tool.inputSchema)) {
    const numeric = p.types.length === 0 || p.types.includes('integer') || p.types.includes('number');
    if (!numeric) continue;
    const found = recognise(p);
    if (found) out.push({ property: p, ...found, path: `properties.${p.name}`, root: tool.inputSchema });
  }
  return out;
}

function recognise(p: PropertyInfo): { kind: 'count' | 'duration'; because: string } | undefined {
  const words = wordsOf(p.name);
  if (words.length === 0) return undefined;
  const joined = words.join('_');
  const first = words[0]!;
  const last = words[words.length - 1]!;
  if (COUNT_NAMES.includes(joined)) return { kind: 'count', because: 'name' };
  if (COUNT_SUFFIXES.includes(last)) return { kind: 'count', because: 'name' };
  // A duration word last wins over a count word first: maxAge, max_delay and min_interval are
  // durations (firecrawl's maxAge is a cache age in ms), max_results a count.
  if (DURATION_WORDS.includes(last) || (words.length > 1 && first === 'timeout')) return { kind: 'duration', because: 'name' };
  if (words.length > 1 && COUNT_PREFIXES.includes(first)) return { kind: 'count', because: 'name' };
  const description = typeof p.schema.description === 'string' ? p.schema.description : '';
  const phrase = COUNT_DESCRIPTION.exec(description)?.[0];
  if (phrase) return { kind: 'count', because: `description ("${phrase}")` };
  return undefined;
}

/** What a limit property's schema admits (SPEC section 5: an `integer` with `minimum` ≥ 0 and a `maximum`). */
export interface LimitBounds {
  /** Declared types, `[]` when untyped. */
  types: string[];
  /** The smallest value the schema admits, when it states one (`exclusiveMinimum` made inclusive for integers). */
  min?: number;
  /** The largest value the schema admits, when it states one. */
  max?: number;
}

/**
 * Reads the bounds of a limit property: `minimum`/`maximum`, numeric `exclusiveMinimum`/
 * `exclusiveMaximum`, their draft-04 Boolean forms, an enum of numbers (its least and greatest),
 * and the numeric branch of an `anyOf`/`oneOf` (pydantic's `Optional[int] = Field(ge=1, le=50)`
 * writes `anyOf: [{type: integer, minimum: 1, maximum: 50}, {type: null}]`) or the parts of an
 * `allOf`. A `number` with `multipleOf: 1` is read as an integer.
 */
export function boundsOf(lp: LimitProperty): LimitBounds {
  const root = lp.root;
  // Types declared only inside allOf parts (`allOf: [{$ref: "#/$defs/Count"}]`) count too.
  let declared: string[] = lp.property.types;
  if (declared.length === 0 && Array.isArray(lp.property.schema.allOf)) {
    declared = [...new Set((lp.property.schema.allOf as unknown[]).flatMap((part) => declaredTypes(part, root)))];
  }
  const out = readBounds(lp.property.schema, declared.includes('integer') && !declared.includes('number'), 0, root);
  const types = out.integerByMultiple ? declared.map((t) => (t === 'number' ? 'integer' : t)) : declared;
  const b: LimitBounds = { types };
  if (out.min !== undefined) b.min = out.min;
  if (out.max !== undefined) b.max = out.max;
  return b;
}

function readBounds(node: Record<string, unknown>, integerType: boolean, depth: number, root: unknown): { min?: number; max?: number; integerByMultiple?: boolean } {
  const schema = deref(node, root);
  const own = ownBounds(schema, integerType);
  if (depth > 4) return own;
  const numericBranches = (key: 'anyOf' | 'oneOf') =>
    (Array.isArray(schema[key]) ? (schema[key] as unknown[]) : [])
      .filter((b): b is Record<string, unknown> => typeof b === 'object' && b !== null && !Array.isArray(b))
      .map((b) => deref(b, root))
      .filter((b) => b.type !== 'null' && !(Array.isArray(b.type) && b.type.length === 1 && b.type[0] === 'null'));
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = numericBranches(key);
    if (branches.length === 1) merge(own, readBounds(branches[0]!, integerType || branches[0]!.type === 'integer', depth + 1, root));
  }
  for (const part of Array.isArray(schema.allOf) ? schema.allOf : []) {
    if (typeof part === 'object' && part !== null) merge(own, readBounds(part as Record<string, unknown>, integerType, depth + 1, root));
  }
  return own;
}

function merge(into: { min?: number; max?: number; integerByMultiple?: boolean }, from: { min?: number; max?: number; integerByMultiple?: boolean }): void {
  if (from.min !== undefined) into.min = Math.max(into.min ?? -Infinity, from.min);
  if (from.max !== undefined) into.max = Math.min(into.max ?? Infinity, from.max);
  if (from.integerByMultiple) into.integerByMultiple = true;
}

function ownBounds(s: Record<string, unknown>, integerType: boolean): { min?: number; max?: number; integerByMultiple?: boolean } {
  const integer = integerType || s.multipleOf === 1;
  const step = integer ? 1 : Number.EPSILON;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  let min = num(s.minimum);
  let max = num(s.maximum);
  // draft-04: exclusiveMinimum/exclusiveMaximum are Booleans that modify minimum/maximum.
  if (min !== undefined && s.exclusiveMinimum === true) min += step;
  if (max !== undefined && s.exclusiveMaximum === true) max -= step;
  const exMin = num(s.exclusiveMinimum);
  const exMax = num(s.exclusiveMaximum);
  if (exMin !== undefined) min = Math.max(min ?? -Infinity, exMin + step);
  if (exMax !== undefined) max = Math.min(max ?? Infinity, exMax - step);
  const out: { min?: number; max?: number; integerByMultiple?: boolean } = {};
  if (min !== undefined) out.min = min;
  if (max !== undefined) out.max = max;
  const numbers = Array.isArray(s.enum) ? s.enum.filter((v): v is number => typeof v === 'number' && Number.isFinite(v)) : [];
  if (numbers.length > 0 && numbers.length === (s.enum as unknown[]).length) {
    out.min = Math.max(out.min ?? -Infinity, Math.min(...numbers));
    out.max = Math.min(out.max ?? Infinity, Math.max(...numbers));
  }
  if (s.multipleOf === 1) out.integerByMultiple = true;
  return out;
}

/**
 * Number of items a successful tools/call result returned, or undefined when it cannot be told
 * (SPEC section 5 bounded-limits; documented by `explain bounded-limits`):
 * 1. `structuredContent` that is an array: its length; an object: the length of its array member
 *    (the longest, when it has several);
 * 2. else `content` with more than one block: the number of blocks;
 * 3. else one text block: a JSON array in it (or an object with an array member, as in 1), else
 *    its non-empty lines.
 */
export function countItems(result: unknown): number | undefined {
  if (typeof result !== 'object' || result === null) return undefined;
  const r = result as { structuredContent?: unknown; content?: unknown };
  const fromStructured = arrayLength(r.structuredContent);
  if (fromStructured !== undefined) return fromStructured;
  if (!Array.isArray(r.content)) return undefined;
  if (r.content.length !== 1) return r.content.length;
  const block = r.content[0] as { type?: unknown; text?: unknown } | null;
  if (block?.type !== 'text' || typeof block.text !== 'string') return 1;
  const text = block.text.trim();
  if (text === '') return 0;
  if (/^[[{]/.test(text) && text.length <= 10_000_000) {
    try {
      const n = arrayLength(JSON.parse(text));
      if (n !== undefined) return n;
    } catch {
      // Not JSON: count lines.
    }
  }
  return text.split('\n').filter((l) => l.trim() !== '').length;
}

function arrayLength(v: unknown): number | undefined {
  if (Array.isArray(v)) return v.length;
  if (typeof v !== 'object' || v === null) return undefined;
  const arrays = Object.values(v).filter(Array.isArray);
  if (arrays.length === 0) return undefined;
  return Math.max(...arrays.map((a) => a.length));
}
