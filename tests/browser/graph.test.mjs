// The graph explorer and the episodes page in a real browser, on the seeded graph (Alice leads
// Project Falcon and works at Initech; Bob works on Project Falcon; Initech is in Berlin) and an
// episode whose first extraction the scripted model refused.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertNoPageErrors, env, eventually, expectAttribute, expectCount, expectNoHorizontalOverflow,
  expectText, expectTexts, launch, PHONE, routeSettled, screenshot, signIn,
} from './harness.mjs';

const node = (id) => `#graph-svg [data-id="${id}"]`;

test('search by name and by meaning, an entity page, and clicking through the neighbourhood', async () => {
  const { page, errors, close } = await launch();
  try {
    // Reading the graph needs only entities:read.
    await signIn(page, env.keys.reader);
    await page.getByRole('link', { name: 'Graph' }).click();
    await page.locator('#graph-most').waitFor();

    await page.getByLabel('Name or meaning').fill('falcon');
    await page.getByRole('button', { name: 'Search' }).click();
    await expectTexts(page.locator('#graph-by-name > li > a'), ['Project Falcon'], 'entities named like "falcon"');

    // No name holds these words; Berlin's notes do ("Capital of Germany.").
    await page.getByLabel('Name or meaning').fill('capital of germany');
    await page.getByLabel('Name or meaning').press('Enter');
    // The results for "falcon" (with a by-meaning list of their own) stay until the new search
    // answers: wait for both halves of the new answer together, or the old page would pass.
    await eventually(
      async () => ({
        byName: await page.locator('#graph-by-name').count(),
        firstByMeaning: (await page.locator('#graph-by-meaning > li > a').allTextContents())[0],
      }),
      ({ byName, firstByMeaning }) => byName === 0 && firstByMeaning === 'Berlin',
      '"capital of germany" matches no name and Berlin first by meaning',
    );
    await screenshot(page, 'graph-search');

    await page.goto(`${env.url}/#/graph?q=falcon`);
    // The "capital of germany" results stay until the hashchange runs: click in the new ones.
    await expectTexts(page.locator('#graph-by-name > li > a'), ['Project Falcon'], 'entities named like "falcon"');
    await page.getByRole('link', { name: 'Project Falcon' }).click();
    await page.getByRole('heading', { level: 1, name: 'Project Falcon' }).waitFor();
    await expectText(page.locator('#graph-notes'), "Initech's new search engine.", 'Project Falcon\'s notes');
    await expectText(page.locator('#graph-mentions'), '2', 'Project Falcon\'s mentions');
    await eventually(
      async () => (await page.locator('#graph-relations > li').allTextContents()).map(squash),
      (relations) => {
        assert.ok(relations.some((r) => r.startsWith('Alice leads Project Falcon')), relations.join(' | '));
        assert.ok(relations.some((r) => r.startsWith('Bob works_on Project Falcon')), relations.join(' | '));
        return true;
      },
      'Project Falcon\'s relations',
    );
    await expectCount(page.locator('#graph-episodes > li'), 2, 'episodes that mention Project Falcon');

    // Depth 2 (the default) reaches Initech through Alice, not Berlin; depth 3 reaches Berlin.
    // One drawing holds both nodes, so read them together: Initech there proves the drawing is
    // the depth-2 one in which Berlin must be missing.
    await eventually(
      async () => ({
        initech: await page.locator(node(env.graph.initech)).count(),
        berlin: await page.locator(node(env.graph.berlin)).count(),
      }),
      ({ initech, berlin }) => initech === 1 && berlin === 0,
      'depth 2 draws Initech and not Berlin',
    );
    await page.getByLabel('Depth').selectOption('3');
    await page.locator(node(env.graph.berlin)).waitFor();
    await eventually(
      () => page.locator('#graph-svg .graph-edge-label').allTextContents(),
      (labels) => {
        for (const label of ['leads', 'works_on', 'works_at', 'located_in']) assert.ok(labels.includes(label), labels.join(', '));
        return true;
      },
      'the depth-3 drawing labels every relation',
    );
    await screenshot(page, 'graph');

    // Keyboard: Tab from the depth select reaches the drawing's nodes; Enter opens one.
    await page.getByLabel('Depth').focus();
    let onNode = null;
    for (let i = 0; i < 12 && !onNode; i += 1) {
      await page.keyboard.press('Tab');
      onNode = await page.evaluate(() => document.activeElement.closest('#graph-svg a.graph-node')?.dataset.id ?? null);
    }
    assert.ok(onNode, 'a node of the drawing takes keyboard focus');
    await page.locator(node(env.graph.alice)).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Alice' }).waitFor();
    // And a click moves on again, to Initech, where Berlin is one hop away.
    await page.locator(node(env.graph.initech)).click();
    await page.getByRole('heading', { level: 1, name: 'Initech' }).waitFor();
    await page.locator(node(env.graph.berlin)).waitFor();
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('the graph pages fit a phone', async () => {
  const { page, errors, close } = await launch({ viewport: PHONE });
  try {
    await signIn(page, env.keys.reader);
    await page.goto(`${env.url}/#/graph/${env.graph.falcon}?depth=3`);
    await page.locator(node(env.graph.berlin)).waitFor();
    await routeSettled(page);
    await expectNoHorizontalOverflow(page, 'the graph page fits 390 px without sideways scrolling');
    await screenshot(page, 'graph-phone');
    await page.goto(`${env.url}/#/episodes`);
    await page.locator('#episodes-rows tr').first().waitFor();
    await routeSettled(page);
    await expectNoHorizontalOverflow(page, 'the episodes page fits 390 px without sideways scrolling');
    await screenshot(page, 'episodes-phone');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('a key that may only read sees no retry button', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.reader);
    await page.goto(`${env.url}/#/episodes`);
    const failed = page.locator(`#episodes-rows tr[data-episode="${env.episodes.failed}"][data-status="failed"]`);
    await failed.waitFor();
    await expectCount(failed.getByRole('button', { name: /Retry/ }), 0, 'retry buttons for a read-only key');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('episodes: a failed extraction shows its error, a retry finishes, and its entities link to the graph', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    await page.getByRole('link', { name: 'Episodes' }).click();
    await page.getByLabel('State').selectOption('failed');
    await page.locator('#episodes-summary', { hasText: '(failed)' }).waitFor();
    const row = page.locator(`#episodes-rows tr[data-episode="${env.episodes.failed}"]`);
    await row.filter({ hasText: 'refused' }).waitFor();
    await expectCount(page.locator('#episodes-rows tr'), 1, 'only the failed episode is listed');
    await expectAttribute(row, 'data-status', 'failed', 'the failed episode\'s row');
    await screenshot(page, 'episodes');

    // The retried episode stays in view while the failed filter is on, and finishes.
    await row.getByRole('button', { name: /Retry/ }).click();
    await page.locator(`#episodes-rows tr[data-episode="${env.episodes.failed}"][data-status="done"]`).waitFor({ timeout: 20_000 });
    await row.getByRole('button', { name: 'Entities' }).click();
    await row.getByRole('link', { name: 'Zorblax', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Zorblax', exact: true }).waitFor();
    await expectText(page.locator('#graph-notes'), 'Runs the quarterly sync.', 'Zorblax\'s notes');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

function squash(text) {
  return text.replace(/[—→·]/g, ' ').replace(/\s+/g, ' ').trim();
}
