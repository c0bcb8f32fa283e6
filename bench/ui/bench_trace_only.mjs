// First screen of a trace-only run in headless Chromium: a ~35 MB
// PyTorch-profiler (Kineto) trace opened alone with `model-inspector open`.
// Not a test: prints figures, asserts nothing.
//
//   MI_BINARY=build/src/cli/model-inspector node bench/ui/bench_trace_only.mjs \
//     [--baseline PREVIOUS_BINARY] [--mb 35] [--runs 3] [--trace FILE]
//
// The trace comes from bench/ui/make_kineto_trace.py (a real Kineto sample,
// repeated to --mb; one copy of the default sample is the 35.2 MB ResNet-50
// training trace itself), cached in $TMPDIR, never committed. For each
// binary (this build, and --baseline: the build before, e.g. main's) it
// starts the real server on the trace alone and measures, per run:
//   - load: `open` started → URL printed (import, link, index);
//   - first render, cold: navigation → the timeline's first frame with its
//     first window (window.__miDebug stats timeline.first_render_at, a
//     performance.now() time), on the first page after the server started;
//   - first render, warm: the same on a second page;
//   - what the first screen shows: requests answered 4xx, the share of the
//     work area the graph pane takes, the timeline canvas' height.
//   - of which the app's own part: DOMContentLoaded → that frame (the rest
//     is the page and its scripts loading, which CPU load dominates);
// Runs alternate between the binaries; prints the median of the runs, the
// baseline's figure next to this build's.

import { execFileSync, spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { launchBrowser, poll, repoDir } from '../../web/test/lib.mjs';

const args = process.argv.slice(2);
const opt = (name, def) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : def; };
const mb = Number(opt('--mb', '35'));
const runs = Number(opt('--runs', '3'));
const baseline = opt('--baseline', '');
const current = process.env.MI_BINARY;
if (!current) { console.error('MI_BINARY is not set; point it at the built CLI'); process.exit(1); }
let trace = opt('--trace', '');
if (!trace) {
  trace = join(tmpdir(), `mi_trace_only_bench_${mb}mb.json`);
  if (!existsSync(trace)) execFileSync('python3', [join(repoDir, 'bench/ui/make_kineto_trace.py'), '--out', trace, '--mb', String(mb)], { stdio: 'inherit' });
}
console.log(`trace ${trace}: ${(statSync(trace).size / 1e6).toFixed(1)} MB`);

/** Starts `bin open TRACE`; resolves with its URL, the load time and a stop function. */
function serve(bin) {
  const t0 = Date.now();
  const child = spawn(resolve(bin), ['open', '--port', '0', '--no-browser', trace], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  return new Promise((res, rej) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/^(https?:\/\/\S+)\s*$/m);
      if (m) res({ url: m[1], loadS: (Date.now() - t0) / 1000, stop: () => { child.kill('SIGTERM'); return new Promise((r) => child.on('exit', r)); } });
    });
    child.on('exit', (c) => rej(new Error(`${bin} exited ${c}: ${err}`)));
  });
}

async function firstScreen(browser, url) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  let failed = 0;
  page.on('response', (r) => { if (r.status() >= 400) failed++; });
  await page.goto(url);
  const at = await poll(page, () => window.__miDebug?.stats()['timeline.first_render_at'], null, 600000, 'the timeline\'s first frame');
  // The app's own part: from the page's scripts having run (DOMContentLoaded) to that frame.
  const dcl = await page.evaluate(() => performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd);
  const shape = await page.evaluate(() => {
    const box = (sel) => { const e = document.querySelector(sel); if (!e || getComputedStyle(e).display === 'none') return null; const r = e.getBoundingClientRect(); return r.width && r.height ? r : null; };
    const work = box('#work'), view = box('#view'), tl = box('#timeline canvas');
    return { graphShare: view && work ? (view.width * view.height) / (work.width * work.height) : 0, timelineH: tl ? tl.height : 0 };
  });
  await page.close();
  return { ms: at, app: at - dcl, failed, ...shape };
}

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const browser = await launchBrowser();
const results = {};
const perRun = {};
const binaries = [['previous', baseline], ['this build', current]].filter(([, bin]) => bin);
// Interleaved (previous, this build, previous, ...) so that a change of
// machine load falls on both alike.
for (let k = 0; k < runs; ++k) {
  for (const [label, bin] of binaries) {
    const server = await serve(bin);
    const cold = await firstScreen(browser, server.url);
    const warm = await firstScreen(browser, server.url);
    await server.stop();
    (perRun[label] ??= []).push({ load: server.loadS, cold, warm });
    console.log(`  ${label} run ${k + 1}: load ${server.loadS.toFixed(2)} s, first render cold ${(cold.ms / 1000).toFixed(2)} s (app ${(cold.app / 1000).toFixed(2)} s), `
      + `warm ${(warm.ms / 1000).toFixed(2)} s (app ${(warm.app / 1000).toFixed(2)} s), ${cold.failed} failed requests, `
      + `graph pane ${(100 * cold.graphShare).toFixed(0)}% of the work area, timeline ${cold.timelineH.toFixed(0)} px`);
  }
}
for (const [label, rs] of Object.entries(perRun)) {
  results[label] = {
    load: median(rs.map((r) => r.load)), cold: median(rs.map((r) => r.cold.ms)) / 1000, warm: median(rs.map((r) => r.warm.ms)) / 1000,
    coldApp: median(rs.map((r) => r.cold.app)) / 1000, warmApp: median(rs.map((r) => r.warm.app)) / 1000,
    failed: median(rs.map((r) => r.cold.failed)), graph: median(rs.map((r) => r.cold.graphShare)), tl: median(rs.map((r) => r.cold.timelineH)),
  };
}
await browser.close();

const cols = Object.keys(results);
const row = (name, f) => console.log(`| ${name} | ${cols.map((c) => f(results[c])).join(' | ')} |`);
console.log(`\n| ${(statSync(trace).size / 1e6).toFixed(1)} MB Kineto trace alone, 1400x900, median of ${runs} | ${cols.join(' | ')} |`);
console.log(`|---|${cols.map(() => '---').join('|')}|`);
row('load (`open` → URL printed)', (r) => `${r.load.toFixed(2)} s`);
row('first render, cold (navigation → timeline\'s first window drawn)', (r) => `${r.cold.toFixed(2)} s`);
row('first render, warm', (r) => `${r.warm.toFixed(2)} s`);
row('of which the app (scripts run → timeline\'s first window drawn), cold / warm', (r) => `${r.coldApp.toFixed(2)} s / ${r.warmApp.toFixed(2)} s`);
row('requests answered 4xx on the first screen', (r) => String(r.failed));
row('graph pane, share of the work area', (r) => `${(100 * r.graph).toFixed(0)}%`);
row('timeline canvas height', (r) => `${r.tl.toFixed(0)} px`);
