// The log explorer, end to end (issue 19, item 8): a Tenant Administrator
// finds a refused request by model and reads why in the side panel, and
// sorts the logs by latency. Called from run.mjs with its helpers.

import assert from 'node:assert/strict';

const TENANT_ADMIN = { email: 'tara@acme.test', password: 'tenant-admin-password-123' };

/**
 * logsExplorer runs the steps. The tenant acme, its gateway prod and the
 * API token state.tokenSecret exist (the gateway's page is state.gatewayURL,
 * its settings allow 3 attempts); any user may be signed in.
 */
export async function logsExplorer({ page, step, BASE, ADMIN_TOKEN, MOCK_URL, state, nav, signInWithPassword, signOut, until, shot }) {
  await step('Tenant Administrator: finds a refused request by model in Logs and reads why in the side panel', async () => {
    // A request the gateway refuses: no key of the gateway serves openai/gpt-4o.
    const res = await fetch(`${BASE}/v1/acme/prod/compat/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${state.tokenSecret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'refuse me' }] }),
    });
    const body = await res.json();
    assert.ok(res.status >= 400 && res.status < 500, `the refusal answered ${res.status}: ${JSON.stringify(body)}`);
    const told = body.error.message;
    const id = res.headers.get('x-sluice-request-id');
    assert.ok(told && id, 'the refusal carries a message and a request id');

    const created = await fetch(`${BASE}/admin/v1/tenants/acme/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: TENANT_ADMIN.email, name: 'Tara Admin', role: 'tenant_administrator', password: TENANT_ADMIN.password }),
    });
    assert.equal(created.status, 201, await created.text());
    await signOut();
    await signInWithPassword(TENANT_ADMIN.email, TENANT_ADMIN.password);
    await nav('Logs');
    await page.getByLabel('Status class').selectOption('errors');
    await page.getByLabel('Model').fill('openai/gpt-4o');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const row = page.locator(`tr[data-log="${id}"]`);
    // The log is written a moment after the answer; the filters live in the URL, so a reload keeps them.
    await until('the refused request is listed', async () => {
      if (!(await row.count())) await page.reload();
      await row.waitFor({ timeout: 2000 });
    });
    const url = new URL(page.url());
    assert.equal(url.searchParams.get('status_class'), 'errors', 'the filters are in the URL');
    assert.equal(url.searchParams.get('model'), 'openai/gpt-4o');
    assert.match(await page.getByTestId('log-count').textContent(), /^\d[\d,]* requests?$/);
    assert.equal(await page.locator('tr[data-log]').count(), Number((await page.getByTestId('log-count').textContent()).replace(/\D/g, '')), 'the count is of the filtered requests');
    assert.equal((await row.locator('td:nth-child(4) button').textContent()).trim(), 'openai/gpt-4o');

    // A click on the row opens the side panel with the error the client got; focus moves in.
    await row.locator('td:nth-child(5)').click();
    const panel = page.getByTestId('log-panel');
    await panel.waitFor();
    assert.ok(await panel.evaluate((el) => el.contains(document.activeElement)), 'focus is in the panel');
    await until('the panel shows the error message', async () => assert.equal((await panel.getByTestId('log-panel-error').textContent()).trim(), told));
    await panel.getByText('No provider was tried').waitFor();
    await panel.getByRole('link', { name: /full log/ }).waitFor();
    await shot('logs-panel');
    // Escape closes it and gives focus back to the row.
    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'detached' });
    assert.ok(await row.evaluate((el) => el.contains(document.activeElement)), 'focus is back on the row');
    // The filtered view survives a reload (a bookmark).
    await page.reload();
    await row.waitFor();
  });

  await step('Tenant Administrator: the side panel shows the retries of an upstream failure', async () => {
    // A key whose only model always answers 503: the gateway tries it three times.
    const gw = state.gatewayURL.split('/').pop();
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const added = await fetch(`${BASE}/admin/v1/gateways/${gw}/keys`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ provider: 'openai', alias: 'flaky', key: 'sk-mock-upstream-key-0503', base_url: MOCK_URL + '/v1', models: ['gpt-4o-mini@status=503'] }),
    });
    assert.equal(added.status, 201, await added.text());
    let id;
    await until('the gateway serves the flaky key', async () => {
      const res = await fetch(`${BASE}/v1/acme/prod/compat/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${state.tokenSecret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-4o-mini@status=503', messages: [{ role: 'user', content: 'fail thrice' }] }),
      });
      await res.text();
      assert.ok(res.status >= 500, `answered ${res.status}`);
      id = res.headers.get('x-sluice-request-id');
    });
    const removed = await fetch(`${BASE}/admin/v1/gateways/${gw}/keys/openai/flaky`, { method: 'DELETE', headers: admin });
    assert.equal(removed.status, 204, await removed.text());

    await page.goto('/ui/logs?status_class=5xx&model=' + encodeURIComponent('openai/gpt-4o-mini@status=503'));
    const row = page.locator(`tr[data-log="${id}"]`);
    await until('the failed request is listed', async () => {
      if (!(await row.count())) await page.reload();
      await row.waitFor({ timeout: 2000 });
    });
    await row.getByRole('button', { name: /in the side panel/ }).press('Enter');
    const panel = page.getByTestId('log-panel');
    await until('the panel lists the attempts', async () => assert.equal((await panel.getByTestId('attempt-summary').textContent()).trim(), '3 attempts: 2 retries'));
    assert.equal(await panel.locator('.attempts li').count(), 3);
    await shot('logs-panel-retries');
    await panel.getByRole('button', { name: 'Close' }).click();
    await panel.waitFor({ state: 'detached' });
  });

  await step('Tenant Administrator: sorts the logs by latency, both ways; no column is cut off at 1440 px', async () => {
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.locator('tr[data-log]').first().waitFor();
    const latencies = () => page.locator('td[data-latency-ms]').evaluateAll((tds) => tds.map((td) => Number(td.dataset.latencyMs)));
    const header = page.getByRole('columnheader', { name: /Latency/ });
    await header.getByRole('button').click();
    await until('the table is sorted slowest first', async () => {
      assert.equal(await header.getAttribute('aria-sort'), 'descending');
      const v = await latencies();
      assert.ok(v.length >= 2, `${v.length} rows`);
      assert.deepEqual(v, [...v].sort((a, b) => b - a));
    });
    assert.equal(new URL(page.url()).searchParams.get('sort'), 'latency');
    await header.getByRole('button').click();
    await until('the table is sorted fastest first', async () => {
      assert.equal(await header.getAttribute('aria-sort'), 'ascending');
      const v = await latencies();
      assert.deepEqual(v, [...v].sort((a, b) => a - b));
    });
    const cut = await page.locator('.log-explorer .table-scroll').evaluate((el) => el.scrollWidth - el.clientWidth);
    assert.ok(cut <= 0, `the log table scrolls sideways by ${cut} px at 1440 px`);
    await shot('logs-explorer');
  });
}
