// What the review pages share: field states in words, badges, facts, sources and their cited
// quotes, typed value input and parsing, pagination, and the feedback summary view.

import { h, href, fill, add, formatValue, formatTime } from './dom.js';
import { isPassage, quoteAround } from './spans.js';

export const PAGE_SIZE = 50;
/** How often the entity page asks again while work is in flight (a rerun, a run). */
export const POLL_MS = 1000;
/** Give up polling after this long; the page says so and offers a reload button. */
export const POLL_LIMIT_MS = 180000;

export const STATE_TEXT = {
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
export const IN_FLIGHT = new Set(['queued', 'running']);

// ---- small pieces --------------------------------------------------------------------------

export function stateBadge(state, extraClass) {
  const known = state || 'none';
  return h('span', { class: ['badge', `state-${known}`, extraClass] }, STATE_TEXT[known] || known);
}

export function confidenceBadge(confidence) {
  if (!confidence) return null;
  return h('span', { class: ['badge', `conf-${confidence}`] }, `${confidence} confidence`);
}

export function fieldLabel(spec, name) {
  return (spec && spec.label) || name;
}

export function typeName(type) {
  return type.name || type.slug;
}

export function percent(ratio) {
  return ratio === null || ratio === undefined ? '—' : `${Math.round(ratio * 100)}%`;
}

export function plural(count, one, many) {
  return `${count} ${count === 1 ? one : many}`;
}

export function formatDuration(ms) {
  if (ms === null || ms === undefined) return '—';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * A value as its field's `display_type` says (text, number, currency, date, url, email,
 * markdown, list); a value that does not fit its display type, or a field without one, is shown
 * as `formatValue` shows it. Markdown stays text (never HTML from an agent); only http(s) URLs
 * become links.
 */
export function valueView(value, klass = 'value', displayType = null) {
  if (value === null || value === undefined) return h('span', { class: [klass, 'unset'] }, 'no value');
  const classes = displayType ? [klass, `display-${displayType}`] : klass;
  return h('span', { class: classes }, displayed(value, displayType));
}

function displayed(value, displayType) {
  switch (displayType) {
    case 'number':
      if (typeof value === 'number') return value.toLocaleString();
      break;
    case 'currency':
      if (typeof value === 'number') {
        return value.toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
      }
      break;
    case 'date':
      if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)) {
        const date = new Date(`${value}T00:00:00`);
        if (!Number.isNaN(date.getTime())) {
          return h('time', { datetime: value }, date.toLocaleDateString(undefined, { year: 'numeric', month: 'long', day: 'numeric' }));
        }
      }
      break;
    case 'url': {
      const link = typeof value === 'string' ? safeUrl(value) : null;
      if (link) return h('a', { href: link, rel: 'noopener noreferrer', target: '_blank' }, value);
      break;
    }
    case 'email':
      if (typeof value === 'string' && /^[^\s@<>"]+@[^\s@<>"]+$/.test(value)) {
        return h('a', { href: `mailto:${value}` }, value);
      }
      break;
    case 'list':
      if (Array.isArray(value)) return h('ul', { class: 'plain-list value-list' }, value.map((item) => h('li', {}, formatValue(item))));
      break;
    default:
      break;
  }
  return formatValue(value);
}

/** Only http(s) links leave the app: a `javascript:` URL from an agent must never become a link. */
export function safeUrl(url) {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : null;
  } catch {
    return null;
  }
}

/** `text` cut to `limit` code points with an ellipsis. */
export function shorten(text, limit) {
  const chars = Array.from(text);
  return chars.length <= limit ? text : `${chars.slice(0, limit).join('')}…`;
}

/** One source of a value as a list item: a document span opens the reader on it, an entity its
 * page, a URL a new tab. */
export function sourceItem(source) {
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
export function citedQuote(ctx, result, documents) {
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

export function sourcesList(sources) {
  if (!sources || sources.length === 0) return h('p', { class: 'muted small' }, 'No sources cited.');
  return h('ul', { class: 'sources' }, sources.map(sourceItem));
}

export function agreementText(metadata) {
  if (!metadata || typeof metadata.agreement !== 'number') return null;
  const agents = Array.isArray(metadata.agents) ? metadata.agents.length : null;
  const share = percent(metadata.agreement);
  return agents
    ? `${share} of ${agents} agents agreed${metadata.strategy ? ` (${metadata.strategy})` : ''}`
    : `${share} agreement`;
}

export function facts(pairs) {
  const dl = h('dl', { class: 'facts' });
  for (const [term, value] of pairs) {
    if (value === null || value === undefined || value === '') continue;
    add(dl, h('dt', {}, term), h('dd', {}, value));
  }
  return dl;
}

/** The facts a reviewer weighs about a result: who made it, how sure, what it cost. */
export function resultFacts(result) {
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

export function pager(total, offset, limit, go) {
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
export const FAILED = Symbol('failed');

let uid = 0;
export function nextId(prefix) {
  uid += 1;
  return `${prefix}-${uid}`;
}

/** A labelled input for a field's value, matching its type. */
export function valueInput(spec, current) {
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

export function feedbackView(summary) {
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
