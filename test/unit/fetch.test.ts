/**
 * Pieces of the fetch phase that need no registry (src/target/fetch.ts): the order of versions
 * npm lists for a range (npx takes the highest), and what an interrupted install leaves.
 */
import { describe, expect, it } from 'vitest';
import { compareSemver, pinnedLine } from '../../src/target/fetch.js';
import { recognizeLauncher } from '../../src/target/launch.js';

describe('compareSemver', () => {
  it('orders what npm view lists for a range as npx picks from it: the highest last', () => {
    // As the registry answered `npm view @modelcontextprotocol/server-memory@^2025 version --json`.
    const listed = ['2025.11.25', '2025.4.25', '2025.8.4', '2025.9.25'];
    expect([...listed].sort(compareSemver)).toEqual(['2025.4.25', '2025.8.4', '2025.9.25', '2025.11.25']);
  });

  it('puts a pre-release before its release, and orders pre-release fields', () => {
    expect(['1.0.0', '1.0.0-rc.10', '1.0.0-rc.2', '1.0.0-alpha', '0.9.9', '1.0.0-rc.2+build'].sort(compareSemver)).toEqual(['0.9.9', '1.0.0-alpha', '1.0.0-rc.2', '1.0.0-rc.2+build', '1.0.0-rc.10', '1.0.0']);
  });
});

describe('pinnedLine: replay lines run the version that was audited', () => {
  const npx = (args: string[]) => ({ launch: recognizeLauncher('npx', args)!, target: { command: 'npx', args } });
  it.each([
    [['-y', '@modelcontextprotocol/server-everything'], '2026.8.31', 'npx -y @modelcontextprotocol/server-everything@2026.8.31'],
    [['-y', 'pkg@^1', '--flag'], '1.4.2', 'npx -y pkg@1.4.2 --flag'],
    [['-y', '--package=@s/tools@latest', '--', 'tools-stdio'], '3.0.0', 'npx -y --package=@s/tools@3.0.0 -- tools-stdio'],
    [['-y', '-p', '@s/tools', 'tools-stdio'], '3.0.0', 'npx -y -p @s/tools@3.0.0 tools-stdio'],
  ])('%j resolved to %s replays as %s', (args, version, line) => {
    const { launch, target } = npx(args);
    expect(pinnedLine(target, launch, { ...launch.package, version })?.join(' ')).toBe(line);
  });

  it('an exact version is left as written', () => {
    const { launch, target } = npx(['-y', 'pkg@1.0.0']);
    expect(pinnedLine(target, launch, { ...launch.package, version: '1.0.0' })).toBeUndefined();
  });

  it('uvx and pipx lines pin with ==', () => {
    const launch = recognizeLauncher('uvx', ['mcp-server-time', '--local-timezone', 'UTC'])!;
    expect(pinnedLine({ command: 'uvx', args: ['mcp-server-time', '--local-timezone', 'UTC'] }, launch, { ...launch.package, version: '2025.1.1' })?.join(' ')).toBe('uvx mcp-server-time==2025.1.1 --local-timezone UTC');
  });
});
