// What every browser test shares: the seeded server's address, keys and fixture ids, a
// headless Chromium page, signing in, screenshots, and a check that the page logged no errors
// (a Content-Security-Policy violation or an uncaught exception shows up there).
//
// The tests run under crates/quarry-cli/tests/browser.rs, which starts a scripted model server
// and `quarry serve --db …`, seeds the database, writes the fixture file and runs
// `node --test --test-concurrency=1 tests/browser/*.test.mjs` with:
//   QUARRY_FIXTURE    path of the fixture JSON (see `env` below)
//   QUARRY_ARTIFACTS  folder for screenshots
//   QUARRY_CHROMIUM   the browser (default /usr/bin/chromium)

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

import { CHROMIUM_ARGS } from './chromium-args.mjs';

/**
 * The seeded server:
 * {url, type, keys: {admin, reader, other}, key_names: {admin, reader, other},
 *  entities: {acme, sakura, globex, other_project}, documents: {acme, sakura},
 *  values: {acme_ceo_first, acme_ceo_rerun, acme_headquarters, sakura_ceo, sakura_headquarters},
 *  graph: {alice, acme_org, falcon}, episodes: {failed}, filler_count}
 */
export const env = JSON.parse(readFileSync(requiredEnv('QUARRY_FIXTURE'), 'utf8'));

const artifacts = process.env.QUARRY_ARTIFACTS || join(process.cwd(), 'browser-artifacts');
mkdirSync(artifacts, { recursive: true });

/** Desktop and phone widths the app must work at. */
export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

/**
 * Starts Chromium and opens a page at `viewport`. The returned `errors` array collects console
 * errors and uncaught exceptions; `close()` ends the browser.
 */
export async function launch({ viewport = DESKTOP } = {}) {
  const browser = await chromium.launch({
    executablePath: process.env.QUARRY_CHROMIUM || '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
  });
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const errors = [];
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
  page.on('console', (message) => {
    // A failed request (4xx the page handles, e.g. the 401 before sign-in) is logged by
    // Chromium as a console error too; those are the page's business, not a defect.
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) {
      errors.push(`console: ${message.text()}`);
    }
  });
  return { browser, context, page, errors, close: () => browser.close() };
}

/** Opens the app and signs in with `key`; resolves once the signed-in shell shows. */
export async function signIn(page, key) {
  await page.goto(`${env.url}/`);
  await page.getByLabel(/api key/i).fill(key);
  await page.getByRole('button', { name: /sign in/i }).click();
  await page.getByRole('button', { name: /sign out/i }).waitFor();
}

/** Saves a full-page screenshot as `<artifacts>/<name>.png`. */
export async function screenshot(page, name) {
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
}

/** Fails when the page logged an error (CSP violation, uncaught exception). */
export function assertNoPageErrors(errors) {
  assert.deepEqual(errors, [], `the page logged errors:\n${errors.join('\n')}`);
}

/** True when the page is wider than its viewport (content overflowing sideways). */
export async function overflowsHorizontally(page) {
  return page.evaluate(
    () => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1,
  );
}

function requiredEnv(name) {
  const value = process.env[name];
  if (!value) {
    throw new Error(
      `${name} is not set: run the browser tests through cargo test -p quarry-cli --test browser`,
    );
  }
  return value;
}
