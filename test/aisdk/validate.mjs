#!/usr/bin/env node
// Validates a Sova UI message stream with the AI SDK's own client code, so
// that "a real AI SDK client parses it" is checked, not assumed.
//
//   node validate.mjs [FILE|-]                       read a stream from a file or stdin
//   node validate.mjs --url URL --body JSON [--header 'Name: value']...
//                                                    POST like useChat does and read the answer
// Options:
//   --allow-error   error chunks are reported, not fatal
//   --timeout MS    give up after MS milliseconds (default 60000)
//
// Exit 0 and one JSON line on stdout on success; exit 1 with the reason on
// stderr on any problem; exit 2 on bad usage or an installed `ai` whose
// chunk schema no longer matches the field table below.

import { createReadStream, readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import {
  DefaultChatTransport,
  parseJsonEventStream,
  readUIMessageStream,
  uiMessageChunkSchema,
  asSchema,
} from 'ai';

const aiVersion = JSON.parse(
  readFileSync(new URL('./node_modules/ai/package.json', import.meta.url), 'utf8'),
).version;

// The fields each chunk type declares in the installed ai's
// uiMessageChunkSchema (src/ui-message-stream/ui-message-chunks.ts), each
// with a valid sample value. The schema's objects are loose (unknown fields
// pass), but earlier 5.x clients used strict objects, so any field outside
// this table is rejected here. ANY marks fields typed `unknown` there.
const ANY = Symbol('any');
const pm = { sova: { k: 'v' } };
const CHUNK_FIELDS = {
  'text-start': { id: 't', providerMetadata: pm },
  'text-delta': { id: 't', delta: 'd', providerMetadata: pm },
  'text-end': { id: 't', citations: [], providerMetadata: pm },
  error: { errorText: 'e' },
  'tool-input-start': {
    toolCallId: 'c', toolName: 'n', inputEncoding: 'json', providerExecuted: true,
    providerMetadata: pm, toolMetadata: {}, dynamic: true, title: 't',
  },
  'tool-input-delta': { toolCallId: 'c', inputTextDelta: 'd' },
  'tool-input-available': {
    toolCallId: 'c', toolName: 'n', input: ANY, providerExecuted: true,
    providerMetadata: pm, toolMetadata: {}, dynamic: true, title: 't',
  },
  'tool-input-error': {
    toolCallId: 'c', toolName: 'n', input: ANY, providerExecuted: true,
    providerMetadata: pm, toolMetadata: {}, dynamic: true, errorText: 'e', title: 't',
  },
  'tool-approval-request': {
    approvalId: 'a', toolCallId: 'c', approvalDescriptor: ANY, inputSchemaInput: ANY,
    reason: 'r', isAutomatic: true, signature: 's',
  },
  'tool-approval-response': {
    approvalId: 'a', approved: true, reason: 'r', providerExecuted: true, providerMetadata: pm,
  },
  'tool-output-available': {
    toolCallId: 'c', output: ANY, providerExecuted: true, providerMetadata: pm,
    toolMetadata: {}, dynamic: true, preliminary: true,
  },
  'tool-output-error': {
    toolCallId: 'c', errorText: 'e', providerExecuted: true, providerMetadata: pm,
    toolMetadata: {}, dynamic: true,
  },
  'tool-output-denied': { toolCallId: 'c' },
  'reasoning-start': { id: 'r', providerMetadata: pm },
  'reasoning-delta': { id: 'r', delta: 'd', providerMetadata: pm },
  'reasoning-end': { id: 'r', providerMetadata: pm },
  custom: { kind: 'k', providerMetadata: pm },
  'source-url': { sourceId: '1', url: 'https://example.com/', title: 't', providerMetadata: pm },
  'source-document': {
    sourceId: '1', mediaType: 'text/plain', title: 't', filename: 'f', providerMetadata: pm,
  },
  file: { url: 'data:,x', mediaType: 'text/plain', providerMetadata: pm },
  'reasoning-file': { url: 'data:,x', mediaType: 'text/plain', providerMetadata: pm },
  'steering-message': { id: 's', parts: [] },
  'data-*': { id: 'd', data: ANY, transient: true },
  'start-step': {},
  'finish-step': {},
  'reset-step': {},
  start: { messageId: 'm', messageMetadata: ANY },
  finish: { finishReason: 'stop', messageMetadata: ANY },
  abort: { reason: 'r' },
  'message-metadata': { messageMetadata: ANY },
};

function fieldsOf(type) {
  if (typeof type !== 'string') return undefined;
  return type.startsWith('data-') ? CHUNK_FIELDS['data-*'] : CHUNK_FIELDS[type];
}

function fail(msg, code = 1) {
  process.stderr.write(`validate: ${msg}\n`);
  process.exit(code);
}

// Checks the table against the installed schema: every sample passes, and
// every typed field is known to the schema (a wrong type there must fail;
// an unknown field of a loose object would pass). This catches a table that
// went stale when `ai` was upgraded.
async function selfCheck(schema) {
  const bad = 42; // wrong for every typed field in the table
  for (const [type, fields] of Object.entries(CHUNK_FIELDS)) {
    const sample = { type: type === 'data-*' ? 'data-x' : type };
    for (const [k, v] of Object.entries(fields)) sample[k] = v === ANY ? { any: 1 } : v;
    const ok = await schema.validate(sample);
    if (!ok.success) fail(`field table out of date for ai@${aiVersion}: sample ${type} rejected`, 2);
    for (const [k, v] of Object.entries(fields)) {
      if (v === ANY) continue;
      const r = await schema.validate({ ...sample, [k]: bad });
      if (r.success) fail(`field table out of date for ai@${aiVersion}: ${type}.${k} is not in the schema`, 2);
    }
  }
}

// describe shortens an error for people: for a chunk that failed the
// schema, the issues of the union member named by its type, not all 30.
function describe(e) {
  const issues = e?.cause?.issues;
  if (!Array.isArray(issues)) return e?.message ?? String(e);
  const value = JSON.stringify(e.value);
  const flat = [];
  for (const issue of issues) {
    if (issue.code === 'invalid_union' && Array.isArray(issue.errors)) {
      const branches = issue.errors.filter((b) => !b.some((i) => i.path?.[0] === 'type'));
      if (branches.length === 0) return `chunk ${value}: unknown chunk type ${JSON.stringify(e.value?.type)}`;
      for (const b of branches) flat.push(...b);
    } else flat.push(issue);
  }
  const text = [...new Set(flat.map((i) => `${(i.path ?? []).join('.') || '(chunk)'}: ${i.message}`))].join('; ');
  return `chunk ${value} does not match the schema: ${text}`;
}

function strictCheck(chunk) {
  const fields = fieldsOf(chunk.type);
  if (fields === undefined) throw new Error(`chunk ${JSON.stringify(chunk)}: unknown chunk type ${JSON.stringify(chunk.type)}`);
  for (const k of Object.keys(chunk)) {
    if (k !== 'type' && !(k in fields)) {
      throw new Error(`chunk ${JSON.stringify(chunk)}: field ${JSON.stringify(k)} is not declared for ${chunk.type} by ai@${aiVersion}'s schema`);
    }
  }
}

function parseArgs(argv) {
  const a = { headers: {}, allowError: false, timeout: 60000 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) fail(`${arg} needs a value`, 2);
      return argv[++i];
    };
    switch (arg) {
      case '--url': a.url = next(); break;
      case '--body': a.body = next(); break;
      case '--header': {
        const h = next();
        const c = h.indexOf(':');
        if (c < 1) fail(`bad --header ${JSON.stringify(h)}`, 2);
        a.headers[h.slice(0, c).trim()] = h.slice(c + 1).trim();
        break;
      }
      case '--allow-error': a.allowError = true; break;
      case '--timeout': a.timeout = Number(next()); break;
      case '-h': case '--help':
        process.stdout.write('usage: node validate.mjs [FILE|-] | --url URL --body JSON [--header "K: V"] [--allow-error] [--timeout MS]\n');
        process.exit(0);
      default:
        if (arg.startsWith('--')) fail(`unknown option ${arg}`, 2);
        if (a.file !== undefined) fail('only one input file', 2);
        a.file = arg;
    }
  }
  if (a.url === undefined && a.body !== undefined) fail('--body needs --url', 2);
  return a;
}

// Passes bytes through and remembers whether the stream ended with the
// `data: [DONE]` frame that Sova always sends last.
function doneTracker() {
  let tail = '';
  const decoder = new TextDecoder();
  const t = new TransformStream({
    transform(bytes, controller) {
      tail = (tail + decoder.decode(bytes, { stream: true })).slice(-64);
      controller.enqueue(bytes);
    },
  });
  return { stream: t, done: () => /data: \[DONE\]\s*$/.test(tail) };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const schema = asSchema(uiMessageChunkSchema);
  await selfCheck(schema);

  // A stream that stalls must fail, not hang a test run.
  setTimeout(() => fail(`no complete stream after ${args.timeout} ms`), args.timeout).unref();
  const signal = AbortSignal.timeout(args.timeout);
  const tracker = doneTracker();
  let chunks;
  if (args.url !== undefined) {
    let body;
    try {
      body = args.body === undefined ? {} : JSON.parse(args.body);
    } catch (e) {
      fail(`--body is not JSON: ${e.message}`, 2);
    }
    let headerProblem;
    // The same transport useChat uses; fetch is wrapped only to look at the
    // response headers and the raw bytes.
    const transport = new DefaultChatTransport({
      api: args.url,
      headers: args.headers,
      prepareSendMessagesRequest: () => ({ body }),
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (!res.ok) return res;
        const proto = res.headers.get('x-vercel-ai-ui-message-stream');
        const ctype = res.headers.get('content-type') ?? '';
        if (proto !== 'v1') headerProblem = `header x-vercel-ai-ui-message-stream is ${JSON.stringify(proto)}, want "v1"`;
        else if (!ctype.startsWith('text/event-stream')) headerProblem = `content-type is ${JSON.stringify(ctype)}, want text/event-stream`;
        return new Response(res.body.pipeThrough(tracker.stream), {
          status: res.status, statusText: res.statusText, headers: res.headers,
        });
      },
    });
    chunks = await transport.sendMessages({
      chatId: body.id ?? 'validate',
      messages: Array.isArray(body.messages) ? body.messages : [],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: signal,
    });
    if (headerProblem) fail(headerProblem);
  } else {
    const src = args.file === undefined || args.file === '-' ? process.stdin : createReadStream(args.file);
    const bytes = Readable.toWeb(src).pipeThrough(tracker.stream);
    // What DefaultChatTransport does with a response body.
    chunks = parseJsonEventStream({ stream: bytes, schema: uiMessageChunkSchema }).pipeThrough(
      new TransformStream({
        transform(r, controller) {
          if (!r.success) throw r.error;
          controller.enqueue(r.value);
        },
      }),
    );
  }

  const stats = { chunks: 0, errors: [], dataTypes: new Set(), finish: false, finishReason: undefined };
  const checked = chunks.pipeThrough(
    new TransformStream({
      transform(chunk, controller) {
        strictCheck(chunk);
        stats.chunks++;
        if (chunk.type.startsWith('data-')) stats.dataTypes.add(chunk.type);
        if (chunk.type === 'finish') {
          stats.finish = true;
          stats.finishReason = chunk.finishReason;
        }
        if (chunk.type === 'error') {
          stats.errors.push(chunk.errorText);
          // The reader turns an error chunk into a failure; with
          // --allow-error it is only reported, so it does not reach it.
          if (args.allowError) return;
        }
        controller.enqueue(chunk);
      },
    }),
  );

  // The reader reports schema failures, out-of-order chunks and error
  // chunks through onError and, with terminateOnError, fails the loop.
  let streamError;
  let message;
  try {
    for await (const m of readUIMessageStream({
      stream: checked,
      terminateOnError: true,
      onError: (e) => {
        streamError ??= e;
      },
    })) {
      message = m;
    }
  } catch (e) {
    streamError ??= e;
  }
  if (streamError) {
    const msg = streamError.message ?? String(streamError);
    if (stats.errors.includes(msg)) fail(`error chunk: ${msg}`);
    fail(`after ${stats.chunks} valid chunks: ${describe(streamError)}`);
  }
  if (!stats.finish) fail('the stream has no finish chunk');
  if (!tracker.done()) fail('the stream does not end with data: [DONE]');

  const parts = message?.parts ?? [];
  const text = parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
  const summary = {
    ai: aiVersion,
    chunks: stats.chunks,
    messageId: message?.id,
    textLength: [...text].length,
    text: text.length <= 200 ? text : undefined,
    sourceUrls: parts.filter((p) => p.type === 'source-url').length,
    dataTypes: [...stats.dataTypes].sort(),
    dataParts: parts.filter((p) => p.type.startsWith('data-')).length,
    tools: parts
      .filter((p) => p.type.startsWith('tool-') || p.type === 'dynamic-tool')
      .map((p) => ({ type: p.type, state: p.state, toolCallId: p.toolCallId })),
    finish: stats.finish,
    finishReason: stats.finishReason,
    metadata: message?.metadata,
    errors: stats.errors,
  };
  process.stdout.write(JSON.stringify(summary) + '\n');
}

main().catch((e) => fail(e?.message ?? String(e)));
