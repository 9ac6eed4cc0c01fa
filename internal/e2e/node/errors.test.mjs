// The errors of every door of issue 14 with the official clients,
// unchanged: @anthropic-ai/sdk on /compat/v1/messages and
// /anthropic/v1/messages, openai's responses.create on /compat/responses
// and /openai/responses, openai's models.list on /compat/models. Each
// client keeps the SDK's default retries and counts the HTTP requests it
// sends, so a retried error would show. cmd/sluice/doors_errors_e2e_test.go
// (TestDoorErrorsEndToEnd) starts the mock and Sluice and runs this file with:
//   SLUICE_BASE          {sluice}/v1/acme, the tenant's inference base
//   SLUICE_TOKEN         a token of gateway prod
//   SLUICE_MEMBER_TOKEN  a Member's token; the Member is assigned to prod, not staging
//   SLUICE_TIGHT_TOKEN   a token of gateway tight, whose hard budget is spent
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

const base = process.env.SLUICE_BASE;
const token = process.env.SLUICE_TOKEN;
const memberToken = process.env.SLUICE_MEMBER_TOKEN;
const tightToken = process.env.SLUICE_TIGHT_TOKEN;
assert.ok(base && token && memberToken && tightToken, 'SLUICE_BASE, SLUICE_TOKEN, SLUICE_MEMBER_TOKEN and SLUICE_TIGHT_TOKEN must be set');

const doors = [
  { name: '/compat/v1/messages', SDK: Anthropic, path: 'compat', send: (c) => c.messages.create({ model: 'openai/gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }) },
  { name: '/anthropic/v1/messages', SDK: Anthropic, path: 'anthropic', send: (c) => c.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }) },
  { name: '/compat/responses', SDK: OpenAI, path: 'compat', send: (c) => c.responses.create({ model: 'openai/gpt-4o-mini', input: 'hi' }) },
  { name: '/openai/responses', SDK: OpenAI, path: 'openai', send: (c) => c.responses.create({ model: 'gpt-4o-mini', input: 'hi' }) },
  { name: '/compat/models', SDK: OpenAI, path: 'compat', models: true, send: async (c) => {
    const ids = [];
    for await (const m of c.models.list()) ids.push(m.id);
    return ids;
  } },
];

// client is door's SDK client for gateway gw with apiKey, keeping the
// SDK's default maxRetries, and the number of requests its fetch sent.
function client(door, gw, apiKey) {
  const sent = { n: 0 };
  const countingFetch = (...args) => {
    sent.n++;
    return fetch(...args);
  };
  const c = new door.SDK({ baseURL: `${base}/${gw}/${door.path}`, apiKey, fetch: countingFetch });
  return { c, sent };
}

// errorType is the error's type: Anthropic's error.type, or OpenAI's type.
function errorType(e) {
  return e.error?.error?.type ?? e.type;
}

// errorCode is the gateway's code: Anthropic's error.code, OpenAI's code.
function errorCode(e) {
  return e.error?.error?.code ?? e.code;
}

for (const door of doors) {
  const anthropic = door.SDK === Anthropic;

  test(`${door.name}: a bad token raises AuthenticationError (401), sent once`, async () => {
    const { c, sent } = client(door, 'prod', 'sk-sl-not-a-token');
    await assert.rejects(door.send(c), (e) => {
      assert.ok(e instanceof door.SDK.AuthenticationError, `${e?.constructor?.name}: ${e?.message}`);
      assert.equal(e.status, 401);
      if (anthropic) assert.equal(errorType(e), 'authentication_error');
      return true;
    });
    assert.equal(sent.n, 1);
  });

  test(`${door.name}: a Member on a gateway it is not assigned to raises PermissionDeniedError (403)`, async () => {
    const { c, sent } = client(door, 'staging', memberToken);
    await assert.rejects(door.send(c), (e) => {
      assert.ok(e instanceof door.SDK.PermissionDeniedError, `${e?.constructor?.name}: ${e?.message}`);
      assert.equal(e.status, 403);
      assert.equal(errorCode(e), 'gateway_not_assigned');
      if (anthropic) assert.equal(errorType(e), 'permission_error');
      return true;
    });
    assert.equal(sent.n, 1);
    // The same token is served on its own gateway.
    await door.send(client(door, 'prod', memberToken).c);
  });

  test(`${door.name}: an unknown gateway raises NotFoundError (404)`, async () => {
    const { c, sent } = client(door, 'nosuch', token);
    await assert.rejects(door.send(c), (e) => {
      assert.ok(e instanceof door.SDK.NotFoundError, `${e?.constructor?.name}: ${e?.message}`);
      assert.equal(e.status, 404);
      assert.equal(errorCode(e), 'not_found');
      if (anthropic) assert.equal(errorType(e), 'not_found_error');
      return true;
    });
    assert.equal(sent.n, 1);
  });

  if (door.models) {
    // Model listings count against no budget (CONTRACT §12).
    test(`${door.name}: a spent budget does not refuse the model list`, async () => {
      const ids = await door.send(client(door, 'tight', tightToken).c);
      assert.ok(ids.includes('openai/gpt-4o-mini'), `got ${ids}`);
    });
    continue;
  }

  test(`${door.name}: a spent budget raises RateLimitError (429) and is not retried`, async () => {
    const { c, sent } = client(door, 'tight', tightToken);
    assert.equal(c.maxRetries, 2, 'the SDK default');
    await assert.rejects(door.send(c), (e) => {
      assert.ok(e instanceof door.SDK.RateLimitError, `${e?.constructor?.name}: ${e?.message}`);
      assert.equal(e.status, 429);
      assert.equal(errorCode(e), 'budget_exceeded');
      if (anthropic) assert.equal(errorType(e), 'rate_limit_error');
      assert.equal(e.headers?.get('x-should-retry'), 'false');
      return true;
    });
    assert.equal(sent.n, 1, 'the client retried a budget refusal');
  });
}
