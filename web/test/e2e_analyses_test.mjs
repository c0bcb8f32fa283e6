// End-to-end test of the generic analysis view (views/analyses/): the real
// server (`model-inspector open`, MI_BINARY) with the two-rank Kineto
// fixture (test/fixtures/multirank, run 0) and the ORT ResNet-18 run (run
// 1), driven in Debian's Chromium:
//   - the picker lists GET /analysis-list, the analyses that do not apply
//     (memory and validation need a model; run 0 has none) disabled;
//   - every analysis that applies, picked in turn, is drawn from its
//     GET /analyses/{id} answer: this test walks the JSON on its own and
//     expects one table per non-empty array of objects with as many rows,
//     and one field list per object with scalars, in the same order;
//   - parameters: idle/overlap with gap_threshold_ns=15000 lists the four
//     gaps of 15 us and more (test/fixtures/multirank/README.md: rank 0's
//     kernels leave gaps of 20 and 20 us, rank 1's of 15 and 22 us); a bad
//     value shows the server's message naming the parameter;
//   - load balance (its view is the generic one): the ranks' busy, compute
//     and idle time and the slowest rank as the fixture README sums them;
//   - a task id in a table selects that task in the store;
//   - on the ResNet run, memory and validation apply and render.
// Waited on through the debug surface (window.__miDebug.view('analyses')),
// never by sleeps. Screenshots: ui_analyses.png, ui_analyses_load_balance.png.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { artifactsDir, check, done, eq, fail, launchBrowser, poll, repoDir } from './lib.mjs';
import { startServer } from './server.mjs';

const art = artifactsDir();
mkdirSync(art, { recursive: true });
const server = await startServer([join(repoDir, 'test/fixtures/multirank'), '--run', join(repoDir, 'test/fixtures/resnet18/ort_all')]);
const browser = await launchBrowser();

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const isObjectArray = (v) => Array.isArray(v) && v.length > 0 && v.every(isObject);

/** The blocks a result should be drawn as: [kind, rows] in order (this test's own reading of the layout rules). */
function expectedBlocks(value) {
  const out = [];
  const walk = (o) => {
    const scalars = Object.values(o).filter((v) => !isObject(v) && !isObjectArray(v)).length;
    if (scalars) out.push(['fields', scalars]);
    for (const v of Object.values(o)) {
      if (isObject(v)) walk(v);
      else if (isObjectArray(v)) out.push(['table', Math.min(v.length, 500)]);
    }
  };
  if (isObject(value)) walk(value);
  else if (isObjectArray(value)) out.push(['table', Math.min(value.length, 500)]);
  else out.push(['fields', 1]);
  return out;
}

/** The blocks on screen: [kind, rows] from the DOM. */
const drawnBlocks = (page) => page.$$eval('#analyses section.analysis-block', (secs) => secs.map((s) => {
  const t = s.querySelector('table');
  return t.classList.contains('analysis-table') ? ['table', t.rows.length - 1] : ['fields', t.rows.length];
}));

/** Picks analysis `id` in the tools and waits for its result. */
async function pick(page, id) {
  const before = await page.evaluate(() => window.__miDebug.view('analyses').state.results);
  await page.selectOption('#analyses-tools select.analysis-picker', id);
  return poll(page, ([i, n]) => {
    const v = window.__miDebug.view('analyses');
    return v.state.id === i && !v.state.busy && v.state.results > n && v.state;
  }, [id, before], 60000, `the result of ${id}`);
}

const apiJson = (page, path) => page.evaluate(async (p) => {
  const r = await fetch(p);
  return { status: r.status, body: await r.json() };
}, path);

try {
  const page = await browser.newPage({ viewport: { width: 1500, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${server.url}#run=0&tab=analyses`);
  if (!(await page.$('#analyses'))) fail('the page has no analyses tab: the binary embeds an older UI; rebuild model-inspector');
  await poll(page, () => document.body.dataset.ready === '1', null, 60000, 'the runs');
  const listed = (await apiJson(page, '/api/runs/0/analysis-list')).body.analyses;
  check(listed.length >= 8, `the server lists the analyses (${listed.length})`);
  const first = await poll(page, () => {
    const v = window.__miDebug.view('analyses');
    return v && v.state.list.length && !v.state.busy && v.state.results > 0 && v.state;
  }, null, 60000, 'the analysis list and the first result');
  const options = await page.$$eval('#analyses-tools select.analysis-picker option', (o) => o.map((x) => [x.value, x.disabled]));
  eq(JSON.stringify(options), JSON.stringify(listed.map((a) => [a.id, !a.applies])), 'one option per analysis, those that do not apply disabled');
  eq(first.id, listed.find((a) => a.applies).id, 'the first analysis that applies is shown');
  check(!listed.find((a) => a.id === 'memory').applies, 'memory does not apply to a trace without a model');

  // Every analysis that applies: the drawn blocks are the JSON's.
  for (const a of listed.filter((x) => x.applies)) {
    const st = await pick(page, a.id);
    const json = (await apiJson(page, `/api/runs/0/analyses/${a.id}`)).body;
    eq(JSON.stringify(st.result), JSON.stringify(json), `${a.id}: the view shows GET /analyses/${a.id}`);
    eq(JSON.stringify(await drawnBlocks(page)), JSON.stringify(expectedBlocks(json)), `${a.id}: one block per object / array of objects`);
    const title = await page.$eval('#analyses section.analysis-block h3', (h) => h.textContent);
    check(title.startsWith(a.title), `${a.id}: headed by its title (${title})`);
  }

  // Load balance (its view is the generic one): the two ranks' busy time
  // and the slowest rank, as the fixture README sums them (rank 0: 30 + 10
  // + 5 = 45 us, rank 1: 50 + 8 + 4 = 62 us; mean 53.5 us, rank 1 8.5 us
  // above it).
  if (check(listed.some((a) => a.id === 'load_balance'), 'load_balance is registered')) {
    await pick(page, 'load_balance');
    const rows = await page.$$eval('#analyses section.analysis-block[data-title$="/ sources"] tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    const col = (name) => rows[0].indexOf(name);
    eq(JSON.stringify(rows.slice(1).map((r) => [r[col('name')], r[col('busy')], r[col('compute')], r[col('idle')]])),
      JSON.stringify([['rank 0', '45.0 µs', '40.0 µs', '40.0 µs'], ['rank 1', '62.0 µs', '58.0 µs', '37.0 µs']]), 'load balance: busy, compute, idle per rank');
    const busy = await page.$$eval('#analyses section.analysis-block[data-title$="/ imbalance / busy"] tr',
      (trs) => Object.fromEntries(trs.map((tr) => [tr.cells[0].textContent, tr.cells[1].textContent])));
    eq(busy['slowest name'], 'rank 1', 'load balance: rank 1 is the slowest');
    eq(busy.mean, '53.5 µs', 'load balance: mean busy time');
    eq(busy['slowest over mean'], '8.5 µs', 'load balance: how far above the mean');
    await page.screenshot({ path: join(art, 'ui_analyses_load_balance.png') });
  }

  // Parameters: gaps of 15 us and more.
  await pick(page, 'idle_overlap');
  await page.fill('#analyses-tools input[name="gap_threshold_ns"]', '15000');
  await page.selectOption('#analyses-tools select[name="clock"]', 'raw');
  let n = await page.evaluate(() => window.__miDebug.view('analyses').state.results);
  await page.click('#analyses-tools button');
  const idle = await poll(page, (k) => { const v = window.__miDebug.view('analyses'); return !v.state.busy && v.state.results > k && v.state; }, n, 60000, 'idle/overlap with parameters');
  eq(JSON.stringify(idle.params), JSON.stringify({ clock: 'raw', gap_threshold_ns: '15000' }), 'the changed parameters are sent');
  eq(idle.result.gaps_over_threshold, 4, 'four gaps of 15 us and more (fixture README)');
  const gapRows = await page.$$eval('#analyses section.analysis-block[data-title$="/ gaps"] tr', (r) => r.length - 1);
  eq(gapRows, 4, 'the gaps table has four rows');
  await page.screenshot({ path: join(art, 'ui_analyses.png') });

  // A bad value: the server's message, naming the parameter.
  await page.fill('#analyses-tools input[name="gap_threshold_ns"]', 'abc');
  await page.click('#analyses-tools button');
  const bad = await poll(page, () => { const v = window.__miDebug.view('analyses'); return !v.state.busy && v.state.error; }, null, 30000, 'the error');
  check(bad.includes("parameter 'gap_threshold_ns'"), `the error names the parameter (${bad})`);
  check(await page.$eval('#analyses .analysis-error', (e) => e.textContent.includes('gap_threshold_ns')), 'the error is shown');

  // A task id selects its task.
  await pick(page, 'critical_path');
  const link = await page.$('#analyses section.analysis-block[data-title$="/ steps"] a.task-link');
  if (check(!!link, 'the critical path steps link their tasks')) {
    const id = Number(await link.textContent());
    await link.click();
    const sel = await poll(page, () => { const s = window.__miDebug.state().selection; return s && s.kind === 'task' && s; }, null, 30000, 'task selection');
    eq(JSON.stringify(sel.ids), JSON.stringify([id]), 'clicking a task id selects that task');
  }

  // The ResNet run: the graph analyses apply.
  await page.evaluate(() => { location.hash = '#run=1&tab=analyses'; });
  await poll(page, () => window.__miDebug.view('analyses').state.run === 1 && window.__miDebug.view('analyses').state.list.length > 0, null, 60000, 'run 1 listed');
  const mem = await pick(page, 'memory');
  eq(mem.result.level, 'compiled', 'memory: the compiled level by default (what ran)');
  const memJson = (await apiJson(page, '/api/runs/1/levels/compiled/memory')).body;
  eq(JSON.stringify(mem.result), JSON.stringify(memJson), 'memory: the same document as the memory route');
  const val = await pick(page, 'validation');
  check(val.result.schema === 'model-inspector/check/1', 'validation renders');
  eq(errors.join('; '), '', 'no page errors');
  await page.close();
} finally {
  await browser.close();
  await server.stop();
}
done('e2e_analyses_test');
