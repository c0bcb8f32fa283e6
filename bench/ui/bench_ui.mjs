// UI performance figures in headless Chromium (SwiftShader WebGL2, no GPU):
// for layout binaries written by the C++ CLI, time from handing the file to
// the page to the first complete render (decode + scene + upload + frame),
// and frame times during a scripted pan and zoom (rAF intervals, and the
// renderer's own CPU time per frame). Not a test: prints figures only.
//
//   node bench/ui/bench_ui.mjs FILE.bin [FILE.bin ...]
// (web/ must be built: cd web && npm ci && npm run build)

import { join } from 'node:path';
import { launchBrowser, webDir } from '../../web/test/lib.mjs';

const files = process.argv.slice(2);
if (!files.length) { console.error('usage: node bench/ui/bench_ui.mjs FILE.bin ...'); process.exit(2); }
const { preview } = await import(join(webDir, 'node_modules/vite/dist/node/index.js'));
const server = await preview({ root: webDir, logLevel: 'error', preview: { port: 0, host: '127.0.0.1' } });
const url = server.resolvedUrls.local[0];
const browser = await launchBrowser();
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const p95 = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length * 0.95)]; };
try {
  for (const renderer of (process.env.MI_BENCH_RENDERERS || 'webgl2').split(',')) {
    for (const f of files) {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(url + (renderer === 'canvas2d' ? '?renderer=canvas2d' : ''));
      await page.waitForFunction(() => document.body.dataset.ready !== undefined);
      const t0 = Date.now();
      await page.setInputFiles('#file', f);
      await page.waitForFunction(() => Number(document.body.dataset.rendered || 0) > 0, null, { timeout: 120000 });
      const firstMs = Date.now() - t0;
      const r = await page.evaluate(async () => {
        const app = window.__mi, cam = app.cam, l = app.scene.layout;
        const frame = () => new Promise((res) => requestAnimationFrame(res));
        const run = async (n, step) => {
          const dt = [], cpu = [];
          let last = performance.now();
          for (let k = 0; k < n; ++k) {
            step(k);
            await frame();
            const now = performance.now();
            dt.push(now - last); cpu.push(app.rendererFrameMs());
            last = now;
          }
          return { dt, cpu };
        };
        // Pan at reading zoom (text drawn), then zoom out to the whole graph and back in.
        cam.centreOn(l.width / 2, l.height / 2, 1);
        await frame(); await frame();
        const pan = await run(120, () => cam.panBy(-7, -11));
        app.fit();
        await frame(); await frame();
        const panFar = await run(60, () => cam.panBy(0, -5));
        const zoom = await run(80, (k) => cam.zoomAt(k < 40 ? 1.12 : 1 / 1.12, cam.viewW / 2, cam.viewH / 2));
        return { items: l.itemCount, edges: l.edgeCount, segs: app.scene.segCount, pan, panFar, zoom, scene: app.lastLoadMs.scene, bytes: l.stringData.buffer.byteLength };
      });
      const fmt = (x) => `median ${median(x.dt).toFixed(1)} ms (p95 ${p95(x.dt).toFixed(1)}), renderer CPU ${median(x.cpu).toFixed(2)} ms`;
      console.log(`${f} [${renderer}]: ${r.items} items, ${r.edges} edges (${r.segs} segments), ${(r.bytes / 1e6).toFixed(1)} MB`);
      console.log(`  first render ${firstMs} ms after the file is handed over (scene build ${r.scene.toFixed(0)} ms)`);
      console.log(`  pan at zoom 1:      ${fmt(r.pan)}`);
      console.log(`  pan, whole graph:   ${fmt(r.panFar)}`);
      console.log(`  zoom in/out:        ${fmt(r.zoom)}`);
      await page.close();
    }
  }
} finally {
  await browser.close();
  await new Promise((r) => server.httpServer.close(r));
}
