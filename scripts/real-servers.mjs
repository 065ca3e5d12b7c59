#!/usr/bin/env node
/**
 * Audits every server of the real-server corpus (test/corpus/servers.json) with the built library
 * (dist/, so run `npm run build` first), two at a time, and writes docs/real-servers.md: the stack
 * table and, per server, every check's verdict with its one-line reason (test/corpus/corpus.mjs).
 *
 *   node scripts/real-servers.mjs            write the doc
 *   node scripts/real-servers.mjs --check    print how the doc differs from a fresh run; exit 1 if it does
 *   node scripts/real-servers.mjs --only a,b audit only these ids (with --check: compare only them)
 *   node scripts/real-servers.mjs --lib p    audit with the library at p (a copy of dist/, say) instead of dist/
 *
 * test/e2e/corpus.test.ts asserts the doc against the same audits.
 */
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DOC, auditAll, loadManifest, parseDoc, renderDoc } from '../test/corpus/corpus.mjs';

const argv = process.argv.slice(2);
const libAt = argv.indexOf('--lib');
const { audit, VERSION } = await import(libAt >= 0 ? pathToFileURL(resolve(argv[libAt + 1] ?? '')).href : '../dist/index.js');
const check = argv.includes('--check');
const onlyAt = argv.indexOf('--only');
const only = onlyAt >= 0 ? new Set((argv[onlyAt + 1] ?? '').split(',').filter(Boolean)) : undefined;

const manifest = loadManifest();
const servers = only ? manifest.filter((s) => only.has(s.id)) : manifest;
if (only && servers.length !== only.size) {
  console.error(`unknown id in --only: ${[...only].filter((id) => !manifest.some((s) => s.id === id)).join(', ')}`);
  process.exit(2);
}

const started = Date.now();
const results = await auditAll(servers, audit, {
  concurrency: 2,
  onDone: (r) => {
    const left = r.leftover.length ? ` (ended ${r.leftover.length} leftover process(es))` : '';
    console.error(`${r.id}: ${(r.ms / 1000).toFixed(1)} s${left}`);
  },
});
console.error(`all: ${((Date.now() - started) / 1000).toFixed(1)} s`);

const old = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '';
const oldServers = parseDoc(old);
const date = new Date().toISOString().slice(0, 10);
const label = `sealmark ${VERSION} (${revision()})`;

if (check) {
  let diffs = 0;
  for (const r of results) {
    const was = oldServers.get(r.id);
    if (!was) {
      console.log(`${r.id}: not in the doc`);
      diffs += 1;
      continue;
    }
    const rows = new Map(was.rows.map((x) => [x.check, x]));
    for (const row of r.rows) {
      const w = rows.get(row.check);
      if (!w || w.verdict !== row.verdict || w.reason !== row.reason) {
        console.log(`${r.id} ${row.check}:\n  doc: ${w ? `${w.verdict} | ${w.reason}` : '(missing)'}\n  now: ${row.verdict} | ${row.reason}`);
        diffs += 1;
      }
      rows.delete(row.check);
    }
    for (const w of rows.values()) {
      console.log(`${r.id} ${w.check}: in the doc, not in the report`);
      diffs += 1;
    }
  }
  console.log(diffs === 0 ? 'docs/real-servers.md matches' : `${diffs} difference(s)`);
  process.exit(diffs === 0 ? 0 : 1);
}

if (only) {
  // A partial run keeps the other servers' sections from the current doc.
  const kept = manifest.map((s) => results.find((r) => r.id === s.id) ?? fromDoc(s.id)).filter(Boolean);
  writeFileSync(DOC, renderDoc(manifest, kept, { date, sealmark: label }));
} else {
  writeFileSync(DOC, renderDoc(manifest, results, { date, sealmark: label }));
}
console.error(`wrote ${DOC}`);

/** The commit the audited code was built from, and whether src/ had uncommitted changes. */
function revision() {
  try {
    const git = (...a) => execFileSync('git', a, { cwd: new URL('..', import.meta.url), encoding: 'utf8' }).trim();
    const dirty = git('status', '--porcelain', '--', 'src') !== '';
    return `commit ${git('rev-parse', '--short', 'HEAD')}${dirty ? ', with uncommitted changes in src/' : ''}`;
  } catch {
    return 'commit unknown';
  }
}

function fromDoc(id) {
  const was = oldServers.get(id);
  return was ? { id, rows: was.rows, gradeText: was.grade } : undefined;
}
