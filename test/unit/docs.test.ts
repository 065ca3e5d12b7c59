/**
 * The ESLint lesson (STYLE, `Makefile.js#checkRuleFiles`): a check is not done until it has its
 * doc page, its test, its pack entry and consistent data. Each assertion below names what to do.
 *
 * `sealmark explain` is run from dist; `npm test` builds it before vitest.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_GONE_MESSAGE } from '../../src/checks/index.js';
import { describe, expect, it } from 'vitest';
import { checks } from '../../src/checks/index.js';
import { renderCheckDoc } from '../../src/docs.js';
import { packs } from '../../src/packs.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const KEBAB = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const ids = checks.map((c) => c.meta.id);

describe('the check registry', () => {
  it('has unique, kebab-case ids, each with its own file src/checks/<id>.ts', () => {
    expect(new Set(ids).size, 'duplicate check id in src/checks/index.ts').toBe(ids.length);
    for (const id of ids) {
      expect(id, `check id ${JSON.stringify(id)} is not kebab-case`).toMatch(KEBAB);
      expect(existsSync(join(root, 'src/checks', `${id}.ts`)), `src/checks/${id}.ts does not exist: one file per check, named after its id`).toBe(true);
    }
  });
});

describe.each(ids)('check %s', (id) => {
  const meta = checks.find((c) => c.meta.id === id)!.meta;

  it('has an up-to-date docs/checks page', () => {
    const file = join(root, 'docs/checks', `${id}.md`);
    expect(existsSync(file), `docs/checks/${id}.md is missing: run \`npm run docs\``).toBe(true);
    const onDisk = readFileSync(file, 'utf8');
    expect(onDisk === renderCheckDoc(meta), `docs/checks/${id}.md is out of date: run \`npm run docs\``).toBe(true);
  });

  it('is listed in docs/checks/README.md', () => {
    const index = readFileSync(join(root, 'docs/checks/README.md'), 'utf8');
    expect(index.includes(`(${id}.md)`), `docs/checks/README.md does not link ${id}: run \`npm run docs\``).toBe(true);
  });

  it('has a test file test/checks/<id>.test.ts', () => {
    expect(existsSync(join(root, 'test/checks', `${id}.test.ts`)), `test/checks/${id}.test.ts is missing: every check has its own test`).toBe(true);
  });

  it('is in exactly one pack, the one its meta names', () => {
    const holders = packs.filter((p) => p.checks.includes(id)).map((p) => p.id);
    expect(holders, `${id} must be listed in exactly one pack in src/packs.ts`).toHaveLength(1);
    expect(holders[0], `${id}: meta.pack is ${meta.pack} but src/packs.ts lists it under ${holders[0]}`).toBe(meta.pack);
  });

  it('has complete documentation data', () => {
    const d = meta.docs;
    expect(meta.title.trim(), 'title').not.toBe('');
    expect(d.summary.trim(), 'docs.summary').not.toBe('');
    expect(d.fix.trim(), 'docs.fix').not.toBe('');
    for (const k of ['how', 'falsePositives', 'falseNegatives', 'limits'] as const) {
      expect(d[k].length, `docs.${k} is empty`).toBeGreaterThan(0);
      for (const line of d[k]) expect(line.trim(), `docs.${k} has an empty entry`).not.toBe('');
    }
    expect(meta.probes.some((p) => p.core), 'no probe is marked core: true').toBe(true);
    expect(new Set(meta.probes.map((p) => p.id)).size, 'duplicate probe id').toBe(meta.probes.length);
    expect(meta.verdicts.length, 'no verdict rows').toBeGreaterThan(0);
    for (const v of meta.verdicts) expect(v.when.trim(), `verdict ${v.verdict} has no "when"`).not.toBe('');
    expect(new Set(meta.verdicts.map((v) => v.verdict)).size, 'a verdict has two rows').toBe(meta.verdicts.length);
    expect(Object.keys(meta.messages).length, 'no messages').toBeGreaterThan(0);
  });

  it('uses exactly the message ids it declares', () => {
    const source = readFileSync(join(root, 'src/checks', `${id}.ts`), 'utf8');
    const usage = messageUsage(source, join(root, 'src/checks', `${id}.ts`));
    const declared = Object.keys(meta.messages);
    const undeclared = usage.literal.filter((m) => !declared.includes(m));
    expect(undeclared, `finding(meta, '<id>', …) uses ids missing from meta.messages`).toEqual([]);
    // A dynamic id (`finding(meta, f.reason, …)`) may be any literal of the file or of what it imports.
    // server-gone-before is every check's, given by judgeAll (src/audit.ts), not by the check's own file.
    const unused = declared.filter((m) => m !== SERVER_GONE_MESSAGE && !usage.literal.includes(m) && !(usage.dynamic && usage.otherLiterals.has(m)));
    expect(unused, 'meta.messages keys that no finding(meta, …) in the source can produce').toEqual([]);
  });

  it('`sealmark explain <id>` prints the rendered doc', () => {
    const out = execFileSync(process.execPath, [join(root, 'bin/sealmark.js'), 'explain', id], { encoding: 'utf8' });
    expect(out === renderCheckDoc(meta), `sealmark explain ${id} differs from renderCheckDoc (is dist stale? run npm run build)`).toBe(true);
  });
});

describe('packs', () => {
  it('have unique ids and list only checks that exist, each once', () => {
    expect(new Set(packs.map((p) => p.id)).size).toBe(packs.length);
    const listed = packs.flatMap((p) => p.checks);
    expect(listed.filter((id) => !ids.includes(id)), 'src/packs.ts lists ids that are not checks').toEqual([]);
    expect(new Set(listed).size, 'a check is listed twice in src/packs.ts').toBe(listed.length);
  });
});

describe('docs/checks/README.md', () => {
  it('links no check that does not exist', () => {
    const index = readFileSync(join(root, 'docs/checks/README.md'), 'utf8');
    const linked = [...index.matchAll(/\]\(([^)]+)\.md\)/g)].map((m) => m[1]!);
    expect(linked.filter((l) => !ids.includes(l)), 'stale entries: run `npm run docs`').toEqual([]);
  });
});

/**
 * Message ids a check's source can produce. `literal`: ids in `finding(meta, '<id>'`; `dynamic`:
 * whether any finding's id is an expression; `otherLiterals`: every string literal of the file
 * (its `messages` block left out, so a key never counts as its own use) and of the files it
 * imports relatively (where a union type such as `OpenFailure['reason']` spells the values).
 */
function messageUsage(source: string, file: string): { literal: string[]; dynamic: boolean; otherLiterals: Set<string> } {
  const code = withoutBlock(source, 'messages');
  const literal = [...code.matchAll(/\bfinding\(\s*meta\s*,\s*(['"])([^'"\\]+)\1/g)].map((m) => m[2]!);
  const dynamic = /\bfinding\(\s*meta\s*,\s*(?=[^\s'"])/.test(code);
  const texts = [code];
  for (const m of code.matchAll(/from\s+['"](\.{1,2}\/[^'"]+)\.js['"]/g)) {
    const dep = resolve(dirname(file), `${m[1]!}.ts`);
    if (existsSync(dep)) texts.push(readFileSync(dep, 'utf8'));
  }
  const otherLiterals = new Set(texts.flatMap((t) => [...t.matchAll(/(['"])([^'"\\\n]*)\1/g)].map((m) => m[2]!)));
  return { literal: [...new Set(literal)], dynamic, otherLiterals };
}

/** `source` with the object literal after `<key>: {` removed (string-aware brace matching). */
function withoutBlock(source: string, key: string): string {
  const start = source.search(new RegExp(`\\b${key}\\s*:\\s*\\{`));
  if (start < 0) return source;
  let i = source.indexOf('{', start);
  let depth = 0;
  for (; i < source.length; i++) {
    const ch = source[i]!;
    if (ch === "'" || ch === '"' || ch === '`') {
      for (i++; i < source.length && source[i] !== ch; i++) if (source[i] === '\\') i++;
    } else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) break;
  }
  return source.slice(0, start) + source.slice(i + 1);
}

describe('the message-id scan itself', () => {
  const src = (body: string) => `export const meta = { id: 'x', messages: { a: 'A', 'b-c': 'B {n}', d: 'D' } };\n${body}`;
  it('sees literal ids and leaves the messages block out', () => {
    const u = messageUsage(src(`finding(meta, 'a', 'fail', {});\nfinding(\n  meta,\n  "b-c", 'info', {});`), join(root, 'src/checks/x.ts'));
    expect(u.literal).toEqual(['a', 'b-c']);
    expect(u.dynamic).toBe(false);
    expect(u.otherLiterals.has('d')).toBe(false);
  });
  it('marks an expression id as dynamic', () => {
    const u = messageUsage(src(`finding(meta, run.reason, 'info', {}); const r: 'd' | 'e' = 'd';`), join(root, 'src/checks/x.ts'));
    expect(u.dynamic).toBe(true);
    expect(u.otherLiterals.has('d')).toBe(true);
  });
});
