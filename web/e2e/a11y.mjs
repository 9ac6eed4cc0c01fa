// The accessibility and layout tour of the browser test (issue 19 item 13).
//
// a11yTour signs in as every role, visits every page of that role's
// navigation (read from the page, so a page added to the navigation is
// covered without changing this file) and the detail pages linked from them
// (a gateway's tabs, a log, a user). On each it runs axe-core at 1440 px,
// checks that the page does not scroll sideways at 1024 and 768 px, and runs
// axe again in the dark colour scheme. Any violation of impact "serious" or
// "critical" and any sideways scroll is printed as it is found (# lines) and
// fails the last step, which lists them all. It also writes a screenshot of
// each role's landing page (landing-<role>.png, 1440x900) for
// docs/dashboard.md, and drives the gateway tabs with the keyboard.
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
  // Measured after two frames, once the charts have followed the new width.
  const [sw, cw] = await page.evaluate(
    () => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done([document.documentElement.scrollWidth, document.documentElement.clientWidth])))),
  );
  if (sw <= cw) return [];
  // Name the outermost elements that stick out, to say where to look.
  const out = await page.evaluate((cw) => {
    const name = (el) => el.tagName.toLowerCase() + (el.id ? `#${el.id}` : '') + [...el.classList].map((c) => `.${c}`).join('');
    const wide = [...document.querySelectorAll('body *')].filter((el) => el.getBoundingClientRect().right > cw + 1);
    return wide
      .filter((el) => !wide.includes(el.parentElement))
      .slice(0, 5)
      .map((el) => `${name(el.parentElement)} > ${name(el)} (${Math.round(el.getBoundingClientRect().right)} px)`);
  }, cw);
  return [`${where} scrolls sideways: the page is ${sw} px wide in a ${cw} px window; sticking out: ${out.join(', ')}`];
}

/**
 * checkPage runs axe on the page at 1440 px, checks that it does not scroll
 * sideways at 1024 and 768 px, and runs axe again in the dark scheme; it
 * returns what it found and leaves the page light at 1440 px.
 */
async function checkPage(page, where) {
  const found = await axeFindings(page, where);
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    found.push(...(await sideways(page, `${where} at ${width} px`)));
  }
  await page.setViewportSize(DESKTOP);
  await page.emulateMedia({ colorScheme: 'dark' });
  try {
    found.push(...(await axeFindings(page, `${where} in dark mode`)));
  } finally {
    await page.emulateMedia({ colorScheme: 'light' });
  }
  return found;
}

/** settle waits until the page has rendered its data (no loading state left). */
async function settle(page) {
  await page.locator('main h1, main h2, .signin h1').first().waitFor();
  await page.waitForFunction(() => !document.querySelector('main [aria-busy="true"], main .spinner'), null, { timeout: 15_000 });
}

/** navLinks lists the hrefs of the main navigation, in order. */
const navLinks = (page) => page.locator('nav[aria-label="Main"] a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));

/**
 * tour visits the pages a signed-in role can reach and checks each: its
 * navigation, and the first gateway (every tab), log and user linked from
 * those pages. It returns the paths it visited.
 */
async function tour(page, check) {
  const seen = new Set();
  const go = async (href) => {
    if (seen.has(href)) return;
    seen.add(href);
    await visit(page, href);
    await check(href);
  };
  for (const href of await navLinks(page)) {
    await go(href);
    for (const detail of ['/ui/gateways/', '/ui/logs/', '/ui/users/']) {
      if (!href.startsWith(detail.slice(0, -1))) continue;
      // An Administrator's list shows its own tenant first: pick the test's.
      const picker = page.locator('#tenant-picker');
      if ((await picker.count()) && (await picker.locator('option[value="acme"]').count())) {
        await picker.selectOption('acme');
        await settle(page);
      }
      const link = page.locator(`main a[href^="${detail}"]`).first();
      await link.waitFor({ timeout: 3000 }).catch(() => {});
      if (!(await link.count())) continue;
      const to = new URL(await link.getAttribute('href'), page.url()).pathname;
      if (detail !== '/ui/gateways/') {
        await go(to);
        continue;
      }
      await visit(page, to);
      for (const tab of await page.getByRole('tab').evaluateAll((ts) => ts.map((t) => t.getAttribute('href')))) await go(tab);
    }
  }
  return [...seen];
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
export async function a11yTour({ page, step, until, base, adminToken, artifacts, signIn, signOut, users }) {
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
      const pages = await tour(page, async (href) => {
        const t0 = Date.now();
        const more = await checkPage(page, `${href} as ${role}`);
        // Reported as they are found (TAP comments), and all together at the end.
        console.log(`# ${href} as ${role}: ${more.length} findings (${Date.now() - t0} ms)`);
        for (const f of more) console.log(`# ${f.replace(/\n/g, '\n# ')}`);
        found.push(...more);
      });
      assert.ok(pages.length >= 1, `${role} has no page`);
      await visit(page, pages[0]);
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.screenshot({ path: join(artifacts, `dark-${role}.png`) });
      await page.emulateMedia({ colorScheme: 'light' });
      await page.setViewportSize({ width: 768, height: 900 });
      await page.screenshot({ path: join(artifacts, `narrow-${role}.png`), fullPage: true });
      await page.setViewportSize(DESKTOP);
      await signOut();
    });
  }
  await step('accessibility: the gateway tabs are a tablist driven by the arrow keys, Home and End, and keep their URLs', async () => {
    await roles.demo();
    await page.goto('/ui/gateways');
    await page.locator('main a[href^="/ui/gateways/"]').first().click();
    const tabs = page.getByRole('tablist', { name: 'Gateway sections' }).getByRole('tab');
    const n = await tabs.count();
    assert.ok(n >= 3, `${n} tabs`);
    const selected = page.getByRole('tab', { selected: true });
    const expectOn = async (i) => {
      const want = tabs.nth(i);
      await until(`tab ${i} selected by the keyboard`, async () => {
        assert.equal(await want.getAttribute('aria-selected'), 'true');
        assert.equal(new URL(page.url()).pathname, await want.getAttribute('href'));
        assert.equal(await want.evaluate((el) => el === document.activeElement), true, 'the selected tab has the focus');
      }, 5000);
      assert.equal(await want.getAttribute('tabindex'), '0');
      assert.equal(await page.locator('[role="tab"][tabindex="0"]').count(), 1, 'one tab in the Tab order');
      const panel = page.locator(`#${await want.getAttribute('aria-controls')}`);
      assert.equal(await panel.getAttribute('role'), 'tabpanel');
      assert.equal(await panel.getAttribute('aria-labelledby'), await want.getAttribute('id'));
      const underline = (t) => t.evaluate((el) => getComputedStyle(el).borderBottomColor);
      assert.notEqual(await underline(want), await underline(tabs.nth(i === 0 ? 1 : 0)), 'the selected tab is underlined');
    };
    await selected.focus();
    await page.keyboard.press('End');
    await expectOn(n - 1);
    await page.keyboard.press('ArrowRight');
    await expectOn(0);
    await page.keyboard.press('ArrowLeft');
    await expectOn(n - 1);
    await page.keyboard.press('Home');
    await expectOn(0);
    await page.keyboard.press('ArrowRight');
    await expectOn(1);
    await signOut();
  });
  await step('accessibility: the sign-in page through axe, light and dark, and at 1024 and 768 px', async () => {
    await page.goto('/');
    await settle(page);
    found.push(...(await checkPage(page, 'the sign-in page')));
  });
  await step('accessibility: no serious or critical axe violation and no sideways scroll on any page', async () => {
    assert.equal(found.length, 0, `${found.length} findings:\n${found.join('\n')}`);
  });
}
