import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  CONFIG_FILE_NAMES,
  findConfigFile,
  loadConfig,
  mergeCliOverrides,
} from '../../src/config/load.js';
import {
  ConfigError,
  buildConfigSchema,
  nonStandardKeys,
  parseConfig,
  type ConfigCheckSpec,
} from '../../src/config/schema.js';

/** The core pack's config keys (SPEC section 5), as the check registry will declare them. */
const registry: ConfigCheckSpec[] = [
  { id: 'handshake', keys: [] },
  {
    id: 'robust-input',
    keys: [
      { name: 'hang_ms', schema: z.int().min(100).max(600000).nullable(), default: null, standard: 'locked' },
      { name: 'max_tools', schema: z.int().min(1).max(10000), default: 25, standard: 'locked' },
    ],
  },
  { id: 'protocol-errors', keys: [] },
  { id: 'tool-schemas', keys: [] },
];

/** Parses and returns the ConfigError thrown (fails the test if none is). */
function configError(raw: unknown, source?: string): ConfigError {
  try {
    parseConfig(raw, registry, source);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

function thrown(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('parseConfig defaults', () => {
  it('fills every default for an empty config', () => {
    const config = parseConfig({}, registry);
    expect(config).toEqual({
      timeout_probe_sec: 10,
      timeout_init_sec: 30,
      checks: {
        handshake: { enabled: true },
        'robust-input': { enabled: true, hang_ms: null, max_tools: 25 },
        'protocol-errors': { enabled: true },
        'tool-schemas': { enabled: true },
      },
      probes: [],
      skip_tools: [],
      hidden_params: [],
      sandbox: { network: 'off', shims: true, keep: false },
      env: {},
      suppress: [],
    });
    expect(config.source).toBeUndefined();
  });

  it('treats null and undefined (an empty YAML file) as no settings', () => {
    expect(parseConfig(null, registry)).toEqual(parseConfig({}, registry));
    expect(parseConfig(undefined, registry)).toEqual(parseConfig({}, registry));
  });

  it('keeps given values and fills the rest', () => {
    const config = parseConfig(
      {
        timeout_probe_sec: 2.5,
        checks: { 'robust-input': { max_tools: 40, severity: 'warning' }, handshake: { enabled: false } },
        probes: [{ tool: 'echo', arguments: { text: 'hi' } }, { tool: 'rm', expect: 'error' }],
        sandbox: { network: 'on' },
        env: { API_KEY: 'x' },
        skip_tools: ['dangerous'],
        hidden_params: ['session_id'],
      },
      registry,
      '/tmp/sealmark.config.json',
    );
    expect(config.timeout_probe_sec).toBe(2.5);
    expect(config.timeout_init_sec).toBe(30);
    expect(config.checks['robust-input']).toEqual({ enabled: true, severity: 'warning', hang_ms: null, max_tools: 40 });
    expect(config.checks['handshake']).toEqual({ enabled: false });
    expect(config.checks['tool-schemas']).toEqual({ enabled: true });
    expect(config.probes).toEqual([
      { tool: 'echo', arguments: { text: 'hi' }, expect: 'ok' },
      { tool: 'rm', arguments: {}, expect: 'error' },
    ]);
    expect(config.sandbox).toEqual({ network: 'on', shims: true, keep: false });
    expect(config.env).toEqual({ API_KEY: 'x' });
    expect(config.skip_tools).toEqual(['dangerous']);
    expect(config.hidden_params).toEqual(['session_id']);
    expect(config.source).toBe('/tmp/sealmark.config.json');
  });

  it('takes check ids and keys from the registry, not from the schema module', () => {
    const other: ConfigCheckSpec[] = [
      { id: 'custom', keys: [{ name: 'limit', schema: z.int().min(0), default: 3, standard: 'free' }] },
    ];
    expect(parseConfig({}, other).checks).toEqual({ custom: { enabled: true, limit: 3 } });
    expect(() => parseConfig({ checks: { handshake: {} } }, other)).toThrow(/checks\.handshake: unknown check id/);
  });
});

describe('config errors name the key', () => {
  it('unknown top-level key', () => {
    const err = configError({ timeout_probe: 5 }, 'sealmark.config.json');
    expect(err.key).toBe('timeout_probe');
    expect(err.message).toBe('sealmark.config.json: timeout_probe: unknown key (did you mean timeout_probe_sec?)');
    expect(err.file).toBe('sealmark.config.json');
  });

  it('unknown check id', () => {
    const err = configError({ checks: { 'robust-inputs': {} } });
    expect(err.key).toBe('checks.robust-inputs');
    expect(err.message).toContain('checks.robust-inputs: unknown check id (did you mean robust-input?)');
    expect(configError({ checks: { zzz: {} } }).message).toContain(
      'checks.zzz: unknown check id (known: handshake, robust-input, protocol-errors, tool-schemas)',
    );
  });

  it('unknown key inside checks.<id> and inside sandbox', () => {
    expect(configError({ checks: { 'robust-input': { max_tool: 5 } } }).key).toBe('checks.robust-input.max_tool');
    expect(configError({ checks: { 'robust-input': { max_tool: 5 } } }).message).toContain('did you mean max_tools?');
    expect(configError({ checks: { handshake: { timeout: 5 } } }).key).toBe('checks.handshake.timeout');
    expect(configError({ sandbox: { netwrok: 'on' } }).key).toBe('sandbox.netwrok');
  });

  it('typo in a probes entry', () => {
    const err = configError({ probes: [{ tool: 'a' }, { tool: 'b', argumnets: { x: 1 } }] });
    expect(err.key).toBe('probes[1].argumnets');
    expect(err.message).toBe('probes[1].argumnets: unknown key (did you mean arguments?)');
    expect(configError({ probes: [{ arguments: {} }] }).message).toBe(
      'probes[0].tool: required: expected a non-empty string',
    );
  });

  it('wrong type', () => {
    expect(configError({ skip_tools: 'a' }).message).toBe('skip_tools: expected a list of strings, got "a"');
    expect(configError({ sandbox: { shims: 'yes' } }).message).toBe('sandbox.shims: expected true or false, got "yes"');
    expect(configError({ sandbox: { network: 'maybe' } }).message).toBe(
      'sandbox.network: expected one of "on" or "off", got "maybe"',
    );
    expect(configError({ probes: [{ tool: 'a', arguments: [] }] }).key).toBe('probes[0].arguments');
    expect(configError({ probes: [{ tool: 'a', expect: 'fail' }] }).key).toBe('probes[0].expect');
    expect(configError({ env: { PORT: 8080 } }).message).toBe('env.PORT: expected a string, got 8080 (put it in quotes)');
    expect(configError({ checks: { handshake: { severity: 'fatal' } } }).key).toBe('checks.handshake.severity');
    expect(configError([1, 2]).message).toBe('(root): expected an object, got a list');
  });

  it('never accepts a Boolean for a number', () => {
    let err = configError({ timeout_probe_sec: true }, 'sealmark.config.json');
    expect(err.key).toBe('timeout_probe_sec');
    expect(err.message).toBe(
      'sealmark.config.json: timeout_probe_sec: expected a number greater than 0 and at most 3600, got true',
    );
    err = configError({ checks: { 'robust-input': { max_tools: false } } }, 'sealmark.config.json');
    expect(err.key).toBe('checks.robust-input.max_tools');
    expect(err.message).toBe(
      'sealmark.config.json: checks.robust-input.max_tools: expected an integer from 1 to 10000, got false',
    );
    err = configError({ checks: { 'robust-input': { hang_ms: true } } });
    expect(err.message).toBe('checks.robust-input.hang_ms: expected an integer from 100 to 600000 or null, got true');
  });

  it('rejects a numeric string', () => {
    const err = configError({ timeout_init_sec: '30' });
    expect(err.key).toBe('timeout_init_sec');
    expect(err.message).toContain('got "30" (a string: write the number without quotes)');
    expect(configError({ checks: { 'robust-input': { max_tools: '25' } } }).key).toBe('checks.robust-input.max_tools');
  });

  it('out of range names the key and the range', () => {
    expect(configError({ timeout_probe_sec: 0 }).message).toBe(
      'timeout_probe_sec: expected a number greater than 0 and at most 3600, got 0',
    );
    expect(configError({ timeout_init_sec: 3601 }).message).toBe(
      'timeout_init_sec: expected a number greater than 0 and at most 3600, got 3601',
    );
    expect(configError({ checks: { 'robust-input': { max_tools: 0 } } }).message).toBe(
      'checks.robust-input.max_tools: expected an integer from 1 to 10000, got 0',
    );
    expect(configError({ checks: { 'robust-input': { hang_ms: 50 } } }).message).toBe(
      'checks.robust-input.hang_ms: expected an integer from 100 to 600000 or null, got 50',
    );
    expect(configError({ probes: [{ tool: '' }] }).message).toBe('probes[0].tool: expected a non-empty string, got ""');
  });

  it('rejects a non-integer where an integer is expected', () => {
    expect(configError({ checks: { 'robust-input': { max_tools: 2.5 } } }).message).toBe(
      'checks.robust-input.max_tools: expected an integer from 1 to 10000, got 2.5',
    );
  });

  it('reports every problem, one line each, in file order; key is the first', () => {
    const err = configError(
      {
        timeout_probe_sec: true,
        bogus: 1,
        checks: { 'robust-input': { max_tools: 0, max_tool: 3 } },
        probes: [{ tool: 'x', argumnets: {} }],
      },
      'sealmark.config.yaml',
    );
    expect(err.message.split('\n')).toEqual([
      'sealmark.config.yaml: timeout_probe_sec: expected a number greater than 0 and at most 3600, got true',
      'sealmark.config.yaml: bogus: unknown key (known: timeout_probe_sec, timeout_init_sec, checks, probes, skip_tools, hidden_params, sandbox, env, suppress)',
      'sealmark.config.yaml: checks.robust-input.max_tools: expected an integer from 1 to 10000, got 0',
      'sealmark.config.yaml: checks.robust-input.max_tool: unknown key (did you mean max_tools?)',
      'sealmark.config.yaml: probes[0].argumnets: unknown key (did you mean arguments?)',
    ]);
    expect(err.key).toBe('timeout_probe_sec');
    expect(err.problems).toHaveLength(5);
  });

  it('refuses a registry key schema that would accept a Boolean or a numeric string', () => {
    const loose: ConfigCheckSpec[] = [
      { id: 'x', keys: [{ name: 'n', schema: z.coerce.number(), default: 1, standard: 'locked' }] },
    ];
    expect(() => buildConfigSchema(loose)).toThrow(/Boolean/);
    const bad: ConfigCheckSpec[] = [{ id: 'x', keys: [{ name: 'n', schema: z.int().min(5), default: 1, standard: 'free' }] }];
    expect(() => buildConfigSchema(bad)).toThrow(/default/);
    const reserved: ConfigCheckSpec[] = [{ id: 'x', keys: [{ name: 'enabled', schema: z.boolean(), default: true, standard: 'free' }] }];
    expect(() => buildConfigSchema(reserved)).toThrow(/reserved/);
  });
});

describe('files', () => {
  let root: string;
  let nested: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'sealmark-config-'));
    nested = join(root, 'a', 'b', 'c');
    mkdirSync(nested, { recursive: true });
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('finds nothing and loads defaults when there is no file', () => {
    // The temp dir's ancestors (os.tmpdir(), /) are assumed to hold no sealmark config.
    expect(findConfigFile(nested)).toBeUndefined();
    expect(loadConfig({ cwd: nested, registry })).toEqual(parseConfig({}, registry));
  });

  it('finds a JSON file upward from a nested directory', () => {
    const file = join(root, 'a', 'sealmark.config.json');
    writeFileSync(file, JSON.stringify({ timeout_probe_sec: 20, checks: { 'robust-input': { max_tools: 50 } } }));
    expect(findConfigFile(nested)).toBe(file);
    const config = loadConfig({ cwd: nested, registry });
    expect(config.timeout_probe_sec).toBe(20);
    expect(config.checks['robust-input']?.['max_tools']).toBe(50);
    expect(config.source).toBe(file);
  });

  it('finds a YAML file upward, .yaml and .yml, the nearest winning', () => {
    writeFileSync(join(root, 'sealmark.config.yml'), 'timeout_init_sec: 5\n');
    expect(loadConfig({ cwd: nested, registry }).timeout_init_sec).toBe(5);
    const nearer = join(root, 'a', 'b', 'sealmark.config.yaml');
    writeFileSync(
      nearer,
      ['sandbox:', '  network: on', 'probes:', '  - tool: echo', '    arguments: {text: hi}', 'env:', '  TOKEN: "123"', ''].join('\n'),
    );
    expect(findConfigFile(nested)).toBe(nearer);
    const config = loadConfig({ cwd: nested, registry });
    expect(config.sandbox.network).toBe('on');
    expect(config.probes).toEqual([{ tool: 'echo', arguments: { text: 'hi' }, expect: 'ok' }]);
    expect(config.env).toEqual({ TOKEN: '123' });
    expect(config.timeout_init_sec).toBe(30);
  });

  it('prefers .json over .yaml over .yml in one directory', () => {
    for (const name of [...CONFIG_FILE_NAMES].reverse()) {
      writeFileSync(join(nested, name), '{}');
      expect(findConfigFile(nested)).toBe(join(nested, name));
    }
  });

  it('accepts an empty YAML file', () => {
    writeFileSync(join(nested, 'sealmark.config.yaml'), '# nothing yet\n');
    expect(loadConfig({ cwd: nested, registry })).toEqual({ ...parseConfig({}, registry), source: join(nested, 'sealmark.config.yaml') });
  });

  it('names a found file relative to cwd in errors, with its absolute path in .file', () => {
    const file = join(root, 'sealmark.config.yaml');
    writeFileSync(file, 'timeout_probe_sec: true\n');
    const err = thrown(() => loadConfig({ cwd: nested, registry }));
    expect(err.message).toBe(
      `${join('..', '..', '..', 'sealmark.config.yaml')}: timeout_probe_sec: expected a number greater than 0 and at most 3600, got true`,
    );
    expect(err.file).toBe(file);
  });

  it('explicit --config path, relative to cwd', () => {
    writeFileSync(join(nested, 'custom.yaml'), 'checks:\n  robust-input:\n    max_tools: 7\n');
    expect(loadConfig({ path: 'custom.yaml', cwd: nested, registry }).checks['robust-input']?.['max_tools']).toBe(7);
  });

  it('explicit path missing → key `path`, or the option the caller names (the CLI: --config)', () => {
    const err = thrown(() => loadConfig({ path: 'nope.json', cwd: nested, registry }));
    expect(err.key).toBe('path');
    expect(err.message).toBe('path: file not found: nope.json');
    expect(err.file).toBe(join(nested, 'nope.json'));
    const cli = thrown(() => loadConfig({ path: 'nope.json', cwd: nested, registry, option: '--config' }));
    expect(cli.key).toBe('--config');
    expect(cli.message).toBe('--config: file not found: nope.json');
  });

  it('invalid JSON → the line of the parse error', () => {
    writeFileSync(join(nested, 'sealmark.config.json'), '{\n  "timeout_probe_sec": 5,\n}\n');
    const err = thrown(() => loadConfig({ cwd: nested, registry }));
    expect(err.key).toBe('(syntax)');
    expect(err.line).toBe(3);
    expect(err.message).toMatch(/^sealmark\.config\.json: line 3, column 1: invalid JSON: /);
  });

  it('invalid YAML → the line of the parse error', () => {
    writeFileSync(join(nested, 'sealmark.config.yaml'), 'timeout_probe_sec: 5\nchecks: [1,\nenv: {}\n');
    const err = thrown(() => loadConfig({ cwd: nested, registry }));
    expect(err.key).toBe('(syntax)');
    expect(err.line).toBe(3);
    expect(err.message).toMatch(/^sealmark\.config\.yaml: line 3, column \d+: invalid YAML: /);
  });

  it('duplicate YAML keys are a syntax error', () => {
    writeFileSync(join(nested, 'sealmark.config.yaml'), 'timeout_probe_sec: 5\ntimeout_probe_sec: 6\n');
    const err = thrown(() => loadConfig({ cwd: nested, registry }));
    expect(err.line).toBe(2);
    expect(err.message).toContain('unique');
  });

  it('a YAML Boolean for a number is rejected with the key', () => {
    writeFileSync(join(nested, 'sealmark.config.yml'), 'checks:\n  robust-input:\n    max_tools: false\n');
    const err = thrown(() => loadConfig({ cwd: nested, registry }));
    expect(err.message).toBe(
      'sealmark.config.yml: checks.robust-input.max_tools: expected an integer from 1 to 10000, got false',
    );
  });
});

describe('nonStandardKeys', () => {
  it('is empty for defaults and for changed free settings', () => {
    expect(nonStandardKeys(parseConfig({}, registry), registry)).toEqual([]);
    expect(
      nonStandardKeys(parseConfig({ sandbox: { network: 'on' }, checks: { handshake: { severity: 'note' } } }, registry), registry),
    ).toEqual([]);
  });

  it('lists changed locked settings by dotted key', () => {
    const config = parseConfig(
      { timeout_init_sec: 60, timeout_probe_sec: 10, checks: { 'robust-input': { hang_ms: 5000, max_tools: 25 } } },
      registry,
    );
    expect(nonStandardKeys(config, registry)).toEqual(['timeout_init_sec', 'checks.robust-input.hang_ms']);
  });

  it('ignores locked keys of a disabled check', () => {
    const config = parseConfig({ checks: { 'robust-input': { enabled: false, max_tools: 3 } } }, registry);
    expect(nonStandardKeys(config, registry)).toEqual([]);
  });

  it('sees a --timeout-probe override', () => {
    const config = mergeCliOverrides(parseConfig({}, registry), { timeout_probe_sec: 30 }, registry);
    expect(nonStandardKeys(config, registry)).toEqual(['timeout_probe_sec']);
  });
});

describe('mergeCliOverrides', () => {
  const base = parseConfig({ checks: { 'tool-schemas': { enabled: false } }, env: { A: '1', B: '2' } }, registry);
  const enabled = (c: ReturnType<typeof parseConfig>): string[] =>
    Object.entries(c.checks)
      .filter(([, s]) => s.enabled)
      .map(([id]) => id);

  it('--only disables all other checks and enables the listed ones', () => {
    const c = mergeCliOverrides(base, { only: ['robust-input', 'tool-schemas'] }, registry);
    expect(enabled(c)).toEqual(['robust-input', 'tool-schemas']);
    expect(c.checks['robust-input']).toEqual({ enabled: true, hang_ms: null, max_tools: 25 });
    expect(enabled(base)).toEqual(['handshake', 'robust-input', 'protocol-errors']);
  });

  it('--skip disables the listed checks', () => {
    expect(enabled(mergeCliOverrides(base, { skip: ['handshake'] }, registry))).toEqual(['robust-input', 'protocol-errors']);
    expect(enabled(mergeCliOverrides(base, { only: ['handshake', 'robust-input'], skip: ['handshake'] }, registry))).toEqual([
      'robust-input',
    ]);
  });

  it('an unknown id names --only or --skip', () => {
    let err = thrown(() => mergeCliOverrides(base, { only: ['robust-inptu'] }, registry));
    expect(err.key).toBe('--only');
    expect(err.message).toBe('--only: unknown check id "robust-inptu" (did you mean robust-input?)');
    err = thrown(() => mergeCliOverrides(base, { skip: ['handshake', 'nope'] }, registry));
    expect(err.key).toBe('--skip');
    expect(err.message).toContain('--skip: unknown check id "nope" (known: handshake, robust-input, protocol-errors, tool-schemas)');
  });

  it('--timeout-probe and --env override the file', () => {
    const c = mergeCliOverrides(base, { timeout_probe_sec: 3, env: { B: 'cli', C: '3' } }, registry);
    expect(c.timeout_probe_sec).toBe(3);
    expect(c.env).toEqual({ A: '1', B: 'cli', C: '3' });
    expect(base.env).toEqual({ A: '1', B: '2' });
    expect(thrown(() => mergeCliOverrides(base, { timeout_probe_sec: 0 }, registry)).key).toBe('--timeout-probe');
  });
});
