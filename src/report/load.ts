/**
 * Reads a saved JSON report (`sealmark report <saved.json>`, `--baseline <saved.json>`). Only the
 * fields the reporters and the baseline comparison read are checked; the rest is kept as it is
 * (docs/report-schema.md: readers ignore fields they do not know).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { UsageError } from '../errors.js';
import { REPORT_SCHEMA_VERSION, type Report } from './build.js';
import { isMultiReport, type MultiReport } from './multi.js';

const finding = z.looseObject({
  checkId: z.string(),
  messageId: z.string(),
  message: z.string(),
  level: z.enum(['fail', 'partial', 'info']),
  evidence: z.looseObject({ calls: z.array(z.number()).optional(), schemaPaths: z.array(z.string()).optional(), quotes: z.array(z.string()).optional() }),
});

const savedReport = z.looseObject({
  schemaVersion: z.literal(REPORT_SCHEMA_VERSION),
  generatedAt: z.string(),
  status: z.enum(['audited', 'not-audited']),
  target: z.looseObject({ command: z.array(z.string()) }),
  grade: z.looseObject({ letter: z.string().nullable(), percent: z.number().nullable(), packs: z.array(z.looseObject({})), caps: z.array(z.looseObject({})) }),
  checks: z.array(z.looseObject({ id: z.string(), verdict: z.string(), severity: z.string(), pack: z.string(), findings: z.array(finding), notes: z.array(z.string()) })),
  tools: z.array(z.looseObject({ name: z.string(), index: z.number() })),
  calls: z.array(z.looseObject({ seq: z.number(), probe: z.string() })),
});

/**
 * Reads a saved single report or `--client-config` multi-report (each server's report checked as
 * {@link parseSavedReport} does). Throws UsageError (exit 2) naming `flag`, the file and the problem.
 */
export function loadSaved(path: string, flag: string): Report | MultiReport {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(code ? `${flag} ${path}: cannot read it (${code})` : `${flag} ${path}: not JSON (${(err as Error).message})`);
  }
  if (isMultiReport(raw)) return { ...raw, servers: raw.servers.map((s, i) => ({ name: s.name, report: parseSavedReport(s.report, `${flag} ${path} (servers[${i}])`) })) };
  return parseSavedReport(raw, `${flag} ${path}`);
}

/**
 * Reads and checks the report saved at `path` (`flag` names where it came from in errors).
 * Throws UsageError (exit 2) when the file cannot be read, is not JSON, or is not a sealmark JSON
 * report of schemaVersion 1, naming the first field that is wrong.
 */
export function loadSavedReport(path: string, flag: string): Report {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`${flag} ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${flag} ${path}: not JSON (${(err as Error).message})`);
  }
  return parseSavedReport(raw, `${flag} ${path}`);
}

/** Checks a parsed saved report (see {@link loadSavedReport}); `label` names it in the UsageError. */
export function parseSavedReport(raw: unknown, label: string): Report {
  const parsed = savedReport.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? issue.path.join('.') : '(top level)';
    throw new UsageError(`${label}: not a sealmark JSON report (schemaVersion ${REPORT_SCHEMA_VERSION}): ${where}: ${issue.message}`);
  }
  return parsed.data as unknown as Report;
}
