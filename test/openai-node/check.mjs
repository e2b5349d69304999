#!/usr/bin/env node
// Reads Sova's OpenAI-compatible endpoint with the official `openai` npm
// package, the way OpenAI's own clients do, through the sgr_agent flow of
// seed 002: a streamed request that ends with clarifying questions, the
// answers streamed back with the agent's id as the model (read with the
// SDK's stream helper, which rebuilds and checks every tool call), and a
// non-streamed request. The server's model is scripted by the caller.
//
//   node check.mjs --base-url http://127.0.0.1:8080/v1 \
//     --task "question that makes the agent ask" --answer "the answers" \
//     --simple "question the agent answers at once"
//
// Exit 0 and one JSON line on stdout on success; exit 1 with the reason on
// stderr when the SDK rejects something or the flow is not as seed 002
// describes; exit 2 on bad usage.

import { readFileSync } from 'node:fs';
import OpenAI from 'openai';

const sdkVersion = JSON.parse(
  readFileSync(new URL('./node_modules/openai/package.json', import.meta.url), 'utf8'),
).version;

function fail(msg, code = 1) {
  process.stderr.write(`openai-node check: ${msg}\n`);
  process.exit(code);
}

function parseArgs(argv) {
  const a = { timeout: 60000 };
  for (let i = 0; i < argv.length; i++) {
    const next = () => {
      if (i + 1 >= argv.length) fail(`${argv[i]} needs a value`, 2);
      return argv[++i];
    };
    switch (argv[i]) {
      case '--base-url': a.baseURL = next(); break;
      case '--task': a.task = next(); break;
      case '--answer': a.answer = next(); break;
      case '--simple': a.simple = next(); break;
      case '--timeout': a.timeout = Number(next()); break;
      default: fail(`unknown argument ${argv[i]}`, 2);
    }
  }
  for (const k of ['baseURL', 'task', 'answer', 'simple']) {
    if (!a[k]) fail(`--${k.replace('URL', '-url')} is required`, 2);
  }
  return a;
}

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

// readStream iterates a raw chunk stream and rebuilds the message as an
// OpenAI client would: tool calls by index, content concatenated.
async function readStream(stream) {
  const models = new Set();
  const calls = [];
  let content = '';
  let finish = null;
  let usage = null;
  for await (const chunk of stream) {
    check(chunk.object === 'chat.completion.chunk', `chunk object ${chunk.object}`);
    models.add(chunk.model);
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      const d = choice.delta ?? {};
      if (typeof d.content === 'string') content += d.content;
      for (const tc of d.tool_calls ?? []) {
        const c = (calls[tc.index] ??= { id: '', type: '', name: '', arguments: '' });
        if (tc.id) c.id = tc.id;
        if (tc.type) c.type = tc.type;
        if (tc.function?.name) c.name += tc.function.name;
        if (tc.function?.arguments) c.arguments += tc.function.arguments;
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  for (const [i, c] of calls.entries()) {
    check(c && c.id && c.type === 'function' && c.name, `tool call ${i} is incomplete: ${JSON.stringify(c)}`);
    JSON.parse(c.arguments); // arguments are a whole JSON object
  }
  return { models: [...models], tools: calls.map((c) => c.name), content, finish, usage };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  setTimeout(() => fail(`no result after ${args.timeout} ms`), args.timeout).unref();
  const client = new OpenAI({ baseURL: args.baseURL, apiKey: 'unused', maxRetries: 0 });
  const out = { openai: sdkVersion };

  // 1. A new agent, streamed: it asks and the stream ends with the questions.
  const { data: stream, response } = await client.chat.completions
    .create({
      model: 'sgr_agent',
      messages: [{ role: 'user', content: args.task }],
      stream: true,
      stream_options: { include_usage: true },
    })
    .withResponse();
  const first = await readStream(stream);
  const agentId = response.headers.get('x-agent-id');
  check(agentId, 'no X-Agent-ID header');
  check(first.models.length === 1 && first.models[0] === agentId,
    `chunks name ${JSON.stringify(first.models)}, the header ${agentId}: every chunk must carry the agent id`);
  check(first.finish === 'stop', `finish_reason ${first.finish}`);
  check(first.usage && first.usage.total_tokens > 0, 'no usage chunk');
  out.agentId = agentId;
  out.ask = { tools: first.tools, content: first.content, finish: first.finish };

  // 2. The answers, with the agent's id as the model, through the SDK's
  // stream helper: it rebuilds the completion and throws on a malformed
  // tool call.
  const runner = client.chat.completions.stream({
    model: agentId,
    messages: [{ role: 'user', content: args.answer }],
  });
  let deltas = 0;
  runner.on('content', () => deltas++);
  const done = await runner.finalChatCompletion();
  const msg = done.choices[0].message;
  check(done.model === agentId, `continuation model ${done.model}, want ${agentId}`);
  out.continue = {
    model: done.model,
    tools: (msg.tool_calls ?? []).map((c) => c.function.name),
    content: msg.content,
    finish: done.choices[0].finish_reason,
    contentDeltas: deltas,
  };

  // 3. A non-streamed request: the final answer as one completion.
  const { data: completion, response: r3 } = await client.chat.completions
    .create({ model: 'sgr_agent', messages: [{ role: 'user', content: args.simple }] })
    .withResponse();
  check(completion.object === 'chat.completion', `object ${completion.object}`);
  check(completion.model === r3.headers.get('x-agent-id'), 'non-streamed: model and X-Agent-ID differ');
  out.simple = {
    content: completion.choices[0].message.content,
    finish: completion.choices[0].finish_reason,
    totalTokens: completion.usage?.total_tokens,
  };

  // 4. An unknown model is the SDK's BadRequestError, listing valid models.
  try {
    await client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] });
    throw new Error('an unknown model was accepted');
  } catch (e) {
    check(e instanceof OpenAI.BadRequestError, `unknown model: ${e}`);
    out.unknownModel = { status: e.status, code: e.code, message: e.message };
  }

  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => fail(e?.stack ?? String(e)));
