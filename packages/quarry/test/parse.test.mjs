// The lenient JSON parser through the package: values with their repair flags, fitted to a schema.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import * as quarry from '../index.js';

await quarry.init();

test('parse reads JSON out of prose and fences and fits it to the schema', () => {
  const reply = "Here you go:\n```json\n{'total': '12.50', 'items': ['a', 'b',],}\n```\nAnything else?";
  const schema = {
    type: 'object',
    properties: { total: { type: 'number' }, items: { type: 'array', items: { type: 'string' } } },
  };
  const parsed = quarry.parse(reply, schema);
  assert.deepEqual(parsed.value, { total: 12.5, items: ['a', 'b'] });
  for (const flag of ['extracted_from_fence', 'single_quotes', 'trailing_comma']) {
    assert.ok(parsed.flags.includes(flag), `${flag} in ${parsed.flags}`);
  }
  assert.ok(parsed.score > 0);
  assert.deepEqual(parsed.errors, []);
});

test('parse reports what does not fit, with a JSONPath', () => {
  const parsed = quarry.parse('{"age": "forty"}', { type: 'object', properties: { age: { type: 'integer' } } });
  assert.equal(parsed.errors.length, 1);
  assert.equal(parsed.errors[0].path, '$.age');
});

test('parse without a schema takes any value, and null when there is no JSON', () => {
  assert.deepEqual(quarry.parse('[1, 2]').value, [1, 2]);
  assert.deepEqual(quarry.parse('[1, 2]').flags, []);
  assert.equal(quarry.parse('   '), null);
});

test('repair returns the value and one flag per repair', () => {
  const repaired = quarry.repair('{name: "Ada", active: True, tags: ["x",], // note\n');
  assert.deepEqual(repaired.value, { name: 'Ada', active: true, tags: ['x'] });
  for (const flag of ['unquoted_key', 'python_literal', 'trailing_comma', 'comment', 'truncated']) {
    assert.ok(repaired.flags.includes(flag), `${flag} in ${repaired.flags}`);
  }
});

test('strict repair refuses a guess; nothing to read is MalformedOutput', () => {
  assert.throws(() => quarry.repair('{"a": 1', { strict: true }), { name: 'SkillError', code: 'MalformedOutput' });
  assert.deepEqual(quarry.repair('{"a": 1}', { strict: true }), { value: { a: 1 }, flags: [] });
  assert.throws(() => quarry.repair(''), { code: 'MalformedOutput' });
  assert.throws(() => quarry.repair(42), { code: 'MalformedRequest' });
});
