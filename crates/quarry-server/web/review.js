// The review workspace's entry pages (the field-extraction reference's reviewer): entity types
// with their fields, and the entities of a type with their fields' states and each field's
// feedback summary. The queue is `queue.js`, the entity page `entity.js`.

import { h, href, fill, formatTime } from './dom.js';
import {
  PAGE_SIZE,
  stateBadge,
  fieldLabel,
  typeName,
  plural,
  pager,
  nextId,
  feedbackView,
} from './review-kit.js';

export async function render(main, params, ctx) {
  return params.view === 'type' ? typePage(main, params, ctx) : homePage(main, ctx);
}

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


// ---- review queue --------------------------------------------------------------------------
