/**
 * Replay lines: every finding that comes from a call ends with a command that repeats it
 * (STYLE, the Schemathesis lesson), e.g.
 * `sealmark call --tool search --args '{"q":12345}' -- node server.js`.
 */

/** Quotes one word for a POSIX shell: bare when it is safe, else in single quotes. */
export function shellQuote(word: string): string {
  if (word !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The `sealmark call` line for a tools/call of `tool` with `args` (the `--args` flag is left out
 * when the call omitted `arguments`), against the stdio command `command` (empty for a server
 * reached by URL, whose `--url` is then in `flags`). `flags` go before the
 * tool (e.g. `--config sealmark.config.yaml`, `--env API_KEY`: a bare name, so the value is read
 * from the environment and no secret is printed). `rawArgs`, when the call wrote its arguments as
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
