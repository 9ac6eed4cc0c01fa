// End-to-end test of Sluice's request limits with the official openai
// client, unchanged: an oversized request must reach the client as the
// 413 Sluice answers, not as a connection error (which the SDK retries).
// cmd/sluice/limits_e2e_test.go (TestOversizedBodyRealClients) starts Sluice and runs this file with:
//   SLUICE_URL    base of the gateway, e.g. http://127.0.0.1:PORT/v1/acme/prod
//   SLUICE_TOKEN  an inference token of that gateway
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const base = process.env.SLUICE_URL;
const token = process.env.SLUICE_TOKEN;
assert.ok(base && token, 'SLUICE_URL and SLUICE_TOKEN must be set');

const client = new OpenAI({ baseURL: `${base}/compat`, apiKey: token, maxRetries: 0 });

test('an 11 MiB request answers 413 body_too_large', async () => {
  const big = 'a'.repeat(11 << 20);
  await assert.rejects(
    client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: big }] }),
    (err) => {
      assert.ok(err instanceof OpenAI.APIError, `got ${err?.constructor?.name}: ${err?.message}`);
      assert.ok(!(err instanceof OpenAI.APIConnectionError), `a connection error: ${err.message}`);
      assert.equal(err.status, 413);
      assert.equal(err.code, 'body_too_large');
      return true;
    },
  );
});

test('the client is served again after the 413', async () => {
  const r = await client.chat.completions.create({
    model: 'openai/gpt-4o-mini',
    messages: [{ role: 'user', content: 'Say hello' }],
  });
  assert.match(r.choices[0].message.content, /Hello from mock/);
});
