// The accessibility and layout tour of the browser test (issue 19 item 13).
//
// a11yTour signs in as every role, visits every page of that role's
// navigation (read from the page, so a page added to the navigation is
// covered without changing this file) and the detail pages linked from them
// (a gateway's tabs, a log, a user), and on each runs axe-core, failing on any
// violation of impact "serious" or "critical". Then it checks that no page
// scrolls sideways at 1024 and 768 px, runs axe once more with the dark colour
// scheme, and writes a screenshot of each role's landing page
// (landing-<role>.png, 1440x900) for docs/dashboard.md.
//
// axe is evaluated through the DevTools protocol (page.evaluate), which the
// page's strict CSP does not restrict; nothing is added to the page's DOM.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The impacts that fail the test. */
const FAILING = new Set(['serious', 'critical']);

/** Widths of the layout pass: no horizontal page scroll at either. */
const WIDTHS = [1024, 768];

const DESKTOP = { width: 1440, height: 900 };

/**
 * axeFindings runs axe-core on the current page and describes each serious
 * or critical violation (its rule and first offending elements); none is [].
 */
export async function axeFindings(page, where) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 4).map((n) => `${n.target.join(' ')}: ${n.failureSummary?.split('\n').slice(1).join(' ')}`) }));
  });
  return violations.filter((v) => FAILING.has(v.impact)).map((v) => `axe on ${where}: [${v.impact}] ${v.id}: ${v.help}\n    ${v.nodes.join('\n    ')}`);
}

/** checkA11y fails on any serious or critical axe-core violation of the current page. */
export async function checkA11y(page, where) {
  const found = await axeFindings(page, where);
  assert.equal(found.length, 0, found.join('\n'));
}

/** assertNoSideways fails when the page is wider than the window (a sideways page scroll). */
export async function assertNoSideways(page, where) {
  const found = await sideways(page, where);
  assert.equal(found.length, 0, found.join('\n'));
}

async function sideways(page, where) {
  const [sw, cw] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
  return sw <= cw ? [] : [`${where} scrolls sideways: the page is ${sw} px wide in a ${cw} px window`];
}

/** settle waits until the page has rendered its data (no loading state left). */
async function settle(page) {
  await page.locator('main h1, main h2, .signin h1').first().waitFor();
  await page.waitForFunction(() => !document.querySelector('main [aria-busy="true"], main .spinner'), null, { timeout: 15_000 });
}

/** navLinks lists the hrefs of the main navigation, in order. */
const navLinks = (page) => page.locator('nav[aria-label="Main"] a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));

/**
 * pagesOf lists the pages a signed-in role can reach: its navigation, and the
 * first gateway (every tab), log and user linked from those pages.
 */
async function pagesOf(page) {
  const out = [];
  for (const href of await navLinks(page)) {
    await page.goto(href);
    await settle(page);
    out.push(href);
    for (const detail of ['/ui/gateways/', '/ui/logs/', '/ui/users/']) {
      if (!href.startsWith(detail.slice(0, -1))) continue;
      const link = page.locator(`main a[href^="${detail}"]`).first();
      if (!(await link.count())) continue;
      const to = new URL(await link.getAttribute('href'), page.url()).pathname;
      if (detail === '/ui/gateways/') {
        await page.goto(to);
        await settle(page);
        for (const tab of await page.getByRole('tab').evaluateAll((ts) => ts.map((t) => t.getAttribute('href')))) out.push(tab);
      } else out.push(to);
    }
  }
  return [...new Set(out)];
}

async function visit(page, href) {
  await page.goto(href);
  await settle(page);
}

/** The roles the tour creates itself (in tenant acme), with a password each. */
const MORE_USERS = {
  tenant_administrator: { email: 'a11y-ta@acme.test', password: 'a11y-tenant-admin-123' },
  ai_manager: { email: 'a11y-aim@acme.test', password: 'a11y-ai-manager-123' },
  viewer: { email: 'a11y-viewer@acme.test', password: 'a11y-viewer-pass-123' },
};

async function createUser(base, adminToken, role, { email, password }) {
  const res = await fetch(`${base}/admin/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'mutation($t: ID!, $i: UserInput!) { createUser(tenantId: $t, input: $i) { id } }',
      variables: { t: 'acme', i: { email, name: `A11y ${role}`, role, password } },
    }),
  });
  const body = await res.json();
  assert.ok(body.data?.createUser?.id, `creating the ${role}: ${JSON.stringify(body)}`);
}

/**
 * a11yTour runs the whole pass for every role: users holds the email and
 * password of the administrator, member and finance users run.mjs made; the
 * tour creates a Tenant Administrator, an AI Manager and a Viewer in tenant
 * acme, and enters the demo from the sign-in page. It starts and ends signed
 * out.
 */
export async function a11yTour({ page, step, base, adminToken, artifacts, signIn, signOut, users }) {
  for (const [role, u] of Object.entries(MORE_USERS)) await createUser(base, adminToken, role, u);
  const roles = Object.fromEntries(Object.entries({ ...users, ...MORE_USERS }).map(([role, u]) => [role, () => signIn(u.email, u.password)]));
  roles.demo = async () => {
    await page.goto('/');
    await page.getByRole('button', { name: 'Explore the read-only demo' }).click();
  };
  // Findings are gathered over every role and page, then reported together.
  const found = [];
  for (const [role, signInAs] of Object.entries(roles)) {
    await step(`accessibility: the ${role}'s pages through axe at 1440 px and in dark mode, and at 1024 and 768 px`, async () => {
      await page.setViewportSize(DESKTOP);
      await signInAs();
      await settle(page);
      await page.screenshot({ path: join(artifacts, `landing-${role}.png`) });
      const pages = await pagesOf(page);
      assert.ok(pages.length >= 1, `${role} has no page`);
      for (const href of pages) {
        await visit(page, href);
        found.push(...(await axeFindings(page, `${href} as ${role}`)));
      }
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        for (const href of pages) {
          await visit(page, href);
          found.push(...(await sideways(page, `${href} as ${role} at ${width} px`)));
        }
      }
      await page.setViewportSize(DESKTOP);
      await page.emulateMedia({ colorScheme: 'dark' });
      try {
        for (const href of pages) {
          await visit(page, href);
          found.push(...(await axeFindings(page, `${href} as ${role} in dark mode`)));
        }
        await visit(page, pages[0]);
        await page.screenshot({ path: join(artifacts, `dark-${role}.png`) });
      } finally {
        await page.emulateMedia({ colorScheme: 'light' });
      }
      await signOut();
    });
  }
  await step('accessibility: the sign-in page through axe, light and dark, and at 1024 and 768 px', async () => {
    await page.goto('/');
    await settle(page);
    found.push(...(await axeFindings(page, 'the sign-in page')));
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      found.push(...(await sideways(page, `the sign-in page at ${width} px`)));
    }
    await page.setViewportSize(DESKTOP);
    await page.emulateMedia({ colorScheme: 'dark' });
    found.push(...(await axeFindings(page, 'the sign-in page in dark mode')));
    await page.emulateMedia({ colorScheme: 'light' });
  });
  await step('accessibility: no serious or critical axe violation and no sideways scroll on any page', async () => {
    assert.equal(found.length, 0, `${found.length} findings:\n${found.join('\n')}`);
  });
}
