/** Test helper: start an HTTP fixture server (test/fixtures/servers/http/) on loopback and stop it. */
import { spawn } from 'node:child_process';
import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checks that judge the tools: their verdicts must not depend on the transport. */
export const TOOL_CHECKS = [
  'robust-input',
  'tool-schemas',
  'armed-flags',
  'hidden-params',
  'bounded-limits',
  'oversized-input',
  'concurrency',
  'annotations',
  'tool-naming',
  'idempotency-key',
  'two-step-writes',
] as const;

export interface HttpFixture {
  /** The MCP endpoint the fixture printed, e.g. http://127.0.0.1:41234/mcp. */
  url: string;
  pid: number;
  /** What the fixture wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM, then SIGKILL after a grace period; resolves once the process has exited. Idempotent. */
  stop(): Promise<void>;
}

const LISTENING = /^listening (http:\/\/127\.0\.0\.1:\d+\/mcp)$/;
const STOP_GRACE_MS = 3_000;

/**
 * Spawns `node <file> ...args` and waits for its one stdout line `listening http://127.0.0.1:<port>/mcp`.
 * `file` is absolute, or relative to test/fixtures/servers/http/ (e.g. 'streamable.mjs').
 * `env` is added to this process's environment (e.g. FIXTURE_TOKEN, SEALMARK_CANARY_TOKEN).
 * Rejects, with the fixture's stderr, when it exits or prints something else first, or is not
 * ready within `timeoutMs`.
 */
export function startHttpFixture(
  file: string,
  args: string[] = [],
  env: Record<string, string> = {},
  timeoutMs = 15_000,
): Promise<HttpFixture> {
  const path = isAbsolute(file) ? file : fileURLToPath(new URL(`../fixtures/servers/http/${file}`, import.meta.url));
  const child = spawn(process.execPath, [path, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));

  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  // A test run that dies without calling stop() must not leave the server behind.
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      process.removeListener('exit', killOnExit);
    })());

  const name = `${file}${args.length ? ` ${args.join(' ')}` : ''}`;
  return new Promise<HttpFixture>((resolve, reject) => {
    let settled = false;
    const fail = (why: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void stop().then(() => reject(new Error(`HTTP fixture ${name} ${why}${stderr ? `\nstderr:\n${stderr}` : ' (stderr empty)'}`)));
    };
    const timer = setTimeout(() => fail(`printed no listening line within ${timeoutMs} ms`), timeoutMs);
    child.once('error', (e) => fail(`could not be started: ${e.message}`));
    child.once('exit', (code, signal) => fail(`exited (code ${code}, signal ${signal}) before it was listening`));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      if (settled) return; // later stdout is drained and ignored
      stdout += d;
      const nl = stdout.indexOf('\n');
      if (nl < 0) return;
      const line = stdout.slice(0, nl).trim();
      const m = LISTENING.exec(line);
      if (!m) return fail(`printed ${JSON.stringify(line)} instead of its listening line`);
      settled = true;
      clearTimeout(timer);
      resolve({ url: m[1]!, pid: child.pid!, stderr: () => stderr, stop });
    });
  });
}
