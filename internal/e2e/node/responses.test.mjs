// End-to-end test of the native Responses door (/openai/responses) with
// the official openai client, unchanged. cmd/sluice/responses_e2e_test.go
// starts the mock provider and Sluice, configures a gateway with an openai
// key and a token, and runs this file with:
//   SLUICE_URL    base of the gateway, e.g. http://127.0.0.1:PORT/v1/acme/prod
//   SLUICE_TOKEN  an inference token of that gateway
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { responsesEchoTool as echoTool, answerFormat, responsesImage } from './fixtures.mjs';

const base = process.env.SLUICE_URL;
const token = process.env.SLUICE_TOKEN;
assert.ok(base && token, 'SLUICE_URL and SLUICE_TOKEN must be set');

const client = new OpenAI({ baseURL: `${base}/openai`, apiKey: token, maxRetries: 0 });

test('responses.create through /openai', async () => {
  const { data, response } = await client.responses
    .create({ model: 'gpt-4o-mini', instructions: 'Be brief.', input: 'Say hello' })
    .withResponse();
  assert.equal(data.object, 'response');
  assert.equal(data.status, 'completed');
  assert.match(data.output_text, /Hello from mock: Say hello/);
  assert.ok(data.usage.input_tokens > 0 && data.usage.output_tokens > 0);
  assert.equal(response.headers.get('x-sluice-provider'), 'openai');
});

test('responses.create streamed, event by event', async () => {
  const stream = await client.responses.create({
    model: 'gpt-4o-mini@chunks=5@delay=100ms',
    input: [{ role: 'user', content: 'Tell me about gateways' }],
    stream: true,
  });
  const types = [];
  const times = [];
  let text = '';
  let usage;
  for await (const ev of stream) {
    if (types.at(-1) !== ev.type) types.push(ev.type);
    if (ev.type === 'response.output_text.delta') {
      text += ev.delta;
      times.push(Date.now());
    }
    if (ev.type === 'response.completed') usage = ev.response.usage;
  }
  assert.equal(types[0], 'response.created');
  assert.equal(types.at(-1), 'response.completed');
  assert.match(text, /Hello from mock: Tell me about gateways/);
  assert.ok(usage && usage.output_tokens > 0, 'usage in response.completed');
  assert.ok(times.length >= 5, `got ${times.length} deltas`);
  // Paced by the mock at 100 ms: buffered to the end, they would arrive together.
  assert.ok(times.at(-1) - times[0] >= 300, `deltas spread over ${times.at(-1) - times[0]} ms`);
});

test('the stream helper gives the final response', async () => {
  const stream = client.responses.stream({ model: 'gpt-4o-mini', input: 'Say hi' });
  const final = await stream.finalResponse();
  assert.equal(final.status, 'completed');
  assert.match(final.output[0].content[0].text, /Hello from mock: Say hi/);
});

test('a function call round trip, and a streamed function call', async () => {
  const input = [{ role: 'user', content: 'Please echo gateways' }];
  const first = await client.responses.create({ model: 'gpt-4o-mini', input, tools: [echoTool], tool_choice: 'required' });
  const calls = first.output.filter((it) => it.type === 'function_call');
  assert.equal(calls.length, 1, JSON.stringify(first.output));
  assert.equal(calls[0].name, 'echo');
  assert.match(JSON.parse(calls[0].arguments).text, /Please echo gateways/);
  const second = await client.responses.create({
    model: 'gpt-4o-mini',
    tools: [echoTool],
    input: [...input, ...first.output, { type: 'function_call_output', call_id: calls[0].call_id, output: 'gateways' }],
  });
  assert.match(second.output_text, /Hello from mock: Please echo gateways/);

  const stream = client.responses.stream({ model: 'gpt-4o-mini', input: 'Stream an echo', tools: [echoTool], tool_choice: 'required' });
  const args = [];
  stream.on('response.function_call_arguments.delta', (ev) => args.push(ev.delta));
  const final = await stream.finalResponse();
  const call = final.output.find((it) => it.type === 'function_call');
  assert.equal(args.join(''), call?.arguments);
  assert.match(JSON.parse(call.arguments).text, /Stream an echo/);
});

test('an input_image, and text.format json_schema', async () => {
  const r = await client.responses.create({
    model: 'gpt-4o-mini',
    input: [responsesImage],
  });
  assert.match(r.output_text, /Hello from mock: What is in this picture/);
  const j = await client.responses.create({ model: 'gpt-4o-mini', input: 'Answer in JSON', text: { format: answerFormat } });
  assert.match(JSON.parse(j.output_text).text, /Answer in JSON/);
  const streamed = await client.responses.stream({ model: 'gpt-4o-mini', input: 'Answer in JSON', text: { format: answerFormat } }).finalResponse();
  // The stream helper's final response has no output_text helper field.
  assert.match(JSON.parse(streamed.output[0].content[0].text).text, /Answer in JSON/);
});

test('a bad token raises AuthenticationError', async () => {
  const bad = new OpenAI({ baseURL: `${base}/openai`, apiKey: 'sk-sl-not-a-token', maxRetries: 0 });
  await assert.rejects(bad.responses.create({ model: 'gpt-4o-mini', input: 'hi' }), OpenAI.AuthenticationError);
});

test('an upstream failure raises an APIError with the gateway code', async () => {
  await assert.rejects(
    client.responses.create({ model: 'gpt-4o-mini@status=400', input: 'hi' }),
    (err) => err instanceof OpenAI.BadRequestError && err.code === 'upstream_error',
  );
});

test('a stream cut by the upstream raises an APIError', async () => {
  const stream = await client.responses.create({ model: 'gpt-4o-mini@reset=1', input: 'hi', stream: true });
  await assert.rejects(async () => {
    for await (const _ of stream) { /* drain */ }
  }, (err) => err instanceof OpenAI.APIError && /broke off the stream/.test(err.message));
});
