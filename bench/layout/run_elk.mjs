// elkjs peer: algorithm 'layered', direction DOWN (to match TB), everything
// else default (orthogonal edge routing). Runs in-process (no web worker).
//   node --stack-size=N run_elk.mjs GRAPH.json [--out positions.json]
import ELK from 'elkjs/lib/elk.bundled.js';
import { parseArgs, readGraph, finish, fail, WARMUP } from './common.mjs';

const a = parseArgs(process.argv);
const g = readGraph(a.graph);
async function layout(g) {
  const root = {
    id: 'root',
    layoutOptions: { 'elk.algorithm': 'layered', 'elk.direction': 'DOWN' },
    children: g.nodes.map((n, i) => ({ id: 'n' + i, width: n.w, height: n.h })),
    edges: g.edges.map(([s, t], i) => ({ id: 'e' + i, sources: ['n' + s], targets: ['n' + t] })),
  };
  const elk = new ELK();
  const t0 = performance.now();
  const r = await elk.layout(root);
  return [r, performance.now() - t0];
}

try {
  await layout(WARMUP);  // JIT warm-up on a 3-node graph, untimed
  const [r, ms] = await layout(g);
  const pos = { x: [], y: [], w: [], h: [], edges: [] };
  r.children.forEach((c, i) => { pos.x.push(c.x + c.width / 2); pos.y.push(c.y + c.height / 2); pos.w.push(c.width); pos.h.push(c.height); });
  const byId = new Map(r.edges.map((e) => [e.id, e]));
  g.edges.forEach((_, i) => {
    const pts = [];
    for (const s of byId.get('e' + i).sections ?? []) {
      for (const p of [s.startPoint, ...(s.bendPoints ?? []), s.endPoint]) pts.push(p.x, p.y);
    }
    pos.edges.push(pts);
  });
  finish('elk', g, ms, pos, a.out);
} catch (e) { fail('elk', e); }
