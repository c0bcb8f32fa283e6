// dagre peer: default options (rankdir TB, network-simplex ranker).
//   node --stack-size=N run_dagre.mjs GRAPH.json [--out positions.json]
import dagreMod from '@dagrejs/dagre';
import { parseArgs, readGraph, finish, fail, WARMUP } from './common.mjs';

const dagre = dagreMod.default ?? dagreMod;
const a = parseArgs(process.argv);
const g = readGraph(a.graph);
function layout(g) {
  const G = new dagre.graphlib.Graph({ multigraph: true });
  G.setGraph({ rankdir: 'TB' });
  G.setDefaultEdgeLabel(() => ({}));
  g.nodes.forEach((n, i) => G.setNode(String(i), { width: n.w, height: n.h }));
  g.edges.forEach(([s, t], i) => G.setEdge(String(s), String(t), {}, 'e' + i));
  const t0 = performance.now();
  dagre.layout(G);
  return [G, performance.now() - t0];
}

try {
  layout(WARMUP);  // JIT warm-up on a 3-node graph, untimed
  const [G, ms] = layout(g);
  const pos = { x: [], y: [], w: [], h: [], edges: [] };
  g.nodes.forEach((n, i) => { const v = G.node(String(i)); pos.x.push(v.x); pos.y.push(v.y); pos.w.push(n.w); pos.h.push(n.h); });
  g.edges.forEach(([s, t], i) => {
    const pts = G.edge({ v: String(s), w: String(t), name: 'e' + i }).points;
    pos.edges.push(pts.flatMap((p) => [p.x, p.y]));
  });
  finish('dagre', g, ms, pos, a.out);
} catch (e) { fail('dagre', e); }
