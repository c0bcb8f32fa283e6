// Browser test of the renderers without the server: the built UI (served by
// `vite preview`, a static file server) opens a layout binary written by the
// C++ CLI through its "open .bin" input, for WebGL2 and the Canvas2D
// fallback. Checks the first render, op-type colours at node centres and
// that the two renderers agree; saves screenshots as artifacts. The UI is
// read through window.__miDebug; after each camera move the test waits for
// the main pane's next frame (data-rendered), not for a fixed time.

import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { artifactsDir, check, colorDistance, done, eq, launchBrowser, miBinary, pixelsAt, poll, repoDir, webDir } from './lib.mjs';

const bin = miBinary();
const art = artifactsDir();
mkdirSync(art, { recursive: true });
const layoutPath = join(art, 'transformer.bin');
execFileSync(bin, ['render', join(repoDir, 'test/fixtures/transformer/model.onnx'), '--format', 'binary', '--out', layoutPath, '-q']);

const { preview } = await import('vite');
// MI_WEB_DIST: the UI built by CMake into the build dir (default web/dist).
const outDir = process.env.MI_WEB_DIST || 'dist';
const server = await preview({ root: webDir, logLevel: 'error', build: { outDir }, preview: { port: 0, host: '127.0.0.1', strictPort: false } });
const url = server.resolvedUrls.local[0];
const browser = await launchBrowser();
/** Runs `move` in the page (a camera change) and waits until the main pane has drawn it. */
async function drawn(page, move, arg) {
  const n = await page.evaluate(() => Number(document.body.dataset.rendered || 0));
  const out = await page.evaluate(move, arg);
  await poll(page, (n) => Number(document.body.dataset.rendered || 0) > n, n, 30000, 'the next frame');
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  return out;
}
try {
  for (const renderer of ['webgl2', 'canvas2d']) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${url}${renderer === 'canvas2d' ? '?renderer=canvas2d' : ''}`);
    await page.waitForFunction(() => document.body.dataset.ready !== undefined);
    await page.setInputFiles('#file', layoutPath);
    await page.waitForFunction(() => Number(document.body.dataset.rendered || 0) > 0);
    eq(await page.evaluate(() => document.body.dataset.renderer), renderer, `${renderer}: renderer in use`);
    // Zoom so node text is drawn, then check colours at node centres.
    const probe = await drawn(page, () => {
      const g = window.__miDebug.view('graph'), p = g.pane(0);
      const l = p.scene.layout;
      let i = 0;
      for (; i < l.itemCount; ++i) if (l.itemKind[i] === 0) break;
      const b = l.itemBox;
      p.cam.centreOn(b[4 * i] + b[4 * i + 2] / 2, b[4 * i + 1] + b[4 * i + 3] / 2, 1.2);
      const out = [];
      for (let k = 0; k < l.itemCount; ++k) {
        if (l.itemKind[k] !== 0) continue;
        const c = g.itemScreenCenter(k);
        const r = p.canvas.getBoundingClientRect();
        // Sample near the left edge of the box (inside, away from the text).
        const x = r.left + p.cam.toScreenX(b[4 * k] + 5), y = r.top + c.y;
        if (x > r.left && x < r.right - 200 && y > r.top + 5 && y < r.bottom - 160) {
          out.push({ x, y, rgb: Array.from(p.scene.itemColor.slice(3 * k, 3 * k + 3), (v) => Math.round(v * 255)), op: l.str(l.itemTitle[k]) });
        }
      }
      return out.slice(0, 12);
    });
    const png = await page.screenshot({ path: join(art, `file_${renderer}.png`) });
    check(probe.length >= 3, `${renderer}: at least 3 nodes on screen (${probe.length})`);
    const px = await pixelsAt(page, png, probe.map((p) => [p.x, p.y]));
    let good = 0;
    probe.forEach((p, k) => { if (colorDistance(px[k], p.rgb) <= 24) good++; else console.error(`  ${renderer}: ${p.op} at ${p.x},${p.y}: ${px[k]} vs ${p.rgb}`); });
    check(good >= Math.ceil(probe.length * 0.8), `${renderer}: op-type colours at node centres (${good}/${probe.length})`);
    // Fit (the 0 key) and screenshot the whole graph.
    await page.focus('#graph');
    const before = await page.evaluate(() => Number(document.body.dataset.rendered || 0));
    await page.keyboard.press('0');
    await poll(page, (n) => Number(document.body.dataset.rendered || 0) > n, before, 30000, 'the fitted frame');
    await page.screenshot({ path: join(art, `file_${renderer}_fit.png`) });
    // Level of detail: zoomed far out, small frames are drawn as silhouettes
    // (frame_profiles) in the frame kind's colour instead of their contents.
    const lod = await drawn(page, () => {
      const p = window.__miDebug.view('graph').pane(0), s = p.scene, l = s.layout;
      const scale = Math.min(0.12, 0.5 * p.cam.viewH / l.height);
      p.cam.centreOn(l.width / 2, l.height / 2, scale);
      const st = s.lodStats(scale);
      // The centroid of the largest drawn silhouette triangle, on screen.
      const P = s.polys, K = 7, T = 56;
      let best = null, bestArea = 0;
      for (let v = 0; v + 3 <= s.polyVertexCount; v += 3) {
        const o = v * K;
        if (!(P[o + 5] * scale < T && P[o + 6] * scale >= T)) continue;
        const ax = P[o], ay = P[o + 1], bx = P[o + K], by = P[o + K + 1], cx = P[o + 2 * K], cy = P[o + 2 * K + 1];
        const area = Math.abs((bx - ax) * (cy - ay) - (cx - ax) * (by - ay)) / 2;
        if (area > bestArea) { bestArea = area; best = { x: (ax + bx + cx) / 3, y: (ay + by + cy) / 3, rgb: [P[o + 2], P[o + 3], P[o + 4]].map((c) => Math.round(c * 255)) }; }
      }
      const r = p.canvas.getBoundingClientRect();
      return { st, scale, probe: best && { x: r.left + p.cam.toScreenX(best.x), y: r.top + p.cam.toScreenY(best.y), rgb: best.rgb, areaPx: bestArea * scale * scale } };
    });
    check(lod.st.silhouettes > 0 && lod.st.hiddenItems > 0, `${renderer}: zoomed out to ${lod.scale.toFixed(3)}, silhouettes drawn (${JSON.stringify(lod.st)})`);
    const farPng = await page.screenshot({ path: join(art, `file_${renderer}_lod.png`) });
    if (check(lod.probe !== null, `${renderer}: a silhouette on screen`)) {
      const [c] = await pixelsAt(page, farPng, [[lod.probe.x, lod.probe.y]]);
      check(colorDistance(c, lod.probe.rgb) <= 24, `${renderer}: silhouette colour at its centre (${c} vs ${lod.probe.rgb}, ${lod.probe.areaPx.toFixed(1)} px²)`);
    }
    eq(errors.join('; '), '', `${renderer}: page errors`);
    await page.close();
  }
} finally {
  await browser.close();
  await new Promise((r) => server.httpServer.close(r));
}
done('render_file_test');
