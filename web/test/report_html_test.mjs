// The HTML reports of `model-inspector diff --format html` and
// `model-inspector report` rendered in Debian's Chromium (playwright-core):
//   - the page loads from file:// and requests nothing else (no network,
//     no external asset), with no console error (a CSP violation would log
//     one);
//   - the screenshot shows the verdict box in the failed colour, the
//     changed subgraph's removed and added nodes in their legend colours
//     and the op-type chart's bars in the series colours (pixels read from
//     the screenshot at the elements' boxes; the colours are written out
//     below from src/report/diff_html.cc's legend);
//   - names holding markup are shown as text: the hand-filled report with
//     "<script>alert(1)</script>" in its names (src/report/report_samples)
//     runs no script and shows the name literally;
//   - the single-run report draws its op-type chart and both graph levels.
// Env: MI_BINARY (the CLI), MI_REPORT_SAMPLES (build/src/report/
// diff_report_samples), MI_TEST_ARTIFACTS (screenshots).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { artifactsDir, check, colorDistance, done, eq, fail, launchBrowser, miBinary, pixelsAt, repoDir } from './lib.mjs';

const bin = miBinary();
const samples = process.env.MI_REPORT_SAMPLES;
if (!samples || !existsSync(samples)) fail('MI_REPORT_SAMPLES is not set to the built diff_report_samples (build/src/report/diff_report_samples)');
const art = artifactsDir();
mkdirSync(art, { recursive: true });
const tmp = mkdtempSync(join(tmpdir(), 'mi-report-html-'));
const resnet = join(repoDir, 'test/fixtures/resnet18');

// The reports: a real diff (ORT "all" against "basic": 15 fusions lost, the
// gate fails, exit code 1), a single run, the hand-filled samples.
const diffHtml = join(tmp, 'diff.html');
const d = spawnSync(bin, ['diff', join(resnet, 'ort_all'), join(resnet, 'ort_basic'), '--format', 'html', '--out', diffHtml, '-q']);
eq(d.status, 1, `diff exits 1 (a rule crossed): ${d.stderr}`);
const runHtml = join(tmp, 'run.html');
execFileSync(bin, ['report', join(resnet, 'ort_all'), '--out', runHtml]);
execFileSync(samples, ['write', tmp]);

const hex = (h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));
const kFailedBg = hex('#ffebe9');
const kAddedFill = hex('#dafbe1');
const kRemovedFill = hex('#ffebe9');
const kBaseBar = hex('#8c959f');
const kNewBar = hex('#0969da');

const browser = await launchBrowser();
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });

/** Opens a report file; returns the URLs it requested besides itself and its console errors. */
async function open(path) {
  const url = pathToFileURL(path).href;
  const requests = [];
  const errors = [];
  const onRequest = (r) => { if (r.url() !== url) requests.push(r.url()); };
  const onConsole = (m) => { if (m.type() === 'error') errors.push(m.text()); };
  page.on('request', onRequest);
  page.on('console', onConsole);
  await page.goto(url, { waitUntil: 'load' });
  page.off('request', onRequest);
  page.off('console', onConsole);
  return { requests, errors };
}

/** Centre-top point inside each element's box (above its text), in page pixels. */
const boxesOf = (selector) => page.evaluate((sel) => Array.from(document.querySelectorAll(sel)).map((e) => {
  const r = e.getBoundingClientRect();
  return { x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height };
}), selector);

// ---- the real diff ------------------------------------------------------
{
  const { requests, errors } = await open(diffHtml);
  eq(requests.length, 0, `the diff report requests nothing (${requests.join(', ')})`);
  eq(errors.length, 0, `no console errors (${errors.join(' | ')})`);
  eq(await page.evaluate(() => document.querySelectorAll('script').length), 0, 'no script element');
  const verdict = await page.evaluate(() => document.getElementById('verdict').textContent);
  eq(verdict, 'FAILED: 1 of 3 rules crossed', 'the verdict');
  const png = await page.screenshot({ fullPage: true, path: join(art, 'report_diff.png') });
  const [vb] = await boxesOf('#verdict');
  const removed = await boxesOf('g.node.removed rect');
  const added = await boxesOf('g.node.added rect');
  const bars = await boxesOf('svg.bar-chart rect.bar');
  check(removed.length >= 15, `the changed subgraph draws the 15 lost fused nodes removed (${removed.length})`);
  check(added.length >= 1, `and the unfused nodes added (${added.length})`);
  check(bars.length >= 2, `the op-type chart has bars (${bars.length})`);
  // Inside each box: 3 px below the top edge, at the middle (above the text).
  const at = (b) => [b.x + b.w / 2, b.y + 3];
  const px = await pixelsAt(page, png, [
    [vb.x + 6, vb.y + vb.h / 2], at(removed[0]), at(added[0]),
    [bars[0].x + 1, bars[0].y + bars[0].h / 2], [bars[1].x + 1, bars[1].y + bars[1].h / 2]]);
  check(colorDistance(px[0], kFailedBg) <= 6, `the verdict box is drawn in the failed colour: ${px[0]}`);
  check(colorDistance(px[1], kRemovedFill) <= 6, `a removed node is drawn in the removed colour: ${px[1]}`);
  check(colorDistance(px[2], kAddedFill) <= 6, `an added node is drawn in the added colour: ${px[2]}`);
  check(colorDistance(px[3], kBaseBar) <= 6, `the first bar is the base series colour: ${px[3]}`);
  check(colorDistance(px[4], kNewBar) <= 6, `the second bar is the new series colour: ${px[4]}`);
}

// ---- names with markup ----------------------------------------------------
{
  let dialogs = 0;
  const onDialog = (dlg) => { dialogs++; dlg.dismiss().catch(() => {}); };
  page.on('dialog', onDialog);
  const { requests } = await open(join(tmp, 'nasty.html'));
  page.off('dialog', onDialog);
  eq(dialogs, 0, 'a name holding <script>alert(1)</script> runs no script');
  eq(requests.length, 0, 'the samples report requests nothing');
  eq(await page.evaluate(() => document.querySelectorAll('script').length), 0, 'no script element made from a name');
  const text = await page.evaluate(() => document.body.innerText);
  check(text.includes('</testcase><script>alert(1)</script>'), 'the name is shown as text');
  await page.screenshot({ fullPage: true, path: join(art, 'report_nasty.png') });
}

// ---- the single-run report ------------------------------------------------
{
  const { requests, errors } = await open(runHtml);
  eq(requests.length, 0, 'the run report requests nothing');
  eq(errors.length, 0, `no console errors (${errors.join(' | ')})`);
  const svgs = await page.evaluate(() => Array.from(document.querySelectorAll('svg')).map((s) => s.getAttribute('class')));
  eq(svgs.join(','), 'bar-chart,graph,graph', 'the op-type chart and both levels drawn');
  const png = await page.screenshot({ fullPage: true, path: join(art, 'report_run.png') });
  // A Conv node of the framework graph is drawn in the fill its SVG gives.
  const conv = await page.evaluate(() => {
    const g = Array.from(document.querySelectorAll('svg.graph g.node')).find((n) => n.querySelectorAll('text')[1]?.textContent === 'Conv');
    const r = g.querySelector('rect'), b = r.getBoundingClientRect();
    return { fill: r.getAttribute('fill'), x: b.left + window.scrollX + b.width / 2, y: b.top + window.scrollY + 3 };
  });
  const [cpx] = await pixelsAt(page, png, [[conv.x, conv.y]]);
  check(colorDistance(cpx, hex(conv.fill)) <= 6, `a Conv node is drawn in its op colour ${conv.fill}: ${cpx}`);
}

await browser.close();
done('report_html_test');
