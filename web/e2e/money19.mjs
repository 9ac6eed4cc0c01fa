// Browser steps of issue 19, items 10 and 12 (money shown honestly; account
// and Playground), run by run.mjs after Finance's first visit:
//   (c) the Administrator finds, on Model prices, the model the mock served
//       without a price, with an "Add price" that fills the form, and the log
//       reads "unpriced" for it; it sets the Member's rate limit;
//   (a) the Member sees that rate limit and the cost of what it used in the
//       Playground (the target that answered, priced from its log), views the
//       request as code, changes its password in My Account, signs out, and
//       signs in with the new one after the old one fails;
//   (b) Finance reads last week's spend per API token on Spend, sees the
//       unpriced model marked, and finds it on Model prices.
// It leaves Finance signed in, as run.mjs had it.

import assert from 'node:assert/strict';

/** UNPRICED is the model the mock serves that has no price (the slow route's target). */
const UNPRICED = 'gpt-4o-mini@chunks=8@delay=150ms';
const NEW_MEMBER_PASSWORD = 'member-new-password-456';

/**
 * money19 runs the steps with run.mjs's page and helpers. MEMBER.password
 * is the new one afterwards.
 */
export async function money19(t) {
  const { page, step, nav, until, shot, signInWithPassword, signOut, pickModel, MEMBER, FINANCE, ADMIN_PASSWORD, state } = t;

  await step('Prices: the Administrator finds the model served without a price, and "Add price" fills the form', async () => {
    await signOut();
    await signInWithPassword('admin@localhost', ADMIN_PASSWORD);
    await nav('Model prices');
    const list = page.getByTestId('unpriced-models');
    const row = list.locator(`tr[data-unpriced-model="openai/${UNPRICED}"]`);
    await until('the unpriced model is listed', async () => {
      await page.reload();
      await row.waitFor({ timeout: 2000 });
    });
    assert.match(await row.locator('td').nth(2).textContent(), /^[1-9]\d*$/, 'its unpriced requests are counted');
    await list.scrollIntoViewIfNeeded();
    await shot('money19-prices-unpriced-list');
    await row.getByRole('button', { name: `Add price for openai/${UNPRICED}` }).click();
    const form = page.getByRole('form', { name: 'Add a price' });
    assert.equal(await form.getByLabel('Provider').inputValue(), 'openai');
    assert.equal(await form.getByLabel('Model', { exact: true }).inputValue(), UNPRICED);
    await shot('money19-prices-add-price');
  });

  await step('Logs: the request the unpriced model answered reads "unpriced", not $0.00, in the list and its detail', async () => {
    await nav('Logs');
    const row = page.locator('tr[data-log]').filter({ hasText: UNPRICED }).first();
    await row.waitFor();
    assert.equal((await row.locator('.unpriced').textContent()).trim(), 'unpriced');
    assert.equal(await row.getByText('$0.00').count(), 0, 'no $0.00 for want of a price');
    await page.goto(`/ui/logs/${await row.getAttribute('data-log')}`);
    const facts = page.getByTestId('log-facts');
    assert.equal((await facts.locator('.unpriced').textContent()).trim(), 'unpriced');
    assert.match(await page.getByTestId('log-flags').textContent(), /\bunpriced\b/);
  });

  await step('Users: the Tenant Administrator’s view of a user sets its rate limit', async () => {
    await nav('Users');
    await page.getByLabel('Tenant', { exact: true }).selectOption('acme');
    await page.getByRole('link', { name: MEMBER.email }).click();
    const form = page.getByRole('form', { name: 'Rate limit of the user' });
    await form.getByLabel('Requests per minute').fill('600');
    await form.getByRole('button', { name: 'Save rate limit' }).click();
    await page.getByRole('status').filter({ hasText: 'Rate limit saved.' }).waitFor();
    await page.getByTestId('user-rate-limit').filter({ hasText: '600 requests/min' }).waitFor();
  });

  await step('Member: sees its rate limit and the cost of what it used in the Playground, with the request as code', async () => {
    await signOut();
    await signInWithPassword(MEMBER.email, MEMBER.password);
    await nav('My account');
    await page.getByTestId('my-rate-limit').filter({ hasText: '600 requests/min' }).waitFor();
    await nav('Playground');
    await pickModel('openai/gpt-4o-mini').getByRole('button').click();
    await page.getByLabel('Temperature').fill('0.5');
    await page.getByLabel('Max tokens').fill('64');
    await page.getByText('View code').click();
    const js = await page.getByTestId('code-js').textContent();
    assert.match(js, /import OpenAI from 'openai';/);
    assert.match(js, /"temperature": 0\.5/);
    assert.match(js, /"max_tokens": 64/);
    assert.match(js, /apiKey: process\.env\.SLUICE_TOKEN/);
    assert.match(await page.getByTestId('code-sdk').textContent(), /from openai import OpenAI[\s\S]*temperature=0\.5/);
    await page.getByLabel('Message', { exact: true }).fill('What did this cost?');
    await page.getByRole('button', { name: 'Send' }).click();
    const facts = page.getByTestId('turn-facts').last();
    // A Member reads no prices: the cost comes from the log of its own request.
    await facts.getByTestId('turn-cost').filter({ hasText: /^\$0\.0\d+$/ }).waitFor();
    await facts.getByTestId('turn-served').filter({ hasText: 'openai/gpt-4o-mini' }).waitFor();
    const text = await page.locator('main').textContent();
    assert.ok(!/sk-sl-[0-9A-Za-z]{40}/.test(text), 'no token on the page');
    await shot('money19-member-playground');
  });

  await step('Member: changes its password in My Account; the old one fails, the new one signs in', async () => {
    await nav('My account');
    const form = page.getByRole('form', { name: 'Change my password' });
    await form.getByLabel('Current password').fill('not-my-password-at-all');
    await form.getByLabel('New password', { exact: true }).fill(NEW_MEMBER_PASSWORD);
    await form.getByLabel('New password, again').fill(NEW_MEMBER_PASSWORD);
    await form.getByRole('button', { name: 'Change password' }).click();
    await form.getByText('The current password is incorrect.').waitFor();
    await form.getByLabel('Current password').fill(MEMBER.password);
    await form.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor();
    await shot('money19-account-password');
    await signOut();
    await page.getByRole('tab', { name: 'Email and password' }).click();
    await page.getByLabel('Email').fill(MEMBER.email);
    await page.getByLabel('Password').fill(MEMBER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('The email or password is incorrect.').waitFor();
    MEMBER.password = NEW_MEMBER_PASSWORD;
    await signInWithPassword(MEMBER.email, MEMBER.password);
  });

  await step('Finance: last week’s spend per API token, the unpriced model marked, and listed on Model prices', async () => {
    await signOut();
    await signInWithPassword(FINANCE.email, FINANCE.password);
    await page.getByLabel('Range').selectOption('7d');
    const token = page.locator('section[data-spend="spend-by-token"] tr[data-row="e2e"]');
    await token.waitFor();
    assert.match((await token.locator('td').nth(2).textContent()).trim(), /^\$0\.0\d+$/, 'the e2e token’s cost, in the one dollar format');
    const model = page.locator('section[data-spend="spend-by-model"] tr').filter({ hasText: UNPRICED });
    assert.equal((await model.locator('.unpriced').textContent()).trim(), 'unpriced');
    await shot('money19-finance-spend');
    await nav('Model prices');
    await page.getByTestId('unpriced-models').locator(`tr[data-unpriced-model="openai/${UNPRICED}"]`).waitFor();
    assert.equal(await page.getByRole('button', { name: /^Add price for/ }).count(), 0, 'Finance reads prices, it does not write them');
    await nav('My account');
    await page.getByRole('form', { name: 'Change my password' }).waitFor();
    state.money19 = true;
  });
}
