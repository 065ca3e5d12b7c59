/**
 * The README's library example (SPEC section 9) runs as written, so it cannot rot: the code block
 * under the `library-example` marker is saved, unchanged, as `test/sealmark.test.ts` of a scratch
 * project whose `build/index.js` is a fixture server (reports/sourcemapped: robust-input partial
 * by a bare -32603, which the example suppresses), with `sealmark` linked to this checkout (needs a
 * fresh dist/) and vitest from it; then that project's own vitest run must pass.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectOutput } from '../helpers/cli.js';
import { root } from '../helpers/run.js';

const SLOW = 240_000;

/** The first ```ts block after the library-example marker of README.md. */
export function readmeExample(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const at = readme.indexOf('<!-- library-example');
  expect(at, 'README.md has no <!-- library-example --> marker').toBeGreaterThan(-1);
  const m = /```ts\n([\s\S]*?)```/.exec(readme.slice(at));
  expect(m, 'no ```ts block after the marker').not.toBeNull();
  return m![1]!;
}

let project: string;
beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'sealmark-readme-example-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'example-server', private: true, type: 'module' }));
  mkdirSync(join(project, 'build'));
  const server = readFileSync(join(root, 'test/fixtures/servers/reports/sourcemapped/build/server.mjs'), 'utf8')
    .replace('../../../lib/raw-server.mjs', join(root, 'test/fixtures/servers/lib/raw-server.mjs'))
    .replace(/\/\/# sourceMappingURL=.*\n/, '');
  writeFileSync(join(project, 'build', 'index.js'), server);
  mkdirSync(join(project, 'test'));
  writeFileSync(join(project, 'test', 'sealmark.test.ts'), readmeExample());
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(root, join(project, 'node_modules', 'sealmark'), 'dir');
  symlinkSync(join(root, 'node_modules', 'vitest'), join(project, 'node_modules', 'vitest'), 'dir');
});
afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

describe('README library example', () => {
  it('is a test file importing audit from sealmark', () => {
    const code = readmeExample();
    expect(code).toMatch(/import \{ audit \} from 'sealmark';/);
    expect(code).toMatch(/args: \['build\/index\.js'\]/);
  });

  it("passes as the server project's own vitest test", async () => {
    // The outer run's VITEST_* variables would make the inner vitest think it is a worker.
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('VITEST') && k !== 'NODE_OPTIONS') env[k] = v;
    env.NO_COLOR = '1';
    const r = await collectOutput(
      spawn(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--root', project], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    const output = r.stdout + r.stderr;
    expect(r.code, output).toBe(0);
    expect(output).toMatch(/Tests\s+1 passed/);
  }, SLOW);
});
