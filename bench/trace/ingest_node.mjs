// Node's JSON.parse on one trace, timed in-process the way
// mi_bench_trace_ingest times ours: read the file (gunzip when .gz), parse.
//   node ingest_node.mjs TRACE     -> one JSON line {ms, events} or {error}
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

const path = process.argv[2];
const t0 = process.hrtime.bigint();
try {
  let bytes = readFileSync(path);
  if (path.endsWith('.gz')) bytes = gunzipSync(bytes);
  const doc = JSON.parse(bytes.toString('utf8'));
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const events = Array.isArray(doc) ? doc.length : doc.traceEvents.length;
  console.log(JSON.stringify({ tool: 'node', ms, events }));
} catch (e) {
  // V8 cannot hold a string over ~512 MB (0x1fffffe8 chars).
  console.log(JSON.stringify({ tool: 'node', error: String(e.message).slice(0, 200) }));
}
