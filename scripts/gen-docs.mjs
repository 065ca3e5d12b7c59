#!/usr/bin/env node
/**
 * Writes docs/checks/<id>.md for every check and docs/checks/README.md (the list), rendered from
 * the checks' own `meta` by src/docs.ts (STYLE: docs as data). Run through `npm run docs`, which
 * builds dist first. test/unit/docs.test.ts fails when a page differs from what this writes.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { renderCheckDoc, renderCheckList } from '../dist/docs.js';
import { checks } from '../dist/checks/index.js';

const dir = fileURLToPath(new URL('../docs/checks/', import.meta.url));
mkdirSync(dir, { recursive: true });

/** The index page: the same list `sealmark list-checks` prints, with a link per check. */
function renderIndex(list) {
  const L = ['# Checks', '', '<!-- generated from src/checks by `npm run docs`; do not edit -->', ''];
  L.push('| id | pack | weight | title |', '|---|---|---|---|');
  for (const c of list) L.push(`| [\`${c.meta.id}\`](${c.meta.id}.md) | ${c.meta.pack} | ${c.meta.weight} | ${c.meta.title} |`);
  L.push('', 'The same list as `sealmark list-checks`:', '', '```', renderCheckList(list).trimEnd(), '```', '');
  return L.join('\n');
}

const wanted = new Set(['README.md']);
for (const c of checks) {
  const name = `${c.meta.id}.md`;
  wanted.add(name);
  writeFileSync(join(dir, name), renderCheckDoc(c.meta));
}
writeFileSync(join(dir, 'README.md'), renderIndex(checks));

// A page whose check is gone would otherwise linger and mislead.
for (const f of readdirSync(dir)) {
  if (f.endsWith('.md') && !wanted.has(f)) {
    rmSync(join(dir, f));
    process.stdout.write(`removed docs/checks/${f} (no such check)\n`);
  }
}
process.stdout.write(`wrote docs/checks/: ${checks.length} checks + README.md\n`);
