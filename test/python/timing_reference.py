"""A second implementation of the timing analyses of
docs/design/analyses.md, for PyTorch-profiler (Kineto and legacy autograd
profiler) traces, written from that document and the importers' documented
event mapping (src/importers/chrome_trace/README.md), reading the trace JSON
itself — never model-inspector's output. test_timing_goldens.py compares the
summary goldens' critical path, idle, host synchronize and copy/compute
overlap figures with what this module derives.

Where the document leaves a choice open (which of several equally good
predecessors a path keeps, which task ends a gap), the rule is the one
written down in docs/design/analyses.md ("Ties"), implemented here
separately; the critical path's length is also checked against networkx's
longest path over a start/end node graph (HTA's weighting), which needs no
tie rule at all.

Times are integer nanoseconds parsed from the JSON text with Decimal
(Kineto timestamps are ~1.6e15 us with ns digits, beyond a double).
"""
import gzip
import heapq
import json
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

import networkx

# --- Reading the trace --------------------------------------------------------

HOST_OP, RUNTIME, COMPUTE, DATA_MOVEMENT, SYNC, ANNOTATION, OTHER = (
    "host_op", "runtime", "compute", "data_movement", "sync", "annotation", "other")
EXECUTION = (COMPUTE, DATA_MOVEMENT, SYNC)


@dataclass(eq=False)  # hashed by identity
class Task:
    index: int  # order of the task events in the file
    name: str
    cat: str
    kind: str
    track: tuple  # ("host", pid, tid) or ("device", device, stream)
    start: int  # ns
    dur: int  # ns
    correlation: int = -1
    external_id: int = -1
    parent: "Task" = None  # device work, runtime calls: their host op (External id)
    launch: "Task" = None  # device work: the runtime call of its correlation id
    node: int = -1  # the ONNX node (index in the graph) an aligned host op runs
    node_op_type: str = ""
    run: str = None  # ProfilerStep#N, None before the first (set by align_to_onnx)

    @property
    def end(self):
        return self.start + self.dur

    @property
    def on_device(self):
        return self.track[0] == "device"

    @property
    def launcher(self):
        """The host task that launched device work: the runtime call of
        the same correlation id, else the host op it names."""
        return self.launch if self.launch is not None else self.parent

    def label(self):
        """Op type for "time on the path by op type": device work is named
        after the host op that launched it, a host op aligned to a graph
        node after the node's op type, anything else after itself."""
        if self.on_device and self.parent is not None:
            return self.parent.name
        if self.node_op_type:
            return self.node_op_type
        return self.name


def to_ns(value):
    """Microseconds as written in the JSON (int or Decimal) to integer ns,
    rounding half away from zero below the ns."""
    return int((Decimal(value) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def number(value):
    """A pid / tid written as a number or as a string of digits is that
    number ("tid": "25738" in 2021 traces); other strings stay labels."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return value


def kind_of(cat, name, pid):
    """The task kind of a complete event, per the importer's dialect table
    (src/importers/chrome_trace/README.md), for the categories these
    traces use; anything else is refused so that a new category is noticed."""
    step = name.startswith("ProfilerStep#")
    if cat is None:  # legacy autograd profiler
        assert pid == "CPU functions", pid
        return ANNOTATION if step else HOST_OP
    if cat in ("cpu_op", "Operator"):
        # 2021 traces write record_function ranges (Optimizer.step#SGD.step,
        # enumerate(DataLoader)#...) as Operator too: host ops, i.e. work,
        # where modern traces make them user_annotation.
        return ANNOTATION if step else HOST_OP
    if cat in ("user_annotation", "gpu_user_annotation", "Trace"):
        return ANNOTATION
    if cat in ("python_function", "cuda_profiler_range"):
        return OTHER
    if cat in ("cuda_runtime", "Runtime", "cuda_driver"):
        return RUNTIME
    if cat in ("kernel", "Kernel"):
        return COMPUTE
    if cat in ("gpu_memcpy", "Memcpy", "gpu_memset", "Memset"):
        return DATA_MOVEMENT
    if cat == "cuda_sync":
        return SYNC
    raise AssertionError(f"category {cat!r} not modelled here")


def load(path):
    """The tasks of a Kineto / legacy profiler trace, with their launch
    (runtime call of the same correlation id) and launching host op
    (External id, directly or through the runtime call)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    tasks = []
    for e in events:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat")
        kind = kind_of(cat, e["name"], e.get("pid"))
        args = e.get("args") or {}
        device = kind in EXECUTION or cat == "gpu_user_annotation"
        if device:
            tid = number(e["tid"])
            stream = args.get("stream", tid)
            if isinstance(stream, str):  # "stream 7"
                stream = int(stream.split()[-1])
            track = ("device", args.get("device", number(e["pid"])), stream)
        else:
            track = ("host", number(e["pid"]), number(e["tid"]))
        external = args.get("External id", args.get("external id", -1))
        tasks.append(Task(len(tasks), e["name"], cat, kind, track, to_ns(e["ts"]),
                          to_ns(e["dur"]), int(args.get("correlation", -1)), int(external)))
    # Launches and launching ops. A host op's External id names it (the
    # first, outermost, on a collision); a runtime call's correlation id
    # names the call that launched the device task with the same id.
    op_by_external = {}
    call_by_correlation = {}
    for t in tasks:
        if t.kind == HOST_OP and t.external_id >= 0:
            op_by_external.setdefault(t.external_id, t)
        if t.kind == RUNTIME and t.correlation >= 0:
            call_by_correlation.setdefault(t.correlation, t)
    for t in tasks:
        if t.kind in EXECUTION:
            t.launch = call_by_correlation.get(t.correlation)
        if t.kind in EXECUTION or t.kind == RUNTIME:
            external = t.external_id
            if external < 0 and t.launch is not None:
                external = t.launch.external_id
            t.parent = op_by_external.get(external)
    return tasks


def is_work(t):
    """The vertices of the dependency model: every task but annotations
    (ProfilerStep#N, user ranges, the profiler's span), Python frames and
    cuda_sync records (host-timed, on a device track)."""
    return t.kind not in (ANNOTATION, OTHER) and not (t.on_device and t.kind == SYNC)


def is_host_sync(t):
    """A host call that blocks until device work finishes (by name)."""
    return not t.on_device and t.kind in (RUNTIME, HOST_OP) and "ynchronize" in t.name


def order_key(t):
    """Start order; a longer task first on equal starts (the enclosing op
    before the op it encloses), then file order."""
    return (t.start, -t.dur, t.index)


# --- Runs and the ONNX export ------------------------------------------------


def run_of(tasks):
    """The run of each task (importer's run rule): the ProfilerStep#N
    marker on a host thread that started last at or before the task, or
    None before the first marker."""
    markers = sorted((t for t in tasks if not t.on_device and t.name.startswith("ProfilerStep#")),
                     key=order_key)
    runs = {}
    for t in tasks:
        started = [m for m in markers if m.start <= t.start]
        runs[id(t)] = started[-1].name if started else None
    return runs


# The aten ops of the ResNet-18 fixture and the ONNX op each is exported
# as (torch.onnx.export; batch_norm is folded into Conv in eval mode).
ATEN_TO_ONNX = {"aten::conv2d": "Conv", "aten::relu_": "Relu", "aten::max_pool2d": "MaxPool",
                "aten::add_": "Add", "aten::adaptive_avg_pool2d": "GlobalAveragePool",
                "aten::flatten": "Flatten", "aten::linear": "Gemm",
                "aten::batch_norm": "BatchNormalization"}


def align_to_onnx(tasks, model_path):
    """Label host ops with the ONNX node they ran (docs/design/task-linking.md):
    per run, the outermost aten ops whose ONNX kind the graph has, in start
    order, are the graph's nodes in file order. Here the two sequences are
    equal kind for kind (asserted), so the alignment is forced: the k-th op
    ran the k-th node. Ops inside an aligned op's recorded span on its
    thread belong to the same node. Returns the graph and the number of
    aligned ops."""
    import onnx
    graph = onnx.load(str(model_path)).graph
    nodes_of_graph = [n for n in graph.node if n.op_type != "Constant"]
    kinds = [n.op_type for n in nodes_of_graph]
    nodes = range(len(nodes_of_graph))
    present = set(kinds)
    runs = run_of(tasks)
    ops = sorted((t for t in tasks if t.kind == HOST_OP), key=order_key)
    outermost, open_ops = [], []
    for t in ops:
        open_ops = [p for p in open_ops if p.track != t.track or p.end > t.start]
        if not any(p.track == t.track for p in open_ops):
            outermost.append(t)
        open_ops.append(t)
    aligned = []
    for run in sorted({runs[id(t)] for t in outermost if runs[id(t)]}):
        seq = [t for t in outermost
               if runs[id(t)] == run and ATEN_TO_ONNX.get(t.name) in present]
        assert [ATEN_TO_ONNX[t.name] for t in seq] == kinds, run
        for t, node in zip(seq, nodes):
            t.node, t.node_op_type = node, ATEN_TO_ONNX[t.name]
        aligned += seq
    for t in ops:
        t.run = runs[id(t)]
        for a in aligned:
            if t.track == a.track and a.start <= t.start and t.end <= a.end:
                t.node, t.node_op_type = a.node, a.node_op_type
    return graph, len(aligned)


def data_edges(vertices, graph):
    """Data dependencies (docs/design/analyses.md): the last task of a
    graph node -> the first task of each node consuming one of its outputs,
    per run; dropped when the consumer started before the producer ended."""
    nodes = [n for n in graph.node if n.op_type != "Constant"]
    first, last = {}, {}
    for t in vertices:  # start order
        if t.node < 0:
            continue
        key = (t.node, t.run)
        first.setdefault(key, t)
        if key not in last or t.end > last[key].end:
            last[key] = t
    consumers = {}
    for i, n in enumerate(nodes):
        for value in n.input:
            consumers.setdefault(value, set()).add(i)
    edges = set()
    for (node, run), producer in last.items():
        for value in nodes[node].output:
            for c in consumers.get(value, ()):
                consumer = first.get((c, run))
                if c != node and consumer is not None and consumer is not producer \
                        and producer.end <= consumer.start:
                    edges.add((producer, consumer, DATA))
    return edges


# --- Clock calibration --------------------------------------------------------


def calibration_interval(tasks):
    """The feasible offset of the (one) device clock against the host clock
    from the anchors of docs/design/analyses.md that these traces give:
    launch (a device task starts no earlier than its launch call starts:
    offset >= call start - task start) and sync (the task launched last on
    a stream before a device synchronize began ends no later than the call
    ends: offset <= call end - task end; a stream synchronize without a
    cuda_sync record bounds nothing). Returns (lower, upper) in ns, None
    where open, or None without device work."""
    device = [t for t in tasks if t.on_device and t.kind in EXECUTION and is_work(t)]
    if not device:
        return None
    assert len({t.track[1] for t in device}) == 1, "one device per trace here"
    assert not any(t.kind == SYNC for t in tasks), "no cuda_sync records here"
    # No synchronous copy calls (sync_copy anchors), no events, no graph
    # nodes on device work (copy anchors) in these traces.
    assert not any(t.kind == RUNTIME and t.name.startswith("cudaMemcpy")
                   and "Async" not in t.name for t in tasks)
    lower = max((t.launcher.start - t.start for t in device if t.launcher), default=None)
    upper = None
    for call in tasks:
        if not (is_work(call) and is_host_sync(call) and "DeviceSynchronize" in call.name):
            continue
        for stream in {t.track for t in device}:
            launched = [t for t in device if t.track == stream and t.launcher
                        and t.launcher.end <= call.start]
            if launched:
                last = max(launched, key=lambda t: t.end)
                bound = call.end - last.end
                upper = bound if upper is None else min(upper, bound)
    return lower, upper


# --- Dependency graph ---------------------------------------------------------

TRACK_ORDER, LAUNCH, EVENT, DATA, HOST_WAIT, NESTING = (
    "track_order", "launch", "event", "data", "host_wait", "nesting")
# Order of kinds when two edges join the same pair (see "Ties").
KIND_RANK = {k: i for i, k in enumerate((TRACK_ORDER, LAUNCH, EVENT, DATA, HOST_WAIT, NESTING))}


def release(p, t, kind):
    """When dependency p -> t was satisfied."""
    if kind == LAUNCH:
        return min(p.end, t.start)  # a kernel may start before its call returns
    if kind == NESTING:
        return p.start
    return p.end


def dependency_edges(vertices):
    """(p, t, kind) for the dependencies of docs/design/analyses.md that
    these traces have (no event ids, no graph nodes on device work):
    track order, launch, host wait and nesting."""
    edges = set()
    by_track = {}
    for t in vertices:
        by_track.setdefault(t.track, []).append(t)
    for track, tasks in by_track.items():
        # Track order: the task that ended last at or before t started; on
        # equal ends the longer one (the enclosing op), then the first in
        # start order. Tasks are released into `best` as their end passes.
        pending = []  # heap of (end, start order, task) of earlier tasks
        best = None
        for t in tasks:
            while pending and pending[0][0] <= t.start:
                p = heapq.heappop(pending)[2]
                if best is None or (p.end, p.dur) > (best.end, best.dur) or (
                        (p.end, p.dur) == (best.end, best.dur) and order_key(p) < order_key(best)):
                    best = p
            if best is not None:
                edges.add((best, t, TRACK_ORDER))
            heapq.heappush(pending, (t.end, order_key(t), t))
        if track[0] != "host":
            continue
        # Nesting: the innermost op still open when t starts (the one of
        # them that started last): a thread runs one call stack, whatever
        # the recorded ends say (whole-us profilers put a callee's end up
        # to 1 us past its caller's).
        open_ops = []
        for t in tasks:
            open_ops = [p for p in open_ops if p.end > t.start]
            if open_ops:
                edges.add((open_ops[-1], t, NESTING))
            open_ops.append(t)
    vertex_set = set(map(id, vertices))
    for t in vertices:
        if not t.on_device:
            continue
        if t.launcher is not None and id(t.launcher) in vertex_set:
            edges.add((t.launcher, t, LAUNCH))
    device = [t for t in vertices if t.on_device and t.kind in EXECUTION]
    for call in vertices:
        if not is_host_sync(call):
            continue
        # Without cuda_sync records a call waits on every stream of its
        # process (one device here): the last device task ending inside it
        # that was still running when it began.
        inside = [d for d in device if d.end <= call.end]
        if inside:
            last = max(inside, key=lambda d: (d.end, order_key(d)))
            if last.end > call.start:
                edges.add((last, call, HOST_WAIT))
    return edges


# --- Critical path ------------------------------------------------------------


@dataclass
class CriticalPath:
    tasks: list
    length: int
    wall: int
    by_label: dict  # op label -> ns of the path's busy time
    hta_length: int  # networkx's longest path, HTA weighting


def critical_path(tasks, graph=None):
    """The critical path over the work tasks; `graph` (an ONNX GraphProto
    whose nodes align_to_onnx gave the tasks) adds data dependencies."""
    vertices = sorted((t for t in tasks if is_work(t)), key=order_key)
    edges = dependency_edges(vertices)
    if graph is not None:
        edges |= data_edges(vertices, graph)
    preds = {id(t): [] for t in vertices}
    for p, t, kind in edges:
        preds[id(t)].append((p, kind))
    graph = networkx.DiGraph()
    graph.add_nodes_from(id(t) for t in vertices)
    graph.add_edges_from((id(p), id(t)) for p, t, _ in edges)
    assert networkx.is_directed_acyclic_graph(graph)
    # Per task, the earliest chain start it reaches back to, and the
    # predecessor giving it (equal starts: the one released last, the one
    # the task waited for; then the first by (start order, kind)).
    root, best = {}, {}
    task_of = {id(t): t for t in vertices}
    for v in networkx.topological_sort(graph):
        t = task_of[v]
        choice = None
        for p, kind in sorted(preds[v], key=lambda e: (order_key(e[0]), KIND_RANK[e[1]])):
            key = (root[id(p)], -release(p, t, kind))
            if root[id(p)] <= t.start and (choice is None or key < choice[0]):
                choice = (key, p)
        root[v] = choice[0][0] if choice else t.start
        best[v] = choice[1] if choice else None
    # The path ends where end - chain start is largest; equal: the later
    # end, then a device task, then one reached through a dependency, then
    # the first in start order.
    last = min(vertices, key=lambda t: (-(t.end - root[id(t)]), -t.end, not t.on_device,
                                        best[id(t)] is None, order_key(t)))
    path = [last]
    while best[id(path[-1])] is not None:
        path.append(best[id(path[-1])])
    path.reverse()
    # Busy time: each instant once, for the first path task covering it.
    by_label = {}
    cursor = path[0].start
    for t in path:
        ran = max(0, t.end - max(t.start, cursor))
        if ran:
            by_label[t.label()] = by_label.get(t.label(), 0) + ran
        cursor = max(cursor, t.end)
    wall = max(t.end for t in vertices) - min(t.start for t in vertices)
    return CriticalPath(path, cursor - path[0].start, wall, by_label,
                        hta_longest_path(vertices, edges))


def hta_longest_path(vertices, edges):
    """The longest path as HTA's critical-path analysis weighs it: a node
    per task start and end, start -> end weighing the task's duration, each
    dependency from the point that released it to the dependent's start
    weighing the time between them. Any path's weight is then the time from
    its first point to its last, so networkx's longest path gives the
    critical path's length with no tie rule involved."""
    g = networkx.DiGraph()
    for t in vertices:
        g.add_edge(("s", id(t)), ("e", id(t)), w=t.dur)
    for p, t, kind in edges:
        if kind == NESTING:
            g.add_edge(("s", id(p)), ("s", id(t)), w=t.start - p.start)
        elif kind == LAUNCH and t.start < p.end:
            # released at the kernel's own start: from the call's start
            g.add_edge(("s", id(p)), ("s", id(t)), w=t.start - p.start)
        else:
            g.add_edge(("e", id(p)), ("s", id(t)), w=t.start - p.end)
    return networkx.dag_longest_path_length(g, weight="w")


# --- Idle, overlap, host synchronize ------------------------------------------


def merge(intervals):
    out = []
    for a, b in sorted(intervals):
        if b <= a:
            continue
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def covered(merged, a, b):
    return sum(max(0, min(y, b) - max(x, a)) for x, y in merged)


@dataclass
class StreamIdle:
    tasks: int
    busy: int
    span: int
    idle: int
    host: int
    other_stream: int
    other: int


def stream_idle(tasks):
    """Per track running compute, copies or syncs: busy = union of its
    tasks, idle = span - busy, each gap filed under what the task ending it
    waited for: its launch (or another host task), released inside the
    gap -> host; nothing released inside the gap -> other. (No events or
    graph data on these traces: nothing waits on another stream.)"""
    out = {}
    work = sorted((t for t in tasks if is_work(t) and t.kind in EXECUTION), key=order_key)
    for track in sorted({t.track for t in work}, key=str):
        run = [t for t in work if t.track == track]
        busy = merge((t.start, t.end) for t in run)
        span = busy[-1][1] - busy[0][0]
        host = other = 0
        first_at = {}
        for t in run:  # start order: the first task starting at each time
            first_at.setdefault(t.start, t)
        for (_, gap_start), (gap_end, _) in zip(busy, busy[1:]):
            after = first_at[gap_end]
            if after.launcher is not None and release(after.launcher, after, LAUNCH) > gap_start:
                host += gap_end - gap_start
            else:
                other += gap_end - gap_start
        total = sum(b - a for a, b in busy)
        out[track] = StreamIdle(len(run), total, span, span - total, host, 0, other)
    return out


def copy_compute_overlap(tasks):
    """Per device: compute time (union), data-movement time (union), and
    how much of the latter ran while some compute ran."""
    out = {}
    work = [t for t in tasks if is_work(t) and t.kind in EXECUTION]
    for device in sorted({t.track[1] for t in work}):
        mine = [t for t in work if t.track[1] == device]
        compute = merge((t.start, t.end) for t in mine if t.kind == COMPUTE)
        copies = merge((t.start, t.end) for t in mine if t.kind == DATA_MOVEMENT)
        overlap = sum(covered(compute, a, b) for a, b in copies)
        out[device] = (sum(b - a for a, b in compute), sum(b - a for a, b in copies), overlap)
    return out


def host_syncs(tasks):
    """Outermost host synchronize calls: (calls, time blocked, device idle
    from each call's start until work resumed on the device after it)."""
    busy = merge((t.start, t.end) for t in tasks
                 if is_work(t) and t.on_device and t.kind in EXECUTION)
    calls, blocked, idle = 0, 0, 0
    covered_until = {}
    for call in sorted((t for t in tasks if is_work(t) and is_host_sync(t)), key=order_key):
        if call.start < covered_until.get(call.track, call.start - 1):
            continue  # nested in a call already counted
        covered_until[call.track] = call.end
        calls += 1
        blocked += call.dur
        # Work resumes at the first busy instant at or after the call ends.
        resume = next((max(a, call.end) for a, b in busy if b > call.end), call.end)
        idle += (resume - call.start) - covered(busy, call.start, resume)
    return calls, blocked, idle


def hta_idle_categories(tasks, track):
    """HTA's idle classification (hta/analyzers/breakdown_analysis.py), on
    our reading of the trace: per pair of consecutive device tasks of the
    stream in start order, the gap start - previous end is "host_wait" when
    the task's runtime call started after the previous task ended, else
    "kernel_wait" when under 30 (HTA's consecutive_kernel_delay, compared
    with times in us), else "other". Returns {category: (gaps, ns)}."""
    run = sorted((t for t in tasks if is_work(t) and t.kind in EXECUTION and t.track == track),
                 key=order_key)
    out = {}
    for prev, t in zip(run, run[1:]):
        gap = t.start - prev.end
        if t.launch is not None and t.launch.start > prev.end:
            category = "host_wait"
        elif gap < 30_000:
            category = "kernel_wait"
        else:
            category = "other"
        n, ns = out.get(category, (0, 0))
        out[category] = (n + 1, ns + gap)
    return out
