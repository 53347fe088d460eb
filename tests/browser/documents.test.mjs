// Documents in real Chromium: a value's source opens the reader with exactly the cited text
// highlighted and scrolled into view — for an ASCII report and for a CJK one with emoji before
// the span, where code-point, UTF-16 and byte offsets all differ — and the list, search, upload
// with an entity link, and the reader at a phone's width.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  PHONE, assertNoPageErrors, env, eventually, expectCount, expectNoHorizontalOverflow, expectText,
  expectURL, expectValue, launch, routeSettled, screenshot, signIn,
} from './harness.mjs';

async function apiGet(page, path) {
  return page.evaluate(async (p) => (await fetch(p, { credentials: 'same-origin' })).json(), path);
}

/** Waits until the focused span's marks (one span may be cut in several marks by overlaps)
 * read `expected`. */
async function expectFocusedText(page, expected) {
  return eventually(
    async () => (await page.locator('.doc-text mark.mark-focus').allTextContents()).join(''),
    (text) => text === expected,
    `the focused span reads ${JSON.stringify(expected)}`,
  );
}

/** Waits until the first focused mark is inside the visible part of the document's text box and
 * of the window (the reader scrolls it there). */
async function expectFocusedMarkVisible(page) {
  return eventually(
    () => page.locator('.doc-text mark.mark-focus').evaluateAll((marks) => {
      if (marks.length === 0) return 'no focused mark';
      const box = marks[0].getBoundingClientRect();
      const frame = marks[0].closest('.doc-text').getBoundingClientRect();
      return box.top >= frame.top - 1 && box.bottom <= frame.bottom + 1
        && box.top >= 0 && box.bottom <= window.innerHeight;
    }),
    (visible) => visible === true,
    'the focused mark is scrolled into view',
  );
}

/** Opens `entity`'s page and follows the first document source of `field`. */
async function followSource(page, entity, field) {
  await page.goto(`${env.url}/#/entities/${entity}`);
  const link = page.locator(`.field-card[data-field="${field}"] a.source-link[data-document-id]`).first();
  await link.waitFor();
  await link.click();
  await page.waitForURL(/#\/documents\/[^?]+\?start=\d+&end=\d+/);
  await page.locator('.doc-text mark.mark-focus').first().waitFor();
  // The reader is drawn; wait for the router to finish too (it may still move the focus).
  await routeSettled(page);
}

test('an ASCII source opens the reader with the cited span highlighted and in view', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    await followSource(page, env.entities.acme, 'headquarters');
    await expectFocusedText(page, env.values.acme_headquarters);
    await expectFocusedMarkVisible(page);
    await expectURL(page, new RegExp(`#/documents/${env.documents.acme}\\?`));
    // Every span the entity's results cite is marked, not only the one opened.
    await eventually(
      () => page.locator('.doc-text mark').allTextContents(),
      (all) => all.join('').includes(env.values.acme_ceo_first),
      'the ceo value is marked too',
    );
    await screenshot(page, 'document-reader');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('a CJK source with emoji before it highlights exactly the cited characters', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    await followSource(page, env.entities.sakura, 'ceo');
    await expectFocusedText(page, env.values.sakura_ceo);
    await expectFocusedMarkVisible(page);

    // The same through a link made by hand from code-point offsets.
    const { document } = await apiGet(page, `/v1/documents/${env.documents.sakura}`);
    const chars = Array.from(document.text);
    const value = Array.from(env.values.sakura_headquarters);
    const start = chars.findIndex((_, i) => value.every((ch, j) => chars[i + j] === ch));
    assert.ok(start > 0);
    assert.notEqual(start, document.text.indexOf(env.values.sakura_headquarters), 'the emoji make UTF-16 and code-point offsets differ');
    await page.goto(`${env.url}/#/documents/${env.documents.sakura}?start=${start}&end=${start + value.length}`);
    await expectFocusedText(page, env.values.sakura_headquarters);
    await screenshot(page, 'document-reader-cjk');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('documents are listed, searched, uploaded with an entity link and read', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    await page.getByRole('link', { name: 'Documents' }).click();
    await page.getByRole('heading', { level: 1, name: 'Documents' }).waitFor();
    await page.locator('.document-table').waitFor();
    await page.getByLabel('Search by title').fill('sakura');
    await page.getByLabel('Search by title').press('Enter');
    await page.waitForURL(/q=sakura/);
    // The unfiltered list stays until the hashchange empties the page and the search answers,
    // so a row showing up proves nothing: wait for the count itself.
    const rows = page.locator('.document-table tbody tr');
    await expectCount(rows, 1, 'documents matching "sakura"');
    await expectText(rows.first(), /sakura/i, 'the one document matching "sakura"', { inner: true });

    await page.getByText('Upload a document').click();
    await page.getByLabel(/^File/).setInputFiles({
      name: 'globex-memo.md',
      mimeType: 'text/markdown',
      buffer: Buffer.from('# Globex memo\n\nHank Scorpio runs Globex from Cypress Creek. Ünïcödé ✓ 👍 done.\n'),
    });
    await expectValue(page.getByLabel('Title', { exact: true }), 'globex-memo', 'the title taken from the file name');
    await page.getByLabel('Title', { exact: true }).fill('Globex memo');
    await page.getByLabel(/Link to entity/).fill(env.entities.globex);
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.getByRole('heading', { level: 1, name: 'Globex memo' }).waitFor();
    await page.locator('.doc-text').getByText(/Hank Scorpio runs Globex/).waitFor();
    await page.getByRole('link', { name: 'Globex' }).first().waitFor(); // linked to the entity

    await page.goto(`${env.url}/#/documents?q=globex`);
    await page.locator('.document-table tbody tr').getByText('Globex memo').waitFor();
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

/** A one-page PDF whose text layer is `text` (Helvetica, no compression), with a correct xref. */
function pdfWith(text) {
  const stream = `BT /F1 12 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
  ];
  let pdf = '%PDF-1.4\n';
  const offsets = [];
  objects.forEach((object, i) => {
    offsets.push(pdf.length);
    pdf += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) pdf += `${String(offset).padStart(10, '0')} 00000 n \n`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1');
}

test('a PDF uploaded from the page is read from its text layer', async () => {
  const { page, errors, close } = await launch();
  try {
    await signIn(page, env.keys.admin);
    await page.goto(`${env.url}/#/documents`);
    await page.getByText('Upload a document').click();
    await page.getByLabel(/^File/).setInputFiles({
      name: 'initech-minutes.pdf', mimeType: 'application/pdf', buffer: pdfWith('Initech board minutes: Bill Lumbergh presided.'),
    });
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.getByRole('heading', { level: 1, name: 'initech-minutes' }).waitFor();
    await page.locator('.doc-text').getByText(/Bill Lumbergh presided/).waitFor();

    // A file Quarry cannot read is refused on the page, before any request.
    await page.goto(`${env.url}/#/documents`);
    await page.getByText('Upload a document').click();
    await page.getByLabel(/^File/).setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: Buffer.from([0x89, 0x50, 0x4e, 0x47]) });
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.locator('.upload-form .form-error').filter({ hasText: /text, Markdown and PDF/ }).waitFor();
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('the document pages fit a 390 px phone', async () => {
  const { page, errors, close } = await launch({ viewport: PHONE });
  try {
    await signIn(page, env.keys.admin);
    await page.goto(`${env.url}/#/documents`);
    await page.locator('.document-table').waitFor();
    await routeSettled(page);
    await expectNoHorizontalOverflow(page, 'the list fits 390 px without sideways scrolling');
    await followSource(page, env.entities.sakura, 'ceo');
    await expectNoHorizontalOverflow(page, 'the reader fits 390 px without sideways scrolling');
    await screenshot(page, 'document-reader-phone');
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});

test('spans.js cuts overlapping spans at code points, astral characters included', async () => {
  const { page, errors, close } = await launch();
  try {
    await page.goto(`${env.url}/`);
    const out = await page.evaluate(async () => {
      const spans = await import('/assets/spans.js');
      const box = document.createElement('div');
      // a 😀 b 𠀋 c 東 京 d: the emoji and the rare ideograph take two UTF-16 units each.
      const text = 'a😀b𠀋c東京d';
      spans.renderHighlighted(box, text, [{ start: 1, end: 3, focus: true }, { start: 2, end: 6 }, { start: 7, end: 99 }]);
      return {
        marks: [...box.querySelectorAll('mark')].map((m) => [m.textContent, m.classList.contains('mark-focus')]),
        whole: box.textContent,
        slice: spans.sliceCodePoints(text, 3, 7),
        length: spans.codePointLength(text),
      };
    });
    assert.deepEqual(out.marks, [['😀', true], ['b', true], ['𠀋c東', false], ['d', false]]);
    assert.equal(out.whole, 'a😀b𠀋c東京d', 'no character is lost or doubled');
    assert.equal(out.slice, '𠀋c東京');
    assert.equal(out.length, 8);
    assertNoPageErrors(errors);
  } finally {
    await close();
  }
});
