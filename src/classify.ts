/**
 * Reading a reply (SPEC section 4): one reply class per reply to a probe, and a leak scan that runs
 * on every reply independently of its class. This is the one classifier; checks decide verdicts
 * from its classes and never re-read reply texts themselves.
 *
 * Vocabularies are exported as data ({@link REFUSAL_TERMS}, {@link RUNTIME_ERROR_TERMS},
 * {@link FETCH_FAILURE_TERMS}, {@link LEAK_PATTERNS}, {@link VALIDATOR_FORMATS}) so that docs and
 * `sealmark explain` can list them instead of restating them.
 */
import type { Classification, Leak, LeakPattern, Reply, ReplyClass } from './types.js';
import { UNEXPECTED_KEY } from './values.js';

/** What to classify: one reply, the tool's declared parameter names, the negotiated protocol version. */
export interface ClassifyInput {
  reply: Reply;
  /** Property names declared in the tool's inputSchema (top level). */
  declaredParams: string[];
  /** Negotiated protocol version (`2025-11-25`, `2026-07-28` …), for the SEP-1303 note. */
  protocolVersion?: string;
}

/** The name `named` uses for the arguments object as a whole (root path, undeclared key). */
export const ROOT = '(root)';

/** One word or phrase of a vocabulary, with the pattern that finds it. */
export interface VocabularyTerm {
  /** How docs show the term. */
  readonly term: string;
  readonly pattern: RegExp;
  /**
   * Where the term counts. `error`: only in an error (JSON-RPC error or `isError: true`), where the
   * words are unambiguous; `result`: only in a normal result; absent: both.
   */
  readonly only?: 'error' | 'result';
}

/**
 * The refusal vocabulary (SPEC section 4, `rejected` and `text-refusal`): words by which a reply
 * says an argument is invalid, missing, unexpected or of the wrong type. In a normal result
 * (`text-refusal`) only the terms without `only: 'error'` count, and only in the first
 * {@link TEXT_LIMIT} characters, so that data returned by a working tool is not read as a refusal.
 */
export const REFUSAL_TERMS: readonly VocabularyTerm[] = [
  { term: 'invalid', pattern: /\binvalid\b/i },
  { term: 'is required / are required', pattern: /\b(?:is|are) required\b/i },
  { term: 'missing required / missing parameter', pattern: /\bmissing (?:required|parameters?|arguments?|fields?|propert(?:y|ies)|keys?|values?|inputs?)\b/i },
  { term: 'must be / must have / must not', pattern: /\bmust (?:be|have|not|match|contain|equal)\b/i },
  { term: 'should be', pattern: /\bshould (?:be|have|not)\b/i },
  { term: 'cannot be', pattern: /\b(?:cannot|can't|can not) be\b/i },
  { term: 'not allowed / not permitted', pattern: /\bnot (?:allowed|permitted)\b/i },
  { term: 'expected … received', pattern: /\bexpected\b[^\n]{0,80}?\b(?:received|got|found|instead)\b/i },
  { term: 'expected <type>', pattern: /\bexpected (?:an? )?(?:string|number|integer|boolean|object|array|null|record)\b/i },
  { term: 'wrong type / not of type', pattern: /\bwrong type\b|\bnot of type\b|\btype mismatch\b/i },
  { term: 'is not a valid', pattern: /\bis not (?:a )?valid\b/i },
  { term: 'validation error / validation failed', pattern: /\bvalidation (?:error|failed)\b|\bfailed validation\b/i },
  { term: 'unrecognized / unexpected key', pattern: /\bunrecogni[sz]ed\b|\bunexpected (?:keyword |key|argument|propert|field|param)/i },
  { term: 'additional properties', pattern: /\badditional propert(?:y|ies)\b/i },
  { term: 'too small / too big', pattern: /\btoo (?:small|big)\b/i },
  { term: 'out of range', pattern: /\bout of (?:range|bounds)\b/i },
  { term: 'bad request', pattern: /\bbad request\b/i },
  { term: 'required', pattern: /\brequired\b/i, only: 'error' },
  { term: 'missing', pattern: /\bmissing\b/i, only: 'error' },
  { term: 'unexpected', pattern: /\bunexpected\b/i, only: 'error' },
  { term: 'unknown', pattern: /\bunknown\b/i, only: 'error' },
  { term: 'expected', pattern: /\bexpected\b/i, only: 'error' },
  { term: 'malformed', pattern: /\bmalformed\b/i, only: 'error' },
  { term: 'does not match', pattern: /\bdoes not (?:match|conform)\b/i, only: 'error' },
  { term: 'ValueError', pattern: /\bValueError\b/, only: 'error' },
];

/**
 * Unhandled runtime errors (SPEC section 4, `internal-error`). `ValueError` is not here: it is
 * internal only when it names no parameter (see {@link classifyReply}). Undici's
 * `TypeError: fetch failed` is a failed fetch, not a crash, and is taken out before these are tried.
 */
export const RUNTIME_ERROR_TERMS: readonly VocabularyTerm[] = [
  { term: 'TypeError', pattern: /\bTypeError\b/ },
  { term: 'ReferenceError', pattern: /\bReferenceError\b/ },
  // An argument fed to JSON.parse unchecked: the parser's error reached the reply.
  { term: 'SyntaxError: Unexpected token / is not valid JSON', pattern: /\bSyntaxError\b.*(?:Unexpected (?:token|end)|is not valid JSON|JSON)/ },
  { term: 'Cannot read properties', pattern: /\bcannot read propert(?:y|ies)\b/i },
  { term: 'Cannot destructure', pattern: /\bcannot destructure\b/i },
  { term: 'is not a function', pattern: /\bis not a function\b/ },
  { term: 'undefined is not', pattern: /\b(?:undefined|null) is not (?:an? (?:object|function)|iterable)\b/ },
  { term: 'AttributeError / has no attribute', pattern: /\bAttributeError\b|\bhas no attribute\b/ },
  { term: 'KeyError', pattern: /\bKeyError\b/ },
  { term: 'NoneType', pattern: /\bNoneType\b/ },
  { term: 'IndexError / index out of range', pattern: /\bIndexError\b|\bindex out of range\b/ },
  { term: 'object is not subscriptable / callable / iterable', pattern: /\bobject is not (?:subscriptable|callable|iterable)\b/ },
  { term: 'unsupported operand type', pattern: /\bunsupported operand type/ },
  {
    term: 'Python call signature (missing N required positional argument, unexpected keyword argument)',
    pattern: /\bmissing \d+ required (?:positional|keyword-only) arguments?\b|\bgot an unexpected keyword argument\b|\btakes \d+ positional arguments? but \d+ (?:was|were) given\b/,
  },
];

/**
 * Failed-fetch vocabulary (SPEC section 4, `lenient-downstream`). Terms with `only: 'error'` are
 * too common in data (timeouts, TLS) to be read from a normal result.
 */
export const FETCH_FAILURE_TERMS: readonly VocabularyTerm[] = [
  { term: 'connection refused / ECONNREFUSED', pattern: /\bconnection refused\b|\bECONNREFUSED\b|\bConnectionRefusedError\b/i },
  { term: 'ENOTFOUND / getaddrinfo / name not resolved', pattern: /\bENOTFOUND\b|\bgetaddrinfo\b|name or service not known|nodename nor servname|temporary failure in name resolution|\bNXDOMAIN\b/i },
  { term: 'EAI_AGAIN', pattern: /\bEAI_AGAIN\b/ },
  { term: 'ENETUNREACH / EHOSTUNREACH', pattern: /\bENETUNREACH\b|\bEHOSTUNREACH\b|network is unreachable|no route to host/i },
  { term: 'ECONNRESET / socket hang up', pattern: /\bECONNRESET\b|\bconnection reset\b|\bsocket hang up\b|\bConnectionResetError\b/i },
  { term: 'fetch failed', pattern: /\bfetch failed\b|\bfailed to fetch\b|\bUND_ERR_[A-Z_]+|\bmax retries exceeded\b|failed to establish a new connection|\bConnectError\b|\bConnectionError\b/i },
  { term: 'ETIMEDOUT', pattern: /\bETIMEDOUT\b|\bESOCKETTIMEDOUT\b/ },
  { term: 'timeout / timed out', pattern: /time(?:d ?out|out)/i, only: 'error' },
  { term: 'TLS / SSL / certificate', pattern: /\b(?:TLS|SSL)|\bcertificate\b|\bCERT_[A-Z_]+|\bSELF_SIGNED/i, only: 'error' },
];

/** One leak pattern (SPEC section 4), tried on each line of a reply's text. */
export interface LeakPatternDef {
  readonly pattern: LeakPattern;
  readonly description: string;
  readonly regex: RegExp;
}

/**
 * Leak patterns (SPEC section 4). Every regex is tried on one line of at most
 * {@link LEAK_SCAN_MAX_LINE} characters and has no nested quantifiers, so the scan stays linear in
 * the size of the text.
 */
export const LEAK_PATTERNS: readonly LeakPatternDef[] = [
  {
    pattern: 'python-traceback',
    description: 'a Python traceback header: Traceback (most recent call last)',
    regex: /Traceback \(most recent call last\)/,
  },
  {
    pattern: 'python-frame',
    description: 'a Python frame: File "…", line N, or .py", line N',
    regex: /\bFile "[^"]+", line \d+|\.py", line \d+/,
  },
  {
    pattern: 'js-frame',
    description: 'a JavaScript stack frame `at fn (file:line:col)` or `at file:line:col`, for file://, drive-letter, absolute and node: paths',
    regex:
      /\bat [^()]{0,300}\((?:file:\/\/|node:|internal\/|[A-Za-z]:[\\/]|[\\/])[^()]*:\d+:\d+\)|\bat (?:async )?(?:file:\/\/|node:|[A-Za-z]:[\\/]|\/)[^\s()]*:\d+:\d+/,
  },
  {
    pattern: 'package-path',
    description: 'node_modules/ or site-packages/ followed by a source file and a line number',
    regex: /(?:node_modules|site-packages|dist-packages)[\\/][^\s"'()<>,;:]*?\.(?:[cm]?[jt]sx?|py[xiw]?)(?::\d+|["']?,? line \d+)/,
  },
  {
    pattern: 'windows-path',
    description: 'a Windows user or system path: C:\\Users\\…, C:\\Windows\\…, C:\\Program Files\\… (any drive letter, either slash)',
    regex: /(?<![A-Za-z0-9])[A-Za-z]:(?:\\{1,2}|\/)(?:Users|Windows|Program Files(?: \(x86\))?)(?=$|[\\/\s"'`),;:])/i,
  },
  {
    pattern: 'home-path-line',
    description: 'a Unix home path (/home/, /Users/, /root/) with a :line suffix; a bare home path does not count',
    regex: /(?<![\w.~-])\/(?:home|Users|root)\/[^\s:'"`()<>,;]*:\d+/,
  },
];

/** Leak scan reads at most this many characters of a reply's text (1 Mi characters). */
export const LEAK_SCAN_MAX_CHARS = 1024 * 1024;
/** Lines longer than this are skipped by the leak scan (minified blobs, base64, not stack traces). */
export const LEAK_SCAN_MAX_LINE = 2000;
/** A leak's quoted line is cut to this many characters. */
const LEAK_LINE_LIMIT = 200;
/** `Classification.text` is cut to this many characters; a normal result is judged from this head. */
export const TEXT_LIMIT = 500;
/** Error texts are classified from at most this many characters. */
const CLASSIFY_MAX_CHARS = 256 * 1024;
/** First protocol version in which invalid arguments belong in a tool result (SEP-1303). */
const SEP_1303_SINCE = '2025-11-25';
/** The advisory note for -32602 rejections from 2025-11-25 on (SPEC section 4, error channel). */
export const SEP_1303_NOTE =
  'sep-1303: invalid arguments answered as a JSON-RPC error; since 2025-11-25 (SEP-1303) they should be a tool result with isError: true so a model can correct itself';

/**
 * Phrases that name the arguments object as a whole (`(root)`): an undeclared key, an empty
 * Ajv/zod path, the `params.arguments` path of a CallToolRequest, the arguments' own type.
 * Generic statements ("Invalid arguments") do not name the root: they are `rejected-unnamed`.
 */
const ROOT_PATTERNS: readonly RegExp[] = [
  // The extra-argument probes' undeclared key: naming it means naming the root.
  new RegExp(`\\b${UNEXPECTED_KEY}\\b`),
  /\bunrecogni[sz]ed keys?\b/i,
  /\b(?:unknown|unexpected|undeclared) (?:keyword )?(?:keys?|arguments?|propert(?:y|ies)|fields?|param(?:eter)?s?)\b/i,
  /\badditional (?:propert(?:y|ies)|arguments?|keys?|fields?)\b/i,
  /\bextra (?:inputs?|fields?|arguments?|keys?|propert(?:y|ies))\b/i,
  /\bwas unexpected\b/i,
  /"(?:path|instancePath)"\s*:\s*(?:\[\s*\]|"")/,
  /"path"\s*:\s*\[\s*"params"\s*,\s*"arguments"\s*\]/,
  /["'`]?\b(?:arguments|args|params|parameters|data|body|payload)\b["'`]?\s+(?:must|should)\s+(?:be|not)\b/i,
  /["'`]?\binput\b["'`]?\s+must\s+(?:be|not)\b/i,
  /\b(?:arguments|args|params|parameters)\s+(?:is|are)\s+(?:required|missing|not an? (?:object|dict|mapping|record))\b/i,
  /\bexpected (?:object|record|dict), received \w+\b(?!\s+at\s)/i,
];

/**
 * Names that are also ordinary words of error messages ("expected a number", "Invalid input",
 * "Invalid value"): such a parameter is named only in a strong context (quoted, in a path, `at x`,
 * `x:` or `x must` at the start of a clause, after "parameter"/"field"/…, or alone on a line).
 */
const WEAK_STOPWORDS = new Set([
  'a', 'an', 'and', 'any', 'are', 'as', 'at', 'be', 'but', 'by', 'can', 'do', 'does', 'for', 'from', 'has', 'have',
  'if', 'in', 'into', 'is', 'it', 'its', 'may', 'must', 'no', 'not', 'of', 'on', 'or', 'should', 'so', 'than', 'that',
  'the', 'then', 'this', 'to', 'was', 'were', 'will', 'with', 'all', 'one', 'got', 'too', 'value', 'values', 'type',
  'types', 'input', 'data', 'string', 'number', 'integer', 'boolean', 'object', 'array', 'null', 'undefined', 'true',
  'false', 'error', 'errors', 'tool', 'required', 'invalid', 'missing', 'expected', 'received', 'field', 'property',
  'argument', 'arguments', 'parameter', 'parameters', 'param', 'params', 'key', 'name', 'small', 'big', 'result',
  'request', 'response', 'message', 'content', 'text',
]);

const QUOTES = new Set(['"', "'", '`']);
/** Characters around a whole-word parameter name (SPEC section 4: delimiter context). Not `-`, `_` or `\`. */
const DELIMITERS = new Set([' ', '\t', '\n', '\r', '\f', '\v', '"', "'", '`', '/', '.', ':', '[', ']', ',', '(', ')', '{', '}', ';', '=', '<', '>', '!', '?', '|']);
const LABEL_BEFORE = /(?:parameter|param|argument|arg|field|property|key|option|attribute|variable)s?\s*[:=]?\s*['"`]?$/i;
const SUBJECT_AFTER = /^\s+(?:is|are|must|should|cannot|can't|may|has|was|needs?|not)\b/i;
/** Undici's fetch failure is a TypeError by class but a failed fetch by meaning. */
const FETCH_TYPEERROR = /\bTypeError:?\s*(?:fetch failed|failed to fetch|network ?error)/gi;
const VALUE_ERROR = /\bValueError\b/;

// ---------------------------------------------------------------------------------------------

/** Whether `reply` is a tools/call result that says it failed (`result.isError: true`, MCP's tool-error channel). */
export function isErrorResult(reply: Reply): boolean {
  if (reply.kind !== 'response' || typeof reply.result !== 'object' || reply.result === null) return false;
  return (reply.result as { isError?: unknown }).isError === true;
}

/**
 * All text of a reply, for the leak scan and for secret-echo (SPEC section 4): `error.message` and
 * `error.data` (JSON when not a string), then a result's `content[].text` (and embedded
 * `resource.text`) joined by `\n`, then the JSON of `structuredContent`. A result that is not an
 * object is given as JSON; a malformed reply gives the string values found in it, one a line.
 * `''` for `hang` and `exited`.
 */
export function replyText(reply: Reply): string {
  switch (reply.kind) {
    case 'hang':
    case 'exited':
      return '';
    case 'malformed':
      return textLeaves(reply.raw).join('\n');
    case 'response': {
      const parts: string[] = [];
      if (reply.error !== undefined) {
        parts.push(asText(reply.error.message));
        if (reply.error.data !== undefined) parts.push(asText(reply.error.data));
      }
      if (reply.result !== undefined) {
        const r = reply.result;
        if (isRecord(r)) {
          parts.push(contentText(r));
          if (r.structuredContent !== undefined) parts.push(asText(r.structuredContent));
        } else {
          parts.push(asText(r));
        }
      }
      return parts.filter((p) => p !== '').join('\n');
    }
  }
}

/**
 * Classifies one reply to a probe (SPEC section 4). Exactly one class:
 *
 * - `hang`, `exited`: the reply kinds of the same names. `protocol-error`: a malformed reply, a
 *   result that is not an object, or a result whose `content` is present and not an array.
 * - An error (JSON-RPC error, or a result with `isError: true`) is read from its text
 *   (`message` + `data`, or the content text), in this order:
 *   0. a validator error of a real stack ({@link readValidatorErrors}, {@link VALIDATOR_FORMATS}:
 *      zod 3/4 issue arrays and `z.prettifyError`, pydantic `ValidationError`, valibot, Ajv,
 *      santhosh-tekuri and google jsonschema, mcp-go, rmcp/serde; SPEC section 5, "validator
 *      errors") is a validation decision: the steps below read the text without its recognised
 *      JSON and pydantic's `[type=…, input_value=…, input_type=…]` annotations (so
 *      `"received":"undefined"` or `input_type=NoneType` is no crash), and the parameters its paths
 *      name are added to the named ones. It is `rejected` when it names a declared parameter or the
 *      root (path `[]`, `/`, `''`, `root`, a location-less pydantic error, an undeclared key), else
 *      `rejected-unnamed`; under -32603 the root alone does not count and it is `internal-error`.
 *      The SDK's own CallToolRequest issue (path `["params","arguments"]`) is not such a decision.
 *   1. a runtime error ({@link RUNTIME_ERROR_TERMS}) → `internal-error`, even when it names a
 *      parameter: `KeyError: 'user_id'` or Python's `missing 1 required positional argument: 'x'`
 *      is a crash of the handler, not a validation decision. A deliberate `throw new TypeError(…)`
 *      is read the same way (known limit). Undici's `TypeError: fetch failed` is not a runtime error.
 *   2. a `ValueError` is a rejection when the text after `ValueError:` names a parameter
 *      (`ValueError: limit must be positive` → `rejected`), else `internal-error`
 *      (`invalid literal for int()`).
 *   3. the text names a declared parameter, or the root ({@link ROOT}: an undeclared key such as
 *      `sm_unexpected`, an empty Ajv/zod path, `params.arguments`, "arguments must be an object"),
 *      and uses the refusal vocabulary ({@link REFUSAL_TERMS}) → `rejected`.
 *   4. JSON-RPC -32603 otherwise → `internal-error` (the root alone does not count for -32603: the
 *      SDK's CallToolRequest ZodError is not a decision about the tool's parameters).
 *   5. a failed fetch ({@link FETCH_FAILURE_TERMS}) → `lenient-downstream` (a parameter may be
 *      mentioned, e.g. "url", but not as invalid).
 *   6. anything else → `rejected-unnamed` (with or without refusal words: "Invalid arguments",
 *      "Bad request", "Tool x not found", "boom").
 * - A normal result (no `isError: true`) is judged from its first {@link TEXT_LIMIT} characters:
 *   a runtime error → `internal-error` (a `ValueError` as in step 2, a named one being
 *   `text-refusal`); refusal words naming a parameter → `text-refusal`; a failed fetch (codes and
 *   "fetch failed", not the bare words timeout/TLS) → `lenient-downstream`; other refusal words →
 *   `text-refusal`; else `accepted`.
 *
 * Parameter names are matched as whole words between delimiters (whitespace, quotes, `/ . : [ ] , ( ) { } ; =`),
 * case-insensitively from two characters on; names that are ordinary words ("a", "to", "type",
 * "value" …) need a strong context (quoted, a path, zod's `at x`, `x:` or `x must` at a clause start,
 * after "parameter"/"field"/…, alone on a line). The tool name in "for tool X" and the
 * meta keys of zod/Ajv issue JSON (`"code"`, `"expected"`, `"path"` …) are ignored.
 *
 * `named` lists the declared parameters (in declaration order, then `(root)`) that the deciding text
 * names: for `rejected`, the ones named as invalid; for `internal-error`, `lenient-downstream` and
 * `text-refusal`, all it mentions; `[]` otherwise. `leaks` is always {@link scanLeaks} of
 * {@link replyText}. `notes` gets {@link SEP_1303_NOTE} for a JSON-RPC -32602 read as `rejected` or
 * `rejected-unnamed` when the negotiated version is 2025-11-25 or later. Never throws.
 */
export function classifyReply(input: ClassifyInput): Classification {
  const { reply } = input;
  const declared = [...new Set(input.declaredParams.filter((p) => p !== ''))];
  const leaks = scanLeaks(replyText(reply));
  const out = (cls: ReplyClass, text: string, named: string[] = [], notes: string[] = []): Classification => ({
    class: cls,
    named,
    leaks,
    text: clip(text, TEXT_LIMIT),
    notes,
  });

  switch (reply.kind) {
    case 'hang':
      return out('hang', '');
    case 'exited':
      return out('exited', '');
    case 'malformed':
      return out('protocol-error', reply.problem);
    case 'response':
      break;
  }

  if (reply.error !== undefined) {
    const code = typeof reply.error.code === 'number' ? reply.error.code : undefined;
    const text = [asText(reply.error.message), reply.error.data === undefined ? '' : asText(reply.error.data)]
      .filter((p) => p !== '')
      .join('\n');
    // An HTTP 5xx in place of a JSON-RPC reply (a server reached by URL) is the server failing,
    // whatever its body says: never a clean rejection.
    const http5xx = typeof (reply.raw as { httpStatus?: unknown } | null)?.httpStatus === 'number' && code !== undefined && code >= 500 && code <= 599;
    const [cls, named] = http5xx ? (['internal-error', mentions(text, declared)] as [ReplyClass, string[]]) : readError(text, declared, code);
    const notes: string[] = [];
    if (
      code === -32602 &&
      (cls === 'rejected' || cls === 'rejected-unnamed') &&
      input.protocolVersion !== undefined &&
      input.protocolVersion >= SEP_1303_SINCE
    ) {
      notes.push(SEP_1303_NOTE);
    }
    return out(cls, text, named, notes);
  }

  const result = reply.result;
  if (!isRecord(result)) return out('protocol-error', `result is ${describe(result)}, not an object`);
  if ('content' in result && !Array.isArray(result.content)) {
    return out('protocol-error', `result.content is ${describe(result.content)}, not an array`);
  }
  let text = contentText(result);
  if (text === '' && result.structuredContent !== undefined) text = asText(result.structuredContent);
  if (result.isError === true) {
    const [cls, named] = readError(text, declared, undefined);
    return out(cls, text, named);
  }
  const [cls, named] = readResult(clip(text, TEXT_LIMIT), declared);
  return out(cls, text, named);
}

/** Steps 1–6 of {@link classifyReply} for an error text. */
function readError(full: string, declared: string[], code: number | undefined): [ReplyClass, string[]] {
  const whole = full.length > CLASSIFY_MAX_CHARS ? full.slice(0, CLASSIFY_MAX_CHARS) : full;
  // Step 0: a recognised validator error is read without its JSON and pydantic annotations, so
  // that `"received":"undefined"` or `input_type=NoneType` is not taken for a crash.
  const validator = readValidatorErrors(whole, declared);
  const decision = validator !== undefined && !validator.requestOnly ? validator : undefined;
  const text = decision?.rest ?? whole;
  const mentioned = mentions(whole, declared);
  if (hasRuntimeError(text)) return ['internal-error', mentioned];

  let namedInvalid: string[];
  const valueError = VALUE_ERROR.test(text);
  if (valueError) namedInvalid = mentions(valueErrorMessages(text), declared);
  else namedInvalid = matchesAny(text, REFUSAL_TERMS, 'error') ? mentions(text, declared) : [];
  if (code === -32603) namedInvalid = namedInvalid.filter((n) => n !== ROOT);
  if (decision !== undefined) {
    const all = new Set([...namedInvalid, ...decision.named]);
    namedInvalid = [...declared.filter((d) => all.has(d)), ...(all.has(ROOT) && code !== -32603 ? [ROOT] : [])];
    if (namedInvalid.length > 0) return ['rejected', namedInvalid];
    return code === -32603 ? ['internal-error', mentioned] : ['rejected-unnamed', []];
  }

  if (namedInvalid.length > 0) return ['rejected', namedInvalid];
  if (valueError || code === -32603) return ['internal-error', mentioned];
  if (matchesAny(text, FETCH_FAILURE_TERMS, 'error')) return ['lenient-downstream', mentioned];
  return ['rejected-unnamed', []];
}

/** The normal-result branch of {@link classifyReply}, on the head of the result text. */
function readResult(head: string, declared: string[]): [ReplyClass, string[]] {
  const mentioned = mentions(head, declared);
  if (hasRuntimeError(head)) return ['internal-error', mentioned];
  if (VALUE_ERROR.test(head)) {
    const named = mentions(valueErrorMessages(head), declared);
    return named.length > 0 ? ['text-refusal', named] : ['internal-error', mentioned];
  }
  const refusal = matchesAny(head, REFUSAL_TERMS, 'result');
  if (refusal && mentioned.length > 0) return ['text-refusal', mentioned];
  if (matchesAny(head, FETCH_FAILURE_TERMS, 'result')) return ['lenient-downstream', mentioned];
  if (refusal) return ['text-refusal', mentioned];
  return ['accepted', []];
}

function hasRuntimeError(text: string): boolean {
  return matchesAny(text.replace(FETCH_TYPEERROR, ' '), RUNTIME_ERROR_TERMS, 'error');
}

function matchesAny(text: string, terms: readonly VocabularyTerm[], channel: 'error' | 'result'): boolean {
  return terms.some((t) => (t.only === undefined || t.only === channel) && t.pattern.test(text));
}

/** The messages of the `ValueError:` lines (what follows the colon, to the end of the line). */
function valueErrorMessages(text: string): string {
  const out: string[] = [];
  const re = /\bValueError\b:?([^\n]*)/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) out.push(m[1] ?? '');
  return out.join('\n');
}

// --- validator errors (SPEC section 5, "Validator errors are read as the validation decisions they are") ---

/**
 * The validator formats {@link readValidatorErrors} recognises, with where each shape comes from.
 * Exported as data so that docs can list them.
 */
export const VALIDATOR_FORMATS: readonly { readonly format: string; readonly source: string }[] = [
  { format: 'zod issue array', source: 'zod 3 `ZodError.message` (JSON.stringify(issues, null, 2)) and zod 4 issues, alone or after a prefix such as `MCP error -32602: Invalid arguments for tool x:`; `path` names the argument, `[]` the root' },
  { format: 'zod prettified', source: 'zod 4 `z.prettifyError`: `✖ <message>` lines, each followed by `  → at <path>` (no such line: the root)' },
  { format: 'valibot issues', source: 'valibot `ValiError.issues` as JSON: `path` items `{"key":"owner",…}`; text `Invalid type: Expected string but received undefined`, `Invalid key: Expected "owner" but received undefined`' },
  { format: 'Ajv errors', source: 'Ajv `errors` as JSON (`instancePath`/`dataPath`, `params.missingProperty`, `params.additionalProperty`); text `must have required property \'owner\'`, `/owner must be string`, `data/owner must be string` (read by the refusal vocabulary)' },
  { format: 'pydantic ValidationError', source: 'pydantic-core `ValidationError.__str__`: `N validation error(s) for <title>` then per error a location line and `  <msg> [type=…, input_value=…, input_type=…]` (no location line: the root); FastMCP prefixes `Error executing tool x: `; JSON `errors()` items with `loc`/`msg`' },
  { format: 'santhosh-tekuri/jsonschema', source: "v5 `jsonschema: '/owner' does not validate with <url>: <msg>`, v6 `jsonschema validation failed with <url>` then `- at '/owner': <msg>`; `''` is the root, where `missing properties: 'owner'` names the property" },
  { format: 'google/jsonschema-go', source: 'as used by the official go-sdk: `validating root: required: missing properties: ["owner"]`, `validating /properties/owner: type: <nil> has type "null", want "string"` (schema paths)' },
  { format: 'mcp-go', source: 'mark3labs/mcp-go `CallToolRequest.Require*`: `required argument "owner" not found`, `argument "owner" is not a string`' },
  { format: 'serde (rmcp)', source: 'rmcp `Parameters<T>`: `failed to deserialize parameters: <serde_json error>`: `missing field `owner``, `invalid type: null, expected a string` (names nothing), `unknown field `sm_unexpected`, expected one of `a`, `b`` (the root)' },
];

/** What {@link readValidatorErrors} found in an error text. */
interface ValidatorReading {
  /** The formats recognised ({@link VALIDATOR_FORMATS}). */
  formats: string[];
  /** Declared parameters (and {@link ROOT}) the recognised errors name by their paths. */
  named: Set<string>;
  /** The root was named only by the SDK's CallToolRequest schema (`params.arguments`), not the tool's. */
  requestOnly: boolean;
  /** The text without the recognised JSON and pydantic's `[type=…, input_value=…, input_type=…]` annotations. */
  rest: string;
}

/** pydantic's per-error annotation (the input may hold anything, `None` as `input_type=NoneType`). */
const PYDANTIC_ANNOTATION = /\[type=[\w.-]+(?:,[^\n]*?input_type=[\w.]+)?\]/g;
const PYDANTIC_URL_LINE = /^[ \t]*For further information visit https?:\/\/errors\.pydantic\.dev\/\S*[ \t]*$/gm;
const PYDANTIC_HEADER = /\b(\d+) validation errors? for [^\n]*\n/g;
const SERDE_MESSAGE = /\b(?:missing field `[^`\n]*`|unknown field `[^`\n]*`|duplicate field `[^`\n]*`|unknown variant `[^`\n]*`|invalid (?:type|value|length): [^\n]{1,200}?, expected\b)/;
const MCP_GO_MESSAGE = /\b(?:required )?argument "([^"\n]+)" (?:not found|is not an? [\w.[\]]+)/g;
const AJV_TEXT = /\b(?:must|should) have required property '|(?:\bdata|(?:^|[\s,;:])\/[\w~%$-]*)(?:[./][\w~%$-]+)* (?:must|should) (?:be|NOT|match|equal|pass|have)\b/m;
const VALIBOT_MESSAGE = /\bInvalid (?:type|key|value|length|format|\w+): Expected [^\n]{1,200}? but received\b/;
const SANTHOSH_V5 = /\bjsonschema: '([^'\n]*)' does not validate with [^\n]*?: ([^\n]*)/g;
const SANTHOSH_V6 = /^[ \t]*- at '([^'\n]*)': ([^\n]*)/gm;
const GOOGLE_VALIDATING = /\bvalidating (root|\/[^\s:]*):/g;

/**
 * Recognises validator errors of the stacks in {@link VALIDATOR_FORMATS} in an error text and reads
 * which declared parameters (or the root) their paths name. A path's first segment names the
 * argument: a declared parameter, else (an undeclared key, an empty path) the root; the SDK's
 * `["params","arguments", …]` is read from what follows. Bounded: at most 64 JSON candidates.
 */
export function readValidatorErrors(text: string, declared: readonly string[]): ValidatorReading | undefined {
  const formats = new Set<string>();
  const named = new Set<string>();
  let request = false;
  let rest = text;
  const addPath = (segments: readonly unknown[]): void => {
    const r = pathName(segments, declared);
    if (r === 'request') {
      request = true;
      named.add(ROOT);
    } else named.add(r);
  };

  // JSON issue arrays / objects (zod, valibot, Ajv, pydantic errors()).
  const spans: [number, number][] = [];
  let tries = 0;
  for (let i = 0; i < text.length && tries < 64; i++) {
    const c = text[i];
    if (c !== '[' && c !== '{') continue;
    if (!/^[[{]\s*["{]/.test(text.slice(i, i + 64))) continue;
    tries++;
    const end = balancedEnd(text, i);
    if (end < 0) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text.slice(i, end));
    } catch {
      continue;
    }
    const issues = issueObjects(parsed);
    if (issues.length === 0) continue;
    for (const issue of issues) {
      const read = readIssue(issue, declared);
      if (read === undefined) continue;
      formats.add(read.format);
      for (const p of read.paths) addPath(p);
    }
    spans.push([i, end]);
    i = end - 1;
  }
  if (spans.length > 0) {
    let out = '';
    let at = 0;
    for (const [s, e] of spans) {
      out += `${text.slice(at, s)} `;
      at = e;
    }
    rest = out + text.slice(at);
  }

  // zod 4 z.prettifyError.
  const lines = rest.split('\n');
  for (let k = 0; k < lines.length; k++) {
    if (!/^\s*✖ /.test(lines[k] as string)) continue;
    formats.add('zod prettified');
    const at = /^\s*→ at (.+?)\s*$/.exec(lines[k + 1] ?? '');
    addPath(at ? dottedPath(at[1] as string) : []);
  }

  // pydantic ValidationError text.
  PYDANTIC_HEADER.lastIndex = 0;
  let headers = 0;
  for (let m = PYDANTIC_HEADER.exec(rest); m !== null && headers++ < 8; m = PYDANTIC_HEADER.exec(rest)) {
    formats.add('pydantic ValidationError');
    let count = Math.min(Number(m[1]), 64);
    let loc: string | undefined;
    for (const line of rest.slice(m.index + m[0].length, m.index + m[0].length + 64 * 1024).split('\n')) {
      if (count <= 0) break;
      if (/^ {4}/.test(line) || line.trim() === '') continue;
      if (/^ {2}\S/.test(line)) {
        addPath(loc === undefined ? [] : dottedPath(loc));
        loc = undefined;
        count--;
      } else loc = line.trim();
    }
  }
  if (formats.has('pydantic ValidationError') || PYDANTIC_ANNOTATION.test(rest)) {
    rest = rest.replace(PYDANTIC_ANNOTATION, ' ').replace(PYDANTIC_URL_LINE, '');
  }
  PYDANTIC_ANNOTATION.lastIndex = 0;

  // santhosh-tekuri/jsonschema v5 and v6.
  const santhosh = (pointer: string, msg: string): void => {
    formats.add('santhosh-tekuri/jsonschema');
    const segs = jsonPointer(pointer);
    if (segs.length === 0) {
      const missing = quotedNames(/\bmissing propert(?:y|ies):? ([^\n]*)/.exec(msg)?.[1] ?? '', "'");
      if (missing.length > 0) {
        for (const p of missing) addPath([p]);
        return;
      }
    }
    addPath(segs);
  };
  for (const m of rest.matchAll(SANTHOSH_V5)) santhosh(m[1] as string, m[2] as string);
  if (/\bjsonschema\b/.test(rest)) for (const m of rest.matchAll(SANTHOSH_V6)) santhosh(m[1] as string, m[2] as string);

  // google/jsonschema-go (the go-sdk's validator): schema paths.
  const validating = [...rest.matchAll(GOOGLE_VALIDATING)];
  if (validating.length > 0 && /\b(?:has type "[^"]*", want|missing properties|additionalProperties|does not equal|is (?:less|greater) than|contains \d+ Unicode code points|does not match regular expression)\b/.test(rest)) {
    formats.add('google/jsonschema-go');
    const prop = validating.map((m) => /^\/properties\/([^/]+)/.exec(m[1] as string)).find((p) => p !== null);
    if (prop) addPath([jsonPointer(`/${prop[1] as string}`)[0]]);
    else {
      const missing = quotedNames(/\bmissing properties: ([^\n]*)/.exec(rest)?.[1] ?? '', '"');
      if (missing.length > 0) for (const p of missing) addPath([p]);
      else addPath([]);
    }
  }

  // mark3labs/mcp-go.
  for (const m of rest.matchAll(MCP_GO_MESSAGE)) {
    formats.add('mcp-go');
    addPath([m[1]]);
  }

  // serde (rmcp), valibot and Ajv text: named by the refusal vocabulary and quoted names.
  if (SERDE_MESSAGE.test(rest)) formats.add('serde (rmcp)');
  if (VALIBOT_MESSAGE.test(rest)) formats.add('valibot issues');
  if (AJV_TEXT.test(rest)) formats.add('Ajv errors');

  if (formats.size === 0) return undefined;
  const requestOnly = request && [...named].every((n) => n === ROOT) && ![...formats].some((f) => f !== 'zod issue array');
  return { formats: [...formats], named, requestOnly, rest };
}

/** The name a validator path gives: a declared parameter, the root, or `request` for CallToolRequest's `params.arguments`. */
function pathName(segments: readonly unknown[], declared: readonly string[]): string {
  if (segments.length >= 2 && segments[0] === 'params' && segments[1] === 'arguments') {
    if (segments.length === 2) return 'request';
    return pathName(segments.slice(2), declared);
  }
  const first = segments[0];
  if (typeof first !== 'string') return ROOT;
  if (declared.includes(first)) return first;
  const folded = declared.find((d) => d.toLowerCase() === first.toLowerCase());
  return folded ?? ROOT;
}

/** The issue objects in parsed JSON: an array of them, or an object holding `issues`/`errors`/`details`/`detail`. */
function issueObjects(v: unknown, depth = 0): Record<string, unknown>[] {
  if (depth > 3) return [];
  if (Array.isArray(v)) return v.filter((x): x is Record<string, unknown> => isRecord(x) && isIssue(x));
  if (!isRecord(v)) return [];
  if (isIssue(v)) return [v];
  for (const key of ['issues', 'errors', 'details', 'detail', 'error', 'data']) {
    const found = issueObjects(v[key], depth + 1);
    if (found.length > 0) return found;
  }
  return [];
}

/**
 * An issue of zod (`code`, `path`, `message`), valibot (`kind`, `path` of `{key}` items, `message`),
 * Ajv (`instancePath`/`dataPath`, `keyword`, `message`) or pydantic `errors()` (`type`, `loc`, `msg`).
 * A GraphQL error (`message`, `path`, no `code`) is none of these.
 */
function isIssue(o: Record<string, unknown>): boolean {
  if (typeof o.message === 'string') {
    if (Array.isArray(o.path) && (typeof o.code === 'string' || typeof o.kind === 'string')) return true;
    if ((typeof o.instancePath === 'string' || typeof o.dataPath === 'string') && typeof o.keyword === 'string') return true;
  }
  return typeof o.msg === 'string' && typeof o.type === 'string' && Array.isArray(o.loc);
}

/** One issue's format and the paths it names. */
function readIssue(o: Record<string, unknown>, declared: readonly string[]): { format: string; paths: unknown[][] } | undefined {
  if (typeof o.instancePath === 'string' || typeof o.dataPath === 'string') {
    const segs = typeof o.instancePath === 'string' ? jsonPointer(o.instancePath) : dottedPath(String(o.dataPath).replace(/^\./, ''));
    const params = isRecord(o.params) ? o.params : {};
    if (segs.length === 0 && typeof params.missingProperty === 'string') return { format: 'Ajv errors', paths: [[params.missingProperty.replace(/^\./, '')]] };
    if (segs.length === 0 && typeof params.additionalProperty === 'string') return { format: 'Ajv errors', paths: [[]] };
    return { format: 'Ajv errors', paths: [segs] };
  }
  if (Array.isArray(o.loc)) return { format: 'pydantic ValidationError', paths: [o.loc] };
  const path = o.path as unknown[];
  if (path.some((p) => isRecord(p))) {
    // valibot: path items are {type, origin, input, key, value}.
    return { format: 'valibot issues', paths: [path.map((p) => (isRecord(p) ? p.key : p))] };
  }
  if (o.code === 'unrecognized_keys' && path.length === 0) {
    const keys = Array.isArray(o.keys) ? o.keys.filter((k): k is string => typeof k === 'string') : [];
    const declaredKeys = keys.filter((k) => declared.includes(k));
    return { format: 'zod issue array', paths: declaredKeys.length > 0 ? declaredKeys.map((k) => [k]) : [[]] };
  }
  return { format: typeof o.kind === 'string' && typeof o.type === 'string' ? 'valibot issues' : 'zod issue array', paths: [path] };
}

/** The end (exclusive) of the balanced JSON value starting at `start`, or -1. Linear, string-aware. */
function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  const limit = Math.min(text.length, start + CLASSIFY_MAX_CHARS);
  for (let k = start; k < limit; k++) {
    const c = text[k];
    if (inString) {
      if (c === '\\') k++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') {
      depth--;
      if (depth === 0) return k + 1;
    }
  }
  return -1;
}

/** A JSON pointer (`/owner/0`, `''`) as segments, `~1` and `~0` unescaped. */
function jsonPointer(p: string): string[] {
  const s = p.replace(/^#/, '');
  if (s === '' || s === '/') return [];
  return s
    .replace(/^\//, '')
    .split('/')
    .map((x) => x.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** A dotted path (`items.0.name`, `items[0].name`, `["a b"].c`, `root`, `(root)`) as segments. */
function dottedPath(p: string): string[] {
  const t = p.trim();
  if (t === '' || t === 'root' || t === '(root)' || t === '/') return [];
  const out: string[] = [];
  const re = /\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]|([^.[\]]+)/g;
  for (let m = re.exec(t); m !== null; m = re.exec(t)) out.push(m[1] ?? m[2] ?? m[3] ?? '');
  return out;
}

/** The names in a list such as `'a', 'b'` or `["a","b"]`. */
function quotedNames(list: string, quote: string): string[] {
  const re = quote === '"' ? /"((?:[^"\\\n]|\\.)*)"/g : /'([^'\n]*)'/g;
  return [...list.matchAll(re)].map((m) => m[1] as string);
}

// --- parameter names --------------------------------------------------------------------------

/** Declared parameters (and the root) the text names, in declaration order, `(root)` last. */
function mentions(text: string, declared: string[]): string[] {
  const prepared = forNames(text);
  const found = declared.filter((name) => namesParam(prepared, name));
  if (ROOT_PATTERNS.some((re) => re.test(text))) found.push(ROOT);
  return found;
}

/**
 * Removes what would make a parameter look named when it is not: the tool name ("for tool add:",
 * "Tool x not found"), pydantic's model name, and the meta keys of zod/Ajv issue JSON (with the
 * values of the ones that hold codes and type names, e.g. `"expected":"number"`).
 */
function forNames(text: string): string {
  return text
    .replace(/\btool\s+(?=(['"`]?[\w.\-/]+['"`]?))\1(?=\s*(?::|\n|$)|\s+(?:not found|is disabled|disabled|failed|error))/gi, 'tool')
    .replace(/\bvalidation errors? for (?=([\w.]+))\1/gi, 'validation error')
    .replace(PYDANTIC_ANNOTATION, ' ')
    // serde's list of what it expected ("unknown field `x`, expected one of `a`, `b`") names no argument.
    .replace(/\bexpected (?:one of )?`[^`\n]*`(?:(?:,| or) `[^`\n]*`)*/g, 'expected')
    .replace(/"(?:code|expected|received|keyword|schemaPath|origin|format|validation|type|inclusive|exact|minimum|maximum)"\s*:\s*(?:"(?:[^"\\\n]|\\.)*"|[^,}\]\n]*)/g, ' ')
    .replace(/"(?:path|instancePath|message|params|keys|errors|issues|missingProperty|additionalProperty|unionErrors|note|values|options|error|details)"\s*:/g, ' ');
}

/** Whether `text` names parameter `name` as a whole word in a context that counts (see classifyReply). */
function namesParam(text: string, name: string): boolean {
  const fold = name.length >= 2;
  const hay = fold ? text.toLowerCase() : text;
  const needle = fold ? name.toLowerCase() : name;
  const weakOk = !WEAK_STOPWORDS.has(name.toLowerCase());
  for (let i = hay.indexOf(needle); i !== -1; i = hay.indexOf(needle, i + 1)) {
    const j = i + needle.length;
    const before = hay[i - 1];
    const after = hay[j];
    if (!isDelimiter(before) || !isDelimiter(after)) continue;
    // A contraction ("don't", "it's") is not a quote.
    if (before === "'" && isLetter(hay[i - 2])) continue;
    if (weakOk || strongContext(hay, i, j)) return true;
  }
  return false;
}

function strongContext(t: string, i: number, j: number): boolean {
  const before = t[i - 1];
  const after = t[j];
  if (before !== undefined && QUOTES.has(before) && after === before) return true;
  if (before === '/' || before === '[' || after === '[') return true;
  if (before === '.' && isIdent(t[i - 2])) return true;
  if (after === '.' && isIdent(t[j + 1])) return true;
  // zod: "… received string at a", end of issue.
  if (t.slice(i - 3, i) === 'at ' && !isIdent(t[i - 4]) && (after === undefined || '\n\r,;).'.includes(after))) return true;
  if (clauseStart(t, i) && (after === ':' || SUBJECT_AFTER.test(t.slice(j, j + 12)))) return true;
  if (LABEL_BEFORE.test(t.slice(Math.max(0, i - 40), i))) return true;
  return aloneOnLine(t, i, j);
}

/** pydantic puts the field alone on its own line ("a\n  Input should be …"); looks 40 characters each way at most. */
function aloneOnLine(t: string, i: number, j: number): boolean {
  let k = i - 1;
  for (; k >= 0 && i - k <= 40 && t[k] !== '\n'; k--) if (t[k] !== ' ' && t[k] !== '\t' && t[k] !== '\r') return false;
  if (k >= 0 && t[k] !== '\n') return false;
  let m = j;
  for (; m < t.length && m - j <= 40 && t[m] !== '\n'; m++) if (t[m] !== ' ' && t[m] !== '\t' && t[m] !== '\r') return false;
  return m >= t.length || t[m] === '\n';
}

/** At the start of the text, of a line, or after `, ; : ( { [ -` (an issue list, "Error: x must …"). */
function clauseStart(t: string, i: number): boolean {
  let k = i - 1;
  let skipped = false;
  while (k >= 0 && i - k <= 40 && (t[k] === ' ' || t[k] === '\t')) {
    k--;
    skipped = true;
  }
  if (k < 0) return true;
  const c = t[k] as string;
  if ('\n\r,;:({[•*'.includes(c)) return true;
  return skipped && (c === '-' || c === '.');
}

function isDelimiter(ch: string | undefined): boolean {
  return ch === undefined || DELIMITERS.has(ch) || /\s/.test(ch);
}
function isIdent(ch: string | undefined): boolean {
  return ch !== undefined && /[A-Za-z0-9_$]/.test(ch);
}
function isLetter(ch: string | undefined): boolean {
  return ch !== undefined && /[A-Za-z]/.test(ch);
}

// --- leak scan ---------------------------------------------------------------------------------

/**
 * Scans a reply's text for leaked internals (SPEC section 4, {@link LEAK_PATTERNS}): Python
 * tracebacks and frames, JavaScript stack frames, package paths with a line number, Windows user
 * and system paths, Unix home paths with a `:line` suffix (a bare home path does not count).
 *
 * One {@link Leak} per pattern per distinct line, the line trimmed to 200 characters, in order of
 * appearance. Linear-time on any input: only the first {@link LEAK_SCAN_MAX_CHARS} characters are
 * read, lines longer than {@link LEAK_SCAN_MAX_LINE} characters are skipped, and every pattern runs
 * on one line. A line that carries JSON-escaped text (structuredContent, `error.data` objects) is
 * split at its `\n` escapes and unescaped first, so each frame is quoted on its own.
 */
export function scanLeaks(text: string): Leak[] {
  const src = text.length > LEAK_SCAN_MAX_CHARS ? text.slice(0, LEAK_SCAN_MAX_CHARS) : text;
  const leaks: Leak[] = [];
  const seen = new Set<string>();
  for (const physical of src.split(/\r\n|\r|\n/)) {
    for (const line of logicalLines(physical)) {
      if (line.length > LEAK_SCAN_MAX_LINE || line.trim() === '') continue;
      for (const p of LEAK_PATTERNS) {
        if (!p.regex.test(line)) continue;
        const quoted = clip(line, LEAK_LINE_LIMIT);
        const key = `${p.pattern}\u0000${quoted}`;
        if (seen.has(key)) continue;
        seen.add(key);
        leaks.push({ pattern: p.pattern, line: quoted });
      }
    }
  }
  return leaks;
}

/** A physical line, or the unescaped pieces of a JSON-escaped one. */
function logicalLines(physical: string): string[] {
  const escaped = physical.includes('"') && (physical.includes('\\n') || physical.includes('\\"'));
  if (!escaped) return [physical];
  return physical
    .split(/(?<!\\)\\[rn]/)
    .map((s) => s.replace(/\\(["\\/])/g, '$1').replace(/\\t/g, ' ').replace(/"[}\],\s]*$/, ''));
}

// --- helpers -----------------------------------------------------------------------------------

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `content[].text` (and embedded `resource.text`) joined by `\n`. */
function contentText(result: Record<string, unknown>): string {
  if (!Array.isArray(result.content)) return '';
  const texts: string[] = [];
  for (const item of result.content as unknown[]) {
    if (!isRecord(item)) continue;
    if (typeof item.text === 'string') texts.push(item.text);
    else if (isRecord(item.resource) && typeof item.resource.text === 'string') texts.push(item.resource.text);
  }
  return texts.join('\n');
}

function asText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined) return '';
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** Options of {@link textLeaves}. */
export interface TextLeavesOptions {
  /** Also every key of an object, before its value. Default false. */
  keys?: boolean;
  /** Also every number and boolean, as JSON writes it. Default false. */
  scalars?: boolean;
  /** Most texts taken. Default 10,000. */
  maxItems?: number;
  /** Deepest nesting read (the value itself is depth 0). Default 32. */
  maxDepth?: number;
  /** Most characters taken in all; the text that crosses it is cut. Default unbounded. */
  maxChars?: number;
}

/**
 * The texts inside a JSON value, depth-first in document order: every string, and as `opts` asks
 * every key and every number and boolean. Bounded by `opts` (a malformed or huge reply cannot make
 * it run away); iterative, so depth costs no stack. Reading these instead of the value's JSON text
 * copies nothing and sees each text as it is, not escaped.
 */
export function textLeaves(value: unknown, opts: TextLeavesOptions = {}): string[] {
  const { keys = false, scalars = false, maxItems = 10_000, maxDepth = 32 } = opts;
  let budget = opts.maxChars ?? Infinity;
  const out: string[] = [];
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0 && out.length < maxItems && budget > 0) {
    const [v, depth] = stack.pop()!;
    let t: string | undefined;
    if (typeof v === 'string') t = v;
    else if (scalars && (typeof v === 'number' || typeof v === 'boolean')) t = String(v);
    else if (depth < maxDepth && Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], depth + 1]);
    else if (depth < maxDepth && isRecord(v)) {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        stack.push([entries[i]![1], depth + 1]);
        if (keys) stack.push([entries[i]![0], depth + 1]);
      }
    }
    if (t === undefined) continue;
    out.push(t.length > budget ? t.slice(0, budget) : t);
    budget -= t.length;
  }
  return out;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'undefined' ? 'missing' : `a ${typeof v}`;
}

function clip(s: string, n: number): string {
  const t = s.trim();
  return t.length > n ? ownCopy(t.slice(0, n)) : t;
}

/**
 * A copy of `s` that shares no memory with the string it was cut from. V8 keeps a cut (`slice`,
 * `trim`) of a long string as a view that holds the whole original alive: 4 KiB kept of a 1 MB
 * error text would still hold the 1 MB until the report is written. A JSON round trip builds a new
 * string, character for character (lone surrogates included).
 */
export function ownCopy(s: string): string {
  return JSON.parse(JSON.stringify(s)) as string;
}

/** Words of an error that says the server refused a call for a rate limit ("Rate limit exceeded", "Too many requests"). */
const RATE_LIMIT_WORDS = /\brate[ -]?limit(?:ed|s)?\b|\btoo many requests\b/i;

/**
 * Whether `reply` refused its call for a rate limit: a JSON-RPC error or an `isError` result whose
 * text (its first 2,000 characters) says so. The tool did not run: what the call would have done
 * is not known from it (server-brave-search 0.6.2 refuses a second search within a second).
 */
export function refusedForRateLimit(reply: Reply): boolean {
  if (reply.kind !== 'response') return false;
  const isError = reply.error !== undefined || (reply.result as { isError?: unknown } | undefined)?.isError === true;
  return isError && RATE_LIMIT_WORDS.test(replyText(reply).slice(0, 2000));
}

/**
 * The first line of `text` that reports a failed connection (the connection terms of
 * {@link FETCH_FAILURE_TERMS}, not the bare "timeout"), trimmed to 200 characters; undefined when
 * none does. In the sandbox's loopback-only namespace this is how a direct connection attempt
 * shows: the effect log counts it as a network effect (SPEC section 3).
 */
export function failedConnectionLine(text: string): string | undefined {
  const terms = FETCH_FAILURE_TERMS.filter((t) => t.only !== 'error');
  for (const line of text.slice(0, LEAK_SCAN_MAX_CHARS).split('\n')) {
    if (line.length <= LEAK_SCAN_MAX_LINE && terms.some((t) => t.pattern.test(line))) return line.trim().slice(0, 200);
  }
  return undefined;
}

/**
 * HTTP failure statuses as clients quote them (axios `Request failed with status code 502`,
 * `(HTTP 502)`, requests' `502 Server Error: Bad Gateway`, `Tunnel connection failed: 502`,
 * undici's `Proxy response (502)`): the 5xx answer to an upstream request the tool made.
 */
const UPSTREAM_FAILURE = /\bstatus(?: code)?:? ?5\d\d\b|\bHTTP(?:\/\d(?:\.\d)?)?[ :]5\d\d\b|\b5\d\d (?:Bad Gateway|Service Unavailable|Gateway Time-?out|Server Error|Internal Server Error)\b|\bBad Gateway\b|\bTunnel(?:ing)? connection failed\b|\bProxy response \(5\d\d\)/i;

/**
 * The first line of `text` that reports a 5xx answer to an upstream HTTP request, trimmed to 200
 * characters; undefined when none does. Not a reply class: such an error names no parameter and
 * is `rejected-unnamed`, but when the sandbox also saw the tool connect out during the call, the
 * tool ran with the arguments and its request was refused by the sandbox's proxy (which answers
 * every connection with 502), so the arguments were used, not rejected (bounded-limits).
 */
export function upstreamFailureLine(text: string): string | undefined {
  for (const line of text.slice(0, LEAK_SCAN_MAX_CHARS).split('\n')) {
    if (line.length <= LEAK_SCAN_MAX_LINE && UPSTREAM_FAILURE.test(line)) return line.trim().slice(0, 200);
  }
  return undefined;
}
