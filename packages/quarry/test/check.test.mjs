// The output guardrail through the package: the same verdicts as `quarry check` and
// `POST /skill/check`, including the contract's example 7.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import * as quarry from '../index.js';

const examples = JSON.parse(readFileSync(new URL('./contract-examples.json', import.meta.url), 'utf8'));

test("example 7: a value the text does not contain is rejected as a hallucination", async () => {
  const example = examples.find((e) => e.example === 7);
  const verdict = await quarry.invokeSkill('check', { ...example.input, output: example.rejected_model_output });
  assert.equal(verdict.verdict, 'rejected');
  assert.equal(verdict.reasons.length, 1);
  assert.equal(verdict.reasons[0].kind, 'hallucination');
  assert.equal(verdict.reasons[0].message, example.rejection_reason);
});

test('a grounded output is accepted with its evidence', async () => {
  await quarry.init();
  const text = 'Write to hello@agent.rs today';
  const verdict = quarry.check({ text, target: 'email', output: '{"email": "hello@agent.rs"}' });
  assert.equal(verdict.verdict, 'accepted');
  assert.equal(verdict.values[0].value, 'hello@agent.rs');
  const { start, end } = verdict.values[0].evidence.alignment;
  assert.equal(text.slice(start, end), 'hello@agent.rs');
});

test('an output object is checked as its JSON', async () => {
  await quarry.init();
  const verdict = quarry.check({ text: 'Write to hello@agent.rs', target: 'email', output: { email: ['hello@agent.rs'] } });
  assert.equal(verdict.verdict, 'accepted');
});

test('structural failures are verdicts, bad requests are errors', async () => {
  await quarry.init();
  const text = 'Write to hello@agent.rs';
  const malformed = quarry.check({ text, target: 'email', output: '{"email": ' });
  assert.deepEqual(malformed.reasons.map((r) => r.kind), ['malformed_output']);
  const schema = quarry.check({ text, target: 'email', output: '{"url": "hello@agent.rs"}' });
  assert.deepEqual(schema.reasons.map((r) => r.kind), ['schema_violation']);
  assert.throws(() => quarry.check({ text, target: 'fax', output: '{}' }), {
    name: 'SkillError',
    code: 'InvalidTarget',
    message: "InvalidTarget - unknown target 'fax'",
  });
  assert.throws(() => quarry.check({ text, target: 'email' }), { code: 'MalformedRequest' });
  assert.throws(() => quarry.check({ text: ' ', target: 'email', output: '{"email": []}' }), { code: 'EmptyInput' });
});
