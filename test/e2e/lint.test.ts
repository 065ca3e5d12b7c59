/**
 * `sealmark lint <tools.json>` (issue 7) through the real binary: the shapes a saved listing may
 * have, bad input, and the library's `lint()`. (The comparison with live audits of the reference
 * servers is in real-servers.test.ts.)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lint } from '../../src/index.js';
import type { Report } from '../../src/report/build.js';
import { root } from '../helpers/run.js';

const dir = mkdtempSync(join(tmpdir(), 'sealmark-lint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Two tools: one whose name says it deletes while it states readOnlyHint (tool-naming), one with an armed flag. */
const TOOLS = [
  { name: 'delete_note', description: 'Deletes a note.', inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }, annotations: { readOnlyHint: true } },
  { name: 'post_update', description: 'Posts an update.', inputSchema: { type: 'object', properties: { text: { type: 'string' }, notify_channel: { type: 'boolean' } }, required: ['text'] } },
];

function lintFile(content: unknown, extra: string[] = []): { code: number | null; stdout: string; stderr: string; report?: Report } {
  const file = join(dir, `t${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  const out = join(dir, 'out.json');
  rmSync(out, { force: true });
  const r = spawnSync(process.execPath, [join(root, 'bin', 'sealmark.js'), 'lint', file, '--format', 'json', '--output', out, ...extra], { encoding: 'utf8' });
  let report: Report | undefined;
  try {
    report = JSON.parse(spawnSync('cat', [out], { encoding: 'utf8' }).stdout) as Report;
  } catch {
    report = undefined;
  }
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, report };
}

describe('sealmark lint', () => {
  it('reads a bare array, a tools/list result and a JSON-RPC response alike', () => {
    const reports = [TOOLS, { tools: TOOLS, nextCursor: '' }, { jsonrpc: '2.0', id: 1, result: { tools: TOOLS } }].map((x) => lintFile(x).report!);
    const verdicts = reports.map((r) => r.checks.map((c) => `${c.id}:${c.verdict}`));
    expect(verdicts[1]).toEqual(verdicts[0]);
    expect(verdicts[2]).toEqual(verdicts[0]);
    const r = reports[0]!;
    expect(r.target.kind).toBe('tools-file');
    expect(r.calls).toEqual([]);
    expect(r.protocol).toBeNull();
    // The static checks judge the listing ...
    expect(r.checks.find((c) => c.id === 'tool-naming')!.findings.map((f) => `${f.messageId}:${f.tool}`)).toContain('write-verb-read-only:delete_note');
    expect(r.checks.find((c) => c.id === 'armed-flags')!.verdict).not.toBe('n/a');
    // ... and the dynamic ones say why they are n/a.
    for (const id of ['handshake', 'robust-input', 'default-call-effects', 'secret-echo']) {
      const c = r.checks.find((x) => x.id === id)!;
      expect(c.verdict, id).toBe('n/a');
      expect(c.notes[0], id).toMatch(/^a dynamic check: sealmark lint read a saved tools\/list; no server was called$/);
    }
  });

  it('exits 2 naming the file for unreadable, non-JSON or shapeless input; 3 for an empty listing', () => {
    const missing = spawnSync(process.execPath, [join(root, 'bin', 'sealmark.js'), 'lint', join(dir, 'nope.json')], { encoding: 'utf8' });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/lint .*nope\.json: cannot read it \(ENOENT\)/);
    const notJson = lintFile('{"tools": [');
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/not JSON/);
    const shapeless = lintFile({ result: { items: [] } });
    expect(shapeless.code).toBe(2);
    expect(shapeless.stderr).toMatch(/expected a tools array, a tools\/list result .* found an object with keys result/);
    const empty = lintFile({ tools: [] });
    expect(empty.code).toBe(3);
    expect(empty.report?.status).toBe('not-audited');
  });

  it('takes --config, --only and gates like audit', () => {
    const cfg = join(dir, 'sealmark.config.json');
    writeFileSync(cfg, JSON.stringify({ checks: { 'armed-flags': { severity: 'error' } } }));
    // notify_channel declares default true: a switch its default arms, armed-flags' fail.
    const armed = [TOOLS[0], { ...TOOLS[1], inputSchema: { ...TOOLS[1]!.inputSchema, properties: { text: { type: 'string' }, notify_channel: { type: 'boolean', default: true } } } }];
    const gated = lintFile(armed, ['--config', cfg, '--only', 'tool-naming,armed-flags']);
    expect(gated.report!.checks.map((c) => c.id)).toEqual(['armed-flags', 'tool-naming']);
    // armed-flags fails at severity error: the default gate exits 1. tool-naming's contradiction
    // (delete_note stating readOnlyHint true) rests on the name alone: partial.
    expect(gated.report!.checks.find((c) => c.id === 'armed-flags')!.verdict).toBe('fail');
    expect(gated.report!.checks.find((c) => c.id === 'tool-naming')!.verdict).toBe('partial');
    expect(gated.code).toBe(1);
    expect(lintFile(armed, ['--fail-under', 'F']).code).toBe(0);
  });

  it('the library lint() returns the same report as the command', () => {
    const fromLib = lint({ tools: TOOLS });
    const fromCli = lintFile({ tools: TOOLS }).report!;
    expect(fromLib.checks.map((c) => [c.id, c.verdict, c.findings.map((f) => f.fingerprint)])).toEqual(fromCli.checks.map((c) => [c.id, c.verdict, c.findings.map((f) => f.fingerprint)]));
  });
});
