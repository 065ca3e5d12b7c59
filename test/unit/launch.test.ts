/**
 * Launcher lines and `--package` specs (src/target/launch.ts): what the fetch phase reads from a
 * command line, and what it leaves to run as given.
 */
import { describe, expect, it } from 'vitest';
import { launcherLine, packageLabel, parsePackageOption, recognizeLauncher } from '../../src/target/launch.js';

describe('recognizeLauncher', () => {
  it.each([
    [['npx', '-y', '@modelcontextprotocol/server-everything'], { ecosystem: 'npm', name: '@modelcontextprotocol/server-everything' }, []],
    [['npx', '-y', '@fixture/echo-server@1.0.0', 'stdio', '--verbose'], { ecosystem: 'npm', name: '@fixture/echo-server', version: '1.0.0' }, ['stdio', '--verbose']],
    [['/usr/local/bin/npx', '--yes', 'mcp-server-x@^2'], { ecosystem: 'npm', name: 'mcp-server-x', version: '^2' }, []],
    [['npx', '-y', '-p', '@scope/tools@1.2.3', 'tools-stdio', '--root', '/data'], { ecosystem: 'npm', name: '@scope/tools', version: '1.2.3', bin: 'tools-stdio' }, ['--root', '/data']],
    [['npm', 'exec', '--yes', '--package=@scope/tools@1.2.3', '--', 'tools-stdio'], { ecosystem: 'npm', name: '@scope/tools', version: '1.2.3', bin: 'tools-stdio' }, []],
    [['bunx', 'mcp-server-y@0.3.0'], { ecosystem: 'npm', name: 'mcp-server-y', version: '0.3.0' }, []],
    [['uvx', 'mcp-server-fetch'], { ecosystem: 'pypi', name: 'mcp-server-fetch' }, []],
    [['uvx', 'mcp-server-git==2025.1.14', '--repository', '/r'], { ecosystem: 'pypi', name: 'mcp-server-git', version: '2025.1.14' }, ['--repository', '/r']],
    [['uvx', 'mcp-server-git@2025.1.14'], { ecosystem: 'pypi', name: 'mcp-server-git', version: '2025.1.14' }, []],
    [['uvx', '--from', 'awslabs.core-mcp-server==1.0.0', 'core-server'], { ecosystem: 'pypi', name: 'awslabs.core-mcp-server', version: '1.0.0', bin: 'core-server' }, []],
    [['uv', 'tool', 'run', 'mcp-server-time'], { ecosystem: 'pypi', name: 'mcp-server-time' }, []],
    [['pipx', 'run', 'mcp-server-time', '--local-timezone', 'UTC'], { ecosystem: 'pypi', name: 'mcp-server-time' }, ['--local-timezone', 'UTC']],
    [['pipx', 'run', '--spec', 'pkg==1.0', 'app'], { ecosystem: 'pypi', name: 'pkg', version: '1.0', bin: 'app' }, []],
    [['docker', 'run', '-i', '--rm', '-e', 'GITHUB_TOKEN', 'ghcr.io/github/github-mcp-server:v1.0.0'], { ecosystem: 'oci', name: 'ghcr.io/github/github-mcp-server', version: 'v1.0.0' }, []],
    [['docker', 'run', '-i', '--rm', 'localhost:5000/img'], { ecosystem: 'oci', name: 'localhost:5000/img' }, []],
  ])('%j is a launch of its package', (line, pkg, args) => {
    const l = recognizeLauncher(line[0]!, line.slice(1));
    expect(l?.package).toEqual(pkg);
    expect(l?.args).toEqual(args);
  });

  it('keeps docker run options before the image, in order', () => {
    const l = recognizeLauncher('docker', ['run', '-i', '--rm', '-e', 'TOKEN', '-v', '/data:/data', 'mcp/x:1', 'serve']);
    expect(l?.runtimeArgs).toEqual(['-i', '--rm', '-e', 'TOKEN', '-v', '/data:/data']);
    expect(l?.args).toEqual(['serve']);
  });

  it.each([
    [['node', 'server.js']],
    [['npx', '--node-options=--inspect', 'x']],
    [['npx', '-y', './local-dir']],
    [['npx', '-y', 'github:user/repo']],
    [['npx', '-p', 'a', '-p', 'b', 'cmd']],
    [['npx', '-c', 'echo hi']],
    [['uvx', '--with', 'extra', 'pkg']],
    [['uvx', 'git+https://example.invalid/repo']],
    [['pipx', 'install', 'x']],
    [['docker', 'run', '--weird-flag', 'img']],
    [['docker', 'ps']],
    [['python3', '-m', 'server']],
  ])('%j is not read as a launch (it runs as given)', (line) => {
    expect(recognizeLauncher(line[0]!, line.slice(1))).toBeUndefined();
  });
});

describe('--package', () => {
  it.each([
    ['npm:@fixture/echo-server@1.0.0', { ecosystem: 'npm', name: '@fixture/echo-server', version: '1.0.0' }, 'npx -y @fixture/echo-server@1.0.0'],
    ['npm:left-pad', { ecosystem: 'npm', name: 'left-pad' }, 'npx -y left-pad'],
    ['pypi:fixture-echo-server==1.0.0', { ecosystem: 'pypi', name: 'fixture-echo-server', version: '1.0.0' }, 'uvx fixture-echo-server==1.0.0'],
    ['oci:ghcr.io/x/y:1.2', { ecosystem: 'oci', name: 'ghcr.io/x/y', version: '1.2' }, 'docker run -i --rm ghcr.io/x/y:1.2'],
    ['oci:img@sha256:abc', { ecosystem: 'oci', name: 'img', version: 'sha256:abc' }, 'docker run -i --rm img@sha256:abc'],
  ])('%s', (value, ref, line) => {
    const r = parsePackageOption(value);
    expect(r).toEqual(ref);
    expect(launcherLine(r).join(' ')).toBe(line);
    expect(packageLabel(r)).toBe(line.split(' ').at(-1));
  });

  it.each(['npm', 'npm:', 'cargo:x', 'x@1', 'npm:./dir', 'pypi:pkg>=1', 'oci:-rm'])('%s is a usage error naming the flag', (value) => {
    expect(() => parsePackageOption(value)).toThrow(/--package .*expected npm:<name>/);
  });
});
