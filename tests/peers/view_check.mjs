// Drives Debian's Chromium (headless, through playwright-core) on a page `mcptape view`
// wrote, and prints what it saw as one JSON line for tests/it/view.rs to judge.
//
// usage: node view_check.mjs PAGE.html MODE [SCREENSHOT.png]
//   MODE: tape (lanes, a click, search, keys, notes), xss (nothing injected runs),
//         big (opens, scrolls to the end), verify (the diverged call and its paths),
//         span (the time axis of a tape noted long after it was recorded; names shown)
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [page_path, mode, shot] = process.argv.slice(2);
if (!page_path || !mode) {
  console.error('usage: node view_check.mjs PAGE.html MODE [SCREENSHOT.png]');
  process.exit(2);
}
const url = pathToFileURL(resolve(page_path)).href;
const profile = mkdtempSync(join(tmpdir(), 'mcptape-view-'));
const facts = { mode, requests: [], console: [], errors: [], dialogs: [] };
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1280, height: 800 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const page = ctx.pages()[0] || await ctx.newPage();
  page.on('request', (r) => facts.requests.push(r.url()));
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') facts.console.push(m.type() + ': ' + m.text()); });
  page.on('pageerror', (e) => facts.errors.push(String(e)));
  page.on('dialog', async (d) => { facts.dialogs.push(d.type() + ': ' + d.message()); await d.dismiss(); });
  const started = Date.now();
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForSelector('body[data-ready]', { state: 'attached', timeout: 30000 });
  facts.load_ms = Date.now() - started;
  facts.ready_ms = Number(await page.getAttribute('body', 'data-ready'));
  facts.url = url;
  facts.title = await page.title();
  facts.lanes = await page.locator('.lane').count();
  facts.lane_labels = await page.locator('.lane-label').allTextContents();
  facts.rows_in_dom = await page.locator('.row').count();
  facts.summary = await page.textContent('#summary');
  const rowTexts = () => page.locator('.row').allTextContents();

  if (mode === 'tape') {
    facts.notes_in_list = await page.locator('.row.note').allTextContents();
    facts.note_flags = await page.locator('.flag').allTextContents();
    // A click on a tools/call request shows its message and its answer's link.
    await page.locator('.row', { hasText: 'tools/call echo' }).first().click();
    facts.detail_title = await page.textContent('#detail h2');
    facts.detail_message = await page.textContent('#detail pre.message');
    facts.detail_terms = await page.locator('#detail dt').allTextContents();
    facts.detail_values = await page.locator('#detail dd').allTextContents();
    facts.jump = await page.locator('#detail button.jump').allTextContents();
    await page.click('#detail button.toggle');
    facts.raw_shown = await page.locator('#detail pre.raw').isVisible();
    facts.raw_text = await page.textContent('#detail pre.raw');
    await page.click('#detail button.jump');
    facts.after_jump_title = await page.textContent('#detail h2');
    // A click on a bar in the first lane opens that request.
    const cv = page.locator('.lane canvas').first();
    const box = await cv.boundingBox();
    const bar = await page.evaluate(() => {
      const d = JSON.parse(document.getElementById('tape-data').textContent);
      const x = d.exchanges.find((e) => e[0] === 0 && e[3] != null);
      const times = d.entries.filter((e) => e[3] != null).map((e) => e[3]);
      return { t: x[3], t1: x[4], min: Math.min(...times), max: Math.max(...times), line: d.entries[x[1]][0] };
    });
    const xpos = ((bar.t - bar.min) / Math.max(1, bar.max - bar.min)) * (box.width - 8) + 4 + 1;
    await page.mouse.click(box.x + xpos, box.y + 5);
    facts.bar_line = bar.line;
    facts.after_bar_values = await page.locator('#detail dd').allTextContents();
    // Search narrows the list; Esc brings it back.
    const before = (await rowTexts()).length;
    await page.press('body', '/');
    facts.focused_after_slash = await page.evaluate(() => document.activeElement.id);
    await page.fill('#search', 'tool:echo'); // one input event: the count read next is its own
    await page.waitForFunction(() => document.getElementById('count').textContent !== '');
    facts.count_after_search = await page.textContent('#count');
    facts.rows_after_search = await rowTexts();
    await page.keyboard.press('Escape');
    facts.rows_after_escape = (await rowTexts()).length;
    facts.rows_before_search = before;
    // Keys: j twice from the top, k once, Enter opens.
    await page.focus('#list');
    await page.keyboard.press('Escape');
    for (const k of ['j', 'j', 'j', 'k']) await page.keyboard.press(k);
    facts.cursor_line = await page.getAttribute('.row.cur', 'data-line');
    await page.keyboard.press('Enter');
    facts.enter_values = await page.locator('#detail dd').allTextContents();
    if (shot) {
      await page.locator('.row', { hasText: 'tools/call trigger-long-running-operation' }).first().click();
      await page.screenshot({ path: shot, fullPage: false });
    }
  } else if (mode === 'xss') {
    const texts = await rowTexts();
    facts.rows = texts;
    facts.lane_text = facts.lane_labels.join('\n');
    facts.flags = await page.locator('.flag').allTextContents();
    // Open every visible row (its detail renders the payloads too), then search for one.
    const n = await page.locator('.row').count();
    facts.details = [];
    for (let i = 0; i < n; i++) {
      await page.locator('.row').nth(i).click();
      facts.details.push(await page.textContent('#detail'));
    }
    await page.fill('#search', 'onerror=alert(5)');
    await page.waitForFunction(() => document.getElementById('count').textContent !== '');
    facts.search_rows = await page.locator('.row').count();
    facts.injected = await page.evaluate(() => ({
      xss: window.__xss || null,
      scripts: document.scripts.length,
      elements: document.querySelectorAll('img,svg,iframe,object,embed,textarea,b,a,style:not(head style)').length,
    }));
  } else if (mode === 'big') {
    facts.entries = await page.evaluate(() => JSON.parse(document.getElementById('tape-data').textContent).entries.length);
    facts.first_rows = await rowTexts();
    const t = Date.now();
    await page.evaluate(() => { const l = document.getElementById('list'); l.scrollTop = l.scrollHeight; });
    await page.waitForFunction((n) => [...document.querySelectorAll('.row')].some((r) => r.dataset.line === String(n)),
      facts.entries, { timeout: 60000 });
    facts.scroll_ms = Date.now() - t;
    facts.last_rows = await page.locator('.row').evaluateAll((rs) => rs.map((r) => r.dataset.line));
    facts.rows_in_dom_at_end = facts.last_rows.length;
    const s = Date.now();
    await page.fill('#search', 'needle-99997');
    await page.waitForFunction(() => document.getElementById('count').textContent !== '', null, { timeout: 60000 });
    facts.search_ms = Date.now() - s;
    facts.search_count = await page.textContent('#count');
  } else if (mode === 'span') {
    facts.rows = await rowTexts();
    facts.at_texts = await page.locator('.row .at').allTextContents();
    facts.note_at = await page.locator('.row.note .at').allTextContents();
    facts.ticks = await page.locator('#axis .tick').allTextContents();
    // How many pixel columns of the first lane's bar rows are painted: bars spread over
    // the lane when the axis spans the traffic, a few columns when it collapsed.
    facts.bar_columns = await page.evaluate(() => {
      const cv = document.querySelector('.lane canvas');
      const r = window.devicePixelRatio || 1;
      const img = cv.getContext('2d').getImageData(0, Math.round(2 * r), cv.width, Math.round(22 * r));
      let cols = 0;
      for (let x = 0; x < img.width; x++) {
        for (let y = 0; y < img.height; y++) {
          if (img.data[(y * img.width + x) * 4 + 3]) { cols++; break; }
        }
      }
      return Math.round(cols / r);
    });
    facts.lane_box = await page.locator('.lane canvas').first().boundingBox();
    const flag = page.locator('.flag').first();
    facts.flag_box = await flag.boundingBox();
    facts.flag_title = await flag.getAttribute('title');
    await flag.click();
    facts.flag_detail = await page.textContent('#detail h2');
    await page.locator('.row', { hasText: 'tools/call' }).first().click();
    facts.detail_title = await page.textContent('#detail h2');
    facts.detail_message = await page.textContent('#detail pre.message');
  } else if (mode === 'verify') {
    facts.receipt = await page.textContent('#receipt');
    facts.diverged_lines = await page.locator('.row.diverged').evaluateAll((rs) => rs.map((r) => r.dataset.line));
    await page.locator('.row.diverged').first().click();
    facts.detail_title = await page.textContent('#detail h2');
    facts.paths = await page.locator('#detail .diffs .path').allTextContents();
    facts.diffs = await page.locator('#detail .diffs li').allTextContents();
    facts.verify_heading = await page.locator('#detail h2').allTextContents();
  }
} catch (e) {
  facts.failure = String(e && e.stack || e);
} finally {
  await ctx.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(JSON.stringify(facts));
