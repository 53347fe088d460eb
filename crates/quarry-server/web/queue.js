// The review queue of a type: the pending results, worked through with the keyboard (next,
// previous, approve, reject with a reason, skip) or the visible buttons.

import { h, href, fill, isTyping } from './dom.js';
import {
  PAGE_SIZE,
  fieldLabel,
  typeName,
  plural,
  valueView,
  citedQuote,
  sourcesList,
  resultFacts,
  nextId,
} from './review-kit.js';

export async function render(main, params, ctx) {
  return queuePage(main, params, ctx);
}

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
