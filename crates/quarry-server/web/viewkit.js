// What the chat, graph and episodes views share beyond dom.js: SVG elements built the same way
// as dom.js's `h` (the graph drawing), and failures shown inside a view (a chat reply that
// failed, a retry that was refused) rather than in the page's one alert region.

import { h } from './dom.js';

const SVG_NS = 'http://www.w3.org/2000/svg';

/** `s('circle', {r: 8, class: 'node'}, child…)`: an SVG element. Attributes go through
 * `setAttribute` (never `style`: the CSP forbids inline styles); `on<event>` functions become
 * listeners; `null`/`undefined`/`false` attributes and children are skipped. */
export function s(tag, attrs = {}, ...children) {
  const element = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** A failure as a person reads it: the message, and the API's code for anyone reporting it
 * (an `ApiFailure`'s `code`, or `error` of the API's JSON shape as an SSE `error` event has it). */
export function failureText(error) {
  const code = error && (error.code || (typeof error.error === 'string' ? error.error : null));
  if (code && error.message) return `${error.message} (${code})`;
  return (error && error.message) || String(error);
}

/** An inline `role="alert"` box for a failure inside a view, with an optional hint after it. */
export function errorBox(error, hint) {
  return h('div', { class: 'view-error', role: 'alert' }, h('p', {}, failureText(error)), hint);
}
