// End-to-end test of the dashboard in real headless Chromium (Debian's
// /usr/bin/chromium driven by playwright-core; no browser is downloaded).
//
// It expects a running `sluice serve` with the built dashboard and a mock
// provider, and is started by cmd/sluice/dashboard_e2e_test.go with:
//   SLUICE_URL             base URL of sluice (http://127.0.0.1:port)
//   SLUICE_ADMIN_TOKEN     the bootstrap Administrator's token
//   SLUICE_ADMIN_PASSWORD  the password set for admin@localhost
//   MOCK_URL               base URL of the mock provider (without /v1)
//   E2E_ARTIFACTS          where screenshots go (default web/e2e/artifacts)
//   CHROMIUM               the browser (default /usr/bin/chromium)
// It exits non-zero on the first failed step, after a screenshot of it.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { a11yTour } from './a11y.mjs';
import { gatewayPages } from './gateway19.mjs';
import { charts19 } from './charts19.mjs';
import { logsExplorer } from './logs19.mjs';
import { money19 } from './money19.mjs';
import { namesAndLandings } from './names19.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const BASE = need('SLUICE_URL');
const ADMIN_TOKEN = need('SLUICE_ADMIN_TOKEN');
const ADMIN_PASSWORD = need('SLUICE_ADMIN_PASSWORD');
const MOCK_URL = need('MOCK_URL');
const ARTIFACTS = process.env.E2E_ARTIFACTS || join(here, 'artifacts');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const TIMEOUT = 15_000;

const MEMBER = { email: 'mia@acme.test', password: 'member-password-123' };
const FINANCE = { email: 'finn@acme.test', password: 'finance-password-123' };

function need(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`run.mjs: ${name} is not set`);
    process.exit(2);
  }
  return v;
}

mkdirSync(ARTIFACTS, { recursive: true });
const profile = mkdtempSync(join(tmpdir(), 'sluice-chromium-'));
// A fresh profile per run (Playwright passes it as --user-data-dir).
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
  viewport: { width: 1440, height: 900 },
  baseURL: BASE,
});
const browser = { close: () => context.close() };
context.setDefaultTimeout(TIMEOUT);
const page = context.pages()[0] ?? (await context.newPage());

// Every problem the page itself reports fails the run at the end: console
// errors (a CSP violation is one), uncaught exceptions, failed assets.
const problems = [];
page.on('console', (m) => {
  if (m.type() === 'error') problems.push(`console: ${m.text()}`);
});
page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
page.on('response', (r) => {
  if (r.url().includes('/ui/assets/') && r.status() >= 400) problems.push(`asset ${r.url()}: ${r.status()}`);
});
// Server calls, for the demo's "no admin endpoint" check.
const calls = [];
page.on('request', (r) => {
  const u = new URL(r.url());
  if (u.pathname.startsWith('/admin/') || u.pathname.startsWith('/v1/')) calls.push(`${r.method()} ${u.pathname}`);
});

let n = 0;
async function step(name, fn) {
  n++;
  const t0 = Date.now();
  try {
    await fn();
    console.log(`ok ${n} - ${name} (${Date.now() - t0} ms)`);
  } catch (err) {
    console.log(`not ok ${n} - ${name}`);
    await page.screenshot({ path: join(ARTIFACTS, `failed-${n}.png`), fullPage: true }).catch(() => {});
    console.error(err);
    await browser.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
    process.exit(1);
  }
}

const shot = (name) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: false });
const nav = (label) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label, exact: true }).click();
const navIds = () => page.locator('nav[aria-label="Main"] a').evaluateAll((as) => as.map((a) => a.dataset.nav));

/** until retries fn (which throws while not yet true) until it passes or the time is up. */
async function until(what, fn, ms = 30_000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try {
      return await fn();
    } catch (e) {
      last = e;
      await page.waitForTimeout(500);
    }
  }
  throw new Error(`${what}: not within ${ms} ms: ${last?.message ?? last}`);
}

async function signInWithPassword(email, password) {
  await page.goto('/');
  await page.getByRole('tab', { name: 'Email and password' }).click();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('whoami').filter({ hasText: email }).waitFor();
}

async function signOut() {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByText('You have signed out.').waitFor();
}

const state = {};

await step('the sign-in page loads under the strict CSP', async () => {
  const res = await page.goto('/');
  const csp = res.headers()['content-security-policy'];
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /frame-ancestors 'none'/);
  await page.getByRole('heading', { name: 'Sluice' }).waitFor();
  await shot('signin');
});

await step('a pasted token signs the Administrator in; sign-out returns to sign-in', async () => {
  await page.getByRole('tab', { name: 'Paste a token' }).click();
  await page.getByLabel('User token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('role').filter({ hasText: 'Administrator' }).waitFor();
  assert.deepEqual(await navIds(), ['overview', 'gateways', 'users', 'tenants', 'logs', 'spend', 'analytics', 'prices', 'playground', 'audit', 'client-errors', 'account']);
  const stored = await page.evaluate(() => [sessionStorage.getItem('sluice.session') !== null, localStorage.length]);
  assert.deepEqual(stored, [true, 0], 'the credential is in sessionStorage, nothing in localStorage');
  await signOut();
});

await step('a wrong password is refused with a clear message', async () => {
  await page.getByLabel('Email').fill('admin@localhost');
  await page.getByLabel('Password').fill('not-the-password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('The email or password is incorrect.').waitFor();
});

await step('email and password sign the Administrator in (a session)', async () => {
  await signInWithPassword('admin@localhost', ADMIN_PASSWORD);
  const kind = await page.evaluate(() => JSON.parse(sessionStorage.getItem('sluice.session')).kind);
  assert.equal(kind, 'session');
});

await step('Tenants: create tenant acme and set its budget', async () => {
  await nav('Tenants');
  await page.getByLabel('Tenant id').fill('acme');
  await page.getByLabel('Tenant name').fill('Acme Corp');
  await page.getByRole('button', { name: 'Create tenant' }).click();
  await page.getByText('Tenant acme created.').waitFor();
  await page.locator('tr[data-tenant="acme"]').waitFor();
  await shot('tenants');
  // Its budget and alert settings are on Manage.
  await page.locator('tr[data-tenant="acme"]').getByRole('button', { name: 'Manage' }).click();
  await page.getByText('No budget alert has been sent.').waitFor();
  await page.getByLabel('Alert webhook URL').waitFor();
  const form = page.getByRole('form', { name: 'Budget of tenant acme' });
  await form.getByLabel('Budget amount (USD)').fill('1000');
  await form.getByRole('button', { name: 'Set budget' }).click();
  await page.getByRole('meter', { name: 'Budget of tenant acme spent' }).waitFor();
  await page.locator('tr[data-tenant="acme"]').getByRole('button', { name: 'Close' }).click();
});

await step('Gateways: create gateway prod in acme', async () => {
  await nav('Gateways');
  await page.getByLabel('Tenant', { exact: true }).selectOption('acme');
  await page.getByText('This tenant has no gateway yet').waitFor();
  await page.getByLabel('Slug').fill('prod');
  await page.getByLabel('Name', { exact: true }).fill('Production');
  await page.getByRole('button', { name: 'Create gateway' }).click();
  await page.getByRole('heading', { name: 'Production' }).waitFor();
  state.gatewayURL = new URL(page.url()).pathname;
  assert.match(state.gatewayURL, /^\/ui\/gateways\/gw_[0-9a-z]+$/);
});

await step('Gateways: add a provider key pointing at the mock provider', async () => {
  await page.getByRole('tab', { name: 'Provider keys' }).click();
  await page.getByText('No provider key yet').waitFor();
  await page.getByLabel('Provider', { exact: true }).selectOption('openai');
  await page.getByLabel('Alias').fill('mock');
  await page.getByLabel('API key').fill('sk-mock-upstream-key-0001');
  await page.getByLabel('Base URL').fill(MOCK_URL + '/v1');
  await page.getByLabel('Models').fill('gpt-4o-mini, gpt-4o-mini@chunks=8@delay=150ms');
  await page.getByRole('button', { name: 'Add key' }).click();
  await page.getByText(/Added openai\/mock \(…0001\)/).waitFor();
  await page.getByRole('cell', { name: '…0001' }).waitFor();
  assert.equal(await page.getByText('sk-mock-upstream-key-0001').count(), 0, 'the key is never shown');
  // An Anthropic key, for the Playground's native Messages door.
  await page.getByLabel('Provider', { exact: true }).selectOption('anthropic');
  await page.getByLabel('Alias').fill('mock');
  await page.getByLabel('API key').fill('sk-mock-upstream-key-0002');
  await page.getByLabel('Base URL').fill(MOCK_URL);
  await page.getByLabel('Models').fill('claude-sonnet-4-5');
  await page.getByRole('button', { name: 'Add key' }).click();
  await page.getByText(/Added anthropic\/mock \(…0002\)/).waitFor();
  await page.getByRole('cell', { name: '…0002' }).waitFor();
  await shot('gateway-keys');
});

await step('Gateways: a route whose target streams slowly', async () => {
  await page.getByRole('tab', { name: 'Routes' }).click();
  await page.getByRole('button', { name: 'Add route' }).click();
  await page.getByLabel('Route name').fill('slow');
  await page.getByLabel('Provider of target 1').selectOption('openai');
  await page.getByLabel('Model of target 1').fill('gpt-4o-mini@chunks=8@delay=150ms');
  await page.getByRole('button', { name: 'Save routes' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
});

await step('Gateways: settings are saved and validated', async () => {
  await page.getByRole('tab', { name: 'Settings' }).click();
  await page.getByLabel('Max attempts').fill('11');
  await page.getByText('Max attempts must be between 1 and 10.').waitFor();
  await page.getByLabel('Max attempts').fill('3');
  await page.getByLabel('Requests per minute').fill('600');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
});

await step('Gateways: a content rule is created and disabled', async () => {
  await page.getByRole('tab', { name: 'Content rules' }).click();
  await page.getByLabel('Rule name').fill('No emails upstream');
  await page.getByLabel('Kind').selectOption('pii');
  await page.getByLabel('email', { exact: true }).check();
  await page.getByLabel('Direction').selectOption('request');
  await page.getByLabel('Action').selectOption('redact');
  await page.getByRole('button', { name: 'Create rule' }).click();
  await page.getByRole('cell', { name: 'No emails upstream', exact: true }).waitFor();
  await page.getByLabel('Rule No emails upstream enabled').click();
  await until('the rule shows as disabled', async () => assert.equal(await page.getByLabel('Rule No emails upstream enabled').isChecked(), false), 5000);
});

await step('Gateways: a token is created and its secret shown once', async () => {
  await page.getByRole('tab', { name: 'Tokens' }).click();
  await page.getByLabel('Token name').fill('e2e');
  await page.getByRole('button', { name: 'Create token' }).click();
  const secret = (await page.getByTestId('new-secret').textContent()).trim();
  assert.match(secret, /^sk-sl-[0-9A-Za-z]{40}$/);
  state.tokenSecret = secret;
  await page.locator('tr[data-token="e2e"]').waitFor();
  await shot('gateway-tokens');
  await page.getByRole('button', { name: 'I have copied it' }).click();
  assert.equal(await page.getByText(secret).count(), 0, 'the secret is gone once dismissed');
});

await step('Gateways: a token budget is set and shows as a bar; the token is used once', async () => {
  const row = page.locator('tr[data-token="e2e"]');
  await row.getByRole('button', { name: 'Budget' }).click();
  const form = page.getByRole('form', { name: 'Budget of token e2e' });
  await form.getByLabel('Budget amount (USD)').fill('25');
  await form.getByLabel('Period').selectOption('weekly');
  await form.getByRole('button', { name: 'Set budget' }).click();
  const meter = row.getByRole('meter', { name: 'Budget of token e2e spent' });
  await meter.waitFor();
  assert.match(await meter.getAttribute('aria-valuetext'), /^\$0\.00 of \$25\.00 spent \(0%\); Within budget; weekly, hard; resets /);
  await row.getByText(/^resets /).waitFor();
  // One request with the token, for Finance's spend per token below.
  const res = await fetch(`${BASE}/v1/acme/prod/compat/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${state.tokenSecret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'spend per token' }] }),
  });
  assert.equal(res.status, 200, await res.text());
  assert.ok(res.headers.get('x-sluice-budget-remaining-usd'), 'the answer says what is left of the budget');
  await shot('gateway-token-budget');
});

await step('Gateways: a monthly budget is set', async () => {
  await page.getByRole('tab', { name: 'Budget' }).click();
  await page.getByLabel('Budget amount (USD)').fill('100');
  await page.getByLabel('Period').selectOption('monthly');
  await page.getByRole('button', { name: 'Set budget' }).click();
  await page.getByText('$100.00 left').waitFor();
  await page.getByRole('tab', { name: 'Circuit breakers' }).click();
  await page.getByRole('cell', { name: 'closed' }).first().waitFor();
});

await step('Users: a Member with the gateway assigned, and a Finance user', async () => {
  await nav('Users');
  await page.getByLabel('Email').fill(MEMBER.email);
  await page.getByLabel('Name', { exact: true }).fill('Mia Member');
  await page.getByLabel('Role').selectOption('member');
  await page.getByLabel('Password').fill(MEMBER.password);
  await page.getByRole('button', { name: 'Create user' }).click();
  await page.getByRole('heading', { name: 'Mia Member' }).waitFor();
  await page.getByLabel('Gateway to assign').selectOption({ label: 'Production (prod)' });
  await page.getByRole('button', { name: 'Assign' }).click();
  await page.getByRole('button', { name: 'Unassign' }).waitFor();

  await nav('Users');
  await page.getByLabel('Email').fill(FINANCE.email);
  await page.getByLabel('Name', { exact: true }).fill('Finn Finance');
  await page.getByLabel('Role').selectOption('finance');
  await page.getByRole('button', { name: 'Create user' }).click();
  await page.getByText('A password is required.').or(page.getByText('The password is required.')).waitFor();
  await page.getByLabel('Password').fill(FINANCE.password);
  await page.getByRole('button', { name: 'Create user' }).click();
  await page.getByRole('heading', { name: 'Finn Finance' }).waitFor();
  await page.getByText('Finance users hold no API tokens').waitFor();
  await nav('Users');
  await page.getByRole('link', { name: MEMBER.email }).waitFor();
  await shot('users');
});

/** pickModel selects the playground model whose name is exactly label. */
const pickModel = (label) => page.getByRole('list', { name: 'Reachable models' }).getByRole('listitem').filter({ has: page.locator('strong', { hasText: new RegExp(`^${label.replace(/[/.]/g, '\\$&')}$`) }) }).first();

async function chat(modelLabel, text) {
  await pickModel(modelLabel).getByRole('button').click();
  await page.getByRole('heading', { name: new RegExp(modelLabel.replace(/[/.]/g, '\\$&')) }).waitFor();
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

await step('Playground: a streamed answer renders token by token', async () => {
  await nav('Playground');
  await until('the gateway serves the new key', async () => {
    await pickModel('slow').waitFor({ timeout: 2000 });
  });
  await chat('slow', 'Count slowly, please.');
  // Sample the answer while it streams: it must grow in several steps.
  const seen = new Set();
  const answer = page.getByTestId('answer').last().locator('p');
  const end = Date.now() + 10_000;
  while (Date.now() < end) {
    const t = (await answer.textContent()) ?? '';
    if (t && !t.startsWith('Waiting')) seen.add(t);
    if (await page.getByTestId('turn-facts').count()) break;
    await page.waitForTimeout(40);
  }
  assert.ok(seen.size >= 3, `the answer grew in ${seen.size} steps, want at least 3 (streamed)`);
  await page.getByTestId('turn-facts').last().getByText(/out tokens/).waitFor();
  await page.getByTestId('turn-facts').last().getByText('unpriced').waitFor();
});

await step('Playground: a priced answer shows tokens, cost, latency and its trace link', async () => {
  await page.getByLabel('Find a model').fill('gpt-4o-mini');
  await until('the search answers', async () => {
    await pickModel('openai/gpt-4o-mini').waitFor({ timeout: 2000 });
  });
  await chat('openai/gpt-4o-mini', 'Say hello to the dashboard test.');
  const facts = page.getByTestId('turn-facts').last();
  await facts.getByText(/out tokens/).waitFor();
  await facts.getByText(/^\$0\.0\d+$/).waitFor();
  await facts.getByText(/^total /).waitFor();
  const href = await facts.getByTestId('trace-link').getAttribute('href');
  assert.match(href, /^\/ui\/logs\/[0-9a-f-]{36}$/);
  state.logPath = href;
  state.requestId = href.split('/').pop();
  await shot('playground');
});

/** sendVia sends text through a Playground door (its label in the Door select), streamed or not, and returns the answer's request id. */
async function sendVia(modelLabel, door, stream, text) {
  await pickModel(modelLabel).getByRole('button').click();
  await page.getByRole('heading', { name: new RegExp(modelLabel.replace(/[/.]/g, '\\$&')) }).waitFor();
  await page.getByLabel('Door', { exact: true }).selectOption({ label: door });
  await page.getByLabel('Stream', { exact: true }).setChecked(stream);
  await page.getByLabel('Message', { exact: true }).fill(text);
  const before = await page.getByTestId('turn-facts').count();
  await page.getByRole('button', { name: 'Send' }).click();
  await until(`the answer through ${door}`, async () => assert.equal(await page.getByTestId('turn-facts').count(), before + 1), 15_000);
  const answer = page.getByTestId('answer').last();
  const facts = answer.getByTestId('turn-facts');
  assert.equal(await facts.getByRole('alert').count(), 0, `${door}: ${await facts.textContent()}`);
  assert.match((await answer.locator('p').first().textContent()) ?? '', new RegExp(`^Hello from mock: ${text}`));
  await facts.getByText(/\d+ in · \d+ out tokens/).waitFor();
  await facts.getByText(/^\$0\.0\d+$|^unpriced$/).waitFor();
  assert.equal((await facts.getByTestId('turn-door').textContent()).trim(), `${DOOR_OPS[door]} ${stream ? 'streamed' : 'not streamed'}`);
  return (await facts.getByTestId('request-id').textContent()).trim();
}

/** DOOR_OPS is the operation each Playground door's requests are logged with (CONTRACT §12). */
const DOOR_OPS = {
  'Chat Completions': 'chat',
  'Anthropic Messages': 'messages',
  'OpenAI Responses': 'responses',
  'Anthropic Messages, native': 'messages',
  'OpenAI Responses, native': 'responses',
};

await step('Playground: one request through each door, streamed and not, with usage, cost and request id', async () => {
  assert.deepEqual(
    await page.getByLabel('Door', { exact: true }).locator('option').allTextContents(),
    ['Chat Completions', 'Anthropic Messages', 'OpenAI Responses', 'OpenAI Responses, native'],
    'an OpenAI model offers the compat doors and the native Responses door',
  );
  await page.getByText('View code').click();
  await page.getByLabel('Door', { exact: true }).selectOption({ label: 'Anthropic Messages' });
  assert.match(await page.getByTestId('code-curl').textContent(), /\/v1\/acme\/prod\/compat\/v1\/messages/);
  assert.match(await page.getByTestId('code-sdk').textContent(), /Anthropic\(base_url="http:\/\/[^"]+\/v1\/acme\/prod\/compat"/);
  state.doorLogs = [
    { door: 'Chat Completions', id: state.requestId },
    { door: 'Anthropic Messages', id: await sendVia('openai/gpt-4o-mini', 'Anthropic Messages', false, 'via messages') },
    { door: 'Anthropic Messages', id: await sendVia('openai/gpt-4o-mini', 'Anthropic Messages', true, 'via messages streamed') },
    { door: 'OpenAI Responses', id: await sendVia('openai/gpt-4o-mini', 'OpenAI Responses', true, 'via responses streamed') },
    { door: 'OpenAI Responses, native', id: await sendVia('openai/gpt-4o-mini', 'OpenAI Responses, native', false, 'via native responses') },
  ];
  await page.getByLabel('Find a model').fill('claude');
  await until('the search answers', async () => {
    await pickModel('anthropic/claude-sonnet-4-5').waitFor({ timeout: 2000 });
  });
  await pickModel('anthropic/claude-sonnet-4-5').getByRole('button').click();
  assert.deepEqual(await page.getByLabel('Door', { exact: true }).locator('option').allTextContents(), ['Chat Completions', 'Anthropic Messages', 'OpenAI Responses', 'Anthropic Messages, native']);
  state.doorLogs.push(
    { door: 'Anthropic Messages, native', id: await sendVia('anthropic/claude-sonnet-4-5', 'Anthropic Messages, native', true, 'via native messages streamed') },
    { door: 'OpenAI Responses', id: await sendVia('anthropic/claude-sonnet-4-5', 'OpenAI Responses', false, 'via responses') },
  );
  await shot('playground-doors');
});

await step('Logs: each door’s request is listed and opens with its operation', async () => {
  for (const { door, id } of state.doorLogs) {
    await until(`the log of ${door} is recorded`, async () => {
      await page.goto(`/ui/logs/${id}`);
      await page.getByTestId('log-facts').waitFor({ timeout: 3000 });
    });
    assert.equal(await page.getByTestId('log-facts').locator('dt:text-is("Operation") + dd').textContent(), DOOR_OPS[door], `the log of ${door}`);
  }
  await nav('Logs');
  for (const { door, id } of state.doorLogs) {
    await page.locator(`tr[data-log="${id}"]`).waitFor();
    assert.equal(await page.locator(`tr[data-log="${id}"] td:nth-child(3)`).textContent(), DOOR_OPS[door], `the row of ${door}`);
  }
});

await step('Logs: the request opens with its bodies and its trace as a waterfall', async () => {
  await until('the log is recorded', async () => {
    await page.goto(state.logPath);
    await page.getByTestId('log-facts').waitFor({ timeout: 3000 });
  });
  await page.getByRole('heading', { name: 'Request body' }).waitFor();
  await page.getByText('Say hello to the dashboard test.').first().waitFor();
  await until('the trace is recorded', async () => {
    if ((await page.getByTestId('waterfall').count()) === 0) {
      await page.reload();
      await page.getByTestId('waterfall').waitFor({ timeout: 3000 });
    }
  });
  const rows = await page.getByTestId('waterfall').locator('.wf-bar').count();
  assert.ok(rows >= 1, `the waterfall has ${rows} spans`);
  await shot('log-trace');
});

await step('Logs: the table lists the request with its operation, also when filtered by model and operation', async () => {
  await nav('Logs');
  await page.locator(`tr[data-log="${state.requestId}"]`).waitFor();
  await page.getByLabel('Model').fill('gpt-4o-mini');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.locator(`tr[data-log="${state.requestId}"]`).waitFor();
  await page.getByRole('button', { name: 'More filters' }).click();
  await page.getByLabel('Operation').selectOption('chat');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.locator(`tr[data-log="${state.requestId}"]`).waitFor();
  assert.equal(await page.locator(`tr[data-log="${state.requestId}"] td code`).first().textContent(), 'chat');
  await page.getByLabel('Status', { exact: true }).fill('404');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.getByText('No requests match').waitFor();
  await page.getByRole('button', { name: 'Clear' }).click();
  await page.locator(`tr[data-log="${state.requestId}"]`).waitFor();
  await shot('logs');
});

await step('Overview: the requests appear in the figures and the charts', async () => {
  await nav('Overview');
  await until('the overview counts the requests', async () => {
    await page.getByRole('button', { name: 'Refresh' }).click();
    const v = Number(((await page.getByTestId('stat-requests').textContent()) ?? '0').replace(/,/g, ''));
    assert.ok(v >= 2, `requests ${v}`);
  });
  await page.locator('.chart canvas').first().waitFor();
  assert.ok((await page.locator('.chart canvas').count()) >= 2, 'two charts');
  await shot('overview');
});

await step('Spend, analytics, prices and audit log render for the Administrator', async () => {
  await nav('Spend');
  await page.getByRole('heading', { name: 'Spend of tenant acme' }).waitFor();
  await nav('Analytics');
  await page.getByLabel('Group by').waitFor();
  await page.getByRole('heading', { name: /^Tenant / }).waitFor();
  await nav('Model prices');
  await page.locator('#price-provider').selectOption('openai');
  await page.getByRole('cell', { name: 'gpt-4o-mini', exact: true }).first().waitFor();
  await nav('Audit log');
  await page.getByRole('cell', { name: 'gateway.create' }).first().waitFor();
  await shot('audit');
});

await gatewayPages({ page, context, BASE, step, shot, until, state });
await charts19({ page, step, until, shot, nav, base: BASE, adminToken: ADMIN_TOKEN, state });

await step('Member: only Overview, Playground and My account; logs are refused gracefully', async () => {
  await signOut();
  await signInWithPassword(MEMBER.email, MEMBER.password);
  assert.deepEqual(await navIds(), ['overview', 'playground', 'account']);
  await page.goto('/ui/logs');
  await page.getByRole('heading', { name: "You don't have access to request logs and traces" }).waitFor();
  await nav('Playground');
  await pickModel('openai/gpt-4o-mini').waitFor();
  await nav('My account');
  await page.getByText(MEMBER.email).first().waitFor();
  await shot('member');
});

await step('Finance: lands on Spend, finds spend per token for last week and exports it as CSV; its Overview counts the tenant; no logs', async () => {
  await signOut();
  await signInWithPassword(FINANCE.email, FINANCE.password);
  assert.deepEqual(await navIds(), ['overview', 'spend', 'prices', 'account']);
  await page.getByRole('heading', { name: 'Spend of tenant acme' }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/ui/spend', 'Finance lands on Spend');
  const byToken = page.locator('section[data-spend="spend-by-token"]');
  await until('the token appears in last week’s spend', async () => {
    await page.reload();
    await page.getByLabel('Range').selectOption('7d');
    await byToken.locator('tr[data-row="e2e"]').waitFor({ timeout: 2000 });
  });
  await byToken.locator('tr[data-row="e2e"]').getByRole('meter', { name: 'Budget of e2e spent' }).waitFor();
  const [download] = await Promise.all([page.waitForEvent('download'), byToken.getByRole('button', { name: 'Export CSV of spend by API token' }).click()]);
  assert.equal(download.suggestedFilename(), 'sluice-spend-acme-by-token.csv');
  const csv = readFileSync(await download.path(), 'utf8').split('\r\n');
  assert.match(csv[0], /^from,to,token_id,token_name,requests,cost_usd,unpriced_requests,budget_usd,budget_period/);
  assert.ok(
    csv.some((l) => /^[^,]+,[^,]+,tok_[^,]+,e2e,1,[0-9.e-]+,0,25,weekly,true,/.test(l)),
    `the e2e token's row with its budget:\n${csv.join('\n')}`,
  );
  await shot('finance-spend');
  await nav('Overview');
  await page.getByText('Requests of your tenant.').waitFor();
  const v = Number(((await page.getByTestId('stat-requests').textContent()) ?? '0').replace(/,/g, ''));
  assert.ok(v >= 2, `Finance's Overview counts the tenant's requests: ${v}`);
  await page.goto('/ui/logs');
  await page.getByRole('heading', { name: "You don't have access to request logs and traces" }).waitFor();
});

await logsExplorer({ page, step, BASE, ADMIN_TOKEN, MOCK_URL, state, nav, signInWithPassword, signOut, until, shot });
await money19({ page, step, nav, until, shot, signInWithPassword, signOut, pickModel, MEMBER, FINANCE, ADMIN_PASSWORD, state });

await namesAndLandings({ page, base: BASE, adminToken: ADMIN_TOKEN, adminPassword: ADMIN_PASSWORD, finance: FINANCE, state, step, signInWithPassword, signOut, nav, navIds, until, shot });

await step('an ended session (401) goes back to sign-in', async () => {
  await page.goto('/ui/overview');
  await page.evaluate(() => {
    const s = JSON.parse(sessionStorage.getItem('sluice.session'));
    s.token = 'sk-sl-' + 'x'.repeat(40);
    sessionStorage.setItem('sluice.session', JSON.stringify(s));
  });
  await page.reload();
  await page.getByText('Your session has ended').waitFor();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  // The 401 itself is logged by the browser as a failed resource; it is the point of this step.
  for (let i = problems.length - 1; i >= 0; i--) if (/status of 401/.test(problems[i])) problems.splice(i, 1);
});

await step('Demo: the read-only demo calls no admin endpoint at all', async () => {
  await page.goto('/');
  const before = calls.length;
  await page.getByRole('button', { name: 'Explore the read-only demo' }).click();
  await page.getByText('Read-only demo on sample data').waitFor();
  assert.deepEqual(await navIds(), ['overview', 'gateways', 'logs', 'spend', 'analytics', 'prices']);
  await page.getByTestId('stat-requests').waitFor();
  await page.locator('.chart canvas').first().waitFor();
  await shot('demo-overview');
  await nav('Gateways');
  await page.getByRole('link', { name: 'Production' }).click();
  for (const tab of ['Routes', 'Provider keys', 'Content rules', 'Tokens', 'Budget', 'Circuit breakers', 'Guardrails', 'Traces']) {
    await page.getByRole('tab', { name: tab }).click();
    await page.getByRole('tab', { name: tab, selected: true }).waitFor();
    if (tab === 'Tokens') assert.ok(await page.getByRole('button', { name: 'Create token' }).isDisabled(), 'writes are disabled in the demo');
  }
  await nav('Logs');
  await page.locator('tr[data-log] a').first().click();
  await page.getByTestId('waterfall').waitFor();
  await nav('Spend');
  await page.getByRole('heading', { name: /^Spend of tenant/ }).waitFor();
  await nav('Analytics');
  await page.getByRole('heading', { name: /^Tenant / }).waitFor();
  await nav('Model prices');
  await page.getByText('deprecated').first().waitFor();
  const made = calls.slice(before);
  assert.deepEqual(made, [], `the demo called: ${made.join(', ')}`);
  await signOut();
  assert.deepEqual(calls.slice(before), [], 'signing out of the demo calls nothing either');
});

await a11yTour({ page, step, until, base: BASE, adminToken: ADMIN_TOKEN, artifacts: ARTIFACTS, signIn: signInWithPassword, signOut, users: { administrator: { email: 'admin@localhost', password: ADMIN_PASSWORD }, member: MEMBER, finance: FINANCE } });

await step('no console errors, page errors or CSP violations', async () => {
  assert.deepEqual(problems, []);
});

await browser.close();
rmSync(profile, { recursive: true, force: true });
console.log(`# ${n} steps passed; screenshots in ${ARTIFACTS}`);
