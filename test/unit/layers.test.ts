/**
 * The one-way flow of STYLE.md: target → probes (recorded calls) → checks (verdicts) → report. A
 * module may import from its own layer and from the layers before it, never from one after it
 * (the artifact types live with the probes that make them, so checks read probes, not the reverse).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root } from '../helpers/run.js';

const LAYERS = ['target', 'probes', 'checks', 'report'] as const;
const src = join(root, 'src');

/** Every .ts file under `dir`, recursively. */
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** The layer a file of src/ belongs to (its first folder), or undefined for the shared modules at the top. */
const layerOf = (file: string) => LAYERS.indexOf(relative(src, file).split('/')[0] as (typeof LAYERS)[number]);

describe('the one-way flow of layers', () => {
  it('no module imports from a layer after its own', () => {
    const upstream: string[] = [];
    for (const layer of LAYERS) {
      for (const file of files(join(src, layer))) {
        const text = readFileSync(file, 'utf8');
        for (const m of text.matchAll(/^(?:import|export)\b[^;]*?from '(\.[^']+)'/gms)) {
          const target = resolve(file, '..', m[1]!);
          const to = layerOf(target);
          if (to > layerOf(file)) upstream.push(`${relative(root, file)} imports ${relative(root, target)}`);
        }
      }
    }
    expect(upstream).toEqual([]);
  });

  it('finds the imports it judges (the rule is not vacuous)', () => {
    const text = readFileSync(join(src, 'checks', 'check.ts'), 'utf8');
    expect(text).toMatch(/from '\.\.\/probes\/robust-input\.js'/);
  });
});
