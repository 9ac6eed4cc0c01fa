// End-to-end test of Sluice's inference API with the official openai
// client, unchanged. internal/e2e/openai_test.go starts the mock provider
// and Sluice, configures a tenant, gateway, key and token through the admin
// API, and runs this file with:
//   SLUICE_URL    base of the gateway, e.g. http://127.0.0.1:PORT/v1/acme/prod
//   SLUICE_TOKEN  an inference token of that gateway
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const base = process.env.SLUICE_URL;
const token = process.env.SLUICE_TOKEN;
assert.ok(base && token, 'SLUICE_URL and SLUICE_TOKEN must be set');

const compat = new OpenAI({ baseURL: `${base}/compat`, apiKey: token, maxRetries: 0 });
const provider = new OpenAI({ baseURL: `${base}/openai`, apiKey: token, maxRetries: 0 });

test('chat through /compat', async () => {
  const r = await compat.chat.completions.create({
    model: 'openai/gpt-4o-mini',
    messages: [{ role: 'user', content: 'Say hello' }],
  });
  assert.match(r.choices[0].message.content, /Hello from mock/);
  assert.ok(r.usage.total_tokens > 0);
});

test('chat through the provider path', async () => {
  const { data, response } = await provider.chat.completions
    .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi there' }] })
    .withResponse();
  assert.match(data.choices[0].message.content, /Hello from mock/);
  assert.equal(response.headers.get('x-sluice-provider'), 'openai');
  assert.ok(response.headers.get('x-sluice-request-id'));
});

test('streamed chat arrives chunk by chunk', async () => {
  const stream = await compat.chat.completions.create({
    model: 'openai/gpt-4o-mini@chunks=6@delay=150ms',
    messages: [{ role: 'user', content: 'Tell me a story about gateways' }],
    stream: true,
  });
  const times = [];
  let text = '';
  for await (const chunk of stream) {
    const d = chunk.choices[0]?.delta?.content;
    if (d) {
      times.push(Date.now());
      text += d;
    }
  }
  assert.match(text, /Hello from mock/);
  assert.ok(times.length >= 6, `got ${times.length} content chunks`);
  // Paced by the mock at 150 ms: buffered to the end, they would arrive together.
  assert.ok(times.at(-1) - times[0] >= 500, `chunks spread over ${times.at(-1) - times[0]} ms`);
});

test('streamed chat through the provider path with usage', async () => {
  const stream = await provider.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'count the words here' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let usage = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
  }
  assert.ok(usage && usage.prompt_tokens > 0, 'usage chunk received');
});

test('legacy completions through /compat', async () => {
  const r = await compat.completions.create({ model: 'openai/gpt-3.5-turbo-instruct', prompt: 'Once upon a time' });
  assert.ok(r.choices[0].text.length > 0);
});

test('embeddings through /compat and the provider path', async () => {
  const a = await compat.embeddings.create({ model: 'openai/text-embedding-3-small', input: 'hello' });
  assert.equal(a.data.length, 1);
  assert.ok(a.data[0].embedding.length > 0);
  const b = await provider.embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'] });
  assert.equal(b.data.length, 2);
});

test('a bad token raises AuthenticationError', async () => {
  const bad = new OpenAI({ baseURL: `${base}/compat`, apiKey: 'sk-sl-notavalidtoken', maxRetries: 0 });
  await assert.rejects(
    bad.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
    (err) => err instanceof OpenAI.AuthenticationError && err.status === 401,
  );
});

test('an unknown model is a BadRequestError', async () => {
  await assert.rejects(
    compat.chat.completions.create({ model: 'no-such-route', messages: [{ role: 'user', content: 'x' }] }),
    (err) => err instanceof OpenAI.BadRequestError && err.code === 'unknown_model',
  );
});
