// The review workspace in real Chromium: the entity list with its fields' states, the review
// queue worked with the keyboard alone, rejecting with a reason until the rerun's value shows up
// without a reload, approving, locking, setting a value by hand, answering a human_input field,
// what a read-only key may do, and the pages at a phone's width.
//
// The tests share one seeded database and run in order: Acme Corp and Sakura Robotics start with
// pending ceo and headquarters values and a budget waiting for a person; Globex has no run.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  PHONE, assertNoPageErrors, env, eventually, expectCount, expectDisabled,
  expectFocused, expectNoHorizontalOverflow, expectText, expectTexts, launch, routeSettled,
  screenshot, signIn, stays,
} from './harness.mjs';

const RERUN_TIMEOUT = 30_000;

/** The entity page's card of `field`. */
const card = (page, field) => page.locator(`.field-card[data-field="${field}"]`);

/** GET `path` with the page's session, as the app would. */
async function apiGet(page, path) {
  return page.evaluate(async (p) => {
    const response = await fetch(p, { credentials: 'same-origin' });
    return { status: response.status, body: await response.json() };
  }, path);
}

/** Opens an entity's page; resolves once its cards show and the router has finished (so it
 * does not move the focus afterwards). */
async function openEntity(page, id) {
  await page.goto(`${env.url}/#/entities/${id}`);
  // Field cards alone could be those of the entity page left behind: its header's id is not.
  await page.locator('#main dd > span.mono', { hasText: id }).first().waitFor();
  await page.locator('.field-card').first().waitFor();
  await routeSettled(page);
}

test('the entity list shows every company with its fields\' states in words, searchable and paginated', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    await page.getByRole('link', { name: 'Company', exact: true }).first().click();
    await page.getByRole('heading', { level: 1, name: /Company entities/ }).waitFor();
    const total = 3 + env.filler_count;
    const rows = page.locator('.entity-table tbody tr');
    await expectCount(rows, 50, 'the first page of companies');
    await page.getByText(`1–50 of ${total}`).waitFor();
    await page.getByRole('button', { name: /Next/ }).click();
    await page.getByText(`51–${total} of ${total}`).waitFor();
    await expectCount(rows, total - 50, 'the second page of companies');

    await page.getByLabel('Search by title').fill('sakura');
    await page.getByLabel('Search by title').press('Enter');
    await page.waitForURL(/q=sakura/);
    // The second page stays until the search answers, and a Sakura row proves nothing by
    // itself: wait for the count.
    await expectCount(rows, 1, 'companies matching "sakura"');
    await rows.first().getByText('Sakura Robotics').waitFor();
    // States are words beside their field, not only colours.
    await expectTexts(rows.first().locator('.field-badge'), [
      'Chief executive: pending review',
      'Head office: pending review',
      'Approved budget: needs a person',
    ], 'the fields of Sakura Robotics', { inner: true, map: (b) => b.replace(/\s+/g, ' ').trim() });
    await page.getByRole('link', { name: 'Clear' }).click();
    await page.waitForURL((url) => !url.hash.includes('q='));
    // The search's page (with feedback cards of its own) stays until the hashchange runs: wait
    // for the whole list to be back before looking at the feedback.
    await page.getByText(`1–50 of ${total}`).waitFor();
    // The feedback the agents see, per field of the type.
    await page.locator('.feedback-card[data-field="ceo"]').getByText(/pending|approved|No values/).first().waitFor();
    await screenshot(page, 'entity-list');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('the review queue is worked with the keyboard alone: next, previous, skip, approve, reject with a reason', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    await page.goto(`${env.url}/#/queue/${env.type}`);
    const counter = page.locator('.queue-counter');
    await counter.filter({ hasText: /^Item 1 of 4/ }).waitFor();
    await page.getByText('approve', { exact: false }).first().waitFor(); // the shortcut help shows
    await expectText(page.locator('.shortcuts'), /j.*next.*k.*previous.*a.*approve.*r.*reject.*s.*skip/s, 'the shortcut help', { inner: true });

    await page.keyboard.press('j');
    await counter.filter({ hasText: /^Item 2 of 4/ }).waitFor();
    await page.keyboard.press('k');
    await counter.filter({ hasText: /^Item 1 of 4/ }).waitFor();
    await page.keyboard.press('ArrowRight');
    await counter.filter({ hasText: /^Item 2 of 4/ }).waitFor();
    await page.keyboard.press('ArrowLeft');
    // Item 2 is also where s leads, so without this wait the check after s would pass even if
    // ArrowLeft had done nothing.
    await counter.filter({ hasText: /^Item 1 of 4/ }).waitFor();
    await page.keyboard.press('s');
    await counter.filter({ hasText: /^Item 2 of 4/ }).waitFor();
    await screenshot(page, 'review-queue');

    const item = page.locator('.queue-item');
    /** The counter and the card, read at one instant (the queue redraws both together). */
    const where = () => page.evaluate(() => {
      const card = document.querySelector('.queue-item');
      const nextKey = card && card.querySelector('[data-action="next"]');
      const previousKey = card && card.querySelector('[data-action="previous"]');
      return {
        counter: document.querySelector('.queue-counter')?.textContent ?? null,
        text: card ? card.innerText : '',
        field: card?.querySelector('h2')?.innerText ?? null,
        last: !nextKey || nextKey.disabled,
        first: !previousKey || previousKey.disabled,
      };
    });
    /** Moves with j (wrapping with k) until the card shows `title`'s `fieldLabel`; after each
     * key it waits for the counter to move rather than for a fixed time. */
    const goTo = async (title, fieldLabel) => {
      for (let i = 0; i < 8; i += 1) {
        const now = await where();
        if (now.text.includes(title) && now.field === fieldLabel) return;
        const forward = i < 4;
        // At either end of the queue the key does nothing: nothing to wait for.
        if (forward ? now.last : now.first) continue;
        await page.keyboard.press(forward ? 'j' : 'k');
        await eventually(where, (next) => next.counter !== now.counter, `the queue moves on from "${now.counter}"`);
      }
      assert.fail(`no queue item for ${title} / ${fieldLabel}`);
    };

    await goTo('Sakura Robotics', 'Head office');
    await item.getByText(env.values.sakura_headquarters).first().waitFor();
    // The value's words in their document's line, marked, before the reviewer decides (the
    // document is fetched after the card is drawn).
    const quoted = item.locator('.cited-quote mark');
    await expectText(quoted, env.values.sakura_headquarters, 'the cited words, marked', { inner: true });
    await page.keyboard.press('a');
    await page.locator('#notice').filter({ hasText: 'Approved headquarters of Sakura Robotics' }).waitFor();
    await counter.filter({ hasText: /of 3/ }).waitFor();

    await goTo('Acme Corp', 'Head office');
    await page.keyboard.press('r');
    const reason = item.getByLabel(/Why is it wrong/);
    await reason.waitFor();
    await expectFocused(page, reason, 'the reason input has focus');
    await page.keyboard.type('The report names the old office');
    await page.keyboard.press('Enter');
    await page.locator('#notice').filter({ hasText: /Rejected headquarters of Acme Corp/ }).waitFor();
    await counter.filter({ hasText: /of 2/ }).waitFor();

    const sakura = await apiGet(page, `/v1/extraction/${env.entities.sakura}`);
    const headquarters = sakura.body.find((r) => r.field_name === 'headquarters');
    assert.equal(headquarters.status, 'approved');
    const history = await apiGet(page, `/v1/extraction/${env.entities.acme}/history/headquarters`);
    const rejected = history.body.find((r) => r.status === 'rejected');
    assert.equal(rejected.rejection_reason, 'The report names the old office');
    assert.equal(rejected.reviewed_by, env.key_names.admin, 'the reviewer is the key\'s name');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('rejecting with a reason shows the rerun\'s value when it arrives, without a reload', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    await openEntity(page, env.entities.acme);
    const ceo = card(page, 'ceo');
    await ceo.locator('.field-value').filter({ hasText: env.values.acme_ceo_first }).waitFor();
    // Facts a reviewer weighs: confidence, agent, tokens and duration.
    await expectText(ceo.locator('dl.facts'), (facts) => {
      assert.match(facts, /Confidence\s+high confidence/);
      assert.match(facts, /Agent\s+\S+/);
      assert.match(facts, /Tokens\s+\d+/);
      assert.match(facts, /Duration\s+\d/);
      return true;
    }, 'the chief executive\'s facts', { inner: true });
    await page.evaluate(() => { window.__sameDocument = true; });

    await ceo.getByRole('button', { name: 'Reject…' }).click();
    const reason = ceo.getByLabel(/Why is this Chief executive wrong/);
    await expectFocused(page, reason, 'the reason input has focus');
    await reason.fill('John Roe chairs the board; the CEO is Jane Doe');
    await reason.press('Enter');
    await ceo.locator('.field-value').filter({ hasText: env.values.acme_ceo_rerun }).waitFor({ timeout: RERUN_TIMEOUT });
    assert.equal(await page.evaluate(() => window.__sameDocument), true, 'the page was not reloaded');
    await card(page, 'ceo').locator('.field-state').filter({ hasText: 'pending review' }).waitFor();

    // The history: the superseded value, who rejected it and why.
    await card(page, 'ceo').getByText('History and feedback').click();
    const history = card(page, 'ceo').locator('.history');
    // The history is fetched when the block opens, and a redraw by the poller fetches it again.
    await expectText(history, (text) => {
      assert.match(text, new RegExp(env.values.acme_ceo_first));
      assert.match(text, /rejected/);
      assert.match(text, /Ada Reviewer/);
      assert.match(text, /John Roe chairs the board; the CEO is Jane Doe/);
      return true;
    }, 'the chief executive\'s history', { inner: true });
    await card(page, 'ceo').getByText(/approved|rejected/).first().waitFor();
    await screenshot(page, 'entity-page');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('approve, lock and unlock, set a value by hand, answer a human_input field', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    await openEntity(page, env.entities.sakura);

    await card(page, 'ceo').getByRole('button', { name: 'Approve' }).click();
    await card(page, 'ceo').locator('.field-state').filter({ hasText: 'approved' }).waitFor();
    const entity = await apiGet(page, `/v1/entities/${env.entities.sakura}`);
    assert.equal(entity.body.fields.ceo, env.values.sakura_ceo);

    await card(page, 'headquarters').getByRole('button', { name: 'Lock', exact: true }).click();
    await card(page, 'headquarters').getByRole('button', { name: 'Unlock' }).waitFor();
    await card(page, 'headquarters').getByText('locked').first().waitFor();
    const locked = await apiGet(page, `/v1/entities/${env.entities.sakura}`);
    assert.deepEqual(locked.body.metadata.locked_fields, ['headquarters']);
    await card(page, 'headquarters').getByRole('button', { name: 'Unlock' }).click();
    await card(page, 'headquarters').getByRole('button', { name: 'Lock', exact: true }).waitFor();
    const unlocked = await apiGet(page, `/v1/entities/${env.entities.sakura}`);
    assert.deepEqual(unlocked.body.metadata.locked_fields || [], []);

    // The human_input field waits for a person; the answer is typed as a number.
    const budget = card(page, 'budget');
    await budget.getByText('needs a person').first().waitFor();
    const answer = budget.getByLabel(/Your answer/);
    await answer.fill('a lot');
    await budget.getByRole('button', { name: 'Send answer' }).click();
    await budget.getByText('Enter a number.').waitFor();
    await answer.fill('250000');
    await budget.getByRole('button', { name: 'Send answer' }).click();
    // Shown as its display_type (currency) says: grouped, two decimals.
    await card(page, 'budget').locator('.field-value.display-currency').filter({ hasText: '250,000.00' }).waitFor();
    await card(page, 'budget').locator('.field-state').filter({ hasText: 'approved' }).waitFor();

    // A value set by hand on an entity no agent has run on yet.
    await openEntity(page, env.entities.globex);
    const ceo = card(page, 'ceo');
    await ceo.locator('.field-state').filter({ hasText: 'not extracted' }).waitFor();
    await ceo.getByRole('button', { name: 'Set value…' }).click();
    await ceo.getByLabel(/New value for Chief executive/).fill('Hank Scorpio');
    await ceo.getByRole('button', { name: 'Save value' }).click();
    await card(page, 'ceo').locator('.field-value').filter({ hasText: 'Hank Scorpio' }).waitFor();
    await card(page, 'ceo').locator('.field-state').filter({ hasText: 'approved' }).waitFor();
    await expectText(card(page, 'ceo').locator('dl.facts'), /human/, 'the hand-set value\'s facts', { inner: true });
    const globex = await apiGet(page, `/v1/entities/${env.entities.globex}`);
    assert.equal(globex.body.fields.ceo, 'Hank Scorpio');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('a run started from the entity page is followed until its fields settle; failed fields can be retried', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    await page.goto(`${env.url}/#/types/${env.type}?q=Filler%20Company%2001`);
    await page.getByRole('link', { name: 'Filler Company 01' }).click();
    await page.locator('.field-card').first().waitFor();
    await page.getByRole('button', { name: 'Run extraction' }).click();
    await page.locator('#notice').filter({ hasText: /Run queued: \d+ fields?/ }).waitFor();
    // No reload: the page follows the run until nothing is queued or running.
    await page.locator('.watch-status').filter({ hasText: 'Up to date.' }).waitFor({ timeout: RERUN_TIMEOUT });
    // The scripted agents know no value for a filler company, so its agent fields fail, each
    // with its error on the page, and the human_input field waits for a person.
    await eventually(() => page.locator('.field-card .field-state').allInnerTexts(), (states) => {
      for (const state of states) assert.doesNotMatch(state, /queued|running/);
      assert.deepEqual(states, ['failed', 'failed', 'needs a person']);
      return true;
    }, 'the fields\' states once the run settled');
    await page.locator('.field-card[data-field="ceo"] .task-error').waitFor();
    await page.locator('.run-summary').filter({ hasText: '2 failed or blocked' }).waitFor();
    await page.getByRole('button', { name: 'Retry 2 failed fields' }).click();
    await page.locator('#notice').filter({ hasText: 'Retrying 2 fields' }).waitFor();
    // "Up to date." is still there from the first run until the retry's watch starts: wait for
    // that watch (it says so for at least the poller's one second, long enough to be seen
    // polling every 50 ms) and then for it to settle.
    await eventually(
      () => page.locator('.watch-status').allInnerTexts(),
      (texts) => texts.length === 1 && texts[0].includes('Waiting for the agents'),
      'the retry\'s watch starts',
    );
    await page.locator('.watch-status').filter({ hasText: 'Up to date.' }).waitFor({ timeout: RERUN_TIMEOUT });
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('a read-only key sees the values but every review action is disabled', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.reader);
    await openEntity(page, env.entities.acme);
    await expectDisabled(card(page, 'ceo').getByRole('button', { name: 'Lock', exact: true }), true, 'Lock for a read-only key');
    await page.goto(`${env.url}/#/queue/${env.type}`);
    await page.locator('.queue-counter').filter({ hasText: /^Item 1 of/ }).waitFor();
    await expectDisabled(page.locator('.queue-item').getByRole('button', { name: /Approve/ }), true, 'Approve for a read-only key');
    const before = await page.locator('.queue-counter').innerText();
    await page.keyboard.press('a');
    // Nothing to wait for when nothing may happen: watch the counter stay as it was for a while
    // (an approval would change it once its request came back).
    await stays(() => page.locator('.queue-counter').innerText(), (now) => now === before, 'a does nothing without extraction:review');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

/** Inputs on the page that no label names (neither a <label> nor aria-label/labelledby). */
async function unlabelledInputs(page) {
  return page.evaluate(() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
    .filter((el) => el.offsetParent !== null || el.closest('details[open]'))
    .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
    .map((el) => el.outerHTML));
}

/** Waits until no input on the page lacks a label (failing with the unlabelled ones). */
async function expectAllLabelled(page, where) {
  await eventually(() => unlabelledInputs(page), (found) => found.length === 0, `every input of ${where} has a label`);
}

test('every input of the review and documents pages has a label', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    // Each check runs once the inputs it is about are on the page (an empty page has no
    // unlabelled input either).
    await page.goto(`${env.url}/#/types/${env.type}`);
    await page.locator('.entity-table').waitFor();
    await expectAllLabelled(page, 'the entity list');
    await page.goto(`${env.url}/#/queue/${env.type}`);
    await page.locator('.queue-item h2').waitFor();
    await page.keyboard.press('r');
    await page.locator('.queue-item').getByLabel(/Why is it wrong/).waitFor();
    await expectAllLabelled(page, 'the queue with the reject form open');
    await openEntity(page, env.entities.acme);
    await card(page, 'headquarters').getByRole('button', { name: 'Set value…' }).click();
    await card(page, 'headquarters').getByRole('button', { name: 'Reject…' }).click();
    await card(page, 'headquarters').getByLabel(/New value for Head office/).waitFor();
    await card(page, 'headquarters').getByLabel(/Why is this Head office wrong/).waitFor();
    await expectAllLabelled(page, 'the entity page with the set and reject forms open');
    await page.goto(`${env.url}/#/documents`);
    await page.getByText('Upload a document').click();
    await page.getByLabel(/^File/).waitFor();
    await expectAllLabelled(page, 'the documents page with the upload form open');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('keyboard focus is always visible', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    await openEntity(page, env.entities.acme);
    for (let i = 0; i < 12; i += 1) {
      await page.keyboard.press('Tab');
      const focus = await page.evaluate(() => {
        const el = document.activeElement;
        const style = getComputedStyle(el);
        return { tag: el.tagName, visible: el.matches(':focus-visible'), outline: style.outlineStyle, width: parseFloat(style.outlineWidth) };
      });
      if (focus.tag === 'BODY') continue;
      assert.equal(focus.visible, true, `${focus.tag} matches :focus-visible`);
      assert.notEqual(focus.outline, 'none', `${focus.tag} shows an outline`);
      assert.ok(focus.width >= 2, `${focus.tag} outline is at least 2px`);
    }
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('the review pages fit a 390 px phone without sideways scrolling', async () => {
  const { page, errors, close } = await launch({ viewport: PHONE });
  try {
    await signIn(page, env.keys.admin);
    const pages = [
      ['', 'h1'],
      [`#/types/${env.type}`, '.entity-table'],
      [`#/queue/${env.type}`, '.queue-item h2'],
      [`#/entities/${env.entities.acme}`, '.field-card'],
    ];
    for (const [hash, ready] of pages) {
      await page.goto(`${env.url}/${hash}`);
      await page.locator(ready).first().waitFor();
      await routeSettled(page);
      await expectNoHorizontalOverflow(page, `${hash || 'home'} fits 390 px without sideways scrolling`);
    }
    await screenshot(page, 'entity-page-phone');
    await page.goto(`${env.url}/#/queue/${env.type}`);
    await page.locator('.queue-item h2').waitFor();
    await screenshot(page, 'review-queue-phone');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});
