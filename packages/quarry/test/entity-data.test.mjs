// The entity data is separate from the module: entity and name refuse to run until it is loaded,
// damaged bytes are refused, and once loaded they answer as the CLI does.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';

import * as quarry from '../index.js';

const ENTITY_DATA = new URL('../dist/entity_data.bin', import.meta.url);
const request = { text: 'The report was prepared by Dr. Jane Smith.', target: 'name' };

test('entity data loads separately and is checked', async (t) => {
  await quarry.init();

  await t.test('before loading, entity and name fail with a clear error; other targets run', () => {
    assert.equal(quarry.entityDataLoaded(), false);
    for (const target of ['name', 'entity', ' Entity ']) {
      assert.throws(() => quarry.extract({ ...request, target }), (error) => {
        assert.equal(error.code, 'EntityDataNotLoaded');
        assert.match(error.message, /loadEntityData/);
        return true;
      });
    }
    assert.deepEqual(quarry.extract({ text: 'mail hello@agent.rs', target: 'email' }), { email: 'hello@agent.rs' });
  });

  await t.test('bytes that are not entity data, or are damaged, are refused', async () => {
    const good = await readFile(ENTITY_DATA);
    const truncated = good.subarray(0, good.length - 1);
    const wasm = await readFile(new URL('../dist/quarry_wasm_bg.wasm', import.meta.url));
    for (const bytes of [new Uint8Array(0), wasm.subarray(0, 1000), truncated]) {
      await assert.rejects(quarry.loadEntityData(bytes), { code: 'EntityDataNotLoaded' });
    }
    assert.equal(quarry.entityDataLoaded(), false);
    await assert.rejects(quarry.loadEntityData(new URL('./missing.bin', ENTITY_DATA)), (error) => {
      assert.equal(error.code, 'EntityDataNotLoaded');
      assert.match(error.message, /could not read the entity data from file:.*missing\.bin: .*ENOENT/);
      return true;
    });
  });

  await t.test('after loading, entity and name answer, synchronously too', async () => {
    await quarry.loadEntityData(await readFile(ENTITY_DATA));
    assert.equal(quarry.entityDataLoaded(), true);
    assert.deepEqual(quarry.extract(request), { name: 'Dr. Jane Smith' });
    // Loading again is a no-op, not an error.
    await quarry.loadEntityData();
  });
});
