// Shared I/O for the Node peer runners: read the neutral graph JSON, write the
// positions JSON, print one result line. Only the layout call is timed.
import { readFileSync, writeFileSync } from 'node:fs';

export function parseArgs(argv) {
  const a = { graph: null, out: null };
  for (let i = 2; i < argv.length; i++) {
    if (argv[i] === '--out') a.out = argv[++i];
    else a.graph = argv[i];
  }
  if (!a.graph) { console.error('usage: node RUNNER GRAPH.json [--out positions.json]'); process.exit(2); }
  return a;
}

export const readGraph = (p) => JSON.parse(readFileSync(p, 'utf8'));

export function finish(tool, g, ms, pos, out) {
  if (out) writeFileSync(out, JSON.stringify(pos));
  const r = { tool, ms: +ms.toFixed(2), nodes: g.nodes.length, edges: g.edges.length,
              peak_rss_kb: process.resourceUsage().maxRSS };
  console.log(JSON.stringify(r));
}

// Stack overflow (RangeError) is reported as a failure, not a crash.
export function fail(tool, e) {
  const overflow = e instanceof RangeError && /call stack/i.test(String(e.message));
  console.log(JSON.stringify({ tool, error: overflow ? 'stack overflow' : String(e && e.message || e).slice(0, 200) }));
  process.exit(3);
}

// Tiny graph laid out once, untimed, before the measured run (JIT warm-up).
export const WARMUP = { nodes: [{ w: 50, h: 36 }, { w: 50, h: 36 }, { w: 50, h: 36 }], edges: [[0, 1], [0, 2], [1, 2]] };
