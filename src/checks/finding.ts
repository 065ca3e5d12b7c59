/**
 * Builds findings from a check's messages (STYLE: the code reports a message id plus data, never
 * free text), and groups repeated findings so one fault is one finding with every call as evidence.
 */
import type { CheckMeta } from './check.js';
import type { Coverage, Evidence, Finding } from '../types.js';

/** Fills `{name}` placeholders of `template` from `data`. Unknown placeholders stay as written. */
export function format(template: string, data: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => (key in data ? String(data[key]) : whole));
}

/** `s` with every lone surrogate (half of a pair cut apart) replaced by U+FFFD, as String#toWellFormed does. */
export function wellFormed(s: string): string {
  return s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/**
 * Longest server-given value (characters) a finding's data and message carry: a 1 MB tool name
 * shown whole in each of 3,000 findings' messages would make a report of tens of megabytes and
 * hold them all in memory. The tool's full name stays in the finding's `tool` and in the listing.
 */
export const MAX_DATA_CHARS = 2048;

/** `s` cut to {@link MAX_DATA_CHARS} characters, saying how many more there were. */
function capped(s: string): string {
  return s.length <= MAX_DATA_CHARS ? s : `${s.slice(0, MAX_DATA_CHARS)}…[${s.length - MAX_DATA_CHARS} more characters]`;
}

/** Makes a finding; throws (a bug, caught per check) when `messageId` is not in `meta.messages`. */
export function finding(
  meta: CheckMeta,
  messageId: string,
  level: Finding['level'],
  data: Record<string, string | number>,
  evidence: Evidence = {},
  extra: Partial<Pick<Finding, 'tool' | 'replay' | 'request' | 'sdkCause'>> = {},
): Finding {
  const template = meta.messages[messageId];
  if (template === undefined) throw new Error(`check ${meta.id}: unknown message id ${messageId}`);
  // Server text cut to a length may end inside a surrogate pair: a lone half becomes U+FFFD.
  const clean = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, typeof v === 'string' ? wellFormed(capped(v)) : v]));
  return { checkId: meta.id, messageId, level, data: clean, message: wellFormed(format(template, clean)), evidence, ...extra };
}

/**
 * Merges findings with the same check, message id, tool and `key` (default: none): the first keeps
 * its data and replay; evidence calls, paths and quotes are unioned.
 */
export function group(findings: Finding[], key: (f: Finding) => string = () => ''): Finding[] {
  const out = new Map<string, Finding>();
  for (const f of findings) {
    const k = `${f.messageId}\u0000${f.tool ?? ''}\u0000${key(f)}`;
    const prev = out.get(k);
    if (!prev) {
      out.set(k, { ...f, evidence: { ...f.evidence } });
      continue;
    }
    prev.evidence.calls = union(prev.evidence.calls, f.evidence.calls);
    prev.evidence.schemaPaths = union(prev.evidence.schemaPaths, f.evidence.schemaPaths);
    prev.evidence.quotes = union(prev.evidence.quotes, f.evidence.quotes)?.slice(0, 10);
  }
  return [...out.values()];
}

function union<T>(a: T[] | undefined, b: T[] | undefined): T[] | undefined {
  if (!a && !b) return undefined;
  return [...new Set([...(a ?? []), ...(b ?? [])])];
}

/** The verdict findings imply: any `fail` → fail, any `partial` → partial, else pass. */
export function verdictOf(findings: Finding[]): 'pass' | 'partial' | 'fail' {
  if (findings.some((f) => f.level === 'fail')) return 'fail';
  if (findings.some((f) => f.level === 'partial')) return 'partial';
  return 'pass';
}

/**
 * The {@link Coverage} of a check over the listed `tools`: those in `judged`, and every other one
 * as not judged with its reason from `why` (skip_tools named as such).
 */
export function coverageIn(tools: string[], judged: Set<string>, why: Map<string, string>, skipTools: string[] = []): Coverage {
  const skip = new Set(skipTools);
  return {
    judged: tools.filter((t) => judged.has(t)),
    notJudged: tools.filter((t) => !judged.has(t)).map((t) => ({ tool: t, why: skip.has(t) ? 'in skip_tools' : (why.get(t) ?? 'not probed') })),
  };
}
