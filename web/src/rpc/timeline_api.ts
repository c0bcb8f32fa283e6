// Typed client of the timeline endpoints (docs/reference/http-api.md,
// "Timeline"): the track list, one window at a level of detail (MITW binary,
// timeline_binary.ts), task details with flows, and the tasks of a node.
// Errors are ApiError with the server's message, like api.ts; the page's
// ?token= travels as X-MI-Token the same way.

import { fetchApi, type Clock } from './api';
import { decodeTimelineWindow, type TimelineWindow } from './timeline_binary';

export type { Clock } from './api';
export type TrackKind = 'device_stream' | 'host_thread' | 'other';

export interface TimelineTrack {
  id: number; kind: TrackKind; name: string; group: string;
  device?: number | null; stream?: number | null; pid?: number | null; tid?: number | null;
  task_count: number; rows: number; busy_ns: number; clock_offset_ns: number;
}
export interface TimelineRunSpan { index: number; name: string; start_ns: number; end_ns: number }
/** Where the timeline opens: the steady-state steps (analysis step_breakdown), with the rule that chose it. */
export interface TimelineDefaultWindow { start_ns: number; end_ns: number; rule: string; setup_ns: number; steady_steps: number }
/** A counter track: the allocator's totals over time (bytes), points in time order. */
export interface TimelineCounter {
  name: string; group: string; figure: 'allocated' | 'reserved' | string; unit: string;
  source: number; device: number; component: string; t: number[]; v: number[];
  /** Points of the series (in the window, for a counters query) before downsampling. */
  points?: number;
  /** Above 8192 points (4 per pixel for a window) the series is sent downsampled: first, lowest, highest, last point per bucket. */
  downsampled?: boolean;
  /** npu_module_mem.csv: what one CANN module reserved (group "module memory · …"), not an allocator's totals. */
  per_module?: boolean;
}
export interface TimelineMeta {
  start_ns: number; end_ns: number; task_count: number; has_calibration: boolean;
  tracks: TimelineTrack[]; runs: TimelineRunSpan[]; op_types: string[];
  default_window?: TimelineDefaultWindow; counters?: TimelineCounter[];
}
/** One step of the step_breakdown analysis (docs/reference/analyses.md). */
export interface StepTimes { wall_ns: number; compute_ns: number; communication_ns: number; memcpy_ns: number; host_ns: number; idle_ns: number }
export interface StepRow extends StepTimes { run: number; source: number; name: string; steady: boolean; start_ns: number; end_ns: number; tasks: number }
export interface StepBreakdown {
  steps: StepRow[]; steady_steps: number; steady_total: StepTimes;
  steady_window: { start_ns: number; end_ns: number; setup_ns: number };
}

export interface TimelineFilter {
  opTypes?: string[];
  tracks?: number[];
  name?: string;
  kinds?: string[];
}

export interface WindowRequest {
  run: number; startNs: number; endNs: number; px: number; clock: Clock; filter: TimelineFilter;
}

export interface Flow {
  kind: 'launch' | 'event' | string;
  from_task: number; to_task: number; from_track: number; to_track: number; from_ns: number; to_ns: number;
}
export interface TaskRef { id: number; name: string; op_type?: string }
export interface TaskDetails {
  id: number; name: string; category: string; op_type: string; label?: string; kind: string;
  track: { id: number; name: string; group?: string }; row?: number; clock?: Clock;
  start_ns: number; end_ns: number; duration_ns: number; calibrated_start_ns: number; run: number;
  node: { level: string; id: number; name: string; op_type: string } | null;
  fused_from: TaskRef[];
  launch: { id: number; name: string; track: number; start_ns: number; end_ns: number } | null;
  parent: number | null;
  correlation?: number | null; external_id?: number | null; bytes?: number | null;
  shapes?: unknown; output_shapes?: unknown;
  flows: Flow[];
}
export interface NodeTasks { tasks: number[]; start_ns: number; end_ns: number }

/** The query string of a window request (also used by the tests for format=json). */
export function windowQuery(q: WindowRequest, format: 'binary' | 'json' = 'binary'): string {
  const p = new URLSearchParams();
  // Integer nanoseconds: the server parses integers.
  p.set('start_ns', String(Math.floor(q.startNs)));
  p.set('end_ns', String(Math.ceil(q.endNs)));
  p.set('px', String(Math.max(1, Math.round(q.px))));
  p.set('clock', q.clock);
  const f = q.filter;
  if (f.tracks && f.tracks.length) p.set('tracks', f.tracks.join(','));
  if (f.opTypes && f.opTypes.length) p.set('op', f.opTypes.join(','));
  if (f.name) p.set('name', f.name);
  if (f.kinds && f.kinds.length) p.set('kind', f.kinds.join(','));
  p.set('format', format);
  return `/api/runs/${q.run}/timeline/window?${p}`;
}

export class TimelineApi {
  private readonly token: string | null;

  constructor(private readonly base = '', token?: string | null) {
    this.token = token ?? new URLSearchParams(location.search).get('token');
  }

  private get(path: string, signal?: AbortSignal): Promise<Response> {
    return fetchApi(this.base, this.token, path, signal);
  }

  private async json<T>(path: string, signal?: AbortSignal): Promise<T> {
    return (await this.get(path, signal)).json() as Promise<T>;
  }

  /** Track list and extent; with clock=calibrated the extent is in calibrated time. */
  meta(run: number, clock: Clock = 'raw'): Promise<TimelineMeta> {
    return this.json(`/api/runs/${run}/timeline?clock=${clock}`);
  }

  async window(q: WindowRequest, signal?: AbortSignal): Promise<TimelineWindow> {
    const buf = await (await this.get(windowQuery(q), signal)).arrayBuffer();
    return decodeTimelineWindow(buf);
  }

  /** The counter series in [startNs, endNs) (raw clock) at `px` columns: the metadata's series, in its order, in more detail. */
  counters(run: number, startNs: number, endNs: number, px: number, signal?: AbortSignal): Promise<{ counters: TimelineCounter[] }> {
    const p = new URLSearchParams({ start_ns: String(Math.floor(startNs)), end_ns: String(Math.ceil(endNs)), px: String(Math.max(1, Math.round(px))) });
    return this.json(`/api/runs/${run}/timeline/counters?${p}`, signal);
  }

  /** A task with its flows; start_ns / end_ns and the flows' times are in `clock`. */
  task(run: number, task: number, clock: Clock = 'raw', signal?: AbortSignal): Promise<TaskDetails> {
    return this.json(`/api/runs/${run}/tasks/${task}?clock=${clock}`, signal);
  }

  nodeTasks(run: number, node: number, clock: Clock = 'raw'): Promise<NodeTasks> {
    return this.json(`/api/runs/${run}/tasks?node=${node}&clock=${clock}`);
  }

  /** The per-step breakdown (the registry's step_breakdown analysis). */
  steps(run: number): Promise<StepBreakdown> {
    return this.json(`/api/runs/${run}/analyses/step_breakdown`);
  }
}
