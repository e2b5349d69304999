// Calls to Sova's HTTP API. Errors carry the server's message
// ({"error":{"message"}}) when it sent one.

export class APIError extends Error {
  constructor(status, message, code) {
    super(message);
    this.status = status;
    this.code = code || '';
  }
}

// errorFrom builds an APIError from a failed response.
export async function errorFrom(res) {
  let message = `${res.status} ${res.statusText}`.trim();
  let code = '';
  try {
    const body = await res.json();
    if (body && body.error) {
      if (typeof body.error === 'string') message = body.error;
      else {
        message = body.error.message || message;
        code = body.error.code || '';
      }
    }
  } catch {
    // not JSON: keep the status line
  }
  return new APIError(res.status, message, code);
}

async function call(method, path, body, init = {}) {
  const opts = { method, headers: { Accept: 'application/json' }, ...init };
  if (body instanceof FormData) opts.body = body;
  else if (body !== undefined) {
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(path, opts);
  if (!res.ok) throw await errorFrom(res);
  if (res.status === 204) return null;
  const type = res.headers.get('Content-Type') || '';
  return type.includes('json') ? res.json() : null;
}

export const api = {
  modes: () => call('GET', '/api/modes'),
  chats: (limit = 100) => call('GET', `/api/chats?limit=${limit}`),
  chat: (id) => call('GET', `/api/chats/${encodeURIComponent(id)}`),
  deleteChat: (id) => call('DELETE', `/api/chats/${encodeURIComponent(id)}`),
  renameChat: (id, title) => call('PATCH', `/api/chats/${encodeURIComponent(id)}`, { title }),

  // search starts a run and returns the streaming response.
  async search(body, signal) {
    const res = await fetch('/api/search', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal,
    });
    if (!res.ok) throw await errorFrom(res);
    return res;
  },

  // resume follows the latest run of a chat: the events after
  // lastEventId, then live ones. null when the chat has no run (204).
  async resume(chatId, lastEventId, signal) {
    const headers = { Accept: 'text/event-stream' };
    if (lastEventId) headers['Last-Event-ID'] = lastEventId;
    const res = await fetch(`/api/chats/${encodeURIComponent(chatId)}/stream`, { headers, signal });
    if (res.status === 204 || res.status === 404) return null;
    if (!res.ok) throw await errorFrom(res);
    return res;
  },
  cancelRun: (id) => call('POST', `/api/runs/${encodeURIComponent(id)}/cancel`),

  // Document spaces. These endpoints may be missing on a server that has
  // no spaces; probeSpaces answers null then.
  async probeSpaces() {
    const res = await fetch('/api/spaces', { headers: { Accept: 'application/json' } });
    if (res.status !== 200) return null;
    try {
      return listOf(await res.json(), 'spaces');
    } catch {
      return null;
    }
  },
  spaces: async () => listOf(await call('GET', '/api/spaces'), 'spaces'),
  createSpace: (name) => call('POST', '/api/spaces', { name }),
  deleteSpace: (id) => call('DELETE', `/api/spaces/${encodeURIComponent(id)}`),
  documents: async (id) => {
    const body = await call('GET', `/api/spaces/${encodeURIComponent(id)}/documents`);
    return listOf(body, 'documents');
  },
  upload(id, file) {
    const form = new FormData();
    form.append('file', file, file.name);
    return call('POST', `/api/spaces/${encodeURIComponent(id)}/documents`, form);
  },
  deleteDocument: (id, docID) => call('DELETE', `/api/spaces/${encodeURIComponent(id)}/documents/${encodeURIComponent(docID)}`),
};

// listOf accepts both a bare array and {key: [...]} / {data: [...]}.
export function listOf(body, key) {
  if (Array.isArray(body)) return body;
  if (body && Array.isArray(body[key])) return body[key];
  if (body && Array.isArray(body.data)) return body.data;
  return [];
}
