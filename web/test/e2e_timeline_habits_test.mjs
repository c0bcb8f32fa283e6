// End-to-end test of the timeline habits users bring from Perfetto and the
// TensorBoard profiler, against the real server (`model-inspector open`,
// MI_BINARY, embedded UI) with three runs — the bundled demo (ORT
// ResNet-18), a trace-only PyTorch-profiler (Kineto) trace with allocator
// records, and a torch_npu run directory — at 1024x700 and 1920x1080:
//   - compare never offers the run on screen (and offers the other two);
//   - the timeline opens on the steady-state steps: the view is the
//     server's default_window (the step_breakdown analysis' steady window,
//     setup before the first ProfilerStep / model_run skipped), the setup is
//     one click away ("setup") and "steps" brings the steps back; a link
//     with an explicit window (sel=range:A-B) opens on that window instead;
//   - pinning: a click on a track's pin mark moves it to a "pinned" group
//     at the top, pin= is in the URL, and a new page with that URL opens
//     with it pinned;
//   - counter tracks: one lane per memory series of the run (Kineto
//     [memory] events; Ascend memory_record.csv), the value drawn at a
//     row's time equals that row of memory_record.csv (read here), and the
//     line's colour is on screen;
//   - the per-step breakdown: one table row per step of the registry's
//     step_breakdown analysis, its figures summing to the wall time, drawn
//     over the plot.
// At 1024x700 the bottom panel is maximised (panel=bottom in the link): the
// split layout leaves the timeline one row there.
// Waited on by state (window.__miDebug), never by sleeps. Screenshots:
// ui_timeline_habits_<run>_<w>x<h>.png.

import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifactsDir, check, colorDistance, done, eq, fail, frames, launchBrowser, pixelsAt, poll, repoDir } from './lib.mjs';
import { startServer } from './server.mjs';

const art = artifactsDir();
mkdirSync(art, { recursive: true });

const npuDir = join(repoDir, 'test/fixtures/samples/ascend/msinsight_pt_text_level1_rank0');
const runs = [
  { name: 'demo', path: join(repoDir, 'test/fixtures/resnet18/ort_all') },
  { name: 'kineto', path: join(repoDir, 'test/fixtures/samples/traces/kineto/tracelens/h100__gaunernst_bert-small-uncased__1016001.json.gz') },
  { name: 'torch_npu', path: npuDir },
];
const viewports = [{ width: 1024, height: 700 }, { width: 1920, height: 1080 }];
const kCounterLine = [46, 125, 190];
const kPinColor = [0xd2, 0x69, 0x1e];

// memory_record.csv's APP rows (Total Reserved only), read here on their own.
const appReserved = [];
{
  const lines = readFileSync(join(npuDir, 'ASCEND_PROFILER_OUTPUT/memory_record.csv'), 'utf8').trim().split('\n');
  const header = lines[0].split(',');
  const ci = (n) => header.indexOf(n);
  for (const line of lines.slice(1)) {
    const c = line.split(',');
    if (c[ci('Component')] !== 'APP') continue;
    const [us, frac = ''] = c[ci('Timestamp(us)')].trim().split('.');
    const ns = BigInt(us) * 1000n + BigInt((frac + '000').slice(0, 3));
    appReserved.push({ ns, bytes: Math.round(parseFloat(c[ci('Total Reserved(MB)')]) * 1048576) });
  }
  if (appReserved.length < 3) fail('memory_record.csv: expected APP rows');
}

const server = await startServer(runs.map((r) => r.path));
console.log(`  server at ${server.url}`);
const browser = await launchBrowser();

/** The timeline has its first window and nothing in flight. */
const timelineIdle = (page) => poll(page, () => {
  const tl = window.__miDebug?.view('timeline');
  return tl && tl.windowOf(0) !== null && !tl.busy && tl.state.opened !== null;
}, null, 60000, 'the timeline window');

async function open(hash, viewport) {
  const page = await browser.newPage({ viewport });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  await page.goto(server.url + hash);
  await timelineIdle(page);
  await frames(page);
  return page;
}

const apiJson = (page, path) => page.evaluate(async (p) => (await fetch(p)).json(), path);
const tlState = (page) => page.evaluate(() => window.__miDebug.view('timeline').state);
const lanes = (page) => page.evaluate(() => window.__miDebug.view('timeline').laneBoxes());
const canvasBox = (page) => page.evaluate(() => {
  const r = window.__miDebug.view('timeline').canvas.getBoundingClientRect();
  return { x: r.left, y: r.top, w: r.width, h: r.height };
});

try {
  for (const vp of viewports) {
    for (let run = 0; run < runs.length; ++run) {
      const tag = `${runs[run].name}_${vp.width}x${vp.height}`;
      console.log(`  ${tag}`);
      // At 1024x700 the bottom panel is maximised (panel=bottom): in the split
      // layout the timeline has room for one row there.
      const extra = vp.width < 1200 ? '&panel=bottom' : '';
      const page = await open(`#run=${run}&tab=timeline${extra}`, vp);
      const meta = await apiJson(page, `/api/runs/${run}/timeline`);
      const dw = meta.default_window;

      // Compare: the other runs, never this one.
      const offered = await page.$$eval('#tl-compare option', (os) => os.map((o) => o.value).filter((v) => v !== ''));
      eq(offered.join(','), [0, 1, 2].filter((r) => r !== run).join(','), `${tag}: compare offers the other runs only`);

      // Opens on the steady-state steps: every run here has setup before its first step.
      check(dw && dw.setup_ns > 0 && dw.steady_steps > 0, `${tag}: the run has setup before its steps (${JSON.stringify(dw)})`);
      const st = await tlState(page);
      eq(st.opened.startNs, dw.start_ns, `${tag}: opened at the steady window's start`);
      eq(st.opened.endNs, dw.end_ns, `${tag}: opened at the steady window's end`);
      const span = dw.end_ns - dw.start_ns;
      check(Math.abs(st.startNs - (dw.start_ns - span * 0.01)) <= 2 && Math.abs(st.endNs - (dw.end_ns + span * 0.01)) <= 2,
        `${tag}: view ${st.startNs}-${st.endNs} is the steady window ${dw.start_ns}-${dw.end_ns} with 1% margins`);
      check(st.startNs > meta.start_ns, `${tag}: the setup (from ${meta.start_ns}) is off screen`);
      // The steps' first step starts where the window starts (a marked step, not a guess).
      const steps = await apiJson(page, `/api/runs/${run}/analyses/step_breakdown`);
      const firstSteady = steps.steps.find((s) => s.steady);
      eq(firstSteady.start_ns, dw.start_ns, `${tag}: the window starts at ${firstSteady.name}`);
      const setupRow = steps.steps.find((s) => !s.steady);
      check(setupRow && setupRow.name.startsWith('before '), `${tag}: the left-out step is the setup before the first step`);
      eq(await page.$eval('#mi-tl-opened', (e) => e.textContent.includes('steady state')), true, `${tag}: the toolbar says it opened on the steady state`);

      // Setup one click away, steps back.
      await page.click('#mi-tl-setup');
      await timelineIdle(page);
      let s2 = await tlState(page);
      check(s2.startNs <= meta.start_ns && s2.endNs >= dw.start_ns && s2.endNs < dw.start_ns + (dw.start_ns - meta.start_ns) * 0.05 + 2,
        `${tag}: "setup" shows ${meta.start_ns}..${dw.start_ns} (view ${s2.startNs}-${s2.endNs})`);
      await page.click('#mi-tl-steady');
      await timelineIdle(page);
      s2 = await tlState(page);
      check(Math.abs(s2.startNs - st.startNs) <= 2 && Math.abs(s2.endNs - st.endNs) <= 2, `${tag}: "steps" returns to the steady window`);

      // Counter tracks: one lane per series.
      const ls = await lanes(page);
      const counterLanes = ls.filter((l) => l.counter);
      eq(counterLanes.length, (meta.counters ?? []).length, `${tag}: one counter lane per memory series`);
      if (runs[run].name !== 'demo') check(counterLanes.length > 0, `${tag}: the run has memory counter tracks`);

      // Pin the last task track: it moves to the top.
      const taskLanes = ls.filter((l) => !l.counter && l.source === 0 && !l.collapsed);
      const target = taskLanes[taskLanes.length - 1];
      const box = await canvasBox(page);
      // Bring it into sight first (scrolling the lanes), then click its pin mark.
      await page.evaluate((y) => window.__miDebug.view('timeline').panBy(0, -Math.max(0, y - 200)), target.y);
      await frames(page);
      const t2 = (await lanes(page)).find((l) => l.track === target.track && !l.counter);
      await page.mouse.click(box.x + 7, box.y + t2.y + 3 + 8);
      await poll(page, (id) => window.__miDebug.state().timelinePins.includes(id), target.track, 10000, 'the pin in the state');
      await poll(page, (id) => location.hash.includes(`pin=${id}`), target.track, 10000, 'pin= in the URL');
      await page.evaluate(() => window.__miDebug.view('timeline').panBy(0, 100000));
      await frames(page);
      const pinnedLanes = await lanes(page);
      eq(pinnedLanes[0].track, target.track, `${tag}: the pinned track is the first lane`);
      eq(pinnedLanes[0].group, 'pinned', `${tag}: in the "pinned" group`);
      check(pinnedLanes[0].pinned && pinnedLanes.filter((l) => l.track === target.track && !l.counter).length === 1,
        `${tag}: drawn once, pinned`);
      const hash = await page.evaluate(() => location.hash);

      // Counter values against memory_record.csv (torch_npu): APP's reserved series.
      if (runs[run].name === 'torch_npu') {
        const k = meta.counters.findIndex((c) => c.component === 'APP' && c.figure === 'reserved');
        check(k >= 0, `${tag}: an APP reserved series`);
        for (const row of [appReserved[0], appReserved[Math.floor(appReserved.length / 2)], appReserved[appReserved.length - 1]]) {
          const v = await page.evaluate(([track, t]) => window.__miDebug.view('timeline').counterValueAt(track, t), [-1 - k, Number(row.ns)]);
          eq(v, row.bytes, `${tag}: APP reserved at ${row.ns} = memory_record.csv's ${row.bytes} B`);
        }
      }

      // The step breakdown table.
      await page.click('#mi-tl-steps-btn');
      await poll(page, () => document.querySelectorAll('#mi-tl-steps tbody tr').length > 0, null, 20000, 'the step table');
      const rows = await page.$$eval('#mi-tl-steps tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
      eq(rows.length, steps.steps.length + (steps.steady_steps > 1 ? 1 : 0), `${tag}: a row per step (+ the steady total)`);
      for (const s of steps.steps) {
        eq(s.compute_ns + s.communication_ns + s.memcpy_ns + s.host_ns + s.idle_ns, s.wall_ns, `${tag}: ${s.name}'s categories sum to its wall time`);
      }
      check(rows[0][0].includes('(setup)'), `${tag}: the first row is the setup`);

      // Screenshot: the step table over the plot, the pin mark, the counter line.
      const png = await page.screenshot({ path: join(art, `ui_timeline_habits_${tag}.png`) });
      const panel = await page.$eval('#mi-tl-steps', (e) => { const r = e.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width, h: r.height }; });
      check(panel.w > 200 && panel.h > 40 && panel.x + panel.w <= vp.width + 1, `${tag}: the step table is on screen (${JSON.stringify(panel)})`);
      const box2 = await canvasBox(page);
      const pinRow = (await lanes(page))[0];
      const [pinPx] = await pixelsAt(page, png, [[box2.x + 7, box2.y + pinRow.y + 3 + 8]]);
      check(colorDistance(pinPx, kPinColor) < 40, `${tag}: the pin mark is drawn filled (${pinPx})`);
      if (counterLanes.length) {
        // Close the table, unpin, scroll the series with the most points into
        // sight and find its fill (the line's colour at 28% over the lane) in the plot.
        await page.click('#mi-tl-steps-btn');
        await page.evaluate(() => window.__miDebug.view('timeline').setPins([]));
        let most = 0;
        meta.counters.forEach((c, k) => { if (c.t.length > meta.counters[most].t.length) most = k; });
        const cl = (await lanes(page)).find((l) => l.counter && l.track === -1 - most);
        await page.evaluate((y) => window.__miDebug.view('timeline').panBy(0, -Math.max(0, y - 100)), cl.y);
        await frames(page);
        const box3 = await canvasBox(page);
        const c2 = (await lanes(page)).find((l) => l.track === cl.track && l.counter);
        check(c2.y > 26 && c2.y + c2.h <= box3.h, `${tag}: the counter lane is in sight (${c2.y}+${c2.h} of ${box3.h})`);
        const shot = await page.screenshot({ path: join(art, `ui_timeline_habits_${tag}_counters.png`) });
        const pts = [];
        for (let x = box3.x + 200; x < box3.x + box3.w - 4; x += 3) for (let y = c2.y + 4; y < c2.y + c2.h - 3; y += 2) pts.push([x, box3.y + y]);
        const px = await pixelsAt(page, shot, pts);
        const fill = [0, 1, 2].map((i) => Math.round(0.28 * kCounterLine[i] + 0.72 * [243, 244, 246][i]));
        const hits = px.filter((p) => colorDistance(p, fill) < 16 || colorDistance(p, kCounterLine) < 30).length;
        check(hits > pts.length / 20, `${tag}: the counter is drawn in its lane (${hits} of ${pts.length} pixels)`);
      }
      check(page.errors.length === 0, `${tag}: no page errors (${page.errors.join('; ')})`);
      await page.close();

      // A new page with the URL: the track is pinned again.
      const again = await open(hash, vp);
      const l2 = await lanes(again);
      eq(l2[0].track, target.track, `${tag}: the link reopens with the track pinned`);
      await again.close();
    }
  }

  // An explicit window in a link wins over the steady window.
  {
    const page0 = await open('#run=0&tab=timeline', viewports[0]);
    const meta = await apiJson(page0, '/api/runs/0/timeline');
    await page0.close();
    const a = meta.start_ns, b = meta.start_ns + Math.round((meta.default_window.start_ns - meta.start_ns) / 2);
    const page = await open(`#run=0&tab=timeline&sel=range:${a}-${b}`, viewports[0]);
    await poll(page, ([a, b]) => {
      const s = window.__miDebug.view('timeline').state;
      return s.startNs <= a && s.endNs >= b && s.endNs - s.startNs < 1.5 * (b - a);
    }, [a, b], 20000, 'the link\'s window');
    const s = await tlState(page);
    check(s.endNs < meta.default_window.start_ns, `link window ${a}-${b}: the view (${s.startNs}-${s.endNs}) is the link's, not the steady window`);
    await page.close();
  }
} finally {
  await browser.close();
  await server.stop();
}
done('e2e_timeline_habits_test');
