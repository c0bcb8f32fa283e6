// End-to-end test of pairing a trace-only run with the model beside its
// trace, against the real server (`model-inspector open`, embedded UI) in
// Chromium, at 1024x700 and 1920x1080:
//   - the trace-only run's note offers a "Pair with model.onnx" button (the
//     `open --run` command stays beside it);
//   - clicking it disables the button while the server opens the model
//     with the trace, then the page switches to the new run: the graph
//     pane shows the framework graph, and nodes are linked to tasks
//     (status executed or fused, with a time) — the CLI's `summary` of the
//     same two files says how many host ops align, independently of the UI;
//   - the second viewport clicks it again: the server answers the run it
//     opened before (the run list does not grow);
//   - a model beside the trace that does not open: the note shows the
//     server's message naming the file, and the button comes back.
// Screenshots: pair_before_*.png, pair_after_*.png, pair_error_*.png.

import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { artifactsDir, check, done, eq, fail, launchBrowser, miBinary, poll, repoDir } from './lib.mjs';
import { startServer } from './server.mjs';

const fx = (p) => join(repoDir, 'test/fixtures', p);
const kTrace = fx('resnet18/torch_profile.pt.trace.json.gz'); // a Kineto trace beside model.onnx
const kModel = fx('resnet18/model.onnx');

const art = artifactsDir();
mkdirSync(art, { recursive: true });
const tmp = mkdtempSync(join(tmpdir(), 'mi-pair-test-'));
// The same trace beside a "model" that is no ONNX file: pairing fails.
const kBadTrace = join(tmp, 'torch_profile.pt.trace.json.gz');
copyFileSync(kTrace, kBadTrace);
const kBadModel = join(tmp, 'broken.onnx');
writeFileSync(kBadModel, 'this is not a protobuf\n');

// How many of the trace's host ops the CLI aligns to the model's nodes (a
// CPU trace: its ops link to nodes by alignment).
const summary = spawnSync(miBinary(), ['summary', '--quiet', kModel, kTrace], { encoding: 'utf8' });
const why = /(\d+) host ops aligned to graph nodes/.exec(summary.stdout);
if (!why) fail(`model-inspector summary gave no "host ops aligned" count:\n${summary.stdout}\n${summary.stderr}`);
const cliAligned = Number(why[1]);
check(cliAligned > 0, `the CLI aligns ${cliAligned} host ops of the trace to the model's nodes`);

// Runs: 0 the trace beside model.onnx, 1 the trace beside broken.onnx.
const server = await startServer([kTrace, kBadTrace]);
console.log(`  server at ${server.url}`);
const browser = await launchBrowser();

async function open(hash, viewport) {
  const page = await browser.newPage({ viewport });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  await page.goto(server.url + hash);
  await poll(page, () => document.body.dataset.ready, null, 60000, 'runs loaded');
  return page;
}

/** Records whether a "Pair" button was ever disabled (the pending state), however short. */
const watchDisabled = (page) => page.evaluate(() => {
  window.__pairSawDisabled = false;
  new MutationObserver(() => {
    if (document.querySelector('#run-note button.run-note-pair:disabled')) window.__pairSawDisabled = true;
  }).observe(document.getElementById('run-note'), { subtree: true, attributes: true, attributeFilter: ['disabled'] });
});

let pairedRun = null;
for (const viewport of [{ width: 1024, height: 700 }, { width: 1920, height: 1080 }]) {
  const vp = `${viewport.width}x${viewport.height}`;
  console.log(`  viewport ${vp}`);
  const page = await open('#run=0', viewport);
  await poll(page, () => document.querySelector('#run-note button.run-note-pair'), null, 30000, 'the Pair button');
  const offer = await page.evaluate(() => ({
    buttons: [...document.querySelectorAll('#run-note button.run-note-pair')].map((b) => b.textContent),
    commands: [...document.querySelectorAll('#run-note .run-note-offer')].map((e) => e.dataset.offer),
  }));
  eq(JSON.stringify(offer.buttons), JSON.stringify(['Pair with model.onnx']), `${vp}: one Pair button, for the model beside the trace`);
  check(offer.commands.includes(`model-inspector open --run ${kModel} ${kTrace}`), `${vp}: the command stays beside it (${offer.commands})`);
  const btn = await page.evaluate(() => {
    const r = document.querySelector('#run-note button.run-note-pair').getBoundingClientRect();
    return { x: r.left, y: r.top, w: r.width, h: r.height };
  });
  check(btn.w > 0 && btn.h > 0 && btn.x >= 0 && btn.x + btn.w <= viewport.width && btn.y + btn.h <= viewport.height,
    `${vp}: the button is on screen (${JSON.stringify(btn)})`);
  writeFileSync(join(art, `pair_before_${vp}.png`), await page.screenshot());

  await watchDisabled(page);
  const runsBefore = await page.evaluate(() => window.__miDebug.state().runs.length);
  await page.click('#run-note button.run-note-pair');
  // The page switches to a run with a graph and draws it.
  const run = await poll(page, () => {
    const s = window.__miDebug.state(), p = window.__miDebug.view('graph').pane(0);
    const r = s.runs[s.panes[0].run];
    return r && r.levels.length && s.panes[0].level === 'framework' && p.scene !== null && p.current &&
      Number(document.body.dataset.rendered) > 0 ? s.panes[0].run : false;
  }, null, 120000, 'the paired run drawn');
  check(await page.evaluate(() => window.__pairSawDisabled), `${vp}: the button was disabled while the server opened the model`);
  const s = await page.evaluate(() => window.__miDebug.state());
  if (pairedRun === null) {
    pairedRun = run;
    eq(s.runs.length, runsBefore + 1, `${vp}: the run list grew by the paired run`);
  } else {
    eq(run, pairedRun, `${vp}: pairing again answers the run opened before`);
    eq(s.runs.length, runsBefore, `${vp}: the run list did not grow`);
  }
  eq(JSON.stringify(s.runs[run].paths), JSON.stringify([kModel, kTrace]), `${vp}: the new run is the model and the trace`);
  check(s.runs[run].has_trace, `${vp}: the new run has the trace`);
  const hash = await page.evaluate(() => location.hash);
  check(hash.includes(`run=${run}`) && hash.includes('level=framework'), `${vp}: the URL names the new run and its level (${hash})`);
  // The graph pane is shown, the note gone, nodes linked.
  const shown = await page.evaluate(() => {
    const v = document.getElementById('view').getBoundingClientRect();
    return { view: v.width > 0 && v.height > 0, note: !document.getElementById('run-note').hidden, noGraph: document.body.classList.contains('no-graph') };
  });
  check(shown.view && !shown.note && !shown.noGraph, `${vp}: the graph pane shows and the note is gone (${JSON.stringify(shown)})`);
  const linked = await page.evaluate(() => {
    const l = window.__miDebug.view('graph').pane(0).scene.layout;
    let nodes = 0, ran = 0, timed = 0;
    for (let i = 0; i < l.nodeModelId.length; ++i) {
      ++nodes;
      if (l.nodeStatus && (l.nodeStatus[i] === 1 || l.nodeStatus[i] === 2)) ++ran;
      if (l.nodeTimeUs && l.nodeTimeUs[i] > 0) ++timed;
    }
    return { items: l.itemCount, nodes, ran, timed };
  });
  check(linked.items > 0, `${vp}: the graph has items (${JSON.stringify(linked)})`);
  check(linked.ran > 0 && linked.timed > 0, `${vp}: nodes are linked to tasks: status ran and a time (${JSON.stringify(linked)})`);
  const links = await page.evaluate((run) => fetch(`/api/runs/${run}/links`).then((r) => r.json()), run);
  eq(links.aligned_host_ops, cliAligned, `${vp}: the paired run aligns as many host ops as the CLI's summary of the two files`);
  writeFileSync(join(art, `pair_after_${vp}.png`), await page.screenshot());
  eq(page.errors.length, 0, `${vp}: no page error (${page.errors.join('; ')})`);
  await page.close();

  // A model that does not open: the server's message, the button back.
  const bad = await open('#run=1', viewport);
  await poll(bad, () => document.querySelector('#run-note button.run-note-pair'), null, 30000, 'the Pair button of run 1');
  eq(await bad.evaluate(() => document.querySelector('#run-note button.run-note-pair').textContent), 'Pair with broken.onnx', `${vp}: run 1 offers broken.onnx`);
  const badRuns = await bad.evaluate(() => window.__miDebug.state().runs.length);
  await bad.click('#run-note button.run-note-pair');
  const message = await poll(bad, () => {
    const e = document.querySelector('#run-note .run-note-pair-status.error');
    const b = document.querySelector('#run-note button.run-note-pair');
    return e && !e.hidden && b && !b.disabled ? e.textContent : false;
  }, null, 60000, 'the pairing error');
  check(message.startsWith('Could not pair: ') && message.includes(kBadModel), `${vp}: the note shows the server's message naming the file (${message})`);
  const after = await bad.evaluate(() => ({ run: window.__miDebug.state().panes[0].run, runs: window.__miDebug.state().runs.length }));
  eq(after.run, 1, `${vp}: the page stays on the trace-only run`);
  eq(after.runs, badRuns, `${vp}: no run was added`);
  writeFileSync(join(art, `pair_error_${vp}.png`), await bad.screenshot());
  await bad.close();
}

// The server kept serving through the failed pairing.
const runs = (await (await fetch(new URL('/api/runs', server.url))).json()).runs;
eq(runs.length, 3, 'the server lists its two runs and the one paired');
await browser.close();
await server.stop();
rmSync(tmp, { recursive: true, force: true });
done('e2e_pair_test');
