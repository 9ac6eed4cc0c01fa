// End-to-end test of Sluice's translating adapters with the official openai
// client, unchanged: every provider is spoken to in the OpenAI schema, and
// the project's mock provider answers in that provider's own wire format.
// cmd/sluice/providers_e2e_test.go starts the mock and Sluice, gives one
// gateway a key for each provider (all pointing at the mock) and a token,
// and runs this file with:
//   SLUICE_URL        base of the gateway, e.g. http://127.0.0.1:PORT/v1/acme/prod
//   SLUICE_TOKEN      an inference token of that gateway
//   SLUICE_PROVIDERS  a JSON array of {provider, chat, embedding, tools,
//                     vision, json}: the provider id, its chat model, its
//                     embedding model ("" when it has none), whether its
//                     mock calls a tool when tool_choice forces one, and
//                     whether the adapter takes images and JSON mode.
// Each provider is exercised through its provider path
// ({base}/{provider}, the provider's own model ids) and through /compat
// ("provider/model").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { chatEchoTool as echoTool, pixelPNG } from './fixtures.mjs';

const base = process.env.SLUICE_URL;
const token = process.env.SLUICE_TOKEN;
assert.ok(base && token && process.env.SLUICE_PROVIDERS, 'SLUICE_URL, SLUICE_TOKEN and SLUICE_PROVIDERS must be set');
const matrix = JSON.parse(process.env.SLUICE_PROVIDERS);
assert.ok(Array.isArray(matrix) && matrix.length > 0, 'SLUICE_PROVIDERS is an empty list');

const client = (path) => new OpenAI({ baseURL: `${base}/${path}`, apiKey: token, maxRetries: 0 });
const compat = client('compat');

// The two ways to reach a provider: its own path and /compat.
const surfaces = (p) => [
  { name: `${p.provider} path`, client: client(p.provider), model: (m) => m },
  { name: '/compat', client: compat, model: (m) => `${p.provider}/${m}` },
];


// drain reads a stream, returning the assembled text and tool calls, the
// finish reason, the usage chunk and the number of content chunks.
async function drain(stream) {
  const out = { text: '', contentChunks: 0, finish: null, usage: null, calls: [], chunks: 0 };
  for await (const chunk of stream) {
    out.chunks++;
    if (chunk.usage) {
      assert.deepEqual(chunk.choices, [], 'the usage chunk has no choices');
      out.usage = chunk.usage;
      continue;
    }
    const choice = chunk.choices[0];
    assert.ok(choice, `a chunk without choices or usage: ${JSON.stringify(chunk)}`);
    const d = choice.delta ?? {};
    if (d.content) {
      out.text += d.content;
      out.contentChunks++;
    }
    for (const tc of d.tool_calls ?? []) {
      const c = (out.calls[tc.index] ??= { id: '', name: '', arguments: '' });
      if (tc.id) c.id = tc.id;
      if (tc.function?.name) c.name += tc.function.name;
      if (tc.function?.arguments) c.arguments += tc.function.arguments;
    }
    if (choice.finish_reason) out.finish = choice.finish_reason;
  }
  return out;
}

function assertUsage(u, what) {
  assert.ok(u, `${what}: no usage`);
  assert.ok(u.prompt_tokens > 0, `${what}: prompt_tokens ${u.prompt_tokens}`);
  assert.ok(u.completion_tokens > 0, `${what}: completion_tokens ${u.completion_tokens}`);
  assert.equal(u.total_tokens, u.prompt_tokens + u.completion_tokens, `${what}: total_tokens`);
}

for (const p of matrix) {
  for (const s of surfaces(p)) {
    const model = s.model(p.chat);

    test(`${p.provider} via ${s.name}: chat`, async () => {
      const { data, response } = await s.client.chat.completions
        .create({
          model,
          messages: [
            { role: 'system', content: 'You are terse.' },
            { role: 'user', content: `Hello ${p.provider}` },
          ],
          max_tokens: 200,
          temperature: 0.5,
          stop: ['END'],
        })
        .withResponse();
      assert.equal(response.headers.get('x-sluice-provider'), p.provider);
      assert.equal(data.object, 'chat.completion');
      assert.equal(data.choices.length, 1);
      const msg = data.choices[0].message;
      assert.equal(msg.role, 'assistant');
      assert.match(msg.content, new RegExp(`Hello from mock: Hello ${p.provider}`));
      assert.equal(data.choices[0].finish_reason, 'stop');
      assertUsage(data.usage, 'chat');
    });

    test(`${p.provider} via ${s.name}: streamed chat, with and without the usage chunk`, async () => {
      const messages = [{ role: 'user', content: `Stream for ${p.provider} please` }];
      const withUsage = await drain(
        await s.client.chat.completions.create({ model, messages, stream: true, stream_options: { include_usage: true } }),
      );
      assert.match(withUsage.text, new RegExp(`^Hello from mock: Stream for ${p.provider} please$`));
      assert.ok(withUsage.contentChunks >= 2, `${withUsage.contentChunks} content chunks`);
      assert.equal(withUsage.finish, 'stop');
      assertUsage(withUsage.usage, 'stream usage chunk');

      const without = await drain(await s.client.chat.completions.create({ model, messages, stream: true }));
      assert.equal(without.text, withUsage.text);
      assert.equal(without.finish, 'stop');
      assert.equal(without.usage, null, 'a usage chunk the client did not ask for');
    });

    if (p.vision) {
      test(`${p.provider} via ${s.name}: an image in a user message`, async () => {
        const r = await s.client.chat.completions.create({
          model,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What is in this picture' },
                { type: 'image_url', image_url: { url: `data:image/png;base64,${pixelPNG}` } },
              ],
            },
          ],
        });
        assert.match(r.choices[0].message.content, /Hello from mock: What is in this picture/);
      });
    }

    if (p.json) {
      test(`${p.provider} via ${s.name}: JSON mode`, async () => {
        const r = await s.client.chat.completions.create({
          model,
          messages: [{ role: 'user', content: 'Answer in JSON' }],
          response_format: { type: 'json_object' },
        });
        assert.equal(r.choices[0].finish_reason, 'stop');
        const content = r.choices[0].message.content;
        assert.ok(content, 'JSON mode answers content');
        // Every mock answers JSON mode with {"text":…} (Anthropic's JSON mode
        // is a forced tool whose input is the answer).
        assert.match(JSON.parse(content).text, /Answer in JSON/);
      });
    }

    if (p.tools) {
      test(`${p.provider} via ${s.name}: tool call round trip`, async () => {
        const user = { role: 'user', content: 'Please echo gateways' };
        const first = await s.client.chat.completions.create({
          model, messages: [user], tools: [echoTool], tool_choice: 'required',
        });
        const choice = first.choices[0];
        assert.equal(choice.finish_reason, 'tool_calls');
        assert.equal(choice.message.tool_calls?.length, 1, JSON.stringify(choice.message));
        const tc = choice.message.tool_calls[0];
        assert.equal(tc.type, 'function');
        assert.equal(tc.function.name, 'echo');
        assert.ok(tc.id, 'the tool call has an id');
        assert.match(JSON.parse(tc.function.arguments).text, /Please echo gateways/);

        const second = await s.client.chat.completions.create({
          model,
          messages: [user, choice.message, { role: 'tool', tool_call_id: tc.id, content: '{"echoed":"gateways"}' }],
          tools: [echoTool],
        });
        assert.equal(second.choices[0].finish_reason, 'stop');
        assert.match(second.choices[0].message.content, /Hello from mock: Please echo gateways/);
        assertUsage(second.usage, 'tool round trip');
      });

      test(`${p.provider} via ${s.name}: streamed tool call`, async () => {
        const out = await drain(
          await s.client.chat.completions.create({
            model,
            messages: [{ role: 'user', content: 'Stream an echo' }],
            tools: [echoTool],
            tool_choice: 'required',
            stream: true,
            stream_options: { include_usage: true },
          }),
        );
        assert.equal(out.finish, 'tool_calls');
        assert.equal(out.calls.length, 1, JSON.stringify(out.calls));
        assert.equal(out.calls[0].name, 'echo');
        assert.ok(out.calls[0].id, 'the streamed tool call has an id');
        assert.match(JSON.parse(out.calls[0].arguments).text, /Stream an echo/);
        assertUsage(out.usage, 'streamed tool call');
      });
    }

    if (p.embedding) {
      test(`${p.provider} via ${s.name}: embeddings`, async () => {
        const embModel = s.model(p.embedding);
        const { data: one, response } = await s.client.embeddings
          .create({ model: embModel, input: 'hello', encoding_format: 'float' })
          .withResponse();
        assert.equal(response.headers.get('x-sluice-provider'), p.provider);
        assert.equal(one.object, 'list');
        assert.equal(one.data.length, 1);
        const v = one.data[0].embedding;
        assert.ok(Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'number'), 'a float vector');

        const batch = await s.client.embeddings.create({ model: embModel, input: ['hello', 'world'], encoding_format: 'float' });
        assert.deepEqual(batch.data.map((d) => d.index), [0, 1]);
        assert.deepEqual(batch.data[0].embedding, v, 'equal inputs, equal vectors');
        assert.notDeepEqual(batch.data[1].embedding, v);

        // Without encoding_format the client asks for base64 and decodes it.
        const b64 = await s.client.embeddings.create({ model: embModel, input: 'hello' });
        assert.equal(b64.data[0].embedding.length, v.length);
        b64.data[0].embedding.forEach((x, i) => assert.ok(Math.abs(x - v[i]) < 1e-6, `base64 vector [${i}]`));
      });
    }
  }
}

// Features a provider cannot serve are a 400 that names the provider,
// before anything is sent upstream.
const refusals = [
  {
    name: 'embeddings on anthropic',
    call: (c, m) => c.embeddings.create({ model: m('claude-sonnet-4-5'), input: 'x', encoding_format: 'float' }),
    provider: 'anthropic',
    message: /anthropic does not support embeddings/,
  },
  {
    name: 'n: 2 on anthropic',
    call: (c, m) =>
      c.chat.completions.create({ model: m('claude-sonnet-4-5'), n: 2, messages: [{ role: 'user', content: 'x' }] }),
    provider: 'anthropic',
    message: /anthropic.*does not support n > 1/,
  },
  {
    name: 'response_format json_object on bedrock',
    call: (c, m) =>
      c.chat.completions.create({
        model: m('amazon.nova-lite-v1:0'),
        response_format: { type: 'json_object' },
        messages: [{ role: 'user', content: 'x' }],
      }),
    provider: 'bedrock',
    message: /bedrock does not support response_format/,
  },
  {
    name: 'a tool_choice naming a function on cohere',
    call: (c, m) =>
      c.chat.completions.create({
        model: m('command-a-03-2025'),
        tools: [echoTool],
        tool_choice: { type: 'function', function: { name: 'echo' } },
        messages: [{ role: 'user', content: 'x' }],
      }),
    provider: 'cohere',
    message: /cohere does not support a tool_choice naming a function/,
  },
];

for (const r of refusals) {
  if (!matrix.some((p) => p.provider === r.provider)) continue;
  for (const s of surfaces({ provider: r.provider })) {
    test(`${r.name} via ${s.name} is a BadRequestError naming the provider`, async () => {
      await assert.rejects(r.call(s.client, s.model), (err) => {
        assert.ok(err instanceof OpenAI.BadRequestError, `got ${err?.constructor?.name}: ${err?.message}`);
        assert.equal(err.status, 400);
        assert.match(err.message, r.message);
        return true;
      });
    });
  }
}
