// The review workspace (the field-extraction reference's reviewer): entity types, the entities of
// a type with their fields' states, a keyboard-driven review queue, and the entity page where a
// person approves, rejects with a reason, locks, sets or answers a value, starts and retries runs,
// and reads a field's history and the feedback the agents are given.

import { h, href, fill, add, formatValue, formatTime, isTyping } from './dom.js';
import { isPassage, quoteAround } from './spans.js';

const PAGE_SIZE = 50;
/** How often the entity page asks again while work is in flight (a rerun, a run). */
const POLL_MS = 1000;
/** Give up polling after this long; the page says so and offers a reload button. */
const POLL_LIMIT_MS = 180000;

const STATE_TEXT = {
  none: 'not extracted',
  queued: 'queued',
  running: 'running',
  pending: 'pending review',
  approved: 'approved',
  rejected: 'rejected',
  locked: 'locked',
  waiting_human: 'needs a person',
  failed: 'failed',
  blocked: 'blocked',
  done: 'done',
  skipped: 'skipped',
  superseded: 'superseded',
};
const IN_FLIGHT = new Set(['queued', 'running']);

export async function render(main, params, ctx) {
  switch (params.view) {
    case 'type':
      return typePage(main, params, ctx);
    case 'queue':
      return queuePage(main, params, ctx);
    case 'entity':
      return entityPage(main, params, ctx);
    default:
      return homePage(main, ctx);
  }
}

// ---- small pieces --------------------------------------------------------------------------

function stateBadge(state, extraClass) {
  const known = state || 'none';
  return h('span', { class: ['badge', `state-${known}`, extraClass] }, STATE_TEXT[known] || known);
}

function confidenceBadge(confidence) {
  if (!confidence) return null;
  return h('span', { class: ['badge', `conf-${confidence}`] }, `${confidence} confidence`);
}

function fieldLabel(spec, name) {
  return (spec && spec.label) || name;
}

function typeName(type) {
  return type.name || type.slug;
}

function percent(ratio) {
  return ratio === null || ratio === undefined ? '—' : `${Math.round(ratio * 100)}%`;
}

function plural(count, one, many) {
  return `${count} ${count === 1 ? one : many}`;
}

function formatDuration(ms) {
  if (ms === null || ms === undefined) return '—';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function valueView(value, klass = 'value') {
  if (value === null || value === undefined) return h('span', { class: [klass, 'unset'] }, 'no value');
  return h('span', { class: klass }, formatValue(value));
}

/** Only http(s) links leave the app: a `javascript:` URL from an agent must never become a link. */
function safeUrl(url) {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : null;
  } catch {
    return null;
  }
}

/** `text` cut to `limit` code points with an ellipsis. */
function shorten(text, limit) {
  const chars = Array.from(text);
  return chars.length <= limit ? text : `${chars.slice(0, limit).join('')}…`;
}

/** One source of a value as a list item: a document span opens the reader on it, an entity its
 * page, a URL a new tab. */
function sourceItem(source) {
  switch (source.type) {
    case 'document': {
      const link = h('a', {
        href: href(`/documents/${encodeURIComponent(source.document_id)}`, { start: source.start, end: source.end }),
        class: 'source-link',
        dataset: { documentId: source.document_id, start: source.start, end: source.end },
      }, source.snippet ? `“${shorten(source.snippet, 120)}”` : `characters ${source.start}–${source.end}`);
      return h('li', {}, link, h('span', { class: 'muted small' }, ` document, characters ${source.start}–${source.end}`));
    }
    case 'entity':
      return h('li', {}, h('a', { href: href(`/entities/${encodeURIComponent(source.entity_id)}`), class: 'source-link' },
        source.field ? `entity field ${source.field}` : 'entity'), h('span', { class: 'muted small mono' }, ` ${source.entity_id}`));
    case 'url': {
      const url = safeUrl(source.url);
      return h('li', {}, url
        ? h('a', { href: url, target: '_blank', rel: 'noopener noreferrer', class: 'source-link' }, source.url)
        : h('span', { class: 'mono' }, source.url), h('span', { class: 'muted small' }, ' web page'));
    }
    case 'person':
      return h('li', {}, `answered by ${source.reviewer}`);
    default:
      return h('li', {}, JSON.stringify(source));
  }
}

/**
 * The words a value was taken from, in a line of their document's context, filled in when the
 * document arrives (`documents` caches them by id for the page). Empty when the value cites no
 * document span.
 */
function citedQuote(ctx, result, documents) {
  const source = (result.sources || []).find((s) => s.type === 'document' && !isPassage(s, result.value));
  if (!source) return null;
  const box = h('blockquote', { class: 'quote cited-quote' });
  const id = source.document_id;
  if (!documents.has(id)) documents.set(id, ctx.api('GET', `/v1/documents/${encodeURIComponent(id)}`).catch((error) => error));
  documents.get(id).then((found) => {
    if (!found || found instanceof Error || !found.document) return;
    const quote = quoteAround(found.document.text, source.start, source.end, 70);
    fill(box, quote.before, h('mark', {}, quote.span), quote.after,
      h('span', { class: 'quote-source' }, ' — ', h('a', {
        href: href(`/documents/${encodeURIComponent(id)}`, { start: source.start, end: source.end }),
      }, found.document.title)));
  });
  return box;
}

function sourcesList(sources) {
  if (!sources || sources.length === 0) return h('p', { class: 'muted small' }, 'No sources cited.');
  return h('ul', { class: 'sources' }, sources.map(sourceItem));
}

function agreementText(metadata) {
  if (!metadata || typeof metadata.agreement !== 'number') return null;
  const agents = Array.isArray(metadata.agents) ? metadata.agents.length : null;
  const share = percent(metadata.agreement);
  return agents
    ? `${share} of ${agents} agents agreed${metadata.strategy ? ` (${metadata.strategy})` : ''}`
    : `${share} agreement`;
}

function facts(pairs) {
  const dl = h('dl', { class: 'facts' });
  for (const [term, value] of pairs) {
    if (value === null || value === undefined || value === '') continue;
    add(dl, h('dt', {}, term), h('dd', {}, value));
  }
  return dl;
}

/** The facts a reviewer weighs about a result: who made it, how sure, what it cost. */
function resultFacts(result) {
  return facts([
    ['Confidence', confidenceBadge(result.confidence)],
    ['Agent', h('span', { class: 'mono' }, result.agent_id)],
    ['Agreement', agreementText(result.metadata)],
    ['Tokens', String(result.tokens_used ?? 0)],
    ['Duration', formatDuration(result.duration_ms)],
    ['Extracted', formatTime(result.created_at)],
    ['Reviewed by', result.reviewed_by ? `${result.reviewed_by} at ${formatTime(result.reviewed_at)}` : null],
    ['Rejected because', result.rejection_reason],
    ['Rerun feedback', result.metadata && typeof result.metadata.feedback === 'string' ? result.metadata.feedback : null],
  ]);
}

function pager(total, offset, limit, go) {
  if (total <= limit && offset === 0) return h('p', { class: 'muted small' }, plural(total, 'item', 'items'));
  const last = Math.min(total, offset + limit);
  return h('nav', { class: 'pager', 'aria-label': 'Pages' },
    h('button', { type: 'button', class: 'button secondary small', disabled: offset === 0, onclick: () => go(Math.max(0, offset - limit)) }, '← Previous'),
    h('span', {}, `${total === 0 ? 0 : offset + 1}–${last} of ${total}`),
    h('button', { type: 'button', class: 'button secondary small', disabled: last >= total, onclick: () => go(offset + limit) }, 'Next →'));
}

/** Parses what a person typed for a field of `fieldType` into the JSON value to store. */
export function parseTypedValue(raw, fieldType) {
  const text = raw.trim();
  switch (fieldType) {
    case 'number': {
      const n = Number(text);
      if (text === '' || !Number.isFinite(n)) throw new Error('Enter a number.');
      return n;
    }
    case 'integer': {
      if (!/^-?\d+$/.test(text)) throw new Error('Enter a whole number.');
      return Number(text);
    }
    case 'boolean':
      if (text === 'true' || text === 'false') return text === 'true';
      throw new Error('Choose true or false.');
    case 'list':
    case 'object': {
      let parsed;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new Error(fieldType === 'list' ? 'Enter a JSON list, like ["a", "b"].' : 'Enter a JSON object, like {"k": "v"}.');
      }
      if (fieldType === 'list' && !Array.isArray(parsed)) throw new Error('Enter a JSON list, like ["a", "b"].');
      if (fieldType === 'object' && (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))) {
        throw new Error('Enter a JSON object, like {"k": "v"}.');
      }
      return parsed;
    }
    default:
      if (text === '') throw new Error('Enter a value.');
      return text;
  }
}

/** What `run` gives back when the action failed (its error is already on screen). */
const FAILED = Symbol('failed');

let uid = 0;
function nextId(prefix) {
  uid += 1;
  return `${prefix}-${uid}`;
}

/** A labelled input for a field's value, matching its type. */
function valueInput(spec, current) {
  const id = nextId('value');
  const type = (spec && spec.type) || 'string';
  let input;
  if (type === 'boolean') {
    input = h('select', { id, name: 'value' }, h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'));
    if (current === false) input.value = 'false';
  } else if (type === 'list' || type === 'object') {
    input = h('textarea', { id, name: 'value', rows: 3, spellcheck: 'false' });
    input.value = current === null || current === undefined ? '' : JSON.stringify(current, null, 1);
  } else {
    input = h('input', {
      id, name: 'value', type: 'text', autocomplete: 'off',
      inputmode: type === 'number' || type === 'integer' ? 'decimal' : null,
      placeholder: type === 'date' ? 'YYYY-MM-DD' : null,
    });
    input.value = current === null || current === undefined ? '' : formatValue(current);
  }
  return { id, input, type };
}

// ---- home: entity types --------------------------------------------------------------------

async function homePage(main, ctx) {
  const types = await ctx.api('GET', '/v1/entity-types');
  const counts = await Promise.all(types.map(async (type) => {
    const slug = encodeURIComponent(type.slug);
    const [entities, queue] = await Promise.all([
      ctx.api('GET', `/v1/entity-types/${slug}/entities?limit=1&offset=0`).catch(() => null),
      ctx.api('GET', `/v1/review-queue?type=${slug}&limit=1&offset=0`).catch(() => null),
    ]);
    return { entities: entities ? entities.total : null, pending: queue ? queue.total : null };
  }));
  if (ctx.signal.aborted) return;
  const cards = types.map((type, i) => {
    const slug = encodeURIComponent(type.slug);
    const { entities, pending } = counts[i];
    return h('section', { class: 'panel type-card', 'aria-labelledby': `type-${i}` },
      h('h2', { id: `type-${i}` }, h('a', { href: `#/types/${slug}` }, typeName(type))),
      type.description ? h('p', { class: 'muted' }, type.description) : null,
      h('p', {}, entities === null ? '' : plural(entities, 'entity', 'entities'),
        pending === null ? '' : ` · ${pending} pending review`),
      h('div', { class: 'actions' },
        h('a', { class: 'button secondary small', href: `#/types/${slug}` }, 'Entities'),
        h('a', { class: 'button primary small', href: `#/queue/${slug}` }, `Review queue${pending ? ` (${pending})` : ''}`)),
      h('h3', {}, 'Fields'),
      h('ul', { class: 'plain-list small' }, type.fields.map((field) => h('li', {},
        h('strong', {}, fieldLabel(field, field.name)),
        field.label && field.label !== field.name ? h('span', { class: 'muted mono' }, ` ${field.name}`) : null,
        h('span', { class: 'muted' }, ` · ${field.type || 'string'}`),
        field.human_input ? h('span', { class: 'muted' }, ' · a person answers') : null,
        field.requires_approval ? h('span', { class: 'muted' }, ' · needs approval') : null,
        field.consensus ? h('span', { class: 'muted' }, ` · ${field.consensus.agents.length} agents (${field.consensus.strategy})`) : null,
        field.depends_on && field.depends_on.length ? h('span', { class: 'muted' }, ` · after ${field.depends_on.join(', ')}`) : null))));
  });
  fill(main, 
    h('h1', {}, 'Entity types'),
    types.length === 0
      ? h('p', { class: 'empty' }, 'This project has no entity types yet. Load some with quarry type load FILE.')
      : h('div', { class: 'cards' }, cards),
  );
}

// ---- a type's entities ---------------------------------------------------------------------

async function typePage(main, params, ctx) {
  const slug = params.slug;
  const q = params.q || '';
  const offset = Math.max(0, Number.parseInt(params.offset || '0', 10) || 0);
  const path = `/v1/entity-types/${encodeURIComponent(slug)}/entities?q=${encodeURIComponent(q)}&limit=${PAGE_SIZE}&offset=${offset}`;
  const [type, page] = await Promise.all([
    ctx.api('GET', `/v1/entity-types/${encodeURIComponent(slug)}`),
    ctx.api('GET', path),
  ]);
  if (ctx.signal.aborted) return;
  const specs = Object.fromEntries(type.fields.map((field) => [field.name, field]));
  const searchId = nextId('search');
  const search = h('input', { id: searchId, type: 'search', name: 'q', value: q, autocomplete: 'off' });
  const form = h('form', { class: 'search', role: 'search', onsubmit: (event) => {
    event.preventDefault();
    ctx.navigate(href(`/types/${encodeURIComponent(slug)}`, { q: search.value.trim() }));
  } },
  h('label', { for: searchId }, 'Search by title'), search,
  h('button', { type: 'submit', class: 'button primary' }, 'Search'),
  q ? h('a', { class: 'button secondary', href: href(`/types/${encodeURIComponent(slug)}`) }, 'Clear') : null);

  const rows = page.entities.map((entity) => h('tr', {},
    h('td', {}, h('a', { href: `#/entities/${encodeURIComponent(entity.id)}` }, entity.title)),
    h('td', {}, h('ul', { class: 'field-badges inline-list', 'aria-label': `Fields of ${entity.title}` },
      page.fields.map((name) => {
        const field = entity.fields[name] || { state: 'none' };
        return h('li', { class: 'field-badge' },
          h('span', { class: 'field-name' }, `${fieldLabel(specs[name], name)}:`), stateBadge(field.state));
      }))),
    h('td', { class: 'small muted' }, formatTime(entity.updated_at))));
  const table = page.entities.length === 0
    ? h('p', { class: 'empty' }, q ? `No ${typeName(type)} entity has “${q}” in its title.` : 'No entities of this type yet.')
    : h('div', { class: 'table-wrap' }, h('table', { class: 'responsive-table entity-table' },
      h('caption', { class: 'muted small' }, `${typeName(type)} entities${q ? ` matching “${q}”` : ''}`),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Title'), h('th', { scope: 'col' }, 'Fields'), h('th', { scope: 'col' }, 'Updated'))),
      h('tbody', {}, rows)));
  const feedback = h('section', { class: 'feedback', 'aria-labelledby': 'feedback-title' },
    h('h2', { id: 'feedback-title' }, 'Feedback the agents see'),
    h('p', { class: 'muted small' }, 'Across every entity of this type: how often each field’s values were approved, why they were rejected, and whether confidence meant anything.'),
    h('div', { class: 'feedback-grid' }, type.fields.map((field) => feedbackCard(ctx, type.slug, field))));
  fill(main, 
    h('p', { class: 'breadcrumbs' }, h('a', { href: '#/' }, 'Entity types'), ' › ', typeName(type)),
    h('div', { class: 'row spread' }, h('h1', {}, `${typeName(type)} entities`),
      h('a', { class: 'button primary', href: `#/queue/${encodeURIComponent(slug)}` }, 'Open the review queue')),
    form,
    table,
    pager(page.total, offset, PAGE_SIZE, (next) => ctx.navigate(href(`/types/${encodeURIComponent(slug)}`, { q, offset: next || null }))),
    feedback,
  );
}

/** A field's feedback summary, filled in when it arrives. */
function feedbackCard(ctx, typeSlug, spec) {
  const body = h('div', {}, h('p', { class: 'muted small' }, 'Loading…'));
  const card = h('article', { class: 'panel feedback-card', dataset: { field: spec.name } },
    h('h3', {}, fieldLabel(spec, spec.name)), body);
  loadFeedback(ctx, typeSlug, spec.name, body);
  return card;
}

async function loadFeedback(ctx, typeSlug, field, body) {
  try {
    const summary = await ctx.api('GET', `/v1/feedback/${encodeURIComponent(typeSlug)}/${encodeURIComponent(field)}`);
    fill(body, feedbackView(summary));
  } catch (error) {
    if (error.name === 'AbortError') return;
    fill(body, h('p', { class: 'muted small' }, `Feedback unavailable: ${error.message}`));
  }
}

function feedbackView(summary) {
  if (!summary.total) return h('p', { class: 'muted small' }, 'No values extracted yet.');
  const byConfidence = ['high', 'medium', 'low']
    .filter((level) => summary.approval_rate_by_confidence && level in summary.approval_rate_by_confidence)
    .map((level) => h('li', {}, `${level} confidence: ${percent(summary.approval_rate_by_confidence[level])} approved`));
  return h('div', {},
    h('p', {}, h('strong', {}, summary.approval_rate === null ? 'Not reviewed yet' : `${percent(summary.approval_rate)} approved`),
      h('span', { class: 'muted small' }, ` · ${summary.approved} approved, ${summary.rejected} rejected of ${summary.total}`)),
    byConfidence.length ? h('ul', { class: 'plain-list small', 'aria-label': 'Approval by confidence' }, byConfidence) : null,
    summary.common_rejection_reasons.length
      ? h('div', {}, h('p', { class: 'small' }, 'Common rejection reasons:'),
        h('ol', { class: 'small' }, summary.common_rejection_reasons.map(([reason, count]) => h('li', {}, `${reason} (${count})`))))
      : h('p', { class: 'muted small' }, 'No rejection reasons given.'));
}

// ---- review queue --------------------------------------------------------------------------

async function queuePage(main, params, ctx) {
  const slug = params.slug;
  const typeSlug = encodeURIComponent(slug);
  const type = await ctx.api('GET', `/v1/entity-types/${typeSlug}`);
  const specs = Object.fromEntries(type.fields.map((field) => [field.name, field]));
  const canReview = ctx.can('extraction:review');
  const state = { items: [], total: 0, index: 0, reviewed: 0, busy: false, rejecting: false };
  const documents = new Map();

  async function fetchMore() {
    // Reviewed items leave the server's queue, so the items still held here are exactly the
    // ones ahead of the next page.
    const page = await ctx.api('GET', `/v1/review-queue?type=${typeSlug}&limit=${PAGE_SIZE}&offset=${state.items.length}`);
    const known = new Set(state.items.map((item) => item.result.id));
    state.items.push(...page.items.filter((item) => !known.has(item.result.id)));
    state.total = page.total;
  }

  const counter = h('p', { class: 'queue-counter', 'aria-live': 'polite' });
  const card = h('section', { class: 'panel queue-item', 'aria-labelledby': 'queue-item-title' });
  const help = h('section', { class: 'shortcuts', 'aria-label': 'Keyboard shortcuts' },
    h('p', {}, 'Keys: ', h('kbd', {}, 'j'), ' or ', h('kbd', {}, '→'), ' next · ', h('kbd', {}, 'k'), ' or ', h('kbd', {}, '←'), ' previous · ',
      h('kbd', {}, 'a'), ' approve · ', h('kbd', {}, 'r'), ' reject (type a reason, ', h('kbd', {}, 'Enter'), ' to send, ', h('kbd', {}, 'Esc'), ' to cancel) · ',
      h('kbd', {}, 's'), ' skip'));

  fill(main, 
    h('p', { class: 'breadcrumbs' }, h('a', { href: '#/' }, 'Entity types'), ' › ',
      h('a', { href: `#/types/${typeSlug}` }, typeName(type)), ' › review queue'),
    h('h1', {}, `Review queue: ${typeName(type)}`),
    canReview ? null : h('p', { class: 'panel muted' }, 'Your key may read but not review (it lacks the extraction:review scope): the actions are disabled.'),
    counter, card, help);

  function current() {
    return state.items[state.index] || null;
  }

  function show(focusAction) {
    // A button pressed with the keyboard is redrawn with the card: keep focus on its successor.
    const active = document.activeElement;
    const keep = focusAction || (active && card.contains(active) && active.dataset ? active.dataset.action : null);
    const item = current();
    const remaining = state.items.length;
    counter.textContent = remaining === 0
      ? `Nothing left to review.${state.reviewed ? ` You reviewed ${plural(state.reviewed, 'value', 'values')}.` : ''}`
      : `Item ${state.index + 1} of ${remaining}${state.total > remaining ? ` loaded (${state.total} pending)` : ''}${state.reviewed ? ` · ${state.reviewed} reviewed` : ''}`;
    if (!item) {
      fill(card, h('h2', { id: 'queue-item-title' }, 'All caught up'),
        h('p', {}, 'No pending values of this type. ', h('a', { href: `#/types/${typeSlug}` }, 'Back to the entities')));
      return;
    }
    const result = item.result;
    const spec = specs[result.field_name];
    const reasonId = nextId('reason');
    const reason = h('input', { id: reasonId, type: 'text', name: 'reason', autocomplete: 'off', class: 'reason-input' });
    const rejectForm = h('form', { class: 'reject-form', hidden: !state.rejecting, onsubmit: (event) => {
      event.preventDefault();
      act('reject', reason.value.trim());
    } },
    h('label', { for: reasonId }, 'Why is it wrong? (the field is extracted again with your reason)'), reason,
    h('button', { type: 'submit', class: 'button reject', disabled: !canReview }, 'Send rejection'),
    h('button', { type: 'button', class: 'button secondary', onclick: () => cancelReject() }, 'Cancel'));
    reason.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        cancelReject();
      }
    });
    const button = (label, key, klass, onclick, disabled) => h('button', {
      type: 'button', class: ['button', klass], onclick, disabled, 'aria-keyshortcuts': key, dataset: { action: label.toLowerCase() },
    }, label, h('kbd', { 'aria-hidden': 'true' }, key));
    fill(card, 
      h('p', { class: 'muted small' }, h('a', { href: `#/entities/${encodeURIComponent(result.entity_id)}` }, item.entity_title), ` · ${typeName(type)}`),
      h('h2', { id: 'queue-item-title' }, fieldLabel(spec, result.field_name)),
      h('div', { class: 'queue-value' }, valueView(result.value, 'value')),
      citedQuote(ctx, result, documents),
      h('div', { class: 'actions' },
        button('Previous', 'k', 'secondary', () => move(-1), state.index === 0),
        button('Next', 'j', 'secondary', () => move(1), state.index >= state.items.length - 1),
        button('Approve', 'a', 'approve', () => act('approve'), !canReview || state.busy),
        button('Reject', 'r', 'reject', () => startReject(), !canReview || state.busy),
        button('Skip', 's', 'secondary', () => skip(), false)),
      rejectForm,
      resultFacts(result),
      h('h3', {}, 'Sources'),
      sourcesList(result.sources));
    if (state.rejecting) reason.focus();
    else if (keep) {
      const target = card.querySelector(`[data-action="${keep}"]:not([disabled])`)
        || card.querySelector('.actions button:not([disabled])');
      if (target) target.focus();
    }
  }

  async function move(step) {
    state.rejecting = false;
    const next = state.index + step;
    if (next < 0) return;
    if (next >= state.items.length) {
      if (state.items.length < state.total) {
        await fetchMore();
        if (ctx.signal.aborted) return;
      }
      if (next >= state.items.length) return;
    }
    state.index = next;
    show();
  }

  function skip() {
    // A skipped value stays pending; the queue moves on (and wraps around to it at the end).
    state.rejecting = false;
    if (state.index < state.items.length - 1) state.index += 1;
    else if (state.items.length < state.total) {
      move(1);
      return;
    } else state.index = 0;
    show();
  }

  function startReject() {
    if (!canReview || !current()) return;
    state.rejecting = true;
    show();
  }

  function cancelReject() {
    state.rejecting = false;
    show('reject');
  }

  async function act(action, reason) {
    const item = current();
    if (!item || !canReview || state.busy) return;
    state.busy = true;
    const body = action === 'approve' ? { action: 'approve' } : { action: 'reject', reason: reason || null };
    try {
      await ctx.api('PATCH', `/v1/extraction/results/${encodeURIComponent(item.result.id)}`, body);
      if (ctx.signal.aborted) return;
      state.items.splice(state.index, 1);
      state.total = Math.max(0, state.total - 1);
      state.reviewed += 1;
      state.rejecting = false;
      if (state.items.length === 0 && state.total > 0) await fetchMore();
      if (ctx.signal.aborted) return;
      if (state.index >= state.items.length) state.index = Math.max(0, state.items.length - 1);
      ctx.clearError();
      ctx.notify(action === 'approve'
        ? `Approved ${item.result.field_name} of ${item.entity_title}.`
        : `Rejected ${item.result.field_name} of ${item.entity_title}${reason ? '; it will be extracted again with your reason' : ''}.`);
    } catch (error) {
      if (error.name === 'AbortError') return;
      ctx.showError(error);
    } finally {
      state.busy = false;
    }
    if (!ctx.signal.aborted) show();
  }

  document.addEventListener('keydown', (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || isTyping(event)) return;
    // A focused button or link keeps Enter and Space; letters and arrows drive the queue.
    const keys = {
      j: () => move(1), ArrowRight: () => move(1),
      k: () => move(-1), ArrowLeft: () => move(-1),
      a: () => act('approve'),
      r: () => startReject(),
      s: () => skip(),
    };
    const handler = keys[event.key];
    if (!handler) return;
    event.preventDefault();
    handler();
  }, { signal: ctx.signal });

  await fetchMore();
  if (ctx.signal.aborted) return;
  show();
}

// ---- entity page ---------------------------------------------------------------------------

async function entityPage(main, params, ctx) {
  const id = params.id;
  const entityPath = encodeURIComponent(id);
  const canReview = ctx.can('extraction:review');
  const canTrigger = ctx.can('extraction:trigger');
  const page = {
    overview: null, watching: new Map(), timer: 0, since: 0, documents: new Map(),
    openHistory: new Set(params.field ? [params.field] : []),
  };

  const header = h('div', {});
  const runPanel = h('section', { class: 'panel run-panel', 'aria-labelledby': 'run-title' });
  const fieldsBox = h('div', { class: 'fields' });
  const watchStatus = h('p', { class: 'watch-status muted small', role: 'status' });
  fill(main, header, runPanel, watchStatus, fieldsBox);

  async function load() {
    const overview = await ctx.api('GET', `/v1/entities/${entityPath}/overview`);
    if (ctx.signal.aborted) return null;
    page.overview = overview;
    draw();
    // An approval can resume a run, a hand-set value unblock dependents: follow whatever moves.
    if (overview.fields.some((field) => IN_FLIGHT.has(field.state))) startWatching();
    return overview;
  }

  function draw() {
    const { entity, entity_type: type, fields } = page.overview;
    const typeLink = `#/types/${encodeURIComponent(entity.entity_type)}`;
    fill(header, 
      h('p', { class: 'breadcrumbs' }, h('a', { href: '#/' }, 'Entity types'), ' › ',
        h('a', { href: typeLink }, type ? typeName(type) : entity.entity_type), ' › ', entity.title),
      h('h1', {}, entity.title),
      facts([
        ['Type', type ? typeName(type) : entity.entity_type],
        ['Id', h('span', { class: 'mono' }, entity.id)],
        ['Updated', formatTime(entity.updated_at)],
        ['Graph', entity.mention_count ? h('a', { href: `#/graph/${entityPath}` }, `${plural(entity.mention_count, 'mention', 'mentions')} in conversations`) : null],
      ]));
    drawRunPanel(fields);
    const focusedField = document.activeElement && document.activeElement.closest && document.activeElement.closest('[data-field]');
    const refocus = focusedField ? { field: focusedField.dataset.field, action: document.activeElement.dataset.action } : null;
    fill(fieldsBox, ...fields.map((field) => fieldCard(field, type)));
    if (refocus) {
      const card = fieldsBox.querySelector(`[data-field="${CSS.escape(refocus.field)}"]`);
      const again = card && (card.querySelector(`[data-action="${refocus.action}"]:not([disabled])`) || card.querySelector('h2'));
      if (again) again.focus({ preventScroll: true });
    }
  }

  function drawRunPanel(fields) {
    const failed = fields.filter((field) => field.state === 'failed' || field.state === 'blocked');
    const inFlight = fields.filter((field) => IN_FLIGHT.has(field.state));
    const pending = fields.filter((field) => field.state === 'pending');
    const summary = [
      inFlight.length ? `${inFlight.length} running or queued` : null,
      pending.length ? `${pending.length} pending review` : null,
      failed.length ? `${failed.length} failed or blocked` : null,
    ].filter(Boolean).join(' · ') || 'Nothing in flight.';
    fill(runPanel, 
      h('h2', { id: 'run-title' }, 'Extraction'),
      h('p', { class: 'run-summary' }, summary),
      canTrigger ? null : h('p', { class: 'muted small' }, 'Your key cannot start runs (it lacks extraction:trigger).'),
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'button primary', dataset: { action: 'run' }, disabled: !canTrigger, onclick: startRun }, 'Run extraction'),
        h('button', { type: 'button', class: 'button secondary', dataset: { action: 'retry' }, disabled: !canTrigger || failed.length === 0, onclick: retryFailed },
          failed.length ? `Retry ${plural(failed.length, 'failed field', 'failed fields')}` : 'Retry failed fields')));
  }

  function fieldCard(field, type) {
    const spec = field.spec || {};
    const result = field.result;
    const titleId = nextId('field');
    const locked = field.state === 'locked' || lockedFields().includes(field.name);
    const card = h('section', { class: ['panel', 'field-card', `state-${field.state}`], 'aria-labelledby': titleId, dataset: { field: field.name }, id: `field-${field.name}` });
    const watching = page.watching.get(field.name);
    add(card, 
      h('div', { class: 'field-head' },
        h('h2', { id: titleId, tabindex: '-1' }, fieldLabel(spec, field.name)),
        stateBadge(field.state, 'field-state'),
        locked && field.state !== 'locked' ? stateBadge('locked') : null,
        spec.human_input ? h('span', { class: 'badge' }, 'a person answers') : null),
      spec.instructions ? h('p', { class: 'muted small' }, spec.instructions) : null,
      h('p', {}, valueView(result ? result.value : entity().fields[field.name], 'value field-value')),
      result ? citedQuote(ctx, result, page.documents) : null,
      watching ? h('p', { class: 'small rerun-note', role: 'status' }, watching.note) : null,
      result ? resultFacts(result) : null,
      field.task && field.task.last_error
        ? h('p', { class: 'small task-error' }, h('strong', {}, `Last error (attempt ${field.task.attempts}): `), field.task.last_error)
        : null,
      result ? h('h3', {}, 'Sources') : null,
      result ? sourcesList(result.sources) : null,
      fieldActions(field, spec, result, locked),
      spec.human_input && !locked && (field.state === 'waiting_human' || !result) ? answerForm(field, spec) : null,
      historyBlock(field, spec, type));
    return card;
  }

  function entity() {
    return page.overview.entity;
  }

  function lockedFields() {
    const list = entity().metadata && entity().metadata.locked_fields;
    return Array.isArray(list) ? list : [];
  }

  function fieldActions(field, spec, result, locked) {
    const pending = result && result.status === 'pending';
    const actions = h('div', { class: 'actions' });
    if (pending) {
      add(actions, 
        h('button', { type: 'button', class: 'button approve', dataset: { action: 'approve' }, disabled: !canReview, onclick: () => review(field, result, { action: 'approve' }) }, 'Approve'),
        h('button', { type: 'button', class: 'button reject', dataset: { action: 'reject' }, disabled: !canReview, 'aria-expanded': 'false', onclick: (event) => toggleReject(event.currentTarget, field, result) }, 'Reject…'));
    }
    add(actions, 
      h('button', { type: 'button', class: 'button secondary', dataset: { action: locked ? 'unlock' : 'lock' }, disabled: !canReview, onclick: () => setLock(field, !locked) },
        locked ? 'Unlock' : 'Lock'),
      spec.human_input && field.state === 'waiting_human' ? null
        : h('button', {
          type: 'button', class: 'button secondary', dataset: { action: 'set' }, disabled: !canReview || locked, 'aria-expanded': 'false',
          title: locked ? 'A locked field keeps its value: unlock it to set another.' : null,
          onclick: (event) => toggleSetForm(event.currentTarget, field, spec, result),
        }, 'Set value…'));
    if (locked && canReview) add(actions, h('p', { class: 'muted small' }, 'Locked: runs skip this field and it keeps its value until unlocked.'));
    if (!canReview) add(actions, h('p', { class: 'muted small' }, 'Reviewing needs a key with extraction:review.'));
    return actions;
  }

  function toggleReject(button, field, result) {
    const card = button.closest('.field-card');
    const existing = card.querySelector('.reject-form');
    if (existing) {
      existing.remove();
      button.setAttribute('aria-expanded', 'false');
      return;
    }
    const reasonId = nextId('reason');
    const reason = h('input', { id: reasonId, type: 'text', name: 'reason', autocomplete: 'off', class: 'reason-input' });
    const form = h('form', { class: 'reject-form', onsubmit: (event) => {
      event.preventDefault();
      review(field, result, { action: 'reject', reason: reason.value.trim() || null });
    } },
    h('label', { for: reasonId }, `Why is this ${fieldLabel(field.spec, field.name)} wrong? The field is extracted again with your reason.`),
    reason,
    h('button', { type: 'submit', class: 'button reject', dataset: { action: 'send-reject' } }, 'Reject'),
    h('button', { type: 'button', class: 'button secondary', onclick: () => { form.remove(); button.setAttribute('aria-expanded', 'false'); button.focus(); } }, 'Cancel'));
    button.setAttribute('aria-expanded', 'true');
    button.closest('.actions').after(form);
    reason.focus();
  }

  function toggleSetForm(button, field, spec, result) {
    const card = button.closest('.field-card');
    const existing = card.querySelector('.set-form');
    if (existing) {
      existing.remove();
      button.setAttribute('aria-expanded', 'false');
      return;
    }
    const form = valueForm(field, spec, result ? result.value : entity().fields[field.name], 'set-form', `New value for ${fieldLabel(spec, field.name)}`, 'Save value');
    button.setAttribute('aria-expanded', 'true');
    button.closest('.actions').after(form);
    form.querySelector('[name="value"]').focus();
  }

  function answerForm(field, spec) {
    if (!canReview) return h('p', { class: 'muted small' }, 'This field waits for a person’s answer; answering needs a key with extraction:review.');
    return valueForm(field, spec, null, 'answer-form', spec.instructions ? `Your answer: ${spec.instructions}` : `Your answer for ${fieldLabel(spec, field.name)}`, 'Send answer');
  }

  /** A form that stores a person's value for the field (a hand-set value or a human_input answer). */
  function valueForm(field, spec, current, klass, labelText, submitText) {
    const { id, input, type } = valueInput(spec, current);
    const errorId = nextId('error');
    const error = h('p', { class: 'form-error', id: errorId, role: 'alert' });
    input.setAttribute('aria-describedby', errorId);
    const form = h('form', { class: ['inline-form', klass], onsubmit: async (event) => {
      event.preventDefault();
      let value;
      try {
        value = parseTypedValue(input.value, type);
      } catch (invalid) {
        error.textContent = invalid.message;
        input.setAttribute('aria-invalid', 'true');
        input.focus();
        return;
      }
      await setValue(field, value, form);
    } },
    h('label', { for: id }, labelText), input,
    h('button', { type: 'submit', class: 'button primary', dataset: { action: klass } }, submitText),
    error);
    return form;
  }

  async function run(action, button) {
    if (button) button.disabled = true;
    try {
      return await action();
    } catch (error) {
      if (error.name !== 'AbortError') ctx.showError(error);
      return FAILED;
    } finally {
      if (button && button.isConnected) button.disabled = false;
    }
  }

  async function review(field, result, body) {
    const outcome = await run(() => ctx.api('PATCH', `/v1/extraction/results/${encodeURIComponent(result.id)}`, body));
    if (outcome === FAILED || ctx.signal.aborted) return;
    ctx.clearError();
    if (body.action === 'approve') {
      ctx.notify(`Approved ${fieldLabel(field.spec, field.name)}.`);
    } else if (outcome.rerun) {
      ctx.notify(`Rejected ${fieldLabel(field.spec, field.name)}; extracting it again with your reason.`);
      watchField(field.name, result.id, 'Extracting again with your reason…');
    } else {
      ctx.notify(`Rejected ${fieldLabel(field.spec, field.name)}.`);
    }
    await load();
    focusField(field.name, body.action === 'approve' ? 'lock' : 'set');
  }

  async function setLock(field, lock) {
    const path = `/v1/entities/${entityPath}/locks/${encodeURIComponent(field.name)}`;
    const done = await run(() => ctx.api(lock ? 'PUT' : 'DELETE', path));
    if (done === FAILED || ctx.signal.aborted) return;
    ctx.notify(lock ? `Locked ${fieldLabel(field.spec, field.name)}: runs leave it alone.` : `Unlocked ${fieldLabel(field.spec, field.name)}.`);
    await load();
    focusField(field.name, lock ? 'unlock' : 'lock');
  }

  async function setValue(field, value, form) {
    const button = form.querySelector('button[type="submit"]');
    const stored = await run(() => ctx.api('PUT', `/v1/extraction/${entityPath}/fields/${encodeURIComponent(field.name)}`, { value }), button);
    if (stored === FAILED || ctx.signal.aborted) return;
    ctx.clearError();
    ctx.notify(`Saved ${fieldLabel(field.spec, field.name)}.`);
    await load();
    focusField(field.name, 'set');
    startWatching();
  }

  async function startRun(event) {
    const started = await run(() => ctx.api('POST', `/v1/workflows/${entityPath}`, {}), event.currentTarget);
    if (started === FAILED || ctx.signal.aborted) return;
    ctx.notify(`Run queued: ${plural(started && started.nodes ? started.nodes.length : 0, 'field', 'fields')}.`);
    await load();
    startWatching();
  }

  async function retryFailed(event) {
    const retried = await run(() => ctx.api('POST', `/v1/workflows/${entityPath}/retry`, {}), event.currentTarget);
    if (retried === FAILED || ctx.signal.aborted) return;
    ctx.notify(`Retrying ${plural(retried && retried.retried ? retried.retried.length : 0, 'field', 'fields')}.`);
    await load();
    startWatching();
  }

  function focusField(name, action) {
    const card = fieldsBox.querySelector(`[data-field="${CSS.escape(name)}"]`);
    if (!card) return;
    const target = card.querySelector(`[data-action="${action}"]:not([disabled])`) || card.querySelector('h2');
    target.focus({ preventScroll: false });
  }

  // Polling: while a field waits for a rerun (after a rejection) or anything is queued or
  // running, ask for the overview every second; stop when it settles, the page is left, or
  // after POLL_LIMIT_MS.
  function watchField(name, replacedResultId, note) {
    page.watching.set(name, { replacedResultId, note });
    startWatching();
  }

  function settled(overview) {
    for (const [name, watch] of page.watching) {
      const field = overview.fields.find((f) => f.name === name);
      const fresh = field && field.result && field.result.id !== watch.replacedResultId && !IN_FLIGHT.has(field.state);
      const stuck = field && (field.state === 'failed' || field.state === 'blocked' || field.state === 'locked');
      if (fresh || stuck || !field) page.watching.delete(name);
    }
    return page.watching.size === 0 && !overview.fields.some((field) => IN_FLIGHT.has(field.state));
  }

  function startWatching() {
    if (page.timer) return;
    page.since = Date.now();
    watchStatus.textContent = 'Waiting for the agents…';
    const tick = async () => {
      page.timer = 0;
      if (ctx.signal.aborted) return;
      let overview;
      try {
        overview = await ctx.api('GET', `/v1/entities/${entityPath}/overview`);
      } catch (error) {
        if (error.name === 'AbortError') return;
        watchStatus.textContent = `Could not refresh: ${error.message}`;
        page.timer = setTimeout(tick, POLL_MS * 3);
        return;
      }
      if (ctx.signal.aborted) return;
      const before = JSON.stringify([page.overview, [...page.watching.keys()]]);
      page.overview = overview;
      const done = settled(overview);
      if (JSON.stringify([overview, [...page.watching.keys()]]) !== before) draw();
      if (done) {
        watchStatus.textContent = 'Up to date.';
        return;
      }
      if (Date.now() - page.since > POLL_LIMIT_MS) {
        page.watching.clear();
        fill(watchStatus, 'Still waiting after three minutes; the agents may be busy. ',
          h('button', { type: 'button', class: 'link-button', onclick: () => startWatching() }, 'Keep watching'));
        return;
      }
      page.timer = setTimeout(tick, POLL_MS);
    };
    page.timer = setTimeout(tick, POLL_MS);
  }

  function historyBlock(field, spec, type) {
    const body = h('div', {});
    // The open state is remembered at the click, not at the (later) toggle event, so a redraw
    // by the poller in between keeps the block open.
    const summary = h('summary', {}, 'History and feedback');
    const details = h('details', { class: 'history-block', dataset: { field: field.name } }, summary, body);
    summary.addEventListener('click', () => {
      if (details.open) page.openHistory.delete(field.name);
      else page.openHistory.add(field.name);
    });
    const load = async () => {
      fill(body, h('p', { class: 'muted small' }, 'Loading…'));
      try {
        const [history, summary] = await Promise.all([
          ctx.api('GET', `/v1/extraction/${entityPath}/history/${encodeURIComponent(field.name)}`),
          ctx.api('GET', `/v1/feedback/${encodeURIComponent(type ? type.slug : entity().entity_type)}/${encodeURIComponent(field.name)}`).catch(() => null),
        ]);
        fill(body, 
          h('h3', {}, 'History'),
          historyList(history),
          h('h3', {}, `Feedback on ${fieldLabel(spec, field.name)} across ${type ? typeName(type) : 'this type'}`),
          summary ? feedbackView(summary) : h('p', { class: 'muted small' }, 'Unavailable.'));
      } catch (error) {
        if (error.name === 'AbortError') return;
        fill(body, h('p', { class: 'muted small' }, `Could not load the history: ${error.message}`));
      }
    };
    details.addEventListener('toggle', () => {
      if (details.open) load();
    });
    if (page.openHistory.has(field.name)) details.open = true;
    return details;
  }

  function historyList(history) {
    if (!history.length) return h('p', { class: 'muted small' }, 'No values yet.');
    // Newest first: the reviewer reads what happened last.
    return h('ol', { class: 'plain-list history', reversed: true }, [...history].reverse().map((result) => h('li', {},
      h('div', { class: 'row' }, valueView(result.value), stateBadge(result.status), confidenceBadge(result.confidence)),
      h('p', { class: 'small muted' }, `${result.agent_id} · ${formatTime(result.created_at)}`,
        result.reviewed_by ? ` · reviewed by ${result.reviewed_by}` : ''),
      result.rejection_reason ? h('p', { class: 'small' }, h('strong', {}, 'Reason: '), result.rejection_reason) : null)));
  }

  await load();
  if (ctx.signal.aborted) return undefined;
  if (params.field) focusField(params.field, 'none');
  return () => clearTimeout(page.timer);
}
