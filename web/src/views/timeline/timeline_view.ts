// The timeline view: one lane per track (device streams, host threads),
// grouped by device / host process with collapsible headers; tasks coloured by
// op type; copies and sync hatched; aggregates as density; flows of the
// selected task; area selection; raw / calibrated clock; filters; compare
// mode (a second run's tracks below on a shared, aligned axis).
//
// Level of detail is the server's: each request asks for the visible window
// plus half a window on each side at the screen's resolution (px = pixel
// columns of that range), and the server merges tasks narrower than a pixel
// into per-pixel aggregates, so a frame draws ~2 items per pixel column per
// row at most whatever the trace size. Requests are debounced, the previous
// window keeps being drawn (scaled: items carry nanoseconds) until the next
// arrives, a newer request aborts the older one and stale responses are
// dropped, so input never waits on the network.
//
// The timeline view's index.ts mounts it in the bottom panel (TimelineHost
// receives clicks, area selections and the toolbar's clock) and hands it
// what the selection resolved to. Counters and timings go to `Stats`
// ("timeline.*"), which the debug surface and the benchmark read.

import { kSelectColor, kMatchColor, kLineageColor, opColor, rgbCss } from '../../base/palette';
import { Stats } from '../../base/stats';
import { ApiError } from '../../rpc/api';
import {
  TimelineApi, windowQuery, type Clock, type StepBreakdown, type TaskDetails, type TimelineFilter, type TimelineMeta, type TimelineTrack,
} from '../../rpc/timeline_api';
import { firstVisible, kFlagAggregate, kFlagLinked, kTaskKindNames, rowKey, type TimelineWindow } from '../../rpc/timeline_binary';
import {
  formatBytes, formatDuration, kAxisH, kCounterH, kCounterLine, kFilteredLaneH, kPinHitW, kCopyFill, kCopyStripe, kGroupH, kGutterW, kLanePad, kRowH, kSlowerMark, kSyncFill, kSyncStripe,
  counterPoints, rowBox, TimelineRenderer, type FlowArrow, type GroupBand, type Lane, type OverlayTask, type TimelineFrame,
} from './timeline_render';

export interface TimelineHost {
  taskClicked(taskId: number, info: { track: number; startNs: number; endNs: number }): void;
  /** Area selection (shift-drag): the range in the view's clock and the tracks it covers (main run). */
  rangeSelected(startNs: number, endNs: number, tracks: number[]): void;
  rangeCleared(): void;
  /** The toolbar switched the clock. */
  clockChanged?(clock: Clock): void;
  /** A track was pinned or unpinned (the main run's track ids, in pin order). */
  pinsChanged?(pins: number[]): void;
}

/** What the view shows: run, visible range, clock, filter, and the tasks of its overlays. */
export interface TimelineState {
  run: number; startNs: number; endNs: number; clock: string;
  /** The task selected by a click. */
  selected: number[];
  /** Ids given to highlightTasks, and the tasks drawn (their details arrived: track, times). */
  highlightIds: number[]; highlighted: OverlayTask[];
  /** Ids given to setPath, and the tasks drawn. */
  pathIds: number[]; path: OverlayTask[];
  filter: TimelineFilter;
  /** Details of the selected task (with its flows), once fetched; the flows drawn for it. */
  selectedTask: TaskDetails | null; flows: number;
  /** The area selection (shift-drag), ordered. */
  area: { startNs: number; endNs: number } | null;
  /** The message over the plot (loading, an error from the server, an empty run), or null. */
  message: string | null;
  /** Tracks pinned to the top (main run). */
  pins: number[];
  /** Where the view opened and why (the default window's rule), or null before a run is open. */
  opened: { startNs: number; endNs: number; rule: string } | null;
}

/** The group of tracks pinned to the top. */
const kPinnedGroup = 'pinned';
/** Pixels of change below which a drag is a click. */
const kClickSlop = 3;
/** Debounce of window requests while the view moves (ms). */
const kFetchDebounceMs = 60;
/** Refetch when the fetched resolution differs from the screen's by more than this factor. */
const kResolutionSlack = 1.6;
/** Most task details fetched for an overlay (highlight, path). */
const kMaxOverlayTasks = 400;

/** One run's data: its track list, the window on hand and the request in flight. */
interface RunSource {
  run: number;
  meta: TimelineMeta;
  win: TimelineWindow | null;
  /** What `win` answers (range, ns per pixel, filter/clock key). */
  winStart: number; winEnd: number; winNsPerPx: number; winKey: string;
  offsetNs: number;
  seq: number;
  abort: AbortController | null;
  /** Filter / clock key of the request in flight. */
  inflightKey: string;
  loading: boolean;
  error: string | null;
  /** Counter series in detail around the view (when the metadata's are downsampled), by series index. */
  counterDetail: { start: number; end: number; series: { t: number[]; v: number[] }[] } | null;
}

let styleInjected = false;
function injectStyle(): void {
  if (styleInjected) return;
  styleInjected = true;
  const s = document.createElement('style');
  s.textContent = `
.mi-tl { position: relative; display: flex; flex-direction: column; width: 100%; height: 100%; min-height: 120px;
  font: 12px system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2330; background: #fff; }
.mi-tl-bar { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 8px; padding: 3px 8px; border-bottom: 1px solid #dde1e8; }
.mi-tl-bar > * { white-space: nowrap; }
.mi-tl-bar input[type=text] { width: 104px; font: inherit; padding: 1px 4px; }
.mi-tl-more { position: relative; }
.mi-tl-more > summary { cursor: pointer; list-style: none; border: 1px solid #c9ced8; border-radius: 4px; padding: 0 6px; background: #fff; }
.mi-tl-more > summary::-webkit-details-marker { display: none; }
.mi-tl-more[open] > summary { background: #eef3fb; }
.mi-tl-pop { position: absolute; z-index: 6; top: 22px; left: 0; background: #fff; border: 1px solid #c9ced8; border-radius: 4px;
  box-shadow: 0 2px 8px rgba(0,0,0,0.15); padding: 6px 8px; display: flex; flex-direction: column; gap: 6px; align-items: flex-start; }
.mi-tl-pop .mi-tl-legend { flex-direction: column; align-items: flex-start; gap: 3px; }
.mi-tl-bar select, .mi-tl-bar button { font: inherit; }
.mi-tl-kinds label { margin-right: 6px; white-space: nowrap; }
.mi-tl-legend { display: flex; gap: 10px; align-items: center; color: #4a5263; }
.mi-tl-sw { display: inline-block; width: 16px; height: 10px; vertical-align: -1px; margin-right: 4px; border: 1px solid rgba(0,0,0,0.25); }
.mi-tl-status { margin-left: auto; color: #6b7385; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; min-width: 0; flex: 0 1 auto; }
.mi-tl-plot { position: relative; flex: 1 1 auto; min-height: 60px; overflow: hidden; }
.mi-tl-plot canvas { position: absolute; left: 0; top: 0; outline: none; touch-action: none; }
.mi-tl-tip { position: absolute; pointer-events: none; background: rgba(24,28,38,0.94); color: #fff; padding: 5px 8px;
  border-radius: 4px; font-size: 11.5px; line-height: 1.45; max-width: 440px; white-space: pre-line; z-index: 5; display: none; }
.mi-tl-tip b { font-weight: 600; }
.mi-tl-steps { position: absolute; right: 6px; top: 30px; z-index: 4; max-height: calc(100% - 40px); overflow: auto;
  max-width: calc(100% - 202px); box-sizing: border-box;
  background: #fff; border: 1px solid #c9ced8; border-radius: 4px; box-shadow: 0 2px 8px rgba(0,0,0,0.15); padding: 6px 8px; font-size: 11.5px; }
.mi-tl-steps table { border-collapse: collapse; }
.mi-tl-steps th, .mi-tl-steps td { padding: 2px 4px; text-align: right; white-space: nowrap; }
.mi-tl-steps th:first-child, .mi-tl-steps td:first-child { text-align: left; }
.mi-tl-steps tr.setup td { color: #8a91a0; font-style: italic; }
.mi-tl-steps tbody tr { cursor: pointer; }
.mi-tl-steps tbody tr:hover { background: #eef3fb; }
.mi-tl-stepbar { display: inline-flex; width: 90px; height: 9px; vertical-align: middle; background: #f3f4f6; }
.mi-tl-stepbar span { display: block; height: 100%; }
`;
  document.head.appendChild(s);
}

function filterKey(clock: Clock, f: TimelineFilter): string {
  return JSON.stringify([clock, f.opTypes ?? [], f.tracks ?? [], f.name ?? '', f.kinds ?? []]);
}

export class TimelineView {
  readonly root: HTMLDivElement;
  readonly canvas: HTMLCanvasElement;
  private readonly plot: HTMLDivElement;
  private readonly tip: HTMLDivElement;
  private readonly status: HTMLSpanElement;
  private readonly renderer: TimelineRenderer;
  private readonly api: TimelineApi;
  private readonly resizeObserver: ResizeObserver;
  private readonly disposers: (() => void)[] = [];
  private controls: {
    clock: HTMLSelectElement; op: HTMLInputElement; name: HTMLInputElement; kinds: HTMLInputElement[];
    ops: HTMLDataListElement; compare: HTMLSpanElement; slower: HTMLSpanElement; allTracks: HTMLButtonElement;
    steady: HTMLButtonElement; setup: HTMLButtonElement; steps: HTMLButtonElement; opened: HTMLSpanElement;
  } | null = null;

  private sources: RunSource[] = [];
  private compareRun: number | null = null;
  /** The compare marks of a diff (setSlower), and the slower nodes' tasks (setSlowerTasks). */
  private slower: { labels: Set<string>; note: string } | null = null;
  private slowerTaskIds: number[] = [];
  private slowerTasks: OverlayTask[] = [];
  private slowerSeq = 0;
  private compareAlign: 'start' | 'first_run' = 'start';
  private compareSeq = 0;
  private clock: Clock = 'raw';
  private filter: TimelineFilter = {};
  private viewStart = 0;
  private viewEnd = 1;
  private scrollY = 0;
  private width = 1;
  private height = 1;
  private groups: GroupBand[] = [];
  private lanes: Lane[] = [];
  private contentH = 0;
  private readonly collapsed = new Set<string>();
  /** Tracks of the main run pinned to the top, in pin order. */
  private pins: number[] = [];
  /** The window the run opened on, and why. */
  private opened: { startNs: number; endNs: number; rule: string } | null = null;
  private stepsPanel: HTMLDivElement | null = null;
  private stepsSeq = 0;

  private selected: OverlayTask[] = [];
  private selectedDetails: TaskDetails | null = null;
  private flows: FlowArrow[] = [];
  /** Tasks outlined by highlightTasks, once their details arrived. */
  private highlighted: OverlayTask[] = [];
  /** The ids last given to highlightTasks. */
  private highlightIds: number[] = [];
  /** The path of setPath, once its tasks' details arrived. */
  private path: OverlayTask[] = [];
  private area: { startNs: number; endNs: number; y0: number; y1: number } | null = null;
  private hover: { source: number; item: number } | null = null;
  private readonly detailsCache = new Map<string, TaskDetails>();
  private overlaySeq = 0;
  private pathSeq = 0;
  private pathIds: number[] = [];

  private pendingFrame = false;
  private fetchTimer: ReturnType<typeof setTimeout> | null = null;
  private tipTimer: ReturnType<typeof setTimeout> | null = null;
  private message: string | null = null;
  private metaLoading = 0;
  private filterTimer: ReturnType<typeof setTimeout> | null = null;
  private mouse = { x: -1, y: -1 };
  /**
   * timeline.renders, .windows, .requests, .dropped (answers dropped as
   * stale), .first_render_at (performance.now() of the first frame with a
   * window), .last_request (path of the last main-run window request);
   * samples .frame_ms (draw time), .fetch_ms (request → decoded window).
   */
  readonly stats: Stats;

  constructor(container: HTMLElement, private readonly host: TimelineHost,
    opts?: { forceCanvas2d?: boolean; toolbar?: boolean; api?: TimelineApi; stats?: Stats }) {
    // The timeline draws with Canvas2D always: the server's level of detail keeps
    // a frame at a few thousand rectangles, which Canvas2D fills in a few ms
    // (bench/ui/bench_timeline.mjs), so forceCanvas2d changes nothing here.
    void opts?.forceCanvas2d;
    injectStyle();
    this.api = opts?.api ?? new TimelineApi();
    this.stats = opts?.stats ?? new Stats();
    this.root = document.createElement('div');
    this.root.className = 'mi-tl';
    const bar = document.createElement('div');
    bar.className = 'mi-tl-bar';
    this.status = document.createElement('span');
    this.status.className = 'mi-tl-status';
    if (opts?.toolbar !== false) this.buildToolbar(bar);
    bar.appendChild(this.status);
    this.root.appendChild(bar);
    this.plot = document.createElement('div');
    this.plot.className = 'mi-tl-plot';
    this.canvas = document.createElement('canvas');
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute('aria-label', 'timeline: W/S zoom, A/D pan, F zoom to selection, shift-drag selects a range');
    this.plot.appendChild(this.canvas);
    this.tip = document.createElement('div');
    this.tip.className = 'mi-tl-tip';
    this.plot.appendChild(this.tip);
    this.root.appendChild(this.plot);
    container.appendChild(this.root);
    this.renderer = new TimelineRenderer(this.canvas);
    this.attachInput();
    this.resizeObserver = new ResizeObserver(() => this.resize());
    this.resizeObserver.observe(this.plot);
    this.resize();
  }

  // ---- public interface ----

  get state(): TimelineState {
    return {
      run: this.sources[0]?.run ?? -1, startNs: Math.round(this.viewStart), endNs: Math.round(this.viewEnd),
      clock: this.clock, selected: this.selected.filter((s) => s.source === 0).map((s) => s.id),
      highlightIds: this.highlightIds.slice(), highlighted: this.highlighted.map((t) => ({ ...t })),
      pathIds: this.pathIds.slice(), path: this.path.map((t) => ({ ...t })), filter: { ...this.filter },
      selectedTask: this.selectedDetails, flows: this.flows.length, area: this.areaSelection, message: this.message,
      pins: this.pins.slice(), opened: this.opened ? { ...this.opened } : null,
    };
  }

  /** Loads the run's track list, fits the whole trace and fetches the first window. */
  async open(run: number): Promise<void> {
    this.abortAll();
    this.sources = [];
    this.clearSelection(false);
    // Overlays name tasks of the previous run.
    this.overlaySeq++;
    this.pathSeq++;
    this.highlighted = []; this.highlightIds = []; this.path = []; this.pathIds = [];
    this.message = 'loading…';
    this.requestRender();
    let meta: TimelineMeta;
    try {
      meta = await this.api.meta(run, this.clock);
    } catch (e) {
      this.message = e instanceof ApiError ? e.message : String(e);
      this.requestRender();
      throw e;
    }
    this.sources = [this.newSource(run, meta)];
    // What each CANN module reserved (npu_module_mem: dozens of modules) opens folded.
    for (const c of meta.counters ?? []) if (c.per_module) this.collapsed.add(`0:${c.group}`);
    this.message = meta.task_count ? null : 'this run has no trace tasks';
    if (this.controls) {
      this.controls.clock.disabled = !meta.has_calibration;
      this.controls.clock.title = meta.has_calibration ? '' : 'this run has no clock calibration';
      this.controls.ops.replaceChildren(...meta.op_types.map((o) => Object.assign(document.createElement('option'), { value: o })));
    }
    if (this.compareRun !== null) {
      await this.loadCompare().catch((e) => { this.message = `compare run ${this.compareRun}: ${e instanceof Error ? e.message : String(e)}`; });
    }
    this.relayout();
    this.openDefaultWindow(meta);
    if (this.stepsPanel) void this.showSteps(true);
    await this.fetchNow();
  }

  /**
   * Opens on the steady-state steps (the server's default_window: the steps
   * after the setup before the first ProfilerStep / model_run), else the
   * whole trace. A link's explicit window (zoomTo) applies after this.
   */
  private openDefaultWindow(meta: TimelineMeta): void {
    const dw = meta.default_window;
    if (dw && dw.end_ns > dw.start_ns && (dw.start_ns > meta.start_ns || dw.end_ns < meta.end_ns)) {
      const pad = (dw.end_ns - dw.start_ns) * 0.01;
      this.viewStart = dw.start_ns - pad;
      this.viewEnd = dw.end_ns + pad;
      this.opened = { startNs: dw.start_ns, endNs: dw.end_ns, rule: dw.rule };
      this.requestRender();
    } else {
      this.fitAll(false);
      this.opened = { startNs: meta.start_ns, endNs: meta.end_ns, rule: dw?.rule ?? 'whole trace' };
    }
    if (this.controls) {
      const setup = dw?.setup_ns ?? 0;
      this.controls.setup.disabled = !(setup > 0);
      this.controls.setup.title = setup > 0
        ? `show the setup before the first step (${formatDuration(setup)}: model loading, session setup)`
        : 'no setup before the first step in this run';
      this.controls.steady.disabled = !dw || !(dw.steady_steps > 0);
      this.controls.opened.textContent = setup > 0 ? `steady state · ${dw!.steady_steps} step${dw!.steady_steps === 1 ? '' : 's'}` : '';
      this.controls.opened.title = setup > 0 ? `opened on the steady state: ${dw!.steady_steps} step${dw!.steady_steps === 1 ? '' : 's'}, setup ${formatDuration(setup)} skipped (${dw?.rule ?? ''})` : dw?.rule ?? '';
    }
  }

  /** Zooms to the steady-state steps (the default window). */
  showSteady(): void {
    const dw = this.sources[0]?.meta.default_window;
    if (dw && dw.end_ns > dw.start_ns) this.zoomTo(dw.start_ns - (dw.end_ns - dw.start_ns) * 0.01, dw.end_ns + (dw.end_ns - dw.start_ns) * 0.01);
  }

  /** Zooms to the setup before the first step (model loading, session setup). */
  showSetup(): void {
    const m = this.sources[0]?.meta;
    const dw = m?.default_window;
    if (!m || !dw || !(dw.setup_ns > 0)) return;
    const a = m.start_ns, b = dw.start_ns;
    this.zoomTo(a - (b - a) * 0.01, b + (b - a) * 0.01);
  }

  /** Pins (or unpins) tracks of the main run to the top, in this order. */
  setPins(pins: number[]): void {
    const next = [...new Set(pins)];
    if (next.join(',') === this.pins.join(',')) return;
    this.pins = next;
    this.relayout();
  }

  private togglePin(track: number): void {
    const next = this.pins.includes(track) ? this.pins.filter((t) => t !== track) : [...this.pins, track];
    this.setPins(next);
    this.host.pinsChanged?.(this.pins.slice());
  }

  /** Opens (or closes) the per-step breakdown table over the plot. */
  async showSteps(open: boolean): Promise<void> {
    const seq = ++this.stepsSeq;
    if (!open) { this.stepsPanel?.remove(); this.stepsPanel = null; return; }
    const s = this.sources[0];
    if (!s) return;
    if (!this.stepsPanel) {
      this.stepsPanel = document.createElement('div');
      this.stepsPanel.className = 'mi-tl-steps';
      this.stepsPanel.id = 'mi-tl-steps';
      this.plot.appendChild(this.stepsPanel);
    }
    const panel = this.stepsPanel;
    panel.textContent = 'loading steps…';
    let b: StepBreakdown;
    try {
      b = await this.api.steps(s.run);
    } catch (e) {
      if (seq === this.stepsSeq) panel.textContent = `steps: ${e instanceof Error ? e.message : String(e)}`;
      return;
    }
    if (seq !== this.stepsSeq || this.stepsPanel !== panel) return;
    panel.replaceChildren(renderSteps(b, (a, z) => this.zoomTo(a - (z - a) * 0.01, z + (z - a) * 0.01)));
  }

  setClock(mode: Clock): void {
    if (mode === this.clock) return;
    this.clock = mode;
    if (this.controls) this.controls.clock.value = mode;
    this.refreshOverlays();
    // The extent moves with the clock; the view stays where it is.
    this.metaLoading++;
    void Promise.all(this.sources.map(async (s) => {
      try { s.meta = await this.api.meta(s.run, mode); } catch { /* keep the old extent */ }
    })).then(() => { this.metaLoading--; this.scheduleFetch(0); });
  }

  setFilter(f: TimelineFilter): void {
    this.filter = { ...f };
    if (this.controls) {
      this.controls.op.value = (f.opTypes ?? []).join(',');
      this.controls.name.value = f.name ?? '';
      for (const k of this.controls.kinds) k.checked = !f.kinds || !f.kinds.length || k.value.split(',').some((v) => f.kinds!.includes(v));
      this.controls.allTracks.hidden = !f.tracks || !f.tracks.length;
    }
    this.relayout();
    this.scheduleFetch(0);
  }

  highlightTasks(ids: number[], opts?: { focus?: boolean; startNs?: number; endNs?: number }): void {
    this.highlightIds = ids.slice();
    const seq = ++this.overlaySeq;
    if (opts?.focus && opts.startNs !== undefined && opts.endNs !== undefined) this.focusRange(opts.startNs, opts.endNs);
    void this.overlayTasks(ids).then((tasks) => {
      if (seq !== this.overlaySeq) return;
      this.highlighted = tasks;
      if (opts?.focus && (opts.startNs === undefined || opts.endNs === undefined) && tasks.length) {
        this.focusRange(Math.min(...tasks.map((t) => t.startNs)), Math.max(...tasks.map((t) => t.endNs)));
        this.revealLane(tasks[0]);
      } else if (opts?.focus && tasks.length) {
        this.revealLane(tasks[0]);
      }
      this.requestRender();
    });
  }

  setPath(taskIds: number[] | null): void {
    const ids = taskIds ?? [];
    const seq = ++this.pathSeq;
    this.pathIds = ids.slice();
    if (!ids.length) { this.path = []; this.requestRender(); return; }
    void this.overlayTasks(ids).then((tasks) => {
      if (seq !== this.pathSeq) return; // a newer path (or none) was set meanwhile
      this.path = tasks;
      this.requestRender();
    });
  }

  zoomTo(startNs: number, endNs: number): void {
    if (!(endNs > startNs)) return;
    this.viewStart = startNs;
    this.viewEnd = endNs;
    this.viewChanged();
  }

  /** The selected task, else the area selection, else the highlighted tasks, with a margin. */
  zoomToSelection(): void {
    const sel = this.selected[0];
    if (sel) { this.focusRange(sel.startNs + this.offsetOf(sel.source), sel.endNs + this.offsetOf(sel.source)); return; }
    if (this.area) { this.focusRange(Math.min(this.area.startNs, this.area.endNs), Math.max(this.area.startNs, this.area.endNs)); return; }
    if (this.highlighted.length) {
      this.focusRange(Math.min(...this.highlighted.map((t) => t.startNs)), Math.max(...this.highlighted.map((t) => t.endNs)));
    }
  }

  /**
   * Compare marks from a diff of the main run (base) against the compare
   * run (new): the compare run's tasks of op types that got slower beyond
   * the noise get a red bar on top; `note` goes beside the compare status.
   * Null clears them.
   */
  setSlower(marks: { labels: string[]; note: string } | null): void {
    this.slower = marks ? { labels: new Set(marks.labels), note: marks.note } : null;
    if (this.controls) this.controls.slower.textContent = marks?.note ?? '';
    this.requestRender();
  }

  /**
   * Compare marks of nodes: the compare run's tasks (ids) of the nodes the
   * diff found slower, outlined red once their details arrived.
   */
  setSlowerTasks(ids: number[]): void {
    this.slowerTaskIds = ids.slice();
    const seq = ++this.slowerSeq;
    if (!ids.length) { this.slowerTasks = []; this.requestRender(); return; }
    void this.overlayTasks(ids, 1).then((tasks) => {
      if (seq !== this.slowerSeq) return;
      this.slowerTasks = tasks;
      this.requestRender();
    });
  }

  /** What setSlower / setSlowerTasks gave (for the tests), and the boxes marked in the last frame. */
  slowerState(): { labels: string[]; note: string; marked: number; taskIds: number[]; tasks: OverlayTask[] } | null {
    return this.slower ? {
      labels: [...this.slower.labels], note: this.slower.note, marked: this.renderer.lastSlowerMarked,
      taskIds: this.slowerTaskIds.slice(), tasks: this.slowerTasks.map((t) => ({ ...t })),
    } : null;
  }

  setCompareRun(run: number | null, align: 'start' | 'first_run' = 'start'): void {
    this.compareRun = run;
    this.compareAlign = align;
    if (this.sources[1]) { this.sources[1].abort?.abort(); this.sources.length = 1; }
    this.selected = this.selected.filter((s) => s.source === 0);
    this.flows = this.flows.filter((f) => f.source === 0);
    const seq = ++this.compareSeq;
    if (run === null || !this.sources[0]) {
      if (this.controls) this.controls.compare.textContent = '';
      this.relayout();
      this.requestRender();
      this.updateStatus();
      return;
    }
    this.metaLoading++;
    void this.loadCompare(seq).then(() => {
      if (seq !== this.compareSeq) return;
      this.relayout();
      this.scheduleFetch(0);
      // Marks asked for before the compared run's tracks were there.
      if (this.slowerTaskIds.length) this.setSlowerTasks(this.slowerTaskIds);
    }).catch((e) => {
      this.message = `compare run ${run}: ${e instanceof Error ? e.message : String(e)}`;
      this.requestRender();
    }).finally(() => { this.metaLoading--; });
  }

  resize(): void {
    const r = this.plot.getBoundingClientRect();
    this.width = Math.max(1, Math.floor(r.width));
    this.height = Math.max(1, Math.floor(r.height));
    this.renderer.resize(this.width, this.height, window.devicePixelRatio || 1);
    this.clampScroll();
    this.requestRender();
    if (this.sources.length) this.scheduleFetch();
  }

  destroy(): void {
    this.abortAll();
    if (this.fetchTimer) clearTimeout(this.fetchTimer);
    if (this.tipTimer) clearTimeout(this.tipTimer);
    if (this.filterTimer) clearTimeout(this.filterTimer);
    this.resizeObserver.disconnect();
    for (const d of this.disposers) d();
    this.root.remove();
  }

  // ---- geometry and status (hit tests, the debug surface) ----

  /** The window on hand for `source` (0 = main run, 1 = compare run). */
  windowOf(source = 0): TimelineWindow | null { return this.sources[source]?.win ?? null; }
  /** Each lane: its source run, track, and canvas-relative top and height. */
  laneBoxes(): { source: number; track: number; name: string; group: string; y: number; h: number; collapsed: boolean; pinned: boolean; counter: boolean }[] {
    return this.lanes.map((l) => ({
      source: l.source, track: l.track.id, name: l.track.name, group: l.group.name, y: kAxisH + l.y - this.scrollY, h: l.h,
      collapsed: l.group.collapsed, pinned: !!l.pinned, counter: !!l.counter,
    }));
  }
  /** The counter value drawn at time t (ns) on counter lane `track` (-1 - index), or null before its first point. */
  counterValueAt(track: number, t: number): number | null {
    const l = this.lanes.find((ln) => ln.counter && ln.track.id === track);
    if (!l?.counter) return null;
    const off = this.offsetOf(l.source);
    const c = counterPoints(l.counter, this.viewStart - off, this.viewEnd - off);
    let v: number | null = null;
    for (let i = 0; i < c.t.length && c.t[i] <= t; ++i) v = c.v[i];
    return v;
  }
  /** Canvas-relative position of time t (ns) and of a row of a track. */
  xOf(t: number): number { return kGutterW + ((t - this.viewStart) * (this.width - kGutterW)) / (this.viewEnd - this.viewStart); }
  rowCenterY(source: number, track: number, row: number): number | null {
    const l = this.lanes.find((ln) => ln.source === source && ln.track.id === track);
    if (!l) return null;
    const b = rowBox(l, row);
    return kAxisH + b.y - this.scrollY + b.h / 2;
  }
  /** A track list, a window request or a toolbar filter is pending: what is drawn may still change. */
  get busy(): boolean {
    return this.metaLoading > 0 || this.sources.some((s) => s.loading) || this.fetchTimer !== null || this.filterTimer !== null;
  }
  private get areaSelection(): { startNs: number; endNs: number } | null {
    return this.area ? { startNs: Math.min(this.area.startNs, this.area.endNs), endNs: Math.max(this.area.startNs, this.area.endNs) } : null;
  }

  // ---- layout of lanes ----

  private newSource(run: number, meta: TimelineMeta): RunSource {
    return { run, meta, win: null, winStart: 0, winEnd: 0, winNsPerPx: 0, winKey: '', offsetNs: 0, seq: 0, abort: null, inflightKey: '', loading: false, error: null, counterDetail: null };
  }

  private async loadCompare(seq = this.compareSeq): Promise<void> {
    if (this.compareRun === null || !this.sources[0]) return;
    const meta = await this.api.meta(this.compareRun, this.clock);
    // A newer setCompareRun (or none) came while this was loading.
    if (seq !== this.compareSeq || this.compareRun === null || !this.sources[0]) return;
    const a = this.sources[0].meta;
    const s = this.newSource(this.compareRun, meta);
    const anchor = (m: TimelineMeta): number => (this.compareAlign === 'first_run' && m.runs.length ? m.runs[0].start_ns : m.start_ns);
    s.offsetNs = anchor(a) - anchor(meta);
    this.sources[1] = s;
    if (this.controls) this.controls.compare.textContent = `compare: run ${this.compareRun} (aligned at ${this.compareAlign === 'first_run' ? 'first run' : 'start'})`;
  }

  /** Tracks → groups → lanes with y positions; honours collapsed groups and the track filter. */
  private relayout(): void {
    const groups: GroupBand[] = [];
    const lanes: Lane[] = [];
    let y = 0;
    const onlyTracks = this.filter.tracks && this.filter.tracks.length ? new Set(this.filter.tracks) : null;
    const pinned = new Set(this.pins);
    this.sources.forEach((s, si) => {
      const byGroup = new Map<string, TimelineTrack[]>();
      // Pinned tracks (main run) first, in pin order, in a group of their own.
      if (si === 0 && pinned.size) {
        const byId = new Map(s.meta.tracks.map((t) => [t.id, t]));
        const list = this.pins.map((id) => byId.get(id)).filter((t): t is TimelineTrack => !!t);
        if (list.length) byGroup.set(kPinnedGroup, list);
      }
      for (const t of s.meta.tracks) {
        if (si === 0 && pinned.has(t.id)) continue;
        const g = t.group || (t.kind === 'device_stream' ? 'device' : 'host');
        let list = byGroup.get(g);
        if (!list) byGroup.set(g, (list = []));
        list.push(t);
      }
      for (const [name, tracks] of byGroup) {
        const label = this.sources.length > 1 ? `${si === 0 ? 'A' : 'B'} · run ${s.run} · ${name}` : name;
        const key = `${si}:${name}`;
        const g: GroupBand = { source: si, name: label, y, collapsed: this.collapsed.has(key), lanes: [], taskCount: 0 };
        y += kGroupH;
        for (const t of tracks) {
          // A track left out by the stream filter stays as a thin labelled strip
          // (click its label to take it back in).
          const filteredOut = si === 0 && onlyTracks !== null && !onlyTracks.has(t.id);
          const rows = filteredOut ? 0 : Math.max(1, Math.min(255, t.rows || 1));
          const h = g.collapsed ? 0 : filteredOut ? kFilteredLaneH : rows * kRowH + 2 * kLanePad;
          const lane: Lane = { source: si, track: t, y, h, rows, group: g, pinned: si === 0 && pinned.has(t.id) };
          g.lanes.push(lane);
          g.taskCount += t.task_count;
          lanes.push(lane);
          y += h;
        }
        groups.push(g);
      }
      // Counter tracks (memory over time), below the run's task tracks.
      const counters = s.meta.counters ?? [];
      const cgroups = new Map<string, GroupBand>();
      counters.forEach((c, k) => {
        const name = c.group || 'memory';
        let g = cgroups.get(name);
        if (!g) {
          const label = this.sources.length > 1 ? `${si === 0 ? 'A' : 'B'} · run ${s.run} · ${name}` : name;
          g = { source: si, name: label, y, collapsed: this.collapsed.has(`${si}:${name}`), lanes: [], taskCount: 0 };
          cgroups.set(name, g);
          groups.push(g);
          y += kGroupH;
        }
        let max = 0;
        for (const v of c.v) max = Math.max(max, v);
        const track: TimelineTrack = { id: -1 - k, kind: 'other', name: c.name.replace(/^.*?memory /, ''), group: name, task_count: 0, rows: 1, busy_ns: 0, clock_offset_ns: 0 };
        const h = g.collapsed ? 0 : kCounterH;
        const d = s.counterDetail;
        const detail = d && d.series[k] ? { start: d.start, end: d.end, t: d.series[k].t, v: d.series[k].v } : undefined;
        const lane: Lane = { source: si, track, y, h, rows: 1, group: g, counter: { t: c.t, v: c.v, max, unit: c.unit, detail } };
        g.lanes.push(lane);
        lanes.push(lane);
        y += h;
      });
    });
    this.groups = groups;
    this.lanes = lanes;
    this.contentH = y;
    this.clampScroll();
    this.requestRender();
  }

  private clampScroll(): void {
    const plotH = this.height - kAxisH;
    this.scrollY = Math.max(0, Math.min(this.scrollY, this.contentH - plotH + 8));
  }

  private offsetOf(source: number): number { return this.sources[source]?.offsetNs ?? 0; }

  private traceExtent(): [number, number] {
    let a = Infinity, b = -Infinity;
    this.sources.forEach((s) => {
      a = Math.min(a, s.meta.start_ns + s.offsetNs);
      b = Math.max(b, s.meta.end_ns + s.offsetNs);
    });
    if (!(b > a)) return [0, 1];
    return [a, b];
  }

  private fitAll(fetch = true): void {
    const [a, b] = this.traceExtent();
    const pad = (b - a) * 0.01;
    this.viewStart = a - pad;
    this.viewEnd = b + pad;
    if (fetch) this.viewChanged(); else this.requestRender();
  }

  /** Zooms so [a, b] fills ~80% of the plot. */
  private focusRange(a: number, b: number): void {
    const w = Math.max(b - a, 1000);
    const c = (a + b) / 2;
    this.zoomTo(c - w * 0.625, c + w * 0.625);
  }

  private revealLane(o: OverlayTask): void {
    const l = this.lanes.find((ln) => ln.source === o.source && ln.track.id === o.track);
    if (!l) return;
    if (l.group.collapsed) {
      this.collapsed.delete(`${l.source}:${l.group.name.replace(/^[AB] · run \d+ · /, '')}`);
      this.relayout();
      return this.revealLane(o);
    }
    const plotH = this.height - kAxisH;
    if (l.y < this.scrollY || l.y + l.h > this.scrollY + plotH) {
      this.scrollY = l.y - plotH / 3;
      this.clampScroll();
      this.requestRender();
    }
  }

  // ---- fetching ----

  private plotW(): number { return Math.max(1, this.width - kGutterW); }

  private viewChanged(): void {
    // Keep a sane range: at least 10 ns on screen, at most 10x the trace.
    const [a, b] = this.traceExtent();
    const maxSpan = Math.max(10, (b - a) * 10);
    let span = this.viewEnd - this.viewStart;
    if (span < 10) { const c = (this.viewStart + this.viewEnd) / 2; this.viewStart = c - 5; this.viewEnd = c + 5; span = 10; }
    if (span > maxSpan) { const c = (this.viewStart + this.viewEnd) / 2; this.viewStart = c - maxSpan / 2; this.viewEnd = c + maxSpan / 2; }
    this.requestRender();
    this.scheduleFetch();
  }

  /** Does source s need a new window for the current view? */
  private stale(s: RunSource): boolean {
    if (!s.win || s.error) return true; // after an error, the next change retries
    if (s.winKey !== filterKey(this.clock, this.filter)) return true;
    const vs = this.viewStart - s.offsetNs, ve = this.viewEnd - s.offsetNs;
    const nsPerPx = (this.viewEnd - this.viewStart) / this.plotW();
    const ratio = s.winNsPerPx / nsPerPx;
    // The fetched range is clamped to the trace: outside it there is nothing to fetch.
    const lo = Math.max(vs, s.meta.start_ns), hi = Math.min(ve, s.meta.end_ns);
    const covered = hi <= lo || (lo >= s.winStart && hi <= s.winEnd);
    return !covered || ratio > kResolutionSlack || ratio < 1 / kResolutionSlack;
  }

  /**
   * Coalesces window requests: while the view moves, at most one per
   * kFetchDebounceMs (a pending timer is kept, not pushed back, so that a
   * long continuous zoom still refines the detail on the way).
   */
  private scheduleFetch(delayMs = kFetchDebounceMs): void {
    if (!this.sources.length) return;
    if (this.fetchTimer) {
      if (delayMs > 0) return;
      clearTimeout(this.fetchTimer);
    }
    this.fetchTimer = setTimeout(() => { this.fetchTimer = null; void this.fetchNow(); }, delayMs);
  }

  private async fetchNow(): Promise<void> {
    await Promise.all(this.sources.map((s, si) => (this.stale(s) ? this.fetchSource(s, si) : Promise.resolve())));
  }

  /**
   * The counter series of [start, end) at `px` columns, for a trace whose
   * metadata sends them downsampled (the server keeps 8192 points of each):
   * drawn while the view lies inside that range.
   */
  private async fetchCounterDetail(s: RunSource, start: number, end: number, px: number, signal: AbortSignal): Promise<void> {
    let got: { counters: { t: number[]; v: number[] }[] };
    try {
      got = await this.api.counters(s.run, start, end, px, signal);
    } catch (e) {
      if ((e as Error).name === 'AbortError') throw e;
      // The downsampled series stay on screen; the tasks' window stands.
      this.stats.count('timeline.counter_errors');
      return;
    }
    s.counterDetail = { start, end, series: got.counters.map((c) => ({ t: c.t, v: c.v })) };
    this.stats.count('timeline.counter_windows');
    const si = this.sources.indexOf(s);
    for (const l of this.lanes) {
      if (l.source !== si || !l.counter) continue;
      const c = s.counterDetail.series[-1 - l.track.id];
      l.counter.detail = c ? { start, end, t: c.t, v: c.v } : undefined;
    }
  }

  private async fetchSource(s: RunSource, si: number): Promise<void> {
    const span = this.viewEnd - this.viewStart;
    const nsPerPx = span / this.plotW();
    // Half a window each side, clamped to the trace (nothing lies outside).
    const start = Math.max(s.meta.start_ns, this.viewStart - s.offsetNs - span / 2);
    const end = Math.min(s.meta.end_ns, this.viewEnd - s.offsetNs + span / 2);
    const key = filterKey(this.clock, this.filter);
    if (!(end > start)) {
      s.win = null; s.winKey = key; s.loading = false;
      this.requestRender();
      return;
    }
    const px = Math.max(1, Math.min(16384, Math.round((end - start) / nsPerPx)));
    if (s.loading) {
      // One request in flight per run: its answer is still newer than the
      // window on screen, and when it lands the view is checked again.
      // A filter / clock change makes it useless: abort it.
      if (s.inflightKey === key) return;
      s.abort?.abort();
    }
    const abort = new AbortController();
    s.abort = abort;
    const seq = ++s.seq;
    s.loading = true;
    s.inflightKey = key;
    this.updateStatus();
    const req = { run: s.run, startNs: start, endNs: end, px, clock: this.clock, filter: si === 0 ? this.filter : { ...this.filter, tracks: undefined } };
    this.stats.count('timeline.requests');
    if (si === 0) this.stats.set('timeline.last_request', windowQuery(req));
    const t0 = performance.now();
    try {
      const win = await this.api.window(req, abort.signal);
      if (seq !== s.seq) { this.stats.count('timeline.dropped'); return; }
      s.win = win;
      s.winStart = start; s.winEnd = end; s.winNsPerPx = (end - start) / px; s.winKey = key;
      s.error = null;
      this.stats.count('timeline.windows');
      this.stats.sample('timeline.fetch_ms', performance.now() - t0);
      if (this.hover?.source === si) this.hover = null;
      if (s.meta.counters?.some((c) => c.downsampled)) await this.fetchCounterDetail(s, start, end, px, abort.signal);
    } catch (e) {
      if ((e as Error).name === 'AbortError' || seq !== s.seq) { this.stats.count('timeline.dropped'); return; }
      s.error = e instanceof Error ? e.message : String(e);
    } finally {
      if (seq === s.seq) { s.loading = false; s.abort = null; }
    }
    // The first run's error that still stands, if any (shown over the plot).
    this.message = this.sources.map((x, k) => (x.error ? (k ? `compare run ${x.run}: ${x.error}` : x.error) : null)).find((m) => m) ?? null;
    this.updateStatus();
    this.requestRender();
    // The view may have moved on while this was in flight.
    if (this.stale(s) && !s.error) this.scheduleFetch(0);
  }

  private abortAll(): void {
    for (const s of this.sources) { s.seq++; s.abort?.abort(); s.abort = null; s.loading = false; }
  }

  private updateStatus(): void {
    const s = this.sources[0];
    if (!s) { this.status.textContent = ''; return; }
    const parts: string[] = [];
    const w = s.win;
    if (w) {
      let aggregates = 0;
      for (let i = 0; i < w.itemCount; ++i) if (w.flags[i] & kFlagAggregate) aggregates++;
      parts.push(`${w.totalTasks.toLocaleString()} of ${s.meta.task_count.toLocaleString()} tasks`, `${w.itemCount.toLocaleString()} items (${aggregates.toLocaleString()} merged)`);
    } else {
      parts.push(`${s.meta.task_count.toLocaleString()} tasks`);
    }
    if (this.sources.some((x) => x.loading)) parts.push('loading…');
    this.status.textContent = parts.join(' · ');
    this.status.title = `${w ? `${w.totalTasks.toLocaleString()} tasks in the window, drawn as ${w.itemCount.toLocaleString()} items; ` : ''}${s.meta.task_count.toLocaleString()} tasks in run ${s.run}`;
  }

  // ---- overlays (selection, highlight, path) ----

  private async details(source: number, id: number): Promise<TaskDetails | null> {
    const s = this.sources[source];
    if (!s) return null;
    const key = `${s.run}:${this.clock}:${id}`;
    let d = this.detailsCache.get(key);
    if (!d) {
      try {
        d = await this.api.task(s.run, id, this.clock);
      } catch {
        return null;
      }
      this.detailsCache.set(key, d);
    }
    return d;
  }

  private toOverlay(source: number, d: TaskDetails): OverlayTask {
    // The server gives start / end in the requested clock.
    return { id: d.id, source, track: d.track.id, startNs: d.start_ns, endNs: d.end_ns, row: d.row };
  }

  /** Details of up to kMaxOverlayTasks tasks of the main run, 8 requests at a time. */
  private async overlayTasks(ids: number[], source = 0): Promise<OverlayTask[]> {
    const todo = ids.slice(0, kMaxOverlayTasks);
    const out: (OverlayTask | null)[] = new Array(todo.length).fill(null);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < todo.length) {
        const k = next++;
        const d = await this.details(source, todo[k]);
        if (d) out[k] = this.toOverlay(source, d);
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, todo.length) }, worker));
    return out.filter((o): o is OverlayTask => o !== null);
  }

  private refreshOverlays(): void {
    if (this.highlightIds.length) this.highlightTasks(this.highlightIds);
    if (this.pathIds.length) this.setPath(this.pathIds);
    if (this.slowerTaskIds.length) this.setSlowerTasks(this.slowerTaskIds);
    const sel = this.selected[0];
    if (sel) void this.selectTask(sel.source, sel.id, false);
  }

  private async selectTask(source: number, id: number, notify: boolean, hint?: { track: number; startNs: number; endNs: number }): Promise<void> {
    if (hint) this.selected = [{ id, source, track: hint.track, startNs: hint.startNs, endNs: hint.endNs }];
    this.flows = [];
    this.requestRender();
    if (notify && source === 0 && hint) this.host.taskClicked(id, hint);
    const d = await this.details(source, id);
    if (!d || this.selected[0]?.id !== id) return;
    this.selectedDetails = d;
    this.selected = [this.toOverlay(source, d)];
    this.flows = (d.flows ?? []).map((f) => ({
      kind: f.kind, fromTrack: f.from_track, toTrack: f.to_track, fromNs: f.from_ns, toNs: f.to_ns, source,
      fromRow: f.from_task === d.id ? d.row ?? 0 : 0, toRow: f.to_task === d.id ? d.row ?? 0 : 0,
    }));
    this.requestRender();
    // The other ends' rows (a launch sits under its aten op on the host thread).
    const flows = this.flows;
    await Promise.all((d.flows ?? []).map(async (f, k) => {
      const other = f.from_task === d.id ? f.to_task : f.from_task;
      const od = await this.details(source, other);
      if (!od || this.flows !== flows) return;
      if (f.from_task === other) flows[k].fromRow = od.row ?? 0; else flows[k].toRow = od.row ?? 0;
    }));
    if (this.flows === flows) this.requestRender();
  }

  private clearSelection(notifyArea: boolean): void {
    this.selected = [];
    this.selectedDetails = null;
    this.flows = [];
    if (this.area) {
      this.area = null;
      if (notifyArea) this.host.rangeCleared();
    }
    this.requestRender();
  }

  // ---- drawing ----

  requestRender(): void {
    if (this.pendingFrame) return;
    this.pendingFrame = true;
    requestAnimationFrame(() => {
      this.pendingFrame = false;
      this.draw();
    });
  }

  private draw(): void {
    const main = this.sources[0];
    const frame: TimelineFrame = {
      width: this.width, height: this.height, viewStart: this.viewStart, viewEnd: this.viewEnd,
      originNs: main ? main.meta.start_ns : 0, scrollY: this.scrollY, groups: this.groups, lanes: this.lanes,
      sources: this.sources.map((s) => ({ win: s.win, offsetNs: s.offsetNs })),
      hover: this.hover, selected: this.selected, highlighted: this.highlighted, path: this.path, flows: this.flows,
      area: this.area, message: this.message, traceSpanNs: main ? main.meta.end_ns - main.meta.start_ns : 0,
      cursorX: this.mouse.x >= kGutterW && this.mouse.y >= 0 ? this.mouse.x : null,
      runs: main ? main.meta.runs.map((r) => ({ startNs: r.start_ns, endNs: r.end_ns })) : [],
      slower: this.slower && this.sources[1] ? { source: 1, labels: this.slower.labels } : null,
      slowerTasks: this.sources[1] ? this.slowerTasks : [],
    };
    this.renderer.draw(frame);
    this.stats.sample('timeline.frame_ms', this.renderer.lastFrameMs);
    if (main?.win) {
      if (!this.stats.num('timeline.renders')) this.stats.set('timeline.first_render_at', performance.now());
      this.stats.count('timeline.renders');
    }
  }

  // ---- input ----

  private hit(sx: number, sy: number): { source: number; item: number; lane: Lane } | null {
    if (sx < kGutterW || sy < kAxisH) return null;
    const cy = sy - kAxisH + this.scrollY;
    const lane = this.lanes.find((l) => !l.group.collapsed && cy >= l.y && cy < l.y + l.h);
    if (!lane || lane.counter) return null;
    const w = this.sources[lane.source]?.win;
    if (!w) return null;
    const row = Math.floor((cy - lane.y - kLanePad) / kRowH);
    if (row < 0 || row >= lane.rows) return null;
    const ri = w.rows.get(rowKey(lane.track.id, row));
    if (!ri) return null;
    const nsPerPx = (this.viewEnd - this.viewStart) / this.plotW();
    const t = this.viewStart + (sx - kGutterW) * nsPerPx - this.offsetOf(lane.source);
    const slop = 2 * nsPerPx;
    let best = -1, bestD = Infinity;
    for (let j = firstVisible(ri.items, w.start, w.end, t - slop); j < ri.items.length; ++j) {
      const i = ri.items[j];
      if (w.start[i] > t + slop) break;
      const d = t < w.start[i] ? w.start[i] - t : t > w.end[i] ? t - w.end[i] : 0;
      if (d < bestD) { bestD = d; best = i; }
    }
    return best >= 0 && bestD <= slop ? { source: lane.source, item: best, lane } : null;
  }

  private groupAt(sy: number): GroupBand | null {
    if (sy < kAxisH) return null;
    const cy = sy - kAxisH + this.scrollY;
    return this.groups.find((g) => cy >= g.y && cy < g.y + kGroupH) ?? null;
  }

  /**
   * Stream filter from the gutter: the first click on a track label shows
   * only that track, later clicks add or remove tracks; removing the last
   * one shows all again.
   */
  private toggleTrackFilter(track: number): void {
    const cur = new Set(this.filter.tracks ?? []);
    if (cur.has(track)) cur.delete(track); else cur.add(track);
    this.setFilter({ ...this.filter, tracks: cur.size ? [...cur].sort((a, b) => a - b) : undefined });
  }

  private toggleGroup(g: GroupBand): void {
    const key = `${g.source}:${g.name.replace(/^[AB] · run \d+ · /, '')}`;
    if (this.collapsed.has(key)) this.collapsed.delete(key); else this.collapsed.add(key);
    this.relayout();
  }

  private timeAt(sx: number): number {
    return this.viewStart + ((sx - kGutterW) * (this.viewEnd - this.viewStart)) / this.plotW();
  }

  /** Zooms by `factor` (>1 zooms in) keeping the time under screen x fixed. */
  zoomAt(factor: number, sx: number): void {
    const x = Math.max(kGutterW, Math.min(this.width, sx));
    const t = this.timeAt(x);
    const span = (this.viewEnd - this.viewStart) / factor;
    const frac = (x - kGutterW) / this.plotW();
    this.viewStart = t - frac * span;
    this.viewEnd = this.viewStart + span;
    this.viewChanged();
  }

  /** Pans by `dx` screen pixels (positive moves the content right). */
  panBy(dx: number, dy = 0): void {
    if (dx) {
      const d = (dx * (this.viewEnd - this.viewStart)) / this.plotW();
      this.viewStart -= d;
      this.viewEnd -= d;
    }
    if (dy) {
      this.scrollY -= dy;
      this.clampScroll();
    }
    this.viewChanged();
  }

  private laneTracksIn(y0: number, y1: number): number[] {
    const a = Math.min(y0, y1), b = Math.max(y0, y1);
    const out: number[] = [];
    for (const l of this.lanes) {
      if (l.source !== 0 || l.rows === 0 || l.counter) continue;
      const top = l.group.collapsed ? l.group.y : l.y;
      const bottom = l.group.collapsed ? l.group.y + kGroupH : l.y + l.h;
      if (bottom > a && top < b) out.push(l.track.id);
    }
    return out;
  }

  private attachInput(): void {
    const el = this.canvas;
    const on = <K extends keyof HTMLElementEventMap>(type: K, f: (e: HTMLElementEventMap[K]) => void, o?: AddEventListenerOptions): void => {
      el.addEventListener(type, f as EventListener, o);
      this.disposers.push(() => el.removeEventListener(type, f as EventListener, o));
    };
    type Drag = { mode: 'pan' | 'area'; x0: number; y0: number; lastX: number; lastY: number; moved: boolean; id: number };
    let drag: Drag | null = null;
    const local = (e: MouseEvent): [number, number] => {
      const r = el.getBoundingClientRect();
      return [e.clientX - r.left, e.clientY - r.top];
    };
    on('pointerdown', (e) => {
      if (e.button !== 0) return;
      const [x, y] = local(e);
      el.focus();
      el.setPointerCapture(e.pointerId);
      drag = { mode: e.shiftKey && x >= kGutterW ? 'area' : 'pan', x0: x, y0: y, lastX: x, lastY: y, moved: false, id: e.pointerId };
    });
    on('pointermove', (e) => {
      const [x, y] = local(e);
      this.mouse = { x, y };
      if (!drag) { this.hoverAt(x, y, e); this.requestRender(); return; }
      if (!drag.moved && Math.abs(x - drag.x0) + Math.abs(y - drag.y0) > kClickSlop) drag.moved = true;
      if (!drag.moved) return;
      this.hideTip();
      if (drag.mode === 'pan') {
        el.style.cursor = 'grabbing';
        this.panBy(x - drag.lastX, y - drag.lastY);
      } else {
        const cy0 = drag.y0 - kAxisH + this.scrollY, cy1 = y - kAxisH + this.scrollY;
        this.area = { startNs: this.timeAt(drag.x0), endNs: this.timeAt(Math.max(kGutterW, x)), y0: Math.min(cy0, cy1), y1: Math.max(cy0, cy1) };
        this.requestRender();
      }
      drag.lastX = x; drag.lastY = y;
    });
    const up = (e: PointerEvent): void => {
      if (!drag) return;
      const d = drag;
      drag = null;
      el.style.cursor = '';
      if (el.hasPointerCapture(e.pointerId)) el.releasePointerCapture(e.pointerId);
      const [x, y] = local(e);
      if (d.mode === 'area' && d.moved && this.area) {
        // Snap the rows to whole lanes so the selection says which tracks it covers.
        const tracks = this.laneTracksIn(this.area.y0, this.area.y1);
        const sel = this.lanes.filter((l) => l.source === 0 && tracks.includes(l.track.id));
        if (sel.length) {
          this.area.y0 = Math.min(...sel.map((l) => (l.group.collapsed ? l.group.y : l.y)));
          this.area.y1 = Math.max(...sel.map((l) => (l.group.collapsed ? l.group.y + kGroupH : l.y + l.h)));
        }
        const a = this.areaSelection!;
        this.requestRender();
        this.host.rangeSelected(Math.round(a.startNs), Math.round(a.endNs), tracks);
        return;
      }
      if (!d.moved) this.click(x, y);
    };
    on('pointerup', up);
    on('pointercancel', up);
    on('pointerleave', () => { this.hideTip(); this.hover = null; this.mouse = { x: -1, y: -1 }; this.requestRender(); });
    on('wheel', (e) => {
      e.preventDefault();
      const [x] = local(e);
      const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? this.height : 1;
      const dx = e.deltaX * unit, dy = e.deltaY * unit;
      const discreteWheel = e.deltaMode === 1 || (e.deltaX === 0 && Math.abs(e.deltaY) >= 50 && Number.isInteger(e.deltaY));
      if (e.ctrlKey || e.metaKey) {
        this.zoomAt(Math.exp(-dy * 0.01), x); // trackpad pinch arrives as ctrl+wheel
      } else if (e.shiftKey) {
        this.panBy(-(dx || dy));
      } else if (discreteWheel && x >= kGutterW) {
        this.zoomAt(Math.exp(-dy * 0.002), x);
      } else {
        // Two-finger scroll: horizontal pans time, vertical scrolls the lanes.
        this.panBy(-dx, -dy);
      }
    }, { passive: false });
    on('keydown', (e) => {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const mx = this.mouse.x >= kGutterW ? this.mouse.x : kGutterW + this.plotW() / 2;
      switch (e.key.toLowerCase()) {
        case 'w': this.zoomAt(1.3, mx); break;
        case 's': this.zoomAt(1 / 1.3, mx); break;
        case 'a': this.panBy(this.plotW() * 0.15); break;
        case 'd': this.panBy(-this.plotW() * 0.15); break;
        case 'f': this.zoomToSelection(); break;
        case '0': this.fitAll(); break;
        case 'escape': this.clearSelection(true); break;
        case 'arrowup': this.panBy(0, 40); break;
        case 'arrowdown': this.panBy(0, -40); break;
        default: return;
      }
      e.preventDefault();
    });
  }

  private click(x: number, y: number): void {
    if (y < kAxisH) return;
    // A group header (gutter or plot part) toggles the group.
    const g = this.groupAt(y);
    if (g) { this.toggleGroup(g); return; }
    if (x < kGutterW) {
      const cy = y - kAxisH + this.scrollY;
      const lane = this.lanes.find((l) => l.source === 0 && !l.group.collapsed && cy >= l.y && cy < l.y + l.h);
      if (!lane || lane.counter) return;
      // The pin mark pins the track to the top; the rest of the label filters by it.
      if (x < kPinHitW && lane.rows > 0) this.togglePin(lane.track.id);
      else this.toggleTrackFilter(lane.track.id);
      return;
    }
    const h = this.hit(x, y);
    if (!h) { this.clearSelection(true); return; }
    const w = this.sources[h.source].win!;
    const i = h.item;
    if (w.flags[i] & kFlagAggregate) {
      // An aggregate stands for many narrow tasks: zoom into it.
      const off = this.offsetOf(h.source);
      this.focusRange(w.start[i] + off, w.end[i] + off);
      return;
    }
    void this.selectTask(h.source, w.task[i], true, { track: w.track[i], startNs: w.start[i], endNs: w.end[i] });
  }

  private hoverAt(x: number, y: number, e: PointerEvent): void {
    if (y < kAxisH && x >= kGutterW && this.sources[0]) {
      // Over the axis: which run (iteration) is under the pointer.
      const t = this.timeAt(x);
      const runs = this.sources[0].meta.runs;
      const r = runs.find((q) => t >= q.start_ns && t < q.end_ns);
      if (this.hover) { this.hover = null; this.requestRender(); }
      if (r) this.showTip(`<b>${esc(r.name || `run ${r.index}`)}</b>\n${formatDuration(r.end_ns - r.start_ns)}`, e.clientX, e.clientY);
      else this.hideTip();
      return;
    }
    // Over a counter track: its value at the pointer.
    if (x >= kGutterW && y >= kAxisH) {
      const cy = y - kAxisH + this.scrollY;
      const cl = this.lanes.find((l) => l.counter && !l.group.collapsed && cy >= l.y && cy < l.y + l.h);
      if (cl) {
        const t = this.timeAt(x) - this.offsetOf(cl.source);
        const v = this.counterValueAt(cl.track.id, t);
        const origin = this.sources[0]?.meta.start_ns ?? 0;
        this.showTip(`<b>${esc(cl.track.name)}</b>\n${v === null ? 'no sample yet' : formatBytes(v)} at ${formatDuration(t - origin)}`, e.clientX, e.clientY);
        return;
      }
    }
    const h = this.hit(x, y);
    const prev = this.hover;
    this.hover = h ? { source: h.source, item: h.item } : null;
    if (prev?.item !== this.hover?.item || prev?.source !== this.hover?.source) this.requestRender();
    if (!h) { this.hideTip(); return; }
    const w = this.sources[h.source].win!;
    const i = h.item;
    const lines: string[] = [];
    const label = w.str(w.label[i]);
    const dur = formatDuration(w.end[i] - w.start[i]);
    const kind = kTaskKindNames[w.kind[i]] ?? 'other';
    if (w.flags[i] & kFlagAggregate) {
      lines.push(`<b>${esc(w.count[i].toLocaleString())} tasks</b> (mostly ${esc(label)})`);
      lines.push(`busy ${(100 * w.busy[i]).toFixed(0)}% of ${dur} · click to zoom in`);
    } else {
      lines.push(`<b>${esc(label)}</b>`);
      lines.push(`${kind.replace('_', ' ')} · ${dur}`);
      if (!(w.flags[i] & kFlagLinked)) lines.push('not linked to a graph node');
    }
    const origin = this.sources[0]?.meta.start_ns ?? 0;
    lines.push(`${esc(h.lane.track.name)} · ${esc(h.lane.group.name)} · at ${formatDuration(w.start[i] + this.offsetOf(h.source) - origin)}`);
    this.showTip(lines.join('\n'), e.clientX, e.clientY);
    // The kernel's full name, once the pointer rests on a task.
    if (this.tipTimer) clearTimeout(this.tipTimer);
    if (!(w.flags[i] & kFlagAggregate)) {
      const task = w.task[i], src = h.source;
      this.tipTimer = setTimeout(() => {
        void this.details(src, task).then((d) => {
          if (!d || this.hover?.item !== i || this.sources[src]?.win !== w) return;
          const extra = [`<b>${esc(d.name)}</b>`, d.op_type && d.op_type !== d.name ? `op ${esc(d.op_type)}` : '',
            d.node ? `node ${esc(d.node.name)}` : ''].filter(Boolean);
          this.showTip([...extra, ...lines.slice(1)].join('\n'), e.clientX, e.clientY);
        });
      }, 150);
    }
  }

  private showTip(html: string, clientX: number, clientY: number): void {
    const r = this.plot.getBoundingClientRect();
    this.tip.innerHTML = html;
    this.tip.style.display = 'block';
    const tw = this.tip.offsetWidth, th = this.tip.offsetHeight;
    let x = clientX - r.left + 14, y = clientY - r.top + 14;
    if (x + tw > r.width) x = Math.max(0, clientX - r.left - tw - 10);
    if (y + th > r.height) y = Math.max(0, clientY - r.top - th - 10);
    this.tip.style.left = `${x}px`;
    this.tip.style.top = `${y}px`;
  }

  private hideTip(): void {
    this.tip.style.display = 'none';
    if (this.tipTimer) { clearTimeout(this.tipTimer); this.tipTimer = null; }
  }

  // ---- toolbar ----

  private buildToolbar(bar: HTMLDivElement): void {
    const mk = <K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}): HTMLElementTagNameMap[K] =>
      Object.assign(document.createElement(tag), props);
    const fit = mk('button', { textContent: 'whole', title: 'whole trace, setup included (0)' });
    fit.addEventListener('click', () => this.fitAll());
    const steady = mk('button', { textContent: 'steps', title: 'the steady-state steps the timeline opens on' });
    steady.addEventListener('click', () => this.showSteady());
    const setup = mk('button', { textContent: 'setup', title: 'the setup before the first step (model loading, session setup)' });
    setup.addEventListener('click', () => this.showSetup());
    const steps = mk('button', { textContent: 'breakdown', title: 'per step: wall time and time in compute, communication, memcpy, host, idle' });
    steps.addEventListener('click', () => {
      const open = !this.stepsPanel;
      steps.classList.toggle('active', open);
      void this.showSteps(open);
    });
    const opened = mk('span', { className: 'mi-tl-status' });
    opened.style.marginLeft = '0';
    fit.id = 'mi-tl-fit'; steady.id = 'mi-tl-steady'; setup.id = 'mi-tl-setup'; steps.id = 'mi-tl-steps-btn'; opened.id = 'mi-tl-opened';
    const allTracks = mk('button', { textContent: 'all tracks', title: 'clear the stream filter (click a track label to filter by it)', hidden: true });
    allTracks.addEventListener('click', () => this.setFilter({ ...this.filter, tracks: undefined }));
    const clock = mk('select', { title: 'task start times: raw, or calibrated by the per-track clock offsets' });
    for (const c of ['raw', 'calibrated']) clock.appendChild(mk('option', { value: c, textContent: `${c} clock` }));
    clock.addEventListener('change', () => { this.setClock(clock.value as Clock); this.host.clockChanged?.(this.clock); });
    const ops = mk('datalist', { id: `mi-tl-ops-${Math.random().toString(36).slice(2)}` });
    const op = mk('input', { type: 'text', placeholder: 'op types (Conv,Gemm)', title: 'show only these op types (comma separated)' });
    op.setAttribute('list', ops.id);
    const name = mk('input', { type: 'text', placeholder: 'name contains', title: 'show only tasks whose name contains this text' });
    const kindsBox = mk('span', { className: 'mi-tl-kinds' });
    const kinds: HTMLInputElement[] = [];
    for (const [k, t] of [['compute', 'compute'], ['data_movement', 'copies'], ['sync', 'sync'], ['host_op', 'host'],
      ['runtime', 'runtime'], ['annotation,overhead,other', 'other']]) {
      const cb = mk('input', { type: 'checkbox', value: k, checked: true });
      const lb = mk('label');
      lb.append(cb, ` ${t}`);
      kindsBox.appendChild(lb);
      kinds.push(cb);
    }
    const applyFilter = (): void => {
      if (this.filterTimer) clearTimeout(this.filterTimer);
      this.filterTimer = setTimeout(() => {
        this.filterTimer = null;
        const opTypes = op.value.split(',').map((s) => s.trim()).filter(Boolean);
        const ticked = kinds.filter((k) => k.checked);
        // All boxes on = no kind filter.
        const kindList = ticked.length === kinds.length ? undefined : ticked.flatMap((k) => k.value.split(','));
        this.setFilter({ ...this.filter, opTypes, name: name.value.trim() || undefined, kinds: kindList });
        // A kind filter hidden in the popover still shows on its button.
        filters.querySelector('summary')!.textContent = kindList ? 'filters • ▾' : 'filters ▾';
      }, 250);
    };
    op.addEventListener('input', applyFilter);
    name.addEventListener('input', applyFilter);
    for (const k of kinds) {
      k.addEventListener('change', () => {
        // At least one kind stays on (no kinds at all would be an empty timeline).
        if (!kinds.some((x) => x.checked)) k.checked = true;
        applyFilter();
      });
    }
    const legend = mk('span', { className: 'mi-tl-legend' });
    const sw = (bg: string, text: string, title: string, border?: string): HTMLSpanElement => {
      const s = mk('span', { title });
      const b = mk('span', { className: 'mi-tl-sw' });
      b.style.background = bg;
      if (border) b.style.border = `2px solid ${border}`;
      s.append(b, text);
      return s;
    };
    legend.append(
      sw(`repeating-linear-gradient(135deg, ${kCopyStripe} 0 2px, ${kCopyFill} 2px 6px)`, 'copy', 'data movement (H2D / D2H / D2D, memset): hatched'),
      sw(`repeating-linear-gradient(90deg, ${kSyncStripe} 0 2px, ${kSyncFill} 2px 6px)`, 'sync', 'synchronisation, event waits: striped red'),
      sw(`linear-gradient(to top, ${rgbCss(opColor('Conv'))} 45%, #f3f4f6 45%)`, 'merged', 'several tasks under a pixel: bar height = busy fraction'),
      sw('#f3f4f6', 'idle', 'no task running on the track'),
      sw('transparent', 'selected', 'the selected task', rgbCss(kSelectColor)),
      sw('transparent', 'highlighted', 'tasks of the selection in other views', rgbCss(kMatchColor)),
      sw('transparent', 'path', 'critical / dependency path', rgbCss(kLineageColor)),
      sw(`linear-gradient(to bottom, ${kSlowerMark} 3px, #f3f4f6 3px)`, 'slower', 'compare: op types the diff found slower in the compared run (red bar on top)'),
    );
    const compare = mk('span', { className: 'mi-tl-status' });
    compare.style.marginLeft = '0';
    legend.append(sw(kCounterLine, 'memory', 'counter tracks: the allocator\'s totals over time (Kineto [memory] events, Ascend memory_record.csv)'));
    // Rarely changed: the clock and the task kinds behind "filters", the
    // legend behind "legend" (popovers), so the bar is one row wide and two
    // at 1024 px and the tracks keep the room.
    const popover = (label: string, title: string, ...body: HTMLElement[]): HTMLDetailsElement => {
      const d = mk('details', { className: 'mi-tl-more' });
      const sum = mk('summary', { textContent: `${label} ▾`, title });
      const pop = mk('div', { className: 'mi-tl-pop' });
      pop.append(...body);
      d.append(sum, pop);
      d.addEventListener('toggle', () => {
        if (!d.open) return;
        // One open at a time; a click elsewhere closes it.
        for (const o of bar.querySelectorAll<HTMLDetailsElement>('details.mi-tl-more')) if (o !== d) o.open = false;
        const away = (e: Event): void => {
          if (d.contains(e.target as Node)) return;
          d.open = false;
          document.removeEventListener('pointerdown', away, true);
        };
        document.addEventListener('pointerdown', away, true);
      });
      return d;
    };
    kindsBox.style.display = 'flex';
    kindsBox.style.flexDirection = 'column';
    const filters = popover('filters', 'clock and task kinds', clock, kindsBox);
    filters.id = 'mi-tl-filters';
    const legendMenu = popover('legend', 'what the colours and outlines mean', legend);
    legendMenu.id = 'mi-tl-legend-menu';
    const slower = mk('span', { className: 'mi-tl-status mi-tl-slower' });
    slower.style.color = kSlowerMark;
    slower.textContent = this.slower?.note ?? '';
    bar.append(steady, setup, fit, steps, opened, allTracks, op, ops, name, filters, legendMenu, compare, slower);
    this.controls = { clock, op, name, kinds, ops, compare, slower, allTracks, steady, setup, steps, opened };
  }
}

function esc(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

/** The categories of a step in their order of precedence, with their colours. */
const kStepCats: [keyof import('../../rpc/timeline_api').StepTimes, string, string][] = [
  ['compute_ns', 'compute', '#3b7dd8'], ['communication_ns', 'comm', '#c75dba'], ['memcpy_ns', 'memcpy', '#e0a030'],
  ['host_ns', 'host', '#6bb36b'], ['idle_ns', 'idle', '#c9ced8'],
];

/** The per-step table: wall time, each category's time and a stacked bar; a row click zooms to the step. */
function renderSteps(b: StepBreakdown, zoom: (startNs: number, endNs: number) => void): HTMLElement {
  const box = document.createElement('div');
  const table = document.createElement('table');
  const head = table.createTHead().insertRow();
  for (const h of ['step', 'wall', ...kStepCats.map((c) => c[1]), '']) {
    const th = document.createElement('th');
    th.textContent = h;
    head.appendChild(th);
  }
  const body = table.createTBody();
  const rows = [...b.steps.map((s) => ({ ...s, label: s.name })),
    ...(b.steady_steps > 1 ? [{ ...b.steady_total, label: `steady total (${b.steady_steps} steps)`, steady: true, start_ns: b.steady_window.start_ns, end_ns: b.steady_window.end_ns }] : [])];
  for (const s of rows) {
    const tr = body.insertRow();
    if (!s.steady) tr.className = 'setup';
    tr.dataset.start = String(s.start_ns);
    tr.dataset.end = String(s.end_ns);
    const cell = (text: string): HTMLTableCellElement => { const td = tr.insertCell(); td.textContent = text; return td; };
    cell(s.steady ? s.label : `${s.label} (setup)`);
    cell(formatDuration(s.wall_ns));
    for (const [k] of kStepCats) cell(formatDuration(s[k]));
    const bar = document.createElement('span');
    bar.className = 'mi-tl-stepbar';
    for (const [k, name, color] of kStepCats) {
      const part = document.createElement('span');
      part.style.width = `${s.wall_ns > 0 ? (100 * s[k]) / s.wall_ns : 0}%`;
      part.style.background = color;
      part.title = `${name} ${formatDuration(s[k])}`;
      bar.appendChild(part);
    }
    tr.insertCell().appendChild(bar);
    tr.addEventListener('click', () => { if (s.end_ns > s.start_ns) zoom(s.start_ns, s.end_ns); });
  }
  const note = document.createElement('div');
  note.style.color = '#6b7385';
  note.style.marginTop = '4px';
  note.textContent = 'each ns to the first that applies: compute, comm (collectives), memcpy, host (devices idle), idle';
  box.append(table, note);
  return box;
}
