// Timeline view performance in headless Chromium on a generated trace of
// ~1,000,000 tasks. Not a test: prints figures, asserts nothing.
//
//   MI_BINARY=build/src/cli/model-inspector node bench/ui/bench_timeline.mjs [--tasks 1000000] [--trace FILE]
//
// Generates the trace with bench/timeline/make_timeline_trace.py (the server
// query benchmark's generator: synthetic PyTorch / Kineto JSON, two host
// threads with nested aten ops, launches and event record / wait, 2 GPUs x 4
// streams, copies, syncs, ProfilerStep annotations; cached in $TMPDIR),
// starts the real server (`model-inspector open TRACE --port 0 --no-browser`),
// mounts the view
// (web/src/timeline_view.ts, through web/test/timeline_harness.mjs) and
// measures:
//   - first render: navigation to the first frame drawn with the first window
//     (track list + window request + decode + draw), cold (the server builds
//     its timeline index on the first request) and warm (second page);
//   - frame times (requestAnimationFrame intervals) and the view's own draw
//     time per frame during scripted interaction: pan at full view, zoom in
//     from the whole trace down to ~10 µs (each step a new level of detail
//     from the server), pan while zoomed in, zoom back out; plus the window
//     requests sent, answered and dropped, and their latency.
// Targets: first render <= 2 s, median frame < 16 ms.

import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchBrowser, repoDir } from '../../web/test/lib.mjs';
import { startServer } from '../../web/test/server.mjs';
import { buildTimelineBundle, gotoTimelinePage } from '../../web/test/timeline_harness.mjs';

const args = process.argv.slice(2);
const opt = (name, def) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : def; };
const tasks = Number(opt('--tasks', '1000000'));
let trace = opt('--trace', '');
if (!trace) {
  trace = join(tmpdir(), `mi_timeline_bench_h1gen_${tasks}.json`);
  if (!existsSync(trace)) {
    console.log(`generating ${trace} (~${tasks.toLocaleString()} tasks)`);
    execFileSync('python3', [join(repoDir, 'bench/timeline/make_timeline_trace.py'), '--tasks', String(tasks), '--out', trace], { stdio: 'inherit' });
  }
}
console.log(`trace ${trace}: ${(statSync(trace).size / 1e6).toFixed(0)} MB`);

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)] ?? NaN; };
const p95 = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(s.length * 0.95))] ?? NaN; };

const tStart = Date.now();
const server = await startServer([trace], 600000);
const loadS = (Date.now() - tStart) / 1000;
const base = server.url.replace(/\?.*$/, '').replace(/\/$/, '');
const bundle = await buildTimelineBundle();
const browser = await launchBrowser();

async function firstRender(page) {
  await gotoTimelinePage(page, base, bundle, 0, '&fill=1');
  for (;;) {
    const r = await page.evaluate(() => {
      const v = window.__view;
      if (document.body.dataset.ready && document.body.dataset.ready !== '1') return { error: document.body.dataset.ready };
      const at = v?.stats.num('timeline.first_render_at');
      if (!(at > 0)) return null;
      // Where the time went: the track list request (on a cold server it builds the timeline index).
      const meta = performance.getEntriesByType('resource').find((e) => /\/timeline\?/.test(e.name));
      return { at, fetch: v.stats.samples('timeline.fetch_ms')[0], meta: meta ? meta.duration : NaN, items: v.windowOf(0).itemCount, tasks: v.windowOf(0).totalTasks };
    });
    if (r?.error) throw new Error(r.error);
    if (r) return r;
    await page.evaluate(() => new Promise((res) => requestAnimationFrame(res)));
  }
}

/** Runs in the page: scripted interaction, one step per animation frame. */
async function measure(page) {
  return page.evaluate(async () => {
    const v = window.__view;
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    const idle = async () => { while (v.busy) await new Promise((r) => setTimeout(r, 20)); await frame(); await frame(); };
    const run = async (n, step) => {
      // The view's counters and timings (base/stats.ts, "timeline.*").
      const st = v.stats, num = (k) => st.num(`timeline.${k}`), series = (k) => st.samples(`timeline.${k}`);
      const dt = [], draw = [];
      const req0 = num('requests'), win0 = num('windows'), drop0 = num('dropped'), f0 = series('fetch_ms').length;
      let last = performance.now();
      for (let k = 0; k < n; ++k) {
        step(k);
        await frame();
        const now = performance.now();
        dt.push(now - last);
        const frames = series('frame_ms');
        draw.push(frames[frames.length - 1]);
        last = now;
      }
      await idle();
      return { dt, draw, requests: num('requests') - req0, windows: num('windows') - win0, dropped: num('dropped') - drop0, fetch: series('fetch_ms').slice(f0) };
    };
    const W = v.canvas.clientWidth;
    v.zoomTo(v.state.startNs, v.state.endNs);
    await idle();
    const out = {};
    out.panFull = await run(120, () => v.panBy(-6));
    v.panBy(720);
    await idle();
    // Whole trace (~3 s) down to ~30 us: 1.1^120.
    out.zoomIn = await run(120, () => v.zoomAt(1.1, 190 + (W - 190) / 2));
    out.spanIn = v.state.endNs - v.state.startNs;
    out.panZoomed = await run(120, () => v.panBy(-9));
    out.zoomOut = await run(120, () => v.zoomAt(1 / 1.1, 190 + (W - 190) / 2));
    out.heap = performance.memory ? performance.memory.usedJSHeapSize : 0;
    return out;
  });
}

try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const cold = await firstRender(page);
  const page2 = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const warm = await firstRender(page2);
  await page.close();
  const meta = await (await fetch(`${base}/api/runs/0/timeline`)).json();
  const r = await measure(page2);
  const fmt = (x) => `${median(x.dt).toFixed(1)} / ${p95(x.dt).toFixed(1)} ms | draw ${median(x.draw).toFixed(2)} / ${p95(x.draw).toFixed(2)} ms | ${x.requests} req, ${x.windows} windows, ${x.dropped} dropped, fetch median ${median(x.fetch).toFixed(0)} ms`;
  console.log(`\n${meta.task_count.toLocaleString()} tasks on ${meta.tracks.length} tracks, ${((meta.end_ns - meta.start_ns) / 1e6).toFixed(0)} ms of trace; server start + trace import ${loadS.toFixed(1)} s`);
  console.log(`first render, cold index: ${cold.at.toFixed(0)} ms after navigation (track list ${cold.meta.toFixed(0)} ms incl. the server's index build, first window ${cold.fetch.toFixed(0)} ms: ${cold.items} items for ${cold.tasks.toLocaleString()} tasks)`);
  console.log(`first render, warm:       ${warm.at.toFixed(0)} ms after navigation (track list ${warm.meta.toFixed(0)} ms, first window ${warm.fetch.toFixed(0)} ms)`);
  console.log('frame interval median / p95 | view draw time median / p95 | window requests:');
  console.log(`  pan, whole trace:      ${fmt(r.panFull)}`);
  console.log(`  zoom in to ${(r.spanIn / 1e3).toFixed(0)} us:   ${fmt(r.zoomIn)}`);
  console.log(`  pan, zoomed in:        ${fmt(r.panZoomed)}`);
  console.log(`  zoom out:              ${fmt(r.zoomOut)}`);
  console.log(`  JS heap ${(r.heap / 1e6).toFixed(0)} MB`);
  const all = [...r.panFull.dt, ...r.zoomIn.dt, ...r.panZoomed.dt, ...r.zoomOut.dt];
  const allDraw = [...r.panFull.draw, ...r.zoomIn.draw, ...r.panZoomed.draw, ...r.zoomOut.draw];
  console.log('\n| figure | target | ours |');
  console.log('|---|---|---|');
  console.log(`| first render (cold / warm) | <= 2000 ms | ${cold.at.toFixed(0)} / ${warm.at.toFixed(0)} ms |`);
  console.log(`| frame interval, all interaction (median / p95) | < 16 ms median | ${median(all).toFixed(1)} / ${p95(all).toFixed(1)} ms |`);
  console.log(`| view draw time per frame (median / p95) | | ${median(allDraw).toFixed(2)} / ${p95(allDraw).toFixed(2)} ms |`);
  await page2.close();
} finally {
  await browser.close();
  await server.stop();
}
