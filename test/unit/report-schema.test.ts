/**
 * docs/report-schema.md documents the JSON report field by field. This test builds real reports
 * (an audited one from the demo server, a not-audited one from a server that exits during the
 * handshake) and checks the doc's tables against them both ways: every key a report has is
 * documented, every documented top-level key exists, and every field marked `yes` is always there.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { audit } from '../../src/audit.js';
import { REPORT_SCHEMA_VERSION, type Report } from '../../src/report/build.js';
import { compareWithBaseline } from '../../src/report/baseline.js';
import { configRegistry } from '../../src/config/defaults.js';
import { parseConfig } from '../../src/config/schema.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const doc = readFileSync(`${root}docs/report-schema.md`, 'utf8');

interface DocField {
  key: string;
  required: boolean;
}

/** `## <heading>` → the rows of the table under it: first column a backticked key, third `yes`/`optional`. */
function docTables(text: string): Map<string, DocField[]> {
  const out = new Map<string, DocField[]>();
  let heading: string | undefined;
  for (const line of text.split('\n')) {
    const h = /^##\s+(.+?)\s*$/.exec(line);
    if (h) {
      heading = h[1]!;
      continue;
    }
    // The type column may hold escaped pipes (`"a" \| "b"`).
    const row = /^\|\s*`([^`]+)`\s*\|(?:[^|\\]|\\.)*\|\s*(yes|optional)\s*\|/.exec(line);
    if (row && heading) {
      const rows = out.get(heading) ?? [];
      rows.push({ key: row[1]!, required: row[2] === 'yes' });
      out.set(heading, rows);
    }
  }
  return out;
}

const tables = docTables(doc);

/** Checks `objects` against the table under `heading`. */
function expectDocumented(heading: string, objects: object[]): void {
  const fields = tables.get(heading);
  expect(fields, `docs/report-schema.md has no table under "## ${heading}"`).toBeDefined();
  const documented = fields!.map((f) => f.key);
  const seen = new Set(objects.flatMap((o) => Object.keys(o)));
  expect([...seen].filter((k) => !documented.includes(k)), `undocumented fields in ${heading}: add them to docs/report-schema.md`).toEqual([]);
  for (const f of fields!.filter((x) => x.required)) {
    const missing = objects.filter((o) => !(f.key in o)).length;
    expect(missing, `${heading}.${f.key} is documented as always present but ${missing} object(s) lack it`).toBe(0);
  }
}

let audited: Report;
let notAudited: Report;
/** The audited report compared with the not-audited one as its baseline: every finding is new. */
let compared: Report;
/** A server that exits on one probe and is started again: the report's restarts. */
let restarted: Report;

beforeAll(async () => {
  [audited, notAudited, restarted] = await Promise.all([
    // Suppressions in the sample: one that applies, one that matches nothing, one expired.
    audit({
      command: process.execPath,
      args: [`${root}demo/server.mjs`],
      config: parseConfig(
        {
          suppress: [
            { check: 'secret-echo', reason: 'doc sample', until: '2999-01-01' },
            { check: 'tool-naming', tool: 'no_such_tool', reason: 'matches nothing' },
            { check: 'robust-input', reason: 'expired', until: '2020-01-01' },
          ],
        },
        configRegistry(),
      ),
    }),
    audit({ command: process.execPath, args: [`${root}test/fixtures/servers/exits-during-init.mjs`] }),
    audit({ command: process.execPath, args: [`${root}test/fixtures/servers/exits-on-null.mjs`] }),
  ]);
  compared = compareWithBaseline(audited, notAudited, 'baseline.json');
});

describe('docs/report-schema.md', () => {
  it('documents the current schemaVersion', () => {
    expect(audited.schemaVersion).toBe(REPORT_SCHEMA_VERSION);
    expect(doc).toMatch(new RegExp(`^# .*schemaVersion ${REPORT_SCHEMA_VERSION}\\b`, 'm'));
  });

  it('has a machine-readable top-level table', () => {
    expect(tables.get('Top-level fields')?.length ?? 0).toBeGreaterThan(10);
  });

  it('sample reports are what the test expects (one audited, one not)', () => {
    expect(audited.status).toBe('audited');
    expect(notAudited.status).toBe('not-audited');
    expect(notAudited.notAudited).toBeDefined();
  });

  it('documents every top-level key of a report, and every documented top-level key exists', () => {
    const reports = [audited, notAudited, compared, restarted];
    expectDocumented('Top-level fields', reports);
    const present = new Set(reports.flatMap((r) => Object.keys(r)));
    const documented = tables.get('Top-level fields')!.map((f) => f.key);
    expect(documented.filter((k) => !present.has(k)), 'documented top-level keys no report has').toEqual([]);
  });

  it('documents the nested objects', () => {
    const reports = [audited, notAudited, compared, restarted];
    expectDocumented('baseline', [compared.baseline!]);
    expect(compared.baseline!.new.length).toBeGreaterThan(0);
    expectDocumented('target', reports.map((r) => r.target));
    expectDocumented('notAudited', [notAudited.notAudited!]);
    expectDocumented('protocol', [audited.protocol!]);
    expectDocumented('coverage', reports.map((r) => r.coverage));
    expectDocumented('grade', reports.map((r) => r.grade));
    expectDocumented('grade.packs[]', reports.flatMap((r) => r.grade.packs));
    expectDocumented('checks[]', reports.flatMap((r) => r.checks));
    const findings = reports.flatMap((r) => r.checks.flatMap((c) => c.findings));
    expect(findings.length).toBeGreaterThan(0);
    expectDocumented('findings[]', findings);
    expectDocumented('tools[]', audited.tools);
    expectDocumented('suppressions', reports.map((r) => r.suppressions));
    expectDocumented('suppressions.entries[]', audited.suppressions.entries);
    expect(audited.suppressions.entries.map((e) => e.status)).toEqual(['applied', 'unused', 'expired']);
    expect(findings.some((f) => f.suppressed)).toBe(true);
    expect(audited.calls.length).toBeGreaterThan(0);
    expectDocumented('calls[]', audited.calls);
  });

  it('names the units of every duration field', () => {
    for (const [heading, rows] of tables) {
      for (const r of rows.filter((x) => x.key.endsWith('Ms'))) {
        const line = doc.split('\n').find((l) => l.startsWith(`| \`${r.key}\``))!;
        expect(line, `${heading}.${r.key} must say "ms"`).toMatch(/\bms\b/);
      }
    }
  });
});
