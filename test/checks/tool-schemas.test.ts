/**
 * tool-schemas (SPEC section 5; case C15): real audits for outputSchema conformance, and unit tests
 * of the judge with hand-made artifacts for everything static.
 */
import { describe, expect, it } from 'vitest';
import { auditFixture, checkOf, findingsOf, graded, LATER_PACKS_OFF } from '../helpers/run.js';
import { check } from '../../src/checks/tool-schemas.js';
import { compileSchema, foreignKeywords } from '../../src/schema.js';
import type { Artifacts } from '../../src/checks/check.js';
import { defaultConfig } from '../../src/config/defaults.js';
import type { CheckResult, ProbeCall, ListedTool } from '../../src/types.js';

const QUICK = { checks: { ...LATER_PACKS_OFF, 'protocol-errors': { enabled: false } } };

describe('C15: structuredContent that contradicts outputSchema', () => {
  it('fails `structured-content-mismatch` with the Ajv error path quoted', async () => {
    const r = await auditFixture('c15-output-schema.mjs', QUICK);
    expect(checkOf(r, 'tool-schemas').verdict).toBe('fail');
    expect(graded(r, 'tool-schemas')).toEqual(['structured-content-mismatch']);
    const [f] = findingsOf(r, 'tool-schemas', 'structured-content-mismatch');
    expect(f!.tool).toBe('get_summary');
    expect(f!.evidence.quotes).toEqual(['/content must be string']);
    expect(f!.evidence.schemaPaths).toEqual(['tools[0].outputSchema']);
    expect(f!.message).toBe('get_summary: structuredContent does not conform to outputSchema: /content must be string');
    // The evidence is the valid read-only call, whose reply carried the array.
    const call = r.calls.find((c) => c.seq === f!.evidence.calls![0])!;
    expect(call.probe).toBe('read-only-no-args');
    expect((call.reply.raw as { result: { structuredContent: unknown } }).result.structuredContent).toEqual({ content: ['a', 'b'] });
    expect(f!.replay).toMatch(/^sealmark call --tool get_summary --args '\{\}' -- \S+ \S+c15-output-schema\.mjs$/);
  });
});

describe('correct-sdk.mjs', () => {
  it('passes; the outputSchema tool, called validly through a probes: entry, conforms', async () => {
    const r = await auditFixture('correct-sdk.mjs', { ...QUICK, probes: [{ tool: 'store_stats', arguments: { status: 'open' } }] });
    expect(checkOf(r, 'tool-schemas').verdict).toBe('pass');
    expect(graded(r, 'tool-schemas')).toEqual([]);
    expect(checkOf(r, 'tool-schemas').findings).toEqual([]);
    const up = r.calls.find((c) => c.probe === 'user-probe' && c.tool === 'store_stats')!;
    expect(up.class).toBe('accepted');
    expect((up.reply.raw as { result: { structuredContent: unknown } }).result.structuredContent).toEqual({ status: 'open', count: 3 });
  });
});

// --- unit: the judge on hand-made artifacts ---------------------------------------------------------

function listed(raw: unknown, index: number): ListedTool {
  const t = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  return { index, name: typeof t.name === 'string' ? t.name : `#${index}`, raw, inputSchema: t.inputSchema, annotations: undefined };
}

function artifacts(tools: unknown[], calls: ProbeCall[] = []): Artifacts {
  return {
    listExchanges: [],
    tools: tools.map(listed),
    noise: { count: 0, bytes: 0, lines: [] },
    stderrTail: '',
    exit: null,
    calls,
    strays: [],
    config: defaultConfig(),
  };
}

function judge(tools: unknown[], calls: ProbeCall[] = []): CheckResult {
  return check.judge(artifacts(tools, calls), { replay: (tool, args) => `replay ${tool} ${JSON.stringify(args)}` });
}

/** A successful tools/call of `tool` whose result is `result`. */
function okCall(seq: number, tool: string, result: unknown): ProbeCall {
  return {
    seq,
    probe: 'user-probe',
    tool,
    arguments: {},
    exchange: { id: seq, method: 'tools/call', sent: '{}', reply: { kind: 'response', result, raw: { result } }, startedAtMs: 0, durationMs: 1 },
  };
}

const ids = (r: CheckResult) => r.findings.map((f) => [f.messageId, f.level]);
const obj = (properties: Record<string, unknown> = { q: { type: 'string' } }, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...extra });

describe('tool-schemas judge', () => {
  it('a clean tool passes with no findings', () => {
    const r = judge([{ name: 'search', inputSchema: obj({ q: { type: 'string' } }, { required: ['q'] }) }]);
    expect(r.verdict).toBe('pass');
    expect(r.findings).toEqual([]);
  });

  it('a root that is not type "object" fails', () => {
    const r = judge([
      { name: 'a', inputSchema: { type: 'string' } },
      { name: 'b', inputSchema: { properties: { q: { type: 'string' } } } },
    ]);
    expect(r.verdict).toBe('fail');
    expect(ids(r)).toEqual([
      ['input-schema-not-object', 'fail'],
      ['input-schema-not-object', 'fail'],
    ]);
    expect(r.findings[0]!.message).toBe('a: inputSchema root has type "string", not "object"');
    expect(r.findings[1]!.message).toBe('b: inputSchema root has type null, not "object"');
    expect(r.findings[0]!.evidence.schemaPaths).toEqual(['tools[0].inputSchema.type']);
  });

  it('an inputSchema that is not an object, or does not compile, fails `input-schema-compile`', () => {
    const r = judge([
      { name: 'arr', inputSchema: [] },
      { name: 'bad_type', inputSchema: obj({ q: { type: 'strang' } }) },
      { name: 'bad_dialect', inputSchema: { $schema: 'https://example.com/my-dialect', type: 'object' } },
      { name: 'missing' },
    ]);
    expect(r.verdict).toBe('fail');
    expect(r.findings.map((f) => [f.messageId, f.tool])).toEqual([
      ['input-schema-compile', 'arr'],
      ['input-schema-compile', 'bad_type'],
      ['input-schema-compile', 'bad_dialect'],
      ['input-schema-compile', 'missing'],
    ]);
    expect(r.findings[0]!.data.error).toBe('schema is not an object');
    expect(String(r.findings[1]!.data.error)).toMatch(/schema is invalid/);
    expect(r.findings[2]!.data.error).toBe('unsupported $schema "https://example.com/my-dialect"');
  });

  it('a remote $ref is never fetched: the schema does not compile', () => {
    const r = judge([{ name: 'remote', inputSchema: obj({ a: { $ref: 'https://example.com/schemas/a.json' } }) }]);
    expect(ids(r)).toEqual([['input-schema-compile', 'fail']]);
    expect(String(r.findings[0]!.data.error)).toContain('https://example.com/schemas/a.json');
  });

  it('a required name that is not a declared property is partial', () => {
    const r = judge([{ name: 'x', inputSchema: obj({ q: { type: 'string' } }, { required: ['q', 'limit', 'page'] }) }]);
    expect(r.verdict).toBe('partial');
    expect(ids(r)).toEqual([['required-undeclared', 'partial']]);
    expect(r.findings[0]!.data.names).toBe('limit, page');
    expect(r.findings[0]!.evidence.schemaPaths).toEqual(['tools[0].inputSchema.required']);
  });

  it('untyped properties are listed (info), not graded', () => {
    const r = judge([{ name: 'x', inputSchema: obj({ q: { type: 'string' }, any: {}, note: { description: 'free' } }) }]);
    expect(r.verdict).toBe('pass');
    expect(ids(r)).toEqual([['untyped-properties', 'info']]);
    expect(r.findings[0]!.data.names).toBe('any, note');
  });

  it.each([
    ['a space', 'get user'],
    ['129 characters', 'a'.repeat(129)],
    ['a slash', 'files/read'],
    ['non-ASCII', 'café'],
  ])('a name with %s breaks the 2025-11-25 rule: partial `bad-name`', (_label, name) => {
    const r = judge([{ name, inputSchema: obj() }]);
    expect(r.verdict).toBe('partial');
    expect(ids(r)).toEqual([['bad-name', 'partial']]);
    expect(r.findings[0]!.tool).toBe(name);
  });

  it('names of 1 and 128 characters of A-Z a-z 0-9 _ . - are fine', () => {
    const r = judge([
      { name: 'a'.repeat(128), inputSchema: obj() },
      { name: 'x', inputSchema: obj() },
      { name: 'ns.Tool-name_2', inputSchema: obj() },
    ]);
    expect(r.verdict).toBe('pass');
    expect(r.findings).toEqual([]);
  });

  it('duplicate names fail, as one finding with the count', () => {
    const r = judge([
      { name: 'dup', inputSchema: obj() },
      { name: 'other', inputSchema: obj() },
      { name: 'dup', inputSchema: obj() },
    ]);
    expect(r.verdict).toBe('fail');
    expect(ids(r)).toEqual([['duplicate-name', 'fail']]);
    expect(r.findings[0]!.message).toBe('dup: 2 tools share this name');
  });

  it('a draft-07 $schema is accepted (as SDK 1.x with zod emits it), and so is 2019-09', () => {
    const r = judge([
      {
        name: 'draft7',
        inputSchema: {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          properties: { title: { type: 'string' }, tags: { type: 'array', items: { $ref: '#/definitions/tag' } } },
          required: ['title'],
          additionalProperties: false,
          definitions: { tag: { type: 'string' } },
        },
      },
      { name: 'draft2019', inputSchema: { $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'object', properties: { q: { type: 'string' } } } },
    ]);
    expect(r.verdict).toBe('pass');
    expect(r.findings).toEqual([]);
  });

  it('a tool entry without a string name is `malformed-tool` and the others are still judged', () => {
    const r = judge([{ inputSchema: obj() }, { name: 'fine', inputSchema: { type: 'string' } }]);
    expect(r.verdict).toBe('fail');
    expect(r.findings.map((f) => f.messageId)).toEqual(['malformed-tool', 'input-schema-not-object']);
    expect(r.findings[0]!.message).toBe('tool #0 is not a valid tool object: no string name');
  });

  it('an outputSchema that does not compile fails', () => {
    const r = judge([{ name: 'x', inputSchema: obj(), outputSchema: { type: 'object', properties: { n: { type: 'integr' } } } }]);
    expect(ids(r)).toEqual([['output-schema-compile', 'fail']]);
    expect(r.findings[0]!.evidence.schemaPaths).toEqual(['tools[0].outputSchema']);
  });

  it('structuredContent is checked against outputSchema on successful calls only', () => {
    const outputSchema = { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] };
    const tool = { name: 'stats', inputSchema: obj(), outputSchema };
    const good = okCall(1, 'stats', { content: [], structuredContent: { count: 3 } });
    const bad = okCall(2, 'stats', { content: [], structuredContent: { count: 'three' } });
    const errored = okCall(3, 'stats', { content: [], isError: true, structuredContent: { count: 'x' } });
    const missing = okCall(4, 'stats', { content: [{ type: 'text', text: '3' }] });

    expect(judge([tool], [good, errored]).verdict).toBe('pass');

    const r = judge([tool], [good, bad, errored, missing]);
    expect(r.verdict).toBe('fail');
    expect(ids(r)).toEqual([
      ['structured-content-mismatch', 'fail'],
      ['structured-content-missing', 'partial'],
    ]);
    expect(r.findings[0]!.evidence.quotes).toEqual(['/count must be integer']);
    expect(r.findings[0]!.evidence.calls).toEqual([2]);
    expect(r.findings[1]!.evidence.calls).toEqual([4]);
  });

  it('is n/a when no tools were listed', () => {
    const r = judge([]);
    expect(r.verdict).toBe('n/a');
    expect(r.notes).toEqual(['no tools were listed']);
  });
});

// --- issue 13: schemas are judged in their declared dialect -------------------------------------------

describe('schemas/nullable-2020.mjs: OpenAPI keywords are ignored, not "does not compile"', () => {
  it('passes the OpenAPI-flavoured tools with one foreign-keywords note each; the really broken schema still fails', async () => {
    const r = await auditFixture('schemas/nullable-2020.mjs', QUICK);
    const ts = checkOf(r, 'tool-schemas');
    expect(ts.verdict).toBe('fail');
    expect(ts.findings.filter((f) => f.level !== 'info').map((f) => [f.messageId, f.tool])).toEqual([['input-schema-compile', 'broken_tool']]);
    const notes = findingsOf(r, 'tool-schemas', 'foreign-keywords');
    expect(notes.map((f) => [f.tool, f.level])).toEqual([
      ['search_orders', 'info'],
      ['get_invoice', 'info'],
    ]);
    expect(notes[0]!.message).toBe(
      'search_orders: `nullable`, `example`, `x-order`, `format: "int64"`, `discriminator` are not keywords of JSON Schema 2020-12 (OpenAPI extensions): validators ignore them',
    );
    expect(notes[1]!.message).toBe(
      'get_invoice: `format: "byte"`, `example`, `format: "double"`, `nullable` are not keywords of JSON Schema draft-07 (OpenAPI extensions): validators ignore them',
    );
    expect(notes[0]!.evidence.schemaPaths).toEqual(['tools[0].inputSchema']);

    // robust-input probes the nullable tools (their properties are typed) and skips only the broken one.
    const ri = checkOf(r, 'robust-input');
    expect(ri.verdict).toBe('pass');
    const RI = new Set(['missing-required', 'wrong-types', 'nulls', 'extra-argument', 'string-as-object', 'no-arguments']);
    const probedTools = new Set(r.calls.filter((c) => RI.has(c.probe)).map((c) => c.tool));
    expect(probedTools.has('search_orders')).toBe(true);
    expect(probedTools.has('get_invoice')).toBe(true);
    expect(probedTools.has('broken_tool')).toBe(false);
    const wrong = r.calls.find((c) => c.tool === 'search_orders' && c.probe === 'wrong-types')!;
    expect(wrong.class).toBe('rejected');
  });
});

describe('tool-schemas judge: foreign keywords', () => {
  const s2020 = 'https://json-schema.org/draft/2020-12/schema';

  it('`nullable` under 2020-12 (even without a type) compiles and is one info note naming it', () => {
    const r = judge([
      { name: 'n', inputSchema: { $schema: s2020, type: 'object', properties: { a: { type: 'string', nullable: true }, b: { nullable: true, $ref: '#/$defs/b' } }, $defs: { b: { type: 'integer' } } } },
    ]);
    expect(r.verdict).toBe('pass');
    expect(ids(r)).toEqual([['foreign-keywords', 'info']]);
    expect(r.findings[0]!.message).toBe('n: `nullable` is not a keyword of JSON Schema 2020-12 (an OpenAPI extension): validators ignore it');
  });

  it('keywords of no one are named without the OpenAPI origin; a property called `nullable` is not a keyword', () => {
    const r = judge([{ name: 'm', inputSchema: obj({ nullable: { type: 'boolean' }, q: { type: 'string', markdownDescription: 'x' } }) }]);
    expect(ids(r)).toEqual([['foreign-keywords', 'info']]);
    expect(r.findings[0]!.message).toBe('m: `markdownDescription` is not a keyword of JSON Schema 2020-12: validators ignore it');
  });

  it('an outputSchema adds its own foreign keywords to the same note', () => {
    const r = judge([{ name: 'o', inputSchema: obj({ q: { type: 'string', example: 'x' } }), outputSchema: { type: 'object', properties: { n: { type: 'integer', format: 'int32', nullable: true } } } }]);
    expect(r.verdict).toBe('pass');
    expect(ids(r)).toEqual([['foreign-keywords', 'info']]);
    expect(r.findings[0]!.data.keywords).toBe('`example`, `format: "int32"`, `nullable`');
    expect(r.findings[0]!.evidence.schemaPaths).toEqual(['tools[0].inputSchema', 'tools[0].outputSchema']);
  });

  it.each([
    ['type "strng"', { q: { type: 'strng', nullable: true } }, {}],
    ['required "x"', { q: { type: 'string' } }, { required: 'x' }],
    ['minimum "a"', { q: { type: 'number', minimum: 'a', nullable: true } }, {}],
    ['a $ref to nothing', { q: { $ref: '#/$defs/none', nullable: true } }, {}],
  ])('a schema that really does not compile (%s) still fails `input-schema-compile`', (_label, properties, extra) => {
    const r = judge([{ name: 'bad', inputSchema: { $schema: s2020, ...obj(properties, extra) } }]);
    expect(r.verdict).toBe('fail');
    expect(ids(r)).toEqual([['input-schema-compile', 'fail']]);
  });
});

describe('compileSchema (src/schema.ts) in the declared dialect', () => {
  const compiled = (schema: unknown) => {
    const c = compileSchema(schema);
    if (!c.ok) throw new Error(c.error);
    return c;
  };

  it.each([
    ['2020-12', 'https://json-schema.org/draft/2020-12/schema'],
    ['2019-09', 'https://json-schema.org/draft/2019-09/schema'],
    ['draft-07', 'http://json-schema.org/draft-07/schema#'],
    ['draft-06', 'http://json-schema.org/draft-06/schema#'],
    ['draft-04', 'http://json-schema.org/draft-04/schema#'],
  ])('%s: nullable (with and without a type), example, x-*, discriminator, OpenAPI formats compile', (dialect, $schema) => {
    const c = compiled({
      $schema,
      type: 'object',
      properties: {
        a: { type: 'string', nullable: true, example: 'x', 'x-order': 1 },
        b: { nullable: true, anyOf: [{ type: 'string' }] },
        c: { type: 'null', nullable: false },
        d: { type: 'string', nullable: 'yes' },
        n: { type: 'integer', format: 'int64' },
        f: { type: 'number', format: 'double' },
        y: { type: 'string', format: 'byte' },
        p: { type: 'string', format: 'password' },
      },
      discriminator: { propertyName: 'a' },
    });
    expect(c.dialect).toBe(dialect);
    // OpenAPI formats are not checked: a plain string is a `byte`, 2^63 an `int64`.
    expect(c.validate({ y: 'not base64!', n: 2 ** 63, f: 1.5, p: 'x', c: null })).toEqual([]);
    // Types still are.
    expect(c.validate({ a: 3 })).toEqual(['/a must be string']);
    expect(c.validate({ b: 3 }).length).toBeGreaterThan(0);
  });

  it('`nullable: true` beside a type admits null (never blames a declared null); without a type it is ignored', () => {
    const c = compiled({ type: 'object', properties: { a: { type: 'string', nullable: true }, b: { nullable: true, anyOf: [{ type: 'string' }] } } });
    expect(c.validate({ a: null })).toEqual([]);
    expect(c.validate({ b: null }).length).toBeGreaterThan(0);
  });

  it('a property, an enum value or a default named like a foreign keyword is left alone', () => {
    const c = compiled({ type: 'object', properties: { nullable: { type: 'boolean', default: { nullable: 1 } }, k: { enum: [{ nullable: 'x' }] } }, required: ['nullable'] });
    expect(c.validate({})).toEqual(["(root) must have required property 'nullable'"]);
    expect(c.validate({ nullable: true, k: { nullable: 'x' } })).toEqual([]);
  });

  it('standard formats are still checked', () => {
    const c = compiled({ type: 'object', properties: { at: { type: 'string', format: 'date-time' } } });
    expect(c.validate({ at: 'yesterday' })).toEqual(['/at must match format "date-time"']);
  });

  it('foreignKeywords names each keyword once, in the order met, and knows each dialect', () => {
    const schema = { type: 'object', properties: { a: { type: 'string', nullable: true, 'x-a': 1 }, b: { $ref: '#/$defs/b', nullable: true } }, $defs: { b: { type: 'integer', format: 'int64', example: 1 } } };
    expect(foreignKeywords(schema)).toEqual([
      { name: 'nullable', openapi: true },
      { name: 'x-a', openapi: true },
      { name: 'format: "int64"', openapi: true },
      { name: 'example', openapi: true },
    ]);
    expect(foreignKeywords({ type: 'object', $defs: {}, const: 1 }, 'draft-04').map((k) => k.name)).toEqual(['$defs', 'const']);
    expect(foreignKeywords({ type: 'object', definitions: {}, $comment: 'x', if: {} }, 'draft-07')).toEqual([]);
    expect(foreignKeywords({ type: 'object', prefixItems: [], $dynamicRef: '#x' }, '2019-09').map((k) => k.name)).toEqual(['prefixItems', '$dynamicRef']);
  });
});
