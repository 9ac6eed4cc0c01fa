// Model discovery with the official openai client's models.list(), unchanged.
// cmd/sluice/models_e2e_test.go starts the mock provider and Sluice,
// configures a gateway with an openai key and two tokens, and runs this
// file with:
//   SLUICE_URL               base of the gateway, e.g. http://127.0.0.1:PORT/v1/acme/prod
//   SLUICE_TOKEN             an unrestricted inference token of that gateway
//   SLUICE_RESTRICTED_TOKEN  a token allowed only openai/gpt-4o-mini
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const base = process.env.SLUICE_URL;
const token = process.env.SLUICE_TOKEN;
const restricted = process.env.SLUICE_RESTRICTED_TOKEN;
assert.ok(base && token && restricted, 'SLUICE_URL, SLUICE_TOKEN and SLUICE_RESTRICTED_TOKEN must be set');

const client = (path, apiKey) => new OpenAI({ baseURL: `${base}/${path}`, apiKey, maxRetries: 0 });

async function ids(c) {
  const out = [];
  for await (const m of c.models.list()) {
    assert.equal(m.object, 'model');
    assert.equal(typeof m.created, 'number');
    assert.equal(typeof m.owned_by, 'string');
    out.push(m.id);
  }
  return out;
}

test('models.list() on /compat lists routes and provider/model ids, sorted', async () => {
  const got = await ids(client('compat', token));
  assert.ok(got.includes('openai/gpt-4o-mini'), `got ${got}`);
  assert.ok(got.includes('smart'), `the route is listed: ${got}`);
  assert.deepEqual(got, [...got].sort());
});

test('models.list() on a provider path lists bare ids', async () => {
  const got = await ids(client('openai', token));
  assert.ok(got.includes('gpt-4o-mini'), `got ${got}`);
  assert.ok(got.every((id) => !id.startsWith('openai/')), `got ${got}`);
});

test('a restricted token sees only what it may use', async () => {
  assert.deepEqual(await ids(client('compat', restricted)), ['openai/gpt-4o-mini', 'smart']);
  assert.deepEqual(await ids(client('openai', restricted)), ['gpt-4o-mini']);
});

test('a bad token raises AuthenticationError', async () => {
  await assert.rejects(ids(client('compat', 'sk-sl-not-a-token')), OpenAI.AuthenticationError);
});
