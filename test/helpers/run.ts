/** Test helpers: run real audits against fixture servers and pick results out of the report. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { audit } from '../../src/audit.js';
import { checks } from '../../src/checks/index.js';
import { ARGUMENT_CANARY } from '../../src/secrets.js';
import { configRegistry } from '../../src/config/defaults.js';
import { parseConfig } from '../../src/config/schema.js';
import type { Report, ReportCheck } from '../../src/report/build.js';
import type { Finding } from '../../src/types.js';

export const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Config that switches off the checks of the later packs that make calls of their own or need
 * other gatherers' calls (limits; design's annotations, idempotency-key, two-step-writes), for tests about the core and effects
 * checks, where they would only add calls.
 */
export const LATER_PACKS_OFF = {
  'bounded-limits': { enabled: false },
  'oversized-input': { enabled: false },
  concurrency: { enabled: false },
  annotations: { enabled: false },
  'idempotency-key': { enabled: false },
  'two-step-writes': { enabled: false },
  'secret-echo': { enabled: false },
} as const;

/** Probe ids of the limits pack's calls (bounded-limits, oversized-input, concurrency), from their meta. */
export const LIMITS_PROBES: ReadonlySet<string> = new Set(
  checks.filter((c) => c.meta.pack === 'limits').flatMap((c) => c.meta.probes.filter((p) => !p.part).map((p) => p.id)),
);

/** Absolute path of a fixture server file. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`../fixtures/servers/${name}`, import.meta.url));
}

/** The command that starts a fixture: node for .mjs, python3 for .py. */
export function fixtureCommand(name: string): { command: string; args: string[] } {
  return name.endsWith('.py') ? { command: 'python3', args: [fixture(name)] } : { command: process.execPath, args: [fixture(name)] };
}

/** Audits a fixture with a config built from `raw` (as a sealmark.config.json would hold it). */
export async function auditFixture(
  name: string,
  raw: Record<string, unknown> = {},
  extraArgs: string[] = [],
  opts: { sandbox?: boolean; cwd?: string; allowEffects?: boolean } = {},
): Promise<Report> {
  const { command, args } = fixtureCommand(name);
  // Without the sandbox a server runs in a directory of its own, never in the repository.
  const own = opts.cwd === undefined && opts.sandbox === false ? mkdtempSync(join(tmpdir(), 'sealmark-nosandbox-')) : undefined;
  try {
    const report = await audit({ command, args: [...args, ...extraArgs], config: parseConfig(raw, configRegistry()), sandbox: opts.sandbox, cwd: opts.cwd ?? own, allowEffects: opts.allowEffects });
    expectNoCanary(report, name);
    return report;
  } finally {
    if (own) rmSync(own, { recursive: true, force: true });
  }
}

/**
 * SPEC section 8: no report ever carries a canary (the environment canaries or the argument
 * canary). Every audit of a fixture is held to it; throws naming the fixture.
 */
export function expectNoCanary(report: unknown, name: string): void {
  const text = JSON.stringify(report);
  if (/smk_env_[0-9a-f]{24}/.test(text) || text.includes(ARGUMENT_CANARY)) throw new Error(`the report of ${name} contains a canary in clear`);
}

/** The result of one check; throws when the check is not in the report. */
export function checkOf(report: Report, id: string): ReportCheck {
  const c = report.checks.find((x) => x.id === id);
  if (!c) throw new Error(`check ${id} not in report`);
  return c;
}

/** Findings of a check with this message id. */
export function findingsOf(report: Report, id: string, messageId: string): Finding[] {
  return checkOf(report, id).findings.filter((f) => f.messageId === messageId);
}

/** Message ids of a check's findings at levels fail/partial (sorted, unique). */
export function graded(report: Report, id: string): string[] {
  return [...new Set(checkOf(report, id).findings.filter((f) => f.level !== 'info').map((f) => f.messageId))].sort();
}
