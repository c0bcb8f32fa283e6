#!/usr/bin/env python3
"""Writes a synthetic PyTorch (Kineto) trace of about N tasks for the
timeline query benchmark (bench/timeline/bench_timeline.sh).

Shape, as a training step on two GPUs looks in Kineto: a main host thread
issuing nested aten ops (aten::linear > aten::addmm) and runtime calls
(cudaLaunchKernel with correlation ids and ac2g flows, cudaMemcpyAsync,
cudaEventRecord / cudaStreamWaitEvent between a compute and a copy
stream), a second host thread (the autograd engine) doing the same for the
backward pass, and 8 device streams (2 GPUs x 4 streams) running kernels,
copies (gpu_memcpy), memsets and syncs, with idle gaps between
ProfilerStep annotations. Deterministic (seeded); standard library only;
the JSON is streamed out, so memory stays small.

    python3 bench/timeline/make_timeline_trace.py --tasks 1000000 --out /tmp/mi_timeline_1m.json

--varied-names (for the trace ingest benchmark, bench/trace/): names and
arguments vary as in a real model's trace instead of repeating ten kernel
names: kernel names carry template arguments (tile sizes, dtype, stages;
about 18,000 distinct), each op records its input shapes and types, and
Python-stack events name the module (one of 40,000) and the source line
that ran it. Without the flag the output is unchanged.
"""
import argparse
import json
import random

KERNELS = [
    # (kernel name, relative duration)
    ("ampere_sgemm_128x64_nn", 3.0),
    ("ampere_fp16_s16816gemm_fp16_256x128_ldg8_f2f_stages_32x3_nn", 4.0),
    ("void cudnn::cnn::conv2d_grouped_direct_kernel<float>", 5.0),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>", 0.4),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>", 0.5),
    ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>", 0.8),
    ("void at::native::(anonymous namespace)::layer_norm_kernel<float>", 0.7),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>", 0.6),
    ("flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>", 6.0),
    ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 8.0),
]
# (outer op, inner op): the outer one nests the inner one and its launches.
HOST_OPS = [("aten::linear", "aten::addmm"), ("aten::conv2d", "aten::convolution"),
            ("aten::add", None), ("aten::gelu", None), ("aten::softmax", "aten::_softmax"),
            ("aten::layer_norm", "aten::native_layer_norm"), ("aten::sum", None)]
# --varied-names: template arguments and module / source names to draw from.
TILES = [32, 48, 64, 96, 128, 160, 192, 256]
DTYPES = ["float", "__half", "__nv_bfloat16", "int8_t"]
MODULES = ["Linear", "Conv2d", "LayerNorm", "GELU", "Dropout", "Embedding", "MultiheadAttention",
           "Softmax"]
SOURCES = [f"torch/nn/modules/{m}.py" for m in ("linear", "conv", "normalization", "activation",
                                                 "dropout", "sparse", "container", "module")] + \
          [f"model/layers/block_{i}.py" for i in range(22)]
GPUS = 2
STREAMS = [7, 13, 20, 24]  # per GPU: compute, compute, copy, nccl
HOST_PID = 4242
THREADS = [4242, 4250]  # main thread, autograd engine thread


class Writer:
    def __init__(self, path):
        self.out = open(path, "w", encoding="utf-8")
        self.out.write('{"schemaVersion": 1, "deviceProperties": [{"id": 0}, {"id": 1}],\n"traceEvents": [\n')
        self.first = True
        self.tasks = 0

    def emit(self, ev):
        self.out.write(("" if self.first else ",\n") + json.dumps(ev, separators=(",", ":")))
        self.first = False
        if ev.get("ph") == "X":
            self.tasks += 1

    def x(self, cat, name, pid, tid, ts, dur, args=None):
        self.emit({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": round(ts, 3),
                   "dur": round(dur, 3), "args": args or {}})

    def close(self):
        self.out.write("\n]}\n")
        self.out.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=1_000_000, help="approximate task count (default 1,000,000)")
    ap.add_argument("--out", required=True, help="output .json path")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--varied-names", action="store_true",
                    help="vary names and arguments as a real trace does (see above)")
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    vrnd = random.Random(args.seed + 1)  # --varied-names only: leaves rnd's draws alone
    w = Writer(args.out)
    w.emit({"name": "process_name", "ph": "M", "pid": HOST_PID, "tid": 0, "args": {"name": "python"}})
    for tid, name in zip(THREADS, ["python main", "pt_autograd_0"]):
        w.emit({"name": "thread_name", "ph": "M", "pid": HOST_PID, "tid": tid, "args": {"name": name}})
    for gpu in range(GPUS):
        w.emit({"name": "process_name", "ph": "M", "pid": gpu, "tid": 0, "args": {"name": f"GPU {gpu}"}})
        for s in STREAMS:
            w.emit({"name": "thread_name", "ph": "M", "pid": gpu, "tid": s, "args": {"name": f"stream {s} "}})

    stream_free = {(g, s): 0.0 for g in range(GPUS) for s in STREAMS}
    host_t = {tid: 1000.0 for tid in THREADS}
    corr = 0
    external = 0
    event_id = 0
    step = 0
    ops_per_step = 1500
    op_index = 0
    while w.tasks < args.tasks:
        if op_index % ops_per_step == 0:
            step_start = min(host_t.values())
        # Forward ops on the main thread, backward ops on the autograd thread.
        tid = THREADS[(op_index // (ops_per_step // 2)) % 2]
        gpu = (op_index // 7) % GPUS
        outer, inner = HOST_OPS[op_index % len(HOST_OPS)]
        t = host_t[tid]
        kernels = rnd.randint(1, 4)
        external += 1
        op_start = t
        t += 1.0
        inner_start = t
        if inner:
            t += 0.5
        for k in range(kernels):
            corr += 1
            stream = STREAMS[0] if rnd.random() < 0.7 else STREAMS[1]
            if op_index % 50 == 0 and k == 0:
                stream = STREAMS[3]  # an all-reduce on the nccl stream
            kname, rel = KERNELS[rnd.randrange(len(KERNELS) - 1)] if stream != STREAMS[3] else KERNELS[-1]
            if args.varied_names:
                kname = (f"{kname.split('<')[0]}<{vrnd.choice(TILES)}, {vrnd.choice(TILES)}, "
                         f"{vrnd.choice(DTYPES)}, {vrnd.randint(2, 7)}>")
            launch = rnd.uniform(2.5, 4.5)
            w.x("cuda_runtime", "cudaLaunchKernel", HOST_PID, tid, t, launch,
                {"correlation": corr, "External id": external, "cbid": 211})
            start = max(t + rnd.uniform(3, 12), stream_free[(gpu, stream)])
            dur = rel * rnd.uniform(1.0, 4.0)
            w.x("kernel", kname, gpu, stream, start, dur,
                {"correlation": corr, "External id": external, "device": gpu, "stream": stream})
            w.emit({"ph": "s", "id": corr, "pid": HOST_PID, "tid": tid, "ts": round(t, 3), "cat": "ac2g",
                    "name": "ac2g"})
            w.emit({"ph": "f", "id": corr, "pid": gpu, "tid": stream, "ts": round(start, 3), "cat": "ac2g",
                    "name": "ac2g", "bp": "e"})
            stream_free[(gpu, stream)] = start + dur + rnd.uniform(0.3, 1.5)
            t += launch + rnd.uniform(0.5, 2.0)
        if op_index % 9 == 0:
            # A copy on the copy stream, ordered after the compute stream by
            # an event: record on compute, wait on copy, then the memcpy.
            # Shapes as Kineto writes them with enable_cuda_sync_events: the
            # runtime calls carry only cbid / correlation; the CUPTI sync
            # activity "Stream Wait Event" (on the waiting stream, timed as
            # the host call) names the recording stream and the
            # cudaEventRecord's correlation id.
            event_id += 1
            corr += 1
            record_corr = corr
            compute = (gpu, STREAMS[0])
            copy = (gpu, STREAMS[2])
            w.x("cuda_runtime", "cudaEventRecord", HOST_PID, tid, t, 1.2,
                {"External id": external, "cbid": 135, "correlation": corr})
            t += 1.5
            corr += 1
            w.x("cuda_runtime", "cudaStreamWaitEvent", HOST_PID, tid, t, 1.0,
                {"External id": external, "cbid": 147, "correlation": corr})
            w.x("cuda_sync", "Stream Wait Event", gpu, copy[1], t + 0.1, 0.8,
                {"cuda_sync_kind": "Stream Wait Event", "wait_on_stream": compute[1],
                 "wait_on_cuda_event_record_corr_id": record_corr, "wait_on_cuda_event_id": event_id,
                 "stream": copy[1], "correlation": corr, "device": gpu, "context": 1})
            t += 1.2
            corr += 1
            cdur = rnd.uniform(5, 40)
            w.x("cuda_runtime", "cudaMemcpyAsync", HOST_PID, tid, t, 3.0,
                {"correlation": corr, "External id": external, "cbid": 41})
            cstart = max(t + 4.0, stream_free[copy], stream_free[compute])
            hto = op_index % 2
            w.x("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)" if hto else "Memcpy DtoH (Device -> Pinned)",
                gpu, copy[1], cstart, cdur,
                {"correlation": corr, "External id": external, "device": gpu, "stream": copy[1],
                 "bytes": int(cdur * 12000)})
            stream_free[copy] = cstart + cdur + 0.5
            t += 3.5
        if op_index % 61 == 0:
            s = (gpu, STREAMS[1])
            mstart = stream_free[s]
            w.x("gpu_memset", "Memset (Device)", gpu, s[1], mstart, 1.5,
                {"device": gpu, "stream": s[1], "correlation": corr})
            stream_free[s] = mstart + 2.0
        if op_index % 211 == 0:
            s = (gpu, STREAMS[0])
            sstart = stream_free[s]
            sdur = rnd.uniform(3, 15)
            w.x("cuda_sync", "Stream Sync", gpu, s[1], sstart, sdur, {"device": gpu, "stream": s[1]})
            stream_free[s] = sstart + sdur + 0.5
        op_args = {"External id": external}
        if args.varied_names:
            dims = [[vrnd.choice([1, 2, 4, 8, 16, 32]), vrnd.randint(1, 4096), vrnd.choice(TILES) * 8]
                    for _ in range(vrnd.randint(1, 3))]
            op_args.update({"Input Dims": dims, "Input type": [vrnd.choice(DTYPES) for _ in dims],
                            "Sequence number": op_index, "Fwd thread id": 0})
            layer = vrnd.randrange(5000)
            module = MODULES[op_index % len(MODULES)]
            w.x("python_function", f"nn.Module: {module}_{layer}", HOST_PID, tid, op_start - 0.4,
                t - op_start + 1.0, {"Python id": op_index, "Python parent id": layer})
            w.x("python_function", f"{vrnd.choice(SOURCES)}({vrnd.randint(10, 2000)}): forward",
                HOST_PID, tid, op_start - 0.2, t - op_start + 0.6, {"Python id": op_index + 1})
        if inner:
            w.x("cpu_op", inner, HOST_PID, tid, inner_start, t - inner_start, op_args)
            t += 0.5
        w.x("cpu_op", outer, HOST_PID, tid, op_start, t - op_start, op_args)
        host_t[tid] = t + rnd.uniform(0.5, 3.0)
        op_index += 1
        if op_index % ops_per_step == 0:
            end = max(host_t.values())
            w.x("user_annotation", f"ProfilerStep#{step}", HOST_PID, THREADS[0], step_start, end - step_start)
            step += 1
            # An idle gap between steps (data loading).
            gap = end + rnd.uniform(300, 1500)
            for k in host_t:
                host_t[k] = gap
    w.close()
    print(f"{args.out}: {w.tasks} tasks, {corr} correlation ids, {event_id} event pairs, {step} steps, "
          f"{GPUS * len(STREAMS)} device streams, {len(THREADS)} host threads")


if __name__ == "__main__":
    main()
