// The package in real headless Chromium, on the demo page it ships: the contract's seven examples
// through the page's form, the failure contract, the guardrail, the parser, and the entity data
// fetched only when a request first needs it.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';

import { launch } from './support/chromium.mjs';
import { serve } from './support/serve.mjs';

const examples = JSON.parse(readFileSync(new URL('./contract-examples.json', import.meta.url), 'utf8'));
const ENTITY_DATA = '/dist/entity_data.bin';

let server;
let browser;

before(async () => {
  server = await serve();
  browser = await launch();
  await browser.page.goto(`${server.url}/demo/`);
  await browser.page.locator('body[data-ready="true"]').waitFor();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** Runs the demo form on `input` and returns what the page shows (result or error). */
async function extractThroughForm({ text, target }) {
  const { page } = browser;
  await page.getByLabel('Text').fill(text);
  await page.getByLabel('Target').selectOption(target);
  await page.locator('#result').evaluate((node) => {
    node.textContent = '';
  });
  await page.getByRole('button', { name: 'Extract' }).click();
  await page.waitForFunction(() => document.querySelector('#result').textContent || document.querySelector('#error').textContent);
  return {
    result: await page.locator('#result').textContent(),
    error: await page.locator('#error').textContent(),
  };
}

test('the seven contract examples through the demo form give exactly the CLI JSON', async () => {
  for (const { example, input, output } of examples) {
    const entityDataBefore = server.requests.includes(ENTITY_DATA);
    const { result, error } = await extractThroughForm(input);
    assert.equal(error, '', `example ${example}`);
    assert.equal(JSON.stringify(JSON.parse(result)), JSON.stringify(JSON.parse(output)), `example ${example}`);
    if (!['entity', 'name'].includes(input.target) && !entityDataBefore) {
      assert.ok(!server.requests.includes(ENTITY_DATA), `example ${example} fetched the entity data`);
    }
  }
  // Examples 1–3 ran without it; example 4 (entity) fetched it, once.
  assert.equal(server.requests.filter((path) => path === ENTITY_DATA).length, 1);
});

test("invokeSkill rejects an unknown target with SkillError: InvalidTarget - unknown target 'fax'", async () => {
  const caught = await browser.page.evaluate(async () => {
    try {
      await window.quarry.invokeSkill('extract', { text: 'Contact: hello@agent.rs', target: 'fax' });
      return null;
    } catch (error) {
      return {
        isSkillError: error instanceof window.quarry.SkillError,
        code: error.code,
        message: error.message,
        shown: String(error),
      };
    }
  });
  assert.deepEqual(caught, {
    isSkillError: true,
    code: 'InvalidTarget',
    message: "InvalidTarget - unknown target 'fax'",
    shown: "SkillError: InvalidTarget - unknown target 'fax'",
  });
  const empty = await extractThroughForm({ text: '   ', target: 'email' });
  assert.match(empty.error, /^SkillError: EmptyInput - /);
});

test("the demo's guardrail rejects the contract's hallucinated output", async () => {
  const { page } = browser;
  const example = examples.find((e) => e.example === 7);
  await page.getByLabel('Text').fill(example.input.text);
  await page.getByLabel('Target').selectOption(example.input.target);
  await page.getByLabel('Model output').fill(example.rejected_model_output);
  await page.getByRole('button', { name: 'Check' }).click();
  await page.locator('#verdict').filter({ hasText: 'rejected' }).waitFor();
  assert.equal(await page.locator('#verdict').textContent(), `rejected:\n- ${example.rejection_reason}`);
});

test('parse and repair run in the page with their flags', async () => {
  const answers = await browser.page.evaluate(() => ({
    parsed: window.quarry.parse("Sure: {'total': '12',}", { type: 'object', properties: { total: { type: 'number' } } }),
    repaired: window.quarry.repair('{a: True'),
  }));
  assert.deepEqual(answers.parsed.value, { total: 12 });
  assert.ok(answers.parsed.flags.includes('single_quotes'), answers.parsed.flags.join());
  assert.deepEqual(answers.repaired.value, { a: true });
  assert.ok(answers.repaired.flags.includes('truncated'), answers.repaired.flags.join());
});

test('the page logged no errors', () => {
  assert.deepEqual(browser.errors, []);
});
