// End-to-end test of Sluice's Anthropic Messages door
// (/compat/v1/messages) with the official @anthropic-ai/sdk client,
// unchanged: the client is pointed at {gateway}/compat by its base URL and
// reaches every provider, translated; the project's mock answers in each
// provider's own wire format. cmd/sluice/messages_e2e_test.go starts the
// mock and Sluice, gives one gateway a key for each provider and runs this
// file with SLUICE_URL, SLUICE_TOKEN and SLUICE_PROVIDERS as
// providers.test.mjs reads them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { messagesEchoTool as echoTool, answerTool, messagesImage, outputConfig } from './fixtures.mjs';

const base = process.env.SLUICE_URL;
const token = process.env.SLUICE_TOKEN;
assert.ok(base && token && process.env.SLUICE_PROVIDERS, 'SLUICE_URL, SLUICE_TOKEN and SLUICE_PROVIDERS must be set');
const matrix = JSON.parse(process.env.SLUICE_PROVIDERS);
assert.ok(Array.isArray(matrix) && matrix.length > 0, 'SLUICE_PROVIDERS is an empty list');

// apiKey is sent as x-api-key (Claude Code); authToken as a bearer token
// (current SDKs): both are accepted.
const client = new Anthropic({ baseURL: `${base}/compat`, apiKey: token, maxRetries: 0 });
const bearerClient = new Anthropic({ baseURL: `${base}/compat`, apiKey: null, authToken: token, maxRetries: 0 });

function assertUsage(u, what) {
  assert.ok(u, `${what}: no usage`);
  assert.ok(u.input_tokens > 0, `${what}: input_tokens ${u.input_tokens}`);
  assert.ok(u.output_tokens > 0, `${what}: output_tokens ${u.output_tokens}`);
}

for (const p of matrix) {
  const model = `${p.provider}/${p.chat}`;

  test(`${p.provider}: messages.create`, async () => {
    const { data, response } = await client.messages
      .create({
        model,
        max_tokens: 200,
        system: 'You are terse.',
        messages: [{ role: 'user', content: `Hello ${p.provider}` }],
        temperature: 0.5,
        stop_sequences: ['END'],
      })
      .withResponse();
    assert.equal(response.headers.get('x-sluice-provider'), p.provider);
    assert.equal(data.type, 'message');
    assert.equal(data.role, 'assistant');
    assert.equal(data.content.length, 1, JSON.stringify(data.content));
    assert.equal(data.content[0].type, 'text');
    assert.match(data.content[0].text, new RegExp(`Hello from mock: Hello ${p.provider}`));
    assert.equal(data.stop_reason, 'end_turn');
    assertUsage(data.usage, 'create');
  });

  test(`${p.provider}: messages.create streamed`, async () => {
    const stream = bearerClient.messages.stream({
      model,
      max_tokens: 200,
      messages: [{ role: 'user', content: [{ type: 'text', text: `Stream for ${p.provider} please` }] }],
    });
    const types = [];
    let startUsage = null;
    for await (const ev of stream) {
      if (types.at(-1) !== ev.type) types.push(ev.type);
      if (ev.type === 'message_start') startUsage = ev.message.usage;
    }
    assert.deepEqual(types, ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    assert.ok(startUsage?.input_tokens > 0, `message_start usage ${JSON.stringify(startUsage)}`);
    const msg = await stream.finalMessage();
    assert.match(msg.content[0].text, new RegExp(`^Hello from mock: Stream for ${p.provider} please$`));
    assert.equal(msg.stop_reason, 'end_turn');
    assertUsage(msg.usage, 'stream');
  });

  if (p.vision) {
    test(`${p.provider}: an image block`, async () => {
      const r = await client.messages.create({
        model,
        max_tokens: 200,
        messages: [messagesImage],
      });
      assert.equal(r.stop_reason, 'end_turn');
      assert.match(r.content[0].text, /Hello from mock: What is in this picture/);
    });
  }

  if (p.json) {
    test(`${p.provider}: JSON output by output_config.format, plain and streamed`, async () => {
      const params = { model, max_tokens: 200, messages: [{ role: 'user', content: 'Answer in JSON' }], output_config: outputConfig };
      const r = await client.messages.create(params);
      assert.equal(r.stop_reason, 'end_turn');
      assert.equal(r.content.length, 1, JSON.stringify(r.content));
      assert.match(JSON.parse(r.content[0].text).text, /Answer in JSON/);
      const streamed = await client.messages.stream(params).finalMessage();
      assert.match(JSON.parse(streamed.content[0].text).text, /Answer in JSON/);
    });
  } else {
    test(`${p.provider}: output_config.format is refused, naming it`, async () => {
      await assert.rejects(
        client.messages.create({ model, max_tokens: 200, messages: [{ role: 'user', content: 'Answer in JSON' }], output_config: outputConfig }),
        (e) => e instanceof Anthropic.BadRequestError && e.error?.error?.code === 'unsupported_feature' && /response_format/.test(e.message));
    });
  }

  if (p.tools) {
    test(`${p.provider}: JSON output by a forced tool`, async () => {
      // Cohere's v2 API cannot force a named tool: with one tool, any is the same.
      const choice = p.provider === 'cohere' ? { type: 'any' } : { type: 'tool', name: answerTool.name };
      const r = await client.messages.create({
        model, max_tokens: 200, messages: [{ role: 'user', content: 'Answer in JSON' }], tools: [answerTool], tool_choice: choice,
      });
      assert.equal(r.stop_reason, 'tool_use');
      const block = r.content.find((b) => b.type === 'tool_use');
      assert.equal(block?.name, answerTool.name, JSON.stringify(r.content));
      assert.equal(typeof block.input, 'object');
      assert.match(block.input.text, /Answer in JSON/);
    });

    test(`${p.provider}: tool call round trip`, async () => {
      const user = { role: 'user', content: 'Please echo gateways' };
      const first = await client.messages.create({
        model, max_tokens: 200, messages: [user], tools: [echoTool], tool_choice: { type: 'any' },
      });
      assert.equal(first.stop_reason, 'tool_use');
      const calls = first.content.filter((b) => b.type === 'tool_use');
      assert.equal(calls.length, 1, JSON.stringify(first.content));
      assert.equal(calls[0].name, 'echo');
      assert.ok(calls[0].id, 'the tool call has an id');
      assert.match(calls[0].input.text, /Please echo gateways/);

      const second = await client.messages.create({
        model,
        max_tokens: 200,
        tools: [echoTool],
        messages: [
          user,
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: calls[0].id, content: '{"echoed":"gateways"}' }] },
        ],
      });
      assert.equal(second.stop_reason, 'end_turn');
      assert.match(second.content[0].text, /Hello from mock: Please echo gateways/);
      assertUsage(second.usage, 'tool round trip');
    });

    test(`${p.provider}: streamed tool call`, async () => {
      const stream = client.messages.stream({
        model, max_tokens: 200, messages: [{ role: 'user', content: 'Stream an echo' }], tools: [echoTool], tool_choice: { type: 'any' },
      });
      const msg = await stream.finalMessage();
      assert.equal(msg.stop_reason, 'tool_use');
      const calls = msg.content.filter((b) => b.type === 'tool_use');
      assert.equal(calls.length, 1, JSON.stringify(msg.content));
      assert.equal(calls[0].name, 'echo');
      assert.match(calls[0].input.text, /Stream an echo/);
    });
  }
}

test('count_tokens is answered by the gateway', async () => {
  const r = await client.messages.countTokens({
    model: `${matrix[0].provider}/${matrix[0].chat}`,
    messages: [{ role: 'user', content: 'count these tokens please' }],
  });
  assert.ok(r.input_tokens > 0, JSON.stringify(r));
});

test('errors raise the SDK exceptions', async () => {
  const model = `${matrix[0].provider}/${matrix[0].chat}`;
  const params = { model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
  const bad = new Anthropic({ baseURL: `${base}/compat`, apiKey: 'sk-not-a-token', maxRetries: 0 });
  await assert.rejects(bad.messages.create(params), (e) => e instanceof Anthropic.AuthenticationError && e.status === 401 && e.error?.error?.type === 'authentication_error');
  const gone = new Anthropic({ baseURL: `${base}-nosuch/compat`, apiKey: token, maxRetries: 0 });
  await assert.rejects(gone.messages.create(params), (e) => e instanceof Anthropic.NotFoundError && e.status === 404 && e.error?.error?.type === 'not_found_error');
  await assert.rejects(client.messages.create({ ...params, model: `${model}@status=429` }),
    (e) => e instanceof Anthropic.RateLimitError && e.status === 429 && e.error?.error?.type === 'rate_limit_error');
  await assert.rejects(client.messages.create({ ...params, model: 'nosuch-model' }),
    (e) => e instanceof Anthropic.BadRequestError && e.error?.error?.code === 'unknown_model');
});
