/**
 * Replay lines: every finding that comes from a call ends with a command that repeats it
 * (STYLE, the Schemathesis lesson), e.g.
 * `sealmark call --tool search --args '{"q":12345}' -- node server.js`.
 */
import { isSecret } from './redact.js';
import { namedLikeCredential } from './secrets.js';

/** Quotes one word for a POSIX shell: bare when it is safe, else in single quotes. */
export function shellQuote(word: string): string {
  if (word !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The `--env` flags of a replay line for the variables the audit handed the server (`--env`), in
 * their order: `['--env', 'NAME=value']` when the value is no secret (what the redactor leaves in
 * reports, src/redact.ts `isSecret`: a path, a flag, a number, a short word), so the replay runs
 * with the value the audit used and not with whatever a fresh shell holds; a bare
 * `['--env', 'NAME']` (`call` reads the value from the replaying environment, so no secret is
 * printed) when the name reads as a credential (src/secrets.ts `namedLikeCredential`), the value is
 * secret-like, or it holds a control character (a line could not be pasted). {@link replayLine}
 * shell-quotes each word: `--env 'NOTE=it'\''s'`.
 */
export function envReplayFlags(env: Readonly<Record<string, string>>): string[] {
  return Object.entries(env).flatMap(([name, value]) => {
    const bare = namedLikeCredential(name) || isSecret(name, value) || /[\u0000-\u001f\u007f]/.test(value);
    return ['--env', bare ? name : `${name}=${value}`];
  });
}

/**
 * The `sealmark call` line for a tools/call of `tool` with `args` (the `--args` flag is left out
 * when the call omitted `arguments`), against the stdio command `command` (empty for a server
 * reached by URL, whose `--url` is then in `flags`). `flags` go before the
 * tool (e.g. `--config sealmark.config.yaml`, and the `--env` flags of {@link envReplayFlags}). `rawArgs`, when the call wrote its arguments as
 * raw text (`{"limit":NaN}`), replaces `args` and is replayed with `--raw-args`.
 */
export function replayLine(tool: string, args: unknown, command: string[], flags: string[] = [], rawArgs?: string): string {
  const parts = ['sealmark', 'call', ...flags.map(shellQuote), '--tool', shellQuote(tool)];
  if (rawArgs !== undefined) parts.push('--raw-args', shellQuote(rawArgs));
  else if (args !== undefined) parts.push('--args', shellQuote(JSON.stringify(args)));
  // A server reached by URL has no command: its `--url` is among the flags.
  if (command.length > 0) parts.push('--', ...command.map(shellQuote));
  return parts.join(' ');
}

/**
 * The `sealmark call --raw-params <text>` line: a tools/call whose whole params member was written
 * as `rawParams` (protocol-errors' array-params probe sends `[]`), against `command` with `flags`
 * as in {@link replayLine}; with `method`, a request of that method instead of tools/call
 * (`--method sealmark/no-such-method --raw-params '{}'`, the unknown-method probe).
 */
export function rawParamsReplayLine(rawParams: string, command: string[], flags: string[] = [], method?: string): string {
  const parts = ['sealmark', 'call', ...flags.map(shellQuote), ...(method !== undefined ? ['--method', shellQuote(method)] : []), '--raw-params', shellQuote(rawParams)];
  if (command.length > 0) parts.push('--', ...command.map(shellQuote));
  return parts.join(' ');
}
