// End-to-end test of the native Messages door (/anthropic/v1/messages)
// with the official @anthropic-ai/sdk client, unchanged, pointed at
// {gateway}/anthropic by its base URL: the body goes to Anthropic (the
// mock) as it came, and the answer comes back as Anthropic sent it.
// cmd/sluice/anthropic_native_e2e_test.go starts the mock and Sluice and
// runs this file with SLUICE_URL and SLUICE_TOKEN.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { messagesEchoTool as echoTool, answerTool, messagesImage, outputConfig } from './fixtures.mjs';

const base = process.env.SLUICE_URL;
const token = process.env.SLUICE_TOKEN;
assert.ok(base && token, 'SLUICE_URL and SLUICE_TOKEN must be set');

const client = new Anthropic({ baseURL: `${base}/anthropic`, apiKey: token, maxRetries: 0 });
const bearerClient = new Anthropic({ baseURL: `${base}/anthropic`, apiKey: null, authToken: token, maxRetries: 0 });

test('messages.create through /anthropic', async () => {
  const { data, response } = await client.messages
    .create({ model: 'claude-sonnet-4-5', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Say hello' }] })
    .withResponse();
  assert.equal(data.type, 'message');
  assert.match(data.content[0].text, /Hello from mock: Say hello/);
  assert.ok(data.usage.input_tokens > 0 && data.usage.output_tokens > 0);
  assert.equal(response.headers.get('x-sluice-provider'), 'anthropic');
});

test('messages.stream with a bearer token, event by event', async () => {
  const stream = bearerClient.messages.stream({
    model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Tell me about gateways' }],
  });
  const types = [];
  for await (const ev of stream) {
    if (types.at(-1) !== ev.type) types.push(ev.type);
  }
  const final = await stream.finalMessage();
  assert.equal(types[0], 'message_start');
  assert.equal(types.at(-1), 'message_stop');
  assert.match(final.content[0].text, /Hello from mock: Tell me about gateways/);
  assert.ok(final.usage.output_tokens > 0);
});

test('a tool call round trip, and a streamed tool call', async () => {
  const user = { role: 'user', content: 'Please echo gateways' };
  const first = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [user], tools: [echoTool] });
  assert.equal(first.stop_reason, 'tool_use');
  const call = first.content.find((b) => b.type === 'tool_use');
  assert.equal(call?.name, 'echo', JSON.stringify(first.content));
  assert.match(call.input.text, /Please echo gateways/);
  const second = await client.messages.create({
    model: 'claude-sonnet-4-5',
    max_tokens: 100,
    tools: [echoTool],
    messages: [user, { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'gateways' }] }],
  });
  assert.equal(second.stop_reason, 'end_turn');
  assert.match(second.content[0].text, /Hello from mock: Please echo gateways/);

  const streamed = await client.messages.stream({
    model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Stream an echo' }], tools: [echoTool],
  }).finalMessage();
  assert.equal(streamed.stop_reason, 'tool_use');
  assert.match(streamed.content.find((b) => b.type === 'tool_use')?.input?.text, /Stream an echo/);
});

test('an image block, and JSON output by a forced tool', async () => {
  const r = await client.messages.create({
    model: 'claude-sonnet-4-5',
    max_tokens: 100,
    messages: [messagesImage],
  });
  assert.match(r.content[0].text, /Hello from mock: What is in this picture/);
  const j = await client.messages.create({
    model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Answer in JSON' }],
    tools: [answerTool], tool_choice: { type: 'tool', name: answerTool.name },
  });
  assert.match(j.content.find((b) => b.type === 'tool_use' && b.name === answerTool.name)?.input?.text, /Answer in JSON/);
});

test('JSON output by output_config.format (structured outputs)', async () => {
  const r = await client.messages.create({
    model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Answer in JSON' }], output_config: outputConfig,
  });
  assert.match(JSON.parse(r.content[0].text).text, /Answer in JSON/);
});

test('messages.countTokens', async () => {
  const r = await client.messages.countTokens({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'count these words' }] });
  assert.equal(r.input_tokens, 3);
});

test('a bad token raises AuthenticationError', async () => {
  const bad = new Anthropic({ baseURL: `${base}/anthropic`, apiKey: 'sk-sl-not-a-token', maxRetries: 0 });
  await assert.rejects(bad.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    Anthropic.AuthenticationError);
});

test('an empty message list raises BadRequestError with the gateway code', async () => {
  await assert.rejects(client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [] }),
    (err) => err instanceof Anthropic.BadRequestError && err.error?.error?.type === 'invalid_request_error' && err.error?.error?.code === 'invalid_request');
});

test('a stream cut by the upstream raises an APIError', async () => {
  const stream = client.messages.stream({ model: 'claude-sonnet-4-5@reset=1', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
  await assert.rejects(stream.finalMessage(), (err) => err instanceof Anthropic.APIError && /broke off the stream/.test(err.message));
});
