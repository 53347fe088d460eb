// Episodes (`#/episodes?state=&offset=`): every conversation turn given to the graph, with the
// state of its background extraction and why it failed (`GET /v1/episodes`). A failed one is
// queued again with `POST /v1/episodes/{id}/retry`; while any listed episode is pending or
// running the list refreshes itself, so a retry is seen to finish. An episode's entities are its
// document's links (`GET /v1/documents/{id}` → `entity_ids`), shown on demand.

import { h, href, formatTime } from './dom.js';
import { errorBox } from './viewkit.js';

const STATES = ['pending', 'running', 'done', 'failed'];
const PAGE = 50;
const REFRESH_MS = 1500;
/** Entities named under one episode (each is one request). */
const MAX_ENTITIES_SHOWN = 30;

export async function render(main, params, ctx) {
  const view = new EpisodesView(main, params, ctx);
  await view.start();
  return () => view.stop();
}

class EpisodesView {
  constructor(main, params, ctx) {
    this.main = main;
    this.ctx = ctx;
    this.state = STATES.includes(params.state) ? params.state : '';
    this.offset = Math.max(0, Number.parseInt(params.offset, 10) || 0);
    this.timer = 0;
    this.loads = 0;
    this.shown = '';
    /** Episodes retried here stay in view until the filter changes, even when the filter
     * (say `failed`) no longer matches them, so the person sees the retry finish. */
    this.retried = new Set();
  }

  async start() {
    const { ctx } = this;
    this.stateSelect = h(
      'select',
      { id: 'episodes-state' },
      h('option', { value: '' }, 'All states'),
      STATES.map((state) => h('option', { value: state, selected: state === this.state }, state)),
    );
    this.stateSelect.addEventListener('change', () => {
      this.state = this.stateSelect.value;
      this.offset = 0;
      this.retried.clear();
      this.load({ announce: true });
    }, { signal: ctx.signal });
    this.summary = h('p', { class: 'episodes-summary', id: 'episodes-summary', role: 'status' });
    this.body = h('tbody', { id: 'episodes-rows' });
    this.pager = h('nav', { class: 'pager', 'aria-label': 'Pages of episodes' });
    this.main.append(
      h('h1', {}, 'Episodes'),
      h('p', { class: 'lede' }, 'Each conversation turn is stored at once and its entities and relations are extracted in the background. Failed extractions keep their error and can be retried.'),
      h('div', { class: 'toolbar' }, h('div', { class: 'field inline' }, h('label', { for: 'episodes-state' }, 'State'), this.stateSelect)),
      this.summary,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'episodes-table responsive-table', id: 'episodes-table' },
          h('caption', { class: 'visually-hidden' }, 'Episodes'),
          h('thead', {}, h('tr', {}, ['Turn', 'State', 'Attempts', 'Extracted', 'Updated', 'Actions'].map((name) => h('th', { scope: 'col' }, name)))),
          this.body,
        ),
      ),
      this.pager,
    );
    await this.load();
  }

  stop() {
    clearTimeout(this.timer);
  }

  async load({ announce = false } = {}) {
    clearTimeout(this.timer);
    // Only the latest load may draw: a slow answer for the old filter must not replace the new.
    const mine = ++this.loads;
    const query = new URLSearchParams({ limit: String(PAGE), offset: String(this.offset) });
    if (this.state) query.set('state', this.state);
    // The address keeps the filter and page without re-rendering (focus stays where it is).
    history.replaceState(null, '', href('/episodes', { state: this.state, offset: this.offset || '' }));
    let page;
    try {
      page = await this.ctx.api('GET', `/v1/episodes?${query}`);
    } catch (error) {
      if (error.name === 'AbortError' || mine !== this.loads) return;
      this.body.replaceChildren(h('tr', {}, h('td', { colspan: '6' }, errorBox(error))));
      this.shown = '';
      return;
    }
    const missing = [...this.retried].filter((id) => !page.episodes.some((episode) => episode.id === id));
    if (missing.length) {
      const kept = await Promise.all(missing.map((id) =>
        this.ctx.api('GET', `/v1/episodes/${encodeURIComponent(id)}`).catch(() => null)));
      page = { ...page, episodes: [...kept.filter(Boolean), ...page.episodes] };
    }
    if (this.ctx.signal.aborted || mine !== this.loads) return;
    this.show(page, announce);
    const busy = page.episodes.some((episode) => episode.status === 'pending' || episode.status === 'running');
    if (busy) this.timer = setTimeout(() => this.load(), REFRESH_MS);
  }

  show(page, announce) {
    const total = page.total ?? page.episodes.length;
    const first = total === 0 ? 0 : this.offset + 1;
    const last = this.offset + page.episodes.length;
    const text = total === 0
      ? (this.state ? `No ${this.state} episodes.` : 'No episodes yet.')
      : `Episodes ${first}–${last} of ${total}${this.state ? ` (${this.state})` : ''}.`;
    if (announce || this.summary.textContent !== text) this.summary.textContent = text;
    // A refresh that changes nothing leaves the rows (and keyboard focus in them) alone.
    const fingerprint = JSON.stringify(page.episodes.map((e) => [e.id, e.status, e.attempts, e.error, e.updated_at]));
    if (fingerprint !== this.shown) {
      const focused = document.activeElement && this.body.contains(document.activeElement)
        ? document.activeElement.dataset.focusKey
        : null;
      this.body.replaceChildren(...page.episodes.map((episode) => this.row(episode)));
      this.shown = fingerprint;
      if (focused) {
        const again = this.body.querySelector(`[data-focus-key="${CSS.escape(focused)}"]`);
        if (again) again.focus();
      }
    }
    this.pager.replaceChildren(
      h('button', {
        type: 'button', class: 'button secondary small', disabled: this.offset === 0,
        onclick: () => { this.offset = Math.max(0, this.offset - PAGE); this.load({ announce: true }); },
      }, 'Previous'),
      h('button', {
        type: 'button', class: 'button secondary small', disabled: last >= total,
        onclick: () => { this.offset += PAGE; this.load({ announce: true }); },
      }, 'Next'),
    );
  }

  row(episode) {
    const canRetry = episode.status === 'failed' && this.ctx.can('documents:write');
    const entitiesBox = h('div', { class: 'episode-entities', id: `episode-entities-${episode.id}`, hidden: true });
    const actions = [];
    if (canRetry) {
      actions.push(h('button', {
        type: 'button',
        class: 'button small primary',
        dataset: { focusKey: `retry-${episode.id}`, episode: episode.id },
        'aria-label': `Retry the extraction of “${shorten(episode.user_message, 60)}”`,
        onclick: (event) => this.retry(episode, event.currentTarget),
      }, 'Retry'));
    }
    if (episode.status === 'done' && (episode.entities_stored > 0 || episode.relationships_stored > 0)) {
      actions.push(h('button', {
        type: 'button',
        class: 'button small secondary',
        'aria-expanded': 'false',
        'aria-controls': entitiesBox.id,
        dataset: { focusKey: `entities-${episode.id}` },
        onclick: (event) => this.toggleEntities(episode, event.currentTarget, entitiesBox),
      }, 'Entities'));
    }
    return h(
      'tr',
      { dataset: { episode: episode.id, status: episode.status } },
      h(
        'td',
        { class: 'episode-turn' },
        h('p', {}, h('a', { href: `#/documents/${encodeURIComponent(episode.id)}` }, shorten(episode.user_message, 120) || '(empty)')),
        h('p', { class: 'muted small' }, shorten(episode.assistant_response, 160)),
        episode.error ? h('p', { class: 'episode-error' }, h('strong', {}, 'Error: '), episode.error) : null,
        entitiesBox,
      ),
      h('td', { 'data-label': 'State' }, h('span', { class: `badge state-${episode.status}` }, episode.status)),
      h('td', { class: 'num', 'data-label': 'Attempts' }, String(episode.attempts ?? 0)),
      h('td', { 'data-label': 'Extracted' }, extracted(episode)),
      h('td', { 'data-label': 'Updated' }, formatTime(episode.updated_at)),
      h('td', { class: 'actions' }, actions),
    );
  }

  async retry(episode, button) {
    button.disabled = true;
    try {
      await this.ctx.api('POST', `/v1/episodes/${encodeURIComponent(episode.id)}/retry`);
      if (this.ctx.signal.aborted) return;
      this.retried.add(episode.id);
      this.ctx.notify('Queued again; the list follows its progress.');
      await this.load();
      // The retry button is gone (the episode is no longer failed): keep focus in the row.
      const row = this.body.querySelector(`tr[data-episode="${CSS.escape(episode.id)}"] a`);
      if (row && !this.body.contains(document.activeElement)) row.focus();
    } catch (error) {
      if (error.name === 'AbortError') return;
      button.disabled = false;
      this.ctx.showError(error);
    }
  }

  async toggleEntities(episode, button, box) {
    const open = button.getAttribute('aria-expanded') === 'true';
    button.setAttribute('aria-expanded', open ? 'false' : 'true');
    box.hidden = open;
    if (open || box.dataset.loaded) return;
    box.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
    try {
      const found = await this.ctx.api('GET', `/v1/documents/${encodeURIComponent(episode.id)}`);
      const ids = (found.entity_ids || []).slice(0, MAX_ENTITIES_SHOWN);
      const entities = await Promise.all(ids.map((id) =>
        this.ctx.api('GET', `/v1/graph/entities/${encodeURIComponent(id)}`).catch(() => ({ id, title: id, entity_type: '' }))));
      if (this.ctx.signal.aborted) return;
      box.dataset.loaded = 'yes';
      box.replaceChildren(entities.length === 0
        ? h('p', { class: 'muted' }, 'No entities are linked to this episode.')
        : h('ul', { class: 'inline-list' }, entities.map((entity) => h('li', {},
            h('a', { href: `#/graph/${encodeURIComponent(entity.id)}` }, entity.title),
            entity.entity_type ? h('span', { class: 'muted' }, ` (${entity.entity_type})`) : null))));
    } catch (error) {
      if (error.name === 'AbortError') return;
      box.replaceChildren(errorBox(error));
    }
  }
}

function extracted(episode) {
  if (episode.status !== 'done') return h('span', { class: 'muted' }, '—');
  const parts = [`${episode.entities_stored} entities`, `${episode.relationships_stored} relations`];
  const skipped = (episode.entities_skipped || 0) + (episode.relationships_skipped || 0);
  if (skipped) parts.push(`${skipped} skipped`);
  return parts.join(', ');
}

function shorten(text, max) {
  const chars = [...String(text ?? '').replace(/\s+/g, ' ').trim()];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : chars.join('');
}
