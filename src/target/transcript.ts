/**
 * The transcript: every JSON-RPC message both ways as JSON lines (SPEC section 2, `--transcript`).
 * One line: `{"t": ISO-8601 time, "ms": ms since the session started, "dir": "send"|"recv", "message": …}`,
 * with `"instance": n` after `ms` when the audit ran several instances of the server (`--instances`;
 * each instance's sessions count `ms` from their own start).
 * A message sent as raw text (not JSON.stringify-able) is kept as `{"raw": "<text>"}`.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { Redactor } from '../redact.js';

export class Transcript {
  private fd: number | undefined;

  /**
   * Opens `path` for writing (truncating it, or appending with `append`: a restarted server's
   * messages follow the first start's); no path means no transcript. Secrets known to `redactor`
   * never reach the file. Throws on an unwritable path.
   */
  constructor(
    path?: string,
    private readonly redactor: Redactor = new Redactor(),
    append = false,
    private readonly instance?: number,
  ) {
    if (!path) return;
    // Always appended to (after truncating a new one): the instances of one audit write the same
    // file, each through a descriptor of its own, and a plain write offset would overwrite theirs.
    if (!append) closeSync(openSync(path, 'w'));
    this.fd = openSync(path, 'a');
  }

  /** Appends one message. `atMs` is ms since the session started. */
  write(dir: 'send' | 'recv', message: unknown, atMs: number): void {
    if (this.fd === undefined) return;
    const at = this.instance === undefined ? { ms: atMs } : { ms: atMs, instance: this.instance };
    const line = JSON.stringify({ t: new Date().toISOString(), ...at, dir, message: this.redactor.value(message) });
    writeSync(this.fd, line + '\n');
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}
