/**
 * The notes of the effects checks on what the sandbox could not see (effects-common.ts
 * unseenWrites). Found by a breaker: a server pointed into /dev/shm/data had that folder overlaid,
 * and the note still said only that writes under /dev/shm were not seen.
 */
import { describe, expect, it } from 'vitest';
import { unseenWrites } from '../../src/checks/effects-common.js';
import type { Artifacts } from '../../src/checks/check.js';

const withIsolation = (isolation: unknown) => ({ isolation }) as unknown as Artifacts;

describe('unseenWrites', () => {
  it('names a covered folder inside an uncovered one', () => {
    const a = withIsolation({
      kind: 'sandbox',
      network: 'namespace',
      filesystem: 'overlay',
      protected: ['/tmp', '/dev/shm/data', '/home/u'],
      unprotected: [
        { path: '/', why: 'new entries at the root cannot be overlaid' },
        { path: '/dev/shm', why: "shared memory, which holds the overlay's own upper layers" },
        { path: '/run', why: 'a runtime file system' },
      ],
    });
    expect(unseenWrites(a)).toEqual([
      'writes under / were not seen: new entries at the root cannot be overlaid',
      "writes under /dev/shm were not seen (except under /dev/shm/data, which the copy-on-write filesystem covered): shared memory, which holds the overlay's own upper layers",
      'writes under /run were not seen: a runtime file system',
    ]);
  });

  it('says every write outside the scratch folders went unseen without the overlay, and nothing without a sandbox', () => {
    expect(unseenWrites(withIsolation({ kind: 'sandbox', filesystem: 'scratch', protected: [], unprotected: [] }))).toEqual([
      'no copy-on-write filesystem: writes outside the scratch HOME and working directory were not seen (see the sandbox line)',
    ]);
    expect(unseenWrites(withIsolation(undefined))).toEqual([]);
  });
});
