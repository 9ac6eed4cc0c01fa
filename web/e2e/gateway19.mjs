// Browser steps of the gateway pages (issue 19, item 11), called from
// run.mjs once the Administrator's gateway prod has served traffic: the
// Activity tab with its figures and breaker states, a key test, a new
// token's base URL and snippets copied to the clipboard, and a key
// rotation after which inference (with that token, so that the e2e
// token's spend stays as Finance expects it) still succeeds.

import assert from 'node:assert/strict';

/**
 * gatewayPages runs the steps. h holds run.mjs's helpers and state:
 * page, context, BASE, step, shot, until, state ({ gatewayURL, tokenSecret }).
 */
export async function gatewayPages(h) {
  const { page, context, BASE, step, shot, until, state } = h;

  await step('Gateway pages: Activity is the first tab and shows figures and breaker states', async () => {
    await page.goto(state.gatewayURL);
    await page.getByRole('tab', { name: 'Activity', selected: true }).waitFor();
    const tabs = await page.getByRole('tablist', { name: 'Gateway sections' }).getByRole('tab').allTextContents();
    assert.equal(tabs[0], 'Activity', 'Activity comes first');
    await until('the gateway counts its requests', async () => {
      await page.getByRole('button', { name: 'Refresh' }).first().click();
      const v = Number(((await page.getByTestId('stat-requests').textContent()) ?? '0').replace(/,/g, ''));
      assert.ok(v >= 2, `requests ${v}`);
    });
    for (const label of ['Errors', 'Latency p50', 'Spend']) await page.getByRole('group', { name: label, exact: true }).waitFor();
    assert.match(await page.getByRole('group', { name: 'Errors', exact: true }).textContent(), /upstream failures · \d+ refusals/);
    await page.getByRole('table', { name: 'Top models' }).getByRole('cell', { name: 'gpt-4o-mini' }).first().waitFor();
    const breaker = page.locator('li[data-breaker="openai/mock"]');
    await breaker.getByText('closed').waitFor();
    // The old tab addresses still work.
    await page.goto(state.gatewayURL + '/settings');
    await page.getByRole('tab', { name: 'Settings', selected: true }).waitFor();
    await page.goto(state.gatewayURL);
    await page.getByTestId('stat-requests').waitFor();
    await shot('gateway-activity');
  });

  await step('Gateway pages: model pickers offer the keys’ and the catalog’s models, free entry kept', async () => {
    await page.getByRole('tab', { name: 'Routes' }).click();
    const model = page.getByLabel('Model of target 1');
    assert.equal(await model.getAttribute('list'), 'route-models-openai');
    // The options come from two queries (the keys, the catalog): wait until both have answered.
    await until('the route model picker offers the keys’ and the catalog’s models', async () => {
      const offered = await page.locator('datalist#route-models-openai option').evaluateAll((os) => os.map((o) => o.value));
      assert.ok(offered[0] === 'gpt-4o-mini' && offered.includes('gpt-4o'), `offered ${offered.slice(0, 5)}`);
    }, 10_000);
    assert.equal(await model.inputValue(), 'gpt-4o-mini@chunks=8@delay=150ms', 'a typed model stays');
    await page.getByRole('tab', { name: 'Provider keys' }).click();
    const add = page.getByRole('form', { name: 'Add a provider key' });
    await add.getByLabel('Add a catalog model').selectOption('gpt-4o');
    assert.equal(await add.getByLabel('Models').inputValue(), 'gpt-4o');
    await add.getByLabel('Models').fill('');
  });

  await step('Gateway pages: a key test makes one upstream call and answers ok', async () => {
    await page.getByRole('tab', { name: 'Provider keys' }).click();
    const row = page.locator('tr[data-key="openai/mock"]');
    await row.getByTestId('key-health').getByText('closed').waitFor();
    await row.getByRole('button', { name: 'Test openai/mock' }).click();
    await row.getByTestId('key-test').filter({ hasText: /^Test ok: gpt-4o-mini answered in / }).waitFor();
    await shot('gateway-key-test');
  });

  await step('Gateway pages: a new token shows the full base URL and snippets, copied to the clipboard', async () => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE });
    await page.getByRole('tab', { name: 'Tokens' }).click();
    await page.getByLabel('Token name').fill('sdk');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = (await page.getByTestId('new-secret').textContent()).trim();
    state.sdkSecret = secret;
    const base = `${BASE}/v1/acme/prod`;
    const connect = page.getByRole('region', { name: 'Connect with the new token' });
    assert.equal((await connect.getByTestId('connect-base-url').textContent()).trim(), base);
    await connect.getByRole('button', { name: 'Copy base URL' }).click();
    await connect.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), base);
    await connect.getByRole('button', { name: 'Copy Claude Code' }).click();
    const claude = await page.evaluate(() => navigator.clipboard.readText());
    assert.ok(claude.includes(`ANTHROPIC_BASE_URL=${base}/compat`) && claude.includes(`ANTHROPIC_AUTH_TOKEN=${secret}`), claude);
    await connect.getByRole('button', { name: 'Copy curl' }).click();
    const curl = await page.evaluate(() => navigator.clipboard.readText());
    assert.ok(curl.includes(`${base}/compat/chat/completions`) && curl.includes(secret), curl);
    for (const id of ['openai-js', 'openai-python', 'anthropic-js', 'anthropic-python']) {
      assert.ok((await connect.locator(`[data-snippet="${id}"] pre`).textContent()).includes(`${base}/compat`), id);
    }
    // The curl snippet runs as shown (the route of the gateway answers).
    const body = /-d '(.*)'$/m.exec(curl)[1];
    const res = await fetch(`${base}/compat/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body,
    });
    assert.equal(res.status, 200, await res.text());
    await shot('gateway-token-snippets');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    assert.equal(await page.getByText(secret).count(), 0, 'the secret and its snippets are gone once dismissed');
  });
  await step('Gateway pages: a key is rotated (new key, weight shifted, old retired) and inference still succeeds', async () => {
    await page.getByRole('tab', { name: 'Provider keys' }).click();
    await page.getByRole('button', { name: 'Rotate openai/mock' }).click();
    const panel = page.getByRole('region', { name: 'Rotate openai/mock' });
    assert.equal(await panel.getByLabel('New alias').inputValue(), 'mock-2');
    await panel.getByLabel('New API key').fill('sk-mock-upstream-key-0003');
    await panel.getByRole('button', { name: 'Add new key' }).click();
    await panel.getByText(/Added openai\/mock-2 \(…0003\)/).waitFor();
    await panel.getByLabel('Share of the new key (%)').fill('90');
    await panel.getByRole('button', { name: 'Shift weight' }).click();
    await panel.getByText('Weights set: new 90, old 10.').waitFor();
    await panel.getByRole('button', { name: 'Disable openai/mock' }).click();
    await panel.getByText('Rotation done: openai/mock is disabled.').waitFor();
    const old = page.locator('tr[data-key="openai/mock"]');
    await old.getByText('disabled').waitFor();
    await page.locator('tr[data-key="openai/mock-2"]').getByRole('cell', { name: '90', exact: true }).waitFor();
    await shot('gateway-key-rotation');
    const res = await fetch(`${BASE}/v1/acme/prod/compat/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${state.sdkSecret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'after the rotation' }] }),
    });
    assert.equal(res.status, 200, await res.text());
    await page.locator('tr[data-key="openai/mock-2"]').getByRole('button', { name: 'Test openai/mock-2' }).click();
    await page.locator('tr[data-key="openai/mock-2"]').getByTestId('key-test').filter({ hasText: /^Test ok/ }).waitFor();
  });

}
