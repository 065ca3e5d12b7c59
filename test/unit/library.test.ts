/**
 * The library's `audit()` config (SPEC section 9, src/library.ts): an object validated as a config
 * file is, a file loaded as `--config` loads it, the file found upward, and the CLI's overrides;
 * every problem a ConfigError, as the CLI's exit 2.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit, ConfigError, defaultConfig, loadConfig } from '../../src/index.js';
import { resolveLibraryConfig } from '../../src/library.js';
import { configRegistry } from '../../src/config/defaults.js';

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sealmark-library-test-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The ConfigError `fn` throws. */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('no ConfigError');
}

describe('audit({ config })', () => {
  it('validates the object as a config file: defaults applied, every problem named by its key', () => {
    const c = resolveLibraryConfig({ config: { timeout_probe_sec: 5, suppress: [{ check: 'robust-input', reason: 'known' }] }, cwd: tmp });
    expect(c.timeout_probe_sec).toBe(5);
    expect(c.timeout_init_sec).toBe(30);
    expect(c.checks['robust-input']?.enabled).toBe(true);
    expect(c.suppress).toEqual([{ check: 'robust-input', reason: 'known' }]);
    const err = configError(() => resolveLibraryConfig({ config: { timeout_probe_sec: true, checkz: {}, suppress: [{ check: 'nope', reason: '' }] } as never }));
    expect(err.problems.map((p) => p.key)).toEqual(['timeout_probe_sec', 'checkz', 'suppress[0].check', 'suppress[0].reason']);
    expect(err.message).toMatch(/^config: timeout_probe_sec: expected a number greater than 0 and at most 3600, got true$/m);
  });

  it('takes a resolved config (loadConfig, defaultConfig) as it is, keeping its source', () => {
    expect(resolveLibraryConfig({ config: defaultConfig() })).toEqual(defaultConfig());
    const file = join(tmp, 'resolved.json');
    writeFileSync(file, JSON.stringify({ skip_tools: ['wipe'] }));
    const loaded = loadConfig({ path: file, cwd: tmp, registry: configRegistry() });
    expect(resolveLibraryConfig({ config: loaded })).toEqual(loaded);
    // No registry needed: the built-in checks are the default.
    expect(loadConfig({ path: 'resolved.json', cwd: tmp })).toEqual(loaded);
  });

  it('refuses what is not a config object: null, an array, a string (key config)', () => {
    for (const [bad, got] of [[null, 'null'], [[], 'an array'], ['sealmark.config.json', 'string "sealmark.config.json"']] as const) {
      const err = configError(() => resolveLibraryConfig({ config: bad as never, cwd: tmp }));
      expect(err.key).toBe('config');
      expect(err.message).toBe(`config: expected a config object (or leave config out for the file found upward), got ${got}`);
    }
  });

  it('refuses ignoreSuppressions, naming the key and the option that does it (suppress: false)', () => {
    const err = configError(() => resolveLibraryConfig({ config: { ...defaultConfig(), ignoreSuppressions: true } as never, cwd: tmp }));
    expect(err.key).toBe('ignoreSuppressions');
    expect(err.message).toBe("config: ignoreSuppressions: not a config key: to apply no suppress: entries, pass the audit option suppress: false (the CLI's --no-suppress)");
    // Any other unknown key is refused as a file's is.
    expect(configError(() => resolveLibraryConfig({ config: { ...defaultConfig(), suppres: [] } as never, cwd: tmp })).key).toBe('suppres');
    expect(configError(() => resolveLibraryConfig({ config: { source: 7 } as never, cwd: tmp })).key).toBe('source');
  });

  it('rejects before any server starts: audit() with a bad config is a ConfigError', async () => {
    await expect(audit({ command: 'definitely-not-a-command', config: null as never })).rejects.toMatchObject({ name: 'ConfigError', key: 'config' });
    await expect(audit({ command: 'definitely-not-a-command', config: { probes: [{ tool: '' }] } })).rejects.toThrow(ConfigError);
    await expect(audit({ command: 'definitely-not-a-command', config: { probes: [{ tool: '' }] } })).rejects.toMatchObject({ key: 'probes[0].tool' });
  });
});

describe('audit({ configFile }) and the file found upward', () => {
  it('loads the file relative to cwd, JSON or YAML, with errors naming the file and the key', () => {
    writeFileSync(join(tmp, 'a.yaml'), 'timeout_init_sec: 12\nsuppress:\n  - check: annotations\n    reason: later\n    until: 2030-01-01\n');
    const c = resolveLibraryConfig({ configFile: 'a.yaml', cwd: tmp });
    expect(c.timeout_init_sec).toBe(12);
    expect(c.source).toBe(join(tmp, 'a.yaml'));
    expect(c.suppress).toEqual([{ check: 'annotations', reason: 'later', until: '2030-01-01' }]);
    writeFileSync(join(tmp, 'b.json'), '{ "sandbox": { "network": "maybe" } }');
    expect(configError(() => resolveLibraryConfig({ configFile: 'b.json', cwd: tmp })).message).toMatch(/^b\.json: sandbox\.network: expected one of "on" or "off", got "maybe"$/);
    // The option the caller used, not the CLI's flag.
    const missing = configError(() => resolveLibraryConfig({ configFile: 'missing.json', cwd: tmp }));
    expect(missing).toMatchObject({ key: 'configFile', file: join(tmp, 'missing.json') });
    expect(missing.message).toBe('configFile: file not found: missing.json');
  });

  it('finds sealmark.config.json upward from cwd when neither is given', () => {
    const project = join(tmp, 'project');
    mkdirSync(join(project, 'sub'), { recursive: true });
    writeFileSync(join(project, 'sealmark.config.json'), JSON.stringify({ hidden_params: ['token'] }));
    expect(resolveLibraryConfig({ cwd: join(project, 'sub') }).hidden_params).toEqual(['token']);
  });

  it('refuses config and configFile together', () => {
    expect(configError(() => resolveLibraryConfig({ config: {}, configFile: 'a.yaml', cwd: tmp }))).toMatchObject({ key: 'configFile' });
  });
});

describe("the CLI's overrides", () => {
  it('only, skip, timeoutProbeSec and suppress: false', () => {
    const c = resolveLibraryConfig({ config: {}, only: ['robust-input', 'annotations'], skip: ['annotations'], timeoutProbeSec: 3, suppress: false });
    expect(Object.entries(c.checks).filter(([, s]) => s.enabled).map(([id]) => id)).toEqual(['robust-input']);
    expect(c.timeout_probe_sec).toBe(3);
    expect(c.ignoreSuppressions).toBe(true);
    // Errors name the library's options, not the CLI's flags.
    expect(configError(() => resolveLibraryConfig({ config: {}, only: ['robust-inptu'] })).message).toBe('only: unknown check id "robust-inptu" (did you mean robust-input?)');
    expect(configError(() => resolveLibraryConfig({ config: {}, skip: ['nope'] })).key).toBe('skip');
    expect(configError(() => resolveLibraryConfig({ config: {}, timeoutProbeSec: 0 })).key).toBe('timeoutProbeSec');
  });
});

describe("the package's public entry (import from 'sealmark', needs a fresh dist/)", () => {
  /** Runs `code` as an ES module in a fresh node, in this checkout (so `sealmark` is the package itself). */
  function runEntry(code: string): unknown {
    return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: join(__dirname, '../..'), encoding: 'utf8' })) as unknown;
  }

  it('loadConfig works with no registry, and its result is accepted as audit({ config })', () => {
    mkdirSync(join(tmp, 'sup'), { recursive: true });
    writeFileSync(join(tmp, 'sup', 'k.json'), JSON.stringify({ suppress: [{ check: 'robust-input', reason: 'known' }] }));
    const out = runEntry(`
      import { loadConfig, audit } from 'sealmark';
      const c = loadConfig({ path: 'sup/k.json', cwd: ${JSON.stringify(tmp)} });
      const errs = [];
      for (const o of [{ config: null }, { config: { ...c, ignoreSuppressions: true } }, { configFile: 'nope.json', cwd: ${JSON.stringify(tmp)} }]) {
        try { await audit({ command: 'definitely-not-a-command', ...o }); errs.push('resolved'); } catch (e) { errs.push([e.name, e.key, e.message]); }
      }
      let missing; try { loadConfig({ path: 'nope.json', cwd: ${JSON.stringify(tmp)} }); } catch (e) { missing = [e.name, e.key, e.message]; }
      console.log(JSON.stringify({ suppress: c.suppress, source: c.source, enabled: c.checks['robust-input'].enabled, missing, errs }));
    `);
    expect(out).toEqual({
      suppress: [{ check: 'robust-input', reason: 'known' }],
      source: join(tmp, 'sup', 'k.json'),
      enabled: true,
      missing: ['ConfigError', 'path', 'path: file not found: nope.json'],
      errs: [
        ['ConfigError', 'config', 'config: expected a config object (or leave config out for the file found upward), got null'],
        ['ConfigError', 'ignoreSuppressions', "config: ignoreSuppressions: not a config key: to apply no suppress: entries, pass the audit option suppress: false (the CLI's --no-suppress)"],
        ['ConfigError', 'configFile', 'configFile: file not found: nope.json'],
      ],
    });
  });
});
