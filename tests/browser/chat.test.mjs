// The extraction chat in a real browser against the scripted schema agent: a required field the
// model leaves out makes the agent ask; the question is an ordinary assistant message, the
// answer goes through the same input, and the final result marks every value's span in the
// text. A past conversation reopens with its messages and last result, also after a reload.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertNoPageErrors, env, launch, overflowsHorizontally, PHONE, screenshot, signIn,
} from './harness.mjs';

const DOCUMENT = `Invoice from ${env.chat.vendor}, 15 January 2024. Total due: $1,200.`;

/** The rows of the chat log as `{role, text}`, in order. */
async function messages(page) {
  return page.locator('#chat-log > li').evaluateAll((items) => items.map((item) => ({
    role: item.classList.contains('user') ? 'user' : 'assistant',
    text: item.textContent,
  })));
}

test('the agent asks for a missing field, the answer goes through the same input, and every span is marked', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByRole('heading', { name: 'Extraction chat' }).waitFor();
    await page.getByLabel('Start from an example').selectOption('invoice');
    const schema = await page.getByLabel(/^Schema/).inputValue();
    assert.deepEqual(JSON.parse(schema).required, ['vendor', 'total']);
    const input = page.getByLabel('Text to extract from');
    await input.fill(DOCUMENT);
    await page.getByRole('button', { name: 'Extract' }).click();

    // The question arrives as an assistant message naming the missing field.
    const question = page.locator('#chat-log > li.assistant').first();
    await question.filter({ hasText: /total/ }).waitFor();
    await page.locator('#chat-result-status', { hasText: 'Needs your answer' }).waitFor();
    assert.match(page.url(), /#\/chat\/[^/]+$/, 'the address names the conversation');
    const totalRow = page.locator('#chat-fields tr[data-field="total"]');
    assert.match(await totalRow.textContent(), /missing/);
    assert.deepEqual(await page.locator('#chat-source mark').allTextContents(), [env.chat.vendor]);

    // The same input, now asking for the reply; Ctrl+Enter sends it.
    const reply = page.getByLabel('Your reply');
    assert.equal(await reply.getAttribute('id'), 'chat-message');
    await assertFocused(page, '#chat-message');
    await reply.fill('The total is 1200 dollars.');
    await reply.press('Control+Enter');
    await page.locator('#chat-result-status', { hasText: 'Complete' }).waitFor();

    // The first turn's model text streamed into its reply, kept folded under it.
    const raw = page.locator('#chat-log > li.assistant details.chat-raw').first();
    assert.match(await raw.textContent(), /Here is what I found/);

    const log = await messages(page);
    assert.deepEqual(log.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
    assert.match(log[1].text, /total/);
    assert.match(log[2].text, /The total is 1200 dollars\./);
    assert.match(await totalRow.textContent(), /1200/);
    assert.match(await totalRow.textContent(), /valid/);
    assert.deepEqual(await page.locator('#chat-source mark').allTextContents(), [env.chat.vendor, '1,200']);

    // "Show" on a field marks its span as the focus, scrolls to it and moves focus there.
    await page.getByRole('button', { name: 'Show total in the text' }).click();
    const focused = page.locator('#chat-source mark.mark-focus');
    assert.equal(await focused.textContent(), '1,200');
    assert.equal(await page.evaluate(() => document.activeElement.textContent), '1,200');
    await screenshot(page, 'chat');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('a past conversation reopens with its messages and last result, after a reload too', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    await page.goto(`${env.url}/#/chat`);
    // A pasted schema in Quarry's YAML form, and the text read from a file in the browser.
    await page.getByLabel(/^Schema/).fill('name: bill\nfields:\n  vendor: {type: string, required: true}\n  total: {type: number, required: true}\n');
    await page.getByLabel('Or load a text file').setInputFiles({
      name: 'bill.txt', mimeType: 'text/plain', buffer: Buffer.from(`Bill — ${DOCUMENT}`),
    });
    // The browser reads the file asynchronously: wait until its text is in the input.
    const loaded = `Bill — ${DOCUMENT}`;
    await page.waitForFunction(
      (text) => [...document.querySelectorAll('textarea')].some((t) => t.value === text),
      loaded,
    );
    assert.equal(await page.getByLabel('Text to extract from').inputValue(), loaded);
    await page.getByRole('button', { name: 'Extract' }).click();
    await page.locator('#chat-result-status', { hasText: 'Needs your answer' }).waitFor();
    const id = decodeURIComponent(page.url().split('#/chat/')[1]);

    // Start afresh, then pick it from the list of past conversations.
    await page.getByRole('link', { name: 'New conversation' }).click();
    await page.getByLabel('Text to extract from').waitFor();
    const past = page.locator(`#chat-conversations a[href="#/chat/${encodeURIComponent(id)}"]`);
    await past.click();
    await page.locator('#chat-result-status', { hasText: 'Needs your answer' }).waitFor();
    const log = await messages(page);
    assert.deepEqual(log.map((m) => m.role), ['user', 'assistant']);
    assert.match(log[1].text, /total/);
    assert.deepEqual(await page.locator('#chat-source mark').allTextContents(), [env.chat.vendor]);
    assert.equal(await past.getAttribute('aria-current'), 'page');
    // Still the same conversation after a reload: the reply continues it.
    await page.reload();
    await page.locator('#chat-result-status', { hasText: 'Needs your answer' }).waitFor();
    await page.getByLabel('Your reply').fill('The total is 1200 dollars.');
    await page.getByRole('button', { name: 'Send reply' }).click();
    await page.locator('#chat-result-status', { hasText: 'Complete' }).waitFor();
    assert.equal(decodeURIComponent(page.url().split('#/chat/')[1]), id);
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('a server without a model says so where the reply would be', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    // This server has a model; the answer of one without it is played back here.
    await page.route('**/v1/chat', (route) => route.fulfill({
      status: 503,
      contentType: 'application/json',
      body: JSON.stringify({ error: 'ModelNotConfigured', message: 'this server has no model; start it with quarry serve --model provider:model' }),
    }));
    await page.goto(`${env.url}/#/chat`);
    await page.getByLabel('Start from an example').selectOption('contact');
    await page.getByRole('button', { name: /sample text/ }).click();
    await page.getByRole('button', { name: 'Extract' }).click();
    await page.locator('#chat-no-model').waitFor();
    assert.match(await page.locator('#chat-log .view-error').textContent(), /ModelNotConfigured/);
    // Nothing was accepted: the text is still there to send again.
    assert.notEqual(await page.getByLabel('Text to extract from').inputValue(), '');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('the chat works by keyboard alone at phone width', async () => {
  const { page, errors, close } = await launch({ viewport: PHONE });
  try {
    await signIn(page, env.keys.admin);
    await page.goto(`${env.url}/#/chat`);
    await page.getByLabel('Start from an example').focus();
    await page.keyboard.press('Tab');
    await assertFocused(page, '#chat-schema');
    await page.getByLabel('Start from an example').selectOption('invoice');
    await page.getByLabel('Text to extract from').focus();
    await page.keyboard.type(DOCUMENT);
    await page.keyboard.press('Control+Enter');
    await page.locator('#chat-result-status', { hasText: 'Needs your answer' }).waitFor();
    await assertFocused(page, '#chat-message');
    await page.keyboard.type('The total is 1200 dollars.');
    // Tab from the input reaches the send button; Enter presses it.
    let reached = false;
    for (let i = 0; i < 6 && !reached; i += 1) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => document.activeElement.id === 'chat-send');
    }
    assert.ok(reached, 'the send button is reachable with Tab');
    await page.keyboard.press('Enter');
    await page.locator('#chat-result-status', { hasText: 'Complete' }).waitFor();
    assert.equal(await overflowsHorizontally(page), false, 'nothing overflows sideways at 390 px');
    await screenshot(page, 'chat-phone');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

async function assertFocused(page, selector) {
  const matches = await page.evaluate((s) => document.activeElement && document.activeElement.matches(s), selector);
  assert.ok(matches, `${selector} has the focus`);
}
