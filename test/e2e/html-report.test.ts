/**
 * The HTML report (SPEC section 8) in a real browser: a real report from `node bin/sealmark.js
 * audit --demo --format json`, rendered by renderHtml and opened from a file:// URL in Chromium
 * (playwright-core, the Debian /usr/bin/chromium). It must load with no errors and no request but
 * the file itself, show the grade and every pack, expand a finding with a click, and render what a
 * server sent as text, never as markup. Needs a built dist/ (`npm test` builds before vitest).
 *
 * Without /usr/bin/chromium the suite is skipped, unless SEALMARK_REQUIRE_BROWSER=1 (CI), where
 * it fails.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from '../helpers/run.js';
import { runCli } from '../helpers/cli.js';
import type { Report } from '../../src/report/build.js';
import { renderHtml } from '../../src/report/reporters/html.js';
import { capLowered } from '../../src/scoring.js';

const CHROMIUM = '/usr/bin/chromium';
const HAVE_BROWSER = existsSync(CHROMIUM);
const REQUIRE_BROWSER = process.env.SEALMARK_REQUIRE_BROWSER === '1';
const OUT = join(root, 'test-output');

const TITLE = HAVE_BROWSER
  ? 'html report in a real browser'
  : `html report in a real browser (no ${CHROMIUM}: skipped, or failed with SEALMARK_REQUIRE_BROWSER=1)`;

interface Loaded {
  page: Page;
  url: string;
  /** Console errors and page errors, as text. */
  errors: string[];
  /** Every URL the page requested. */
  requests: string[];
}

describe.skipIf(!HAVE_BROWSER && !REQUIRE_BROWSER)(TITLE, () => {
  let browser: Browser | undefined;
  let report: Report;
  let tmp: string;

  beforeAll(async () => {
    if (!HAVE_BROWSER) throw new Error(`SEALMARK_REQUIRE_BROWSER=1 but there is no browser at ${CHROMIUM} (apt-get install chromium)`);
    if (!existsSync(join(root, 'dist', 'cli.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test builds first)');
    tmp = mkdtempSync(join(tmpdir(), 'sealmark-html-test-'));
    mkdirSync(OUT, { recursive: true });
    const [audit, launched] = await Promise.all([
      runCli(['audit', '--demo', '--format', 'json', '--output', join(tmp, 'r.json')], { stdin: 'ignore' }),
      chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      }),
    ]);
    browser = launched;
    // 0 or 1 (graded, or graded below --fail-under); 2 and 3 are a broken run.
    expect([0, 1], audit.stderr).toContain(audit.code);
    report = JSON.parse(readFileSync(join(tmp, 'r.json'), 'utf8')) as Report;
  });

  afterAll(async () => {
    await browser?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  /** Writes `html` to test-output/<name> and opens it, recording errors and requests. */
  async function load(name: string, html: string): Promise<Loaded> {
    const file = join(OUT, name);
    writeFileSync(file, html);
    const url = pathToFileURL(file).href;
    const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    const requests: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(url, { waitUntil: 'load' });
    return { page, url, errors, requests };
  }

  it('renders the demo report: grade, packs, a finding that opens with a click, no network, no errors', async () => {
    const { page, url, errors, requests } = await load('report.html', renderHtml(report));

    expect(report.grade.letter).not.toBeNull();
    expect((await page.locator('#grade-letter').textContent())?.trim()).toBe(report.grade.letter);
    expect(await page.locator('#grade-letter').isVisible()).toBe(true);
    expect((await page.locator('#grade-percent').textContent())?.trim()).toBe(`${report.grade.percent}%`);

    for (const ps of report.grade.packs) {
      const card = page.locator(`.packs .card[data-pack="${ps.pack}"]`);
      expect(await card.count(), ps.pack).toBe(1);
      expect((await card.locator('.card-grade').textContent())?.trim(), ps.pack).toBe(ps.letter ?? 'n/a');
    }
    // A cap line only where the cap lowered the grade (an F of 57.5 % is not "capped at D").
    for (const cap of report.grade.caps) expect(await page.locator('.cap', { hasText: cap.check }).count()).toBe(capLowered(report.grade, cap) ? 1 : 0);

    // Checks are grouped by pack with failures first, as in the text reporter.
    const verdicts = await page.locator('#pack-core .check').evaluateAll((els) => els.map((e) => e.getAttribute('data-verdict')));
    const rank = (v: string | null): number => ['fail', 'partial', 'pass', 'n/a'].indexOf(v ?? '');
    expect(verdicts.length).toBe(report.checks.filter((c) => c.pack === 'core').length);
    expect(verdicts.map(rank)).toEqual([...verdicts.map(rank)].sort((a, b) => a - b));

    const f = report.checks.find((c) => c.id === 'robust-input')!.findings.find((x) => x.messageId === 'internal-error' && x.tool === 'get_note')!;
    expect(f.level).not.toBe('info');
    expect(f.replay).toBeTruthy();
    expect(f.request).toBeTruthy();
    const details = page.locator('details.finding[data-check="robust-input"][data-message-id="internal-error"][data-tool="get_note"]');
    expect(await details.count()).toBe(1);
    const replay = details.locator('code.replay');
    const request = details.locator('pre.request');
    expect(await replay.isVisible()).toBe(false);
    await details.locator('summary').click();
    expect(await details.getAttribute('open')).not.toBeNull();
    expect(await replay.isVisible()).toBe(true);
    expect(await request.isVisible()).toBe(true);
    expect(await replay.textContent()).toBe(f.replay);
    expect(await request.textContent()).toBe(f.request);
    // The transcript excerpt: the finding's first calls, each with its request line.
    const shown = f.evidence.calls!.slice(0, 5);
    expect(await details.locator('.call').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-seq'))))).toEqual(shown);
    const first = report.calls.find((c) => c.seq === shown[0])!;
    expect(await details.locator(`.call[data-seq="${first.seq}"] pre.sent`).textContent()).toContain(first.request);
    // The script ran (CSP allows it by hash): the replay line got its copy button.
    expect(await details.locator('button.copy').count()).toBe(1);

    await page.screenshot({ path: join(OUT, 'html-report.png'), fullPage: true });
    const png = readFileSync(join(OUT, 'html-report.png'));
    expect(statSync(join(OUT, 'html-report.png')).size).toBeGreaterThan(0);
    expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);

    expect(errors).toEqual([]);
    expect(requests).toEqual([url]);
    await page.close();
  });

  it('renders what a server sent as text: no script runs, no element is injected', async () => {
    const SCRIPT = '<script>window.__pwned=1</script>';
    const IMG = '<img src=x onerror="window.__pwned=1">';
    const evil: Report = structuredClone(report);
    evil.tools[0]!.name = IMG;
    evil.coverage.tools[0]!.name = IMG;
    evil.protocol = { version: '2025-11-25', era: 'legacy', server: { name: `</script>${SCRIPT}`, version: IMG } };
    const ch = evil.checks.find((c) => c.findings.some((f) => f.level !== 'info'))!;
    const f = ch.findings.find((x) => x.level !== 'info')!;
    f.tool = IMG;
    f.message = `${IMG} says ${SCRIPT}`;
    f.evidence.quotes = [SCRIPT, IMG];
    f.replay = `sealmark call --tool '${IMG}' --args '{}' -- node ${SCRIPT}`;
    ch.notes.push(IMG);
    const call = evil.calls.find((c) => c.seq === f.evidence.calls?.[0]);
    if (call) call.reply = { kind: 'response', raw: { result: { content: [{ type: 'text', text: SCRIPT + IMG }] } } };
    evil.stderrTail = `${SCRIPT}\n${IMG}\n`;
    f.baselineState = 'new';
    evil.baseline = { file: IMG, generatedAt: evil.generatedAt, new: [], fixed: [{ fingerprint: 'x', checkId: ch.id, messageId: 'gone', level: 'fail', tool: IMG, message: SCRIPT }], unchanged: 0 };

    const html = renderHtml(evil);
    expect(html).not.toContain(SCRIPT);
    expect(html).not.toContain(IMG);

    const { page, url, errors, requests } = await load('report-escaping.html', html);
    const d = page.locator('details.finding').filter({ has: page.locator('summary', { hasText: 'says' }) }).first();
    await d.locator('summary').click();
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('script').count()).toBe(1);
    expect(await d.locator('summary').textContent()).toContain(`${IMG} says ${SCRIPT}`);
    expect(await page.locator('h1').textContent()).toContain(`</script>${SCRIPT} ${IMG}`);
    expect(await d.locator('code.replay').textContent()).toBe(f.replay);
    expect(await d.locator('summary .tag.new').isVisible()).toBe(true);
    expect(await page.locator('.baseline').textContent()).toContain(IMG);
    expect(await page.getByText(`${IMG} says ${SCRIPT}`).first().isVisible()).toBe(true);
    expect(errors).toEqual([]);
    expect(requests).toEqual([url]);
    await page.close();
  });

  it('shows a NOT AUDITED banner with the reason and no letter', async () => {
    const na: Report = structuredClone(report);
    na.status = 'not-audited';
    na.notAudited = { reason: 'exited-during-init', message: 'the server exited during initialize (code 1)', notChecked: na.checks.map((c) => c.id).filter((id) => id !== 'handshake') };
    na.grade = { packs: na.grade.packs.map((p) => ({ ...p, percent: null, letter: null, counted: 0 })), percent: null, letter: null, caps: [] };
    na.checks = na.checks.map((c) => ({ ...c, verdict: 'n/a', findings: [] }));
    na.stderrTail = 'Error: cannot find module <x>\n';
    const { page, errors, requests, url } = await load('report-not-audited.html', renderHtml(na));
    const banner = page.locator('#not-audited');
    expect(await banner.isVisible()).toBe(true);
    expect(await banner.textContent()).toContain('NOT AUDITED: exited-during-init');
    expect(await banner.textContent()).toContain('the server exited during initialize (code 1)');
    expect(await banner.textContent()).toContain('cannot find module <x>');
    expect((await page.locator('#grade-letter').textContent())?.trim()).toBe('–');
    expect(errors).toEqual([]);
    expect(requests).toEqual([url]);
    await page.close();
  });
});
