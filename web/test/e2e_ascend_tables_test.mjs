// End-to-end test of the CANN profiler tables in the UI: the real server
// (`model-inspector open`, MI_BINARY) with test/fixtures/ascend/ge_profiled
// (a GE graph with a hand-written profile of its ops; the figures below are
// computed by hand in its README), driven in Debian's Chromium at 1024x700
// and at 1920x1080:
//   - node details (the details panel) of conv1 show its L2 hit rate, 85.0%
//     (victim 10.0%, 2 tasks) and its measured memory, 3.1 MiB (3136 KiB), named
//     as static_op_mem's; relu1's hit rate is N/A (its only row writes N/A);
//   - the analyses tab shows the L2 cache table (6 task rows) and the
//     profiled memory's static ops (5 rows) and graph (TOTAL 4704 KiB);
//   - the memory analysis of the compiled level says its peak comes from
//     static_op_mem.
// Waited on through the debug surface and the DOM, never by sleeps.
// Screenshots: ui_ascend_details_<w>.png, ui_ascend_l2_<w>.png.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { artifactsDir, check, done, eq, fail, launchBrowser, poll, repoDir } from './lib.mjs';
import { startServer } from './server.mjs';

const art = artifactsDir();
mkdirSync(art, { recursive: true });
const server = await startServer([join(repoDir, 'test/fixtures/ascend/ge_profiled')]);
const browser = await launchBrowser();

const apiJson = (page, path) => page.evaluate(async (p) => (await fetch(p)).json(), path);

async function pick(page, id) {
  const before = await page.evaluate(() => window.__miDebug.view('analyses').state.results);
  await page.selectOption('#analyses-tools select.analysis-picker', id);
  return poll(page, ([i, n]) => {
    const v = window.__miDebug.view('analyses');
    return v.state.id === i && !v.state.busy && v.state.results > n && v.state;
  }, [id, before], 60000, `the result of ${id}`);
}

/** The rows (cell texts, header first) of the analysis table titled `suffix`. */
const tableRows = (page, suffix) => page.$$eval(`#analyses section.analysis-block[data-title$="${suffix}"] tr`,
  (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));

async function nodeId(page, name) {
  const found = await apiJson(page, `/api/runs/0/levels/compiled/search?q=${name}&mode=text`);
  const m = found.matches.find((x) => x.name === name);
  if (!m) fail(`no node ${name} on the compiled level`);
  return m.id;
}

try {
  for (const [w, h] of [[1024, 700], [1920, 1080]]) {
    const page = await browser.newPage({ viewport: { width: w, height: h } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}#run=0&level=compiled`);
    await poll(page, () => document.body.dataset.ready === '1', null, 60000, 'the run');
    const conv = await nodeId(page, 'conv1');
    await page.goto(`${server.url}#run=0&level=compiled&node=${conv}`);
    const fields = await poll(page, () => {
      const t = document.querySelector('#details .node-name')?.textContent ?? '';
      if (!t.includes('conv1')) return null;
      const rows = [...document.querySelectorAll('#details table tr')].filter((tr) => tr.cells.length === 2);
      const f = Object.fromEntries(rows.map((tr) => [tr.cells[0].textContent, tr.cells[1].textContent]));
      return f['L2 hit rate'] ? f : null;
    }, null, 60000, `${w}: conv1's details with its L2 hit rate`);
    eq(fields['L2 hit rate'], '85.0% (victim 10.0%, 2 task(s), l2_cache)', `${w}: conv1's L2 rates, as the README computes them`);
    // 3136 KiB = 3.0625 MiB, shown to one decimal.
    eq(fields['measured memory'], '3.1 MiB (static_op_mem)', `${w}: conv1's measured memory from static_op_mem`);
    const box = await page.$eval('#details', (d) => { const r = d.getBoundingClientRect(); return [r.width, r.height]; });
    check(box[0] > 150 && box[1] > 100, `${w}: the details panel is on screen (${box})`);
    await page.screenshot({ path: join(art, `ui_ascend_details_${w}.png`) });

    const relu = await nodeId(page, 'relu1');
    await page.goto(`${server.url}#run=0&level=compiled&node=${relu}`);
    const reluFields = await poll(page, () => {
      const t = document.querySelector('#details .node-name')?.textContent ?? '';
      if (!t.includes('relu1')) return null;
      const rows = [...document.querySelectorAll('#details table tr')].filter((tr) => tr.cells.length === 2);
      const f = Object.fromEntries(rows.map((tr) => [tr.cells[0].textContent, tr.cells[1].textContent]));
      return f['L2 hit rate'] ? f : null;
    }, null, 60000, `${w}: relu1's details`);
    eq(reluFields['L2 hit rate'], 'N/A (victim 20.0%, 1 task(s), l2_cache)', `${w}: relu1's hit rate is N/A`);

    await page.goto(`${server.url}#run=0&tab=analyses`);
    await poll(page, () => {
      const v = window.__miDebug.view('analyses');
      return v && v.state.list.length && !v.state.busy && v.state;
    }, null, 60000, `${w}: the analysis list`);
    await pick(page, 'cache_hit_rates');
    const tasks = await tableRows(page, '/ tasks');
    eq(tasks.length - 1, 6, `${w}: one L2 row per task`);
    const col = tasks[0].indexOf('node_name') >= 0 ? tasks[0].indexOf('node_name') : tasks[0].indexOf('node name');
    check(col >= 0 && tasks.slice(1).every((r) => r[col] !== ''), `${w}: every L2 row names its node (${tasks[0]})`);
    await page.screenshot({ path: join(art, `ui_ascend_l2_${w}.png`) });
    await pick(page, 'profiled_memory');
    eq((await tableRows(page, '/ static op memory')).length - 1, 5, `${w}: five static ops (TOTAL apart)`);
    const graphs = await tableRows(page, '/ static graphs');
    eq(graphs.length - 1, 1, `${w}: one static graph`);
    const memory = await pick(page, 'memory');
    eq(memory.result.measured.peak_source, 'static_op_mem', `${w}: the memory view's peak is the measured one`);
    eq(memory.result.measured.peak_bytes, 4704 * 1024, `${w}: GE's planned TOTAL`);
    const measuredBlock = await page.$$eval('#analyses section.analysis-block', (s) => s.map((x) => x.dataset.title));
    check(measuredBlock.some((t) => t && t.endsWith('/ measured')), `${w}: the memory view has a measured section (${measuredBlock})`);
    eq(errors.length, 0, `${w}: no page errors (${errors})`);
    await page.close();
  }
} catch (e) {
  fail(e.stack || String(e));
} finally {
  await browser.close();
  await server.stop();
}
done('e2e_ascend_tables_test');
