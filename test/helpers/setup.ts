/**
 * Runs in every test file (vitest `setupFiles`): once the file's tests are done, any sealmark
 * process a test started and left running (a test that timed out) is ended, so that it neither
 * keeps loading the machine for the files after it nor leaves its scratch folders behind.
 */
import { afterAll } from 'vitest';
import { endLeftoverProcesses } from './cli.js';

afterAll(async () => {
  await endLeftoverProcesses();
});
