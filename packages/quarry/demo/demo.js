// The demo page's script: loads Quarry, then runs the extract skill and the guardrail on what the
// form holds. Copy the package folder, serve it (e.g. `python3 -m http.server` in it) and open
// /demo/. The module is `window.quarry` for trying calls in the console.

import * as quarry from '../index.js';

window.quarry = quarry;
const $ = (id) => document.getElementById(id);

const started = performance.now();
quarry
  .init()
  .then(() => {
    // How long the module took to arrive and compile on this page (the cold load time).
    window.quarryLoadMs = performance.now() - started;
    // And since navigation began (HTML, scripts, module): when the page could first extract.
    window.quarryReadyAt = performance.now();
    $('status').textContent = `Module loaded in ${Math.round(window.quarryLoadMs)} ms. Entity data loads on first use of entity or name.`;
    document.body.dataset.ready = 'true';
  })
  .catch((error) => {
    $('status').textContent = `The module failed to load: ${error.message}`;
  });

$('extract-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  $('result').textContent = '';
  $('error').textContent = '';
  try {
    const result = await quarry.invokeSkill('extract', {
      text: $('text').value,
      target: $('target').value,
      detail: $('detail').checked,
    });
    $('result').textContent = JSON.stringify(result, null, 2);
  } catch (error) {
    $('error').textContent = String(error);
  }
});

$('check-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  $('verdict').textContent = '';
  $('check-error').textContent = '';
  try {
    const verdict = await quarry.invokeSkill('check', {
      text: $('text').value,
      target: $('target').value,
      output: $('output').value,
    });
    $('verdict').textContent = verdict.verdict === 'accepted'
      ? `accepted: ${verdict.values.map((v) => v.value).join(', ') || '(no values)'}`
      : `rejected:\n${verdict.reasons.map((r) => `- ${r.message}`).join('\n')}`;
  } catch (error) {
    $('check-error').textContent = String(error);
  }
});
