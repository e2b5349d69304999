// Reader of the AI SDK UI message stream (protocol v1): Server-Sent Events
// whose data lines carry one JSON chunk each and end with `data: [DONE]`.
// It follows the SSE rules that matter for that stream: lines end in LF,
// CRLF or CR; an empty line dispatches the event; several data lines join
// with LF; lines starting with ':' are comments (keep-alives); the id field
// is kept, because it says where to resume a stream; event and retry are
// ignored; an event cut off before its blank line is dropped.

// sseEvents yields {data, id} for each event in a stream of text pieces,
// which may split lines and events anywhere. id is the last event ID seen
// so far (it carries over to later events, as in EventSource), '' if none.
export async function* sseEvents(pieces) {
  let buf = '';
  let data = null; // lines of the event being read; null when none
  let id = '';
  const out = [];
  // drain consumes the complete lines in buf. A CR at the very end may be
  // the first half of a CRLF, so it waits for more input unless final.
  const drain = (final) => {
    let start = 0;
    for (;;) {
      let end = -1;
      let next = -1;
      for (let i = start; i < buf.length; i++) {
        const c = buf.charCodeAt(i);
        if (c === 10) {
          end = i;
          next = i + 1;
          break;
        }
        if (c === 13) {
          if (i + 1 === buf.length && !final) break;
          end = i;
          next = buf.charCodeAt(i + 1) === 10 ? i + 2 : i + 1;
          break;
        }
      }
      if (end < 0) break;
      const line = buf.slice(start, end);
      start = next;
      if (line === '') {
        if (data !== null) out.push({ data: data.join('\n'), id });
        data = null;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') (data ??= []).push(value);
      else if (field === 'id' && !value.includes('\0')) id = value;
    }
    buf = buf.slice(start);
  };
  for await (const piece of pieces) {
    buf += piece;
    drain(false);
    yield* out.splice(0);
  }
  // An event without its closing blank line was cut off; as the SSE rules
  // say, it is not dispatched.
  drain(true);
  yield* out.splice(0);
}

// textPieces turns a byte stream into decoded text pieces.
export async function* textPieces(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let ended = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        ended = true;
        return;
      }
      yield value;
    }
  } finally {
    // A reader that stops early closes the connection rather than leave
    // the response body half read.
    if (!ended) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

// uiMessageChunks yields the parsed chunks of a UI message stream response
// body until `[DONE]`. A frame that is not JSON is reported as an error
// chunk rather than ending the stream, so one bad frame cannot hide the
// rest of an answer. cursor, when given, gets lastEventId (where a resumed
// stream should continue) and done (whether [DONE] arrived).
export async function* uiMessageChunks(body, cursor = {}) {
  for await (const { data, id } of sseEvents(textPieces(body))) {
    if (id) cursor.lastEventId = id;
    if (data === '[DONE]') {
      cursor.done = true;
      return;
    }
    let chunk;
    try {
      chunk = JSON.parse(data);
    } catch {
      yield { type: 'error', errorText: 'malformed stream frame: ' + data.slice(0, 200) };
      continue;
    }
    if (chunk && typeof chunk === 'object' && typeof chunk.type === 'string') yield chunk;
  }
}
