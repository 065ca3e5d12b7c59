/** Types of test/corpus/corpus.mjs (the real-server corpus: manifest, audits, reasons, the doc). */
import type { Report } from '../../src/report/build.js';

export interface CorpusServer {
  id: string;
  package: string;
  /** The devDependency name when it is an npm alias (`mcp-fs-old` for a second version). */
  alias?: string;
  version: string;
  stack: { sdk: string; sdkVersion: string; framework: string; validator: string; language: string };
  /** Relative to the repository's node_modules. */
  bin: string;
  args: string[];
  env?: Record<string, string>;
}

export interface CorpusRow {
  check: string;
  verdict: string;
  reason: string;
}

export interface CorpusProc {
  pid: number;
  cmd: string;
  cwd: string;
}

export interface CorpusResult {
  id: string;
  report: Report;
  rows: CorpusRow[];
  ms: number;
  /** The value of MARKER_VAR in the server's environment (its temp folder, removed by now). */
  marker: string;
  seen: CorpusProc[];
  leftover: CorpusProc[];
}

export type AuditFn = (options: {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  config: Record<string, never>;
  onProgress: () => void;
}) => Promise<Report>;

export const ROOT: string;
export const MANIFEST: string;
export const DOC: string;
export const MARKER_VAR: string;
export function loadManifest(): CorpusServer[];
export function launchOf(server: CorpusServer, dir: string): { command: string; args: string[]; env: Record<string, string> };
export function processesOf(marker: string): CorpusProc[];
export function auditServer(server: CorpusServer, audit: AuditFn): Promise<CorpusResult>;
export function auditAll(servers: CorpusServer[], audit: AuditFn, options?: { concurrency?: number; onDone?: (r: CorpusResult) => void }): Promise<CorpusResult[]>;
export function normalise(text: string, paths?: string[]): string;
export function reasonOf(check: Report['checks'][number], paths?: string[]): string;
export function rowsOf(report: Report, paths?: string[]): CorpusRow[];
export function gradeOf(report: Report): string;
export function renderDoc(servers: CorpusServer[], results: (CorpusResult | { id: string; rows: CorpusRow[]; gradeText?: string })[], options: { date: string; sealmark: string }): string;
export function parseDoc(text: string): Map<string, { grade: string | undefined; rows: CorpusRow[] }>;
export function leftoverTempDirs(): string[];
