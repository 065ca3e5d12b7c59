/** How `--format` and `--output` pair up (src/commands/outputs.ts), and the format list --help shows. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { planOutputs } from '../../src/commands/outputs.js';
import { FORMATS } from '../../src/report/reporters/index.js';
import { root } from '../helpers/run.js';

describe('planOutputs', () => {
  it('text to stdout when nothing is asked', () => {
    expect(planOutputs([], [])).toEqual([{ format: 'text' }]);
  });

  it('pairs formats with outputs in order, and leaves one format for stdout', () => {
    expect(planOutputs(['json', 'sarif', 'text'], ['r.json', 'r.sarif'])).toEqual([
      { format: 'json', path: 'r.json' },
      { format: 'sarif', path: 'r.sarif' },
      { format: 'text' },
    ]);
  });

  it('reads --output - as stdout', () => {
    expect(planOutputs(['json', 'sarif'], ['-', 'r.sarif'])).toEqual([{ format: 'json' }, { format: 'sarif', path: 'r.sarif' }]);
  });

  it('takes the format of an output without one from its extension', () => {
    expect(planOutputs([], ['a.SARIF', 'b.xml', 'c.htm', 'd.txt', 'e.json'])).toEqual([
      { format: 'sarif', path: 'a.SARIF' },
      { format: 'junit', path: 'b.xml' },
      { format: 'html', path: 'c.htm' },
      { format: 'text', path: 'd.txt' },
      { format: 'json', path: 'e.json' },
    ]);
    // A given format wins over the extension.
    expect(planOutputs(['json'], ['report.txt'])).toEqual([{ format: 'json', path: 'report.txt' }]);
  });

  it('refuses what cannot work, naming the flag', () => {
    expect(() => planOutputs(['json', 'sarif'], [])).toThrow(/--format json, sarif: only one report can go to stdout/);
    expect(() => planOutputs(['pdf'], [])).toThrow(/--format "pdf": expected one of text, json, sarif, junit, html/);
    expect(() => planOutputs([], ['report.pdf'])).toThrow(/--output report.pdf: no --format for it/);
    expect(() => planOutputs(['json', 'sarif'], ['-'])).toThrow(/only one report can go to stdout/);
  });
});

it('--help lists exactly the formats the reporters map has', () => {
  const cli = readFileSync(`${root}src/cli.ts`, 'utf8');
  const listed = /const FORMAT_LIST = '([^']+)'/.exec(cli)![1]!.split(', ');
  expect(listed).toEqual([...FORMATS]);
});

describe('fitColumns (the progress line)', () => {
  it('cuts by display columns: a wide character counts two, and none is split', async () => {
    const { fitColumns } = await import('../../src/commands/audit.js');
    expect(fitColumns('abc', 10)).toBe('abc');
    expect(fitColumns('工具工具工具', 5)).toBe('工具');
    expect(fitColumns('a😀b', 2)).toBe('a');
    expect(fitColumns('a😀b', 3)).toBe('a😀');
  });
});
