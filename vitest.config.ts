import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Ends what a timed-out test left running (test/helpers/setup.ts).
    setupFiles: ['test/helpers/setup.ts'],
    // Tests start real server processes; two cores, so keep parallelism modest and timeouts generous.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
