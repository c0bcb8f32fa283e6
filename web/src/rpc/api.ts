// Typed client of the server's HTTP API (docs/reference/http-api.md); with
// timeline_api.ts the only module that calls fetch. Errors come back as
// ApiError with the server's JSON message, so the UI can show it as is.
// `ApiClient` is the interface the rest of the UI programs against (the
// selection controller's unit test hands it a test double).

import { decodeLayout, type Layout } from './layout_binary';

export interface RunInput { path: string; format: string; role: string }
import type {
  ProbeCompareJson, ProbeNodeJson, ProbesLevelJson, RerunRequest, RerunStateJson, SavedSessionJson, SessionSavedJson, SessionStateJson,
} from './probe_api';

export interface RunInfo {
  id: number; name: string; paths: string[]; inputs: RunInput[]; levels: string[]; has_trace: boolean;
  /** A run `open --keep-going` could not open: its error (the file, the place, what was expected). */
  error?: { code: string; message: string };
  /** Model files next to a trace-only run's trace that could give it a graph. */
  pair_candidates?: string[];
  /** A training snapshot (docs/reference/http-api.md "Training"): the Training tab applies. */
  training?: boolean;
}

// ---- the diff of two runs (GET /api/diff: docs/reference/schemas/diff.schema.json) ----
/** A node of one level that is not equal in the other run; ids are the sessions' node ids (null: none on that side). */
export interface DiffNodeChangeJson {
  kind: 'added' | 'removed' | 'changed' | 'renamed'; base_name: string; new_name: string;
  base_node_id: number | null; new_node_id: number | null; base_op_type: string; new_op_type: string;
  matched_by: string; changes: string[];
}
export interface DiffLevelJson {
  /** "framework" | "compiled", or "framework->compiled" (one run's two levels). */
  level: string; base_fingerprint: string; new_fingerprint: string; base_nodes: number; new_nodes: number;
  matched_by_name: number; matched_by_structure: number; added: number; removed: number; changed: number; renamed: number;
  changes: DiffNodeChangeJson[]; fusions_lost: number; fusions_gained: number; fusions_changed: number;
  fusions: unknown[]; op_types: { op_type: string; base_count: number; new_count: number }[];
}
export interface DiffStatJson { samples: number; median_ns: number; spread_ns: number; min_ns: number; max_ns: number }
/** A timed key in both runs: medians over the runs of each trace, their spreads, and the verdict against the noise. */
export interface DiffDeltaJson {
  key: string; level: string; base_node_id: number | null; new_node_id: number | null; base: DiffStatJson; new: DiffStatJson;
  delta_ns: number; delta_pct: number; noise_ns: number; verdict: 'slower' | 'faster' | 'same' | 'added' | 'removed';
}
export interface DiffRuleJson { rule: string; crossed: boolean; value: number; measured_on: string; message: string; note: string }
export interface DiffReportJson {
  schema: string;
  base: { model: string; label: string; run_count: number };
  new: { model: string; label: string; run_count: number };
  structure: DiffLevelJson[];
  timing: {
    total: DiffDeltaJson; op_types: DiffDeltaJson[]; streams: DiffDeltaJson[]; nodes: DiffDeltaJson[]; unlinked_tasks: DiffDeltaJson[];
    unmatched_base_tasks: string[]; unmatched_new_tasks: string[];
  } | null;
  overlap: { scope: string; key: string; verdict: string; cost_ns: number }[];
  overlap_lost: number;
  rules: DiffRuleJson[];
  failed: boolean;
}

// ---- run history (GET /api/history/runs, /api/history/trend) ----
export interface HistoryRunJson {
  id: number; model: string; label: string; git_commit: string; created_utc: string; recorded_utc: string; host: string;
  tool_version: string; fingerprint: string; framework_nodes: number | null; compiled_nodes: number | null; run_count: number;
  total_median_ns: number | null; total_spread_ns: number | null;
}
export interface HistoryRunsJson { schema: string; history: string; runs: HistoryRunJson[] }
export interface HistoryTrendJson {
  schema: string; history: string; model: string;
  points: { run_id: number; created_utc: string; git_commit: string; label: string; total_median_ns: number | null; total_spread_ns: number | null }[];
}

/** The run POST /api/runs/{run}/pair opened (created) or had opened before. */
export interface PairResult { run: number; created: boolean }

// ---- a cluster of ranks (GET /api/cluster: docs/reference/schemas/cluster.schema.json) ----
/** One rank's figures in one step (ns). */
export interface ClusterStepRankJson {
  rank: number; start_ns: number; wall_ns: number; compute_ns: number; communication_ns: number;
  exposed_communication_ns: number; overlapped_communication_ns: number; idle_ns: number;
  host_bound_ns: number; data_loading_ns: number;
}
export interface ClusterStepJson {
  step: number | null; label: string; max_wall_ns: number; median_wall_ns: number; slowest_rank: number | null;
  compute_max_over_mean: number; compute_spread_over_mean: number; ranks: ClusterStepRankJson[];
}
export interface ClusterRankJson {
  rank: number; rank_from: string; host: string; devices: string[]; files: string[]; steps: number; collectives: number;
  wall_ns: number; compute_ns: number; communication_ns: number; exposed_communication_ns: number; idle_ns: number;
}
/** One rank's part of a collective instance: its arrival (start), end, wait for the last rank, exposed time. */
export interface ClusterCollectiveRankJson {
  rank: number; start_ns: number; end_ns: number; wait_ns: number; exposed_ns: number;
  task: number | null; issued_by: string; node: number | null; node_name: string;
}
export interface ClusterCollectiveJson {
  group: string; sequence: number | null; name: string; type: string; step: number | null; step_label: string;
  group_size: number | null; bytes: number | null; dtype: string; algorithm: string; matched_by: string;
  last_rank: number | null; arrival_skew_ns: number; end_spread_ns: number; transfer_ns: number;
  algbw_gbps: number | null; busbw_factor: number | null; busbw_gbps: number | null; link_type: string;
  peak_gbps: number | null; efficiency: number | null; exposed_ns: number; wait_ns: number;
  ranks: ClusterCollectiveRankJson[];
}
export interface ClusterSlowReasonJson {
  kind: string; message: string; excess_ns: number;
  op_types: { op_type: string; rank_ns: number; median_ns: number; excess_ns: number }[];
  nodes: { name: string; op_type: string; level: string; node: number | null; rank_ns: number; median_ns: number; excess_ns: number }[];
}
export interface ClusterSlowRankJson {
  rank: number; collectives: number; last_arrivals: number; last_arrival_share: number; mean_lateness_ns: number;
  others_wait_ns: number; duration_outlier_count: number; reasons: ClusterSlowReasonJson[];
}
export interface ClusterMatrixEntryJson {
  group: string; statistic: string; src_rank: number; dst_rank: number; global: boolean; transport: string;
  size_bytes: number; transit_ns: number; bandwidth_gbps: number | null;
}
export interface ClusterFindingJson {
  rule: string; title: string; severity: string; message: string; suggestion: string; threshold: number;
  time_ns: number; share: number; ranks: number[]; steps: number[]; collectives: number[]; nodes: string[];
}
export interface ClusterReportJson {
  schema: string; world_size: number | null; world_size_from: string; ranks: ClusterRankJson[]; missing_ranks: number[];
  steps: ClusterStepJson[]; collective_instances: number; collectives: ClusterCollectiveJson[];
  slow_ranks: ClusterSlowRankJson[];
  overlap: { rank: number; compute_ns: number; communication_ns: number; overlapped_ns: number; overlap_share: number; exposed_communication_ns: number }[];
  bandwidth: { link_type: string; collectives: number; bytes: number; transfer_ns: number; busbw_gbps: number | null; peak_gbps: number | null; efficiency: number | null; peak_origin: string }[];
  matrix: ClusterMatrixEntryJson[];
  findings: ClusterFindingJson[];
  clock: { hosts: number; max_end_spread_ns: number; median_end_spread_ns: number; note: string };
}
/** One item of a timeline window as JSON (`format=json`): a task (`task` its id) or an aggregate (`task` null). */
export interface WindowItemJson {
  start_ns: number; end_ns: number; task: number | null; count: number; track: number; label: string; kind: string; row: number; flags: number;
}
/** The run POST /api/cluster/ranks opened (created) or had opened before, and its ranks (sorted). */
export interface ClusterRanksResult { run: number; created: boolean; ranks: number[] }

/** Whether a run's tasks link to graph nodes, and why the others do not (GET /links). */
export interface LinksJson {
  has_graph: boolean; has_trace: boolean; tasks: number; linked_tasks: number; unlinked_tasks: number; aligned_host_ops: number;
  /** "2 name a node the graphs lack": the CLI summary's reasons. */
  reasons: { code: string; count: number; text: string }[];
  /** The linker's examples: "task 'X' names node 'Y', which the loaded graph lacks". */
  examples: string[];
}
export interface Attribute { name: string; type: string; value: unknown }
export interface ValueInfo {
  name: string; dtype: string; shape: string | number[] | null; producer?: unknown;
  /** A weight (read on demand by GET .../values). */
  initializer?: boolean;
  /** An input nothing provides (no node, graph input or initializer): the graph's fault. */
  missing?: boolean;
  /** Memory layout where the format gives it (Ascend NC1HWC0, FRACTAL_Z) and the framework's format and shape. */
  layout?: string; origin_layout?: string; origin_shape?: string;
}
export interface NodeRef { id: number; name: string; op_type: string }
export interface TaskInfo { id: number; name: string; start_ns: number; duration_ns: number; track: string | number }
export interface NodeDetails {
  id: number; name: string; op_type: string; domain: string; scope: string;
  attributes: Attribute[]; inputs: ValueInfo[]; outputs: ValueInfo[];
  status: string; fused_from: NodeRef[]; fused_into: NodeRef | null;
  tasks: TaskInfo[]; task_count?: number; task_total_ns?: number;
  /** ONNX operator documentation, when the ONNX library has the op (null otherwise; absent from older servers). */
  doc?: OpDoc | null;
  /** CANN profiler figures, present only when measured: the mean L2 cache
   *  hit / victim rate (0..1) over the node's tasks' l2_cache.csv rows, and
   *  its measured memory (static_op_mem.csv, else operator_memory.csv). */
  l2_tasks?: number; l2_hit_rate?: number | null; l2_victim_rate?: number | null;
  measured_memory_bytes?: number; measured_memory_source?: string;
}
export interface OpDoc { domain: string; since_version: number; summary: string }
/** 'auto': a glob when the query has '*' or '?', else text (the server decides and says so). */
export type SearchMode = 'auto' | 'text' | 'glob' | 'regex' | 'op';
/** `mode`: the mode the server used; `read_as`: how it read the query, in words (absent from older servers). */
export interface SearchResult { matches: NodeRef[]; total: number; truncated?: boolean; mode?: string; read_as?: string }
export type Grouping = 'scopes' | 'fusion' | 'none';
/** Which task start times: as the trace gives them, or shifted by the per-track clock offsets. */
export type Clock = 'raw' | 'calibrated';

export interface LayoutRequest {
  run: number; level: string; grouping: Grouping;
  /** 'auto': the server picks the direction whose drawing fits `aspect` (the window's width / height) better. */
  direction: 'tb' | 'lr' | 'auto';
  aspect?: number;
  maxItems: number; expand: number[]; collapse: number[];
  /** The default view folds the top-level groups (a first screen) rather than filling the item budget. */
  overview?: boolean;
  /** Expand the groups on the path to this model node (server side). */
  reveal?: number | null;
}

// ---- execution: tasks, mapping, summary, analyses (http-api.md) ----
export interface TaskRef { id: number; name: string; track: number; start_ns: number; end_ns: number }
export interface TaskFlow { kind: 'launch' | 'event'; from_task: number; to_task: number; from_track: number; to_track: number; from_ns: number; to_ns: number }
export interface TaskDetails {
  id: number; name: string; category: string; op_type: string; kind: string;
  track: { id: number; name: string };
  start_ns: number; end_ns: number; duration_ns: number; calibrated_start_ns: number; run: number | null;
  node: { level: string; id: number; name: string; op_type: string } | null;
  fused_from: NodeRef[];
  launch: TaskRef | null;
  parent: number | null;
  correlation?: number | string | null; external_id?: number | string | null; bytes?: number | null;
  shapes?: unknown; output_shapes?: unknown;
  flows: TaskFlow[];
}
export interface NodeTasks { tasks: number[]; start_ns: number | null; end_ns: number | null }
export type MappingSort = 'total_ns' | 'task_count' | 'name' | 'op_type' | 'status' | 'streams';
export interface MappingQuery {
  offset: number; limit: number; sort: MappingSort; desc: boolean; q: string; status: string[];
  /** Locate the row of this node / task: the answer's found_index. */
  findNode?: number; findTask?: number;
}
export interface MappingRow {
  kind: 'node' | 'unlinked';
  node: { id: number; name: string; op_type: string; level: string } | null;
  name: string; op_type: string; status: string;
  fused_from: NodeRef[]; task_count: number; total_ns: number;
  streams: number[]; kernels: string[]; first_task: number | null;
}
/** found_index: only when findNode / findTask was asked; -1 = filtered out or absent. */
export interface MappingPage { total: number; level: string; rows: MappingRow[]; found_index?: number }
export interface TimelineTrack {
  id: number; kind: string; name: string; group: string; task_count: number; rows: number; busy_ns: number; clock_offset_ns: number;
}
export interface TimelineMeta {
  start_ns: number; end_ns: number; task_count: number; has_calibration: boolean;
  tracks: TimelineTrack[]; runs: { index: number; name: string; start_ns: number; end_ns: number }[]; op_types: string[];
}
/** One op-type row of summary.json (docs/reference/schemas/summary.schema.json). */
export interface SummaryOpType { op_type: string; kind: string; nodes: number; calls: number; total_us: number; average_us: number; share: number }
/** A device stream's idle time (span - busy) by what it waited for; whole-trace summaries only. */
export interface SummaryIdle { total_us: number; waiting_host_us: number; waiting_other_stream_us: number; other_us: number }
export interface SummaryStream {
  stream_id: number; name: string; kind: string; tasks: number; total_us: number; busy_us: number; span_us: number; utilisation: number;
  idle?: SummaryIdle;
}
export interface SummaryCriticalPath { length_us: number; wall_us: number; share: number; tasks: number; top_op_types: { op_type: string; us: number }[] }
export interface SummaryOverlap { device: string; compute_us: number; data_movement_us: number; overlap_us: number; overlap_share: number }
export interface SummaryHostSync { calls: number; total_us: number; device_idle_us: number }
export interface SummaryMemory {
  level: 'compiled' | 'framework'; order: 'trace' | 'topological';
  peak_activation_bytes: number; weight_bytes: number; reported_peak_bytes: number | null;
}
/** summary.json; the whole-trace sections (critical_path … memory) are absent from range summaries and older servers. */
export interface SummaryJson {
  basis: string; total_us: number; tasks: number; linked_tasks: number; unlinked_tasks: number;
  op_types: SummaryOpType[]; streams: SummaryStream[];
  critical_path?: SummaryCriticalPath | null; overlap?: SummaryOverlap[]; host_sync?: SummaryHostSync; memory?: SummaryMemory | null;
  [more: string]: unknown;
}
/** A diagnosis finding (docs/reference/schemas/findings.schema.json); evidence ids as numbers (or {id} objects). */
export interface FindingJson {
  /** The rule's id ("layout_conversion_share", docs/reference/diagnosis-rules.md). */
  rule: string; title: string; severity: string; message: string; suggestion?: string;
  nodes?: (number | { id: number; level?: string })[]; tasks?: (number | { id: number })[];
  time_ns?: number; share?: number;
}
export interface CriticalPathJson {
  tasks: number[]; nodes: number[]; length_ns: number; wall_ns: number; share: number;
  by_track?: { track: number; ns: number }[]; by_op_type?: { op_type: string; ns: number }[];
}
/** GET .../nodes/{node}/paths: a node's ancestors and descendants and their tasks. */
export interface NodePathsJson {
  ancestors: number[]; descendants: number[]; node_tasks?: number[]; ancestor_tasks: number[]; descendant_tasks: number[];
}
/** GET /analyses: each section present when computed. */
export interface AnalysesJson { findings?: FindingJson[]; critical_path?: Partial<CriticalPathJson>; [more: string]: unknown }

/** A parameter of a registered analysis (GET /analysis-list; docs/reference/analyses.md). */
export interface AnalysisParameter { name: string; type: 'int' | 'double' | 'string' | 'bool'; default: string; help: string; choices: string[] }
/** A registered analysis, with whether it applies to the run (what it needs is loaded). */
export interface AnalysisInfo {
  id: string; title: string; summary: string; needs: string[]; in_export: boolean; applies: boolean; parameters: AnalysisParameter[];
}

/** Evidence ids of a finding as numbers (the JSON may give numbers or {id} objects). */
export function findingIds(list: FindingJson['nodes'] | FindingJson['tasks']): number[] {
  return (list ?? []).map((x) => (typeof x === 'number' ? x : x.id)).filter((x) => Number.isInteger(x));
}

/** Everything the UI asks the server (docs/reference/http-api.md). */
export interface ApiClient {
  runs(): Promise<RunInfo[]>;
  /** What changed from run `base` to run `next` (GET /api/diff; `base === next`: the run's framework against its compiled level). */
  diff(base: number, next: number): Promise<DiffReportJson>;
  /** The run history the server reads, or null when it has none (GET /api/runs' `history`). */
  historyRuns(model: string | null, limit: number): Promise<HistoryRunsJson | null>;
  historyTrend(model: string): Promise<HistoryTrendJson>;
  summary(run: number): Promise<SummaryJson>;
  summaryRange(run: number, fromNs: number, toNs: number, clock: Clock): Promise<SummaryJson>;
  timeline(run: number): Promise<TimelineMeta>;
  task(run: number, id: number): Promise<TaskDetails>;
  nodeTasks(run: number, node: number): Promise<NodeTasks>;
  nodePaths(run: number, level: string, node: number): Promise<NodePathsJson>;
  mapping(run: number, q: MappingQuery): Promise<MappingPage>;
  analyses(run: number): Promise<AnalysesJson | null>;
  criticalPath(run: number, clock: Clock): Promise<CriticalPathJson | null>;
  /** The registered analyses (GET /analysis-list); [] from an older server (404). */
  analysisList(run: number): Promise<AnalysisInfo[]>;
  /** One registered analysis' result (GET /analyses/{id}?NAME=VALUE); any JSON value. */
  runAnalysis(run: number, id: string, params: Record<string, string>): Promise<unknown>;
  layout(q: LayoutRequest): Promise<Layout>;
  node(run: number, level: string, node: number): Promise<NodeDetails>;
  exportModelExplorer(run: number, level: string, what: 'graph' | 'node-data'): Promise<Blob>;
  search(run: number, level: string, q: string, mode: SearchMode): Promise<SearchResult>;
  links(run: number): Promise<LinksJson>;
  /**
   * Opens a trace-only run's pair candidate (an index into its
   * pair_candidates) with its traces as a new run (POST .../pair); the same
   * candidate twice answers the same run.
   */
  pair(run: number, candidate: number): Promise<PairResult>;
  /** The cluster report the server holds, or null when it holds none (GET /api/runs' `cluster`). */
  cluster(): Promise<ClusterReportJson | null>;
  /** Collective `index` of the report with its per-rank rows (the report the UI reads leaves them out). */
  clusterCollective(index: number): Promise<ClusterCollectiveJson>;
  /** Opens ranks of the cluster as one run (or finds the one opened before). */
  clusterRanks(ranks: number[]): Promise<ClusterRanksResult>;
  /**
   * The tasks of run `run` overlapping [startNs, endNs) on `tracks` whose name holds `name`
   * (a timeline window as JSON at the finest level of detail; raw clock).
   */
  windowTasks(run: number, startNs: number, endNs: number, name: string, tracks: number[]): Promise<WindowItemJson[]>;
  /** What a level's main graph says about itself (GET .../properties). */
  properties(run: number, level: string): Promise<ModelProperties>;
  /** The first `limit` values of one initializer, read from the model file (GET .../values). */
  values(run: number, level: string, name: string, limit: number): Promise<TensorValues>;
  /** A level's probe statistics per node in the store's latest run, with the trigger hits (probe_api.ts). */
  probes(run: number, level: string): Promise<ProbesLevelJson>;
  /** Two probe runs compared per node (the newest against the one before it, unless given). */
  probeCompare(run: number, level: string): Promise<ProbeCompareJson>;
  /** One node's probes: statistics, the series over the last runs, per-step values. */
  probeNode(run: number, level: string, node: number): Promise<ProbeNodeJson>;
  /** Whether the run can re-run its model with other probes, the inputs offered, the job's state. */
  rerunState(run: number): Promise<RerunStateJson>;
  /** Starts a re-run (POST .../probes/run). */
  rerun(run: number, req: RerunRequest): Promise<{ job: number; state: string; command: string[] }>;
  /** The saved session the server restored or last saved (GET /api/session). */
  savedSession(): Promise<SessionStateJson>;
  /** Saves the UI's part of the session (POST /api/session): into the server's session file, else the document to download. */
  saveSession(doc: SavedSessionJson): Promise<SessionSavedJson>;
}

/** A tensor of the model-properties answer: name, element type, shape, "float32[1,3,224,224]". */
export interface PropValue {
  name: string;
  dtype: string;
  shape: (number | string | null)[] | null;
  type: string;
  layout?: string;
  origin_layout?: string;
  origin_shape?: string;
}

/** GET /api/runs/{run}/levels/{level}/properties (docs/reference/http-api.md). */
export interface ModelProperties {
  level: string;
  graph: string;
  file: string;
  format: string;
  producer: string;
  opset?: number;
  opset_imports: { domain: string; version: number }[];
  nodes: number;
  inputs: PropValue[];
  outputs: PropValue[];
  initializers: (PropValue & { bytes: number; external?: string })[];
  initializer_count: number;
  initializer_bytes: number;
  metadata: { key: string; value: string }[];
  values_readable: boolean;
  onnx?: {
    ir_version: number;
    producer_name: string;
    producer_version: string;
    domain: string;
    model_version: number;
    doc_string: string;
    metadata_props: { key: string; value: string }[];
  };
}

/** GET /api/runs/{run}/levels/{level}/values?name=&limit= (docs/reference/http-api.md). */
export interface TensorValues {
  name: string;
  dtype: string;
  shape: number[];
  elements: number;
  storage: string;
  external?: { location: string; offset: number; length: number };
  values: (number | null)[];
  stats: { count: number; complete: boolean; nan: number; min?: number; max?: number; mean?: number };
}

/** An API failure: HTTP status and the server's message. */
export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * GET from the server with the access token; a failure becomes an ApiError
 * with the server's own message (an abort stays an AbortError).
 */
export async function fetchApi(base: string, token: string | null, path: string, signal?: AbortSignal, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = {};
  if (token) headers['X-MI-Token'] = token;
  // A POST carries JSON (the server refuses other bodies: another site's
  // form cannot send one).
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let r: Response;
  try {
    r = await fetch(base + path, body === undefined ? { headers, signal } : { method: 'POST', headers, signal, body: JSON.stringify(body) });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(0, `cannot reach the model-inspector server (${(e as Error).message}); is it still running?`);
  }
  if (!r.ok) {
    let message = `${r.status} ${r.statusText} for ${path}`;
    try {
      const j = await r.json();
      if (j && j.error && j.error.message) message = j.error.message;
    } catch { /* not JSON: keep the status line */ }
    throw new ApiError(r.status, message);
  }
  return r;
}

export class Api implements ApiClient {
  private readonly token: string | null;

  constructor(private readonly base = '', token?: string | null) {
    // The token arrives once as ?token= on the page URL; keep it for every
    // request as a header (not in later URLs, which end up in logs).
    this.token = token ?? new URLSearchParams(location.search).get('token');
  }

  private get(path: string): Promise<Response> {
    return fetchApi(this.base, this.token, path);
  }

  private async json<T>(path: string): Promise<T> {
    return (await this.get(path)).json() as Promise<T>;
  }

  async runs(): Promise<RunInfo[]> {
    return (await this.json<{ runs: RunInfo[] }>('/api/runs')).runs;
  }

  summary(run: number): Promise<SummaryJson> {
    return this.json(`/api/runs/${run}/summary`);
  }

  diff(base: number, next: number): Promise<DiffReportJson> {
    return this.json(`/api/diff?base=${base}&new=${next}`);
  }

  async historyRuns(model: string | null, limit: number): Promise<HistoryRunsJson | null> {
    // /api/runs says whether there is one (no 404 in the console of every other server).
    if (!(await this.json<{ history?: boolean }>('/api/runs')).history) return null;
    const q = new URLSearchParams({ limit: String(limit) });
    if (model) q.set('model', model);
    return this.json(`/api/history/runs?${q}`);
  }

  historyTrend(model: string): Promise<HistoryTrendJson> {
    return this.json(`/api/history/trend?model=${encodeURIComponent(model)}`);
  }

  links(run: number): Promise<LinksJson> {
    return this.json(`/api/runs/${run}/links`);
  }

  probes(run: number, level: string): Promise<ProbesLevelJson> {
    return this.json(`/api/runs/${run}/probes?level=${encodeURIComponent(level)}`);
  }

  probeCompare(run: number, level: string): Promise<ProbeCompareJson> {
    return this.json(`/api/runs/${run}/probes/compare?level=${encodeURIComponent(level)}`);
  }

  probeNode(run: number, level: string, node: number): Promise<ProbeNodeJson> {
    return this.json(`/api/runs/${run}/probes/node?level=${encodeURIComponent(level)}&id=${node}`);
  }

  rerunState(run: number): Promise<RerunStateJson> {
    return this.json(`/api/runs/${run}/probes/run`);
  }

  async rerun(run: number, req: RerunRequest): Promise<{ job: number; state: string; command: string[] }> {
    return (await fetchApi(this.base, this.token, `/api/runs/${run}/probes/run`, undefined, req)).json() as Promise<{ job: number; state: string; command: string[] }>;
  }

  savedSession(): Promise<SessionStateJson> {
    return this.json('/api/session');
  }

  async saveSession(doc: SavedSessionJson): Promise<SessionSavedJson> {
    return (await fetchApi(this.base, this.token, '/api/session', undefined, doc)).json() as Promise<SessionSavedJson>;
  }

  async pair(run: number, candidate: number): Promise<PairResult> {
    return (await fetchApi(this.base, this.token, `/api/runs/${run}/pair`, undefined, { candidate })).json() as Promise<PairResult>;
  }

  async cluster(): Promise<ClusterReportJson | null> {
    // /api/runs says whether there is one (no 404 to show in the console of every other server).
    if (!(await this.json<{ cluster?: boolean }>('/api/runs')).cluster) return null;
    // Without the collectives' per-rank rows (collectives x ranks: most of a large job's report);
    // clusterCollective gives one collective's rows when it is picked.
    return this.json<ClusterReportJson>('/api/cluster?collective_ranks=0');
  }

  async clusterCollective(index: number): Promise<ClusterCollectiveJson> {
    const one = await this.json<{ collectives: ClusterCollectiveJson[] }>(`/api/cluster/collectives/${index}`);
    if (!one.collectives?.length) throw new ApiError(500, `the server sent no collective ${index}`);
    return one.collectives[0];
  }

  async clusterRanks(ranks: number[]): Promise<ClusterRanksResult> {
    return (await fetchApi(this.base, this.token, '/api/cluster/ranks', undefined, { ranks })).json() as Promise<ClusterRanksResult>;
  }

  async windowTasks(run: number, startNs: number, endNs: number, name: string, tracks: number[]): Promise<WindowItemJson[]> {
    const p = new URLSearchParams({
      start_ns: BigInt(Math.floor(startNs)).toString(), end_ns: BigInt(Math.ceil(endNs)).toString(), px: '20000', clock: 'raw', name, format: 'json',
    });
    if (tracks.length) p.set('tracks', tracks.join(','));
    return (await this.json<{ items: WindowItemJson[] }>(`/api/runs/${run}/timeline/window?${p}`)).items;
  }

  /** The summary restricted to [fromNs, toNs) of the trace's time base (each task counts its overlap). */
  summaryRange(run: number, fromNs: number, toNs: number, clock: Clock): Promise<SummaryJson> {
    const p = new URLSearchParams({ from_ns: String(Math.floor(fromNs)), to_ns: String(Math.ceil(toNs)), clock });
    return this.json(`/api/runs/${run}/summary?${p}`);
  }

  timeline(run: number): Promise<TimelineMeta> {
    return this.json(`/api/runs/${run}/timeline`);
  }

  task(run: number, id: number): Promise<TaskDetails> {
    return this.json(`/api/runs/${run}/tasks/${id}`);
  }

  /** Every task of a node (a framework node fused into a compiled one: the compiled node's), with their extent. */
  nodeTasks(run: number, node: number): Promise<NodeTasks> {
    return this.json(`/api/runs/${run}/tasks?node=${node}`);
  }

  nodePaths(run: number, level: string, node: number): Promise<NodePathsJson> {
    return this.json(`/api/runs/${run}/levels/${encodeURIComponent(level)}/nodes/${node}/paths`);
  }

  mapping(run: number, q: MappingQuery): Promise<MappingPage> {
    const p = new URLSearchParams({ offset: String(q.offset), limit: String(q.limit), sort: q.sort, desc: q.desc ? '1' : '0' });
    if (q.q) p.set('q', q.q);
    if (q.status.length) p.set('status', q.status.join(','));
    if (q.findNode !== undefined) p.set('find_node', String(q.findNode));
    else if (q.findTask !== undefined) p.set('find_task', String(q.findTask));
    return this.json(`/api/runs/${run}/mapping?${p}`);
  }

  /** The analyses of a run; null when the server has none (404: an older server). */
  async analyses(run: number): Promise<AnalysesJson | null> {
    try {
      return await this.json<AnalysesJson>(`/api/runs/${run}/analyses`);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return null;
      throw e;
    }
  }

  /** The critical path; null when the server cannot compute it (404). */
  async criticalPath(run: number, clock: Clock): Promise<CriticalPathJson | null> {
    try {
      return await this.json<CriticalPathJson>(`/api/runs/${run}/critical-path?clock=${clock}`);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return null;
      throw e;
    }
  }

  async analysisList(run: number): Promise<AnalysisInfo[]> {
    try {
      return (await this.json<{ analyses: AnalysisInfo[] }>(`/api/runs/${run}/analysis-list`)).analyses;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return [];
      throw e;
    }
  }

  runAnalysis(run: number, id: string, params: Record<string, string>): Promise<unknown> {
    const p = new URLSearchParams(params);
    const q = p.toString();
    return this.json(`/api/runs/${run}/analyses/${encodeURIComponent(id)}${q ? `?${q}` : ''}`);
  }

  static layoutPath(q: LayoutRequest): string {
    const p = new URLSearchParams();
    p.set('grouping', q.grouping);
    p.set('max_items', String(q.maxItems));
    p.set('direction', q.direction);
    if (q.direction === 'auto' && q.aspect) p.set('aspect', q.aspect.toFixed(3));
    if (q.overview) p.set('fold', 'overview');
    if (q.expand.length) p.set('expand', q.expand.join(','));
    if (q.collapse.length) p.set('collapse', q.collapse.join(','));
    if (q.reveal !== undefined && q.reveal !== null) p.set('reveal', String(q.reveal));
    return `/api/runs/${q.run}/levels/${encodeURIComponent(q.level)}/layout?${p}`;
  }

  async layout(q: LayoutRequest): Promise<Layout> {
    const buf = await (await this.get(Api.layoutPath(q))).arrayBuffer();
    return decodeLayout(buf);
  }

  node(run: number, level: string, node: number): Promise<NodeDetails> {
    return this.json(`/api/runs/${run}/levels/${encodeURIComponent(level)}/nodes/${node}`);
  }

  /** Model Explorer export of a level: 'graph' (graph JSON) or 'node-data' (our per-node times). */
  async exportModelExplorer(run: number, level: string, what: 'graph' | 'node-data'): Promise<Blob> {
    return (await this.get(`/api/runs/${run}/levels/${encodeURIComponent(level)}/export/model-explorer-${what}`)).blob();
  }

  search(run: number, level: string, q: string, mode: SearchMode): Promise<SearchResult> {
    const p = new URLSearchParams({ q, mode });
    return this.json(`/api/runs/${run}/levels/${encodeURIComponent(level)}/search?${p}`);
  }

  properties(run: number, level: string): Promise<ModelProperties> {
    return this.json(`/api/runs/${run}/levels/${encodeURIComponent(level)}/properties`);
  }

  values(run: number, level: string, name: string, limit: number): Promise<TensorValues> {
    const p = new URLSearchParams({ name, limit: String(limit) });
    return this.json(`/api/runs/${run}/levels/${encodeURIComponent(level)}/values?${p}`);
  }
}
