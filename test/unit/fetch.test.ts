/**
 * Pieces of the fetch phase that need no registry (src/target/fetch.ts): the order of versions
 * npm lists for a range (npx takes the highest), and what an interrupted install leaves.
 */
import { describe, expect, it } from 'vitest';
import { compareSemver } from '../../src/target/fetch.js';

describe('compareSemver', () => {
  it('orders what npm view lists for a range as npx picks from it: the highest last', () => {
    // As the registry answered `npm view @modelcontextprotocol/server-memory@^2025 version --json`.
    const listed = ['2025.11.25', '2025.4.25', '2025.8.4', '2025.9.25'];
    expect([...listed].sort(compareSemver)).toEqual(['2025.4.25', '2025.8.4', '2025.9.25', '2025.11.25']);
  });

  it('puts a pre-release before its release, and orders pre-release fields', () => {
    expect(['1.0.0', '1.0.0-rc.10', '1.0.0-rc.2', '1.0.0-alpha', '0.9.9', '1.0.0-rc.2+build'].sort(compareSemver)).toEqual(['0.9.9', '1.0.0-alpha', '1.0.0-rc.2', '1.0.0-rc.2+build', '1.0.0-rc.10', '1.0.0']);
  });
});
