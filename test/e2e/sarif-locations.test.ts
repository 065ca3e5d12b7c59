/**
 * SARIF locations and links (SPEC section 8) through the real binary (needs a fresh dist/): every
 * result points at a repository-relative file (the source a source map names, else the config
 * file, else the package manifest), the driver has its informationUri and every rule a helpUri;
 * the logs pass the official schema and Microsoft's Sarif.Multitool.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from '../helpers/run.js';
import { runCli } from '../helpers/cli.js';
import { multitoolValidate, validateSarifSchema } from '../helpers/sarif.js';

/** The fixture, relative to the repository root (the runs' cwd). */
const FIXTURE = 'test/fixtures/servers/reports/sourcemapped';
const SLOW = 180_000;

interface Sarif {
  runs: {
    tool: { driver: { informationUri?: string; rules: { id: string; helpUri?: string }[] } };
    originalUriBaseIds?: Record<string, { uri: string }>;
    results: { ruleId: string; locations: { physicalLocation?: { artifactLocation: { uri: string; uriBaseId?: string }; region?: { startLine: number } } }[] }[];
  }[];
}

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sealmark-sarif-loc-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;

/** Audits `command` (robust-input only: quick, and it fails on the fixture) and returns the SARIF log and its file. */
async function sarifOf(name: string, command: string[], extra: string[] = []): Promise<{ log: Sarif; file: string }> {
  const file = join(tmp, `${name}.sarif`);
  const r = await runCli(['audit', '--only', 'robust-input,tool-naming', ...extra, '--format', 'sarif', '--output', file, '--', ...command]);
  expect([0, 1], r.stderr).toContain(r.code);
  return { log: readJson<Sarif>(file), file };
}

describe('SARIF of a built server with a source map', () => {
  let log: Sarif;
  let file: string;
  beforeAll(async () => {
    ({ log, file } = await sarifOf('mapped', ['node', `${FIXTURE}/build/server.mjs`]));
  }, SLOW);

  it('points every result at the TypeScript source, %SRCROOT%-relative, at the line naming the tool', () => {
    const run0 = log.runs[0]!;
    expect(run0.results.length).toBeGreaterThan(0);
    const line = readFileSync(join(root, FIXTURE, 'src/server.ts'), 'utf8').split('\n').findIndex((l) => l.includes("'convert'")) + 1;
    expect(line).toBeGreaterThan(0);
    for (const r of run0.results) {
      expect(r.locations[0]!.physicalLocation!.artifactLocation).toEqual({ uri: `${FIXTURE}/src/server.ts`, uriBaseId: 'SRCROOT' });
    }
    const ri = run0.results.find((r) => r.ruleId === 'robust-input')!;
    expect(ri.locations[0]!.physicalLocation!.region!.startLine).toBe(line);
  });

  it('names sealmark\'s home page as informationUri, and a doc page as every rule\'s helpUri', () => {
    const driver = log.runs[0]!.tool.driver;
    expect(driver.informationUri).toBe('https://github.com/sealmark/sealmark');
    for (const rule of driver.rules) expect(rule.helpUri, rule.id).toBe(`https://github.com/sealmark/sealmark/blob/main/docs/checks/${rule.id}.md`);
  });

  it('is valid: the official schema, and Sarif.Multitool with no error and no SARIF2005 (missing informationUri)', async () => {
    expect(validateSarifSchema(log)).toEqual([]);
    const v = await multitoolValidate(file, tmp);
    expect(v.errors, v.output).toEqual([]);
    expect(v.code, v.output).toBe(0);
    expect(v.warnings.filter((w) => /SARIF2005/.test(w)), v.output).toEqual([]);
  }, SLOW);
});

describe('SARIF of a server outside the repository', () => {
  let server: string;
  beforeAll(() => {
    // The build alone, without its map, in a folder outside the repository (as a package cache is).
    mkdirSync(join(tmp, 'outside'));
    server = join(tmp, 'outside', 'server.mjs');
    const text = readFileSync(join(root, FIXTURE, 'build/server.mjs'), 'utf8')
      .replace('../../../lib/raw-server.mjs', join(root, 'test/fixtures/servers/lib/raw-server.mjs'))
      .replace(/\/\/# sourceMappingURL=.*\n/, '');
    writeFileSync(server, text);
  });

  it('points at the config file when the run has one', async () => {
    const config = `${FIXTURE}/empty.config.json`;
    const { log } = await sarifOf('config', ['node', server], ['--config', config]);
    const results = log.runs[0]!.results;
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) expect(r.locations[0]!.physicalLocation!.artifactLocation).toEqual({ uri: config, uriBaseId: 'SRCROOT' });
  }, SLOW);

  it('else at the package manifest of the repository', async () => {
    const { log } = await sarifOf('manifest', ['node', server]);
    const results = log.runs[0]!.results;
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) expect(r.locations[0]!.physicalLocation!.artifactLocation).toEqual({ uri: 'package.json', uriBaseId: 'SRCROOT' });
    expect(validateSarifSchema(log)).toEqual([]);
  }, SLOW);
});

describe('SARIF of a finding an SDK causes', () => {
  const SDK_FIXTURE = 'test/fixtures/servers/sdk';
  type Result = Sarif['runs'][number]['results'][number] & {
    properties: { messageId: string };
    locations: { logicalLocations?: { name?: string; fullyQualifiedName: string; kind: string }[] }[];
  };
  let results: Result[];
  let file: string;
  beforeAll(async () => {
    file = join(tmp, 'sdk.sarif');
    const r = await runCli(['audit', '--only', 'protocol-errors', '--timeout-probe', '2', '--format', 'sarif', '--output', file, '--', 'node', `${SDK_FIXTURE}/fallback-handler.mjs`]);
    expect([0, 1], r.stderr).toContain(r.code);
    results = readJson<Sarif>(file).runs[0]!.results as Result[];
  }, SLOW);

  it('is placed at the SDK\'s dependency line of the server\'s package.json, not in the author\'s code, and names the SDK as a module', () => {
    const r = results.find((x) => x.properties.messageId === 'no-reply')!;
    const line = readFileSync(join(root, SDK_FIXTURE, 'package.json'), 'utf8').split('\n').findIndex((l) => l.includes('"@modelcontextprotocol/sdk":')) + 1;
    expect(line).toBeGreaterThan(1);
    expect(r.locations[0]!.physicalLocation).toEqual({ artifactLocation: { uri: `${SDK_FIXTURE}/package.json`, uriBaseId: 'SRCROOT' }, region: { startLine: line } });
    expect(r.locations[0]!.logicalLocations).toEqual([{ name: '@modelcontextprotocol/sdk', fullyQualifiedName: 'npm:@modelcontextprotocol/sdk@1.32.2', kind: 'module' }]);
  });

  it('the author\'s own finding on the same server stays at the entry file', () => {
    const r = results.find((x) => x.properties.messageId === 'unknown-method-result')!;
    expect(r.locations[0]!.physicalLocation!.artifactLocation).toEqual({ uri: `${SDK_FIXTURE}/fallback-handler.mjs`, uriBaseId: 'SRCROOT' });
  });

  it('is valid: the official schema, and Sarif.Multitool with no error', async () => {
    expect(validateSarifSchema(readJson(file))).toEqual([]);
    const v = await multitoolValidate(file, tmp);
    expect(v.errors, v.output).toEqual([]);
    expect(v.code, v.output).toBe(0);
  }, SLOW);
});
