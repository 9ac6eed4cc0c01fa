// Browser steps of issue 19, items 5 and 7: each role's landing page, the
// Viewer's explained scope, and names instead of ids (Analytics top lists
// and groups, the log detail, the audit log), each a link where the role
// may open it. run.mjs calls namesAndLandings once the Administrator has
// made gateway prod ("Production") of tenant acme and sent requests
// through it, with Finance signed in.

import assert from 'node:assert/strict';

const AI_MANAGER = { email: 'ada@acme.test', password: 'ai-manager-password-123', role: 'ai_manager', name: 'Ada AI Manager' };
const VIEWER = { email: 'vic@acme.test', password: 'viewer-password-123', role: 'viewer', name: 'Vic Viewer' };

/**
 * namesAndLandings runs the steps. h holds run.mjs's page and helpers:
 * page, base, adminToken, adminPassword, finance ({ email, password }),
 * state (gatewayURL, logPath), step, signInWithPassword, signOut, nav,
 * navIds, until, shot.
 */
export async function namesAndLandings(h) {
  const { page, step, signInWithPassword, signOut, nav, navIds, until, shot, state } = h;
  const path = () => new URL(page.url()).pathname;

  await step('names19: an AI Manager and a Viewer of acme are created (admin API)', async () => {
    for (const u of [AI_MANAGER, VIEWER]) {
      const res = await fetch(`${h.base}/admin/v1/tenants/acme/users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: u.email, name: u.name, role: u.role, password: u.password }),
      });
      assert.equal(res.status, 201, await res.text());
    }
  });

  await step('names19: Finance lands on Spend', async () => {
    await signOut();
    await signInWithPassword(h.finance.email, h.finance.password);
    await until('Finance lands on Spend', async () => assert.equal(path(), '/ui/spend'), 10_000);
    await page.getByRole('heading', { name: 'Spend of tenant acme' }).waitFor();
  });

  await step('names19: the AI Manager lands on Analytics with its tenant’s figures; gateways named, users by id with the reason', async () => {
    await signOut();
    await signInWithPassword(AI_MANAGER.email, AI_MANAGER.password);
    await until('the AI Manager lands on Analytics', async () => assert.equal(path(), '/ui/analytics'), 10_000);
    assert.deepEqual(await navIds(), ['overview', 'analytics', 'account']);
    await page.getByRole('heading', { name: 'Analytics', level: 1 }).waitFor();
    await page.getByText("Your tenant's usage, grouped the way you choose.").waitFor();
    await page.getByTestId('tenant-summary-scope').waitFor();
    await page.getByLabel('Group by').selectOption('gateway');
    // The gateway's name, as plain text: the AI Manager may not open gateway pages.
    const cell = page.locator('table.table tbody td').filter({ hasText: /^Production$/ });
    await cell.waitFor();
    assert.equal(await cell.getByRole('link').count(), 0, 'no link to a page the AI Manager may not open');
    await shot('names19-ai-manager-analytics');
    await page.getByLabel('Group by').selectOption('user');
    await page.getByTestId('names-hidden').waitFor();
  });

  await step('names19: the Viewer lands on an Overview that says whose requests it shows and why it is empty', async () => {
    await signOut();
    await signInWithPassword(VIEWER.email, VIEWER.password);
    await until('the Viewer lands on Overview', async () => assert.equal(path(), '/ui/overview'), 10_000);
    assert.equal((await navIds())[0], 'overview', 'Overview is the Viewer’s first page');
    await page.getByText('Your usage: Viewers see only their own requests; ask a Tenant Administrator for tenant-wide figures.').waitFor();
    const empty = page.getByTestId('own-scope-empty');
    await empty.waitFor();
    assert.match(await empty.textContent(), /No requests of yours in this range\. .*Ask a Tenant Administrator for tenant-wide figures\./);
    assert.equal(await page.getByTestId('stat-requests').count(), 0, 'no page of zeros');
    await shot('names19-viewer-overview');
  });

  await step('names19: the Administrator sees gateway names with working links in Analytics, the log detail and the audit log', async () => {
    await signOut();
    await signInWithPassword('admin@localhost', h.adminPassword);
    await nav('Analytics');
    await page.getByLabel('Tenant', { exact: true }).selectOption('acme');
    const top = page.locator('.top-list').filter({ has: page.getByRole('heading', { name: 'Top gateways' }) });
    const link = top.getByRole('link', { name: 'Production', exact: true });
    await link.waitFor();
    assert.equal(await link.getAttribute('href'), state.gatewayURL);
    await page.getByLabel('Group by').selectOption('gateway');
    await page.locator('table.table tbody').getByRole('link', { name: 'Production', exact: true }).waitFor();
    // The cost chart's series by gateway are labelled by name (its table for screen readers says so).
    await page.getByLabel('Cost by', { exact: true }).selectOption('gateway');
    await page.locator('figure[data-chart="cost-by-group"] table thead th').filter({ hasText: /^Production$/ }).waitFor({ state: 'attached' });
    await shot('names19-admin-analytics');
    await link.click();
    await page.getByRole('heading', { name: 'Production' }).waitFor();
    assert.equal(path(), state.gatewayURL);

    await page.goto(state.logPath);
    const facts = page.getByTestId('log-facts');
    await facts.waitFor();
    const gw = facts.locator('dt:text-is("Tenant / gateway") + dd').getByRole('link', { name: 'Production', exact: true });
    assert.equal(await gw.getAttribute('href'), state.gatewayURL);
    await facts.locator('dt:text-is("Token / user") + dd').getByRole('link', { name: 'admin@localhost' }).waitFor();
    await nav('Logs');
    const row = page.locator(`tr[data-log="${state.requestId}"]`);
    assert.equal(await row.getByRole('link', { name: 'Production', exact: true }).getAttribute('href'), state.gatewayURL);

    await nav('Audit log');
    const updated = page.locator('tr').filter({ has: page.getByRole('cell', { name: 'gateway.update', exact: true }) }).first();
    const res = updated.getByRole('link', { name: 'Production', exact: true });
    await res.waitFor();
    assert.equal(await res.getAttribute('href'), state.gatewayURL);
    await updated.getByRole('link', { name: 'admin@localhost' }).waitFor();
    const user = page.locator('tr').filter({ has: page.getByRole('cell', { name: 'user.create', exact: true }) }).filter({ hasText: AI_MANAGER.email }).first();
    await user.getByRole('link', { name: AI_MANAGER.email }).waitFor();
    await shot('names19-admin-audit');
  });
}
