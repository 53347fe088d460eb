// The entity page: each field's value, state, confidence, agent, agreement, tokens and sources;
// approve, reject with a reason (the rerun followed until it lands), lock, set or answer a
// value, start and retry runs, and a field's history and feedback.

import { h, href, fill, add, formatTime } from './dom.js';
import {
  POLL_MS,
  POLL_LIMIT_MS,
  IN_FLIGHT,
  stateBadge,
  confidenceBadge,
  fieldLabel,
  typeName,
  plural,
  valueView,
  citedQuote,
  sourcesList,
  facts,
  resultFacts,
  parseTypedValue,
  FAILED,
  nextId,
  valueInput,
  feedbackView,
} from './review-kit.js';

export async function render(main, params, ctx) {
  return entityPage(main, params, ctx);
}

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
    drawRunPanel(fields, page.overview.missing_required || []);
    const focusedField = document.activeElement && document.activeElement.closest && document.activeElement.closest('[data-field]');
    const refocus = focusedField ? { field: focusedField.dataset.field, action: document.activeElement.dataset.action } : null;
    fill(fieldsBox, ...fields.map((field) => fieldCard(field, type)));
    if (refocus) {
      const card = fieldsBox.querySelector(`[data-field="${CSS.escape(refocus.field)}"]`);
      const again = card && (card.querySelector(`[data-action="${refocus.action}"]:not([disabled])`) || card.querySelector('h2'));
      if (again) again.focus({ preventScroll: true });
    }
  }

  function drawRunPanel(fields, missingRequired) {
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
      missingRequired.length
        ? h('p', { class: 'small missing-required', role: 'status' }, h('strong', {}, 'Required without a value: '),
          missingRequired.map((name) => fieldLabel((fields.find((f) => f.name === name) || {}).spec || {}, name)).join(', '),
          ' — a run cannot complete until they have one.')
        : null,
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
      h('p', {}, valueView(result ? result.value : entity().fields[field.name], 'value field-value', spec.display_type)),
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
          historyList(history, spec.display_type),
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

  function historyList(history, displayType) {
    if (!history.length) return h('p', { class: 'muted small' }, 'No values yet.');
    // Newest first: the reviewer reads what happened last.
    return h('ol', { class: 'plain-list history', reversed: true }, [...history].reverse().map((result) => h('li', {},
      h('div', { class: 'row' }, valueView(result.value, 'value', displayType), stateBadge(result.status), confidenceBadge(result.confidence)),
      h('p', { class: 'small muted' }, `${result.agent_id} · ${formatTime(result.created_at)}`,
        result.reviewed_by ? ` · reviewed by ${result.reviewed_by}` : ''),
      result.rejection_reason ? h('p', { class: 'small' }, h('strong', {}, 'Reason: '), result.rejection_reason) : null)));
  }

  await load();
  if (ctx.signal.aborted) return undefined;
  if (params.field) focusField(params.field, 'none');
  return () => clearTimeout(page.timer);
}
