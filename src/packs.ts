/**
 * Packs: groups of checks scored together (SPEC sections 1 and 6). A check's own `meta.pack`
 * must agree with this table (a test checks it).
 */
import type { PackId } from './types.js';

export interface PackInfo {
  id: PackId;
  title: string;
  /** Check ids in the pack, in report order. Checks of later milestones are listed when they land. */
  checks: string[];
}

export const packs: readonly PackInfo[] = [
  { id: 'core', title: 'Core protocol and input hygiene', checks: ['handshake', 'robust-input', 'strict-arguments', 'protocol-errors', 'tool-schemas'] },
  { id: 'effects', title: 'Side effects a careless caller can arm', checks: ['armed-flags', 'default-call-effects', 'filler-call-effects', 'hidden-params'] },
  { id: 'limits', title: 'Limits: counts, sizes and load a careless caller sends', checks: ['bounded-limits', 'oversized-input', 'concurrency'] },
  { id: 'design', title: 'Design: tools say what they do', checks: ['annotations', 'tool-naming', 'idempotency-key', 'two-step-writes'] },
  { id: 'secrets', title: 'Secrets stay out of replies', checks: ['secret-echo'] },
];
