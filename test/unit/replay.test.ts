/**
 * Replay lines' `--env` flags (src/replay.ts `envReplayFlags`): a plain value is written out, so
 * the replay runs with what the audit used; a secret (by name or by value) is left to the
 * replaying environment, as the redactor leaves it out of reports.
 */
import { describe, expect, it } from 'vitest';
import { envReplayFlags, replayLine } from '../../src/replay.js';

describe('envReplayFlags', () => {
  it('writes NAME=value for paths, flags, numbers and short words; a bare NAME for secrets', () => {
    expect(
      envReplayFlags({
        MEMORY_FILE_PATH: '/some/path/memory.jsonl',
        DEBUG: '1',
        PORT: '8080',
        MODE: 'limit',
        READ_ONLY: 'true',
        API_TOKEN: 'abc',
        DB_PASSWORD: '/looks/like/a/path',
        UPSTREAM: 'x7Qp2LmN9vRt',
        NOTE: 'two\nlines',
      }),
    ).toEqual([
      '--env', 'MEMORY_FILE_PATH=/some/path/memory.jsonl',
      '--env', 'DEBUG=1',
      '--env', 'PORT=8080',
      '--env', 'MODE=limit',
      '--env', 'READ_ONLY=true',
      '--env', 'API_TOKEN',
      '--env', 'DB_PASSWORD',
      '--env', 'UPSTREAM',
      '--env', 'NOTE',
    ]);
  });

  it('is shell-quoted in the replay line', () => {
    const line = replayLine('read', {}, ['node', 'server.js'], envReplayFlags({ FILE_PATH: "/tmp/it's/m.jsonl", API_KEY: 'sk-live-123456789' }));
    expect(line).toBe(`sealmark call --env 'FILE_PATH=/tmp/it'\\''s/m.jsonl' --env API_KEY --tool read --args '{}' -- node server.js`);
  });
});
