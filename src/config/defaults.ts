/**
 * The config registry built from the checks' own data (a check's `meta.config` entries under
 * `checks.<id>.`), so the config schema never lists check keys by hand.
 */
import { z } from 'zod';
import { checks } from '../checks/index.js';
import type { CheckConfigKey } from '../checks/check.js';
import { nonStandardKeys, parseConfig, type ConfigCheckSpec, type ResolvedConfig } from './schema.js';

/** One entry per check: its id and its `checks.<id>.<key>` keys with their zod schemas. */
export function configRegistry(): ConfigCheckSpec[] {
  return checks.map((c) => {
    const prefix = `checks.${c.meta.id}.`;
    return {
      id: c.meta.id,
      messageIds: Object.keys(c.meta.messages),
      keys: c.meta.config
        .filter((k) => k.key.startsWith(prefix))
        .map((k) => {
          if (!k.value) throw new Error(`check ${c.meta.id}: config key ${k.key} has no value description`);
          return { name: k.key.slice(prefix.length), schema: zodOf(k.value), default: k.default, standard: k.standard };
        }),
    };
  });
}

/** The config with every default applied (no file, no flags). */
export function defaultConfig(): ResolvedConfig {
  return parseConfig({}, configRegistry());
}

/** Locked settings changed from their defaults (SPEC section 1): empty for a standard run. */
export function nonStandardKeysOf(config: ResolvedConfig): string[] {
  return nonStandardKeys(config, configRegistry());
}

/** The zod schema for a check key's value description (never coercing: a Boolean is never a number). */
function zodOf(v: NonNullable<CheckConfigKey['value']>): z.ZodType {
  const base = (v.type === 'integer' ? z.int() : z.number()).min(v.min).max(v.max);
  return v.nullable ? base.nullable() : base;
}
