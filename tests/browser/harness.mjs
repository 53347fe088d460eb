// What every browser test shares: the seeded server's address, keys and fixture ids, a
// headless Chromium page, signing in, screenshots, a check that the page logged no errors
// (a Content-Security-Policy violation or an uncaught exception shows up there), and assertions
// that wait for the state they assert.
//
// Why the waiting assertions: the app re-renders under the test. A navigation empties <main>
// only once the `hashchange` event runs, a search keeps the old list until the new answer
// arrives, pollers redraw cards and lists. "Wait for some element, then count or read once"
// races those re-renders (the element waited for may belong to the old page, or the list may be
// emptied between the wait and the read). So every check of what the page shows polls, with
// `eventually` or one of the `expect…` helpers built on it, until the expected state holds or
// WAIT_MS passes, and then fails naming the last value it saw. playwright-core has no `expect`
// (that is @playwright/test, which these tests do not use).
//
// The tests run under crates/quarry-cli/tests/it/browser.rs, which starts a scripted model server
// and `quarry serve --db …`, seeds the database, writes the fixture file and runs
// `node --test --test-concurrency=1 tests/browser/*.test.mjs` with:
//   QUARRY_FIXTURE    path of the fixture JSON (see `env` below)
//   QUARRY_ARTIFACTS  folder for screenshots
//   QUARRY_CHROMIUM   the browser (default /usr/bin/chromium)

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect, isDeepStrictEqual } from 'node:util';
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
  // One locale for every run, so numbers and dates read the same whatever the machine's.
  const context = await browser.newContext({ viewport, locale: 'en-US' });
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

/** Opens the app and signs in with `key`; resolves once the signed-in shell shows and its first
 * page (the entity types) has rendered, so that page's late work (focusing its heading) cannot
 * land in the middle of what the test does next. */
export async function signIn(page, key) {
  await page.goto(`${env.url}/`);
  await page.getByLabel(/api key/i).fill(key);
  await page.getByRole('button', { name: /sign in/i }).click();
  await page.getByRole('button', { name: /sign out/i }).waitFor();
  // The shell shows and the first route starts (setting aria-busy) in one task, so from here
  // aria-busy="false" means that route has finished.
  await routeSettled(page);
}

/**
 * Waits until the router has finished rendering the current view (app.js sets <main
 * aria-busy="true"> when a route starts and "false" once its view has rendered and taken focus).
 * Only meaningful once something of the new view has shown: right after a navigation the old
 * view's "false" is still there until the `hashchange` event runs.
 */
export async function routeSettled(page) {
  await page.locator('#main[aria-busy="false"]').waitFor({ state: 'attached' });
}

// ---- assertions that wait ------------------------------------------------------------------

/** How long a waiting assertion keeps trying (the pages' own default timeout). */
export const WAIT_MS = 10_000;
/** How often it looks again. */
const POLL_MS = 50;

/**
 * Calls `read()` every 50 ms until `check(value)` holds, and returns that value; fails after
 * `timeout` ms with `what` and the last value read. `check` returns a boolean, or asserts (a
 * thrown assertion counts as "not yet" and its message is kept for the failure). A `read` that
 * throws (an element detached by a re-render, say) also counts as "not yet". Each read is cut
 * off at the deadline, so the whole wait never exceeds `timeout`.
 *
 *   await eventually(() => rows.count(), (n) => n === 1, 'one document matches "sakura"');
 */
export async function eventually(read, check, what, { timeout = WAIT_MS, interval = POLL_MS } = {}) {
  const deadline = Date.now() + timeout;
  let last = '(nothing read yet)';
  for (;;) {
    let value;
    let got = false;
    try {
      value = await beforeDeadline(read(), deadline);
      got = true;
    } catch (error) {
      if (error === TIMED_OUT) {
        last = `${last} (then a read was still waiting at the deadline)`;
        break;
      }
      last = `(read failed: ${String((error && error.message) || error).split('\n')[0]})`;
    }
    if (got) {
      last = inspect(value, { depth: 4, breakLength: Infinity });
      try {
        if (check(value)) return value;
      } catch (error) {
        if (!(error instanceof assert.AssertionError)) throw error;
        last = `${last}\n  ${error.message.split('\n').join('\n  ')}`;
      }
    }
    if (Date.now() + interval > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
  throw new assert.AssertionError({
    message: `${what}: still not so after ${timeout} ms; last seen: ${last}`,
    stackStartFn: eventually,
  });
}

/**
 * The other side of `eventually`, for "nothing happens": calls `read()` every 50 ms for
 * `duration` ms and fails at the first value for which `check` does not hold. Use it only once
 * the page is in the state that must stay.
 */
export async function stays(read, check, what, { duration = 500, interval = POLL_MS } = {}) {
  const end = Date.now() + duration;
  for (;;) {
    const value = await read();
    assert.ok(check(value), `${what}: changed to ${inspect(value, { depth: 4, breakLength: Infinity })}`);
    if (Date.now() >= end) return value;
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/** Waits until `locator` matches exactly `count` elements. */
export async function expectCount(locator, count, what = `${locator}`, options) {
  return eventually(() => locator.count(), (n) => n === count, `${what} (expected ${count} elements)`, options);
}

/**
 * Waits until `locator` matches one element whose text is `expected`: a string (equal), a RegExp
 * (matches) or a predicate. `inner: true` reads `innerText` (as rendered) instead of
 * `textContent`. Returns the text.
 */
export async function expectText(locator, expected, what = `${locator}`, { inner = false, ...options } = {}) {
  const texts = await eventually(
    () => (inner ? locator.allInnerTexts() : locator.allTextContents()),
    (found) => found.length === 1 && matches(found[0], expected),
    `${what} (expected one element with text ${describe(expected)})`,
    options,
  );
  return texts[0];
}

/** Waits until the texts of every element `locator` matches, in order, deep-equal `expected`
 * (after `map`, e.g. to squash white space). Returns them. */
export async function expectTexts(locator, expected, what = `${locator}`, { inner = false, map = (t) => t, ...options } = {}) {
  return eventually(
    async () => (await (inner ? locator.allInnerTexts() : locator.allTextContents())).map(map),
    (found) => matches(found, expected),
    `${what} (expected ${describe(expected)})`,
    options,
  );
}

/** Waits until the one input `locator` matches has the value `expected` (string, RegExp or
 * predicate). Returns the value. */
export async function expectValue(locator, expected, what = `${locator}`, options) {
  const values = await eventually(
    () => locator.evaluateAll((elements) => elements.map((el) => el.value)),
    (found) => found.length === 1 && matches(found[0], expected),
    `${what} (expected one input with value ${describe(expected)})`,
    options,
  );
  return values[0];
}

/** Waits until the one element `locator` matches has attribute `name` equal to `expected`
 * (string, RegExp or predicate; null for "absent"). */
export async function expectAttribute(locator, name, expected, what = `${locator}`, options) {
  const values = await eventually(
    () => locator.evaluateAll((elements, attr) => elements.map((el) => el.getAttribute(attr)), name),
    (found) => found.length === 1 && matches(found[0], expected),
    `${what} (expected one element with ${name}=${describe(expected)})`,
    options,
  );
  return values[0];
}

/** Waits until the one element `locator` matches is (`disabled: true`) or is not disabled. */
export async function expectDisabled(locator, disabled, what = `${locator}`, options) {
  return eventually(
    async () => ((await locator.count()) === 1 ? locator.isDisabled() : `${await locator.count()} elements`),
    (found) => found === disabled,
    `${what} (expected ${disabled ? 'disabled' : 'enabled'})`,
    options,
  );
}

/** Waits until the focused element is `target`: a CSS selector, or a locator matching it. */
export async function expectFocused(page, target, what = `${target} has the focus`, options) {
  const read = typeof target === 'string'
    ? () => page.evaluate((selector) => {
      const el = document.activeElement;
      return el && el.matches(selector) ? true : (el ? el.outerHTML.slice(0, 120) : null);
    }, target)
    : () => target.evaluateAll((elements) => (elements.includes(document.activeElement)
      ? true
      : (document.activeElement ? document.activeElement.outerHTML.slice(0, 120) : null)));
  // The value read is `true`, or the element that has the focus instead.
  return eventually(read, (found) => found === true, what, options);
}

/** Waits until the page's address matches `pattern` (a RegExp, or a predicate on the URL).
 * Returns the URL. */
export async function expectURL(page, pattern, what = `the address matches ${pattern}`, options) {
  return eventually(async () => page.url(), (url) => matches(url, pattern), what, options);
}

/** Waits until nothing on the page is wider than its viewport (no content overflowing
 * sideways). Call it once the view has rendered (its content shown, `routeSettled`): on a page
 * still empty it would hold at once. */
export async function expectNoHorizontalOverflow(page, what, options) {
  return eventually(
    async () => page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
    })),
    ({ scrollWidth, clientWidth }) => scrollWidth <= clientWidth + 1,
    what,
    options,
  );
}

/** `expected` as a string, a RegExp (matched) or a predicate, or any value (deep-equal). */
function matches(value, expected) {
  if (expected instanceof RegExp) return typeof value === 'string' && new RegExp(expected.source, expected.flags.replace('g', '')).test(value);
  if (typeof expected === 'function') return Boolean(expected(value));
  return isDeepStrictEqual(value, expected);
}

function describe(expected) {
  if (expected instanceof RegExp) return String(expected);
  if (typeof expected === 'function') return `satisfying ${expected.name || 'the check'}`;
  return inspect(expected, { depth: 4, breakLength: Infinity });
}

const TIMED_OUT = Symbol('timed out');

/** `promise`, or a rejection with TIMED_OUT at `deadline` (whichever comes first); a late
 * rejection of `promise` is swallowed. */
function beforeDeadline(promise, deadline) {
  let timer;
  const cut = new Promise((_, reject) => {
    timer = setTimeout(() => reject(TIMED_OUT), Math.max(0, deadline - Date.now()));
  });
  Promise.resolve(promise).catch(() => {});
  return Promise.race([promise, cut]).finally(() => clearTimeout(timer));
}

/** Saves a full-page screenshot as `<artifacts>/<name>.png`. */
export async function screenshot(page, name) {
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
}

/** Fails when the page logged an error (CSP violation, uncaught exception). */
export function assertNoPageErrors(errors) {
  assert.deepEqual(errors, [], `the page logged errors:\n${errors.join('\n')}`);
}


function requiredEnv(name) {
  const value = process.env[name];
  if (!value) {
    throw new Error(
      `${name} is not set: run the browser tests through cargo test -p quarry-cli --test it browser`,
    );
  }
  return value;
}
