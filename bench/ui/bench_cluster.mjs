// The cluster view with many ranks in headless Chromium. Not a test:
// prints figures, asserts nothing.
//
//   MI_BINARY=build/src/cli/model-inspector node bench/ui/bench_cluster.mjs \
//     [--ranks 1024] [--steps 50] [--collectives 500] [--runs 3] [--shot FILE.png] [--write REPORT.json]
//
// The report is synthetic (made here; no real job of 1,024 ranks is at
// hand): the shape of GET /api/cluster (docs/reference/schemas/
// cluster.schema.json) with --ranks ranks x --steps steps of figures that
// vary per rank and step, one slow rank (rank 7: 30 % more compute), a
// matrix of ring neighbours, and --collectives collectives over all ranks.
// It is answered to the page by Playwright routing in place of the
// server's /api/cluster (the server runs on the bundled demo for the
// page's other requests; its /api/runs is answered with `cluster: true`),
// so the figures are the view's own: the report's transfer and parse (the
// form the UI loads first, without the collectives' per-rank rows), the
// first draw of every picture, redraws after a metric change, the heat
// map's pixel pass, hover hit tests, a collective picked (its rows fetched,
// every rank's bar drawn), and the page's JS heap.

import { startServer } from '../../web/test/server.mjs';
import { launchBrowser, poll } from '../../web/test/lib.mjs';

const args = process.argv.slice(2);
const opt = (name, def) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : def; };
const ranks = Number(opt('--ranks', '1024'));
const steps = Number(opt('--steps', '50'));
const ncoll = Number(opt('--collectives', '500'));
const runs = Number(opt('--runs', '3'));
const shot = opt('--shot', '');

/** A deterministic pseudo-random sequence (so runs compare). */
function rng(seed) {
  let s = seed >>> 0;
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32; };
}

function makeReport() {
  const r = rng(42);
  const t0 = 1_727_593_954_000_000_000;
  const stepNs = 80_000_000;
  const rankList = [...Array(ranks).keys()];
  const stepRows = [];
  for (let s = 0; s < steps; s++) {
    const rows = rankList.map((k) => {
      const compute = Math.round(50e6 * (1 + 0.05 * r()) * (k === 7 ? 1.3 : 1));
      const exposed = Math.round(10e6 * (0.5 + r()));
      const idle = Math.round(5e6 * r());
      return {
        rank: k, start_ns: t0 + s * stepNs, wall_ns: compute + exposed + idle, compute_ns: compute, communication_ns: exposed * 2,
        exposed_communication_ns: exposed, overlapped_communication_ns: exposed, idle_ns: idle, host_bound_ns: 0, data_loading_ns: 0, step_trace: null,
      };
    });
    stepRows.push({ step: s + 1, label: `ProfilerStep#${s + 1}`, max_wall_ns: Math.max(...rows.map((x) => x.wall_ns)), median_wall_ns: rows[rows.length >> 1].wall_ns, slowest_rank: 7, compute_max_over_mean: 0.3, compute_spread_over_mean: 0.3, ranks: rows });
  }
  const collectives = [];
  for (let c = 0; c < ncoll; c++) {
    const base = t0 + (c % steps) * stepNs + 50e6;
    const rr = rankList.map((k) => {
      const start = base + Math.round((k === 7 ? 3e6 : 0) + 1e5 * r());
      return { rank: k, start_ns: start, end_ns: base + 3.2e6 + Math.round(1e4 * r()), wait_ns: 0, exposed_ns: 1e5, task: null, issued_by: 'aten::all_reduce', node: null, node_name: '' };
    });
    collectives.push({
      group: 'pg0', sequence: c, name: `ncclDevKernel_AllReduce_Sum_f32_RING_LL`, type: 'allreduce', step: (c % steps) + 1, step_label: `ProfilerStep#${(c % steps) + 1}`,
      group_size: ranks, bytes: 64 << 20, dtype: 'Float', algorithm: 'RING', matched_by: 'group_sequence', last_rank: 7, arrival_skew_ns: 3e6, end_spread_ns: 1e4,
      transfer_ns: 2e5, algbw_gbps: 300, busbw_factor: 2 * (ranks - 1) / ranks, busbw_gbps: 590, link_type: 'NVLink4', peak_gbps: 450, efficiency: 0.8, exposed_ns: 1e5 * ranks, wait_ns: 3e6 * ranks, ranks: rr,
    });
  }
  const matrix = [];
  for (const k of rankList) {
    for (const d of [(k + 1) % ranks, (k + ranks - 1) % ranks]) {
      matrix.push({ group: 'pg0', statistic: 'allreduce-total', src_rank: k, dst_rank: d, global: true, transport: 'NVLink', size_bytes: Math.round(1e9 * (0.5 + r())), transit_ns: 2e6, bandwidth_gbps: 250 });
    }
  }
  return {
    schema: 'model-inspector/cluster/1', world_size: ranks, world_size_from: 'world_size',
    ranks: rankList.map((k) => ({ rank: k, rank_from: 'distributedInfo', host: `node${k >> 3}`, devices: [`GPU ${k % 8}`], files: [`rank-${k}.json`], steps, collectives: ncoll, wall_ns: 0, compute_ns: 0, communication_ns: 0, exposed_communication_ns: 0, idle_ns: 0 })),
    missing_ranks: [], steps: stepRows, collective_instances: ncoll, collectives,
    slow_ranks: [{ rank: 7, collectives: ncoll, last_arrivals: ncoll, last_arrival_share: 1, mean_lateness_ns: 3e6, others_wait_ns: 3e6 * ranks * ncoll, duration_outlier_count: 0, reasons: [{ kind: 'compute', message: 'rank 7 computes 30 % longer than the median rank', excess_ns: 15e6 * steps, op_types: [{ op_type: 'aten::mm', rank_ns: 65e6, median_ns: 50e6, excess_ns: 15e6 }], nodes: [] }] }],
    overlap: [], bandwidth: [], matrix, critical_path: [], findings: [{ rule: 'cluster_slow_rank', title: 'A slow rank', severity: 'warning', message: 'rank 7 arrives last at every collective', suggestion: 'look at its compute', threshold: 0.5, time_ns: 0, share: 0, ranks: [7], steps: [], collectives: [0], nodes: [] }],
    clock: { hosts: ranks >> 3, max_end_spread_ns: 1e4, median_end_spread_ns: 5e3, note: '' }, link_peaks: [], cluster_step_trace: [], cluster_communication: [],
  };
}

const median = (xs) => { const s = xs.slice().sort((a, b) => a - b); return s[s.length >> 1]; };
const full = makeReport();
const body = JSON.stringify(full);
// What the UI asks first: the report without the collectives' per-rank rows (?collective_ranks=0).
const light = JSON.stringify({ ...full, collectives: full.collectives.map((c) => ({ ...c, ranks: [] })) });
if (opt('--write', '')) {
  // The report alone (to look at it, or to serve it by hand).
  (await import('node:fs')).writeFileSync(opt('--write', ''), body);
  process.exit(0);
}
console.log(`synthetic report: ${ranks} ranks x ${steps} steps, ${ncoll} collectives, ${(body.length / 1e6).toFixed(1)} MB JSON whole, ` +
  `${(light.length / 1e6).toFixed(1)} MB without the collectives' per-rank rows (what the UI loads first)`);

const server = await startServer([]);
const browser = await launchBrowser();
const figures = [];
try {
  for (let k = 0; k < runs; k++) {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    const json = (route, b) => route.fulfill({ status: 200, contentType: 'application/json; charset=utf-8', body: b });
    // The demo server's run list, saying it holds a cluster; the synthetic report in place of its /api/cluster.
    await page.route((u) => u.pathname === '/api/runs', async (route) => {
      const r = await (await route.fetch()).json();
      await json(route, JSON.stringify({ ...r, cluster: true }));
    });
    await page.route((u) => u.pathname === '/api/cluster', (route) => json(route, new URL(route.request().url()).searchParams.get('collective_ranks') === '0' ? light : body));
    await page.route((u) => u.pathname.startsWith('/api/cluster/collectives/'), (route) => {
      const i = Number(new URL(route.request().url()).pathname.split('/').pop());
      return json(route, JSON.stringify({ collectives: [full.collectives[i]] }));
    });
    const t0 = Date.now();
    await page.goto(server.url);
    await poll(page, () => window.__miDebug?.stats()['cluster.heat_draws'] >= 1, null, 60000, 'the heat map drawn');
    const first = (Date.now() - t0) / 1000;
    const f = await page.evaluate(async () => {
      const v = window.__miDebug.view('cluster');
      const firstHeat = window.__miDebug.stats()['cluster.heat_ms'].at(-1);
      const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
      const redraw = [];
      for (const m of ['exposed', 'idle', 'compute', 'wall', 'exposed', 'idle', 'compute', 'wall']) {
        const t = performance.now();
        v.setMetric(m);
        await frame();
        await frame();
        redraw.push(performance.now() - t);
      }
      const heat = window.__miDebug.stats()['cluster.heat_ms'].slice(-8);
      // Hover hit tests over the whole map.
      const c = document.getElementById('cluster-heat');
      const b = c.getBoundingClientRect();
      const t = performance.now();
      for (let i = 0; i < 1000; i++) c.dispatchEvent(new MouseEvent('mousemove', { clientX: b.left + 70 + (i * 7) % (b.width - 80), clientY: b.top + 25 + (i * 13) % (b.height - 30) }));
      const hover = (performance.now() - t) / 1000;
      // Picking a collective: its rows fetched, the alignment of every rank drawn (the host's run opening
      // fails here: the demo server has no cluster; the alignment is drawn before).
      const tc = performance.now();
      const picked = v.selectCollective(0);
      while (!(v.report.collectives[0].ranks.length && v.settled())) await frame();
      await frame();
      const pick = performance.now() - tc;
      await picked;
      return { firstHeat, redraw, heat, hover, pick, heap: performance.memory?.usedJSHeapSize ?? 0, info: v.heatInfo() };
    });
    figures.push({ first, ...f });
    console.log(`run ${k + 1}: first screen ${first.toFixed(2)} s (heat map pixels ${f.firstHeat.toFixed(1)} ms), metric change -> drawn ${median(f.redraw).toFixed(1)} ms median ` +
      `(heat map pixels ${median(f.heat).toFixed(1)} ms), hover ${f.hover.toFixed(3)} ms each, a collective picked -> its ${ranks} ranks aligned ${f.pick.toFixed(0)} ms, JS heap ${(f.heap / 1e6).toFixed(0)} MB; ` +
      `map ${Math.round(f.info.place.w)}x${Math.round(f.info.place.h)} px for ${f.info.place.rows}x${f.info.place.cols} cells`);
    if (shot && k === 0) await page.screenshot({ path: shot });
    await page.close();
  }
  console.log(`median of ${runs}: first screen ${median(figures.map((f) => f.first)).toFixed(2)} s, metric change ${median(figures.map((f) => median(f.redraw))).toFixed(1)} ms, ` +
    `heat map pixel pass ${median(figures.map((f) => median(f.heat))).toFixed(1)} ms`);
} finally {
  await browser.close();
  await server.stop();
}
