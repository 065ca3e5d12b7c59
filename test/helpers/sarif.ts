/** Validates SARIF logs against the official SARIF 2.1.0 JSON schema (Ajv 2020-12 with formats). */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

type ValidateFn = ((data: unknown) => boolean) & { errors?: unknown[] | null };
let validator: ValidateFn | undefined;

/**
 * The schema's errors for `log` (empty when valid). The schema is the one Microsoft's SARIF SDK
 * ships in @microsoft/sarif-multitool-linux (`sarif-2.1.0.json`), compiled once.
 */
export function validateSarifSchema(log: unknown): unknown[] {
  if (!validator) {
    const pkg = dirname(require.resolve('@microsoft/sarif-multitool-linux/package.json'));
    const schema = JSON.parse(readFileSync(join(pkg, 'sarif-2.1.0.json'), 'utf8')) as object;
    const Ajv2020 = require('ajv/dist/2020.js').default as new (o: object) => { compile: (s: object) => ValidateFn };
    const addFormats = require('ajv-formats') as (a: unknown) => void;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    validator = ajv.compile(schema);
  }
  return validator(log) ? [] : (validator.errors ?? ['invalid, no errors listed']);
}
