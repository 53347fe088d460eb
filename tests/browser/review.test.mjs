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
  PHONE, assertNoPageErrors, env, launch, overflowsHorizontally, screenshot, signIn,
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

async function openEntity(page, id) {
  await page.goto(`${env.url}/#/entities/${id}`);
  await page.locator('.field-card').first().waitFor();
}

test('the entity list shows every company with its fields\' states in words, searchable and paginated', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    await page.getByRole('link', { name: 'Company', exact: true }).first().click();
    await page.getByRole('heading', { level: 1, name: /Company entities/ }).waitFor();
    const total = 3 + env.filler_count;
    assert.equal(await page.locator('.entity-table tbody tr').count(), 50);
    await page.getByText(`1–50 of ${total}`).waitFor();
    await page.getByRole('button', { name: /Next/ }).click();
    await page.getByText(`51–${total} of ${total}`).waitFor();
    assert.equal(await page.locator('.entity-table tbody tr').count(), total - 50);

    await page.getByLabel('Search by title').fill('sakura');
    await page.getByLabel('Search by title').press('Enter');
    await page.waitForURL(/q=sakura/);
    const rows = page.locator('.entity-table tbody tr');
    await rows.first().getByText('Sakura Robotics').waitFor();
    assert.equal(await rows.count(), 1);
    // States are words beside their field, not only colours.
    const badges = await rows.first().locator('.field-badge').allInnerTexts();
    assert.deepEqual(badges.map((b) => b.replace(/\s+/g, ' ').trim()), [
      'Chief executive: pending review',
      'Head office: pending review',
      'Approved budget: needs a person',
    ]);
    await page.getByRole('link', { name: 'Clear' }).click();
    await page.waitForURL((url) => !url.hash.includes('q='));
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
    assert.match(await page.locator('.shortcuts').innerText(), /j.*next.*k.*previous.*a.*approve.*r.*reject.*s.*skip/s);

    await page.keyboard.press('j');
    await counter.filter({ hasText: /^Item 2 of 4/ }).waitFor();
    await page.keyboard.press('k');
    await counter.filter({ hasText: /^Item 1 of 4/ }).waitFor();
    await page.keyboard.press('ArrowRight');
    await counter.filter({ hasText: /^Item 2 of 4/ }).waitFor();
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('s');
    await counter.filter({ hasText: /^Item 2 of 4/ }).waitFor();
    await screenshot(page, 'review-queue');

    const item = page.locator('.queue-item');
    /** Moves with j (wrapping with k) until the card shows `title`'s `fieldLabel`. */
    const goTo = async (title, fieldLabel) => {
      for (let i = 0; i < 8; i += 1) {
        const text = await item.innerText();
        if (text.includes(title) && (await item.locator('h2').innerText()) === fieldLabel) return;
        await page.keyboard.press(i < 4 ? 'j' : 'k');
        await page.waitForTimeout(50);
      }
      assert.fail(`no queue item for ${title} / ${fieldLabel}`);
    };

    await goTo('Sakura Robotics', 'Head office');
    await item.getByText(env.values.sakura_headquarters).first().waitFor();
    // The value's words in their document's line, marked, before the reviewer decides.
    const quoted = item.locator('.cited-quote mark');
    await quoted.waitFor();
    assert.equal(await quoted.innerText(), env.values.sakura_headquarters);
    await page.keyboard.press('a');
    await page.locator('#notice').filter({ hasText: 'Approved headquarters of Sakura Robotics' }).waitFor();
    await counter.filter({ hasText: /of 3/ }).waitFor();

    await goTo('Acme Corp', 'Head office');
    await page.keyboard.press('r');
    const reason = item.getByLabel(/Why is it wrong/);
    await reason.waitFor();
    assert.equal(await reason.evaluate((el) => el === document.activeElement), true, 'the reason input has focus');
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
    const facts = await ceo.locator('dl.facts').innerText();
    assert.match(facts, /Confidence\s+high confidence/);
    assert.match(facts, /Agent\s+\S+/);
    assert.match(facts, /Tokens\s+\d+/);
    assert.match(facts, /Duration\s+\d/);
    await page.evaluate(() => { window.__sameDocument = true; });

    await ceo.getByRole('button', { name: 'Reject…' }).click();
    const reason = ceo.getByLabel(/Why is this Chief executive wrong/);
    assert.equal(await reason.evaluate((el) => el === document.activeElement), true);
    await reason.fill('John Roe chairs the board; the CEO is Jane Doe');
    await reason.press('Enter');
    await ceo.locator('.field-value').filter({ hasText: env.values.acme_ceo_rerun }).waitFor({ timeout: RERUN_TIMEOUT });
    assert.equal(await page.evaluate(() => window.__sameDocument), true, 'the page was not reloaded');
    await card(page, 'ceo').locator('.field-state').filter({ hasText: 'pending review' }).waitFor();

    // The history: the superseded value, who rejected it and why.
    await card(page, 'ceo').getByText('History and feedback').click();
    const history = card(page, 'ceo').locator('.history');
    await history.waitFor();
    const text = await history.innerText();
    assert.match(text, new RegExp(env.values.acme_ceo_first));
    assert.match(text, /rejected/);
    assert.match(text, /Ada Reviewer/);
    assert.match(text, /John Roe chairs the board; the CEO is Jane Doe/);
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
    await card(page, 'budget').locator('.field-value').filter({ hasText: '250000' }).waitFor();
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
    assert.match(await card(page, 'ceo').locator('dl.facts').innerText(), /human/);
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
    const states = await page.locator('.field-card .field-state').allInnerTexts();
    for (const state of states) assert.doesNotMatch(state, /queued|running/);
    // The scripted agents know no value for a filler company, so its agent fields fail, each
    // with its error on the page, and the human_input field waits for a person.
    assert.deepEqual(states, ['failed', 'failed', 'needs a person']);
    await page.locator('.field-card[data-field="ceo"] .task-error').waitFor();
    await page.locator('.run-summary').filter({ hasText: '2 failed or blocked' }).waitFor();
    await page.getByRole('button', { name: 'Retry 2 failed fields' }).click();
    await page.locator('#notice').filter({ hasText: 'Retrying 2 fields' }).waitFor();
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
    assert.equal(await card(page, 'ceo').getByRole('button', { name: 'Lock', exact: true }).isDisabled(), true);
    await page.goto(`${env.url}/#/queue/${env.type}`);
    await page.locator('.queue-counter').filter({ hasText: /^Item 1 of/ }).waitFor();
    assert.equal(await page.locator('.queue-item').getByRole('button', { name: /Approve/ }).isDisabled(), true);
    const before = await page.locator('.queue-counter').innerText();
    await page.keyboard.press('a');
    await page.waitForTimeout(300);
    assert.equal(await page.locator('.queue-counter').innerText(), before, 'a does nothing without extraction:review');
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

test('every input of the review and documents pages has a label', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    await page.goto(`${env.url}/#/types/${env.type}`);
    await page.locator('.entity-table').waitFor();
    assert.deepEqual(await unlabelledInputs(page), []);
    await page.goto(`${env.url}/#/queue/${env.type}`);
    await page.locator('.queue-item h2').waitFor();
    await page.keyboard.press('r');
    assert.deepEqual(await unlabelledInputs(page), []);
    await openEntity(page, env.entities.acme);
    await card(page, 'headquarters').getByRole('button', { name: 'Set value…' }).click();
    await card(page, 'headquarters').getByRole('button', { name: 'Reject…' }).click();
    assert.deepEqual(await unlabelledInputs(page), []);
    await page.goto(`${env.url}/#/documents`);
    await page.getByText('Upload a document').click();
    assert.deepEqual(await unlabelledInputs(page), []);
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
      assert.equal(await overflowsHorizontally(page), false, `${hash || 'home'} overflows at 390 px`);
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
