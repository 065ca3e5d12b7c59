/**
 * The fleet leaderboard's pure parts (src/fleet/order.ts, diff.ts, badge.ts, board.ts) on hand-made
 * records: version and ruler order, the latest record per target, slugs, the diff between two
 * records by check and fingerprint, the badge, the index, and escaping of what strangers wrote.
 * The pages in a real browser, from real audits: test/e2e/fleet-board.test.ts.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { badgeSvg, badgeValue } from '../../src/fleet/badge.js';
import { buildBoard, diffPair, diffRecords, writeLeaderboard, BOARD_SCHEMA_VERSION, type BoardIndex } from '../../src/fleet/board.js';
import { renderLeaderboard, renderServerPage } from '../../src/fleet/board-html.js';
import { compareRulers, latestPerTarget, newestFirst, orderVersions, serverSlug } from '../../src/fleet/order.js';
import type { FleetOutcome, FleetRecord, Ruler } from '../../src/fleet/types.js';
import type { Report, ReportCheck, ReportFinding } from '../../src/report/build.js';
import type { Verdict } from '../../src/types.js';

const RULER: Ruler = { sealmarkVersion: '0.2.0', methodologyVersion: '3' };
const OLD_RULER: Ruler = { sealmarkVersion: '0.1.0', methodologyVersion: '2' };
const EVIL = '<img src=x onerror=alert(1)>';

function finding(over: Partial<ReportFinding>): ReportFinding {
  return { checkId: 'robust-input', messageId: 'internal-error', message: 'm', data: {}, level: 'partial', evidence: {}, fingerprint: '', ...over };
}

function check(id: string, verdict: Verdict, findings: ReportFinding[] = [], pack = 'core'): ReportCheck {
  return { id, verdict, findings, notes: [], title: `title of ${id}`, pack, weight: 'scored', severity: 'warning' } as unknown as ReportCheck;
}

/** A hand-made report: enough for the diff and the server page (the HTML reporter reads the rest). */
function report(checks: ReportCheck[], status: Report['status'] = 'audited'): Report {
  return {
    schemaVersion: 1,
    methodologyVersion: '3',
    cliVersion: '0.2.0',
    generatedAt: '2026-11-30T00:00:00.000Z',
    durationMs: 1000,
    target: { kind: 'stdio', command: ['node', 'server.js'] },
    status,
    protocol: null,
    sandbox: { kind: 'sandbox', network: 'namespace', filesystem: 'scratch', protected: [], unprotected: [], note: 'scratch' },
    standard: true,
    nonStandardKeys: [],
    coverage: { level: 'hygiene-only', tools: [] },
    grade: { packs: [{ pack: 'core', percent: 50, letter: 'F', counted: 2 }], percent: 50, letter: 'F', caps: [] },
    checks,
    tools: [
      { name: 'a', index: 0 },
      { name: 'b', index: 1 },
    ],
    calls: [],
    stderrTail: '',
    suppressions: { applied: true, entries: [] },
  } as unknown as Report;
}

let seq = 0;
function rec(over: Partial<FleetRecord> & { outcome?: FleetOutcome }): FleetRecord {
  const outcome = over.outcome ?? 'graded';
  const graded = outcome === 'graded';
  return {
    jobId: `job-${++seq}`,
    server: 'io.github.example/weather',
    version: '1.0.0',
    target: { kind: 'package', entry: 'packages[0]', label: `npm @example/weather@${over.version ?? '1.0.0'}` },
    ruler: RULER,
    outcome,
    reason: graded ? null : `why ${outcome}`,
    grade: graded ? { letter: 'B', percent: 84 } : null,
    packs: graded ? { core: 80, effects: 88 } : {},
    finishedAt: '2026-12-01T10:00:00.000Z',
    durationMs: 5000,
    attempts: 1,
    report: null,
    ...over,
  };
}

describe('version and ruler order', () => {
  it('orders versions semver-wise: numbers as numbers, a pre-release before its release', () => {
    const rs = ['1.10.0', '1.9.0', '2.0.0', '2.0.0-rc.1', '2.0.0-rc.10', '2.0.0-rc.2', 'v0.9', '1.9.0-alpha'].map((version, i) => rec({ version, finishedAt: `2026-12-01T10:00:0${i}.000Z` }));
    expect(orderVersions(rs)).toEqual(['v0.9', '1.9.0-alpha', '1.9.0', '1.10.0', '2.0.0-rc.1', '2.0.0-rc.2', '2.0.0-rc.10', '2.0.0']);
  });

  it('orders by when each version was last graded when one of them is no semver (or null)', () => {
    const rs = [rec({ version: '2026-01-05', finishedAt: '2026-12-01T12:00:00.000Z' }), rec({ version: '1.0.0', finishedAt: '2026-12-01T11:00:00.000Z' }), rec({ version: null, finishedAt: '2026-12-01T13:00:00.000Z' })];
    expect(orderVersions(rs)).toEqual(['1.0.0', '2026-01-05', null]);
  });

  it('compares rulers by sealmark version, then methodology version', () => {
    expect(compareRulers(OLD_RULER, RULER)).toBeLessThan(0);
    expect(compareRulers({ sealmarkVersion: '0.10.0', methodologyVersion: '1' }, { sealmarkVersion: '0.9.0', methodologyVersion: '9' })).toBeGreaterThan(0);
    expect(compareRulers({ sealmarkVersion: '0.2.0', methodologyVersion: '4' }, RULER)).toBeGreaterThan(0);
    expect(compareRulers(RULER, { ...RULER })).toBe(0);
  });

  it('the latest record of each target is of the newest version, under the newest ruler', () => {
    const newOld = rec({ version: '1.1.0', ruler: OLD_RULER, finishedAt: '2026-12-01T09:00:00.000Z' });
    const newNew = rec({ version: '1.1.0', ruler: RULER, finishedAt: '2026-12-01T08:00:00.000Z' });
    const old = rec({ version: '1.0.0', ruler: RULER, finishedAt: '2026-12-02T00:00:00.000Z' });
    const remote = rec({ version: '1.1.0', target: { kind: 'remote', entry: 'remotes[0]', label: 'https://example.com/mcp' }, outcome: 'auth-gated' });
    const goneTarget = rec({ version: '1.0.0', target: { kind: 'package', entry: 'packages[1]', label: 'pypi weather 1.0.0' } });
    const all = [old, remote, newOld, goneTarget, newNew];
    expect(latestPerTarget(all)).toEqual([newNew, remote]);
    expect(newestFirst(all)).toEqual([remote, newNew, newOld, old, goneTarget]);
    // The diff compares the main target's newest record with the newest of the version before.
    expect(diffPair(all)).toEqual({ older: old, newer: newNew });
    // One version only: its two newest records (here: another ruler).
    expect(diffPair([newOld, newNew])).toEqual({ older: newOld, newer: newNew });
    expect(diffPair([newNew])).toBeNull();
  });
});

describe('serverSlug', () => {
  it('is a safe file name from a registry name, stable, and tells apart names its text merges', () => {
    const s = serverSlug('io.github.example/weather');
    expect(s).toMatch(/^io\.github\.example-weather-[0-9a-f]{12}$/);
    expect(serverSlug('io.github.example/weather')).toBe(s);
    expect(serverSlug('io.github.Example/weather')).not.toBe(s);
    expect(serverSlug('io.github.example-weather')).not.toBe(s);
    for (const name of ['../../etc/passwd', '..', '.', '', 'CON', 'a\\b', EVIL, 'x'.repeat(500), 'ünïcødé/名前', '/', '-.-']) {
      const slug = serverSlug(name);
      expect(slug, name).toMatch(/^[a-z0-9][a-z0-9.-]*-[0-9a-f]{12}$/);
      expect(slug, name).not.toContain('..');
      expect(slug.length, name).toBeLessThanOrEqual(73);
    }
    const names = ['a/b', 'a-b', 'A/B', 'a b', 'a__b'];
    expect(new Set(names.map(serverSlug)).size).toBe(names.length);
  });
});

describe('diffRecords', () => {
  const crash = finding({ tool: 'a', messageId: 'internal-error' });
  const accepted = finding({ tool: 'b', messageId: 'accepted' });
  const kept = finding({ checkId: 'tool-schemas', messageId: 'no-description', tool: 'a', level: 'fail' });
  const older = rec({ version: '1.0.0', report: report([check('robust-input', 'partial', [crash]), check('tool-schemas', 'fail', [kept]), check('gone', 'pass')]) });
  const newer = rec({ version: '1.1.0', report: report([check('robust-input', 'partial', [accepted]), check('tool-schemas', 'fail', [kept]), check('annotations', 'pass', [], 'design')]) });

  it('lists new and fixed findings by fingerprint, the unchanged count, and checks whose verdict changed', () => {
    const d = diffRecords(older, newer);
    expect(d.findings!.new.map((f) => f.fingerprint)).toEqual(['robust-input/accepted/b']);
    expect(d.findings!.fixed.map((f) => f.fingerprint)).toEqual(['robust-input/internal-error/a']);
    expect(d.findings!.unchanged).toBe(1);
    expect(d.checks).toEqual([
      { id: 'annotations', title: 'title of annotations', pack: 'design', from: null, to: 'pass' },
      { id: 'gone', title: 'title of gone', pack: 'core', from: 'pass', to: null },
    ]);
    expect(d.sameRuler).toBe(true);
    expect(d.older.version).toBe('1.0.0');
    expect(d.newer.letter).toBe('B');
  });

  it('is pure and gives the reverse when reversed', () => {
    const before = JSON.stringify([older, newer]);
    const d = diffRecords(newer, older);
    expect(JSON.stringify([older, newer])).toBe(before);
    expect(d.findings!.new.map((f) => f.fingerprint)).toEqual(['robust-input/internal-error/a']);
    expect(d.findings!.fixed.map((f) => f.fingerprint)).toEqual(['robust-input/accepted/b']);
  });

  it('names a changed verdict and a changed ruler', () => {
    const worse = rec({ version: '1.2.0', ruler: OLD_RULER, report: report([check('robust-input', 'fail', [crash, accepted]), check('tool-schemas', 'fail', [kept])]) });
    const d = diffRecords(newer, worse);
    expect(d.sameRuler).toBe(false);
    expect(d.checks.find((c) => c.id === 'robust-input')).toMatchObject({ from: 'partial', to: 'fail' });
    expect(d.findings!.new.map((f) => f.fingerprint)).toEqual(['robust-input/internal-error/a']);
  });

  it('compares no findings when a record has no report, and says why; a not-audited newer report fixes nothing', () => {
    const timeout = rec({ version: '1.2.0', outcome: 'timeout', report: null });
    const d = diffRecords(newer, timeout);
    expect(d.findings).toBeNull();
    expect(d.why).toContain('1.2.0 (timeout)');
    expect(d.newer.letter).toBeNull();
    const handshake = rec({ version: '1.2.0', outcome: 'handshake', report: report([check('handshake', 'fail'), check('robust-input', 'n/a')], 'not-audited') });
    expect(diffRecords(newer, handshake).findings!.fixed).toEqual([]);
  });
});

describe('badgeSvg', () => {
  it('says the letter in its colour, or the outcome word in grey; never an F for an outcome', () => {
    expect(badgeValue(rec({}))).toEqual({ text: 'B', colour: '#97ca00' });
    expect(badgeValue(rec({ grade: { letter: 'F', percent: 12 } }))).toEqual({ text: 'F', colour: '#e05d44' });
    expect(badgeValue(rec({ grade: { letter: null, percent: null } }))).toEqual({ text: 'n/a', colour: '#9f9f9f' });
    for (const o of ['needs-config', 'fetch-failed', 'fails-offline', 'auth-gated', 'not-runnable', 'timeout', 'handshake'] as const) {
      expect(badgeValue(rec({ outcome: o }))).toEqual({ text: o, colour: '#9f9f9f' });
      expect(badgeSvg('x', rec({ outcome: o }))).toContain(`>${o}</text>`);
    }
  });

  it('says `list only` after the letter of a remote whose tools were not called, on the badge, the board and the server page', () => {
    const remote = rec({ server: 'io.example/hosted', target: { kind: 'remote', entry: 'remotes[0]', label: 'https://example.com/mcp' }, listOnly: true });
    expect(badgeValue(remote)).toEqual({ text: 'B list only', colour: '#97ca00' });
    expect(badgeSvg('x', remote)).toContain('>B list only</text>');
    const { index, views } = buildBoard([remote, rec({})], '2026-12-03T00:00:00.000Z');
    expect(index.servers.flatMap((s) => s.latest.map((e) => [s.server, e.listOnly]))).toEqual(
      expect.arrayContaining([
        ['io.example/hosted', true],
        ['io.github.example/weather', false],
      ]),
    );
    const board = renderLeaderboard(index);
    expect(board.match(/class="tag list-only"/g)).toHaveLength(1);
    const page = renderServerPage(views.find((v) => v.entry.server === 'io.example/hosted')!, index);
    expect(page).toContain('class="tag list-only"');
  });

  it('is deterministic, escapes the server name, and references nothing outside itself', () => {
    const svg = badgeSvg(EVIL, rec({}));
    expect(svg).toBe(badgeSvg(EVIL, rec({})));
    expect(svg).not.toContain('<img');
    expect(svg).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    // Only the SVG namespace and in-document references (#s, #r): no href, no external URL.
    expect(svg.match(/https?:\/\/[^"]*/g)).toEqual(['http://www.w3.org/2000/svg']);
    expect(svg).not.toMatch(/href/);
    // Tags balance (a cheap well-formedness check; the e2e test parses it in Chromium).
    const open = (svg.match(/<(?!\/)[a-zA-Z][^>]*[^/]>/g) ?? []).length;
    const close = (svg.match(/<\/[a-zA-Z]+>/g) ?? []).length;
    expect(open).toBe(close);
    // Wider text, wider badge.
    const w = (s: string) => Number(/width="(\d+)"/.exec(s)![1]);
    expect(w(badgeSvg('x', rec({ outcome: 'needs-config' })))).toBeGreaterThan(w(badgeSvg('x', rec({}))));
  });
});

describe('the index and pages', () => {
  const records = [
    rec({ server: 'b.example/two', version: '2.0.0', grade: { letter: 'A', percent: 95 }, packs: { core: 100, effects: 90 } }),
    rec({ server: 'b.example/two', version: '1.0.0', ruler: OLD_RULER, grade: { letter: 'C', percent: 72 }, finishedAt: '2026-11-01T00:00:00.000Z' }),
    rec({ server: 'a.example/one', version: '0.1.0', outcome: 'needs-config', reason: `needs WEATHER_KEY ${EVIL}` }),
    rec({ server: EVIL, version: `1.0.0${EVIL}`, grade: { letter: 'D', percent: 61 }, packs: { core: 61, legacy: 3 } }),
  ];

  it('builds a versioned index: latest per target, history newest first, counts, packs with an older ruler\'s extra', () => {
    const { index } = buildBoard(records, '2026-12-03T00:00:00.000Z');
    expect(index.schemaVersion).toBe(BOARD_SCHEMA_VERSION);
    expect(index.servers.map((s) => s.server)).toEqual(['<img src=x onerror=alert(1)>', 'a.example/one', 'b.example/two'].sort((a, b) => a.localeCompare(b, 'en')));
    const two = index.servers.find((s) => s.server === 'b.example/two')!;
    expect(two.latest).toHaveLength(1);
    expect(two.latest[0]).toMatchObject({ version: '2.0.0', outcome: 'graded', reason: null, grade: { letter: 'A', percent: 95 }, ruler: RULER, page: `servers/${two.slug}.html`, badge: `badges/${two.slug}.svg` });
    expect(two.history.map((h) => [h.version, h.ruler.sealmarkVersion])).toEqual([
      ['2.0.0', '0.2.0'],
      ['1.0.0', '0.1.0'],
    ]);
    expect(two.versions).toEqual(['1.0.0', '2.0.0']);
    const one = index.servers.find((s) => s.server === 'a.example/one')!;
    expect(one.latest[0]).toMatchObject({ outcome: 'needs-config', grade: null, packs: {}, reason: `needs WEATHER_KEY ${EVIL}` });
    expect(index.counts).toEqual({ graded: 2, 'needs-config': 1 });
    expect(index.packs).toEqual(['core', 'effects', 'limits', 'design', 'secrets', 'legacy']);
  });

  it('escapes every string from a record in the leaderboard; outcomes show their word and reason, after the grades', () => {
    const { index } = buildBoard(records, '2026-12-03T00:00:00.000Z');
    const page = renderLeaderboard(index as BoardIndex);
    expect(page).not.toContain('<img');
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;');
    const names = [...page.matchAll(/<tr data-name="([^"]*)"/g)].map((m) => m[1]);
    expect(names).toEqual(['b.example/two', '&lt;img src=x onerror=alert(1)&gt;', 'a.example/one']);
    expect(page).toMatch(/<span class="outcome" data-outcome="needs-config">needs-config<\/span><div class="reason">needs WEATHER_KEY &lt;img/);
    expect(page).not.toMatch(/data-outcome="needs-config"[^\n]*>F</);
    // Only the row graded under an older ruler says so (b.example/two's latest is under the newest).
    const tagged = page.split('\n').filter((l) => l.includes('older ruler</span>'));
    expect(tagged).toHaveLength(0);
    const withOld = renderLeaderboard(buildBoard([...records, rec({ server: 'c.example/legacy', ruler: OLD_RULER })], 'x').index);
    expect(withOld.split('<tr ').filter((r) => r.includes('older-ruler')).map((r) => /data-name="([^"]*)"/.exec(r)![1])).toEqual(['c.example/legacy']);
  });

  it('writes index.json, index.html, a page and a badge per server, and nothing else', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sealmark-board-unit-'));
    try {
      const { files } = writeLeaderboard(records, dir, { generatedAt: '2026-12-03T00:00:00.000Z' });
      expect(files).toHaveLength(2 + 3 * 2);
      expect(files[0]).toBe(join(dir, 'index.json'));
      expect(readdirSync(join(dir, 'servers'))).toHaveLength(3);
      expect(readdirSync(join(dir, 'badges'))).toHaveLength(3);
      const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as BoardIndex;
      for (const s of index.servers) {
        const page = readFileSync(join(dir, s.page), 'utf8');
        expect(page).not.toContain('<img');
        expect(page).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
      }
      // No records: an empty board, still valid.
      const empty = mkdtempSync(join(tmpdir(), 'sealmark-board-unit-'));
      try {
        expect(writeLeaderboard([], empty).files.map((f) => f.slice(empty.length + 1))).toEqual(['index.json', 'index.html']);
        expect(JSON.parse(readFileSync(join(empty, 'index.json'), 'utf8'))).toMatchObject({ schemaVersion: BOARD_SCHEMA_VERSION, servers: [], counts: {} });
      } finally {
        rmSync(empty, { recursive: true, force: true });
      }
      // The same records give the same files.
      const again = mkdtempSync(join(tmpdir(), 'sealmark-board-unit-'));
      try {
        writeLeaderboard([...records].reverse(), again, { generatedAt: '2026-12-03T00:00:00.000Z' });
        for (const f of files) expect(readFileSync(f.replace(dir, again), 'utf8'), f).toBe(readFileSync(f, 'utf8'));
      } finally {
        rmSync(again, { recursive: true, force: true });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
