// Browser steps of the charts (issue 19 item 9), called from run.mjs while
// the Administrator is signed in: a few requests of a token of its own give
// every chart data (a refusal, a cache hit, a guardrail hit; the gateway's
// cache and content rule are switched back afterwards), then Analytics and
// Overview are opened over a custom range, and every chart must draw its
// data on its canvas; the top lists' bars must line up and follow the cost
// the lists are sorted by.

import assert from 'node:assert/strict';

/** localInput formats a Date as a datetime-local value in this process's zone (the browser's). */
function localInput(d) {
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/**
 * chartStatus reads a chart figure: whether it has data, whether its canvas
 * holds pixels of its first series' colour (so something was drawn), and the
 * number of non-empty cells of its hidden table.
 */
async function chartStatus(page, id) {
  return page.locator(`figure[data-chart="${id}"]`).evaluate((fig) => {
    const canvas = fig.querySelector('canvas');
    const marker = fig.querySelector('.u-series:nth-child(2) .u-marker');
    let drawn = 0;
    if (canvas && marker) {
      const m = /rgba?\((\d+), (\d+), (\d+)/.exec(getComputedStyle(marker).borderColor || getComputedStyle(marker).backgroundColor);
      const px = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      for (let i = 0; m && i < px.length; i += 4) {
        if (px[i + 3] > 200 && Math.abs(px[i] - m[1]) < 8 && Math.abs(px[i + 1] - m[2]) < 8 && Math.abs(px[i + 2] - m[3]) < 8) drawn++;
      }
    }
    const cells = [...fig.querySelectorAll('table.sr-only td')].filter((td) => !/^(—|\$?0(\.0+)?( ms)?)$/.test(td.textContent.trim())).length;
    return { hasData: fig.dataset.hasData, canvas: !!canvas, drawn, cells, caption: fig.querySelector('figcaption')?.textContent ?? '' };
  });
}

async function expectCharts(page, until, ids) {
  for (const id of ids) {
    await until(`chart ${id} draws its data`, async () => {
      await page.locator(`figure[data-chart="${id}"]`).waitFor({ timeout: 3000 });
      const s = await chartStatus(page, id);
      assert.equal(s.hasData, 'true', `${id}: ${JSON.stringify(s)}`);
      assert.ok(s.canvas && s.drawn > 10 && s.cells > 0, `${id}: ${JSON.stringify(s)}`);
      assert.match(s.caption, /\((ms|USD|requests|hits)\)/, `${id} names its unit`);
    }, 20_000);
  }
}

export async function charts19({ page, step, until, shot, nav, base, adminToken, state }) {
  const admin = async (method, path, body) => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  const gw = state.gatewayURL.split('/').pop();
  let secret;
  const chat = (model, content, headers = {}) =>
    fetch(`${base}/v1/acme/prod/compat/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
    });

  await step('Charts: a refusal, a cache hit and a guardrail hit give every chart data', async () => {
    secret = (await admin('POST', `/admin/v1/gateways/${gw}/tokens`, { name: 'charts' })).secret;
    // A name without "model" in it: the Logs steps find their filter by that label.
    const refused = await chat('unknown-llm', 'refused');
    assert.equal(refused.status, 400, await refused.text());
    const rule = (await admin('GET', `/admin/v1/gateways/${gw}/rules`)).data.find((r) => r.name === 'No emails upstream');
    await admin('PATCH', `/admin/v1/gateways/${gw}/rules`, { id: rule.id, enabled: true });
    await admin('PATCH', `/admin/v1/gateways/${gw}`, { cache: { enabled: true, ttl_seconds: 600 } });
    try {
      await until('a cached answer', async () => {
        const r = await chat('openai/gpt-4o-mini', 'cache me for the charts');
        assert.equal(r.status, 200, await r.text());
        assert.equal(r.headers.get('x-sluice-cache'), 'HIT');
      });
      await until('a guardrail hit', async () => {
        const r = await chat('openai/gpt-4o-mini', `mail me at charts-${Date.now()}@example.com`);
        assert.equal(r.status, 200, await r.text());
        const gs = await admin('GET', `/admin/v1/stats/guardrails?tenant=acme`);
        assert.ok(gs.total > 0, `guardrail hits ${gs.total}`);
      });
    } finally {
      await admin('PATCH', `/admin/v1/gateways/${gw}/rules`, { id: rule.id, enabled: false });
      await admin('PATCH', `/admin/v1/gateways/${gw}`, { cache: { enabled: false, ttl_seconds: 600 } });
    }
  });

  const from = new Date(Date.now() - 2 * 86_400_000);
  const to = new Date(Date.now() + 3_600_000);

  await step('Charts: Analytics takes a checked custom range, kept in the URL, and draws every chart', async () => {
    await nav('Analytics');
    await page.getByLabel('Range', { exact: true }).selectOption('custom');
    await page.getByLabel('From', { exact: true }).fill(localInput(to));
    await page.getByLabel('To', { exact: true }).fill(localInput(from));
    await page.getByRole('button', { name: 'Apply range' }).click();
    await page.getByRole('alert').filter({ hasText: 'The start must be before the end.' }).waitFor();
    await page.getByLabel('From', { exact: true }).fill(localInput(from));
    await page.getByLabel('To', { exact: true }).fill(localInput(to));
    await page.getByRole('button', { name: 'Apply range' }).click();
    await until('the range is in the URL', async () => {
      const q = new URL(page.url()).searchParams;
      assert.equal(q.get('range'), 'custom');
      assert.equal(new Date(q.get('from')).getTime(), new Date(localInput(from)).getTime());
      assert.equal(new Date(q.get('to')).getTime(), new Date(localInput(to)).getTime());
    }, 5000);
    await page.reload();
    assert.equal(await page.getByLabel('From', { exact: true }).inputValue(), localInput(from), 'a reload keeps the custom range');
    await expectCharts(page, until, ['latency', 'cost-by-group', 'errors-by-reason', 'cache-savings', 'guardrail-hits']);
    for (const by of ['gateway', 'user']) {
      await page.getByLabel('Cost by', { exact: true }).selectOption(by);
      await page.locator('figure[data-chart="cost-by-group"] figcaption').filter({ hasText: `Cost by ${by}` }).waitFor();
      await expectCharts(page, until, ['cost-by-group']);
    }
    await page.getByLabel('Cost by', { exact: true }).selectOption('model');
    await page.locator('#over-time').evaluate((el) => el.scrollIntoView());
    await shot('charts19-analytics');
    await page.locator('figure[data-chart="errors-by-reason"]').evaluate((el) => el.scrollIntoView());
    await shot('charts19-analytics-2');
  });

  await step('Charts: the top-list bars line up in one column, sized by the cost they are sorted by', async () => {
    const lists = page.locator('.top-list ol');
    await lists.first().waitFor();
    let rows = 0;
    for (const ol of await lists.all()) {
      const bars = await ol.locator('li').evaluateAll((lis) =>
        lis.map((li) => {
          const track = li.querySelector('.top-bar').getBoundingClientRect();
          const fill = li.querySelector('.top-bar span').getBoundingClientRect();
          return { cost: Number(li.dataset.cost), left: track.left, track: track.width, width: fill.width };
        }),
      );
      rows += bars.length;
      const max = Math.max(...bars.map((b) => b.cost));
      for (const [i, b] of bars.entries()) {
        assert.ok(Math.abs(b.left - bars[0].left) < 1 && Math.abs(b.track - bars[0].track) < 1, `bars aligned: ${JSON.stringify(bars)}`);
        if (i > 0) assert.ok(b.cost <= bars[i - 1].cost, `sorted by cost: ${JSON.stringify(bars)}`);
        const want = max > 0 ? (b.cost / max) * b.track : 0;
        assert.ok(Math.abs(b.width - want) <= 2, `bar ${i} is ${b.width}px, want ${want}px for its cost: ${JSON.stringify(bars)}`);
      }
    }
    assert.ok(rows >= 3, `${rows} top-list rows`);
  });

  await step('Charts: Overview over the custom range draws traffic, solid cost bars, latency and cache savings', async () => {
    await page.goto(`/ui/overview?range=custom&from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(to.toISOString())}`);
    assert.equal(await page.getByLabel('Range', { exact: true }).inputValue(), 'custom');
    await expectCharts(page, until, ['traffic', 'cost', 'latency', 'cache-savings']);
    // Hover a bucket with data: the tooltip shows its time and values.
    const box = await page.locator('figure[data-chart="cost"] .u-over').boundingBox();
    await page.mouse.move(box.x + box.width - 4, box.y + box.height / 2);
    await page.locator('figure[data-chart="cost"] .chart-tip').filter({ hasText: 'Cost:' }).waitFor();
    await shot('charts19-overview');
  });
}
