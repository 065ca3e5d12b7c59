/** Test helper: run the built CLI (`node bin/sealmark.js`, needs a fresh dist/) and collect what it printed. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { shellQuote } from '../../src/replay.js';
import { root } from './run.js';

/** The CLI's entry point in this checkout. */
export const BIN = join(root, 'bin', 'sealmark.js');

/** What a finished process left: its exit code (null when a signal ended it), that signal, and its whole output. */
export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Working directory; default the repository root. */
  cwd?: string;
  /** Added to this process's environment and NO_COLOR=1 (and may override them); a variable given as undefined is removed. */
  env?: Record<string, string | undefined>;
  /** Run this shell line with `sh -c` instead (args are then not used); a leading `sealmark ` becomes this checkout's binary, as {@link cliLine}. */
  shell?: string;
  /** 'ignore': stdin is /dev/null; default a pipe that is never written nor closed (as `spawn` gives). */
  stdin?: 'pipe' | 'ignore';
}

/** A `sealmark …` command line (a finding's replay line, say) with this checkout's binary in place of its leading `sealmark `. */
export function cliLine(line: string): string {
  return line.replace(/^sealmark /, `${shellQuote(process.execPath)} ${shellQuote(BIN)} `);
}

/**
 * Runs `node bin/sealmark.js …args` (or, with `shell`, a shell line) and resolves once it has
 * exited, with its exit code and its stdout and stderr as text. Rejects only when it cannot start.
 */
export function runCli(args: string[], opts: CliOptions = {}): Promise<CliRun> {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...opts.env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  const [command, argv] = opts.shell !== undefined ? ['sh', ['-c', cliLine(opts.shell)]] : [process.execPath, [BIN, ...args]];
  return collectOutput(spawn(command, argv, { cwd: opts.cwd ?? root, env, stdio: [opts.stdin ?? 'pipe', 'pipe', 'pipe'] }));
}

/** Collects a spawned process's piped stdout and stderr as text; resolves once it has closed, rejects when it could not start. */
export function collectOutput(child: ChildProcess): Promise<CliRun> {
  running.add(child);
  child.once('close', () => running.delete(child));
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/**
 * A limiter: `limit(fn)` runs `fn` once fewer than `n` functions given to this limiter are running,
 * so that a test file starts at most `n` sealmark processes at once (a starved server on two cores
 * would look like a hang).
 */
export function concurrencyLimit(n: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    while (active >= n) await new Promise<void>((r) => waiting.push(r));
    active += 1;
    try {
      return await fn();
    } finally {
      active -= 1;
      waiting.shift()?.();
    }
  };
}

/** Processes started through {@link collectOutput} that have not closed yet. */
const running = new Set<ChildProcess>();

/**
 * Ends every process a test started through {@link collectOutput} and left running (a test that
 * timed out does not end the sealmark it was waiting for): SIGTERM, so that sealmark stops its
 * servers and removes its scratch folders, then SIGKILL after `graceMs`. Run after each test file
 * (test/helpers/setup.ts).
 */
export async function endLeftoverProcesses(graceMs = 3000): Promise<number> {
  const left = [...running].filter((c) => c.exitCode === null && c.signalCode === null);
  await Promise.all(
    left.map(
      (c) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            c.kill('SIGKILL');
            resolve();
          }, graceMs);
          c.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
          c.kill('SIGTERM');
        }),
    ),
  );
  return left.length;
}
