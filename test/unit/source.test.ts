/**
 * Where a target comes from on disk (src/report/source.ts, SPEC section 8): the entry file, the
 * source a source map names, the package manifest and the repository root, on scratch folders.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dependencyLinesIn, locateSource } from '../../src/report/source.js';

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sealmark-source-test-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Writes `files` (path → text) under a fresh folder and returns its path. */
function tree(name: string, files: Record<string, string>): string {
  const dir = join(tmp, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const SOURCE = "import x from 'y';\n\nserver.tool('get_note', schema, handler);\n";
const BUILT = "'use strict';\nserver.tool(\"get_note\", schema, handler);\n";

describe('locateSource', () => {
  it('follows the sourceMappingURL comment to the source file, with the tool line in the source', () => {
    const dir = tree('comment', {
      '.git/HEAD': 'ref: refs/heads/main\n',
      'package.json': '{}',
      'src/index.ts': SOURCE,
      'dist/index.js': `${BUILT}//# sourceMappingURL=maps/index.js.map\n`,
      'dist/maps/index.js.map': JSON.stringify({ version: 3, sources: ['../../src/index.ts'], mappings: '' }),
    });
    const s = locateSource(['node', 'dist/index.js'], dir, undefined, ['get_note']);
    expect(s.root).toBe(dir);
    expect(s.entry).toMatchObject({ file: join(dir, 'dist/index.js'), toolLines: { get_note: 2 } });
    expect(s.entry?.source).toEqual({ file: join(dir, 'src/index.ts'), toolLines: { get_note: 3 } });
    expect(s.manifest).toBe(join(dir, 'package.json'));
  });

  it('reads an inline data: map, and resolves sourceRoot', () => {
    const map = Buffer.from(JSON.stringify({ version: 3, sourceRoot: '../lib/', sources: ['server.ts'], mappings: '' })).toString('base64');
    const dir = tree('inline', {
      'lib/server.ts': SOURCE,
      'out/server.js': `${BUILT}//# sourceMappingURL=data:application/json;charset=utf-8;base64,${map}\n`,
    });
    const s = locateSource(['node', 'out/server.js'], dir, undefined, ['get_note']);
    expect(s.entry?.source?.file).toBe(join(dir, 'lib/server.ts'));
  });

  it('uses <entry>.map beside the entry when there is no comment; of a bundle, the source naming the tools, never node_modules', () => {
    const dir = tree('bundle', {
      'src/util.ts': 'export const one = 1;\n',
      'src/tools.ts': SOURCE,
      'node_modules/sdk/index.js': "'get_note'\n",
      'dist/bundle.js': BUILT,
      'dist/bundle.js.map': JSON.stringify({ version: 3, sources: ['../node_modules/sdk/index.js', '../src/util.ts', '../src/tools.ts', 'webpack://x/y.ts'], mappings: '' }),
    });
    const s = locateSource(['node', 'dist/bundle.js'], dir, undefined, ['get_note']);
    expect(s.entry?.source?.file).toBe(join(dir, 'src/tools.ts'));
  });

  it('keeps no source when the map names files that do not exist, or is not JSON', () => {
    const dir = tree('missing', {
      'a.js': `${BUILT}//# sourceMappingURL=a.js.map\n`,
      'a.js.map': JSON.stringify({ version: 3, sources: ['gone.ts'], mappings: '' }),
      'b.js': `${BUILT}//# sourceMappingURL=b.js.map\n`,
      'b.js.map': 'not json',
    });
    expect(locateSource(['node', 'a.js'], dir, undefined, ['get_note']).entry?.source).toBeUndefined();
    expect(locateSource(['node', 'b.js'], dir, undefined, ['get_note']).entry?.source).toBeUndefined();
  });

  it('finds the manifest upward from the entry (pyproject.toml too), not above the repository root', () => {
    const dir = tree('python', {
      '.git': 'gitdir: /elsewhere\n',
      'pkg/pyproject.toml': '[project]\nname = "x"\n',
      'pkg/src/server.py': 'def get_note():\n    pass\n',
    });
    const s = locateSource(['python', 'pkg/src/server.py'], dir, undefined, ['get_note']);
    expect(s.entry?.toolLines).toEqual({ get_note: 1 });
    expect(s.manifest).toBe(join(dir, 'pkg/pyproject.toml'));
    const none = tree('python/inner', { 'x.py': '' });
    expect(locateSource(['python', 'x.py'], none, undefined, []).manifest).toBeUndefined();
  });

  it('without an entry (a URL target), looks for the manifest from cwd', () => {
    const dir = tree('http', { 'package.json': '{}', 'sub/.keep': '' });
    const s = locateSource([], join(dir, 'sub'), 'cfg.json', []);
    expect(s.entry).toBeUndefined();
    expect(s.configFile).toBe(join(dir, 'sub', 'cfg.json'));
    expect(s.manifest).toBe(join(dir, 'package.json'));
  });
});

describe('locateSource with an entry outside the repository', () => {
  it("takes the manifest of cwd's project, not one beside the entry", () => {
    const repo = tree('repo', { '.git/HEAD': '', 'package.json': '{}' });
    const cache = tree('cache', { 'package.json': '{}', 'server.js': BUILT });
    const s = locateSource(['node', join(cache, 'server.js')], repo, undefined, ['get_note']);
    expect(s.entry?.file).toBe(join(cache, 'server.js'));
    expect(s.manifest).toBe(join(repo, 'package.json'));
  });
});

describe('dependencyLinesIn (where SARIF places a finding an SDK causes)', () => {
  it('maps each dependency to its declaration line, not a same-named key elsewhere', () => {
    const text = ['{', '  "name": "x",', '  "scripts": { "fastmcp": "run" },', '  "dependencies": {', '    "fastmcp": "4.3.2",', '    "zod": "^4"', '  },', '  "devDependencies": {', '    "@modelcontextprotocol/sdk": "1.32.2"', '  }', '}'].join('\n');
    expect({ ...dependencyLinesIn(text) }).toEqual({ fastmcp: 5, zod: 6, '@modelcontextprotocol/sdk': 9 });
    expect({ ...dependencyLinesIn('not json') }).toEqual({});
  });
});
