// The shell: the session (sign-in, sign-out, a reloaded page recovering its CSRF token), the
// header and navigation, and a hash router that mounts one view module at a time into <main>.

import { api, streamSse, ApiFailure, setCsrfToken, onUnauthorized } from './api.js';

/** [pattern, module, view name, names of the captured path parameters]. */
const ROUTES = [
  [/^\/?$/, './review.js', 'home', []],
  [/^\/types\/([^/]+)$/, './review.js', 'type', ['slug']],
  [/^\/queue\/([^/]+)$/, './queue.js', 'queue', ['slug']],
  [/^\/entities\/([^/]+)$/, './entity.js', 'entity', ['id']],
  [/^\/documents$/, './documents.js', 'documents', []],
  [/^\/documents\/([^/]+)$/, './documents.js', 'document', ['id']],
  [/^\/chat$/, './chat.js', 'chat', []],
  [/^\/chat\/([^/]+)$/, './chat.js', 'conversation', ['conversation_id']],
  [/^\/graph$/, './graph.js', 'graph', []],
  [/^\/graph\/([^/]+)$/, './graph.js', 'graph-entity', ['entity_id']],
  [/^\/episodes$/, './episodes.js', 'episodes', []],
];

/** The navigation section each view belongs to (for `aria-current`). */
const SECTIONS = {
  home: 'review', type: 'review', queue: 'review', entity: 'review',
  documents: 'documents', document: 'documents',
  chat: 'chat', conversation: 'chat',
  graph: 'graph', 'graph-entity': 'graph',
  episodes: 'episodes',
};

const $ = (id) => document.getElementById(id);
const main = $('main');
let session = null;
let mounted = null; // {controller, cleanup}
let generation = 0;

/** `#/documents/abc?start=3&end=9` → {path: '/documents/abc', query: {start: '3', end: '9'}}. */
export function parseHash(hash) {
  const raw = (hash || '').replace(/^#/, '');
  const at = raw.indexOf('?');
  const path = at === -1 ? raw : raw.slice(0, at);
  const query = Object.fromEntries(new URLSearchParams(at === -1 ? '' : raw.slice(at + 1)));
  return { path: path || '/', query };
}

function matchRoute(path) {
  for (const [pattern, module, view, names] of ROUTES) {
    const found = pattern.exec(path);
    if (!found) continue;
    const params = { view };
    names.forEach((name, i) => {
      params[name] = decodeURIComponent(found[i + 1]);
    });
    return { module, params };
  }
  return null;
}

// ---- messages ------------------------------------------------------------------------------

/** Shows an error (an ApiFailure, an Error or a string) in the page's alert region. */
export function showError(error) {
  if (!error || error.name === 'AbortError') return;
  let text = typeof error === 'string' ? error : error.message || String(error);
  if (error instanceof ApiFailure && error.status === 403) {
    text = `Not allowed: ${text}`;
  }
  const alert = $('alert');
  alert.replaceChildren();
  const p = document.createElement('p');
  p.textContent = text;
  const close = document.createElement('button');
  close.type = 'button';
  close.className = 'button small secondary';
  close.textContent = 'Dismiss';
  close.addEventListener('click', clearError);
  alert.append(p, close);
}

export function clearError() {
  $('alert').replaceChildren();
}

let noticeTimer = 0;
/** A short confirmation ("Approved") read out politely and gone after a few seconds. */
export function notify(text) {
  const notice = $('notice');
  notice.textContent = text;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => {
    notice.textContent = '';
  }, 4000);
}

let loadingTimer = 0;
function setLoading(on) {
  clearTimeout(loadingTimer);
  main.setAttribute('aria-busy', on ? 'true' : 'false');
  if (on) {
    // Only say "Loading" when it takes long enough to notice.
    loadingTimer = setTimeout(() => {
      $('loading').textContent = 'Loading…';
    }, 150);
  } else {
    $('loading').textContent = '';
  }
}

// ---- session -------------------------------------------------------------------------------

function can(scope) {
  return Boolean(session && Array.isArray(session.scopes) && session.scopes.includes(scope));
}

function showSignIn(message) {
  session = null;
  setCsrfToken(null);
  unmount();
  main.replaceChildren();
  main.hidden = true;
  $('topbar').hidden = true;
  $('signin').hidden = false;
  $('signin-error').textContent = message || '';
  document.title = 'Sign in · Quarry';
  $('signin-key').focus();
}

function showApp(found) {
  session = found;
  setCsrfToken(found.csrf_token);
  $('signin').hidden = true;
  $('signin-error').textContent = '';
  $('topbar').hidden = false;
  main.hidden = false;
  $('who-project').textContent = found.project_name || found.project_id || '';
  $('who-key').textContent = found.key_name || '';
  return route();
}

async function signIn(event) {
  event.preventDefault();
  const input = $('signin-key');
  const key = input.value.trim();
  const error = $('signin-error');
  if (!key) {
    error.textContent = 'Enter an API key.';
    input.focus();
    return;
  }
  const button = event.target.querySelector('button[type="submit"]');
  button.disabled = true;
  error.textContent = '';
  try {
    const found = await api('POST', '/v1/session', { key });
    input.value = '';
    await showApp(found);
    const heading = main.querySelector('h1');
    if (heading) heading.focus({ preventScroll: true });
  } catch (failure) {
    error.textContent = failure.status === 401
      ? 'That key was not accepted: it is wrong or has been revoked.'
      : failure.message;
    input.select();
    input.focus();
  } finally {
    button.disabled = false;
  }
}

async function signOut() {
  try {
    await api('DELETE', '/v1/session');
  } catch (failure) {
    if (failure.status !== 401) {
      showError(failure);
      return;
    }
  }
  clearError();
  showSignIn();
  notify('Signed out.');
}

// ---- router --------------------------------------------------------------------------------

function unmount() {
  if (!mounted) return;
  mounted.controller.abort();
  if (typeof mounted.cleanup === 'function') {
    try {
      mounted.cleanup();
    } catch (error) {
      console.error(error);
    }
  }
  mounted = null;
}

function navigate(hash, { replace = false } = {}) {
  const target = hash.startsWith('#') ? hash : `#${hash}`;
  if (replace) {
    history.replaceState(null, '', target);
    route();
  } else if (location.hash === target) {
    route();
  } else {
    location.hash = target; // hashchange routes
  }
}

function markNavigation(view) {
  const section = SECTIONS[view];
  for (const link of document.querySelectorAll('.nav a')) {
    if (link.dataset.section === section) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

function notFound(path) {
  const heading = document.createElement('h1');
  heading.textContent = 'Page not found';
  heading.tabIndex = -1;
  const p = document.createElement('p');
  p.textContent = `Nothing lives at #${path}. `;
  const home = document.createElement('a');
  home.href = '#/';
  home.textContent = 'Back to the entity types';
  p.append(home);
  main.replaceChildren(heading, p);
}

async function route() {
  if (!session) return;
  const mine = ++generation;
  const { path, query } = parseHash(location.hash);
  const found = matchRoute(path);
  const focusWasOutside = !main.contains(document.activeElement);
  unmount();
  clearError();
  main.replaceChildren();
  markNavigation(found ? found.params.view : null);
  if (!found) {
    notFound(path);
    return;
  }
  const controller = new AbortController();
  mounted = { controller, cleanup: null };
  const params = { ...query, ...found.params };
  const signal = controller.signal;
  const ctx = {
    api: (method, p, body, options = {}) => api(method, p, body, { signal, ...options }),
    streamSse: (p, body, onEvent, options = {}) => streamSse(p, body, onEvent, { signal, ...options }),
    session,
    navigate,
    can,
    signal,
    showError,
    clearError,
    notify,
  };
  setLoading(true);
  try {
    const module = await import(found.module);
    if (mine !== generation) return;
    const cleanup = await module.render(main, params, ctx);
    if (mine !== generation) {
      if (typeof cleanup === 'function') cleanup();
      return;
    }
    mounted.cleanup = cleanup;
    const heading = main.querySelector('h1');
    if (heading && !heading.hasAttribute('tabindex')) heading.tabIndex = -1;
    document.title = `${heading ? heading.textContent : 'Quarry'} · Quarry`;
    // After a click in the navigation, start reading at the new page, unless the view has
    // already put focus somewhere on purpose (a span, an input).
    if (focusWasOutside && heading && !main.contains(document.activeElement)) {
      heading.focus({ preventScroll: true });
    }
  } catch (error) {
    if (mine !== generation || signal.aborted) return;
    if (error instanceof ApiFailure && error.status === 401) return; // back at sign-in
    if (error instanceof ApiFailure && error.status === 404) {
      const heading = document.createElement('h1');
      heading.textContent = 'Not found';
      heading.tabIndex = -1;
      const p = document.createElement('p');
      p.textContent = error.message;
      main.replaceChildren(heading, p);
      return;
    }
    console.error(error);
    showError(error);
  } finally {
    if (mine === generation) setLoading(false);
  }
}

// ---- start ---------------------------------------------------------------------------------

async function start() {
  $('signin-form').addEventListener('submit', signIn);
  $('sign-out').addEventListener('click', signOut);
  $('skip-link').addEventListener('click', () => {
    const heading = main.querySelector('h1');
    (heading || main).focus();
  });
  window.addEventListener('hashchange', route);
  onUnauthorized(() => {
    if (session) showSignIn('Your session ended; sign in again.');
  });
  try {
    const found = await api('GET', '/v1/session');
    await showApp(found);
  } catch (failure) {
    showSignIn(failure.status === 401 || !failure.status ? '' : failure.message);
  }
}

start();
