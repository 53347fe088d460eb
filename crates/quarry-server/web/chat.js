// The extraction chat (`#/chat`, `#/chat/{conversation_id}`): a schema and a text go to
// `POST /v1/chat`, the reply streams back as Server-Sent Events (`conversation`, `token`,
// `result`, `message`, `error`, `done`). When the agent cannot resolve a field it asks, and its
// question is an ordinary assistant message: the person answers in the same input, which then
// posts `{conversation_id, message}`. Every field of the result is shown with its value, whether
// it is valid, and its span highlighted in the text (code-point offsets, through spans.js).
// Past conversations come from `GET /v1/chat/conversations` and reopen with their messages and
// last result.

import { renderHighlighted, revealFirstMark } from './spans.js';
import { h, formatTime } from './dom.js';
import { errorBox, failureText } from './viewkit.js';

/** Schemas to start from: one JSON Schema and two in Quarry's YAML form, each with a sample. */
const EXAMPLES = [
  {
    id: 'invoice',
    label: 'Invoice (JSON Schema)',
    schema: JSON.stringify(
      {
        type: 'object',
        required: ['vendor', 'total'],
        properties: {
          vendor: { type: 'string', description: 'Who issued the invoice' },
          invoice_number: { type: 'string' },
          issued: { type: 'string', format: 'date' },
          total: { type: 'number', description: 'Amount due' },
          currency: { type: 'string', enum: ['USD', 'EUR', 'GBP'] },
        },
      },
      null,
      2,
    ),
    sample:
      'Invoice INV-2041 from Acme Supplies Ltd, issued 15 January 2024.\n' +
      '3 × safety helmets, 2 × hi-vis vests.\nTotal due: $1,200 (USD), payable within 30 days.',
  },
  {
    id: 'contact',
    label: 'Contact (YAML)',
    schema: [
      'name: contact',
      'fields:',
      '  name: {type: string, required: true}',
      '  email: email',
      '  phone: string',
      '  company: string',
      '  role: {type: string, description: Job title}',
    ].join('\n'),
    sample:
      'Hi, this is Mariana Souza, head of procurement at Oliveira & Filhos. ' +
      'You can reach me at mariana.souza@oliveira.example or +55 11 5555-0142.',
  },
  {
    id: 'meeting',
    label: 'Meeting (YAML)',
    schema: [
      'name: meeting',
      'fields:',
      '  topic: {type: string, required: true}',
      '  date: {type: date, required: true}',
      '  attendees: {type: list, items: string}',
      '  location: string',
    ].join('\n'),
    sample:
      'Quarterly planning with Ada Lovelace and Grace Hopper on 3 March 2025 in the Lisbon office. ' +
      'Topic: the roadmap for the data platform.',
  },
];

const TEXT_FILE = /\.(txt|md|markdown|csv|tsv|json|jsonl|ya?ml|xml|html?|log|eml)$/i;
const MAX_FILE_BYTES = 5 * 1024 * 1024;

export async function render(main, params, ctx) {
  const view = new ChatView(main, params, ctx);
  await view.start();
  return () => view.stop();
}

class ChatView {
  constructor(main, params, ctx) {
    this.main = main;
    this.ctx = ctx;
    this.conversationId = params.conversation_id || null;
    this.document = '';
    this.schemaText = '';
    this.result = null;
    this.focusField = null;
    this.streaming = false;
  }

  async start() {
    this.build();
    const loads = [this.loadConversations()];
    if (this.conversationId) loads.push(this.loadConversation());
    await Promise.all(loads);
    this.updateMode();
  }

  stop() {
    this.stopped = true;
  }

  // ---- layout ------------------------------------------------------------------------------

  build() {
    const { ctx } = this;
    this.list = h('ul', { class: 'chat-conversations', id: 'chat-conversations' });
    const aside = h(
      'aside',
      { class: 'chat-aside', 'aria-labelledby': 'chat-past-title' },
      h('h2', { id: 'chat-past-title' }, 'Conversations'),
      h('p', {}, h('a', { href: '#/chat', class: 'button secondary small', id: 'chat-new' }, 'New conversation')),
      this.list,
    );

    this.log = h('ol', {
      class: 'chat-log',
      id: 'chat-log',
      role: 'log',
      'aria-live': 'polite',
      'aria-label': 'Messages',
    });
    this.status = h('p', { class: 'chat-status', id: 'chat-status', role: 'status' });

    // Schema: an example to start from, or pasted text (JSON Schema or the YAML form).
    this.exampleSelect = h(
      'select',
      { id: 'chat-example', onchange: () => this.useExample() },
      h('option', { value: '' }, 'Choose an example…'),
      EXAMPLES.map((example) => h('option', { value: example.id }, example.label)),
    );
    this.schemaInput = h('textarea', {
      id: 'chat-schema',
      rows: 9,
      spellcheck: 'false',
      class: 'code',
      'aria-describedby': 'chat-schema-help',
    });
    this.sampleButton = h(
      'button',
      { type: 'button', class: 'button secondary small', id: 'chat-sample', onclick: () => this.useSample() },
      'Use the example’s sample text',
    );
    this.schemaFields = h(
      'fieldset',
      { class: 'chat-schema-fields', id: 'chat-schema-fields' },
      h('legend', {}, 'Schema'),
      h('div', { class: 'field-row' }, h('label', { for: 'chat-example' }, 'Start from an example'), this.exampleSelect),
      h('label', { for: 'chat-schema' }, 'Schema (JSON Schema, or Quarry’s YAML form)'),
      this.schemaInput,
      h(
        'p',
        { class: 'help', id: 'chat-schema-help' },
        'Paste a JSON Schema object, or YAML such as ',
        h('code', {}, 'fields: {name: {type: string, required: true}}'),
        '.',
      ),
    );
    this.fileInput = h('input', {
      type: 'file',
      id: 'chat-file',
      accept: '.txt,.md,.markdown,.csv,.tsv,.json,.jsonl,.yaml,.yml,.xml,.html,.log,.eml,text/*',
      onchange: () => this.readFile(),
    });
    this.fileRow = h(
      'div',
      { class: 'field-row chat-file-row', id: 'chat-file-row' },
      h('label', { for: 'chat-file' }, 'Or load a text file'),
      this.fileInput,
      this.sampleButton,
    );

    // The one chat input: the text to extract from first, then answers to the agent.
    this.messageLabel = h('label', { for: 'chat-message', id: 'chat-message-label' });
    this.message = h('textarea', {
      id: 'chat-message',
      rows: 6,
      'aria-describedby': 'chat-message-help',
      onkeydown: (event) => {
        if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
          event.preventDefault();
          this.form.requestSubmit();
        }
      },
    });
    this.sendButton = h('button', { type: 'submit', class: 'button primary', id: 'chat-send' }, 'Send');
    this.form = h(
      'form',
      { class: 'chat-form stack', id: 'chat-form', novalidate: true, onsubmit: (event) => this.submit(event) },
      this.schemaFields,
      this.messageLabel,
      this.message,
      this.fileRow,
      h('p', { class: 'help', id: 'chat-message-help' }, 'Ctrl+Enter sends.'),
      h('p', { class: 'form-error', id: 'chat-form-error', role: 'alert' }),
      h('div', { class: 'actions' }, this.sendButton),
    );
    this.formError = this.form.querySelector('#chat-form-error');

    this.schemaShown = h('details', { class: 'chat-schema-shown', id: 'chat-schema-shown', hidden: true });
    this.resultBox = h('section', {
      class: 'chat-result',
      id: 'chat-result',
      'aria-labelledby': 'chat-result-title',
      hidden: true,
    });

    const permission = ctx.can && !ctx.can('extraction:trigger')
      ? h('p', { class: 'notice-inline' }, 'Your key cannot start extractions (it lacks the extraction:trigger scope); you can read past conversations.')
      : null;

    this.main.append(h(
      'div',
      { class: 'chat-page' },
      h('h1', {}, 'Extraction chat'),
      h(
        'p',
        { class: 'lede' },
        'Give a schema and a text; the agent extracts each field, checks it against the schema and finds it in the text. When it cannot, it asks you.',
      ),
      permission,
      h(
        'div',
        { class: 'chat-layout' },
        aside,
        h(
          'section',
          { class: 'chat-main', 'aria-label': 'Conversation' },
          this.schemaShown,
          this.log,
          this.status,
          this.form,
          this.resultBox,
        ),
      ),
    ));
  }

  /** A new conversation shows the schema fields and asks for the text; an open one asks for the
   * reply in the same input. */
  updateMode() {
    const started = Boolean(this.conversationId);
    this.schemaFields.hidden = started;
    this.fileRow.hidden = started;
    this.messageLabel.textContent = started ? 'Your reply' : 'Text to extract from';
    this.message.placeholder = started ? 'Answer the question, or add what the agent missed…' : 'Paste the text here…';
    this.sendButton.textContent = started ? 'Send reply' : 'Extract';
    this.renderSchemaShown();
  }

  renderSchemaShown() {
    if (!this.conversationId || !this.schemaText) {
      this.schemaShown.hidden = true;
      return;
    }
    this.schemaShown.hidden = false;
    this.schemaShown.replaceChildren(
      h('summary', {}, 'Schema of this conversation'),
      h('pre', { class: 'code' }, this.schemaText),
    );
  }

  // ---- loading -----------------------------------------------------------------------------

  async loadConversations() {
    try {
      const found = await this.ctx.api('GET', '/v1/chat/conversations');
      const items = Array.isArray(found) ? found : (found && found.conversations) || [];
      this.renderConversations(items);
    } catch (error) {
      if (error.name === 'AbortError') return;
      this.list.replaceChildren(h('li', { class: 'muted' }, `Past conversations could not be listed: ${failureText(error)}`));
    }
  }

  renderConversations(items) {
    if (items.length === 0) {
      this.list.replaceChildren(h('li', { class: 'muted' }, 'None yet.'));
      return;
    }
    this.list.replaceChildren(
      ...items.map((item) =>
        h(
          'li',
          {},
          h(
            'a',
            {
              href: `#/chat/${encodeURIComponent(item.id)}`,
              'aria-current': item.id === this.conversationId ? 'page' : null,
            },
            h('span', { class: 'chat-conv-title' }, item.title || item.id),
            h('span', { class: `badge ${statusClass(item.status)}` }, statusText(item.status)),
            h('span', { class: 'muted small' }, formatTime(item.updated_at)),
          ),
        ),
      ),
    );
  }

  async loadConversation() {
    let found;
    try {
      found = await this.ctx.api('GET', `/v1/chat/conversations/${encodeURIComponent(this.conversationId)}`);
    } catch (error) {
      if (error.name === 'AbortError') throw error;
      this.log.append(h('li', { class: 'chat-message error' }, errorBox(error)));
      if (error.status === 404) this.conversationId = null;
      return;
    }
    this.document = found.document || '';
    this.schemaText = typeof found.schema === 'string' ? found.schema : JSON.stringify(found.schema, null, 2);
    const messages = Array.isArray(found.messages) ? found.messages : [];
    // The first user message is the text; show it folded like a new conversation does.
    const startsWithDocument = messages.length > 0 && messages[0].role === 'user' && messages[0].content === this.document;
    if (!startsWithDocument && this.document) {
      this.log.append(this.messageItem('user', this.document, { isDocument: true }));
    }
    messages.forEach((message, index) => {
      const isDocument = index === 0 && startsWithDocument;
      this.log.append(this.messageItem(message.role, message.content, { isDocument }));
    });
    if (found.result) {
      const status = found.result.status || (found.result.outcome && found.result.outcome.status) || found.status;
      this.showResult({ ...found.result, status });
    }
  }

  // ---- input -------------------------------------------------------------------------------

  useExample() {
    const example = EXAMPLES.find((item) => item.id === this.exampleSelect.value);
    if (!example) return;
    this.schemaInput.value = example.schema;
  }

  useSample() {
    const example = EXAMPLES.find((item) => item.id === this.exampleSelect.value) || EXAMPLES[0];
    if (!this.exampleSelect.value) {
      this.exampleSelect.value = example.id;
      this.schemaInput.value = example.schema;
    }
    this.message.value = example.sample;
    this.message.focus();
  }

  /** Text files are read here, in the browser; PDFs belong on the Documents page, which
   * extracts their text on the server. */
  async readFile() {
    const file = this.fileInput.files && this.fileInput.files[0];
    this.formError.textContent = '';
    if (!file) return;
    const looksText = (file.type && file.type.startsWith('text/')) || TEXT_FILE.test(file.name) || file.type === 'application/json';
    if (!looksText) {
      this.formError.textContent = `${file.name} is not a text file. Load plain text, Markdown, CSV or JSON here; upload PDFs on the Documents page.`;
      return;
    }
    if (file.size > MAX_FILE_BYTES) {
      this.formError.textContent = `${file.name} is larger than 5 MB; paste the part to extract from.`;
      return;
    }
    const text = await file.text();
    if (text.includes('\u0000')) {
      this.formError.textContent = `${file.name} holds binary data, not text.`;
      return;
    }
    this.message.value = text;
    this.status.textContent = `Loaded ${file.name} (${text.length.toLocaleString()} characters).`;
  }

  async submit(event) {
    event.preventDefault();
    if (this.streaming) return;
    this.formError.textContent = '';
    const text = this.message.value;
    if (!text.trim()) {
      this.formError.textContent = this.conversationId ? 'Write your reply first.' : 'Paste a text or load a file to extract from.';
      this.message.focus();
      return;
    }
    let body;
    if (this.conversationId) {
      body = { conversation_id: this.conversationId, message: text };
    } else {
      const schema = this.schemaInput.value.trim();
      if (!schema) {
        this.formError.textContent = 'Choose an example schema or paste one.';
        this.schemaInput.focus();
        return;
      }
      body = { message: text, schema };
      this.schemaText = schema;
      this.document = text;
    }
    const isDocument = !this.conversationId;
    this.log.append(this.messageItem('user', text, { isDocument }));
    await this.stream(body, text);
  }

  // ---- the reply stream --------------------------------------------------------------------

  async stream(body, sentText) {
    this.setStreaming(true);
    const tokens = h('pre', { class: 'chat-tokens', id: 'chat-tokens' });
    const content = h('div', { class: 'chat-content' }, h('span', { class: 'muted' }, 'Thinking…'));
    const reply = h(
      'li',
      { class: 'chat-message assistant streaming', 'aria-busy': 'true' },
      h('p', { class: 'chat-role' }, 'Agent'),
      content,
      tokens,
    );
    this.log.append(reply);
    reply.scrollIntoView({ block: 'nearest' });
    let answered = false;
    let failed = false;
    try {
      await this.ctx.streamSse('/v1/chat', body, (name, data) => {
        if (this.stopped) return;
        switch (name) {
          case 'conversation':
            this.started(data.conversation_id);
            break;
          case 'token':
            tokens.append(String(data.text ?? ''));
            tokens.scrollTop = tokens.scrollHeight;
            break;
          case 'result':
            this.showResult(data);
            break;
          case 'message':
            answered = true;
            content.replaceChildren(...paragraphs(data.content));
            break;
          case 'error':
            failed = true;
            content.replaceChildren(errorBox(data, modelHint(data)));
            break;
          default:
            break;
        }
      });
    } catch (error) {
      if (error.name === 'AbortError') return;
      failed = true;
      content.replaceChildren(errorBox(error, modelHint(error)));
      // Nothing was accepted: give the text back so it can be sent again.
      if (!this.conversationId) this.document = '';
    } finally {
      if (!this.stopped) {
        reply.classList.remove('streaming');
        reply.removeAttribute('aria-busy');
        if (tokens.textContent) {
          // The raw model output stays available, folded away under the agent's message.
          tokens.remove();
          reply.append(h('details', { class: 'chat-raw' }, h('summary', {}, 'Model output'), tokens));
        } else {
          tokens.remove();
        }
        if (!answered && !failed) content.replaceChildren(h('span', { class: 'muted' }, 'No answer.'));
        this.setStreaming(false);
        if (!failed) this.message.value = '';
        else if (!this.message.value) this.message.value = sentText;
        this.updateMode();
        this.message.focus({ preventScroll: true });
        // The list shows each conversation's status, which this turn may have changed.
        if (this.conversationId) this.loadConversations();
      }
    }
  }

  started(id) {
    if (!id || this.conversationId === id) return;
    this.conversationId = id;
    // The address follows the conversation without re-rendering the view mid-stream.
    history.replaceState(null, '', `#/chat/${encodeURIComponent(id)}`);
  }

  setStreaming(on) {
    this.streaming = on;
    this.sendButton.disabled = on;
    this.message.setAttribute('aria-busy', on ? 'true' : 'false');
    this.status.textContent = on ? 'The agent is working…' : '';
  }

  messageItem(role, content, { isDocument = false } = {}) {
    const who = role === 'user' ? 'You' : 'Agent';
    const body = isDocument
      ? h(
          'details',
          { class: 'chat-document' },
          h('summary', {}, `Text to extract from (${[...String(content)].length.toLocaleString()} characters)`),
          h('pre', {}, content),
        )
      : h('div', { class: 'chat-content' }, paragraphs(content));
    return h('li', { class: `chat-message ${role === 'user' ? 'user' : 'assistant'}` }, h('p', { class: 'chat-role' }, who), body);
  }

  // ---- the result --------------------------------------------------------------------------

  showResult(result) {
    this.result = result;
    const fields = Array.isArray(result.fields) ? result.fields : [];
    const complete = result.status === 'complete';
    const source = h('div', {
      class: 'doc-text chat-source',
      id: 'chat-source',
      tabindex: '0',
      role: 'region',
      'aria-label': 'The text, with the extracted values marked',
    });
    const rows = fields.map((field) => this.fieldRow(field, source));
    this.resultBox.hidden = false;
    this.resultBox.replaceChildren(
      h(
        'div',
        { class: 'chat-result-head' },
        h('h2', { id: 'chat-result-title' }, 'Result'),
        h('span', { class: `badge ${complete ? 'state-approved' : 'state-waiting_human'}`, id: 'chat-result-status' }, complete ? 'Complete' : 'Needs your answer'),
      ),
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'chat-fields responsive-table', id: 'chat-fields' },
          h('caption', { class: 'visually-hidden' }, 'Extracted fields'),
          h(
            'thead',
            {},
            h('tr', {}, ['Field', 'Value', 'Valid', 'Grounding', 'Confidence', 'In the text'].map((name) => h('th', { scope: 'col' }, name))),
          ),
          h('tbody', {}, rows),
        ),
      ),
      h('h3', {}, 'The text'),
      source,
      h('details', { class: 'chat-json' }, h('summary', {}, 'JSON'), h('pre', { class: 'code' }, JSON.stringify(result.value ?? null, null, 2))),
    );
    this.highlight(source, null);
  }

  fieldRow(field, source) {
    const problems = Array.isArray(field.problems) ? field.problems : [];
    const valid = problems.length === 0;
    const spans = Array.isArray(field.spans) ? field.spans : [];
    let where;
    if (spans.length) {
      where = h(
        'button',
        {
          type: 'button',
          class: 'button small secondary',
          dataset: { field: field.name },
          'aria-label': `Show ${field.name} in the text`,
          onclick: () => {
            this.highlight(source, field.name);
            revealFirstMark(source);
          },
        },
        spans.length === 1 ? 'Show' : `Show (${spans.length})`,
      );
    } else if (field.grounding === 'clarified') {
      where = h('span', { class: 'muted' }, 'from your reply');
    } else {
      where = h('span', { class: 'muted' }, '—');
    }
    return h(
      'tr',
      { dataset: { field: field.name }, class: valid ? 'field-valid' : 'field-invalid' },
      h('th', { scope: 'row' }, field.name),
      h('td', { class: 'chat-value', 'data-label': 'Value' }, showValue(field.value)),
      h(
        'td',
        { 'data-label': 'Valid' },
        valid
          ? h('span', { class: 'badge state-approved' }, 'valid')
          : [h('span', { class: 'badge state-rejected' }, problems.some((p) => p.kind === 'missing') ? 'missing' : 'invalid'),
             h('ul', { class: 'problems' }, problems.map((problem) => h('li', {}, problem.message)))],
      ),
      h('td', { 'data-label': 'Grounding' }, groundingText(field.grounding)),
      h('td', { 'data-label': 'Confidence' }, field.confidence ? h('span', { class: `badge conf-${field.confidence}` }, field.confidence) : ''),
      h('td', { 'data-label': 'In the text' }, where),
    );
  }

  /** Marks every field's spans in the text, the chosen field's as the focus. */
  highlight(source, focusField) {
    const fields = (this.result && Array.isArray(this.result.fields)) ? this.result.fields : [];
    const spans = [];
    for (const field of fields) {
      for (const span of field.spans || []) {
        spans.push({ start: span.start, end: span.end, label: field.name, focus: field.name === focusField });
      }
    }
    if (!this.document) {
      source.replaceChildren(h('p', { class: 'muted' }, 'The text of this conversation is not available.'));
      return;
    }
    renderHighlighted(source, this.document, spans);
  }
}

// ---- small pieces ----------------------------------------------------------------------------

function paragraphs(text) {
  return String(text ?? '')
    .split(/\n{2,}/)
    .map((part) => h('p', {}, part));
}

function showValue(value) {
  if (value === null || value === undefined) return h('span', { class: 'muted' }, 'null');
  if (typeof value === 'object') return h('code', {}, JSON.stringify(value));
  return String(value);
}

const GROUNDING = {
  exact: 'exact match',
  normalized: 'normalised match',
  clarified: 'from your reply',
  fuzzy: 'approximate match',
  exempt: 'not checked',
  empty: 'no value',
  not_found: 'not found',
};

function groundingText(status) {
  return GROUNDING[status] || status || '';
}

function statusClass(status) {
  if (status === 'complete') return 'state-approved';
  if (status === 'needs_clarification') return 'state-waiting_human';
  return `state-${status || 'unknown'}`;
}

function statusText(status) {
  if (status === 'complete') return 'complete';
  if (status === 'needs_clarification') return 'needs answer';
  return status || '';
}

/** What to do about a failure that only the server's operator can fix. */
function modelHint(error) {
  const code = error && (error.code || error.error);
  if (code === 'ModelNotConfigured') {
    return h(
      'p',
      { class: 'help', id: 'chat-no-model' },
      'This server has no model, so the chat cannot extract. Ask whoever runs it to start it with ',
      h('code', {}, 'quarry serve --model provider:model'),
      '. Everything else in Quarry works without one.',
    );
  }
  if (code === 'ModelError') {
    return h('p', { class: 'help' }, 'The model failed to answer. Send your message again, or try later.');
  }
  return null;
}
