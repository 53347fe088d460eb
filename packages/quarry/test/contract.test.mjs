// The extract skill's contract through the package in Node: the reference's seven examples give
// exactly the CLI's JSON, and failures throw a SkillError with the contract's code and message.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import * as agent from '../index.js';

const examples = JSON.parse(readFileSync(new URL('./contract-examples.json', import.meta.url), 'utf8'));

/** Same values and the same key order as the CLI's one-line JSON. */
function assertSameJson(actual, cliOutput, what) {
  assert.equal(JSON.stringify(actual), JSON.stringify(JSON.parse(cliOutput)), what);
}

test('the seven contract examples answer exactly the CLI JSON', async () => {
  for (const { example, input, output } of examples) {
    assertSameJson(await agent.invokeSkill('extract', input), output, `example ${example}`);
  }
});

test("the browser host example resolves to {email: 'hello@agent.rs'}", async () => {
  const result = await agent.invokeSkill('extract', { text: 'Contact: hello@agent.rs', target: 'email' });
  assert.deepEqual(result, { email: 'hello@agent.rs' });
});

test('an unknown target throws SkillError: InvalidTarget with the contract message', async () => {
  // Quarry supports phone (an extension of the contract), so the failure uses a target it rejects.
  await assert.rejects(agent.invokeSkill('extract', { text: 'Contact: hello@agent.rs', target: 'fax' }), (error) => {
    assert.ok(error instanceof agent.SkillError);
    assert.ok(error instanceof Error);
    assert.equal(error.code, 'InvalidTarget');
    assert.equal(error.message, "InvalidTarget - unknown target 'fax'");
    assert.equal(String(error), "SkillError: InvalidTarget - unknown target 'fax'");
    return true;
  });
});

test('phone is a target here, normalised to E.164 as in the CLI', async () => {
  const result = await agent.invokeSkill('extract', { text: 'Call us on (415) 555-2671 today', target: 'phone' });
  assert.deepEqual(result, { phone: '+14155552671' });
});

test('every input failure has its own code', async () => {
  const cases = [
    [{ text: '  ', target: 'email' }, 'EmptyInput'],
    [{ text: 'hi' }, 'MissingTarget'],
    [{ target: 'email' }, 'MalformedRequest'],
    [null, 'MalformedRequest'],
    [{ text: 'next friday', target: 'date', now: 'yesterday' }, 'InvalidNow'],
    [{ text: '555 0100', target: 'phone', region: 'Atlantis' }, 'InvalidRegion'],
  ];
  for (const [input, code] of cases) {
    await assert.rejects(agent.invokeSkill('extract', input), (error) => error.code === code, JSON.stringify(input));
  }
  await assert.rejects(agent.invokeSkill('summarise', { text: 'x' }), { code: 'MalformedRequest' });
});

test('now and detail behave as in the CLI', async () => {
  const result = await agent.invokeSkill('extract', {
    text: 'Ship it tomorrow',
    target: 'date',
    now: '2024-01-10T12:00:00Z',
    detail: true,
  });
  assert.deepEqual(result, {
    date: '2024-01-11',
    matches: [{ text: 'tomorrow', start: 8, end: 16, value: '2024-01-11', type: 'date' }],
  });
});

test("relative dates default to this machine's clock", async () => {
  const { date } = await agent.invokeSkill('extract', { text: 'see you today', target: 'date' });
  const now = new Date();
  const pad = (n) => String(n).padStart(2, '0');
  const today = `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
  // Around midnight the two clocks may straddle the date line; both are correct readings.
  const yesterday = new Date(now.getTime() - 60_000);
  const before = `${yesterday.getFullYear()}-${pad(yesterday.getMonth() + 1)}-${pad(yesterday.getDate())}`;
  assert.ok([today, before].includes(date), `${date} is not ${today}`);
});
