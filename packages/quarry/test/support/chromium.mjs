// Headless Chromium for the browser test and the benchmark: Debian's /usr/bin/chromium driven by
// playwright-core, the one scripts/browser.sh installs into tests/browser/node_modules (no
// browser download), with the flags this kind of machine needs (../shared/DESIGN.md).

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

import { CHROMIUM_ARGS } from '../../../../tests/browser/chromium-args.mjs';

const harness = new URL('../../../../tests/browser/package.json', import.meta.url);

/**
 * Starts Chromium and opens a page. Resolves to `{page, errors, close}`; `errors` collects
 * console errors and uncaught exceptions.
 */
export async function launch() {
  const require = createRequire(harness);
  let chromium;
  try {
    ({ chromium } = require('playwright-core'));
  } catch {
    throw new Error('playwright-core is missing from tests/browser/node_modules: run scripts/browser.sh first');
  }
  const executablePath = process.env.QUARRY_CHROMIUM || '/usr/bin/chromium';
  if (!existsSync(executablePath)) {
    throw new Error(`no Chromium at ${executablePath}: run scripts/browser.sh or set QUARRY_CHROMIUM`);
  }
  const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  const page = await browser.newPage();
  page.setDefaultTimeout(20_000);
  const errors = [];
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') {
      errors.push(`console: ${message.text()}`);
    }
  });
  return { browser, page, errors, close: () => browser.close() };
}
