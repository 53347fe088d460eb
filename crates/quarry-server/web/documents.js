// Documents: the list (searchable, paginated), upload (text, Markdown, PDF) with an optional
// entity link, and the reader, which shows the text with every span the linked entities' results
// cite highlighted and the one a link asked for (`?start=&end=`, code points) focused.

import { h, href, fill, add, formatValue, formatTime } from './dom.js';
import { renderHighlighted, revealFirstMark, codePointLength, isPassage } from './spans.js';

const PAGE_SIZE = 50;
/** What the upload endpoint accepts, by file extension when the browser gives no type. */
const KINDS = { md: 'text/markdown', markdown: 'text/markdown', pdf: 'application/pdf', txt: 'text/plain', text: 'text/plain' };

export async function render(main, params, ctx) {
  if (params.view === 'document') return readerPage(main, params, ctx);
  return listPage(main, params, ctx);
}

let uid = 0;
function nextId(prefix) {
  uid += 1;
  return `${prefix}-doc-${uid}`;
}

function plural(count, one, many) {
  return `${count} ${count === 1 ? one : many}`;
}

/** The content type to upload `file` as, or null when Quarry cannot read it. */
export function uploadType(file) {
  const ext = (file.name.split('.').pop() || '').toLowerCase();
  if (KINDS[ext]) return KINDS[ext];
  if (file.type === 'application/pdf' || file.type === 'text/markdown' || file.type === 'text/plain') return file.type;
  if (file.type.startsWith('text/')) return 'text/plain';
  return null;
}

/** A datalist of the project's entities, so a link can be picked by title. */
async function entityOptions(ctx, listId) {
  const list = h('datalist', { id: listId });
  try {
    const entities = await ctx.api('GET', '/v1/entities?limit=500');
    add(list, ...entities.map((entity) => h('option', { value: entity.id }, `${entity.title} (${entity.entity_type})`)));
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    // Without entities:read the link is typed by id.
  }
  return list;
}

// ---- list and upload -----------------------------------------------------------------------

async function listPage(main, params, ctx) {
  const q = params.q || '';
  const offset = Math.max(0, Number.parseInt(params.offset || '0', 10) || 0);
  const page = await ctx.api('GET', `/v1/documents?q=${encodeURIComponent(q)}&limit=${PAGE_SIZE}&offset=${offset}`);
  if (ctx.signal.aborted) return;

  const searchId = nextId('search');
  const search = h('input', { id: searchId, type: 'search', name: 'q', value: q, autocomplete: 'off' });
  const searchForm = h('form', { class: 'search', role: 'search', onsubmit: (event) => {
    event.preventDefault();
    ctx.navigate(href('/documents', { q: search.value.trim() }));
  } },
  h('label', { for: searchId }, 'Search by title'), search,
  h('button', { type: 'submit', class: 'button primary' }, 'Search'),
  q ? h('a', { class: 'button secondary', href: '#/documents' }, 'Clear') : null);

  const rows = page.documents.map((doc) => h('tr', {},
    h('td', {}, h('a', { href: `#/documents/${encodeURIComponent(doc.id)}` }, doc.title || '(untitled)')),
    h('td', {}, doc.kind === 'episode' ? 'conversation episode' : 'file'),
    h('td', {}, `${(doc.chars ?? 0).toLocaleString()} characters`),
    h('td', { class: 'small muted' }, formatTime(doc.created_at))));
  const table = page.documents.length === 0
    ? h('p', { class: 'empty' }, q ? `No document has “${q}” in its title.` : 'No documents yet.')
    : h('div', { class: 'table-wrap' }, h('table', { class: 'responsive-table document-table' },
      h('thead', {}, h('tr', {}, ['Title', 'Kind', 'Length', 'Added'].map((name) => h('th', { scope: 'col' }, name)))),
      h('tbody', {}, rows)));

  const last = Math.min(page.total, offset + PAGE_SIZE);
  const pager = page.total > PAGE_SIZE || offset > 0
    ? h('nav', { class: 'pager', 'aria-label': 'Pages' },
      h('button', { type: 'button', class: 'button secondary small', disabled: offset === 0, onclick: () => ctx.navigate(href('/documents', { q, offset: Math.max(0, offset - PAGE_SIZE) || null })) }, '← Previous'),
      h('span', {}, `${page.total === 0 ? 0 : offset + 1}–${last} of ${page.total}`),
      h('button', { type: 'button', class: 'button secondary small', disabled: last >= page.total, onclick: () => ctx.navigate(href('/documents', { q, offset: offset + PAGE_SIZE })) }, 'Next →'))
    : h('p', { class: 'muted small' }, plural(page.total, 'document', 'documents'));

  fill(main, 
    h('h1', {}, 'Documents'),
    ctx.can('documents:write') ? await uploadPanel(ctx) : h('p', { class: 'muted small' }, 'Uploading needs a key with documents:write.'),
    h('h2', {}, 'All documents'),
    searchForm, table, pager);
}

async function uploadPanel(ctx) {
  const fileId = nextId('file');
  const titleId = nextId('title');
  const textId = nextId('text');
  const entityId = nextId('entity');
  const listId = nextId('entities');
  const file = h('input', { id: fileId, type: 'file', name: 'file', accept: '.txt,.md,.markdown,.pdf,text/plain,text/markdown,application/pdf' });
  const title = h('input', { id: titleId, type: 'text', name: 'title', autocomplete: 'off' });
  const text = h('textarea', { id: textId, name: 'text', rows: 4 });
  const entity = h('input', { id: entityId, type: 'text', name: 'entity_id', list: listId, autocomplete: 'off', spellcheck: 'false' });
  const error = h('p', { class: 'form-error', role: 'alert' });
  const submit = h('button', { type: 'submit', class: 'button primary' }, 'Upload');
  file.addEventListener('change', () => {
    const chosen = file.files[0];
    if (chosen && !title.value.trim()) title.value = chosen.name.replace(/\.[^.]+$/, '');
  });
  const form = h('form', { class: 'stack upload-form', onsubmit: async (event) => {
    event.preventDefault();
    error.textContent = '';
    const chosen = file.files[0];
    let body;
    let contentType;
    if (chosen) {
      contentType = uploadType(chosen);
      if (!contentType) {
        error.textContent = `Quarry reads text, Markdown and PDF files; “${chosen.name}” is none of these.`;
        file.focus();
        return;
      }
      body = chosen;
    } else if (text.value.trim()) {
      body = text.value;
      contentType = 'text/plain';
    } else {
      error.textContent = 'Choose a file or paste some text.';
      file.focus();
      return;
    }
    const name = title.value.trim() || (chosen ? chosen.name : 'Pasted text');
    const query = new URLSearchParams({ title: name });
    if (entity.value.trim()) query.set('entity_id', entity.value.trim());
    submit.disabled = true;
    try {
      const doc = await ctx.api('POST', `/v1/documents/upload?${query}`, body, { contentType });
      if (ctx.signal.aborted) return;
      ctx.notify(`Uploaded “${doc.title}”.`);
      if (Array.isArray(doc.warnings) && doc.warnings.length) ctx.showError(`Stored, but: ${doc.warnings.join('; ')}`);
      ctx.navigate(`#/documents/${encodeURIComponent(doc.id)}`);
    } catch (failure) {
      if (failure.name === 'AbortError') return;
      error.textContent = failure.message;
    } finally {
      submit.disabled = false;
    }
  } },
  h('div', { class: 'stack' }, h('label', { for: fileId }, 'File (text, Markdown or PDF)'), file),
  h('div', { class: 'stack' }, h('label', { for: textId }, 'or paste text'), text),
  h('div', { class: 'stack' }, h('label', { for: titleId }, 'Title'), title),
  h('div', { class: 'stack' }, h('label', { for: entityId }, 'Link to entity (optional: its id)'), entity, await entityOptions(ctx, listId)),
  error,
  h('div', {}, submit));
  return h('section', { class: 'panel', 'aria-labelledby': 'upload-title' },
    h('details', { class: 'upload' }, h('summary', { id: 'upload-title' }, 'Upload a document'), form));
}

// ---- reader --------------------------------------------------------------------------------

/** Every span that the latest results of the document's linked entities cite in it. */
async function citationsOf(ctx, documentId, entityIds) {
  const citations = [];
  const titles = {};
  await Promise.all(entityIds.map(async (entityId) => {
    try {
      const [entity, results] = await Promise.all([
        ctx.api('GET', `/v1/entities/${encodeURIComponent(entityId)}`),
        ctx.api('GET', `/v1/extraction/${encodeURIComponent(entityId)}`),
      ]);
      titles[entityId] = entity.title;
      for (const result of results) {
        for (const source of result.sources || []) {
          if (source.type !== 'document' || source.document_id !== documentId) continue;
          citations.push({
            start: source.start, end: source.end, field: result.field_name, value: result.value, status: result.status,
            entityId, entityTitle: entity.title, passage: isPassage(source, result.value),
          });
        }
      }
    } catch (error) {
      if (error.name === 'AbortError') throw error;
      // An entity this key may not read (or one deleted since) cites nothing here.
    }
  }));
  citations.sort((a, b) => a.passage - b.passage || a.start - b.start || a.end - b.end);
  return { citations, titles };
}

async function readerPage(main, params, ctx) {
  const id = params.id;
  const { document: doc, entity_ids: entityIds = [] } = await ctx.api('GET', `/v1/documents/${encodeURIComponent(id)}`);
  const { citations, titles } = await citationsOf(ctx, doc.id, entityIds);
  if (ctx.signal.aborted) return;
  const start = Number.parseInt(params.start, 10);
  const end = Number.parseInt(params.end, 10);
  const asked = Number.isFinite(start) && Number.isFinite(end) && end > start ? { start, end } : null;

  const text = h('div', { class: 'doc-text', tabindex: '0', role: 'region', 'aria-label': `Text of ${doc.title}` });
  const spanFocus = (span) => asked && span.start === asked.start && span.end === asked.end;
  const spans = citations.map((c) => ({
    start: c.start, end: c.end, passage: c.passage && !spanFocus(c), focus: spanFocus(c),
    label: `${c.field} of ${c.entityTitle}: ${formatValue(c.value)} (${c.status}${c.passage ? ', a passage the agent read' : ''})`,
  }));
  if (asked && !spans.some((span) => span.focus)) spans.push({ start: asked.start, end: asked.end, label: 'The cited span', focus: true });

  const show = (target) => {
    for (const span of spans) {
      span.focus = Boolean(target) && span.start === target.start && span.end === target.end;
      if (span.focus) span.passage = false;
    }
    renderHighlighted(text, doc.text, spans);
    if (target) revealFirstMark(text);
  };

  const citationList = citations.length
    ? h('ol', { class: 'plain-list citations small' }, citations.map((c) => h('li', {},
      h('button', { type: 'button', class: 'link-button', onclick: () => {
        history.replaceState(null, '', href(`/documents/${encodeURIComponent(doc.id)}`, { start: c.start, end: c.end }));
        show(c);
      } }, `${c.field}: ${formatValue(c.value)}`),
      h('span', { class: 'muted' }, ' · '),
      h('a', { href: `#/entities/${encodeURIComponent(c.entityId)}?field=${encodeURIComponent(c.field)}` }, c.entityTitle),
      h('span', { class: 'muted' }, ` · ${c.status} · ${c.passage ? 'passage read, ' : ''}characters ${c.start}–${c.end}`))))
    : h('p', { class: 'muted small' }, 'No result of a linked entity cites this document yet.');

  const linkPanel = ctx.can('documents:write') ? await linkForm(ctx, doc) : null;
  if (ctx.signal.aborted) return;

  fill(main, 
    h('p', { class: 'breadcrumbs' }, h('a', { href: '#/documents' }, 'Documents'), ' › ', doc.title),
    h('h1', {}, doc.title || '(untitled)'),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Kind'), h('dd', {}, doc.kind === 'episode' ? 'conversation episode' : 'file'),
      h('dt', {}, 'Length'), h('dd', {}, `${codePointLength(doc.text).toLocaleString()} characters`),
      h('dt', {}, 'Added'), h('dd', {}, formatTime(doc.created_at)),
      h('dt', {}, 'Linked to'), h('dd', {}, entityIds.length
        ? h('ul', { class: 'inline-list' }, entityIds.map((entityId) => h('li', {}, h('a', { href: `#/entities/${encodeURIComponent(entityId)}` }, titles[entityId] || entityId))))
        : 'no entity')),
    h('section', { 'aria-labelledby': 'citations-title' },
      h('h2', { id: 'citations-title' }, 'Cited spans'),
      h('p', { class: 'legend' }, h('mark', {}, 'cited'), ' words a value came from, ', h('mark', { class: 'mark-passage' }, 'passage'),
        ' text the agent read, ', h('mark', { class: 'mark-focus' }, 'selected'), ' the one you opened. Offsets count characters (code points).'),
      citationList),
    linkPanel,
    h('h2', {}, 'Text'),
    text);
  show(asked);
}

async function linkForm(ctx, doc) {
  const inputId = nextId('link');
  const listId = nextId('link-list');
  const input = h('input', { id: inputId, type: 'text', name: 'entity_id', list: listId, autocomplete: 'off', spellcheck: 'false' });
  const error = h('p', { class: 'form-error', role: 'alert' });
  const form = h('form', { class: 'inline-form', onsubmit: async (event) => {
    event.preventDefault();
    const entityId = input.value.trim();
    if (!entityId) {
      error.textContent = 'Enter an entity id.';
      input.focus();
      return;
    }
    try {
      await ctx.api('POST', `/v1/documents/${encodeURIComponent(doc.id)}/links`, { entity_ids: [entityId] });
      if (ctx.signal.aborted) return;
      ctx.notify('Linked.');
      ctx.navigate(location.hash);
    } catch (failure) {
      if (failure.name === 'AbortError') return;
      error.textContent = failure.message;
    }
  } },
  h('label', { for: inputId }, 'Link this document to an entity (its id)'), input, await entityOptions(ctx, listId),
  h('button', { type: 'submit', class: 'button secondary' }, 'Link'), error);
  return h('details', { class: 'panel link-panel' }, h('summary', {}, 'Link to an entity'), form);
}
