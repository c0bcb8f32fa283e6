// UI performance figures in headless Chromium (SwiftShader WebGL2, no GPU),
// side by side with Netron's measured in the same browser. Not a test: it
// prints figures and asserts nothing.
//
// Server mode (default): generates synthetic transformer-like ONNX models
// (bench/ui/make_big_model.py; 10k and 100k nodes), starts the real server
// (`model-inspector open MODEL --port 0 --no-browser`) for each, and
// measures, for the default view (at most 2,000 visible items, groups
// folded) and the whole graph (?max_items=0, everything expanded):
//   - navigation → first complete render (page.goto to the first frame drawn
//     with the layout: fetch + decode + scene + upload + draw);
//   - frame times (requestAnimationFrame intervals) during a scripted pan at
//     reading zoom, a pan of the whole graph (fit; the silhouette level of
//     detail is on there), and a zoom in/out; plus the renderer's own CPU
//     time per frame.
//
//   MI_BINARY=build/src/cli/model-inspector node bench/ui/bench_ui.mjs [--sizes 10000,100000]
//
// Demo mode: the first screen of the demo run, now and as before (fold to
// the item budget, top to bottom), side by side:
//   MI_BINARY=build/src/cli/model-inspector node bench/ui/bench_ui.mjs --demo
//
// File mode (no server; layouts from `render --format binary --max-items 0`):
//   node bench/ui/bench_ui.mjs FILE.bin [FILE.bin ...]      (web/ must be built)
//
// Caveat: SwiftShader renders WebGL on the CPU, on a shared 2-core machine,
// so frame times are pessimistic (a tiny graph already takes ~16-65 ms a
// frame there); Netron's figures were taken in the same headless Chromium on
// this kind of machine (SVG/DOM, which SwiftShader does not affect much).

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchBrowser, repoDir, webDir } from '../../web/test/lib.mjs';

// Netron, measured in the same headless Chromium: 23.5 s to paint the
// 10,400-node synthetic graph (1.3 GB renderer memory), panning at about 6
// frames per second.
const kNetron = { nodes: 10400, firstPaintMs: 23500, panFrameMs: 1000 / 6 };

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const p95 = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length * 0.95)]; };

/** Runs in the page: scripted pan / zoom, rAF intervals and renderer CPU time. */
async function measure(page) {
  return page.evaluate(async () => {
    // The main graph pane and the graph view's stats, through the debug surface (web/README.md).
    const D = window.__miDebug, p = D.view('graph').pane(0), cam = p.cam, l = p.scene.layout;
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    const run = async (n, step) => {
      const dt = [], cpu = [];
      let last = performance.now();
      for (let k = 0; k < n; ++k) {
        step(k);
        await frame();
        const now = performance.now();
        dt.push(now - last); cpu.push(p.renderer.lastFrameMs);
        last = now;
      }
      return { dt, cpu };
    };
    cam.centreOn(l.width / 2, l.height / 2, 1);
    await frame(); await frame();
    const pan = await run(120, () => cam.panBy(-7, -11));
    p.fit();
    await frame(); await frame();
    const lod = p.scene.lodStats(cam.scale);
    const panFar = await run(60, () => cam.panBy(0, -5));
    const zoom = await run(80, (k) => cam.zoomAt(k < 40 ? 1.12 : 1 / 1.12, cam.viewW / 2, cam.viewH / 2));
    const stats = D.stats();
    return {
      items: l.itemCount, nodes: l.nodeCount, edges: l.edgeCount, segs: p.scene.segCount, frames: l.frameCount,
      pan, panFar, zoom, lod, fitScale: cam.scale, load: { fetch: stats['graph.load_fetch_ms'] ?? 0, scene: stats['graph.load_scene_ms'] ?? 0 },
      firstRenderAt: stats['graph.first_render_at'],
      bytes: l.stringData.buffer.byteLength, heap: performance.memory ? performance.memory.usedJSHeapSize : 0,
    };
  });
}

const fmt = (x) => `median ${median(x.dt).toFixed(1)} ms (p95 ${p95(x.dt).toFixed(1)}), renderer CPU ${median(x.cpu).toFixed(2)} ms`;

function report(label, firstMs, r) {
  console.log(`${label}: ${r.nodes} layout nodes, ${r.items} items, ${r.edges} edges (${r.segs} segments), ${r.frames} frames, layout ${(r.bytes / 1e6).toFixed(1)} MB`);
  console.log(`  first complete render   ${firstMs} ms after navigation (fetch ${r.load.fetch.toFixed(0)} ms, scene ${r.load.scene.toFixed(0)} ms)`);
  console.log(`  pan at zoom 1:          ${fmt(r.pan)}`);
  console.log(`  pan, whole graph:       ${fmt(r.panFar)}  [fit scale ${r.fitScale.toFixed(4)}: ${r.lod.silhouettes} silhouettes, ${r.lod.hiddenItems} items under them]`);
  console.log(`  zoom in/out:            ${fmt(r.zoom)}`);
  if (r.heap) console.log(`  JS heap                 ${(r.heap / 1e6).toFixed(0)} MB`);
}

const args = process.argv.slice(2);
const browser = await launchBrowser();
const rows = [];
try {
  if (args[0] === '--demo') {
    // The demo's first screen (`model-inspector open` with no path), now and
    // as it was before the overview (?fold=budget: groups
    // unfolded to the 2,000-item budget, top to bottom), at the two window
    // sizes the browser tests use; navigation to the first frame drawn.
    const { startServer } = await import('../../web/test/server.mjs');
    const server = await startServer([]);
    try {
      console.log('| demo first screen | window | items | direction | fit scale | first render (median of 5) |');
      console.log('|---|---|---|---|---|---|');
      for (const vp of [{ width: 1024, height: 700 }, { width: 1920, height: 1080 }]) {
        for (const [what, suffix] of [['previous (budget fold, top to bottom)', '?fold=budget'], ['overview (this version)', '']]) {
          const times = [];
          let info = null;
          for (let k = 0; k < 5; ++k) {
            const page = await browser.newPage({ viewport: vp });
            const t0 = Date.now();
            await page.goto(server.url + suffix);
            const end = Date.now() + 60000;
            while (!(await page.evaluate(() => Number(document.body.dataset.rendered || 0) > 0))) {
              if (Date.now() > end) throw new Error('demo: no render within 60 s');
              await new Promise((r) => setTimeout(r, 5));
            }
            times.push(Date.now() - t0);
            info = await page.evaluate(() => { const p = window.__miDebug.view('graph').pane(0), l = p.scene.layout; return { items: l.itemCount, dir: l.direction, scale: p.cam.scale }; });
            await page.close();
          }
          console.log(`| ${what} | ${vp.width}x${vp.height} | ${info.items} | ${info.dir} | ${info.scale.toFixed(2)} | ${median(times)} ms |`);
        }
      }
    } finally {
      await server.stop();
    }
  } else if (args.length && !args[0].startsWith('--')) {
    // File mode.
    const { preview } = await import(join(webDir, 'node_modules/vite/dist/node/index.js'));
    const server = await preview({ root: webDir, logLevel: 'error', preview: { port: 0, host: '127.0.0.1' } });
    const url = server.resolvedUrls.local[0];
    for (const renderer of (process.env.MI_BENCH_RENDERERS || 'webgl2').split(',')) {
      for (const f of args) {
        const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
        await page.goto(url + (renderer === 'canvas2d' ? '?renderer=canvas2d' : ''));
        await page.waitForFunction(() => document.body.dataset.ready !== undefined);
        const t0 = Date.now();
        await page.setInputFiles('#file', f);
        await page.waitForFunction(() => Number(document.body.dataset.rendered || 0) > 0, null, { timeout: 120000 });
        report(`${f} [${renderer}]`, Date.now() - t0, await measure(page));
        await page.close();
      }
    }
    await new Promise((r) => server.httpServer.close(r));
  } else {
    // Server mode.
    const { startServer } = await import('../../web/test/server.mjs');
    const k = args.indexOf('--sizes');
    const sizes = (k >= 0 ? args[k + 1] : '10000,100000').split(',').map(Number);
    const dir = mkdtempSync(join(tmpdir(), 'mi-bench-ui-'));
    try {
      for (const n of sizes) {
        const model = join(dir, `synthetic_${n}.onnx`);
        execFileSync('python3', [join(repoDir, 'bench/ui/make_big_model.py'), String(n), model], { stdio: 'inherit' });
        const server = await startServer([model], 600000);
        try {
          for (const [view, query] of [['default view (≤2,000 items)', ''], ['whole graph (max_items=0)', '?max_items=0']]) {
            const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
            const t0 = Date.now();
            await page.goto(server.url + query);
            const end = Date.now() + 300000;
            while (!(await page.evaluate(() => Number(document.body.dataset.rendered || 0) > 0))) {
              if (Date.now() > end) throw new Error(`${n}: no render within 300 s`);
              await new Promise((r) => setTimeout(r, 20));
            }
            const firstMs = Date.now() - t0;
            const r = await measure(page);
            report(`${n} nodes, ${view}`, firstMs, r);
            rows.push({ n, view, firstMs, pan: median(r.pan.dt), panFar: median(r.panFar.dt), items: r.items });
            await page.close();
          }
        } finally {
          await server.stop();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    console.log('\nvs Netron (measured: 23.5 s to paint 10,400 nodes, ~6 fps = 167 ms a frame panning; same headless Chromium):');
    console.log('| graph | view | items | first render | Netron / ours | pan median, zoom 1 | Netron / ours | pan median, whole graph | Netron / ours |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    const x = (netron, ours) => `${(netron / ours).toFixed(1)}x`;
    for (const r of rows) {
      const firstRatio = r.n <= 20000 ? x(kNetron.firstPaintMs, r.firstMs) : 'n/a (Netron: 10k only)';
      console.log(`| ${r.n} | ${r.view} | ${r.items} | ${(r.firstMs / 1000).toFixed(2)} s | ${firstRatio} | ${r.pan.toFixed(1)} ms | ${x(kNetron.panFrameMs, r.pan)} | ${r.panFar.toFixed(1)} ms | ${x(kNetron.panFrameMs, r.panFar)} |`);
    }
    console.log('(SwiftShader: WebGL on the CPU of a shared 2-core machine; frame times include the compositor.)');
  }
} finally {
  await browser.close();
}
