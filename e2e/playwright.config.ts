import { CHROMIUM } from './chromium.js';
import { defineConfig } from '@playwright/test';

/**
 * Real Chromium from Debian (`apt-get install -y chromium`): nothing is downloaded. The flags keep
 * it from reaching for the network this machine does not have.
 */
export default defineConfig({
  testDir: '.',
  testMatch: '*.spec.ts',
  outputDir: '../test-results/e2e',
  timeout: 60_000,
  expect: { timeout: 10_000 },
  workers: 1,
  fullyParallel: false,
  forbidOnly: true,
  retries: 0,
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: CHROMIUM,
  },
});
