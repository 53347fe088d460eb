// The one way pages talk to the server: JSON over `/v1` with the session cookie, the CSRF token
// on every mutation, and failures in the API's one error shape turned into `ApiFailure`.

/** A request that did not succeed: the HTTP status (0 when the server was not reached), the
 * API's error code (`NotFound`, `CsrfRejected`, …) and its message, meant for people. */
export class ApiFailure extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = 'ApiFailure';
    this.status = status;
    this.code = code;
  }
}

let csrfToken = null;
let unauthorizedHandler = null;

/** Set by the shell after sign-in (or a reloaded page's `GET /v1/session`). */
export function setCsrfToken(token) {
  csrfToken = token || null;
}

/** Called when a request answers 401 because the session ended (expired, signed out elsewhere,
 * key revoked), so the shell can return to the sign-in form. Not called for `/v1/session`. */
export function onUnauthorized(handler) {
  unauthorizedHandler = handler;
}

const MUTATIONS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function headersFor(method, extra) {
  const headers = { Accept: 'application/json', ...extra };
  if (MUTATIONS.has(method) && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  return headers;
}

async function failureFrom(response, path) {
  let code = 'HttpError';
  let message = `${response.status} ${response.statusText || ''}`.trim();
  try {
    const body = await response.json();
    if (body && typeof body.error === 'string') code = body.error;
    if (body && typeof body.message === 'string') message = body.message;
  } catch {
    // Not the API's JSON shape (a proxy's page, say): keep the status line.
  }
  if (response.status === 401 && !path.startsWith('/v1/session') && unauthorizedHandler) {
    unauthorizedHandler();
  }
  return new ApiFailure(response.status, code, message);
}

async function send(method, path, init) {
  try {
    return await fetch(path, { method, credentials: 'same-origin', ...init });
  } catch (error) {
    if (error && error.name === 'AbortError') throw error;
    throw new ApiFailure(0, 'NetworkError', 'The server could not be reached; check that quarry serve is running.');
  }
}

/**
 * `api(method, path, body?, options?)` → the parsed JSON answer (`null` for 204).
 * `body` is sent as JSON unless it is a Blob/File or string with `options.contentType`, which go
 * raw (uploads). `options.signal` aborts the request. Throws `ApiFailure` on any non-2xx answer.
 */
export async function api(method, path, body, options = {}) {
  method = method.toUpperCase();
  const init = { signal: options.signal };
  const extra = {};
  if (body !== undefined && body !== null) {
    if (body instanceof Blob || options.contentType) {
      extra['Content-Type'] = options.contentType || body.type || 'application/octet-stream';
      init.body = body;
    } else {
      extra['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
  }
  init.headers = headersFor(method, extra);
  const response = await send(method, path, init);
  if (!response.ok) throw await failureFrom(response, path);
  if (response.status === 204) return null;
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiFailure(response.status, 'MalformedResponse', 'The server answered with something that is not JSON.');
  }
}

/**
 * `streamSse(path, body, onEvent, options?)`: POSTs `body` as JSON and calls
 * `onEvent(event, data)` for every server-sent event as it arrives (`event` defaults to
 * `message`; `data` is the parsed JSON, or the raw text when it is not JSON). Resolves when the
 * stream ends; throws `ApiFailure` when the answer is not a 2xx. `options.signal` stops it.
 */
export async function streamSse(path, body, onEvent, options = {}) {
  const response = await send('POST', path, {
    signal: options.signal,
    headers: headersFor('POST', { 'Content-Type': 'application/json', Accept: 'text/event-stream' }),
    body: JSON.stringify(body ?? {}),
  });
  if (!response.ok) throw await failureFrom(response, path);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const parser = sseParser(onEvent);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parser.push(decoder.decode(value, { stream: true }));
  }
  parser.push(decoder.decode());
  parser.end();
}

/** An incremental parser of the `text/event-stream` format: `event:`, `data:` (several lines
 * joined by `\n`), comments (`:`) ignored; a blank line dispatches. Exported for tests. */
export function sseParser(onEvent) {
  let buffer = '';
  let eventName = '';
  let dataLines = [];
  const dispatch = () => {
    if (dataLines.length === 0 && !eventName) return;
    const raw = dataLines.join('\n');
    let data = raw;
    try {
      data = JSON.parse(raw);
    } catch {
      // Plain text data stays text.
    }
    const name = eventName || 'message';
    eventName = '';
    dataLines = [];
    onEvent(name, data);
  };
  const line = (text) => {
    if (text === '') return dispatch();
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') eventName = value;
    else if (field === 'data') dataLines.push(value);
  };
  return {
    push(chunk) {
      buffer += chunk;
      let at;
      while ((at = buffer.search(/\r\n|\r|\n/)) !== -1) {
        // A lone `\r` at the end of the buffer may be the first half of `\r\n`: wait for more.
        if (buffer[at] === '\r' && at === buffer.length - 1) break;
        const width = buffer.startsWith('\r\n', at) ? 2 : 1;
        line(buffer.slice(0, at));
        buffer = buffer.slice(at + width);
      }
    },
    end() {
      if (buffer) line(buffer);
      buffer = '';
      dispatch();
    },
  };
}
