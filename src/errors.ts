/** Errors the CLI turns into exit code 2, in a module that loads nothing else (cold start). */

/** A mistake on the command line (exit code 2). */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** True for a UsageError or a config/schema.ts ConfigError, told apart by name so zod need not load. */
export function isUserError(err: unknown): err is Error {
  return err instanceof Error && (err.name === 'UsageError' || err.name === 'ConfigError');
}
