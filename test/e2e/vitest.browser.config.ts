import { defineConfig } from 'vitest/config';

/** The console's browser suite (`npm run test:browser`): a real `steerlog serve` driven through Debian's Chromium. */
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.browser.ts'],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
