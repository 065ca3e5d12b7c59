import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  classifyReply,
  readValidatorErrors,
  VALIDATOR_FORMATS,
  replyText,
  scanLeaks,
  REFUSAL_TERMS,
  LEAK_PATTERNS,
  ROOT,
  SEP_1303_NOTE,
  LEAK_SCAN_MAX_CHARS,
  textLeaves,
  refusedForRateLimit,
} from '../../src/classify.js';
import type { Reply, ReplyClass, LeakPattern } from '../../src/types.js';

// --- reply builders ------------------------------------------------------------------------------

const rpcError = (code: number, message: unknown, data?: unknown): Reply => ({
  kind: 'response',
  error: data === undefined ? { code, message } : { code, message, data },
  raw: {},
});
const toolError = (text: string): Reply => ({ kind: 'response', result: { content: [{ type: 'text', text }], isError: true }, raw: {} });
const toolOk = (text: string, isError?: false): Reply => ({
  kind: 'response',
  result: isError === undefined ? { content: [{ type: 'text', text }] } : { content: [{ type: 'text', text }], isError },
  raw: {},
});
const result = (r: unknown): Reply => ({ kind: 'response', result: r, raw: {} });

// --- real texts (research/mcp-protocol-and-sdk.md section 4.9, handed cases) ---------------------

/** SDK 1.32.2 + zod 4, `{a:'x', b:-1}` to `{a: number, b: int >= 0}` (isError result). */
const V1_1322 =
  'MCP error -32602: Input validation error: Invalid arguments for tool add: Invalid input: expected number, received string at a\nToo small: expected number to be >=0 at b';
/** SDK 1.32.2 + zod 4, `{}`. */
const V1_1322_EMPTY =
  'MCP error -32602: Input validation error: Invalid arguments for tool add: Invalid input: expected number, received undefined at a\nInvalid input: expected number, received undefined at b';
/** SDK 1.32.2 + zod 3.25, `{}`. */
const V1_ZOD3 = 'MCP error -32602: Input validation error: Invalid arguments for tool add: Required at a\nRequired at b';
/** SDK <= 1.20 (JSON-RPC error -32602, zod issue JSON). */
const V1_LE120 =
  'MCP error -32602: Invalid arguments for tool add: [\n  {\n    "code": "invalid_type",\n    "expected": "number",\n    "received": "string",\n    "path": [\n      "a"\n    ],\n    "message": "Expected number, received string"\n  }\n]';
/** SDK 1.21–1.29 (isError result, raw zod issue JSON). */
const V1_121 =
  'MCP error -32602: Input validation error: Invalid arguments for tool add: [{"expected":"number","code":"invalid_type","path":["a"],"message":"Invalid input: expected number, received string"}]';
/** SDK v2 (isError result). */
const V2 =
  'Input validation error: Invalid arguments for tool add: a: Invalid input: expected number, received string, b: Too small: expected number to be >=0';
/** SDK 1.32.2, `arguments: [1,2]`: JSON-RPC -32603 with the CallToolRequest ZodError. */
const ZOD_32603 =
  '[{"expected":"record","code":"invalid_type","path":["params","arguments"],"message":"Invalid input: expected record, received array"}]';
/** SDK v2, `arguments: [1]`: JSON-RPC -32602 (not -32603). */
const V2_NON_OBJECT =
  'Invalid tools/call request: [\n  {\n    "expected": "record",\n    "code": "invalid_type",\n    "path": [\n      "params",\n      "arguments"\n    ],\n    "message": "Invalid input: expected record, received array"\n  }\n]';
/** Case C1. */
const C1 = "TypeError: Cannot read properties of undefined (reading 'toLowerCase')";
/** Case C2 (traceback.format_exc()). */
const C2 = [
  'Traceback (most recent call last):',
  '  File "/app/fixtures/c2_traceback.py", line 52, in handle',
  '    text = resize_image(params.get("arguments") or {})',
  '  File "/app/fixtures/c2_traceback.py", line 24, in resize_image',
  '    width = args["width"] * 2 // 2',
  "TypeError: unsupported operand type(s) for //: 'str' and 'int'",
].join('\n');
/** A rejection with a JS stack (the leaks-stack fixture). */
const STACK = [
  'ValidationError: Invalid arguments: parameter "title" must be of type string, got number',
  '    at ZodObject.parse (/home/runner/app/node_modules/zod/lib/index.js:12:3)',
  '    at handler (/home/runner/app/src/tools.js:42:13)',
  '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
  '    at node:internal/process/task_queues:95:5',
].join('\n');

// --- classes ---------------------------------------------------------------------------------------

interface Row {
  name: string;
  reply: Reply;
  params: string[];
  cls: ReplyClass;
  named?: string[];
  version?: string;
}

const rows: Row[] = [
  // rejected
  { name: 'v1 1.32.2 zod 4 (isError)', reply: toolError(V1_1322), params: ['a', 'b'], cls: 'rejected', named: ['a', 'b'] },
  { name: 'v1 1.32.2 {} (isError)', reply: toolError(V1_1322_EMPTY), params: ['a', 'b'], cls: 'rejected', named: ['a', 'b'] },
  { name: 'v1 1.32.2 zod 3 "Required at a"', reply: toolError(V1_ZOD3), params: ['a', 'b'], cls: 'rejected', named: ['a', 'b'] },
  { name: 'v1 <=1.20 zod issue JSON (-32602)', reply: rpcError(-32602, V1_LE120), params: ['a', 'b'], cls: 'rejected', named: ['a'] },
  { name: 'v1 1.21 zod issue JSON (isError)', reply: toolError(V1_121), params: ['a', 'b'], cls: 'rejected', named: ['a'] },
  { name: 'v2 "a: Invalid input"', reply: toolError(V2), params: ['a', 'b'], cls: 'rejected', named: ['a', 'b'] },
  { name: 'Ajv required property', reply: toolError("must have required property 'owner'"), params: ['owner', 'repo'], cls: 'rejected', named: ['owner'] },
  { name: 'Ajv instance path', reply: toolError('/owner must be string'), params: ['owner', 'repo'], cls: 'rejected', named: ['owner'] },
  { name: 'Ajv errorsText', reply: rpcError(-32602, 'data/repo must be string'), params: ['owner', 'repo'], cls: 'rejected', named: ['repo'] },
  { name: 'Python missing required parameter (isError)', reply: toolError('missing required parameter: owner'), params: ['owner'], cls: 'rejected', named: ['owner'] },
  {
    name: 'FastMCP pydantic',
    reply: toolError(
      "Error executing tool add: 1 validation error for addArguments\na\n  Input should be a valid number, unable to parse string as a number [type=float_parsing, input_value='x', input_type=str]",
    ),
    params: ['a', 'b'],
    cls: 'rejected',
    named: ['a'],
  },
  { name: 'zod strict unrecognized key -> root', reply: toolError('Input validation error: Invalid arguments for tool add: Unrecognized key: "sm_unexpected"'), params: ['a'], cls: 'rejected', named: [ROOT] },
  {
    name: 'v1 1.32.2 strict object: wrong type plus sm_unexpected',
    reply: toolError('MCP error -32602: Input validation error: Invalid arguments for tool strict: Invalid input: expected string, received number at owner\nUnrecognized key: "sm_unexpected"'),
    params: ['owner'],
    cls: 'rejected',
    named: ['owner', ROOT],
  },
  {
    name: 'v2 strict object: wrong type plus sm_unexpected',
    reply: toolError('Input validation error: Invalid arguments for tool strict: owner: Invalid input: expected string, received number, Unrecognized key: "sm_unexpected"'),
    params: ['owner'],
    cls: 'rejected',
    named: ['owner', ROOT],
  },
  { name: 'v2 non-object arguments (-32602 CallToolRequest ZodError)', reply: rpcError(-32602, V2_NON_OBJECT), params: ['a', 'b'], cls: 'rejected', named: [ROOT] },
  { name: 'wrong type plus extra key', reply: toolError('a: Invalid input: expected number, received string, Unrecognized key: "sm_unexpected"'), params: ['a'], cls: 'rejected', named: ['a', ROOT] },
  { name: 'Ajv root type -> root', reply: rpcError(-32602, 'data must be object'), params: ['a'], cls: 'rejected', named: [ROOT] },
  { name: 'fixture root message', reply: toolError('Invalid arguments for tool route: parameter "arguments" must be of type object, got array'), params: ['task'], cls: 'rejected', named: [ROOT] },
  { name: 'ValueError naming the parameter', reply: toolError('ValueError: limit must be positive'), params: ['limit'], cls: 'rejected', named: ['limit'] },
  { name: '-32603 naming a declared parameter as invalid', reply: rpcError(-32603, 'Internal error: owner is required'), params: ['owner'], cls: 'rejected', named: ['owner'] },
  { name: 'a timeout parameter named invalid is a rejection, not a failed fetch', reply: toolError('timeout must be a number'), params: ['timeout'], cls: 'rejected', named: ['timeout'] },
  // rejected-unnamed
  { name: 'Invalid arguments', reply: toolError('Invalid arguments'), params: ['owner'], cls: 'rejected-unnamed', named: [] },
  { name: 'Bad request (-32602)', reply: rpcError(-32602, 'Bad request'), params: ['owner'], cls: 'rejected-unnamed', named: [] },
  { name: 'other error text', reply: toolError('boom'), params: ['owner'], cls: 'rejected-unnamed', named: [] },
  { name: 'root words alone are not the root', reply: toolError('Invalid arguments for tool add'), params: ['add'], cls: 'rejected-unnamed', named: [] },
  // text-refusal
  { name: 'C13 missing required parameter, isError false', reply: toolOk('missing required parameter: owner', false), params: ['owner', 'repo'], cls: 'text-refusal', named: ['owner'] },
  { name: 'C13 wrong type, isError absent', reply: toolOk('parameter owner must be a string'), params: ['owner', 'repo'], cls: 'text-refusal', named: ['owner'] },
  { name: 'refusal fixture "name must be"', reply: toolOk('invalid input: name must be a string, not number'), params: ['owner', 'name'], cls: 'text-refusal', named: ['name'] },
  { name: 'refusal naming nothing', reply: toolOk('Error: the request is invalid'), params: ['owner'], cls: 'text-refusal', named: [] },
  { name: 'a success that merely starts with Error (server-everything get-annotated-message)', reply: toolOk('Error: Operation failed'), params: ['messageType'], cls: 'accepted' },
  // lenient-downstream
  { name: 'ECONNREFUSED (isError)', reply: toolError('fetch failed: connect ECONNREFUSED 127.0.0.1:9'), params: ['url'], cls: 'lenient-downstream' },
  { name: 'undici TypeError: fetch failed (-32000)', reply: rpcError(-32000, 'TypeError: fetch failed', { cause: 'getaddrinfo ENOTFOUND not-a-valid-value' }), params: ['url'], cls: 'lenient-downstream' },
  { name: 'ETIMEDOUT mentioning url but not as invalid', reply: toolError('request to url http://x/ failed: connect ETIMEDOUT'), params: ['url'], cls: 'lenient-downstream', named: ['url'] },
  { name: 'TLS certificate', reply: toolError('self signed certificate in certificate chain'), params: ['host'], cls: 'lenient-downstream' },
  { name: 'ECONNREFUSED in a normal result', reply: toolOk('Error: connect ECONNREFUSED 127.0.0.1:80'), params: ['url'], cls: 'lenient-downstream' },
  // internal-error
  { name: 'C1 TypeError', reply: toolError(C1), params: ['task'], cls: 'internal-error', named: [] },
  { name: 'C1 SDK style (bare message)', reply: toolError("Cannot read properties of undefined (reading 'toLowerCase')"), params: ['task'], cls: 'internal-error' },
  { name: 'C1 is not a function naming task', reply: toolError('TypeError: task.toLowerCase is not a function'), params: ['task'], cls: 'internal-error', named: ['task'] },
  { name: 'C2 traceback', reply: toolError(C2), params: ['path', 'width'], cls: 'internal-error' },
  { name: 'C14 -32603 Internal error', reply: rpcError(-32603, 'Internal error'), params: ['amount', 'currency'], cls: 'internal-error', named: [] },
  { name: '-32603 CallToolRequest ZodError (root only)', reply: rpcError(-32603, ZOD_32603), params: ['a', 'b'], cls: 'internal-error', named: [ROOT] },
  { name: '-32603 with ECONNREFUSED', reply: rpcError(-32603, 'connect ECONNREFUSED 127.0.0.1:443'), params: ['url'], cls: 'internal-error' },
  { name: 'KeyError naming the parameter is still a crash', reply: toolError("KeyError: 'user_id'"), params: ['user_id'], cls: 'internal-error', named: ['user_id'] },
  { name: 'AttributeError NoneType', reply: toolError("AttributeError: 'NoneType' object has no attribute 'strip'"), params: ['user_id'], cls: 'internal-error' },
  { name: 'ValueError naming no parameter', reply: toolError("ValueError: invalid literal for int() with base 10: 'x'"), params: ['count'], cls: 'internal-error' },
  { name: 'Python signature TypeError', reply: toolError("TypeError: add() missing 1 required positional argument: 'b'"), params: ['a', 'b'], cls: 'internal-error', named: ['b'] },
  { name: 'JSON.parse of an argument', reply: toolError('SyntaxError: Unexpected token \'n\', "not-a-valid-value" is not valid JSON'), params: ['payload'], cls: 'internal-error' },
  { name: 'zod 4 with SDK 1.20 crash', reply: rpcError(-32603, 'keyValidator._parse is not a function'), params: ['a'], cls: 'internal-error' },
  { name: 'runtime error in a normal result', reply: toolOk("Error: Cannot read properties of null (reading 'x')"), params: ['x'], cls: 'internal-error' },
  // accepted
  { name: 'a success', reply: toolOk('queue: general'), params: ['task'], cls: 'accepted', named: [] },
  { name: 'an echo of the probe value is not a refusal', reply: toolOk('created issue "not-a-valid-value"'), params: ['title'], cls: 'accepted' },
  { name: 'isError false, empty content', reply: result({ content: [], isError: false }), params: ['a'], cls: 'accepted' },
  { name: 'structuredContent only', reply: result({ structuredContent: { total: 3 } }), params: ['a'], cls: 'accepted' },
  { name: 'refusal words past the head are data', reply: toolOk(`${'row\n'.repeat(200)}status: invalid`), params: ['a'], cls: 'accepted' },
  { name: 'a timeout word in a normal result is data', reply: toolOk('timeout: 30s, tls: on'), params: ['host'], cls: 'accepted' },
  // hang / exited / protocol-error
  { name: 'hang', reply: { kind: 'hang', waitedMs: 2000 }, params: ['a'], cls: 'hang' },
  { name: 'exited', reply: { kind: 'exited', exit: null }, params: ['a'], cls: 'exited' },
  { name: 'malformed', reply: { kind: 'malformed', problem: 'both result and error', raw: {} }, params: ['a'], cls: 'protocol-error' },
  { name: 'result not an object', reply: result('ok'), params: ['a'], cls: 'protocol-error' },
  { name: 'result null', reply: result(null), params: ['a'], cls: 'protocol-error' },
  { name: 'result an array', reply: result([1]), params: ['a'], cls: 'protocol-error' },
  { name: 'content not an array', reply: result({ content: 'hello' }), params: ['a'], cls: 'protocol-error' },
];

describe('classifyReply: one class per reply (SPEC section 4)', () => {
  it.each(rows)('$name → $cls', ({ reply, params, cls, named, version }) => {
    const c = classifyReply({ reply, declaredParams: params, protocolVersion: version });
    expect(c.class).toBe(cls);
    if (named) expect(c.named).toEqual(named);
  });

  it('covers every class with a positive row', () => {
    const all: ReplyClass[] = ['rejected', 'rejected-unnamed', 'text-refusal', 'lenient-downstream', 'internal-error', 'accepted', 'hang', 'exited', 'protocol-error'];
    for (const cls of all) expect(rows.some((r) => r.cls === cls)).toBe(true);
  });
});

/** For every class, a reply that comes close but is another class. */
const negatives: { name: string; reply: Reply; params: string[]; not: ReplyClass }[] = [
  { name: 'rejected: a generic "Invalid arguments"', reply: toolError('Invalid arguments'), params: ['a'], not: 'rejected' },
  { name: 'rejected: -32603 naming only the root', reply: rpcError(-32603, ZOD_32603), params: ['a'], not: 'rejected' },
  { name: 'rejected: KeyError naming the parameter', reply: toolError("KeyError: 'user_id'"), params: ['user_id'], not: 'rejected' },
  { name: 'rejected-unnamed: a message naming the parameter', reply: toolError('Invalid arguments: owner is required'), params: ['owner'], not: 'rejected-unnamed' },
  { name: 'text-refusal: a refusal with isError true', reply: toolError('missing required parameter: owner'), params: ['owner'], not: 'text-refusal' },
  { name: 'text-refusal: a plain success', reply: toolOk('[] (no open issues for octo)'), params: ['owner'], not: 'text-refusal' },
  { name: 'lenient-downstream: a failed fetch that names the parameter as invalid', reply: toolError('url must be a valid URL (ECONNREFUSED)'), params: ['url'], not: 'lenient-downstream' },
  { name: 'lenient-downstream: -32603 about a refused connection', reply: rpcError(-32603, 'connect ECONNREFUSED'), params: ['url'], not: 'lenient-downstream' },
  { name: 'internal-error: ValueError naming the parameter', reply: toolError('ValueError: limit must be positive'), params: ['limit'], not: 'internal-error' },
  { name: 'internal-error: undici TypeError: fetch failed', reply: toolError('TypeError: fetch failed'), params: ['url'], not: 'internal-error' },
  { name: 'internal-error: -32603 naming a declared parameter', reply: rpcError(-32603, 'owner: Invalid input: expected string, received number'), params: ['owner'], not: 'internal-error' },
  { name: 'accepted: a refusal in the text', reply: toolOk('invalid input: owner is required'), params: ['owner'], not: 'accepted' },
  { name: 'hang: a reply', reply: toolOk('ok'), params: [], not: 'hang' },
  { name: 'exited: a hang', reply: { kind: 'hang', waitedMs: 1 }, params: [], not: 'exited' },
  { name: 'protocol-error: a well-formed result', reply: result({ content: [{ type: 'text', text: 'x' }] }), params: [], not: 'protocol-error' },
];

describe('classifyReply: near misses', () => {
  it.each(negatives)('$name', ({ reply, params, not }) => {
    expect(classifyReply({ reply, declaredParams: params }).class).not.toBe(not);
  });
});

describe('parameter names are whole words', () => {
  const named = (text: string, params: string[]) => classifyReply({ reply: toolError(text), declaredParams: params }).named;

  it.each([
    // [text, params, expected named]
    ['Invalid arguments for tool calc: expected a number', ['a'], []],
    ['Invalid input: must be a string', ['a'], []],
    ['parameter "a" must be a string', ['a'], ['a']],
    ["Invalid value for 'a'", ['a'], ['a']],
    ['Invalid input: expected number, received string at n', ['n'], ['n']],
    ['Invalid input: not a number', ['n'], []],
    ['q: Invalid input: expected string, received number', ['q'], ['q']],
    ['query is required', ['q'], []],
    ['user_id is required', ['id'], []],
    ['user_id is required', ['id', 'user_id'], ['user_id']],
    ['Invalid id', ['id'], ['id']],
    ['ID is required', ['id'], ['id']],
    ['to: Invalid input: expected array, received string', ['to', 'subject'], ['to']],
    ['failed to parse: invalid subject', ['to', 'subject'], ['subject']],
    ["value can't be empty", ['t'], []],
    ['Invalid input: expected string, received number at items.0.name', ['items'], ['items']],
    ['Invalid type', ['type'], []],
    ['type: Invalid option: expected one of "a"|"b"', ['type'], ['type']],
    ['missing required parameter: type', ['type'], ['type']],
    ['Invalid "not-a-valid-value"', ['a', 'valid', 'value'], []],
    ['Invalid arguments for tool owner: expected string', ['owner'], []],
    ['Tool owner not found', ['owner'], []],
    ['[{"code":"invalid_type","expected":"string","received":"number","path":["path"],"message":"Expected string"}]', ['path', 'code', 'message'], ['path']],
  ])('%j with %j names %j', (text, params, expected) => {
    expect(named(text as string, params as string[])).toEqual(expected);
  });
});

// --- validator errors (SPEC section 5: read as the validation decisions they are) ----------------

/** A reply as a server sent it (a JSON-RPC response), as the transport hands it to the classifier. */
const fromWire = (msg: Record<string, unknown>): Reply =>
  msg.error !== undefined ? { kind: 'response', error: msg.error as never, raw: msg } : { kind: 'response', result: msg.result, raw: msg };

interface ReplyFixture {
  comment: string;
  declaredParams: string[];
  expect: { class: ReplyClass; named: string[] };
  reply: Record<string, unknown>;
}
const FIXTURE_DIR = new URL('../fixtures/replies/', import.meta.url);
const fixtures = readdirSync(FIXTURE_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => ({ file: f, ...(JSON.parse(readFileSync(new URL(f, FIXTURE_DIR), 'utf8')) as ReplyFixture) }));

describe('validator errors of real stacks (test/fixtures/replies)', () => {
  it('has a fixture for every stack, each saying where it came from', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(VALIDATOR_FORMATS.length);
    for (const f of fixtures) expect(f.comment.length).toBeGreaterThan(20);
    const prefixes = ['zod3-', 'zod4-', 'pydantic-', 'fastmcp-', 'valibot-', 'ajv-', 'santhosh-', 'go-sdk-', 'mcp-go', 'rmcp-serde-'];
    for (const p of prefixes) expect(fixtures.some((f) => f.file.startsWith(p))).toBe(true);
  });
  it.each(fixtures)('$file → $expect.class $expect.named', ({ reply, declaredParams, expect: want }) => {
    const c = classifyReply({ reply: fromWire(reply), declaredParams });
    expect(c.class).toBe(want.class);
    expect(c.named).toEqual(want.named);
    expect(c.leaks).toEqual([]);
  });
  it.each(fixtures)('$file is recognised as a validator error', ({ reply, declaredParams }) => {
    const text = replyText(fromWire(reply));
    expect(readValidatorErrors(text, declaredParams)?.formats.length ?? 0).toBeGreaterThan(0);
  });

  const ZOD3_EMPTY = '[{"code":"invalid_type","expected":"string","received":"undefined","path":["owner"],"message":"Required"}]';
  const ZOD4_EMPTY = '[{"expected":"string","code":"invalid_type","path":["owner"],"message":"Invalid input: expected string, received undefined"}]';
  const P = ['owner', 'repo'];
  const cases: { name: string; reply: Reply; params?: string[]; cls: ReplyClass; named: string[] }[] = [
    // zod issue arrays, bare, after a prefix, in error.data, pretty-printed
    { name: 'zod 3 issue array, bare (isError)', reply: toolError(ZOD3_EMPTY), cls: 'rejected', named: ['owner'] },
    { name: 'zod 3 issue array after the SDK prefix (-32602)', reply: rpcError(-32602, `MCP error -32602: Invalid arguments for tool x: ${ZOD3_EMPTY}`), cls: 'rejected', named: ['owner'] },
    { name: 'zod 4 issue array after the SDK prefix (isError)', reply: toolError(`MCP error -32602: Input validation error: Invalid arguments for tool x: ${ZOD4_EMPTY}`), cls: 'rejected', named: ['owner'] },
    { name: 'zod 4 issue array in error.data', reply: rpcError(-32602, 'Invalid params', JSON.parse(ZOD4_EMPTY)), cls: 'rejected', named: ['owner'] },
    { name: 'zod 4 issue array pretty-printed', reply: toolError(JSON.stringify(JSON.parse(ZOD4_EMPTY), null, 2)), cls: 'rejected', named: ['owner'] },
    { name: 'zod 4 path [] is the root', reply: toolError('[{"expected":"object","code":"invalid_type","path":[],"message":"Invalid input: expected object, received undefined"}]'), cls: 'rejected', named: [ROOT] },
    { name: 'zod nested path names its top-level argument', reply: toolError('[{"code":"invalid_type","expected":"string","received":"number","path":["repo","name"],"message":"Expected string, received number"}]'), cls: 'rejected', named: ['repo'] },
    { name: 'zod 4 unrecognized_keys at the root', reply: toolError('[{"code":"unrecognized_keys","keys":["sm_unexpected"],"path":[],"message":"Unrecognized key: \\"sm_unexpected\\""}]'), cls: 'rejected', named: [ROOT] },
    { name: 'zod issue under a weak name ("value") is named by its path', reply: toolError('[{"expected":"number","code":"invalid_type","path":["value"],"message":"Invalid input: expected number, received undefined"}]'), params: ['value'], cls: 'rejected', named: ['value'] },
    { name: 'zod issue thrown from a low-level handler (-32603) naming a declared parameter', reply: rpcError(-32603, ZOD4_EMPTY), cls: 'rejected', named: ['owner'] },
    { name: 'zod issue at the root under -32603 is not a decision on the parameters (SPEC note)', reply: rpcError(-32603, '[{"expected":"object","code":"invalid_type","path":[],"message":"Invalid input: expected object, received array"}]'), cls: 'internal-error', named: [ROOT] },
    // zod prettified
    { name: 'zod 4 prettifyError', reply: toolError('✖ Invalid input: expected string, received undefined\n  → at owner'), cls: 'rejected', named: ['owner'] },
    { name: 'zod 4 prettifyError nested path', reply: toolError('✖ Invalid input: expected string, received number\n  → at repo[0].name'), cls: 'rejected', named: ['repo'] },
    { name: 'zod 4 prettifyError at the root', reply: toolError('✖ Invalid input: expected object, received undefined'), cls: 'rejected', named: [ROOT] },
    // pydantic
    { name: 'pydantic v2 ValidationError', reply: toolError('1 validation error for EchoArguments\nowner\n  Field required [type=missing, input_value={}, input_type=dict]'), cls: 'rejected', named: ['owner'] },
    { name: 'pydantic input_type=NoneType is the input, not a crash', reply: toolError('1 validation error for EchoArguments\nowner\n  Input should be a valid string [type=string_type, input_value=None, input_type=NoneType]'), cls: 'rejected', named: ['owner'] },
    { name: 'pydantic input_value naming another parameter does not name it', reply: toolError("1 validation error for EchoArguments\nrepo\n  Field required [type=missing, input_value={'owner': 'x'}, input_type=dict]"), cls: 'rejected', named: ['repo'] },
    { name: 'pydantic two errors', reply: toolError('2 validation errors for EchoArguments\nowner\n  Field required [type=missing, input_value={}, input_type=dict]\nrepo\n  Field required [type=missing, input_value={}, input_type=dict]'), cls: 'rejected', named: ['owner', 'repo'] },
    { name: 'pydantic extra_forbidden under the undeclared key is the root', reply: toolError("1 validation error for EchoArguments\nsm_unexpected\n  Extra inputs are not permitted [type=extra_forbidden, input_value=1, input_type=int]"), cls: 'rejected', named: [ROOT] },
    { name: 'pydantic error without a location is the root', reply: toolError('1 validation error for EchoArguments\n  Input should be a valid dictionary or instance of EchoArguments [type=model_type, input_value=[1], input_type=list]'), cls: 'rejected', named: [ROOT] },
    { name: 'pydantic errors() JSON (loc, msg)', reply: toolError('[{"type":"missing","loc":["owner"],"msg":"Field required","input":{}}]'), cls: 'rejected', named: ['owner'] },
    // valibot
    { name: 'valibot message alone names nothing', reply: toolError('Invalid type: Expected string but received undefined'), cls: 'rejected-unnamed', named: [] },
    { name: 'valibot missing key names the key', reply: toolError('Invalid key: Expected "owner" but received undefined'), cls: 'rejected', named: ['owner'] },
    { name: 'valibot issues JSON path {key}', reply: toolError('[{"kind":"schema","type":"string","expected":"string","received":"undefined","message":"Invalid type: Expected string but received undefined","path":[{"type":"object","origin":"value","input":{},"key":"owner"}]}]'), cls: 'rejected', named: ['owner'] },
    // Ajv
    { name: 'Ajv required', reply: toolError("must have required property 'owner'"), cls: 'rejected', named: ['owner'] },
    { name: 'Ajv instancePath text', reply: toolError('/owner must be string'), cls: 'rejected', named: ['owner'] },
    { name: 'Ajv errorsText', reply: rpcError(-32602, 'data/owner must be string'), cls: 'rejected', named: ['owner'] },
    { name: 'Ajv errors JSON, required at instancePath ""', reply: toolError('[{"instancePath":"","schemaPath":"#/required","keyword":"required","params":{"missingProperty":"owner"},"message":"must have required property \'owner\'"}]'), cls: 'rejected', named: ['owner'] },
    { name: 'Ajv errors JSON, additionalProperties at the root', reply: toolError('[{"instancePath":"","schemaPath":"#/additionalProperties","keyword":"additionalProperties","params":{"additionalProperty":"sm_unexpected"},"message":"must NOT have additional properties"}]'), cls: 'rejected', named: [ROOT] },
    { name: 'Ajv errors JSON, type at /repo', reply: rpcError(-32602, 'Invalid params', { errors: [{ instancePath: '/repo', schemaPath: '#/properties/repo/type', keyword: 'type', params: { type: 'string' }, message: 'must be string' }] }), cls: 'rejected', named: ['repo'] },
    // Go
    { name: 'santhosh-tekuri v5 type', reply: toolError("jsonschema: '/owner' does not validate with file:///s.json#/properties/owner/type: expected string, but got null"), cls: 'rejected', named: ['owner'] },
    { name: 'santhosh-tekuri v5 missing properties at the root', reply: toolError("jsonschema: '' does not validate with file:///s.json#/required: missing properties: 'owner'"), cls: 'rejected', named: ['owner'] },
    { name: 'santhosh-tekuri v6 "got null, want string"', reply: toolError("jsonschema validation failed with 'file:///s.json#'\n- at '/owner': got null, want string"), cls: 'rejected', named: ['owner'] },
    { name: 'google/jsonschema-go required', reply: toolError('validating "arguments": validating root: required: missing properties: ["owner"]'), cls: 'rejected', named: ['owner'] },
    { name: 'google/jsonschema-go type (schema path)', reply: toolError('validating root: validating /properties/owner: type: <nil> has type "null", want "string"'), cls: 'rejected', named: ['owner'] },
    { name: 'google/jsonschema-go type at the root', reply: toolError('validating "arguments": validating root: type: [1] has type "array", want "object"'), cls: 'rejected', named: [ROOT] },
    { name: 'mcp-go required argument', reply: toolError('required argument "owner" not found'), cls: 'rejected', named: ['owner'] },
    { name: 'mcp-go wrong type', reply: toolError('argument "owner" is not a string'), cls: 'rejected', named: ['owner'] },
    // rmcp / serde
    { name: 'serde missing field', reply: rpcError(-32602, 'failed to deserialize parameters: missing field `owner`'), cls: 'rejected', named: ['owner'] },
    { name: 'serde invalid type names nothing', reply: rpcError(-32602, 'failed to deserialize parameters: invalid type: null, expected a string'), cls: 'rejected-unnamed', named: [] },
    { name: 'serde unknown field names the root, not the listed fields', reply: rpcError(-32602, 'failed to deserialize parameters: unknown field `sm_unexpected`, expected one of `owner`, `repo`'), cls: 'rejected', named: [ROOT] },
    // runtime errors stay runtime errors
    { name: 'TypeError Cannot read properties of undefined', reply: toolError("TypeError: Cannot read properties of undefined (reading 'toLowerCase')"), cls: 'internal-error', named: [] },
    { name: 'Python KeyError naming the parameter', reply: toolError("KeyError: 'owner'"), cls: 'internal-error', named: ['owner'] },
    { name: 'AttributeError on NoneType', reply: toolError("AttributeError: 'NoneType' object has no attribute 'lower'"), cls: 'internal-error', named: [] },
    { name: 'a TypeError beside a zod-looking path is still a crash', reply: toolError('TypeError: Cannot read properties of undefined (reading \'path\') at ["owner"]'), cls: 'internal-error', named: ['owner'] },
    { name: 'a GraphQL error (message and path, no code) is no validator issue', reply: toolError('[{"message":"Could not resolve to a Repository with the name \'x\'.","path":["repository"],"type":"NOT_FOUND"}]'), cls: 'rejected-unnamed', named: [] },
    { name: 'SDK CallToolRequest ZodError under -32603 stays internal', reply: rpcError(-32603, ZOD_32603), params: ['a', 'b'], cls: 'internal-error', named: [ROOT] },
  ];
  it.each(cases)('$name → $cls $named', ({ reply, params, cls, named }) => {
    const c = classifyReply({ reply, declaredParams: params ?? P });
    expect(c.class).toBe(cls);
    expect(c.named).toEqual(named);
  });

  it('a pydantic message is not a traceback: the leak scan stays independent', () => {
    const plain = classifyReply({ reply: toolError('1 validation error for EchoArguments\nowner\n  Field required [type=missing, input_value={}, input_type=dict]\n    For further information visit https://errors.pydantic.dev/2.11/v/missing'), declaredParams: P });
    expect(plain.leaks).toEqual([]);
    const withTrace = classifyReply({
      reply: toolError(['Traceback (most recent call last):', '  File "/app/server.py", line 9, in call', 'pydantic_core._pydantic_core.ValidationError: 1 validation error for EchoArguments', 'owner', '  Field required [type=missing, input_value={}, input_type=dict]'].join('\n')),
      declaredParams: P,
    });
    expect(withTrace.class).toBe('rejected');
    expect(withTrace.named).toEqual(['owner']);
    expect(withTrace.leaks.map((l) => l.pattern)).toEqual(['python-traceback', 'python-frame']);
  });

  it('stays fast on many unbalanced JSON starts and repeated pydantic headers', () => {
    const texts = ['[{"a":'.repeat(40_000), '1 validation error for X\n'.repeat(20_000), '✖ x\n'.repeat(50_000)];
    for (const text of texts) {
      const t0 = performance.now();
      classifyReply({ reply: toolError(text), declaredParams: P });
      expect(performance.now() - t0).toBeLessThan(3000);
    }
  });
});

describe('SEP-1303 note (SPEC section 4, error channel)', () => {
  const note = (reply: Reply, version?: string) => classifyReply({ reply, declaredParams: ['a', 'b'], protocolVersion: version }).notes;

  it.each(['2025-11-25', '2026-07-28'])('a -32602 rejection under %s gets the note', (v) => {
    expect(note(rpcError(-32602, V1_LE120), v)).toEqual([SEP_1303_NOTE]);
    expect(note(rpcError(-32602, 'Invalid arguments'), v)).toEqual([SEP_1303_NOTE]);
    expect(SEP_1303_NOTE.startsWith('sep-1303')).toBe(true);
  });
  it.each(['2024-11-05', '2025-03-26', '2025-06-18', undefined])('no note under %s', (v) => {
    expect(note(rpcError(-32602, V1_LE120), v)).toEqual([]);
  });
  it('no note for an isError rejection or a -32603', () => {
    expect(note(toolError(V1_1322), '2025-11-25')).toEqual([]);
    expect(note(rpcError(-32603, 'Internal error'), '2025-11-25')).toEqual([]);
  });
});

describe('classification fields', () => {
  it('text is the decision text, trimmed to 500 characters', () => {
    const c = classifyReply({ reply: toolError(`  ${'x'.repeat(900)}  `), declaredParams: [] });
    expect(c.text).toHaveLength(500);
    expect(classifyReply({ reply: rpcError(-32603, 'Internal error', 'detail'), declaredParams: [] }).text).toBe('Internal error\ndetail');
  });
  it('leaks are found independently of the class', () => {
    const c = classifyReply({ reply: toolError(STACK), declaredParams: ['title', 'labels'] });
    expect(c.class).toBe('rejected');
    expect(c.named).toEqual(['title']);
    expect(c.leaks.map((l) => l.pattern)).toEqual(['js-frame', 'package-path', 'home-path-line', 'js-frame', 'home-path-line', 'js-frame', 'js-frame']);
    const c2 = classifyReply({ reply: toolError(C2), declaredParams: ['path', 'width'] });
    expect(c2.leaks.filter((l) => l.pattern === 'python-traceback')).toHaveLength(1);
    expect(c2.leaks.filter((l) => l.pattern === 'python-frame')).toHaveLength(2);
    expect(classifyReply({ reply: { kind: 'malformed', problem: 'p', raw: { error: { message: C2 }, result: 1 } }, declaredParams: [] }).leaks).not.toEqual([]);
  });
  it('never throws on odd shapes', () => {
    const odd: Reply[] = [
      rpcError(-1, undefined),
      rpcError(-32602, { nested: ['x'] }, 42),
      result({ content: [null, 1, { type: 'image' }, { type: 'resource', resource: { text: 'Traceback (most recent call last):' } }] }),
      result({ isError: true }),
    ];
    for (const reply of odd) expect(() => classifyReply({ reply, declaredParams: ['', 'a', 'a'] })).not.toThrow();
    expect(classifyReply({ reply: odd[2] as Reply, declaredParams: [] }).leaks).toHaveLength(1);
  });
});

describe('replyText', () => {
  it('joins error message and data, content text and structuredContent', () => {
    expect(replyText(rpcError(-32602, 'bad', { field: 'a' }))).toBe('bad\n{"field":"a"}');
    expect(replyText(rpcError(-32602, 'bad', 'more'))).toBe('bad\nmore');
    expect(
      replyText(result({ content: [{ type: 'text', text: 'one' }, { type: 'image', data: '…' }, { type: 'text', text: 'two' }], structuredContent: { n: 1 } })),
    ).toBe('one\ntwo\n{"n":1}');
    expect(replyText({ kind: 'hang', waitedMs: 5 })).toBe('');
    expect(replyText({ kind: 'exited', exit: null })).toBe('');
  });
});

// --- leak scan -----------------------------------------------------------------------------------

const leakRows: { pattern: LeakPattern; yes: string[]; no: string[] }[] = [
  {
    pattern: 'python-traceback',
    yes: ['Traceback (most recent call last):'],
    no: ['Traceback disabled', 'the most recent call last week'],
  },
  {
    pattern: 'python-frame',
    yes: ['  File "/app/server.py", line 12, in handler', 'error at x.py", line 3'],
    no: ['File "notes.txt" not found', 'line 12 of server.py'],
  },
  {
    pattern: 'js-frame',
    yes: [
      '    at handler (/srv/app/tools.js:42:13)',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
      '    at node:internal/process/task_queues:95:5',
      '    at file:///app/server.mjs:3:1',
      '    at Object.<anonymous> (C:\\app\\index.js:1:2)',
      '    at async /srv/app/x.js:1:2',
      '    at run (file:///C:/app/x.mjs:10:5)',
    ],
    no: ['Server listening at http://localhost:3000', '    at new Promise (<anonymous>)', 'meet at the office (room 3:1:2)', 'look at src/x.js:1:2'],
  },
  {
    pattern: 'package-path',
    yes: ['error in /srv/node_modules/zod/lib/index.js:12', '/usr/lib/python3/site-packages/pydantic/main.py", line 212', 'C:\\app\\node_modules\\x\\y.cjs:4:1'],
    no: ['Cannot find package zod in node_modules/zod', 'node_modules/foo/package.json', 'site-packages/foo/README.md:3'],
  },
  {
    pattern: 'windows-path',
    yes: ['open C:\\Users\\alice\\app\\config.json', 'c:/users/alice', 'D:\\Program Files\\x', 'C:\\Windows\\System32\\x.dll', '{"p":"C:\\\\Users\\\\nick\\\\x"}'],
    no: ['C:\\data\\x.txt', 'ABC:\\Users', 'C:\\UsersData\\x', 'see /Users/alice'],
  },
  {
    pattern: 'home-path-line',
    yes: ['/home/u/app/server.ts:42', 'at /Users/alice/x.js:10:3', "in '/root/x.py:3'", 'file:///home/u/x.js:1'],
    no: ["ENOENT: no such file or directory, open '/home/u/x.txt'", 'PATH=/home/u/.local/bin:/usr/local/bin:/usr/bin', '/opt/home/x:12', 'GET /users/:id'],
  },
];

describe('scanLeaks (SPEC section 4)', () => {
  it('has a row for every pattern', () => {
    expect(leakRows.map((r) => r.pattern).sort()).toEqual(LEAK_PATTERNS.map((p) => p.pattern).sort());
  });

  for (const row of leakRows) {
    it.each(row.yes)(`${row.pattern} finds %j`, (line) => {
      expect(scanLeaks(line).map((l) => l.pattern)).toContain(row.pattern);
    });
    it.each(row.no)(`${row.pattern} does not find %j`, (line) => {
      expect(scanLeaks(line).map((l) => l.pattern)).not.toContain(row.pattern);
    });
  }

  it('a bare home path is not a leak; a C:\\Users path and a node:internal frame are', () => {
    expect(scanLeaks("ENOENT: no such file or directory, open '/home/u/x.txt'")).toEqual([]);
    expect(scanLeaks('PATH=/home/u/bin:/root/bin:/Users/me/bin')).toEqual([]);
    expect(scanLeaks('config at C:\\Users\\bob\\.cfg')).toEqual([{ pattern: 'windows-path', line: 'config at C:\\Users\\bob\\.cfg' }]);
    expect(scanLeaks('    at node:internal/modules/cjs/loader:1:2')).toEqual([{ pattern: 'js-frame', line: 'at node:internal/modules/cjs/loader:1:2' }]);
  });

  it('one leak per pattern per line, deduplicated, lines trimmed to 200 characters', () => {
    const frame = '    at h (/home/u/x.js:1:2)';
    expect(scanLeaks([frame, frame, frame].join('\n'))).toEqual([
      { pattern: 'js-frame', line: 'at h (/home/u/x.js:1:2)' },
      { pattern: 'home-path-line', line: 'at h (/home/u/x.js:1:2)' },
    ]);
    const long = `Traceback (most recent call last): ${'y'.repeat(500)}`;
    expect(scanLeaks(long)[0]?.line).toHaveLength(200);
  });

  it('splits JSON-escaped text (structuredContent, error.data) into its lines', () => {
    const reply = result({ content: [], structuredContent: { stack: 'Error: x\n    at h (/srv/a.js:1:2)\n    at g (/srv/b.js:3:4)' } });
    expect(classifyReply({ reply, declaredParams: [] }).leaks).toEqual([
      { pattern: 'js-frame', line: 'at h (/srv/a.js:1:2)' },
      { pattern: 'js-frame', line: 'at g (/srv/b.js:3:4)' },
    ]);
    const c = classifyReply({ reply: rpcError(-32603, 'x', { trace: 'Traceback (most recent call last):\n  File "/a/b.py", line 3, in f' }), declaredParams: [] });
    expect(c.leaks.map((l) => l.pattern)).toEqual(['python-traceback', 'python-frame']);
  });

  it('skips lines over 2000 characters and reads only the first 1 MB', () => {
    expect(scanLeaks(`${'z'.repeat(2100)} Traceback (most recent call last)`)).toEqual([]);
    expect(scanLeaks(`${'ok\n'.repeat(LEAK_SCAN_MAX_CHARS / 3 + 10)}Traceback (most recent call last)`)).toEqual([]);
  });

  it('stays fast on 20 MB of adversarial text', () => {
    const nasty = [
      `at ${'('.repeat(1999)}`,
      `at ${'a '.repeat(999)}(/`,
      `node_modules/${'a.'.repeat(999)}`,
      `/home/${'x'.repeat(1990)}`,
      `File "${'x'.repeat(1990)}`,
      `C:${'\\'.repeat(1990)}`,
      `at /${'1:'.repeat(995)}`,
    ];
    for (const piece of nasty) {
      const big = `${piece}\n`.repeat(Math.ceil((20 * 1024 * 1024) / (piece.length + 1)));
      const t0 = performance.now();
      scanLeaks(big);
      expect(performance.now() - t0).toBeLessThan(3000);
    }
    const oneLine = 'at ('.repeat(5 * 1024 * 1024);
    const t0 = performance.now();
    expect(scanLeaks(oneLine)).toEqual([]);
    expect(performance.now() - t0).toBeLessThan(3000);
  });

  it('classifies a 20 MB reply quickly', () => {
    const text = `${'a at a: a. '.repeat(2 * 1024 * 1024)}`;
    const t0 = performance.now();
    const c = classifyReply({ reply: toolError(text), declaredParams: ['a', 'at', 'x'] });
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(c.text.length).toBeLessThanOrEqual(500);
  });
});

describe('vocabularies are data', () => {
  it('every refusal term has a label and a non-global pattern', () => {
    for (const t of REFUSAL_TERMS) {
      expect(t.term.length).toBeGreaterThan(0);
      expect(t.pattern.global).toBe(false);
    }
  });
});

describe('textLeaves', () => {
  const v = { a: 'one', n: 42, list: ['two', true, { deep: 'three' }] };
  it('reads strings in document order; keys and scalars when asked', () => {
    expect(textLeaves(v)).toEqual(['one', 'two', 'three']);
    expect(textLeaves(v, { keys: true, scalars: true })).toEqual(['a', 'one', 'n', '42', 'list', 'two', 'true', 'deep', 'three']);
  });
  it('stops at its bounds: depth, count, characters (the text that crosses the budget is cut)', () => {
    expect(textLeaves(v, { maxDepth: 1 })).toEqual(['one']);
    expect(textLeaves(v, { maxItems: 2 })).toEqual(['one', 'two']);
    expect(textLeaves(v, { maxChars: 5 })).toEqual(['one', 'tw']);
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(textLeaves(deep, { maxDepth: Infinity })).toEqual(['bottom']);
  });
});

describe('refusedForRateLimit', () => {
  const result = (text: string, isError: boolean): Reply => ({ kind: 'response', result: { content: [{ type: 'text', text }], isError }, raw: {} });
  it('is an error that says so, in a result or a JSON-RPC error; never a success that mentions it', () => {
    expect(refusedForRateLimit(result('Error: Rate limit exceeded', true))).toBe(true);
    expect(refusedForRateLimit({ kind: 'response', error: { code: -32000, message: '429 Too Many Requests' }, raw: {} } as Reply)).toBe(true);
    expect(refusedForRateLimit(result('The rate limit of this API is 60 a minute', false))).toBe(false);
    expect(refusedForRateLimit(result('no such file', true))).toBe(false);
  });
});
