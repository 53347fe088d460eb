// Signing in and out: a right key opens the app, a wrong key is refused with a message, a
// key of another project sees nothing of this one, and sign-out really ends the session.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertNoPageErrors, env, eventually, expectCount, expectText, launch, screenshot, signIn,
} from './harness.mjs';

test('a wrong key is refused with a message, and the app stays signed out', async () => {
  const { page, errors, close } = await launch();
  try {
    await page.goto(`${env.url}/`);
    await page.getByLabel(/api key/i).fill('qk_wrong_0000000000000000000000000000');
    await page.getByRole('button', { name: /sign in/i }).click();
    await page.locator('#signin-error').filter({ hasText: /invalid|wrong|unknown/i }).waitFor();
    await eventually(
      () => page.getByRole('button', { name: /sign out/i }).isVisible(),
      (visible) => visible === false,
      'the sign-out button stays hidden',
    );
    await screenshot(page, 'sign-in-wrong-key');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('signing in shows the project and key; signing out ends the session for good', async () => {
  const { page, context, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    await page.getByText(env.key_names.admin).first().waitFor();
    // The project by the name the CLI gives it, not its id.
    await expectText(page.locator('#who-project'), 'default', 'the project shown in the header');
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'quarry_session');
    assert.ok(session, 'a session cookie is set');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Strict');
    // The cookie is invisible to scripts.
    assert.equal(await page.evaluate(() => document.cookie.includes('quarry_session')), false);
    await page.getByRole('button', { name: /sign out/i }).click();
    await page.getByLabel(/api key/i).waitFor();
    // The browser holds no session any more...
    const status = await page.evaluate(async () => (await fetch('/v1/session')).status);
    assert.equal(status, 401);
    // ...and the old cookie no longer opens anything, even when sent again by hand.
    await context.addCookies([session]);
    const replayed = await page.evaluate(async () => (await fetch('/v1/session')).status);
    assert.equal(replayed, 401, 'a signed-out session cookie is refused when replayed');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('a key of another project sees nothing of this one', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.other);
    await page.goto(`${env.url}/#/entities/${env.entities.acme}`);
    // Each "nothing" is checked once the page has shown what it does show.
    await page.getByText(/not found|no entity/i).first().waitFor();
    await expectCount(page.getByText('Acme Corp'), 0, 'Acme Corp shown to another project');
    await page.goto(`${env.url}/#/types/${env.type}`);
    await page.getByText('Umbrella Holdings').first().waitFor();
    await expectCount(page.getByText('Sakura Robotics'), 0, 'Sakura Robotics shown to another project');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});
