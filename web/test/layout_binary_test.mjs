// Unit test of src/layout_binary.ts on real files written by the C++ CLI:
// `render --format binary` and `--format json` of the same graph must decode
// to the same content. Also: bad magic / version / truncation are rejected
// with a clear error.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check, done, eq, importTs, miBinary, readArrayBuffer, repoDir } from './lib.mjs';

const bin = miBinary();
const lb = await importTs('rpc/layout_binary');
const tmp = mkdtempSync(join(tmpdir(), 'mi-layout-'));

const kinds = { node: 0, graph_input: 1, graph_output: 2, group: 3 };
const groupKinds = { scope: 0, fusion: 1, repeat: 2, chunk: 3 };
const near = (a, b) => Math.abs(a - b) < 1e-3;

function render(args, fmt, out) {
  execFileSync(bin, ['render', ...args, '--format', fmt, '--out', out, '-q'], { stdio: ['ignore', 'ignore', 'inherit'] });
}

function compare(name, args) {
  const binPath = join(tmp, `${name}.bin`), jsonPath = join(tmp, `${name}.json`);
  render(args, 'binary', binPath);
  render(args, 'json', jsonPath);
  const j = JSON.parse(readFileSync(jsonPath, 'utf8'));
  const buf = readArrayBuffer(binPath);
  const l = lb.decodeLayout(buf);
  // No copies: every section views the file's buffer.
  check(l.itemBox.buffer === buf && l.stringData.buffer === buf && l.points.buffer === buf, `${name}: sections are views of one buffer`);
  eq(l.version, 1, `${name}: version`);
  eq(l.title, j.title, `${name}: title`);
  eq(l.direction, j.direction, `${name}: direction`);
  check(near(l.width, j.width) && near(l.height, j.height), `${name}: size`);
  eq(l.itemCount, j.items.length, `${name}: items`);
  for (let i = 0; i < j.items.length; ++i) {
    const it = j.items[i];
    const ok = l.itemKind[i] === kinds[it.kind] && l.itemRef[i] === it.ref &&
      (it.model_id === null || it.model_id === undefined ? l.itemModelId[i] === lb.kNone : l.itemModelId[i] === it.model_id) &&
      it.box.every((v, k) => near(l.itemBox[4 * i + k], v)) &&
      l.str(l.itemTitle[i]) === it.title && l.str(l.itemSubtitle[i]) === it.subtitle;
    if (!check(ok, `${name}: item ${i} ${JSON.stringify(it)}`)) break;
  }
  eq(l.edgeCount, j.edges.length, `${name}: edges`);
  for (let e = 0; e < j.edges.length; ++e) {
    const ed = j.edges[e];
    const b = l.edgePointBegin[e], en = l.edgePointBegin[e + 1];
    const ok = l.edgeFrom[e] === ed.from && l.edgeTo[e] === ed.to && l.edgeCountArr[e] === ed.count &&
      ((l.edgeFlags[e] & 1) !== 0) === ed.reversed && ((l.edgeFlags[e] & 2) !== 0) === ed.label_shown &&
      l.str(l.edgeLabel[e]) === ed.label && en - b === ed.points.length &&
      ed.points.every((p, k) => near(l.points[2 * (b + k)], p[0]) && near(l.points[2 * (b + k) + 1], p[1]));
    if (!check(ok, `${name}: edge ${e} ${JSON.stringify(ed).slice(0, 200)}`)) break;
  }
  eq(Array.from(l.frames).join(','), j.frames.join(','), `${name}: frames`);
  // Optional sections 30-33 (null when absent): sizes, and the silhouette bands lie across the frame.
  if (l.frameProfiles) {
    eq(l.frameProfiles.length, 32 * l.frameCount, `${name}: frame_profiles size`);
    let inside = true;
    for (let k = 0; k < l.frameCount && inside; ++k) {
      const g = l.frames[k], lr = l.direction === 'lr';
      const a = l.groupBounds[4 * g + (lr ? 1 : 0)], w = l.groupBounds[4 * g + (lr ? 3 : 2)];
      for (let b = 0; b < 16; ++b) {
        const lo = l.frameProfiles[32 * k + 2 * b], hi = l.frameProfiles[32 * k + 2 * b + 1];
        if (!(lo <= hi && lo >= a - 0.5 && hi <= a + w + 0.5)) { inside = false; console.error(`  frame ${k} band ${b}: [${lo}, ${hi}] outside [${a}, ${a + w}]`); break; }
      }
    }
    check(inside, `${name}: frame_profiles bands lie within their frames`);
  } else console.log(`  ${name}: no frame_profiles (section 30)`);
  for (const [key, id] of [['nodeStatus', 31], ['nodeTimeUs', 32], ['nodeTaskCount', 33]]) {
    if (l[key]) eq(l[key].length, l.nodeCount, `${name}: section ${id} (${key}) has one entry per layout node`);
  }
  if (l.nodeStatus) check(Array.from(l.nodeStatus).every((v) => v <= 4), `${name}: node_status values 0..4`);
  eq(l.groupCount, j.groups.length, `${name}: groups`);
  for (let g = 0; g < j.groups.length; ++g) {
    const gr = j.groups[g];
    const tops = gr.top_ops ?? [];
    const ok = l.groupParent[g] === gr.parent && l.groupRepeatOf[g] === gr.repeat_of &&
      l.groupKind[g] === groupKinds[gr.kind] && ((l.groupFlags[g] & 1) !== 0) === gr.expanded &&
      ((l.groupFlags[g] & 2) !== 0) === gr.visible && l.groupDepth[g] === gr.depth &&
      l.groupNodeCount[g] === gr.node_count && l.str(l.groupLabel[g]) === gr.label &&
      gr.bounds.every((v, k) => near(l.groupBounds[4 * g + k], v)) &&
      [0, 1, 2].every((k) => k < tops.length
        ? l.groupTopOps[3 * g + k] === tops[k].op && l.groupTopOpCounts[3 * g + k] === tops[k].count
        : l.groupTopOps[3 * g + k] === -1);
    if (!check(ok, `${name}: group ${g} ${JSON.stringify(gr)}`)) break;
  }
  eq(Array.from(l.opNames, (s) => l.str(s)).join(','), j.op_names.join(','), `${name}: op_names`);
  eq(Array.from(l.nodeItem).join(','), j.nodes.item.join(','), `${name}: node_item`);
  eq(Array.from(l.nodeModelId).join(','), j.nodes.model_id.join(','), `${name}: node_model_id`);
  eq(l.str(0), '', `${name}: string 0 is empty`);
  // Helpers.
  const n = lb.graphNodeCount(l);
  check(n > 0 && n <= l.nodeCount, `${name}: graphNodeCount ${n}`);
  for (let g = 1; g < Math.min(l.groupCount, 20); ++g) {
    const path = lb.groupPath(l, g);
    check(path.endsWith(l.str(l.groupLabel[g])), `${name}: groupPath(${g}) = ${path}`);
  }
  console.log(`  ${name}: ${l.itemCount} items, ${l.edgeCount} edges, ${l.groupCount} groups, ${buf.byteLength} bytes`);
  return buf;
}

const resnet = join(repoDir, 'test/fixtures/resnet18/model.onnx');
const transformer = join(repoDir, 'test/fixtures/transformer/model.onnx');
const buf = compare('resnet18_default', [resnet]);
compare('resnet18_collapsed', [resnet, '--max-items', '20']);
compare('transformer_lr', [transformer, '--direction', 'lr']);
compare('transformer_none', [transformer, '--groups', 'none']);

// Bad input is rejected with a clear error.
const expectError = (b, fragment, what) => {
  try {
    lb.decodeLayout(b);
    check(false, `${what}: no error`);
  } catch (e) {
    check(e.name === 'LayoutBinaryError' && e.message.includes(fragment), `${what}: error "${e.message}" lacks "${fragment}"`);
  }
};
const bad = buf.slice(0);
new Uint8Array(bad)[0] = 0x58;
expectError(bad, 'bad magic', 'bad magic');
const v2 = buf.slice(0);
new Uint32Array(v2, 4, 1)[0] = 2;
expectError(v2, 'unsupported layout binary version 2', 'version 2');
expectError(buf.slice(0, 40), 'too short', 'truncated header');
{
  // A binary without the optional sections 30-33 (an older server) still decodes: they come back null.
  const u = new Uint32Array(buf, 0, 16);
  const count = u[14];
  const dir = new Uint32Array(buf, 64, 4 * count);
  const keep = [];
  for (let k = 0; k < count; ++k) if (dir[4 * k] < 30) keep.push(Array.from(dir.subarray(4 * k, 4 * k + 4)));
  const shift = 16 * (count - keep.length);
  const oldHeader = 64 + 16 * count, newHeader = 64 + 16 * keep.length;
  const out = new ArrayBuffer(buf.byteLength - shift);
  new Uint8Array(out).set(new Uint8Array(buf, 0, 64));
  new Uint8Array(out).set(new Uint8Array(buf, oldHeader, buf.byteLength - oldHeader - shift), newHeader);
  const h = new Uint32Array(out, 0, 16);
  h[14] = keep.length; h[2] = newHeader;
  const nd = new Uint32Array(out, 64, 4 * keep.length);
  keep.forEach((e, k) => { nd.set([e[0], e[1], e[2] - shift, e[3]], 4 * k); });
  try {
    const l = lb.decodeLayout(out);
    check(l.frameProfiles === null && l.nodeStatus === null && l.nodeTimeUs === null && l.nodeTaskCount === null && l.itemCount > 0,
      'a version-1 binary without sections 30-33 decodes, optional sections null');
  } catch (e) { check(false, `binary without sections 30-33: ${e.message}`); }
}
{
  // Cut the buffer one byte before the end of string_data (section 29).
  const u = new Uint32Array(buf, 0, 16);
  const dir = new Uint32Array(buf, 64, 4 * u[14]);
  let end = 0;
  for (let k = 0; k < u[14]; ++k) if (dir[4 * k] === 29) end = dir[4 * k + 2] + dir[4 * k + 3];
  expectError(buf.slice(0, end - 1), 'outside', 'truncated body');
  console.log(`  ${u[14]} sections in the directory`);
}
done('layout_binary_test');
