/**
 * The fleet leaderboard in a real browser (issue 16, "History and diffs"): records wrapped around
 * REAL reports, from audits of fixture servers through the library (two releases of
 * fleet-weather.mjs whose findings differ, the demo server, many-tools.mjs, and empty-tools.mjs,
 * whose 0 tools are a `handshake` outcome), plus an old ruler's record and records that never got
 * a report (`needs-config` with a hostile server name and reason, `timeout`). writeLeaderboard
 * writes them into a temporary folder (removed after), opened from file:// URLs in Chromium
 * (playwright-core, the Debian /usr/bin/chromium): sorting by a click works, outcomes show their
 * word and reason and sort apart from grades, a server page shows its history and its diff (a
 * fingerprint fixed, another new), badges parse as SVG, nothing a stranger wrote runs, and no
 * request leaves the pages (every request is routed; any but a file: URL fails the test).
 *
 * Without /usr/bin/chromium the suite is skipped, unless SEALMARK_REQUIRE_BROWSER=1 (CI), where
 * it fails.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit } from '../../src/index.js';
import { writeLeaderboard, type BoardIndex } from '../../src/fleet/board.js';
import type { FleetOutcome, FleetRecord, Ruler } from '../../src/fleet/types.js';
import type { Report } from '../../src/report/build.js';
import { METHODOLOGY_VERSION, VERSION } from '../../src/version.js';
import { fixture, root } from '../helpers/run.js';

const CHROMIUM = '/usr/bin/chromium';
const HAVE_BROWSER = existsSync(CHROMIUM);
const REQUIRE_BROWSER = process.env.SEALMARK_REQUIRE_BROWSER === '1';
const TITLE = HAVE_BROWSER
  ? 'fleet leaderboard in a real browser'
  : `fleet leaderboard in a real browser (no ${CHROMIUM}: skipped, or failed with SEALMARK_REQUIRE_BROWSER=1)`;

const RULER: Ruler = { sealmarkVersion: VERSION, methodologyVersion: METHODOLOGY_VERSION };
/** An older ruler: the same report, as an earlier sealmark would have stamped it. */
const OLD_RULER: Ruler = { sealmarkVersion: '0.0.9', methodologyVersion: '0' };
const WEATHER = 'io.github.example/weather';
const EVIL = '<img src=x onerror=alert(1)>';
/** Screenshots for a person to look at (not asserted on), as the HTML report's test leaves them. */
const OUT = join(root, 'test-output');

let seq = 0;
/** A record as the fleet runner keeps it, around a real report (or none). */
function record(server: string, version: string | null, outcome: FleetOutcome, report: Report | null, over: Partial<FleetRecord> = {}): FleetRecord {
  const graded = outcome === 'graded';
  return {
    jobId: `job-${++seq}`,
    server,
    version,
    target: { kind: 'package', entry: 'packages[0]', label: `npm ${server}@${version ?? ''}` },
    ruler: RULER,
    outcome,
    reason: graded ? null : `reason for ${outcome}`,
    grade: graded && report ? { letter: report.grade.letter, percent: report.grade.percent } : null,
    packs: graded && report ? Object.fromEntries(report.grade.packs.map((p) => [p.pack, p.percent])) : {},
    finishedAt: new Date(Date.UTC(2026, 11, 1, 10, seq)).toISOString(),
    durationMs: report?.durationMs ?? 0,
    attempts: 1,
    report,
    ...over,
  };
}

/** Audits a fixture (or the demo) with the default config, one instance. */
function auditOf(file: string, args: string[] = []): Promise<Report> {
  return audit({ command: process.execPath, args: [file, ...args], config: {}, cwd: root });
}

describe.skipIf(!HAVE_BROWSER && !REQUIRE_BROWSER)(TITLE, () => {
  let browser: Browser | undefined;
  let context: BrowserContext;
  let dir: string;
  let index: BoardIndex;
  let records: FleetRecord[];
  /** Requests that were not for a file: URL (aborted), and those that were. */
  const outside: string[] = [];
  const inside: string[] = [];
  const errors: string[] = [];
  const dialogs: string[] = [];

  beforeAll(async () => {
    if (!HAVE_BROWSER) throw new Error(`SEALMARK_REQUIRE_BROWSER=1 but there is no browser at ${CHROMIUM} (apt-get install chromium)`);
    dir = mkdtempSync(join(tmpdir(), 'sealmark-board-test-'));
    mkdirSync(OUT, { recursive: true });
    const launching = chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    // Two at a time: the machine has two cores.
    const [w1, w2] = await Promise.all([auditOf(fixture('fleet-weather.mjs'), ['--release', '1']), auditOf(fixture('fleet-weather.mjs'), ['--release', '2'])]);
    const [demo, many] = await Promise.all([auditOf(join(root, 'demo', 'server.mjs')), auditOf(fixture('many-tools.mjs'))]);
    const empty = await auditOf(fixture('empty-tools.mjs'));
    browser = await launching;
    for (const r of [w1, w2, demo, many]) expect(r.status).toBe('audited');
    expect(empty.status).toBe('not-audited');
    records = [
      record(WEATHER, '1.0.0', 'graded', w1, { ruler: OLD_RULER, finishedAt: '2026-11-01T00:00:00.000Z' }),
      record(WEATHER, '1.0.0', 'graded', w1),
      record(WEATHER, '2.0.0', 'graded', w2),
      record('io.github.sealmark/demo', '0.1.0', 'graded', demo),
      record('io.github.example/many-tools', '3.1.0', 'graded', many),
      record('io.github.example/empty', '1.0.0', 'handshake', empty, { reason: 'tools/list returned no tools' }),
      record(EVIL, '1.0.0', 'needs-config', null, { reason: `needs API_KEY ${EVIL}` }),
      record('io.github.example/slow', null, 'timeout', null, { reason: 'the job deadline (300 s) ended it', target: { kind: 'launch-line', entry: 'line 3', label: 'npx -y slow-mcp' } }),
    ];
    writeLeaderboard(records, dir, { generatedAt: '2026-12-03T08:00:00.000Z' });
    index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as BoardIndex;
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file:')) {
        inside.push(url);
        return route.continue();
      }
      outside.push(url);
      return route.abort();
    });
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function open(rel: string): Promise<Page> {
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`${rel}: console: ${m.text()}`);
    });
    page.on('pageerror', (e) => errors.push(`${rel}: pageerror: ${e.message}`));
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(pathToFileURL(join(dir, rel)).href, { waitUntil: 'load' });
    return page;
  }

  /** The rows of the leaderboard as the page orders them now. */
  async function rows(page: Page): Promise<{ name: string; outcome: string; grade: number | null; core: number | null }[]> {
    return page.locator('#board tbody tr').evaluateAll((trs) =>
      trs.map((tr) => {
        const n = (k: string): number | null => (tr.getAttribute(k) ? Number(tr.getAttribute(k)) : null);
        return { name: tr.getAttribute('data-name')!, outcome: tr.getAttribute('data-outcome')!, grade: n('data-grade'), core: n('data-p0') };
      }),
    );
  }

  it('the leaderboard sorts by grade, pack, outcome and name with a click; outcomes show their word and reason, apart from grades', async () => {
    const page = await open('index.html');
    const graded = records.filter((r) => r.outcome === 'graded' && r.ruler === RULER && !(r.server === WEATHER && r.version === '1.0.0'));
    const percents = graded.map((r) => r.grade!.percent!);
    expect(new Set(percents).size, 'the fixtures give distinct grades').toBeGreaterThan(1);
    const others = ['handshake', 'needs-config', 'timeout'];

    // Served sorted by grade, best first; outcomes after the grades.
    let now = await rows(page);
    const served = now;
    expect(now).toHaveLength(graded.length + others.length);
    const n = graded.length;
    expect(now.map((r) => r.grade).slice(0, n)).toEqual([...percents].sort((a, b) => b - a));
    expect(now.slice(n).map((r) => r.outcome)).toEqual(others);
    expect(await page.locator('th[data-sort="grade"]').getAttribute('aria-sort')).toBe('descending');

    await page.locator('th[data-sort="grade"] button').click();
    expect(await page.locator('th[data-sort="grade"]').getAttribute('aria-sort')).toBe('ascending');
    now = await rows(page);
    expect(now.map((r) => r.grade).slice(0, n)).toEqual([...percents].sort((a, b) => a - b));
    expect(now.slice(n).map((r) => r.outcome), 'outcomes stay apart from grades').toEqual(others);

    await page.locator('th[data-sort="grade"] button').click();
    now = await rows(page);
    expect(now.map((r) => r.grade).slice(0, n)).toEqual([...percents].sort((a, b) => b - a));
    // The script's order is the served one, ties and outcomes included.
    expect(now).toEqual(served);

    // A pack column: core percent, best first, then the rows without one.
    expect(await page.locator('th[data-sort="p0"] button').textContent()).toBe('core');
    await page.locator('th[data-sort="p0"] button').click();
    now = await rows(page);
    const cores = graded.map((r) => r.packs.core!);
    expect(now.slice(0, n).map((r) => r.core)).toEqual([...cores].sort((a, b) => b - a));
    expect(now.slice(n).every((r) => r.core === null)).toBe(true);

    await page.locator('th[data-sort="outcome"] button').click();
    expect((await rows(page)).map((r) => r.outcome)).toEqual([...graded.map(() => 'graded'), ...others]);

    await page.locator('th[data-sort="name"] button').click();
    const names = (await rows(page)).map((r) => r.name);
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b, 'en')));
    await page.locator('th[data-sort="name"] button').click();
    expect((await rows(page)).map((r) => r.name)).toEqual([...names].reverse());

    // Outcomes: their word and reason, never a letter.
    for (const r of records.filter((x) => x.outcome !== 'graded')) {
      const row = page.locator('#board tbody tr', { has: page.locator('td.name a', { hasText: r.server }) });
      expect(await row.count(), r.server).toBe(1);
      expect((await row.locator('.grade-cell .outcome').textContent())?.trim()).toBe(r.outcome);
      expect((await row.locator('.grade-cell .reason').textContent())?.trim()).toBe(r.reason);
      expect(await row.locator('.letter').count()).toBe(0);
    }
    // Counts per outcome, over the latest records.
    expect(await page.locator('#counts .count[data-outcome="graded"] b').textContent()).toBe(String(n));
    for (const o of others) expect(await page.locator(`#counts .count[data-outcome="${o}"] b`).textContent()).toBe('1');

    // The hostile name is text: no image, no script ran.
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('#board td.name a', { hasText: EVIL }).count()).toBe(1);

    await page.screenshot({ path: join(OUT, 'fleet-board.png'), fullPage: true });
    // Each row links to its server page.
    const weather = index.servers.find((s) => s.server === WEATHER)!;
    await page.locator('#board td.name a', { hasText: WEATHER }).click();
    await page.waitForURL(/servers\//);
    expect(page.url()).toBe(pathToFileURL(join(dir, weather.page)).href);
    expect(await page.locator('#server-name').textContent()).toBe(WEATHER);
    await page.close();
  });

  it('a server page shows its latest report, its history across versions and rulers, and the diff by check and fingerprint', async () => {
    const weather = index.servers.find((s) => s.server === WEATHER)!;
    const page = await open(weather.page);
    const [w1, , w2] = records;

    // History: newest first, both rulers.
    const history = await page.locator('#history-table tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-version'), tr.querySelector('.ruler')!.textContent]));
    expect(history).toEqual([
      ['2.0.0', `sealmark ${VERSION} · methodology ${METHODOLOGY_VERSION}`],
      ['1.0.0', `sealmark ${VERSION} · methodology ${METHODOLOGY_VERSION}`],
      ['1.0.0', 'sealmark 0.0.9 · methodology 0'],
    ]);

    // The diff from 1.0.0 to 2.0.0: forecast's crash fixed, alerts' acceptance new (by fingerprint).
    const fp = (r: FleetRecord, check: string, messageId: string, tool: string) =>
      r.report!.checks.find((c) => c.id === check)!.findings.find((f) => f.messageId === messageId && f.tool === tool)!.fingerprint;
    const fixed = fp(w1!, 'robust-input', 'internal-error', 'forecast');
    const added = fp(w2!, 'robust-input', 'accepted', 'alerts');
    expect(await page.locator(`#diff-fixed li[data-fingerprint="${fixed}"]`).count()).toBe(1);
    expect(await page.locator(`#diff-new li[data-fingerprint="${added}"]`).count()).toBe(1);
    expect(await page.locator(`#diff-new li[data-fingerprint="${fixed}"]`).count()).toBe(0);
    expect(await page.locator('#diff-new li[data-fingerprint]').evaluateAll((els) => els.map((e) => e.getAttribute('data-fingerprint')))).toContain(added);
    expect(await page.locator('#diff-summary').textContent()).toMatch(/\d+ new · \d+ fixed · \d+ unchanged/);
    expect(await page.locator('#diff .from').textContent()).toContain('1.0.0');
    expect(await page.locator('#diff .to').textContent()).toContain('2.0.0');
    expect(await page.locator('#diff-ruler').count(), 'same ruler').toBe(0);
    // By check: release 2's ping states no annotations, so annotations went from pass to partial.
    const before = w1!.report!.checks.find((c) => c.id === 'annotations')!.verdict;
    const after = w2!.report!.checks.find((c) => c.id === 'annotations')!.verdict;
    expect([before, after]).toEqual(['pass', 'partial']);
    const changed = page.locator('#diff-checks tr[data-check="annotations"]');
    expect(await changed.locator('.verdict').allTextContents()).toEqual(['pass', 'partial']);
    const verdictChanges = w2!.report!.checks.filter((c) => w1!.report!.checks.find((x) => x.id === c.id)?.verdict !== c.verdict).map((c) => c.id);
    expect(await page.locator('#diff-checks tbody tr').evaluateAll((trs) => trs.map((t) => t.getAttribute('data-check')))).toEqual(verdictChanges);
    expect(await page.locator(`#diff-new li[data-fingerprint="${fp(w2!, 'annotations', 'no-read-only-hint', 'ping')}"]`).count()).toBe(1);

    await page.screenshot({ path: join(OUT, 'fleet-board-server.png'), fullPage: false });
    // The latest report, drawn by the HTML reporter: its grade and a finding that opens.
    expect((await page.locator('#grade-letter').textContent())?.trim()).toBe(w2!.grade!.letter);
    const d = page.locator('details.finding[data-check="robust-input"][data-message-id="accepted"][data-tool="alerts"]');
    expect(await d.count()).toBe(1);
    await d.locator('summary').click();
    expect(await d.locator('pre.request').isVisible()).toBe(true);
    // The badge, inline.
    expect(await page.locator('.badge-line svg text').last().textContent()).toBe(w2!.grade!.letter);
    await page.close();
  });

  it('a handshake outcome shows its word, reason and evidence, never an F; a record without a report says so', async () => {
    const empty = index.servers.find((s) => s.server === 'io.github.example/empty')!;
    let page = await open(empty.page);
    expect(await page.locator('#outcome h2').textContent()).toBe('handshake');
    expect(await page.locator('#outcome').textContent()).toContain('tools/list returned no tools');
    expect((await page.locator('#grade-letter').textContent())?.trim()).toBe('–');
    expect(await page.locator('#not-audited').isVisible()).toBe(true);
    expect(await page.locator('.letter', { hasText: /^F$/ }).count()).toBe(0);
    await page.close();

    const evil = index.servers.find((s) => s.server === EVIL)!;
    page = await open(evil.page);
    expect(await page.locator('#server-name').textContent()).toBe(EVIL);
    expect(await page.locator('#outcome').textContent()).toContain(`needs API_KEY ${EVIL}`);
    expect(await page.locator('#report').textContent()).toContain('no report');
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('.badge-line svg title').textContent()).toBe(`sealmark: ${EVIL}: needs-config`);
    await page.close();
  });

  it('badges are SVG documents: the letter, or the outcome word', async () => {
    for (const s of index.servers) {
      const page = await open(s.badge);
      const root = await page.evaluate(() => ({ ns: document.documentElement.namespaceURI, name: document.documentElement.localName, texts: [...document.querySelectorAll('text')].map((t) => t.textContent), parseError: document.querySelector('parsererror') !== null }));
      expect(root.parseError, s.server).toBe(false);
      expect(root).toMatchObject({ ns: 'http://www.w3.org/2000/svg', name: 'svg' });
      const latest = s.latest[0]!;
      expect(root.texts[3], s.server).toBe(latest.outcome === 'graded' ? (latest.grade!.letter ?? 'n/a') : latest.outcome);
      expect(root.texts[1]).toBe('sealmark');
      await page.close();
    }
  });

  it('made no request but for its own files, logged no error, and ran nothing a stranger wrote', () => {
    expect(outside).toEqual([]);
    // The route saw every page (the check is not vacuous): each file once per open, nothing more.
    expect(inside.length).toBeGreaterThanOrEqual(4 + index.servers.length);
    expect(inside.every((u) => u.startsWith(pathToFileURL(dir).href))).toBe(true);
    expect(errors).toEqual([]);
    expect(dialogs).toEqual([]);
  });
});
