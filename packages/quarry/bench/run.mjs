// The browser package's figures, in one run: module size (raw and gzipped, with and without the
// entity data), extract throughput for url+email and for date natively (`quarry bench`, and the
// package's own code path compiled natively), in Node and in headless Chromium on the same
// generated text, and the package's cold load time in Chromium.
//
//   scripts/wasm.sh && node packages/quarry/bench/run.mjs [--size-mib 4] [--passes 3] [--loads 5]
//
// Needs cargo (it builds `quarry` and an example in release mode), and for Chromium what
// scripts/browser.sh installs. Writes target/wasm-bench/figures.json and prints a table.
// With binaries already built (e.g. while other builds hold the target folder's lock):
// `--quarry target/release/quarry --native-throughput target/release/examples/native_throughput
// --reuse-embedded` (the single-module variant from an earlier run's target/wasm-bench/embedded/).

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';

import * as quarry from '../index.js';
import { launch } from '../test/support/chromium.mjs';
import { serve } from '../test/support/serve.mjs';
import { measureThroughput } from './measure.mjs';

const { values: options } = parseArgs({
  options: {
    'size-mib': { type: 'string', default: '4' },
    passes: { type: 'string', default: '3' },
    loads: { type: 'string', default: '5' },
    quarry: { type: 'string' },
    'native-throughput': { type: 'string' },
    'reuse-embedded': { type: 'boolean', default: false },
  },
});
const sizeMib = Number(options['size-mib']);
const passes = Number(options.passes);
const loads = Number(options.loads);

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const work = join(repo, 'target', 'wasm-bench');
mkdirSync(work, { recursive: true });
if (!existsSync(join(dist, 'quarry_wasm_bg.wasm'))) {
  throw new Error('packages/quarry/dist is empty: run scripts/wasm.sh first');
}

const log = (line) => process.stderr.write(`bench: ${line}\n`);
const run = (command, args) =>
  execFileSync(command, args, { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 26 });
const cargo = (...args) => run('cargo', args);
/** `quarry <args>`: the given binary, or built and run by cargo. */
const quarryCli = (...args) =>
  options.quarry ? run(options.quarry, args) : cargo('run', '--release', '--locked', '-q', '-p', 'quarry-cli', '--', ...args);

function size(path) {
  const bytes = readFileSync(path);
  return { raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
}

log('sizes');
const sizes = {
  module_without_entity_data: size(join(dist, 'quarry_wasm_bg.wasm')),
  entity_data: size(join(dist, 'entity_data.bin')),
  glue_js: size(join(dist, 'quarry_wasm.js')),
  index_js: size(fileURLToPath(new URL('../index.js', import.meta.url))),
};
if (!options['reuse-embedded']) {
  log('building the single-module variant with the entity data compiled in');
  cargo('build', '--release', '--locked', '--target', 'wasm32-unknown-unknown', '-p', 'quarry-wasm', '--features', 'embedded-entity-data');
  const bindgen = wasmBindgen();
  execFileSync(bindgen, ['--target', 'web', '--out-dir', join(work, 'embedded'), '--out-name', 'quarry_wasm',
    '--remove-name-section', '--remove-producers-section',
    join(repo, 'target/wasm32-unknown-unknown/release/quarry_wasm.wasm')], { stdio: 'inherit' });
}
sizes.module_with_entity_data_compiled_in = size(join(work, 'embedded', 'quarry_wasm_bg.wasm'));

log(`generating the ${sizeMib} MiB corpus with quarry bench --write-corpus`);
const corpusPath = join(work, `corpus-${sizeMib}mib.txt`);
quarryCli('bench', '--size-mib', String(sizeMib), '--write-corpus', corpusPath);
const text = readFileSync(corpusPath, 'utf8');

log('native: quarry bench');
const native = JSON.parse(quarryCli('bench', '--size-mib', String(sizeMib), '--passes', String(passes), '--json'));
const nativeRow = (name) => native.throughput_mb_per_s.find((row) => row.target === name).mb_per_s;
const nativeDetect = { 'email+url': nativeRow('email+url'), date: nativeRow('date') };

log("native: the package's code path (quarry-wasm compiled natively)");
const nativeSkill = JSON.parse(options['native-throughput']
  ? run(options['native-throughput'], [corpusPath, String(passes)])
  : cargo('run', '--release', '--locked', '-q', '-p', 'quarry-wasm', '--example', 'native_throughput', '--', corpusPath, String(passes)));

log('Node: the package');
const node = await measureThroughput(quarry, text, passes);

log('Chromium: the package on the bench page, and cold loads of the demo page');
const server = await serve();
const chromium = await launch();
let browser;
const coldLoads = [];
try {
  await chromium.page.goto(`${server.url}/bench/page.html`);
  await chromium.page.locator('body[data-ready="true"]').waitFor();
  browser = await chromium.page.evaluate(([t, p]) => window.benchmark(t, p), [text, passes]);
  for (let i = 0; i < loads; i += 1) {
    // A fresh context each time: empty HTTP cache, nothing compiled yet.
    const context = await chromium.browser.newContext();
    const page = await context.newPage();
    await page.goto(`${server.url}/demo/`);
    await page.locator('body[data-ready="true"]').waitFor({ timeout: 60_000 });
    coldLoads.push(await page.evaluate(async () => {
      const started = performance.now();
      await window.quarry.loadEntityData();
      return {
        module_ms: window.quarryLoadMs,
        page_ready_ms: window.quarryReadyAt,
        entity_data_ms: performance.now() - started,
      };
    }));
    await context.close();
  }
} finally {
  await chromium.close();
  await server.close();
}
const median = (key) => {
  const sorted = coldLoads.map((load) => load[key]).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

const figures = {
  corpus_bytes: Buffer.byteLength(text),
  passes,
  sizes,
  throughput_mb_per_s: {
    native_quarry_bench: nativeDetect,
    native_package_code_path: nativeSkill,
    node: { 'email+url': node['email+url'], date: node.date },
    chromium: { 'email+url': browser['email+url'], date: browser.date },
  },
  share_of_native_quarry_bench: {
    node: ratio(node, nativeDetect),
    chromium: ratio(browser, nativeDetect),
  },
  cold_load_chromium_ms: {
    loads,
    module_median: median('module_ms'),
    page_ready_median: median('page_ready_ms'),
    entity_data_median: median('entity_data_ms'),
  },
  versions: { node: process.version, chromium: execFileSync('/usr/bin/chromium', ['--version'], { encoding: 'utf8' }).trim() },
};
writeFileSync(join(work, 'figures.json'), `${JSON.stringify(figures, null, 2)}\n`);

const kb = ({ raw, gzip }) => `${(raw / 1e6).toFixed(2)} MB raw, ${(gzip / 1e6).toFixed(3)} MB gzipped`;
const mbs = (row) => `${row['email+url'].toFixed(1).padStart(7)} ${row.date.toFixed(1).padStart(7)}`;
console.log(`module without entity data   ${kb(sizes.module_without_entity_data)}`);
console.log(`entity data (loaded apart)   ${kb(sizes.entity_data)}`);
console.log(`module with it compiled in   ${kb(sizes.module_with_entity_data_compiled_in)}`);
console.log(`glue + entry JS              ${kb({ raw: sizes.glue_js.raw + sizes.index_js.raw, gzip: sizes.glue_js.gzip + sizes.index_js.gzip })}`);
console.log(`\nMB/s on ${(figures.corpus_bytes / 1e6).toFixed(1)} MB, best of ${passes}   url+email    date`);
console.log(`native (quarry bench, detect)       ${mbs(nativeDetect)}`);
console.log(`native (package code path)          ${mbs(nativeSkill)}`);
console.log(`Node ${process.version} (wasm)              ${mbs(node)}`);
console.log(`Chromium (wasm)                     ${mbs(browser)}`);
console.log(`share of native: Node ${pct(figures.share_of_native_quarry_bench.node)}, Chromium ${pct(figures.share_of_native_quarry_bench.chromium)}`);
console.log(`\ncold load in Chromium (median of ${loads}): module ${median('module_ms').toFixed(0)} ms, ` +
  `page ready ${median('page_ready_ms').toFixed(0)} ms after navigation, entity data ${median('entity_data_ms').toFixed(0)} ms`);
console.log(`\nwritten to ${join(work, 'figures.json')}`);

function ratio(wasm, nativeRow) {
  return { 'email+url': wasm['email+url'] / nativeRow['email+url'], date: wasm.date / nativeRow.date };
}

function pct(row) {
  return `url+email ${(100 * row['email+url']).toFixed(0)} %, date ${(100 * row.date).toFixed(0)} %`;
}

/** The wasm-bindgen CLI scripts/wasm.sh installed, at the version in Cargo.lock. */
function wasmBindgen() {
  const lock = readFileSync(join(repo, 'Cargo.lock'), 'utf8');
  const version = lock.match(/name = "wasm-bindgen"\nversion = "([^"]+)"/)[1];
  const path = join(repo, 'target', 'tools', `wasm-bindgen-${version}`, 'bin', 'wasm-bindgen');
  if (!existsSync(path)) {
    throw new Error(`no wasm-bindgen ${version} at ${path}: run scripts/wasm.sh first`);
  }
  return path;
}
