// Building DOM without innerHTML for the shell, review and documents views: every text goes in as
// text, so values extracted from documents can never inject markup, and nothing needs an inline
// style or handler (the CSP forbids both).

/**
 * `h('a', {href: '#/', class: 'x', onclick: fn, dataset: {id}}, 'text', child, [more])`.
 * Attributes: `class` (a string or an array), `dataset`, `on<event>` (addEventListener),
 * `value` (the property), booleans (`hidden`, `disabled`, … set when true, left out when false),
 * anything else via setAttribute. Children: strings, numbers, nodes, arrays; `null`,
 * `undefined` and `false` are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') el.className = Array.isArray(value) ? value.filter(Boolean).join(' ') : value;
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'value') el.value = value;
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** A route's hash for `path` and query `{start: 3}` → `#/documents/x?start=3`. */
export function href(path, query = {}) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const search = params.toString();
  return `#${path}${search ? `?${search}` : ''}`;
}

/** A value as people read it: strings as they are, everything else as compact JSON. */
export function formatValue(value) {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** An RFC 3339 time → the reader's local date and time. */
export function formatTime(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** True when a key press belongs to a text field and must not trigger shortcuts. */
export function isTyping(event) {
  const el = event.target;
  if (!(el instanceof Element)) return false;
  return el.closest('input, textarea, select, [contenteditable="true"]') !== null;
}

/** `el.replaceChildren(...)` that skips `null`/`undefined`/`false` and flattens arrays (the DOM
 * method would show them as the text "null"). */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** `el.append(...)` with the same skipping as `fill`. */
export function add(el, ...children) {
  append(el, children);
  return el;
}
