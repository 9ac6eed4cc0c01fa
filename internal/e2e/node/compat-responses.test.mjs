// End-to-end test of Sluice's translated Responses door
// (/compat/responses) with the official openai client, unchanged: the
// client is pointed at {gateway}/compat by its base URL and reaches each
// provider of SLUICE_PROVIDERS, translated; the project's mock answers in
// each provider's own wire format. cmd/sluice/compat_responses_e2e_test.go
// starts the mock and Sluice, gives one gateway a key for each provider and
// runs this file with SLUICE_URL, SLUICE_TOKEN and SLUICE_PROVIDERS as
// messages.test.mjs reads them; p.vision and p.json say whether the
// provider takes images and JSON output (Bedrock's Converse has no JSON
// mode: the door refuses it, naming it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { responsesEchoTool as echoTool, answerFormat, responsesImage } from './fixtures.mjs';

const base = process.env.SLUICE_URL;
const token = process.env.SLUICE_TOKEN;
assert.ok(base && token && process.env.SLUICE_PROVIDERS, 'SLUICE_URL, SLUICE_TOKEN and SLUICE_PROVIDERS must be set');
const matrix = JSON.parse(process.env.SLUICE_PROVIDERS);
assert.ok(Array.isArray(matrix) && matrix.length > 0, 'SLUICE_PROVIDERS is an empty list');

const client = new OpenAI({ baseURL: `${base}/compat`, apiKey: token, maxRetries: 0 });

function assertUsage(u, what) {
  assert.ok(u, `${what}: no usage`);
  assert.ok(u.input_tokens > 0, `${what}: input_tokens ${u.input_tokens}`);
  assert.ok(u.output_tokens > 0, `${what}: output_tokens ${u.output_tokens}`);
  assert.equal(u.total_tokens, u.input_tokens + u.output_tokens, `${what}: total_tokens`);
}

for (const p of matrix) {
  const model = `${p.provider}/${p.chat}`;

  test(`${p.provider}: responses.create`, async () => {
    const { data, response } = await client.responses
      .create({ model, instructions: 'You are terse.', input: `Hello ${p.provider}`, max_output_tokens: 200, temperature: 0.5, metadata: { team: 'e2e' } })
      .withResponse();
    assert.equal(response.headers.get('x-sluice-provider'), p.provider);
    assert.equal(data.object, 'response');
    assert.equal(data.status, 'completed');
    assert.match(data.output_text, new RegExp(`Hello from mock: Hello ${p.provider}`));
    assert.deepEqual(data.metadata, { team: 'e2e' });
    assertUsage(data.usage, 'create');
  });

  test(`${p.provider}: responses.create streamed`, async () => {
    const stream = await client.responses.create({
      model,
      input: [{ role: 'user', content: [{ type: 'input_text', text: `Stream for ${p.provider} please` }] }],
      stream: true,
    });
    const types = [];
    let text = '';
    let final;
    let seq = -1;
    for await (const ev of stream) {
      assert.equal(ev.sequence_number, seq + 1, `sequence_number of ${ev.type}`);
      seq = ev.sequence_number;
      if (types.at(-1) !== ev.type) types.push(ev.type);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') final = ev.response;
    }
    assert.deepEqual(types, ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
      'response.output_text.delta', 'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    assert.match(text, new RegExp(`^Hello from mock: Stream for ${p.provider} please$`));
    assertUsage(final?.usage, 'stream');
  });

  test(`${p.provider}: the stream helper gives the final response`, async () => {
    const stream = client.responses.stream({ model, input: 'Say hi' });
    const final = await stream.finalResponse();
    assert.equal(final.status, 'completed');
    assert.equal(final.output[0].type, 'message');
    assert.match(final.output[0].content[0].text, /Hello from mock: Say hi/);
    assertUsage(final.usage, 'stream helper');
  });

  if (p.vision) {
    test(`${p.provider}: an input_image`, async () => {
      const r = await client.responses.create({
        model,
        input: [responsesImage],
      });
      assert.equal(r.status, 'completed');
      assert.match(r.output_text, /Hello from mock: What is in this picture/);
    });
  }

  if (p.json) {
    test(`${p.provider}: text.format json_schema, plain and streamed`, async () => {
      const r = await client.responses.create({ model, input: 'Answer in JSON', text: { format: answerFormat } });
      assert.equal(r.status, 'completed');
      // Every mock answers a JSON request with JSON: an object with a text.
      assert.match(JSON.parse(r.output_text).text, /Answer in JSON/);
      const streamed = await client.responses.stream({ model, input: 'Answer in JSON', text: { format: answerFormat } }).finalResponse();
      const message = streamed.output.find((it) => it.type === 'message');
      assert.match(JSON.parse(message?.content?.[0]?.text).text, /Answer in JSON/);
    });
  } else {
    test(`${p.provider}: text.format json_schema is refused, naming it`, async () => {
      await assert.rejects(client.responses.create({ model, input: 'Answer in JSON', text: { format: answerFormat } }),
        (e) => e instanceof OpenAI.BadRequestError && e.code === 'unsupported_feature' && /response_format/.test(e.message));
    });
  }

  if (p.tools) {
    test(`${p.provider}: function call round trip`, async () => {
      const input = [{ role: 'user', content: 'Please echo gateways' }];
      const first = await client.responses.create({ model, input, tools: [echoTool], tool_choice: 'required' });
      const calls = first.output.filter((it) => it.type === 'function_call');
      assert.equal(calls.length, 1, JSON.stringify(first.output));
      assert.equal(calls[0].name, 'echo');
      assert.ok(calls[0].call_id, 'the call has a call_id');
      assert.match(JSON.parse(calls[0].arguments).text, /Please echo gateways/);

      const second = await client.responses.create({
        model,
        tools: [echoTool],
        input: [...input, ...first.output, { type: 'function_call_output', call_id: calls[0].call_id, output: '{"echoed":"gateways"}' }],
      });
      assert.equal(second.status, 'completed');
      assert.match(second.output_text, /Hello from mock: Please echo gateways/);
      assertUsage(second.usage, 'function call round trip');
    });

    test(`${p.provider}: streamed function call`, async () => {
      const stream = client.responses.stream({ model, input: 'Stream an echo', tools: [echoTool], tool_choice: 'required' });
      const args = [];
      stream.on('response.function_call_arguments.delta', (ev) => args.push(ev.delta));
      const final = await stream.finalResponse();
      const calls = final.output.filter((it) => it.type === 'function_call');
      assert.equal(calls.length, 1, JSON.stringify(final.output));
      assert.equal(calls[0].name, 'echo');
      assert.equal(args.join(''), calls[0].arguments);
      assert.match(JSON.parse(calls[0].arguments).text, /Stream an echo/);
    });
  }
}

test('errors raise the SDK exceptions', async () => {
  const model = `${matrix[0].provider}/${matrix[0].chat}`;
  const params = { model, input: 'hi' };
  const bad = new OpenAI({ baseURL: `${base}/compat`, apiKey: 'sk-not-a-token', maxRetries: 0 });
  await assert.rejects(bad.responses.create(params), (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);
  await assert.rejects(client.responses.create({ ...params, model: `${model}@status=429` }),
    (e) => e instanceof OpenAI.RateLimitError && e.status === 429);
  await assert.rejects(client.responses.create({ ...params, model: 'nosuch-model' }),
    (e) => e instanceof OpenAI.BadRequestError && e.code === 'unknown_model');
  await assert.rejects(client.responses.create({ ...params, previous_response_id: 'resp_1' }),
    (e) => e instanceof OpenAI.BadRequestError && e.code === 'unsupported_feature' && e.param === 'previous_response_id');
  await assert.rejects(client.responses.create({ ...params, tools: [{ type: 'web_search' }] }),
    (e) => e instanceof OpenAI.BadRequestError && e.code === 'unsupported_feature' && e.param === 'tools[0].type');
});

test('a stream cut by the upstream raises an APIError', async () => {
  const stream = await client.responses.create({ model: `${matrix[0].provider}/${matrix[0].chat}@chunks=3@reset=1`, input: 'hi', stream: true });
  await assert.rejects(async () => {
    for await (const _ of stream) { /* drain */ }
  }, (err) => err instanceof OpenAI.APIError);
});
