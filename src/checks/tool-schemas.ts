/**
 * tool-schemas (pack core, scored): every tool's schemas are usable JSON Schema, its name follows
 * the 2025-11-25 rule, and what it returns matches the outputSchema it declares. SPEC section 5;
 * MCP 2025-11-25 `server/tools.mdx` (names: SEP-986; outputSchema: "Servers MUST provide
 * structured results that conform to this schema"); `basic/index.mdx` (2020-12 default dialect).
 */
import type { Check, CheckMeta } from './check.js';
import { finding, group, verdictOf } from './finding.js';
import { compileSchema, foreignKeywords, propertiesOf, requiredOf, type ForeignKeyword } from '../schema.js';
import type { Finding } from '../types.js';

/** MCP 2025-11-25 tool name rule: 1–128 characters of A-Z a-z 0-9 _ . - */
export const TOOL_NAME_RULE = /^[A-Za-z0-9_.-]{1,128}$/;

export const meta: CheckMeta = {
  id: 'tool-schemas',
  title: 'Schemas compile, names are valid, output matches outputSchema',
  pack: 'core',
  weight: 'scored',
  scope: 'server',
  lint: true,
  decidedBy: 'static',
  since: '0.1',
  severity: 'warning',
  requires: [],
  config: [],
  probes: [
    { id: 'input-schema', core: true, description: 'Each inputSchema compiles with Ajv in its dialect (2020-12 unless $schema says otherwise), has type "object" at the root, and declares every name it lists as required.' },
    { id: 'foreign-keywords', core: true, description: 'Keywords and formats the schema\'s dialect does not define (OpenAPI\'s nullable, example, discriminator, x-*, format int64 …) are ignored, as every validator ignores them, and named in one note per tool.' },
    { id: 'property-types', core: true, description: 'Properties that declare no type are listed: no probe can check them.' },
    { id: 'tool-names', core: true, description: 'Names are 1–128 characters of A-Z a-z 0-9 _ . - (MCP 2025-11-25) and unique.' },
    { id: 'output-schema', core: true, description: 'An outputSchema, when present, compiles; the structuredContent of every successful call sealmark made conforms to it.' },
  ],
  verdicts: [
    { verdict: 'fail', when: 'a tool entry is malformed, an inputSchema or outputSchema does not compile, an inputSchema root is not type "object", two tools share a name, or structuredContent does not conform to its outputSchema' },
    { verdict: 'partial', when: 'a required name is not a declared property, a name breaks the 2025-11-25 rule, or a successful call of a tool with an outputSchema returned no structuredContent' },
    { verdict: 'pass', when: 'every schema compiles and is consistent, every name is valid and unique, and every structuredContent seen conforms' },
  ],
  messages: {
    'malformed-tool': 'tool #{index} is not a valid tool object: {problem}',
    'input-schema-compile': '{tool}: inputSchema does not compile: {error}',
    'input-schema-not-object': '{tool}: inputSchema root has type {type}, not "object"',
    'required-undeclared': '{tool}: required names {names} are not declared properties',
    'foreign-keywords': '{tool}: {keywords} {verb} not {noun} of JSON Schema {dialect}{origin}: validators ignore {pronoun}',
    'untyped-properties': '{tool}: properties without a declared type cannot be checked: {names}',
    'bad-name': '{tool}: the name breaks the MCP 2025-11-25 rule (1–128 characters of A-Z a-z 0-9 _ . -)',
    'duplicate-name': '{tool}: {count} tools share this name',
    'output-schema-compile': '{tool}: outputSchema does not compile: {error}',
    'structured-content-mismatch': '{tool}: structuredContent does not conform to outputSchema: {errors}',
    'structured-content-missing': '{tool}: declares an outputSchema but a successful call returned no structuredContent',
  },
  docs: {
    summary:
      'Clients build calls from inputSchema and check results against outputSchema. A schema that does not compile, lists required names it never declares, or a result that contradicts its own outputSchema breaks every client that trusts them.',
    how: [
      'Each tool\'s inputSchema is compiled with Ajv in the dialect its $schema names (2020-12 when absent, per MCP 2025-11-25; draft-07, 2019-09, draft-06 and draft-04 are understood).',
      'A keyword the dialect does not define (OpenAPI\'s nullable, example, discriminator, x-* extensions) and a format JSON Schema does not define (int32, int64, float, double, byte, binary, password) are ignored, as validators ignore them, never a compile error; one info note per tool names them.',
      'The root must be type "object"; each name in required must be a declared property; properties with no declared type are listed.',
      'Names must match the 2025-11-25 rule and be unique in the listing.',
      'An outputSchema must compile; the structuredContent of every successful tools/call sealmark made during the run (valid calls, and invalid ones a server accepted) is validated against it, and Ajv\'s error paths are the evidence.',
      'Scoring: scored (pass 1, partial 0.5, fail 0).',
    ],
    fix: 'Generate schemas from your validator (zod, pydantic) rather than by hand; keep the root an object; return structuredContent built from the same type as outputSchema, and test it.',
    falsePositives: [
      'OpenAPI\'s `nullable: true` beside a `type` is read as admitting null (as Ajv reads it), so sealmark never blames a server for accepting or returning a null it declared; clients with a plain JSON Schema validator reject that null, which the foreign-keywords note says.','A 2026-07-28 server may legally declare a non-object outputSchema; only compile errors and conformance are judged for outputSchema.'],
    falseNegatives: ['structuredContent is only seen for calls that succeeded; a tool never validly called is judged on its schemas alone (add a probes: entry).'],
    limits: ['Remote $ref targets are never fetched (MCP 2026-07-28 forbids it); a schema that needs one does not compile.'],
  },
};

/** The one advisory note of a tool whose schemas use keywords or formats their dialect does not define. */
function foreignNote(tool: string, foreign: ForeignKeyword[], dialect: string, schemaPaths: string[]): Finding {
  const one = foreign.length === 1;
  const openapi = foreign.every((k) => k.openapi);
  return finding(
    meta,
    'foreign-keywords',
    'info',
    {
      tool,
      keywords: foreign.map((k) => `\`${k.name}\``).join(', '),
      verb: one ? 'is' : 'are',
      noun: one ? 'a keyword' : 'keywords',
      dialect,
      origin: openapi ? (one ? ' (an OpenAPI extension)' : ' (OpenAPI extensions)') : '',
      pronoun: one ? 'it' : 'them',
    },
    { schemaPaths },
    { tool },
  );
}

export const check: Check = {
  meta,
  judge(a) {
    const out: Finding[] = [];
    const counts = new Map<string, number>();
    for (const t of a.tools) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
    for (const t of a.tools) {
      const raw = t.raw as Record<string, unknown> | null;
      if (typeof raw !== 'object' || raw === null || typeof raw.name !== 'string') {
        out.push(finding(meta, 'malformed-tool', 'fail', { index: t.index, problem: 'no string name' }));
        continue;
      }
      const tool = t.name;
      const is = t.inputSchema;
      const compiled = compileSchema(is);
      if (!compiled.ok) {
        out.push(finding(meta, 'input-schema-compile', 'fail', { tool, error: compiled.error }, { schemaPaths: [`tools[${t.index}].inputSchema`] }, { tool }));
      } else {
        const type = (is as { type?: unknown }).type;
        if (type !== 'object') out.push(finding(meta, 'input-schema-not-object', 'fail', { tool, type: JSON.stringify(type ?? null) }, { schemaPaths: [`tools[${t.index}].inputSchema.type`] }, { tool }));
        const declared = new Set(propertiesOf(is).map((p) => p.name));
        const missing = requiredOf(is).filter((r) => !declared.has(r));
        if (missing.length > 0) out.push(finding(meta, 'required-undeclared', 'partial', { tool, names: missing.join(', ') }, { schemaPaths: [`tools[${t.index}].inputSchema.required`] }, { tool }));
        const untyped = propertiesOf(is).filter((p) => p.types.length === 0).map((p) => p.name);
        if (untyped.length > 0) out.push(finding(meta, 'untyped-properties', 'info', { tool, names: untyped.join(', ') }, { schemaPaths: untyped.map((n) => `tools[${t.index}].inputSchema.properties.${n}`) }, { tool }));
      }
      const foreign: ForeignKeyword[] = compiled.ok ? foreignKeywords(is, compiled.dialect) : [];
      const foreignPaths = foreign.length > 0 ? [`tools[${t.index}].inputSchema`] : [];
      if (!TOOL_NAME_RULE.test(tool)) out.push(finding(meta, 'bad-name', 'partial', { tool }, { schemaPaths: [`tools[${t.index}].name`] }, { tool }));
      if ((counts.get(tool) ?? 0) > 1) out.push(finding(meta, 'duplicate-name', 'fail', { tool, count: counts.get(tool)! }, {}, { tool }));
      if ('outputSchema' in raw && raw.outputSchema !== undefined) {
        const oc = compileSchema(raw.outputSchema);
        if (oc.ok) {
          const more = foreignKeywords(raw.outputSchema, oc.dialect).filter((k) => !foreign.some((f) => f.name === k.name));
          if (more.length > 0) foreignPaths.push(`tools[${t.index}].outputSchema`);
          foreign.push(...more);
        }
        if (foreign.length > 0) out.push(foreignNote(tool, foreign, compiled.ok ? compiled.dialect : oc.ok ? oc.dialect : '2020-12', foreignPaths));
        if (!oc.ok) {
          out.push(finding(meta, 'output-schema-compile', 'fail', { tool, error: oc.error }, { schemaPaths: [`tools[${t.index}].outputSchema`] }, { tool }));
          continue;
        }
        for (const c of a.calls) {
          if (c.tool !== tool || c.exchange.method !== 'tools/call' || c.exchange.reply.kind !== 'response' || c.exchange.reply.error) continue;
          const result = c.exchange.reply.result as { isError?: unknown; structuredContent?: unknown } | null;
          if (!result || typeof result !== 'object' || result.isError === true) continue;
          if (!('structuredContent' in result)) {
            out.push(finding(meta, 'structured-content-missing', 'partial', { tool }, { calls: [c.seq] }, { tool }));
            continue;
          }
          const errors = oc.validate(result.structuredContent);
          if (errors.length > 0) {
            out.push(finding(meta, 'structured-content-mismatch', 'fail', { tool, errors: errors.slice(0, 3).join('; ') }, { calls: [c.seq], quotes: errors.slice(0, 5), schemaPaths: [`tools[${t.index}].outputSchema`] }, { tool }));
          }
        }
      } else if (foreign.length > 0) out.push(foreignNote(tool, foreign, compiled.ok ? compiled.dialect : '2020-12', foreignPaths));
    }
    const findings = group(out, (f) => String(f.data.index ?? ''));
    return { id: meta.id, verdict: a.tools.length === 0 ? 'n/a' : verdictOf(findings), findings, notes: a.tools.length === 0 ? ['no tools were listed'] : [] };
  },
};
