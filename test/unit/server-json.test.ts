/**
 * server.json (src/target/server-json.ts): reading and checking the registry's format (schema
 * 2025-12-11, the list API's `{server, _meta}` items), and the plan VS Code's
 * `getMcpServerConfigurationFromManifest` mapping gives for each fixture in
 * test/fixtures/server-json/: the exact argv, env, secret names and outcome kind.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { recognizeLauncher } from '../../src/target/launch.js';
import {
  parseServerJson,
  planServerJson,
  readServerJson,
  serverJsonLaunch,
  type ServerJson,
  type ServerJsonPlan,
  type ServerJsonPlanOptions,
} from '../../src/target/server-json.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'server-json');
const fixture = (name: string): ServerJson => readServerJson(join(FIXTURES, name));

/** A canary that says whose it is, and a record of every one handed out. */
function canaries(): { canary: (name: string) => string; given: string[] } {
  const given: string[] = [];
  return { given, canary: (name) => (given.push(name), `CANARY_${name}`) };
}

function plan(doc: ServerJson, opts: Partial<ServerJsonPlanOptions> = {}): ServerJsonPlan {
  return planServerJson(doc, { canary: (n) => `CANARY_${n}`, ...opts });
}

function pkg(p: ServerJsonPlan): Extract<ServerJsonPlan, { kind: 'package' }> {
  if (p.kind !== 'package') throw new Error(`expected a package plan, got ${JSON.stringify(p)}`);
  return p;
}

function remote(p: ServerJsonPlan): Extract<ServerJsonPlan, { kind: 'remote' }> {
  if (p.kind !== 'remote') throw new Error(`expected a remote plan, got ${JSON.stringify(p)}`);
  return p;
}

/** The UsageError message `fn` throws (fails when it throws nothing or something else). */
function usage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error('expected a UsageError');
}

const tmp = mkdtempSync(join(tmpdir(), 'sealmark-server-json-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
function file(name: string, text: string): string {
  const path = join(tmp, name);
  writeFileSync(path, text);
  return path;
}

describe('npm package with named and positional arguments and a required secret', () => {
  it('maps to npx -y id@version with defaults filled, the required flag alone, optional inputs left out', () => {
    const c = canaries();
    const p = pkg(planServerJson(fixture('npm.json'), { canary: c.canary }));
    expect(p.index).toBe(0);
    expect(p.package).toEqual({ ecosystem: 'npm', name: '@fixture/echo-server', version: '1.0.0' });
    expect(p.runtimeArgs).toEqual([]);
    // A value with a space stays one argv word; --verbose (optional flag) is left out.
    expect(p.args).toEqual(['--log-level', 'info', './echo data', '--read-only']);
    expect(p.command).toEqual(['npx', '-y', '@fixture/echo-server@1.0.0', '--log-level', 'info', './echo data', '--read-only']);
    expect(p.env).toEqual({ ECHO_API_KEY: 'CANARY_ECHO_API_KEY', ECHO_MODE: 'test' });
    expect(p.secretNames).toEqual(['ECHO_API_KEY']);
    expect(c.given).toEqual(['ECHO_API_KEY']);
    expect(p.transport).toEqual({ type: 'stdio' });
    expect(p.notes).toEqual([
      'packages[0].environmentVariables[2] (ECHO_CACHE_DIR) left out: optional, with no value or default',
      'packages[0].packageArguments[3] (--verbose) left out: an optional flag with no value',
    ]);
  });

  it('reads back through launch.ts as the same package and arguments', () => {
    const p = pkg(plan(fixture('npm.json')));
    const launch = recognizeLauncher(p.command[0]!, p.command.slice(1));
    expect(launch?.package).toEqual(p.package);
    expect(launch?.args).toEqual(p.args);
    expect(serverJsonLaunch(p)).toEqual({ package: p.package, args: p.args, launcher: '--server-json' });
  });

  it('takes the user\'s values over defaults and canaries, and passes other --env names on', () => {
    const p = pkg(plan(fixture('npm.json'), { given: { 'log-level': 'debug', data_dir: '/srv/data', ECHO_API_KEY: 'real-key', ECHO_CACHE_DIR: '/c', EXTRA: '1' } }));
    expect(p.args).toEqual(['--log-level', 'debug', '/srv/data', '--read-only']);
    expect(p.env).toEqual({ ECHO_API_KEY: 'real-key', ECHO_MODE: 'test', ECHO_CACHE_DIR: '/c', EXTRA: '1' });
    // A secret the user gave is still a secret.
    expect(p.secretNames).toEqual(['ECHO_API_KEY']);
  });
});

describe('pypi package', () => {
  it('maps to uvx id==version, with a {variable} filled from its default', () => {
    const p = pkg(plan(fixture('pypi.json')));
    expect(p.package).toEqual({ ecosystem: 'pypi', name: 'fixture-echo-server', version: '1.0.0' });
    expect(p.args).toEqual(['--mode=stdio']);
    expect(p.command).toEqual(['uvx', 'fixture-echo-server==1.0.0', '--mode=stdio']);
    expect(p.env).toEqual({ ECHO_LOG_LEVEL: 'debug' });
    expect(p.secretNames).toEqual([]);
    expect(p.notes).toEqual([]);
    expect(recognizeLauncher('uvx', p.command.slice(1))?.package).toEqual(p.package);
  });

  it('a given variable value beats its default; a publisher\'s fixed value beats --env (noted)', () => {
    const p = pkg(plan(fixture('pypi.json'), { given: { mode: 'http', ECHO_LOG_LEVEL: 'warn' } }));
    expect(p.args).toEqual(['--mode=http']);
    expect(p.env).toEqual({ ECHO_LOG_LEVEL: 'debug' });
    expect(p.notes).toEqual(['--env ECHO_LOG_LEVEL not used for the environment variable ECHO_LOG_LEVEL: server.json fixes its value']);
  });

  it('a --env value for an argument whose value is fixed is not used, and not passed on as env', () => {
    const p = pkg(plan(fixture('oci.json'), { given: { mode: 'http' } }));
    expect(p.args).toEqual(['--mode', 'stdio']);
    expect(p.env).toEqual({ ECHO_TOKEN: 'CANARY_ECHO_TOKEN', ECHO_MODE: 'test' });
    expect(p.notes).toEqual(['--env mode not used for the argument --mode: server.json fixes its value']);
  });
});

describe('oci package', () => {
  it('maps to docker run -i --rm [runtime args] -e NAME… image [args], the tag from the identifier', () => {
    const p = pkg(plan(fixture('oci.json')));
    expect(p.package).toEqual({ ecosystem: 'oci', name: 'ghcr.io/fixture/echo-server', version: '1.0.0' });
    expect(p.runtimeArgs).toEqual(['-v', '/tmp/echo data:/data']);
    expect(p.args).toEqual(['--mode', 'stdio']);
    expect(p.env).toEqual({ ECHO_TOKEN: 'CANARY_ECHO_TOKEN', ECHO_MODE: 'test' });
    expect(p.secretNames).toEqual(['ECHO_TOKEN']);
    expect(p.command).toEqual(['docker', 'run', '-i', '--rm', '-v', '/tmp/echo data:/data', '-e', 'ECHO_TOKEN', '-e', 'ECHO_MODE', 'ghcr.io/fixture/echo-server:1.0.0', '--mode', 'stdio']);
    expect(p.notes).toEqual([]);
    const launch = recognizeLauncher('docker', p.command.slice(1));
    expect(launch?.package).toEqual(p.package);
    expect(launch?.args).toEqual(p.args);
    expect(serverJsonLaunch(p).runtimeArgs).toEqual(launch?.runtimeArgs);
  });

  it('appends version only to an identifier without a tag; a digest is kept and the version ignored', () => {
    const doc = fixture('oci.json');
    const untagged = pkg(plan(doc, { packageIndex: 1 }));
    expect(untagged.index).toBe(1);
    expect(untagged.command).toEqual(['docker', 'run', '-i', '--rm', 'docker.io/fixture/echo-server:1.0.0']);
    const digest = pkg(plan(doc, { packageIndex: 2 }));
    expect(digest.package.version).toBe('sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef');
    expect(digest.command.at(-1)).toBe('ghcr.io/fixture/echo-server@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef');
    expect(digest.notes).toEqual(['packages[2].version 1.0.0 ignored: the identifier carries its own digest']);
  });

  it('given names that no input uses reach the container with -e', () => {
    const p = pkg(plan(fixture('oci.json'), { packageIndex: 1, given: { EXTRA: 'x' } }));
    expect(p.env).toEqual({ EXTRA: 'x' });
    expect(p.command).toEqual(['docker', 'run', '-i', '--rm', '-e', 'EXTRA', 'docker.io/fixture/echo-server:1.0.0']);
  });
});

describe('needs-config', () => {
  it('a required non-secret environment variable with no default, and a required positional argument', () => {
    const p = plan(fixture('needs-config.json'));
    expect(p).toEqual({
      kind: 'needs-config',
      index: 0,
      variable: 'ECHO_DB_URL',
      where: 'packages[0].environmentVariables',
      message: 'needs-config: packages[0] requires the environment variable ECHO_DB_URL (no default): give it with --env ECHO_DB_URL=VALUE; also needed: --env workspace=VALUE',
    });
  });

  it('names the one still missing once the other is given', () => {
    expect(plan(fixture('needs-config.json'), { given: { workspace: '/w' } })).toEqual({
      kind: 'needs-config',
      index: 0,
      variable: 'ECHO_DB_URL',
      where: 'packages[0].environmentVariables',
      message: 'needs-config: packages[0] requires the environment variable ECHO_DB_URL (no default): give it with --env ECHO_DB_URL=VALUE',
    });
    expect(plan(fixture('needs-config.json'), { given: { ECHO_DB_URL: 'postgres://db' } })).toMatchObject({
      kind: 'needs-config',
      variable: 'workspace',
      where: 'packages[0].packageArguments',
      message: 'needs-config: packages[0] requires the argument workspace (no default): give it with --env workspace=VALUE',
    });
  });

  it('runs once every required input is given', () => {
    const p = pkg(plan(fixture('needs-config.json'), { given: { workspace: '/my work', ECHO_DB_URL: 'postgres://db' } }));
    expect(p.command).toEqual(['npx', '-y', '@fixture/echo-server@1.0.0', '/my work']);
    expect(p.env).toEqual({ ECHO_DB_URL: 'postgres://db', ECHO_MODE: 'test' });
    expect(p.secretNames).toEqual([]);
  });

  it('a required named argument that takes a value (choices), and a required variable inside a value', () => {
    const doc = parseServerJson(
      {
        name: 'io.github.fixture/x',
        version: '1.0.0',
        packages: [
          {
            registryType: 'npm',
            identifier: '@fixture/echo-server',
            version: '1.0.0',
            transport: { type: 'stdio' },
            packageArguments: [
              { type: 'named', name: '--region', isRequired: true, choices: ['eu', 'us'] },
              { type: 'positional', value: '--root={root}', variables: { root: { isRequired: true } } },
            ],
          },
        ],
      },
      'inline',
    );
    expect(plan(doc)).toEqual({
      kind: 'needs-config',
      index: 0,
      variable: 'region',
      where: 'packages[0].packageArguments',
      message: 'needs-config: packages[0] requires the argument --region (no default; one of "eu", "us"): give it with --env region=VALUE; also needed: --env root=VALUE',
    });
    expect(plan(doc, { given: { region: 'us' } })).toMatchObject({
      variable: 'root',
      where: 'packages[0].packageArguments[1].variables',
      message: 'needs-config: packages[0] requires the variable root of packages[0].packageArguments[1] (no default): give it with --env root=VALUE',
    });
    expect(pkg(plan(doc, { given: { region: 'us', root: '/r' } })).args).toEqual(['--region', 'us', '--root=/r']);
  });
});

describe('remotes', () => {
  it('fills URL and header variables: a secret variable gets a canary inside the header value', () => {
    const c = canaries();
    const p = remote(planServerJson(fixture('remote.json'), { canary: c.canary }));
    expect(p).toEqual({
      kind: 'remote',
      index: 0,
      type: 'streamable-http',
      url: 'https://mcp.example.com/eu/mcp',
      headers: { Authorization: 'Bearer CANARY_api_key', 'X-Client': 'sealmark' },
      secretNames: ['Authorization'],
      notes: ['remotes[0].headers[2] (X-Trace) left out: optional, with no value or default'],
    });
    expect(c.given).toEqual(['api_key']);
  });

  it('a required URL variable and a required header with no value are needs-config', () => {
    expect(plan(fixture('remote.json'), { remoteIndex: 1 })).toEqual({
      kind: 'needs-config',
      index: 1,
      variable: 'tenant_id',
      where: 'remotes[1].variables',
      message: 'needs-config: remotes[1] requires the URL variable tenant_id (no default): give it with --env tenant_id=VALUE; also needed: --env X-Workspace=VALUE',
    });
    expect(plan(fixture('remote.json'), { remoteIndex: 1, given: { tenant_id: 'acme' } })).toMatchObject({
      kind: 'needs-config',
      variable: 'X-Workspace',
      where: 'remotes[1].headers',
      message: 'needs-config: remotes[1] requires the header X-Workspace (no default): give it with --env X-Workspace=VALUE',
    });
    expect(remote(plan(fixture('remote.json'), { remoteIndex: 1, given: { tenant_id: 'acme', 'X-Workspace': 'w1' } }))).toMatchObject({
      type: 'sse',
      url: 'https://acme.mcp.example.com/sse',
      headers: { 'X-Workspace': 'w1' },
      secretNames: [],
    });
  });

  it('a document with remotes only plans its first remote by default; a draft URL may start with a variable', () => {
    const doc = parseServerJson(
      {
        $schema: 'https://static.modelcontextprotocol.io/schemas/draft/server.schema.json',
        name: 'com.example/x',
        version: '1',
        remotes: [{ type: 'streamable-http', url: '{baseUrl}/mcp', variables: { baseUrl: { isRequired: true } } }],
      },
      'inline',
    );
    expect(plan(doc, { given: { baseUrl: 'https://mcp.example.com' } })).toEqual({
      kind: 'remote',
      index: 0,
      type: 'streamable-http',
      url: 'https://mcp.example.com/mcp',
      headers: {},
      secretNames: [],
      notes: ["$schema is the registry's unreleased draft: read by the 2025-12-11 rules and the draft's additions"],
    });
    expect(plan(doc, { given: { baseUrl: 'ftp://x' } })).toEqual({
      kind: 'not-runnable',
      index: 0,
      message: 'not-runnable: remotes[0].url is "ftp://x/mcp" once its variables are filled: not an http(s) URL',
    });
  });
});

describe('a package that serves HTTP itself', () => {
  it('substitutes its transport URL from its own arguments; notes the unknown $schema date', () => {
    const p = pkg(plan(fixture('http-package.json')));
    expect(p.command).toEqual(['npx', '-y', '@fixture/echo-server@1.0.0', '--port', '8080']);
    expect(p.transport).toEqual({ type: 'streamable-http', url: 'http://localhost:8080/mcp', headers: { 'X-Echo-Key': 'CANARY_ECHO_KEY' } });
    expect(p.secretNames).toEqual(['X-Echo-Key']);
    expect(p.notes).toEqual([
      '$schema 2026-07-29 is a schema date sealmark does not know (newest known: 2025-12-11): read by the 2025-12-11 rules, unknown fields ignored',
      'packages[0] serves streamable-http at http://localhost:8080/mcp: started first, then reached by URL',
    ]);
    expect(pkg(plan(fixture('http-package.json'), { given: { port: '9000' } })).transport).toMatchObject({ url: 'http://localhost:9000/mcp' });
  });
});

describe('the registry list API item', () => {
  it('takes .server and keeps the official metadata', () => {
    const doc = fixture('list-item.json');
    expect(doc.name).toBe('io.github.fixture/echo-server');
    expect(doc.official).toEqual({ status: 'active', publishedAt: '2025-12-12T10:00:00Z', updatedAt: '2025-12-12T10:00:00Z', isLatest: true });
    expect(pkg(plan(doc)).command).toEqual(['npx', '-y', '@fixture/echo-server@1.0.0']);
  });

  it('names fields inside the wrapper with server.', () => {
    expect(usage(() => parseServerJson({ server: { name: 'a/b', version: '1', packages: [{ identifier: 'x', transport: { type: 'stdio' } }] }, _meta: {} }, 'item.json'))).toBe(
      'item.json: server.packages[0].registryType: missing (expected a string)',
    );
  });

  it('a whole page is refused with a pointer to the fleet', () => {
    expect(usage(() => parseServerJson({ servers: [{}, {}], metadata: { nextCursor: null } }, 'page.json'))).toBe(
      "page.json: a page of the registry's list API (2 servers), not one server.json: give one item (its server object) as a file",
    );
  });
});

describe('not-runnable', () => {
  it('a NuGet package, pointing to the package sealmark can start', () => {
    expect(plan(fixture('nuget.json'))).toEqual({
      kind: 'not-runnable',
      index: 0,
      message: 'not-runnable: packages[0] (Fixture.EchoServer) is a NuGet package (VS Code starts it with dnx), which sealmark cannot start yet; this server.json also has --package-index 1 (npm)',
    });
    expect(pkg(plan(fixture('nuget.json'), { packageIndex: 1 })).command).toEqual(['npx', '-y', '@fixture/echo-server@1.0.0']);
  });

  it('mcpb, cargo, go and unknown types never throw', () => {
    for (const [registryType, what] of [
      ['mcpb', 'is an MCP bundle'],
      ['cargo', 'is a Rust crate'],
      ['go', 'is a Go module'],
      ['conda', 'is a package of registry type "conda"'],
    ] as const) {
      const doc = parseServerJson({ name: 'a/b', version: '1', packages: [{ registryType, identifier: 'x', transport: { type: 'stdio' } }] }, 'inline');
      const p = plan(doc);
      expect(p.kind).toBe('not-runnable');
      expect((p as { message: string }).message).toContain(`packages[0] (x) ${what}`);
    }
  });

  it('an unknown transport type, an identifier that is no package name, and an empty document', () => {
    const doc = parseServerJson(
      {
        name: 'a/b',
        version: '1',
        packages: [
          { registryType: 'npm', identifier: '@fixture/echo-server', version: '1', transport: { type: 'websocket' } },
          { registryType: 'npm', identifier: 'https://example.com/x.tgz', transport: { type: 'stdio' } },
        ],
      },
      'inline',
    );
    expect(plan(doc)).toEqual({ kind: 'not-runnable', index: 0, message: 'not-runnable: packages[0] serves the transport "websocket", which sealmark cannot speak (stdio, streamable-http or sse); this server.json also has --package-index 1 (npm)' });
    expect(plan(doc, { packageIndex: 1 })).toEqual({ kind: 'not-runnable', index: 1, message: 'not-runnable: packages[1].identifier "https://example.com/x.tgz" is not an npm package name' });
    expect(plan(parseServerJson({ name: 'a/b', version: '1' }, 'inline'))).toEqual({ kind: 'not-runnable', index: -1, message: 'a/b lists no packages and no remotes: nothing to start or connect to' });
  });
});

describe('the research doc\'s weather example (section 1.5)', () => {
  const doc = fixture('weather.json');
  it('npm: npx -y @example/weather-mcp@1.4.0 --units metric, with the key a canary', () => {
    const p = pkg(plan(doc));
    expect(p.command).toEqual(['npx', '-y', '@example/weather-mcp@1.4.0', '--units', 'metric']);
    expect(p.env).toEqual({ WEATHER_API_KEY: 'CANARY_WEATHER_API_KEY', LOG_LEVEL: 'info' });
    expect(p.secretNames).toEqual(['WEATHER_API_KEY']);
    expect(p.notes).toEqual([]);
  });
  it('pypi: uvx example-weather-mcp==1.4.0', () => {
    const p = pkg(plan(doc, { packageIndex: 1 }));
    expect(p.command).toEqual(['uvx', 'example-weather-mcp==1.4.0']);
    expect(p.env).toEqual({});
    expect(p.notes).toEqual([]);
  });
  it('oci: docker run -i --rm -e WEATHER_API_KEY ghcr.io/example/weather-mcp:1.4.0', () => {
    const p = pkg(plan(doc, { packageIndex: 2 }));
    expect(p.command).toEqual(['docker', 'run', '-i', '--rm', '-e', 'WEATHER_API_KEY', 'ghcr.io/example/weather-mcp:1.4.0']);
    expect(p.env).toEqual({ WEATHER_API_KEY: 'CANARY_WEATHER_API_KEY' });
  });
  it('remote: Authorization: Bearer <canary>', () => {
    expect(plan(doc, { remoteIndex: 0 })).toEqual({
      kind: 'remote',
      index: 0,
      type: 'streamable-http',
      url: 'https://mcp.example.com/weather/mcp',
      headers: { Authorization: 'Bearer CANARY_api_key' },
      secretNames: ['Authorization'],
      notes: [],
    });
  });
});

describe('the index options', () => {
  const doc = fixture('weather.json');
  it('out of range or both given are usage errors naming the flag', () => {
    expect(usage(() => plan(doc, { packageIndex: 3 }))).toBe('--package-index 3: server.json has 3 packages (give 0 to 2)');
    expect(usage(() => plan(doc, { remoteIndex: 1 }))).toBe('--remote-index 1: server.json has 1 remote (give 0)');
    expect(usage(() => plan(doc, { packageIndex: -1 }))).toBe('--package-index -1: server.json has 3 packages (give 0 to 2)');
    expect(usage(() => plan(fixture('npm.json'), { remoteIndex: 0 }))).toBe('--remote-index 0: server.json has no remotes');
    expect(usage(() => plan(doc, { packageIndex: 0, remoteIndex: 0 }))).toBe('--package-index 0 and --remote-index 0: give one or the other');
  });
});

describe('reading and checking', () => {
  it('the malformed fixture names the file and the first wrong field', () => {
    const path = join(FIXTURES, 'malformed.json');
    expect(usage(() => readServerJson(path))).toBe(`${path}: packages[1].registryType: expected a string (got 3)`);
  });

  it('the first wrong field in file order, whatever order the schema checks in', () => {
    const raw = { version: 2, name: 'a/b', packages: [{ transport: { type: 'stdio' }, identifier: 7, registryType: 'npm' }] };
    expect(usage(() => parseServerJson(raw, 'f.json'))).toBe('f.json: version: expected a string (got 2)');
    expect(usage(() => parseServerJson({ ...raw, version: '1' }, 'f.json'))).toBe('f.json: packages[0].identifier: expected a string (got 7)');
  });

  it('field paths for arguments, booleans, variables, transports and missing fields', () => {
    const base = { name: 'a/b', version: '1' };
    const withPkg = (p: Record<string, unknown>) => ({ ...base, packages: [{ registryType: 'npm', identifier: 'x', transport: { type: 'stdio' }, ...p }] });
    expect(usage(() => parseServerJson({ version: '1' }, 'f.json'))).toBe('f.json: name: missing (expected a string)');
    expect(usage(() => parseServerJson(withPkg({ packageArguments: [{ type: 'flag', name: '--x' }] }), 'f.json'))).toBe(
      'f.json: packages[0].packageArguments[0].type: expected "positional" or "named" (got "flag")',
    );
    expect(usage(() => parseServerJson(withPkg({ packageArguments: [{ type: 'named' }] }), 'f.json'))).toBe('f.json: packages[0].packageArguments[0].name: missing (expected a string)');
    expect(usage(() => parseServerJson(withPkg({ runtimeArguments: [{ type: 'positional', default: 'x' }] }), 'f.json'))).toBe(
      'f.json: packages[0].runtimeArguments[0].valueHint: missing: a positional argument needs "value" or "valueHint"',
    );
    expect(usage(() => parseServerJson(withPkg({ environmentVariables: [{ name: 'A', isSecret: 'yes' }] }), 'f.json'))).toBe(
      'f.json: packages[0].environmentVariables[0].isSecret: expected a boolean (true or false) (got "yes")',
    );
    expect(usage(() => parseServerJson(withPkg({ environmentVariables: [{ name: 'A', value: '{x}', variables: { x: { default: 5 } } }] }), 'f.json'))).toBe(
      'f.json: packages[0].environmentVariables[0].variables.x.default: expected a string (got 5)',
    );
    expect(usage(() => parseServerJson(withPkg({ transport: { type: 'sse' } }), 'f.json'))).toBe(
      'f.json: packages[0].transport.url: missing (expected a string: a sse transport needs a url)',
    );
    expect(usage(() => parseServerJson({ ...base, remotes: [{ type: 'sse', url: 'https://x', headers: [{ value: 'v' }] }] }, 'f.json'))).toBe(
      'f.json: remotes[0].headers[0].name: missing (expected a string)',
    );
    expect(usage(() => parseServerJson({ ...base, packages: {} }, 'f.json'))).toBe('f.json: packages: expected an array (got an object)');
  });

  it('points out the snake_case names of the 2025-07-09 schema', () => {
    const raw = { name: 'a/b', version: '1', packages: [{ registry_type: 'npm', identifier: 'x' }] };
    expect(usage(() => parseServerJson(raw, 'old.json'))).toBe(
      'old.json: packages[0].registryType: missing (expected a string); the document has "registry_type", the snake_case name of the 2025-07-09 schema, renamed to "registryType" in 2025-09-16',
    );
  });

  it('files that cannot be read, are not JSON or are not objects', () => {
    const missing = join(tmp, 'nope.json');
    expect(usage(() => readServerJson(missing))).toBe(`${missing}: cannot read it (ENOENT)`);
    const bad = file('bad.json', '{"name": ');
    expect(usage(() => readServerJson(bad))).toMatch(new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not JSON \\(`));
    expect(usage(() => readServerJson(file('arr.json', '[]')))).toMatch(/: expected a server\.json object \(got an array\)$/);
  });

  it('ignores unknown fields, reads null as absent, accepts a BOM and any $schema string (noted)', () => {
    const path = file(
      'lax.json',
      '\ufeff' +
        JSON.stringify({
          $schema: 'https://example.com/my-schema.json',
          name: 'a/b',
          version: '1',
          description: null,
          futureTopLevel: [1, 2],
          packages: [{ registryType: 'npm', identifier: '@fixture/echo-server', version: '1.0.0', transport: { type: 'stdio', extra: 1 }, runtimeHint: null, futureField: {} }],
        }),
    );
    const doc = readServerJson(path);
    expect(doc).toEqual({
      $schema: 'https://example.com/my-schema.json',
      name: 'a/b',
      version: '1',
      packages: [{ registryType: 'npm', identifier: '@fixture/echo-server', version: '1.0.0', transport: { type: 'stdio' } }],
      remotes: [],
    });
    expect(pkg(plan(doc)).notes).toEqual(['$schema https://example.com/my-schema.json is not an official server.json schema URL: read by the 2025-12-11 rules']);
  });

  it('keeps documents the registry would refuse but a client can still run, with notes', () => {
    const doc = parseServerJson(
      {
        name: 'a/b',
        version: '1',
        packages: [{ registryType: 'npm', identifier: '@fixture/echo-server', version: 'latest', runtimeHint: 'bunx', registryBaseUrl: 'https://npm.example.com' }],
      },
      'inline',
    );
    const p = pkg(plan(doc));
    expect(p.command).toEqual(['npx', '-y', '@fixture/echo-server@latest']);
    expect(p.notes).toEqual([
      'packages[0] has no transport (the schema requires one): started as stdio',
      'packages[0].version "latest" is refused by the registry\'s schema: run as given',
      "packages[0].registryBaseUrl https://npm.example.com is not the public registry: the package is fetched from the registry sealmark's npx is set up with",
      'packages[0].runtimeHint "bunx" ignored: npm packages start with npx (as in VS Code)',
    ]);
  });
});

describe('templating details', () => {
  it('every occurrence of a variable is replaced; an undeclared {name} stays as written (noted)', () => {
    const doc = parseServerJson(
      {
        name: 'a/b',
        version: '1',
        packages: [
          {
            registryType: 'npm',
            identifier: '@fixture/echo-server',
            version: '1.0.0',
            transport: { type: 'stdio' },
            packageArguments: [{ type: 'positional', value: '{a}-{a}-{b}', variables: { a: { default: 'x' } } }],
          },
        ],
      },
      'inline',
    );
    const p = pkg(plan(doc));
    expect(p.args).toEqual(['x-x-{b}']);
    expect(p.notes).toEqual(['packages[0].packageArguments[0]: {b} not declared in its variables, sent as written']);
  });

  it('a secret argument gets a canary and its id is a secret name; an optional variable with no value leaves its argument out', () => {
    const doc = parseServerJson(
      {
        name: 'a/b',
        version: '1',
        packages: [
          {
            registryType: 'npm',
            identifier: '@fixture/echo-server',
            version: '1.0.0',
            transport: { type: 'stdio' },
            packageArguments: [
              { type: 'named', name: '--token', isSecret: true },
              { type: 'named', name: '--profile', value: '{profile}', variables: { profile: { description: 'optional profile' } } },
            ],
          },
        ],
      },
      'inline',
    );
    const p = pkg(plan(doc));
    expect(p.args).toEqual(['--token', 'CANARY_token']);
    expect(p.secretNames).toEqual(['token']);
    expect(p.notes).toEqual(['packages[0].packageArguments[1] (--profile) left out: optional, and its variable profile has no value or default']);
  });

  it('an isRepeated argument with one value is sent once', () => {
    const doc = parseServerJson(
      {
        name: 'a/b',
        version: '1',
        packages: [{ registryType: 'npm', identifier: 'x', version: '1', transport: { type: 'stdio' }, packageArguments: [{ type: 'named', name: '--dir', value: '/a', isRepeated: true }] }],
      },
      'inline',
    );
    expect(pkg(plan(doc)).args).toEqual(['--dir', '/a']);
  });
});
