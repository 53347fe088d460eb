// Source spans on screen. The server counts offsets in code points (Unicode scalar values), as
// Rust's `chars()` does; JavaScript strings index UTF-16 code units, where an emoji or a rare CJK
// ideograph takes two. Slicing the raw string with server offsets would drift by one unit per
// astral character before the span, so every offset goes through `codePointIndex` first.

import { formatValue } from './dom.js';

/** UTF-16 index of every code-point offset of `text`: `index[cp]` for cp in 0..=length. */
export function codePointIndex(text) {
  const index = [];
  let unit = 0;
  for (const ch of text) {
    index.push(unit);
    unit += ch.length;
  }
  index.push(unit);
  return index;
}

/** Number of code points in `text`. */
export function codePointLength(text) {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/** The code points `start..end` of `text` (clamped to the text). */
export function sliceCodePoints(text, start, end) {
  const index = codePointIndex(text);
  const last = index.length - 1;
  const from = Math.max(0, Math.min(start, last));
  const to = Math.max(from, Math.min(end, last));
  return text.slice(index[from], index[to]);
}

/**
 * Fills `container` with `text`, wrapping every span in `<mark>`.
 * `spans`: `[{start, end, label?, focus?, passage?}]` in code points; they may overlap (the text
 * is cut at every boundary and each piece is marked if any span covers it; a piece covered by a
 * `focus` span gets the class `mark-focus`, one covered only by `passage` spans — context an
 * agent read rather than the words it cited — the class `mark-passage`). Returns the `<mark>`
 * elements in text order.
 */
export function renderHighlighted(container, text, spans = []) {
  const index = codePointIndex(text);
  const last = index.length - 1;
  const clean = spans
    .map((span) => ({
      ...span,
      start: Math.max(0, Math.min(Number(span.start) || 0, last)),
      end: Math.max(0, Math.min(Number(span.end) || 0, last)),
    }))
    .filter((span) => span.end > span.start);
  const cuts = new Set([0, last]);
  for (const span of clean) {
    cuts.add(span.start);
    cuts.add(span.end);
  }
  const points = [...cuts].sort((a, b) => a - b);
  const fragment = document.createDocumentFragment();
  const marks = [];
  for (let i = 0; i + 1 < points.length; i += 1) {
    const from = points[i];
    const to = points[i + 1];
    const piece = text.slice(index[from], index[to]);
    const covering = clean.filter((span) => span.start <= from && span.end >= to);
    if (covering.length === 0) {
      fragment.append(piece);
      continue;
    }
    const mark = document.createElement('mark');
    mark.textContent = piece;
    mark.dataset.start = String(from);
    mark.dataset.end = String(to);
    const labels = covering.map((span) => span.label).filter(Boolean);
    if (labels.length) mark.title = [...new Set(labels)].join('\n');
    if (covering.every((span) => span.passage)) mark.classList.add('mark-passage');
    if (covering.some((span) => span.focus)) {
      mark.classList.add('mark-focus');
      mark.tabIndex = -1;
    }
    fragment.append(mark);
    marks.push(mark);
  }
  container.replaceChildren(fragment);
  return marks;
}

/** Scrolls the first focused mark (else the first mark) in `container` into view and moves
 * keyboard focus to it, so a screen reader starts reading at the cited words. */
export function revealFirstMark(container) {
  const mark = container.querySelector('mark.mark-focus') || container.querySelector('mark');
  if (!mark) return null;
  mark.scrollIntoView({ block: 'center', inline: 'nearest' });
  if (mark.tabIndex === -1) mark.focus({ preventScroll: true });
  return mark;
}

/** `text` around code points `start..end` with `context` code points either side, as
 * `{before, span, after}` strings (with `…` where it was cut), for a compact quote. */
export function quoteAround(text, start, end, context = 80) {
  const index = codePointIndex(text);
  const last = index.length - 1;
  const from = Math.max(0, Math.min(start, last));
  const to = Math.max(from, Math.min(end, last));
  const left = Math.max(0, from - context);
  const right = Math.min(last, to + context);
  return {
    before: (left > 0 ? '…' : '') + text.slice(index[left], index[from]),
    span: text.slice(index[from], index[to]),
    after: text.slice(index[to], index[right]) + (right < last ? '…' : ''),
  };
}

/** A document source far longer than its value is a passage the agent read (a search hit), not
 * the words it cited: pages mark those lightly so the cited words stand out. */
export function isPassage(source, value) {
  const length = source.end - source.start;
  const valueLength = codePointLength(formatValue(value));
  return length > Math.max(2 * valueLength, valueLength + 16);
}
