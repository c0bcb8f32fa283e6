// ONNX Runtime for Node as a subprocess of the Python package
// (model_inspector.backends.onnxruntime): loads models into sessions and runs
// them on request, tensors crossing as raw bytes.
//
//   node ort_node_runner.mjs [CANDIDATE...]
//
// onnxruntime-node is looked up in the order of the candidates: a directory
// (the package folder itself, or a node_modules folder that holds it), or
// `--cwd` for Node's own resolution from the working directory (tried last
// when not given). The first that loads is used; the reply to "hello" says
// which.
//
// Protocol (stdin: requests, stdout: replies, one reply per request, in
// order). A frame is
//
//   uint32 little-endian  length of the header
//   header                JSON (UTF-8)
//   payload               the bytes of header.tensors[i], one after another
//
// where header.tensors is [{name, dtype, dims, nbytes}] (dtype as ONNX
// Runtime for JavaScript names it: float32, float16, int64, bool, ...).
// A tensor spec with an `offset` has no bytes in the frame: they are in the
// request's `in_file` at that offset (inputs), or, when the run request
// names an `out_file`, the outputs are written there (64-byte aligned
// offsets in the reply) instead of into the frame. The files are shared
// memory (/dev/shm) set up by the Python side: one copy each way instead
// of a pipe's two, which is most of what probing every node costs.
// Requests: {op: "hello"}, {op: "load", path, options} -> {session,
// inputNames, outputNames, inputs: [{name, dtype, dims}]}, {op: "run",
// session, fetches: [names], tensors[, in_file][, out_file]} -> {tensors,
// run_ns (session.run's own time), out_bytes}, {op: "end_profiling",
// session} -> {}, {op: "release", session} -> {}, {op: "close_file", path}
// -> {}. Every reply has ok: true,
// or ok: false and error: "<what went wrong>". Nothing else is written to
// stdout (console output goes to stderr).

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

// Keep stdout for frames only.
console.log = (...args) => console.error(...args);
console.info = console.log;

function fromCwd(tried) {
  try {
    const req = createRequire(path.join(process.cwd(), 'noop.js'));
    const main = req.resolve('onnxruntime-node');
    return { ort: req(main), where: path.dirname(path.dirname(main)) };
  } catch (e) {
    tried.push(`resolution from ${process.cwd()}: ${e.message}`);
    return null;
  }
}

function fromDir(dir, tried) {
  for (const pkg of [dir, path.join(dir, 'onnxruntime-node')]) {
    if (!fs.existsSync(path.join(pkg, 'package.json'))) continue;
    try {
      const req = createRequire(path.join(pkg, 'package.json'));
      return { ort: req(pkg), where: pkg };
    } catch (e) {
      tried.push(`${pkg}: ${e.message}`);
      return null;
    }
  }
  tried.push(`${dir}: no onnxruntime-node package there`);
  return null;
}

function loadOrt(candidates) {
  const tried = [];
  if (!candidates.includes('--cwd')) candidates = [...candidates, '--cwd'];
  for (const c of candidates) {
    const got = c === '--cwd' ? fromCwd(tried) : fromDir(c, tried);
    if (got) return got;
  }
  return { ort: null, tried };
}

const found = loadOrt(process.argv.slice(2));
const ort = found.ort;
const sessions = new Map();
let nextSession = 1;

function writeFrame(header, buffers = []) {
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const len = Buffer.alloc(4);
  len.writeUInt32LE(json.length, 0);
  // Writes to a pipe are synchronous on Linux: the buffers are not copied.
  process.stdout.write(len);
  process.stdout.write(json);
  for (const b of buffers) process.stdout.write(b);
}

const TYPED = {
  float32: Float32Array,
  float64: Float64Array,
  int8: Int8Array,
  uint8: Uint8Array,
  int16: Int16Array,
  uint16: Uint16Array,
  int32: Int32Array,
  uint32: Uint32Array,
  int64: BigInt64Array,
  uint64: BigUint64Array,
  bool: Uint8Array,
  float16: Uint16Array,
};

const files = new Map();

function fileFd(p) {
  let fd = files.get(p);
  if (fd === undefined) {
    fd = fs.openSync(p, 'r+');
    files.set(p, fd);
  }
  return fd;
}

function toTensor(spec, bytes, inFile) {
  const Typed = TYPED[spec.dtype];
  if (!Typed) throw new Error(`input ${spec.name}: unsupported dtype ${spec.dtype}`);
  // A buffer of its own, aligned for the element size (a slice of the
  // frame may not be).
  const copy = new Uint8Array(spec.nbytes);
  if (spec.offset !== undefined) {
    const got = fs.readSync(fileFd(inFile), copy, 0, spec.nbytes, spec.offset);
    if (got !== spec.nbytes) throw new Error(`input ${spec.name}: short read from ${inFile}`);
  } else {
    copy.set(bytes);
  }
  let data = new Typed(copy.buffer, 0, spec.nbytes / Typed.BYTES_PER_ELEMENT);
  if (spec.dtype === 'float16' && typeof Float16Array !== 'undefined') {
    data = new Float16Array(copy.buffer, 0, spec.nbytes / 2);
  }
  return new ort.Tensor(spec.dtype, data, spec.dims);
}

function tensorBytes(t) {
  const d = t.data;
  if (t.type === 'string') throw new Error('string tensors are not supported');
  return Buffer.from(d.buffer, d.byteOffset, d.byteLength);
}

async function handle(header, payload) {
  switch (header.op) {
    case 'hello':
      return [{
        ok: true,
        where: found.where,
        versions: ort.env?.versions ?? {},
        node: process.version,
      }];
    case 'load': {
      const session = await ort.InferenceSession.create(header.path, header.options ?? {});
      const id = nextSession++;
      sessions.set(id, session);
      const meta = session.inputMetadata ?? [];
      const inputs = session.inputNames.map((name) => {
        const m = Array.isArray(meta) ? meta.find((x) => x.name === name) : undefined;
        return { name, dtype: m?.type ?? null, dims: m?.shape ?? null };
      });
      return [{
        ok: true,
        session: id,
        inputNames: session.inputNames,
        outputNames: session.outputNames,
        inputs,
      }];
    }
    case 'run': {
      const session = sessions.get(header.session);
      if (!session) throw new Error(`no session ${header.session}`);
      const feeds = {};
      let at = 0;
      for (const spec of header.tensors ?? []) {
        if (spec.offset !== undefined) {
          feeds[spec.name] = toTensor(spec, null, header.in_file);
        } else {
          feeds[spec.name] = toTensor(spec, payload.subarray(at, at + spec.nbytes));
          at += spec.nbytes;
        }
      }
      const fetches = header.fetches ?? session.outputNames;
      const t0 = process.hrtime.bigint();
      const out = await session.run(feeds, fetches);
      const t1 = process.hrtime.bigint();
      const specs = [];
      const buffers = [];
      let pos = 0;
      const fd = header.out_file ? fileFd(header.out_file) : null;
      const w0 = process.hrtime.bigint();
      for (const name of fetches) {
        const t = out[name];
        if (!t) throw new Error(`run: no output ${name}`);
        const b = tensorBytes(t);
        const spec = { name, dtype: t.type, dims: t.dims.map(Number), nbytes: b.length };
        if (fd !== null) {
          spec.offset = pos;
          let done = 0;
          while (done < b.length) done += fs.writeSync(fd, b, done, b.length - done, pos + done);
          pos += Math.ceil(b.length / 64) * 64;
        } else {
          buffers.push(b);
        }
        specs.push(spec);
      }
      const w1 = process.hrtime.bigint();
      return [{ ok: true, tensors: specs, run_ns: Number(t1 - t0), write_ns: Number(w1 - w0),
                out_bytes: pos }, buffers];
    }
    case 'end_profiling': {
      const session = sessions.get(header.session);
      if (!session) throw new Error(`no session ${header.session}`);
      session.endProfiling();
      return [{ ok: true }];
    }
    case 'close_file': {
      const fd = files.get(header.path);
      if (fd !== undefined) {
        files.delete(header.path);
        fs.closeSync(fd);
      }
      return [{ ok: true }];
    }
    case 'release': {
      const session = sessions.get(header.session);
      if (session) {
        sessions.delete(header.session);
        await session.release();
      }
      return [{ ok: true }];
    }
    default:
      throw new Error(`unknown request op ${JSON.stringify(header.op)}`);
  }
}

// Frames arrive in chunks; requests are handled one at a time, in order.
// Chunks are joined only once a whole frame is there, so a large tensor is
// copied once, not once per chunk.
let chunks = [];
let buffered = 0;
let busy = false;

function head(n) {
  if (chunks[0].length < n) chunks = [Buffer.concat(chunks, buffered)];
  return chunks[0];
}

function consume(n) {
  const first = head(n);
  const out = first.subarray(0, n);
  if (first.length === n) chunks.shift();
  else chunks[0] = first.subarray(n);
  buffered -= n;
  return out;
}

async function pump() {
  if (busy) return;
  busy = true;
  try {
    for (;;) {
      if (buffered < 4) break;
      const hlen = head(4).readUInt32LE(0);
      if (buffered < 4 + hlen) break;
      const header = JSON.parse(head(4 + hlen).subarray(4, 4 + hlen).toString('utf8'));
      const need = (header.tensors ?? []).reduce(
        (a, t) => a + (t.offset === undefined ? t.nbytes : 0), 0);
      if (buffered < 4 + hlen + need) break;
      consume(4 + hlen);
      const payload = need ? consume(need) : Buffer.alloc(0);
      try {
        if (!ort) {
          throw new Error(
            `onnxruntime-node not found (tried: ${found.tried.join('; ')}); ` +
              'set MI_ONNXRUNTIME_NODE to its package folder');
        }
        const [reply, buffers] = await handle(header, payload);
        writeFrame(reply, buffers);
      } catch (e) {
        writeFrame({ ok: false, error: String(e?.message ?? e) });
      }
    }
  } finally {
    busy = false;
  }
}

process.stdin.on('data', (chunk) => {
  chunks.push(chunk);
  buffered += chunk.length;
  pump();
});
process.stdin.on('end', async () => {
  for (const s of sessions.values()) await s.release();
  process.exit(0);
});
