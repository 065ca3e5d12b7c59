/**
 * The real-server corpus (issue 13): every published server of test/corpus/servers.json (pinned as
 * devDependencies) is audited offline in the sandbox, two at a time, and every check's verdict and
 * one-line reason must be exactly what docs/real-servers.md says. The audit and the reasons come
 * from test/corpus/corpus.mjs, which scripts/real-servers.mjs uses to write the doc; after a change
 * to a check, regenerate it with `npm run build && node scripts/real-servers.mjs`.
 *
 * The audits take 5–140 s each (~7 min in all on two cores), so they run once, in beforeAll.
 *
 * A server with many tools is audited as several instances run side by side (issue 15); each of
 * those is audited again with `--instances 1`, one instance after another, and must get the same
 * verdicts, reasons and finding fingerprints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { audit } from '../../src/index.js';
import { DOC, ROOT, auditAll, gradeOf, leftoverTempDirs, loadManifest, parseDoc, processesOf, type CorpusResult } from '../corpus/corpus.mjs';

const servers = loadManifest();
const doc = parseDoc(readFileSync(DOC, 'utf8'));
const results = new Map<string, CorpusResult>();
/** The audits again with one instance at a time, of the servers audited as several instances. */
const oneAtATime = new Map<string, CorpusResult>();

/** How many instances a report's calls went to. */
const instancesOf = (r: CorpusResult) => new Set(r.report.calls.map((c) => c.instance ?? 0)).size;

beforeAll(async () => {
  for (const r of await auditAll(servers, audit, { concurrency: 2 })) results.set(r.id, r);
  const shared = servers.filter((s) => instancesOf(results.get(s.id)!) > 1);
  const serial: typeof audit = (options) => audit({ ...options, instances: 1 });
  for (const r of await auditAll(shared, serial, { concurrency: 2 })) oneAtATime.set(r.id, r);
}, 40 * 60_000);

afterAll(() => {
  // Belt and braces: nothing the corpus started is still running, whatever a failed test left.
  for (const r of results.values()) {
    for (const p of processesOf(r.marker)) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }
});

const result = (id: string): CorpusResult => {
  const r = results.get(id);
  expect(r, `${id} was not audited`).toBeDefined();
  return r!;
};

describe('the corpus', () => {
  it('has at least 20 servers, each pinned exactly in package.json and documented', () => {
    expect(servers.length).toBeGreaterThanOrEqual(20);
    expect(new Set(servers.map((s) => s.id)).size).toBe(servers.length);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    for (const s of servers) {
      const spec = pkg.devDependencies[s.alias ?? s.package];
      expect(spec, s.id).toBe(s.alias ? `npm:${s.package}@${s.version}` : s.version);
      const installed = JSON.parse(readFileSync(join(ROOT, 'node_modules', s.alias ?? s.package, 'package.json'), 'utf8')) as { version: string };
      // mcp-time-linux-x64's own package.json says "v0.4.0" (npm normalises it to 0.4.0).
      expect(installed.version.replace(/^v/, ''), s.id).toBe(s.version);
      expect(existsSync(join(ROOT, 'node_modules', s.bin)), s.bin).toBe(true);
    }
    expect([...doc.keys()]).toEqual(servers.map((s) => s.id));
  });

  it('covers the stacks of issue 13', () => {
    const has = (f: (s: (typeof servers)[number]) => boolean) => servers.filter(f).map((s) => s.id);
    const sdk = (s: (typeof servers)[number]) => s.stack.sdk === '@modelcontextprotocol/sdk';
    expect(has((s) => sdk(s) && /^0\.[56]\./.test(s.stack.sdkVersion)).length).toBeGreaterThanOrEqual(1);
    expect(has((s) => sdk(s) && /^1\.(2|3)\d\./.test(s.stack.sdkVersion)).length).toBeGreaterThanOrEqual(1);
    expect(has((s) => /^FastMCP/.test(s.stack.framework)).length).toBeGreaterThanOrEqual(1);
    expect(has((s) => s.stack.sdk === 'tmcp').length).toBeGreaterThanOrEqual(1);
    expect(has((s) => /^Go/.test(s.stack.language)).length).toBeGreaterThanOrEqual(1);
    expect(has((s) => s.stack.sdk === 'rmcp').length).toBeGreaterThanOrEqual(1);
    for (const v of [/^zod 3/, /^zod 4/, /^valibot/, /^none/]) expect(has((s) => v.test(s.stack.validator)).length, String(v)).toBeGreaterThanOrEqual(1);
  });
});

describe.each(servers.map((s) => [s.id]))('%s', (id) => {
  it('gets exactly the documented verdict and reason for every check', () => {
    const r = result(id);
    const documented = doc.get(id);
    expect(r.report.status).toBe('audited');
    expect(r.rows).toEqual(documented?.rows);
    expect(gradeOf(r.report)).toBe(documented?.grade);
  });

  it('ends every process it started', () => {
    const r = result(id);
    if (process.platform !== 'linux') return;
    // The detection works (the server was seen while it ran) and nothing was left when audit() returned.
    expect(r.seen.length).toBeGreaterThanOrEqual(1);
    expect(r.leftover).toEqual([]);
    expect(processesOf(r.marker)).toEqual([]);
  });
});

describe('several instances side by side, or one at a time', () => {
  it('the largest servers are audited as several instances (so the comparison below compares something)', () => {
    expect(instancesOf(result('git-mcp'))).toBeGreaterThanOrEqual(3);
    expect([...oneAtATime.keys()]).toContain('git-mcp');
    for (const r of oneAtATime.values()) expect(r.report.calls.every((c) => c.instance !== undefined)).toBe(true);
  });

  it('gives the same verdicts, reasons, fingerprints and grade with --instances 1', () => {
    const fingerprints = (r: CorpusResult) => r.report.checks.map((c) => `${c.id} ${c.verdict} ${c.findings.map((f) => f.fingerprint).sort().join(',')}`);
    for (const [id, serial] of oneAtATime) {
      const side = result(id);
      expect(serial.rows, id).toEqual(side.rows);
      expect(fingerprints(serial), id).toEqual(fingerprints(side));
      expect(gradeOf(serial.report), id).toBe(gradeOf(side.report));
    }
  });
});

describe('after the corpus', () => {
  it('leaves no temp folder', () => {
    expect(leftoverTempDirs()).toEqual([]);
  });
});
