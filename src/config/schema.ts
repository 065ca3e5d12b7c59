/**
 * Config shape (SPEC section 7). PLACEHOLDER: the zod schema and loader are being written in this
 * file and src/config/load.ts; the exported types below are the contract.
 */
import type { Severity } from '../types.js';

/** A user's valid call (SPEC section 7 `probes:`). */
export interface UserProbe {
  tool: string;
  arguments: Record<string, unknown>;
  expect: 'ok' | 'error';
}

/** Per-check settings; check-specific keys beside `enabled` and `severity`. */
export interface CheckSettings {
  enabled: boolean;
  severity?: Severity;
  [key: string]: unknown;
}

/** The validated config with every default applied. Times in seconds as SPEC names them. */
export interface ResolvedConfig {
  timeout_probe_sec: number;
  timeout_init_sec: number;
  checks: Record<string, CheckSettings>;
  probes: UserProbe[];
  skip_tools: string[];
  hidden_params: string[];
  sandbox: { network: 'on' | 'off'; shims: boolean; keep: boolean };
  env: Record<string, string>;
  /** File the config came from, if any. */
  source?: string;
}
