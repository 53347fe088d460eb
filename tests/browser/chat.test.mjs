// The extraction chat in a real browser against the scripted schema agent: a required field the
// model leaves out makes the agent ask; the question is an ordinary assistant message, the
// answer goes through the same input, and the final result marks every value's span in the
// text. A past conversation reopens with its messages and last result, also after a reload.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertNoPageErrors, env, eventually, expectAttribute, expectCount, expectFocused,
  expectNoHorizontalOverflow, expectText, expectTexts, expectURL, expectValue, launch, PHONE,
  screenshot, signIn,
} from './harness.mjs';

const DOCUMENT = `Invoice from ${env.chat.vendor}, 15 January 2024. Total due: $1,200.`;

/** The rows of the chat log as `{role, text}`, in order. */
async function messages(page) {
  return page.locator('#chat-log > li').evaluateAll((items) => items.map((item) => ({
    role: item.classList.contains('user') ? 'user' : 'assistant',
    text: item.textContent,
  })));
}

/** Waits until the chat log's rows, as `messages` reads them, pass `check` (which asserts). */
async function expectMessages(page, check, what) {
  return eventually(() => messages(page), (log) => {
    check(log);
    return true;
  }, what);
}

/**
 * Waits until the reply being streamed has ended. The result ("Needs your answer",
 * "Complete") shows while the stream still runs; only at its end does the view switch the input
 * to "Your reply", empty it and focus it, and reload the conversations. Typing or clicking
 * before that races the view: the end of the stream empties what was typed and takes the focus
 * back, and leaving the page aborts the turn.
 */
async function expectTurnDone(page) {
  await expectCount(page.locator('#chat-log > li.streaming'), 0, 'replies still streaming');
}

test('the agent asks for a missing field, the answer goes through the same input, and every span is marked', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByRole('heading', { name: 'Extraction chat' }).waitFor();
    await page.getByLabel('Start from an example').selectOption('invoice');
    await expectValue(page.getByLabel(/^Schema/), (schema) => {
      let parsed;
      try {
        parsed = JSON.parse(schema);
      } catch {
        return false; // not (yet) the example's JSON
      }
      assert.deepEqual(parsed.required, ['vendor', 'total']);
      return true;
    }, 'the example schema');
    const input = page.getByLabel('Text to extract from');
    await input.fill(DOCUMENT);
    await page.getByRole('button', { name: 'Extract' }).click();

    // The question arrives as an assistant message naming the missing field.
    const question = page.locator('#chat-log > li.assistant').first();
    await question.filter({ hasText: /total/ }).waitFor();
    await page.locator('#chat-result-status', { hasText: 'Needs your answer' }).waitFor();
    await expectURL(page, /#\/chat\/[^/]+$/, 'the address names the conversation');
    const totalRow = page.locator('#chat-fields tr[data-field="total"]');
    await expectText(totalRow, /missing/, 'the total\'s row');
    await expectTexts(page.locator('#chat-source mark'), [env.chat.vendor], 'the marked values');

    // The same input, now asking for the reply; Ctrl+Enter sends it.
    await expectTurnDone(page);
    const reply = page.getByLabel('Your reply');
    await expectAttribute(reply, 'id', 'chat-message', 'the input labelled "Your reply"');
    await expectFocused(page, '#chat-message', '#chat-message has the focus');
    await reply.fill('The total is 1200 dollars.');
    await reply.press('Control+Enter');
    await page.locator('#chat-result-status', { hasText: 'Complete' }).waitFor();
    await expectTurnDone(page);

    // The first turn's model text streamed into its reply, kept folded under it.
    const raw = page.locator('#chat-log > li.assistant details.chat-raw').first();
    await expectText(raw, /Here is what I found/, 'the first reply\'s model output');

    await expectMessages(page, (log) => {
      assert.deepEqual(log.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
      assert.match(log[1].text, /total/);
      assert.match(log[2].text, /The total is 1200 dollars\./);
    }, 'the chat log after the reply');
    await expectText(totalRow, (text) => /1200/.test(text) && /valid/.test(text), 'the total\'s row (1200, valid)');
    await expectTexts(page.locator('#chat-source mark'), [env.chat.vendor, '1,200'], 'the marked values');

    // "Show" on a field marks its span as the focus, scrolls to it and moves focus there.
    await page.getByRole('button', { name: 'Show total in the text' }).click();
    const focused = page.locator('#chat-source mark.mark-focus');
    await expectText(focused, '1,200', 'the focused mark');
    await eventually(
      () => page.evaluate(() => document.activeElement.textContent),
      (text) => text === '1,200',
      'the focus is on the total\'s mark',
    );
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
    await expectValue(page.getByLabel('Text to extract from'), loaded, 'the text read from the file');
    await page.getByRole('button', { name: 'Extract' }).click();
    await page.locator('#chat-result-status', { hasText: 'Needs your answer' }).waitFor();
    const url = await expectURL(page, /#\/chat\/[^/]+$/, 'the address names the conversation');
    const id = decodeURIComponent(url.split('#/chat/')[1]);
    // Leaving the page mid-stream would abort the turn.
    await expectTurnDone(page);

    // Start afresh, then pick it from the list of past conversations.
    await page.getByRole('link', { name: 'New conversation' }).click();
    // The old view says "Your reply" now that its turn is over: this label is the new view's.
    await page.getByLabel('Text to extract from').waitFor();
    const past = page.locator(`#chat-conversations a[href="#/chat/${encodeURIComponent(id)}"]`);
    await past.click();
    await page.locator('#chat-result-status', { hasText: 'Needs your answer' }).waitFor();
    await expectMessages(page, (log) => {
      assert.deepEqual(log.map((m) => m.role), ['user', 'assistant']);
      assert.match(log[1].text, /total/);
    }, 'the reopened conversation\'s messages');
    await expectTexts(page.locator('#chat-source mark'), [env.chat.vendor], 'the marked values');
    await expectAttribute(past, 'aria-current', 'page', 'the reopened conversation in the list');
    // Still the same conversation after a reload: the reply continues it.
    await page.reload();
    await page.locator('#chat-result-status', { hasText: 'Needs your answer' }).waitFor();
    await page.getByLabel('Your reply').fill('The total is 1200 dollars.');
    await page.getByRole('button', { name: 'Send reply' }).click();
    await page.locator('#chat-result-status', { hasText: 'Complete' }).waitFor();
    await expectTurnDone(page);
    await expectURL(page, (address) => decodeURIComponent(address.split('#/chat/')[1]) === id, `the address still names conversation ${id}`);
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
    await expectText(page.locator('#chat-log .view-error'), /ModelNotConfigured/, 'the reply\'s error');
    // Nothing was accepted: the text is still there to send again (once the failed turn is over).
    await expectTurnDone(page);
    await expectValue(page.getByLabel('Text to extract from'), (text) => text !== '', 'the text, kept to send again');
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
    await expectFocused(page, '#chat-schema', '#chat-schema has the focus');
    await page.getByLabel('Start from an example').selectOption('invoice');
    await page.getByLabel('Text to extract from').focus();
    await page.keyboard.type(DOCUMENT);
    await page.keyboard.press('Control+Enter');
    await page.locator('#chat-result-status', { hasText: 'Needs your answer' }).waitFor();
    // The focus never left #chat-message (Ctrl+Enter was pressed in it), so it proves nothing
    // about the turn: wait for its end, which empties the input, before typing.
    await expectTurnDone(page);
    await expectFocused(page, '#chat-message', '#chat-message has the focus');
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
    await expectTurnDone(page);
    await expectNoHorizontalOverflow(page, 'the chat fits 390 px without sideways scrolling');
    await screenshot(page, 'chat-phone');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});
