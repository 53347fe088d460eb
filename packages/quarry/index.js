// Quarry's browser host: the `extract` skill, the output guardrail (`check`) and the lenient JSON
// parser (`parse`, `repair`) running in WebAssembly, in browsers and in Node 20.
//
// The answers are the CLI's and the HTTP host's, byte for byte: the module runs the same Rust
// functions (crates/quarry-wasm). Each call crosses into the module as one JSON string and comes
// back as one, which this file parses; a failure comes back as `{"error", "message"}` and is
// thrown as a `SkillError`.
//
// The entity data (the gazetteer table `entity` and `name` read, 4.5 MB) is a file of its own,
// dist/entity_data.bin: `invokeSkill` loads it the first time a request needs it, so a page that
// only extracts emails, URLs or dates never downloads it.

import initModule, * as wasm from './dist/quarry_wasm.js';

/** Where the module and the entity data are, unless `init` is told otherwise. */
const DEFAULT_MODULE = new URL('./dist/quarry_wasm_bg.wasm', import.meta.url);
const DEFAULT_ENTITY_DATA = new URL('./dist/entity_data.bin', import.meta.url);

/**
 * A failure of a skill call. `code` is the contract's failure code (`InvalidTarget`,
 * `EmptyInput`, …); `message` reads `<code> - <what was wrong>`, as the CLI prints it.
 */
export class SkillError extends Error {
  /**
   * @param {string} code the failure code, e.g. `InvalidTarget`
   * @param {string} reason what was wrong, e.g. `unknown target 'fax'`
   */
  constructor(code, reason) {
    super(`${code} - ${reason}`);
    this.name = 'SkillError';
    this.code = code;
    this.reason = reason;
  }
}

let moduleReady = null;
let loaded = false;
let entityDataSource = DEFAULT_ENTITY_DATA;
let entityDataReady = null;

/**
 * Loads the WebAssembly module; every other call needs it. Safe to call more than once (the
 * first call's options win). `module` may be a URL, a path string, a `Response`, bytes or a
 * compiled `WebAssembly.Module`; `entityData` says where `invokeSkill` finds the entity data when
 * a request first needs it (same kinds, except a module).
 *
 * @param {{module?: URL | string | Response | BufferSource | WebAssembly.Module,
 *          entityData?: URL | string | Response | BufferSource}} [options]
 */
export function init(options = {}) {
  if (!moduleReady) {
    if (options.entityData !== undefined) {
      entityDataSource = options.entityData;
    }
    moduleReady = (async () => {
      const source = options.module ?? DEFAULT_MODULE;
      // Browsers stream-compile from the URL; Node reads a file URL into bytes.
      const input = isFileUrl(source) ? await bytesOf(source) : source;
      await initModule({ module_or_path: input });
      loaded = true;
    })();
    // A failed load may be retried: the next call starts over.
    moduleReady.catch(() => {
      moduleReady = null;
    });
  }
  return moduleReady;
}

/**
 * Installs the entity data that `entity` and `name` need (loads the module first if needed).
 * Without `source`, loads the one `init` was told about, by default the package's
 * dist/entity_data.bin. Resolves at once when it is already loaded; rejects with a
 * `SkillError` `EntityDataNotLoaded` when the bytes cannot be read or are not entity data.
 *
 * @param {URL | string | Response | BufferSource} [source]
 */
export async function loadEntityData(source) {
  await init();
  if (wasm.entityDataLoaded()) {
    return;
  }
  if (!entityDataReady) {
    const from = source ?? entityDataSource;
    entityDataReady = bytesOf(from)
      .catch((error) => {
        const where = from instanceof URL || typeof from === 'string' ? ` from ${from}` : '';
        throw new SkillError('EntityDataNotLoaded', `could not read the entity data${where}: ${error.message}`);
      })
      .then((bytes) => {
        if (!wasm.entityDataLoaded()) {
          call(wasm.loadEntityData, bytes);
        }
      })
      .finally(() => {
        entityDataReady = null;
      });
  }
  return entityDataReady;
}

/** Whether the module is loaded (the synchronous functions can run). */
export function isReady() {
  return loaded;
}

/** Whether the entity data is installed (`entity` and `name` can run synchronously). */
export function entityDataLoaded() {
  return loaded && wasm.entityDataLoaded();
}

/**
 * Runs a skill as the reference's browser host does: `invokeSkill('extract', {text, target})`
 * resolves to the CLI's JSON as an object, e.g. `{email: 'hello@agent.rs'}`;
 * `invokeSkill('check', {text, target, output})` to the guardrail's verdict. Loads the module,
 * and for `entity` and `name` the entity data, on first use. Rejects with a `SkillError`.
 *
 * @param {'extract' | 'check'} skill
 * @param {object} input
 */
export async function invokeSkill(skill, input) {
  await init();
  if (skill === 'extract') {
    if (typeof input?.target === 'string' && wasm.needsEntityData(input.target)) {
      await loadEntityData();
    }
    return extract(input);
  }
  if (skill === 'check') {
    return check(input);
  }
  throw new SkillError(
    'MalformedRequest',
    `unknown skill ${JSON.stringify(skill)}; the browser host runs 'extract' and 'check'`,
  );
}

/**
 * The extract skill, synchronously (after `await init()`; `entity` and `name` also need
 * `await loadEntityData()`). `input`: `{text, target, now?, region?, detail?}` as in the CLI's
 * JSONL and `POST /skill/extract`; `now` (RFC 3339) defaults to this machine's clock and zone.
 *
 * @param {{text: string, target: string, now?: string, region?: string, detail?: boolean}} input
 */
export function extract(input) {
  requireModule();
  return JSON.parse(call(wasm.extractJson, JSON.stringify(input ?? null), localNow()));
}

/**
 * The output guardrail (`quarry check`, `POST /skill/check`): is `output`, what a model answered
 * for `target` on `text`, valid, well typed, plausible and grounded in `text`? Returns the verdict
 * (`{verdict: 'accepted', values}` or `{verdict: 'rejected', reasons}`); throws a `SkillError`
 * only for a bad request. `output` is the model's raw text; an object is serialised first.
 *
 * @param {{text: string, target: string, output: string | object}} input
 */
export function check(input) {
  requireModule();
  const output = input?.output;
  const request =
    typeof output === 'string' || output === undefined ? input : { ...input, output: JSON.stringify(output) };
  return JSON.parse(call(wasm.checkJson, JSON.stringify(request ?? null)));
}

/**
 * Reads a model's reply leniently and fits it to a JSON Schema (`{}`: any value). Returns
 * `{value, flags, score, errors}` — the repairs and coercions made (`flags`, lower `score` is
 * better) and what still does not fit — or `null` when the reply holds no JSON at all.
 *
 * @param {string} raw
 * @param {object} [schema]
 */
export function parse(raw, schema = {}) {
  requireModule();
  return JSON.parse(call(wasm.parseJson, text(raw, 'raw'), JSON.stringify(schema)));
}

/**
 * Reads `raw` as one JSON document, repairing what models break (prose, fences, trailing commas,
 * single quotes, comments, Python literals, truncation, …): `{value, flags}`. With `strict`, a
 * repair that needs a guess throws instead. Throws `SkillError` `MalformedOutput` when there is
 * no JSON to read.
 *
 * @param {string} raw
 * @param {{strict?: boolean}} [options]
 */
export function repair(raw, options = {}) {
  requireModule();
  return JSON.parse(call(wasm.repairJson, text(raw, 'raw'), Boolean(options.strict)));
}

function requireModule() {
  if (!loaded) {
    throw new Error('the Quarry module is not loaded yet: await init() (or invokeSkill) first');
  }
}

/** Calls an export, turning a thrown `{"error", "message"}` into a `SkillError`. */
function call(fn, ...args) {
  try {
    return fn(...args);
  } catch (thrown) {
    if (typeof thrown === 'string') {
      const { error, message } = JSON.parse(thrown);
      throw new SkillError(error, message);
    }
    throw thrown;
  }
}

function text(value, name) {
  if (typeof value !== 'string') {
    throw new SkillError('MalformedRequest', `${name} must be a string, got ${typeof value}`);
  }
  return value;
}

/** Bytes of a URL, path, `Response` or buffer: `fetch` over HTTP, the file system for file URLs. */
async function bytesOf(source) {
  if (source instanceof ArrayBuffer) {
    return new Uint8Array(source);
  }
  if (ArrayBuffer.isView(source)) {
    return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  }
  if (typeof Response !== 'undefined' && source instanceof Response) {
    return new Uint8Array(await source.arrayBuffer());
  }
  const url = toUrl(source);
  if (url.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    return readFile(url);
  }
  const response = await fetch(url);
  if (!response.ok) {
    throw new Error(`fetching ${url}: HTTP ${response.status}`);
  }
  return new Uint8Array(await response.arrayBuffer());
}

function isFileUrl(source) {
  return (typeof source === 'string' || source instanceof URL) && toUrl(source).protocol === 'file:';
}

function toUrl(source) {
  return source instanceof URL ? source : new URL(source, globalThis.location?.href ?? import.meta.url);
}

/** Now, in RFC 3339 with this machine's UTC offset: the reference time for relative dates. */
function localNow(date = new Date()) {
  const offset = -date.getTimezoneOffset();
  const pad = (n) => String(Math.floor(n)).padStart(2, '0');
  const local = new Date(date.getTime() + offset * 60_000).toISOString().slice(0, 19);
  const sign = offset < 0 ? '-' : '+';
  return `${local}${sign}${pad(Math.abs(offset) / 60)}:${pad(Math.abs(offset) % 60)}`;
}
