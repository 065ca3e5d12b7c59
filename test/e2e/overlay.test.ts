/**
 * The copy-on-write sandbox (SPEC section 3 step 1, issue 14) on a server pointed at the user's data
 * by absolute path, as published servers are: every write the server makes lands in the overlay and
 * is an effect with its real path and a short summary, and the user's files are byte-for-byte
 * unchanged afterwards. Where the overlay is not permitted (SEALMARK_NO_OVERLAY=1 simulates it), the
 * report says so and names what was not protected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { accessSync, constants, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { audit } from '../../src/audit.js';
import { configRegistry } from '../../src/config/defaults.js';
import { parseConfig } from '../../src/config/schema.js';
import { EFFECT_QUIET_MS, networkNamespaceAvailable } from '../../src/target/sandbox.js';
import type { Report } from '../../src/report/build.js';
import { checkOf, fixture, LATER_PACKS_OFF, root } from '../helpers/run.js';
import { hashes, makeData } from '../helpers/data.js';
import { collectOutput, runCli } from '../helpers/cli.js';

const ONLY_EFFECTS = { checks: { ...LATER_PACKS_OFF, 'robust-input': { enabled: false }, 'strict-arguments': { enabled: false }, 'protocol-errors': { enabled: false } } };
const linux = process.platform === 'linux' && networkNamespaceAvailable().ok;

const written = () => [...readdirSync('/tmp'), ...(existsSync('/srv') ? readdirSync('/srv') : [])].filter((n) => n.startsWith('sealmark-overlay-fixture-'));
/** Whether this user may write /srv (root may): then a hard-coded write there must be covered too. */
const srvWritable = (() => {
  try {
    accessSync('/srv', constants.W_OK);
    return true;
  } catch {
    return false;
  }
})();

describe.runIf(linux)('an audit of a server that writes to the user’s data by absolute path', () => {
  let data: string;
  let shm: string;
  let before: Record<string, string>;
  let shmBefore: Record<string, string>;
  let report: Report;

  beforeAll(async () => {
    data = makeData();
    shm = mkdtempSync('/dev/shm/overlay-test-shm-');
    writeFileSync(join(shm, 's.txt'), 'first\n');
    before = hashes(data);
    shmBefore = hashes(shm);
    const args = [fixture('overlay/data-writer.mjs'), '--data', data, '--shm', shm];
    report = await audit({ command: process.execPath, args, config: parseConfig(ONLY_EFFECTS, configRegistry()) });
  }, 60_000);
  afterAll(() => {
    rmSync(data, { recursive: true, force: true });
    rmSync(shm, { recursive: true, force: true });
  });

  it('ran with a copy-on-write filesystem over the temp folders, the home, the data (in /dev/shm too) and the writable top-level folders', () => {
    expect(report.sandbox.filesystem).toBe('overlay');
    expect(report.sandbox.protected).toEqual(expect.arrayContaining(['/tmp', shm, ...(srvWritable ? ['/srv'] : [])]));
    expect(report.sandbox.note).toContain('copy-on-write filesystem over /tmp');
  });

  it('sees each write with its real path and a summary, attributed to the call that made it', () => {
    const effects = Object.fromEntries(report.calls.filter((c) => c.probe === 'default-call').map((c) => [c.tool, c.effects]));
    expect(effects.append_note).toEqual([{ kind: 'file', detail: `changed ${data}/notes.txt`, summary: '11 → 34 bytes; first change at byte 11: "a note from the server\\n"' }]);
    expect(effects.write_tmp).toEqual([{ kind: 'file', detail: expect.stringMatching(/^created \/tmp\/sealmark-overlay-fixture-\d+\.txt$/), summary: '8 bytes' }]);
    expect(effects.delete_cache).toEqual([{ kind: 'file', detail: `removed ${data}/cache/old.bin`, summary: '4 bytes' }]);
    expect(effects.rotate_log).toEqual([{ kind: 'file', detail: `renamed ${data}/app.log → ${data}/app.log.1`, summary: '4 bytes' }]);
    expect(effects.unlink_link).toEqual([{ kind: 'file', detail: `removed ${data}/link`, summary: 'a link' }]);
    expect(effects.purge_tree).toEqual([{ kind: 'file', detail: `removed ${data}/tree`, summary: 'a folder with 2 files (a.txt, sub/b.txt)' }]);
    expect(effects.append_shm).toEqual([{ kind: 'file', detail: `changed ${shm}/s.txt`, summary: '6 → 15 bytes; first change at byte 6: "shm line\\n"' }]);
    if (srvWritable) expect(effects.write_srv).toEqual([{ kind: 'file', detail: expect.stringMatching(/^created \/srv\/sealmark-overlay-fixture-\d+\.txt$/), summary: '4 bytes' }]);
    // Begun 200 ms after the reply, when the call was settled: a late effect of its own call, read
    // once the writes settled (as the file it left), before the next call went out.
    expect(effects.save_atomic).toEqual([{ kind: 'file', detail: `created ${data}/state.json`, summary: '20 bytes', lateMs: expect.any(Number) }]);
    const lateOf = (tool: string) => report.calls.find((c) => c.probe === 'default-call' && c.tool === tool)!.effects![0]!.lateMs!;
    // (Late: after the call was settled, so at least the quiet period after the reply.)
    expect(lateOf('save_atomic')).toBeGreaterThanOrEqual(EFFECT_QUIET_MS);
    // A debounced save 400 ms after the reply: its own call's, late; the read-only tool called next wrote nothing.
    expect(effects.debounced_save).toEqual([{ kind: 'file', detail: `created ${data}/saved.json`, summary: '15 bytes', lateMs: expect.any(Number) }]);
    expect(lateOf('debounced_save')).toBeGreaterThanOrEqual(EFFECT_QUIET_MS);
    expect(effects.make_executable).toEqual([{ kind: 'file', detail: `changed ${data}/script.sh`, summary: 'mode 644 → 755' }]);
    expect(effects.promote_draft).toEqual([{ kind: 'file', detail: `renamed ${data}/draft.txt → ${data}/final.txt`, summary: '9 bytes, replacing the file that was there' }]);
    expect(effects.get_status).toEqual([]);
    // Each tool requires nothing and answered its {} call: a valid call, so each was exercised.
    expect(report.coverage.tools.every((t) => t.level === 'exercised')).toBe(true);
    const check = checkOf(report, 'default-call-effects');
    expect(check.verdict).toBe('fail');
    // (The notes name the places no overlay covers: the root, /run, /dev, and this machine's folders
    // that hold mounts, e.g. /mnt, with what was covered inside them.)
    expect(check.notes.every((n) => /^writes under \S+ were not seen( \(except under [^)]+, which the copy-on-write filesystem covered\))?: /.test(n))).toBe(true);
    // The data folder is covered wherever it lies.
    expect(check.notes.filter((n) => n.startsWith(`writes under ${data} `) || n.startsWith(`writes under ${dirname(data)} were not seen: `))).toEqual([]);
    expect(check.findings.map((f) => [f.tool, f.messageId, f.evidence.quotes])).toEqual([
      ['append_note', 'effect', [`changed ${data}/notes.txt`]],
      ['write_tmp', 'effect', [expect.stringMatching(/^created \/tmp\/sealmark-overlay-fixture-\d+\.txt$/)]],
      ['delete_cache', 'effect', [`removed ${data}/cache/old.bin`]],
      ['rotate_log', 'effect', [`renamed ${data}/app.log → ${data}/app.log.1`]],
      ['unlink_link', 'effect', [`removed ${data}/link`]],
      ['purge_tree', 'effect', [`removed ${data}/tree`]],
      ['append_shm', 'effect', [`changed ${shm}/s.txt`]],
      ...(srvWritable ? [['write_srv', 'effect', [expect.stringMatching(/^created \/srv\/sealmark-overlay-fixture-\d+\.txt$/)]]] : []),
      ['save_atomic', 'effect', [`created ${data}/state.json`]],
      ['debounced_save', 'effect', [`created ${data}/saved.json`]],
      ['make_executable', 'effect', [`changed ${data}/script.sh`]],
      ['promote_draft', 'effect', [`renamed ${data}/draft.txt → ${data}/final.txt`]],
    ]);
    expect(check.findings.find((f) => f.tool === 'debounced_save')!.message).toBe(`debounced_save: the {} call caused a side effect: file: created ${data}/saved.json (after the reply)`);
  });

  it('leaves the user’s files byte-for-byte unchanged, and writes nothing to the real /tmp or /srv', () => {
    expect(hashes(data)).toEqual(before);
    expect(hashes(shm)).toEqual(shmBefore);
    expect(written()).toEqual([]);
  });
});

describe.runIf(linux)('where the overlay is not permitted (SEALMARK_NO_OVERLAY=1)', () => {
  let data: string;
  let before: Record<string, string>;
  let report: Report;
  let allowed: Report;
  let allowedData: string;

  /** The report of `audit --only default-call-effects` of the data writer on `dir`, with `flags`, the overlay switched off. */
  const run = async (dir: string, flags: string[]): Promise<Report> => {
    const out = join(dir, '..', `${dir.split('/').pop()}-report.json`);
    const r = await runCli(['audit', '--only', 'default-call-effects', ...flags, '--format', 'json', '--output', out, '--', process.execPath, fixture('overlay/data-writer.mjs'), '--data', dir], { env: { SEALMARK_NO_OVERLAY: '1' } });
    expect(r.stderr).not.toMatch(/Error|at .*\.js:\d+/);
    const parsed = JSON.parse(readFileSync(out, 'utf8')) as Report;
    rmSync(out);
    return parsed;
  };

  beforeAll(async () => {
    data = makeData();
    before = hashes(data);
    report = await run(data, []);
    allowedData = makeData();
    allowed = await run(allowedData, ['--allow-effects']);
  }, 90_000);
  afterAll(() => {
    rmSync(data, { recursive: true, force: true });
    rmSync(allowedData, { recursive: true, force: true });
    // With --allow-effects the fixture's /tmp and /srv writes were real: remove them.
    for (const n of written()) for (const d of ['/tmp', '/srv']) rmSync(join(d, n), { force: true });
  });

  it('says the filesystem was not copy-on-write and why, naming every folder left open', () => {
    expect(report.sandbox.filesystem).toBe('scratch');
    expect(report.sandbox.protected).toEqual([]);
    expect(report.sandbox.unprotected).toContainEqual({ path: '/tmp', why: 'overlayfs is switched off (SEALMARK_NO_OVERLAY=1)' });
    expect(report.sandbox.note).toContain('no copy-on-write filesystem: overlayfs is switched off (SEALMARK_NO_OVERLAY=1); the server could change your files outside its scratch HOME and working directory, and only writes there were seen');
  });

  it('makes no call meant to write (the writes would be real): default-call-effects is n/a, saying why, and the files are unchanged', () => {
    expect(report.calls.filter((c) => c.probe === 'default-call')).toEqual([]);
    const check = checkOf(report, 'default-call-effects');
    expect(check.verdict).toBe('n/a');
    expect(check.notes).toContain("no copy-on-write filesystem (overlayfs is switched off (SEALMARK_NO_OVERLAY=1)), so the server's writes would be real and no --allow-effects: tools were not called with default or filler arguments");
    expect(hashes(data)).toEqual(before);
  });

  it('with --allow-effects the calls are made: the effects checks say which writes they could not see, and the writes were real', () => {
    expect(allowed.calls.filter((c) => c.probe === 'default-call').length).toBeGreaterThan(0);
    expect(checkOf(allowed, 'default-call-effects').notes).toContain('no copy-on-write filesystem: writes outside the scratch HOME and working directory were not seen (see the sandbox line)');
    expect(readFileSync(join(allowedData, 'notes.txt'), 'utf8')).toBe('first note\na note from the server\n');
    expect(existsSync(join(allowedData, 'app.log.1'))).toBe(true);
  });
});

describe.runIf(linux)('a tool that claims readOnlyHint: true and writes (lying-reader.mjs)', () => {
  /** The valid calls a read-only claim licenses, by probe (robust-input, strict-arguments, limits, oversized-input). */
  const VALID = ['read-only-no-args', 'empty-arguments', 'valid-arguments', 'extra-only'];
  const ONLY = 'robust-input,strict-arguments,bounded-limits,oversized-input';
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  /** A fresh data folder and the report of the four checks on lying-reader.mjs pointed at it, with `flags` and `env`. */
  const run = async (flags: string[], env: Record<string, string>): Promise<{ data: Report; dir: string }> => {
    const dir = mkdtempSync(join(tmpdir(), 'sealmark-overlay-liar-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'notes.txt'), 'first note\n');
    mkdirSync(join(dir, 'cache'));
    writeFileSync(join(dir, 'cache', 'old.bin'), 'bin\n');
    const out = `${dir}-report.json`;
    dirs.push(out);
    const r = await runCli(['audit', '--only', ONLY, ...flags, '--format', 'json', '--output', out, '--', process.execPath, fixture('overlay/lying-reader.mjs'), '--data', dir], { env });
    expect(r.stderr).not.toMatch(/Error|at .*\.js:\d+/);
    return { data: JSON.parse(readFileSync(out, 'utf8')) as Report, dir };
  };
  const sentValid = (r: Report) => r.calls.filter((c) => VALID.includes(c.probe) || (c.probe === 'no-arguments' && c.tool === 'get_stats')).map((c) => `${c.tool} ${c.probe}`);

  it('without the overlay, sends the read-only tools no valid call and the destructive one nothing: the user’s folder is unchanged and each check says why', async () => {
    const { data: report, dir } = await run([], { SEALMARK_NO_OVERLAY: '1' });
    expect(sentValid(report)).toEqual([]);
    expect(readdirSync(dir).sort()).toEqual(['cache', 'notes.txt']);
    expect(report.calls.filter((c) => c.tool === 'purge_cache')).toEqual([]);
    const guard = "it may write (it states no readOnlyHint: true), and no copy-on-write filesystem (overlayfs is switched off (SEALMARK_NO_OVERLAY=1)), so the server's writes would be real: a tool that acted on invalid input would change your files (--allow-effects sends these calls)";
    expect(checkOf(report, 'robust-input').findings.find((f) => f.tool === 'purge_cache')!.message).toBe(`purge_cache: not probed: ${guard}`);
    expect(checkOf(report, 'oversized-input').notes).toContain(`purge_cache: not probed: ${guard}`);
    const why = "no copy-on-write filesystem (overlayfs is switched off (SEALMARK_NO_OVERLAY=1)), so the server's writes would be real; readOnlyHint is only a claim, so no valid call relies on it without --allow-effects";
    expect(checkOf(report, 'robust-input').findings.find((f) => f.tool === 'get_stats')!.message).toBe(`get_stats: not probed: its only call would be the valid read-only-no-args, not sent: ${why}`);
    expect(checkOf(report, 'strict-arguments').findings.filter((f) => f.messageId === 'not-judged').map((f) => f.message)).toEqual([
      `get_stats: not judged: a valid call to this read-only tool was not sent: ${why}`,
      `purge_cache: not judged: not sent: ${guard}`,
    ]);
    // search requires query: its call without `arguments` is invalid, so it is sent; extra-only is not.
    expect(report.calls.filter((c) => c.tool === 'search' && c.probe.startsWith('no-arguments')).length).toBe(1);
    expect(checkOf(report, 'oversized-input').notes).toContain(`search: oversized-string not sent: the schema admits it, and ${why}`);
    // The invalid probes still went out, and were refused before any write.
    expect(report.calls.filter((c) => c.tool === 'search' && c.probe === 'wrong-types')).toHaveLength(1);
  }, 60_000);

  it('with the overlay, sends them all, and the writes land in the overlay only', async () => {
    const { data: report, dir } = await run([], {});
    expect(report.sandbox.filesystem).toBe('overlay');
    expect(sentValid(report)).toEqual(expect.arrayContaining(['get_stats read-only-no-args', 'get_stats empty-arguments', 'get_stats no-arguments', 'search valid-arguments', 'search extra-only']));
    // purge_cache acted on invalid input: robust-input says so, the overlay saw the removal, the real cache is there.
    const missing = report.calls.find((c) => c.tool === 'purge_cache' && c.probe === 'missing-required')!;
    expect(missing.class).toBe('accepted');
    expect(missing.effects?.map((e) => e.detail)).toEqual([`removed ${dir}/cache`]);
    expect(readdirSync(dir).sort()).toEqual(['cache', 'notes.txt']);
  }, 60_000);

  it('without the overlay but with --allow-effects, sends them, and the writes are real', async () => {
    const { data: report, dir } = await run(['--allow-effects'], { SEALMARK_NO_OVERLAY: '1' });
    expect(sentValid(report)).toEqual(expect.arrayContaining(['get_stats read-only-no-args', 'search valid-arguments']));
    // purge_cache removed the real cache on invalid input.
    expect(readdirSync(dir).sort()).toEqual(['history.log', 'notes.txt', 'stats.log']);
  }, 60_000);
});

describe.runIf(linux)('one call that writes thousands of files (many-files.mjs)', () => {
  let data: string;
  let report: Report;
  beforeAll(async () => {
    data = mkdtempSync(join(tmpdir(), 'sealmark-overlay-many-'));
    const args = [fixture('overlay/many-files.mjs'), '--data', data, '--n', '6000'];
    report = await audit({ command: process.execPath, args, config: parseConfig(ONLY_EFFECTS, configRegistry()) });
  }, 60_000);
  afterAll(() => rmSync(data, { recursive: true, force: true }));

  it('is one finding for the export’s files (the first three quoted) and one saying the snapshot stopped at 5000 entries', () => {
    const check = checkOf(report, 'default-call-effects');
    expect(check.verdict).toBe('fail');
    // The 5000 entries read hold the folders from the overlaid folder down to out/, then files.
    const layer = report.sandbox.protected.filter((p) => data.startsWith(p + '/')).sort((x, y) => y.length - x.length)[0]!;
    // (and save_note's notes/ folder and file, written first).
    const files = 5000 - relative(layer, join(data, 'out')).split('/').length - 2;
    const messages = check.findings.map((f) => f.message);
    expect(messages).toEqual([
      `save_note: the {} call caused a side effect: file: created ${data}/notes/n.txt`,
      'export_all: the {} call caused a side effect: file: wrote more than 5000 files and folders: sealmark compares that many, so writes after them may be missed',
      `export_all: the {} call caused a side effect: file: ${files} changes: created ${data}/out/f0.txt, created ${data}/out/f1.txt, created ${data}/out/f10.txt and ${files - 3} more (every one is in the call's effects)`,
    ]);
    expect(check.findings[2]!.evidence.quotes).toEqual([`created ${data}/out/f0.txt`, `created ${data}/out/f1.txt`, `created ${data}/out/f10.txt`, `… and ${files - 3} more`]);
    // The call keeps every effect it was given.
    const call = report.calls.find((c) => c.probe === 'default-call' && c.tool === 'export_all')!;
    expect(call.effects!.filter((e) => e.detail.startsWith('created ')).length).toBe(files);
    expect(readdirSync(data)).toEqual([]);
  });

  it('blames no later call for files past the 5000 entries read: the read-only count_files has no effect, save_note’s file is not “removed”', () => {
    const calls = report.calls.filter((c) => c.probe === 'default-call');
    expect(calls.map((c) => c.tool)).toEqual(['save_note', 'export_all', 'count_files']);
    expect(calls[0]!.effects!.map((e) => e.detail)).toEqual([`created ${data}/notes/n.txt`]);
    expect(calls[2]!.effects).toEqual([]);
    expect(report.calls.flatMap((c) => c.effects ?? []).filter((e) => e.detail.startsWith('removed '))).toEqual([]);
  });
});

describe.runIf(linux)('a server that writes while it starts (start-writer.mjs)', () => {
  it('lists the write on the sandbox line, and blames no call for it', async () => {
    const report = await audit({ command: process.execPath, args: [fixture('overlay/start-writer.mjs')], config: parseConfig(ONLY_EFFECTS, configRegistry()) });
    expect(report.sandbox.note).toContain('while starting, before any call, the server did: file: created ~/.config/acme/telemetry-consent.json (17 bytes) (in the copy-on-write layer; no call is blamed for it)');
    expect(report.calls.flatMap((c) => c.effects ?? [])).toEqual([]);
    expect(checkOf(report, 'default-call-effects').verdict).toBe('pass');
  }, 60_000);

  it('with its tools shared among instances, lists the write once: every instance made the same one, the first’s is the line’s own', async () => {
    const report = await audit({ command: process.execPath, args: [fixture('overlay/start-writer.mjs'), '--extra', '13'], config: parseConfig(ONLY_EFFECTS, configRegistry()) });
    const write = 'while starting, before any call, the server did: file: created ~/.config/acme/telemetry-consent.json (17 bytes) (in the copy-on-write layer; no call is blamed for it)';
    expect(new Set(report.calls.map((c) => c.instance)).size).toBeGreaterThan(1);
    expect(report.sandbox.note.split(write)).toHaveLength(2);
    expect(report.sandbox.note).toContain(`network loopback only; ${write}`);
    expect(report.calls.flatMap((c) => c.effects ?? [])).toEqual([]);
  }, 60_000);
});

describe.runIf(linux)('a store file of 2 MiB rewritten by every call (same-bytes.mjs)', () => {
  it('is no change when the bytes are the same, and a change when one byte differs', async () => {
    const data = mkdtempSync(join(tmpdir(), 'sealmark-overlay-same-'));
    try {
      writeFileSync(join(data, 'store.bin'), Buffer.alloc(2 * 1024 * 1024, 7));
      const report = await audit({ command: process.execPath, args: [fixture('overlay/same-bytes.mjs'), '--data', data], config: parseConfig(ONLY_EFFECTS, configRegistry()) });
      const effects = Object.fromEntries(report.calls.filter((c) => c.probe === 'default-call').map((c) => [c.tool, (c.effects ?? []).map((e) => e.detail)]));
      expect(effects).toEqual({ save_store: [], bump_store: [`changed ${data}/store.bin`] });
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  }, 60_000);
});

describe.runIf(linux)('--keep-sandbox', () => {
  it('keeps the scratch folders and the overlay’s upper layers, says where on stderr, and the writes are there to inspect', async () => {
    const data = makeData();
    const out = `${data}-report.json`;
    let kept: string[] = [];
    try {
      const run = await runCli(['audit', '--keep-sandbox', '--only', 'default-call-effects', '--format', 'json', '--output', out, '--', process.execPath, fixture('overlay/data-writer.mjs'), '--data', data]);
      // data-writer.mjs has 13 tools: three instances share them (the first also made the
      // whole-server probes). Each kept its own folders, and the summary names every pair, in order.
      const m = /sandbox kept at (.+)$/m.exec(run.stderr);
      expect(m, run.stderr).not.toBeNull();
      const pairs = m![1]!.split('; ').map((p) => p.split(' and '));
      expect(pairs).toHaveLength(3);
      kept = pairs.flat();
      for (const d of kept) expect(existsSync(d), d).toBe(true);
      const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
      expect(report.sandbox.note.match(/instance \d of 3: scratch folders kept at /g)).toHaveLength(2);
      // The appended notes file lies in the upper layer of the instance that owns append_note, by its
      // real path under the overlaid folder.
      const owner = report.calls.find((c) => c.tool === 'append_note' && c.probe === 'default-call')!.instance ?? 0;
      const control = pairs[owner]![1]!;
      const i = report.sandbox.protected.findIndex((p) => data.startsWith(p + '/'));
      expect(i).toBeGreaterThanOrEqual(0);
      const upper = join(control, 'overlay', 'upper', String(readdirSync(join(control, 'overlay', 'upper')).map(Number).sort((a, b) => a - b)[i]));
      const copy = join(upper, data.slice(report.sandbox.protected[i]!.length + 1), 'notes.txt');
      expect(readFileSync(copy, 'utf8')).toBe('first note\na note from the server\n');
      expect(readFileSync(join(data, 'notes.txt'), 'utf8')).toBe('first note\n');
    } finally {
      for (const d of kept) rmSync(d, { recursive: true, force: true });
      rmSync(out, { force: true });
      rmSync(data, { recursive: true, force: true });
    }
  }, 60_000);
});

describe.runIf(linux)('a Python server whose read-only tool writes to its --db path', () => {
  let dir: string;
  let db: string;
  let report: Report;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sealmark-overlay-py-'));
    db = join(dir, 'visits.db');
    writeFileSync(db, 'visit\n');
    const raw = { checks: { ...ONLY_EFFECTS.checks, annotations: { enabled: true } } };
    report = await audit({ command: 'python3', args: [fixture('overlay/py_db_writer.py'), '--db', db], config: parseConfig(raw, configRegistry()) });
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('sees the write as the {} call’s effect, and annotations fails the read-only claim on it', () => {
    const calls = report.calls.filter((c) => c.probe === 'default-call');
    expect(calls.map((c) => [c.tool, c.effects])).toEqual([
      // (The design pack's own call of the read-only tool wrote first: the file grows by 6 bytes a call.)
      ['record_visit', [{ kind: 'file', detail: `changed ${db}`, summary: expect.stringMatching(/^(\d+) → \d+ bytes/) }]],
      // Written 400 ms after the reply by a timer thread: its own call's, late, not the next tool's.
      ['flush_later', [{ kind: 'file', detail: expect.stringMatching(/^(created|changed) .*\/visits\.db\.journal$/), summary: expect.any(String), lateMs: expect.any(Number) }]],
      ['list_visits', []],
    ]);
    expect(checkOf(report, 'default-call-effects').findings.map((f) => [f.tool, f.messageId])).toEqual([['record_visit', 'effect'], ['flush_later', 'effect']]);
    expect(checkOf(report, 'annotations').findings.filter((f) => f.messageId === 'read-only-effect').map((f) => f.tool)).toEqual(['record_visit']);
  });

  it('leaves the database as it was', () => {
    expect(readFileSync(db, 'utf8')).toBe('visit\n');
    expect(existsSync(`${db}.journal`)).toBe(false);
  });
});

describe.runIf(linux)('a server that writes to its data file and exits: the next start has fresh sandbox state', () => {
  let dir: string;
  let file: string;
  let report: Report;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sealmark-overlay-crash-'));
    file = join(dir, 'data.txt');
    writeFileSync(file, 'the user’s line\n');
    report = await audit({ command: process.execPath, args: [fixture('overlay/crash-writer.mjs'), '--file', file], config: parseConfig(ONLY_EFFECTS, configRegistry()) });
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the write is the effect of the call that made it, and the server was started again after it exited', () => {
    const dflt = report.calls.filter((c) => c.probe === 'default-call');
    expect(dflt.map((c) => c.tool)).toEqual(['append_and_crash', 'read_file']);
    expect(dflt[0]!.effects).toEqual([{ kind: 'file', detail: `changed ${file}`, summary: '18 → 48 bytes; first change at byte 18: "appended by the crashed start\\n"' }]);
    expect(report.restarts?.length ?? 0).toBeGreaterThanOrEqual(1);
    expect(checkOf(report, 'default-call-effects').findings.map((f) => [f.tool, f.messageId])).toEqual([['append_and_crash', 'effect']]);
  });

  it('the restarted server read the user’s file as it is, not what the exited start wrote into the overlay', () => {
    const read = report.calls.find((c) => c.probe === 'default-call' && c.tool === 'read_file')!;
    expect(read.reply.raw).toMatchObject({ result: { content: [{ type: 'text', text: 'the user’s line\n' }] } });
    expect(read.effects).toEqual([]);
  });

  it('leaves the file unchanged', () => {
    expect(readFileSync(file, 'utf8')).toBe('the user’s line\n');
  });
});

describe.runIf(linux)('a server that writes more than the overlay may hold in memory', () => {
  it('is stopped there and not started again; the report says why, the data folder is unchanged and nothing is left in /dev/shm', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sealmark-overlay-big-'));
    const out = `${dir}-report.json`;
    const config = `${dir}.config.json`;
    writeFileSync(config, JSON.stringify(ONLY_EFFECTS));
    try {
      const run = await runCli(['audit', '--config', config, '--format', 'json', '--output', out, '--', process.execPath, fixture('overlay/big-writer.mjs'), '--dir', dir], { env: { SEALMARK_OVERLAY_CAP_MB: '16' } });
      expect(run.stderr).not.toMatch(/Error|at .*\.js:\d+/);
      const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
      const why = /^the server wrote more than 16 MB into the sandbox's copy-on-write layer \(\d+ MB, held in memory in \/dev\/shm\/sealmark-control-[\w-]+\/overlay\); sealmark stopped it there \(SEALMARK_OVERLAY_CAP_MB sets the limit\)$/;
      expect(report.sandbox.note).toMatch(/the server wrote more than 16 MB into the sandbox's copy-on-write layer/);
      const big = report.calls.find((c) => c.probe === 'default-call' && c.tool === 'write_big')!;
      expect(big.reply.kind).toBe('exited');
      expect(report.restarts).toEqual([{ afterSeq: expect.any(Number), ok: false, failure: expect.stringMatching(why) }]);
      // The checks the server did not stay up for fail, saying why (not n/a).
      expect(checkOf(report, 'default-call-effects').verdict).toBe('fail');
      expect(readdirSync(dir)).toEqual([]);
      // Its own folder in /dev/shm (named in the report) is gone; other audits may run beside this one.
      const control = /held in memory in (\/dev\/shm\/sealmark-control-[\w-]+)\/overlay/.exec(report.sandbox.note)![1]!;
      expect(existsSync(control)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(out, { force: true });
      rmSync(config, { force: true });
    }
  }, 60_000);
});

describe.runIf(linux)('delayed effects beside an honest read-only tool (a Python server, the full default audit)', () => {
  let dir: string;
  let report: Report;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sealmark-overlay-delayed-'));
    // probes: entries as a user writes them: the read-only tool's call comes right after the other's.
    const probes = [{ tool: 'save_later', arguments: {} }, { tool: 'peek', arguments: {} }];
    report = await audit({ command: 'python3', args: [fixture('overlay/py_delayed.py'), '--dir', dir], config: parseConfig({ probes }, configRegistry()) });
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('never blames the read-only tool for the write another tool set off 300 ms after its reply', () => {
    expect(report.calls.filter((c) => c.tool === 'peek' && (c.effects?.length ?? 0) > 0)).toEqual([]);
    expect(checkOf(report, 'annotations').findings.filter((f) => f.tool === 'peek')).toEqual([]);
    expect(checkOf(report, 'default-call-effects').findings.map((f) => f.tool).sort()).toEqual(['ping_later', 'save_later']);
  });

  it('each delayed effect is the late effect of the call that set it off', () => {
    const dflt = (tool: string) => report.calls.find((c) => c.probe === 'default-call' && c.tool === tool)!;
    expect(dflt('save_later').effects).toEqual([{ kind: 'file', detail: expect.stringMatching(/^(created|changed) .*\/saved\.txt$/), summary: expect.any(String), lateMs: expect.any(Number) }]);
    // The last tool: only pings and protocol probes come after it, and its curl is still its own.
    expect(dflt('ping_later').effects).toEqual([{ kind: 'shim', detail: 'curl -s -m 1 http://example.com/late', lateMs: expect.any(Number) }]);
    // Every write of saved.txt in the report is on a call of save_later.
    const writers = report.calls.filter((c) => c.effects?.some((e) => e.detail.endsWith('/saved.txt'))).map((c) => c.tool);
    expect(new Set(writers)).toEqual(new Set(['save_later']));
  });

  it('leaves the folder as it was', () => {
    expect(readdirSync(dir)).toEqual([]);
  });
});

/**
 * A mount inside a folder the overlay would cover (an AppImage under /tmp, a network drive in the
 * home, anything under /mnt): the folder cannot be overlaid whole, since the overlay would hide the
 * mount. The user's data beside the mount must stay protected all the same. The audit runs inside
 * `unshare -rm`, where the test mounts a tmpfs of its own; nothing of the host's mounts is touched.
 */
describe.runIf(linux)('a mount beside the user’s data', () => {
  let parent: string;
  let data: string;
  let holder: string;
  let before: Record<string, string>;
  let holderBefore: Record<string, string>;
  let beside: Report;
  let inside: Report;

  /** The CLI audit of data-writer.mjs pointed at `dir`, inside a mount namespace where `parent/holder/mnt` is a tmpfs. */
  const auditWithMount = async (dir: string, tag: string): Promise<Report> => {
    const out = join(parent, `${tag}.json`);
    const cli = [process.execPath, join(root, 'bin', 'sealmark.js'), 'audit', '--only', 'default-call-effects', '--format', 'json', '--output', out, '--', process.execPath, fixture('overlay/data-writer.mjs'), '--data', dir];
    const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const script = `mount -t tmpfs none ${q(join(holder, 'mnt'))} && exec ${cli.map(q).join(' ')}`;
    const run = await collectOutput(spawn('unshare', ['-rm', '--propagation', 'private', 'sh', '-c', script], { cwd: parent, stdio: ['ignore', 'pipe', 'pipe'] }));
    expect(existsSync(out), run.stderr).toBe(true);
    return JSON.parse(readFileSync(out, 'utf8')) as Report;
  };

  beforeAll(async () => {
    parent = mkdtempSync(join(tmpdir(), 'sealmark-overlay-mount-'));
    data = join(parent, 'data');
    holder = join(parent, 'holder');
    const made = makeData();
    cpSync(made, data, { recursive: true });
    rmSync(made, { recursive: true, force: true });
    mkdirSync(join(holder, 'mnt'), { recursive: true });
    writeFileSync(join(holder, 'notes.txt'), 'first note\n');
    before = hashes(data);
    holderBefore = hashes(holder);
    beside = await auditWithMount(data, 'beside');
    inside = await auditWithMount(holder, 'inside');
  }, 120_000);
  afterAll(() => {
    if (parent) rmSync(parent, { recursive: true, force: true });
    // /tmp holds the test's mount there, so it is not overlaid: write_tmp's file was real.
    for (const n of written()) rmSync(join('/tmp', n), { force: true });
  });

  it('overlays the data folder beside the mount, names the folder that holds it, sees the writes and leaves the files unchanged', () => {
    // (/tmp itself holds the mount, so it is listed as not protected: a hard-coded write to /tmp is real there.)
    expect(beside.sandbox.filesystem).toBe('overlay');
    expect(beside.sandbox.protected).toContain(data);
    expect(beside.sandbox.unprotected.find((u) => u.path === '/tmp' || parent.startsWith(u.path + '/'))?.why).toMatch(new RegExp(`it holds other mounts \\(.*${join(holder, 'mnt').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*\\).*; only .*${data.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    const check = checkOf(beside, 'default-call-effects');
    expect(check.verdict).toBe('fail');
    const appended = beside.calls.find((c) => c.tool === 'append_note' && c.probe === 'default-call');
    expect(appended?.effects?.map((e) => e.detail)).toContain(`changed ${join(data, 'notes.txt')}`);
    expect(hashes(data)).toEqual(before);
  });

  it('makes no call meant to write when a named path lies where only the root holds it, and creates nothing there', async () => {
    const spool = `/sealmark-overlay-spool-${process.pid}/queue`;
    const r = await audit({ command: process.execPath, args: [fixture('overlay/data-writer.mjs'), '--data', data, '--spool', spool], config: parseConfig(ONLY_EFFECTS, configRegistry()) });
    expect(r.sandbox.unprotected).toContainEqual({ path: spool, why: 'its nearest existing folder is the root, which cannot be overlaid' });
    expect(r.sandbox.note).toContain(`not protected: ${spool} (its nearest existing folder is the root, which cannot be overlaid)`);
    expect(r.calls.filter((c) => c.probe === 'default-call')).toEqual([]);
    expect(checkOf(r, 'default-call-effects').notes.join('\n')).toContain('the copy-on-write filesystem does not cover /, where the server was pointed (new entries at the root cannot be overlaid');
    expect(existsSync(spool)).toBe(false);
    expect(hashes(data)).toEqual(before);
  }, 60_000);

  it('makes no call meant to write when the data folder itself holds the mount (its writes would be real), and says why', () => {
    expect(inside.calls.filter((c) => c.probe === 'default-call')).toEqual([]);
    const check = checkOf(inside, 'default-call-effects');
    expect(check.verdict).toBe('n/a');
    expect(check.notes.join('\n')).toContain(`the copy-on-write filesystem does not cover ${holder}, where the server was pointed (it holds other mounts (${join(holder, 'mnt')})`);
    expect(hashes(holder)).toEqual(holderBefore);
  });
});
