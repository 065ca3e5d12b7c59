/** Validates SARIF logs: the official SARIF 2.1.0 JSON schema (Ajv 2020-12 with formats), and Microsoft's Sarif.Multitool. */
import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { collectOutput } from './cli.js';

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

/**
 * Runs Microsoft's `Sarif.Multitool validate <file>` (@microsoft/sarif-multitool-linux); resolves
 * to its exit code and its `error SARIFnnnn` / `warning SARIFnnnn` lines. `scratch`: a directory
 * for the tool's own output file.
 */
export async function multitoolValidate(file: string, scratch: string): Promise<{ code: number | null; errors: string[]; warnings: string[]; output: string }> {
  const tool = require('@microsoft/sarif-multitool-linux') as string;
  try {
    accessSync(tool, constants.X_OK);
  } catch {
    throw new Error(`${tool} is not executable: run \`npm rebuild @microsoft/sarif-multitool-linux\` once (its postinstall sets the bit)`);
  }
  const out = join(scratch, `multitool-${Math.random().toString(36).slice(2)}.sarif`);
  const r = await collectOutput(spawn(tool, ['validate', file, '--output', out], { env: { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1' } }));
  const output = r.stdout + r.stderr;
  const lines = output.split('\n');
  return { code: r.code, errors: lines.filter((l) => /\berror SARIF\d+/.test(l)), warnings: lines.filter((l) => /\bwarning SARIF\d+/.test(l)), output };
}
