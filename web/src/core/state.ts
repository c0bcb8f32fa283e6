// The UI state in one place (Perfetto's UI keeps its state in a store and
// derives the URL from it; so do we): which runs the server has, what each
// graph pane shows, the bottom panel, the timeline's clock and compare, the
// one selection and what it resolved to, the details panel's content, the
// search. Views and panels read it from the store (store.ts) and change it
// only by dispatching the actions below, which the reducer (reducer.ts)
// applies. The URL hash is a function of this state (url_state.ts).
//
// This module is the state's public face for views: types, the actions and
// the few helpers that read the state.

import type {
  Clock, DiffReportJson, FindingJson, Grouping, NodeDetails, NodeRef, RunInfo, SearchMode, SummaryJson, SummaryOpType, TaskDetails,
} from '../rpc/api';
import type { ProbesLevelJson, RerunJobJson, RerunRequest } from '../rpc/probe_api';
import type { Selection, SelectionSource } from './selection';
import type { UrlState } from './url_state';

export type ColorMode = 'op' | 'time' | 'share' | 'status' | 'compare' | 'diff' | 'probe';
export type Direction = 'auto' | 'tb' | 'lr';
export type PanelMode = 'split' | 'graph' | 'bottom';
export type Align = 'start' | 'first_run';

/** One graph pane: what it shows (the URL's first fields for the main pane). */
export interface PaneState {
  run: number;
  level: string;
  grouping: Grouping;
  /** 'auto': the direction that fits the window, chosen by the server on the first layout of a level. */
  direction: Direction;
  /** Groups expanded / collapsed against the server's default view (http-api.md "Layout"). */
  expand: number[];
  collapse: number[];
  /** Selected model NodeId at this level, or null. */
  node: number | null;
}

export const kDefaultPane: PaneState = {
  run: 0, level: 'framework', grouping: 'scopes', direction: 'auto', expand: [], collapse: [], node: null,
};

/** Folding lists of a level a pane is not showing, kept while away ("run:level" → lists). */
export type SavedFolding = Record<string, { expand: number[]; collapse: number[] }>;

/** What the details panel shows. */
export type DetailsContent =
  | { kind: 'empty'; message: string }
  | { kind: 'error'; message: string }
  | { kind: 'node'; node: NodeDetails }
  | { kind: 'task'; task: TaskDetails; originNs: number }
  | { kind: 'op_type'; opType: string; row: SummaryOpType | null }
  | { kind: 'finding'; finding: FindingJson; nodes: number; tasks: number }
  | { kind: 'range'; summary: SummaryJson; startNs: number; endNs: number; originNs: number }
  | { kind: 'group'; group: GroupInfo };

export const kDetailsHint = 'Click a node to see its details.';

/** A group (folded item or frame) of a layout, for the details panel. */
export interface GroupInfo {
  /** scope | fusion group | repeated block | chunk */
  kindName: string;
  path: string;
  group: number;
  nodes: number;
  expanded: boolean;
  /** Path of the group this one repeats, if it is a repeat. */
  sameAs: string | null;
  /** "Conv ×12" of its most frequent op types. */
  topOps: string[];
}

/** The rows of the mapping a selection marks, and the row to bring into sight. */
export interface MappingMarks {
  nodes: number[];
  tasks: number[];
  opType: string | null;
  target: { node?: number; task?: number } | null;
}

/**
 * A selection resolved into every view's terms (selection_controller.ts).
 * Parts arrive as the server answers; `done` once all have.
 */
export interface Resolved {
  /** The selectionVersion this resolves. */
  version: number;
  done: boolean;
  /** Details of a selected node (compare mode links fused_from / fused_into from it). */
  node: NodeDetails | null;
  /** Details of the first selected task (the graph shows its node, or its fused_from on the framework level). */
  task: TaskDetails | null;
  /** Timeline: tasks to highlight; `focus`: bring them into view (within `extent` when known). */
  tasks: number[];
  focus: boolean;
  extent: { startNs: number; endNs: number } | null;
  /** Timeline: zoom to this range (a range opened from a link). */
  zoomTo: { startNs: number; endNs: number } | null;
  /** Timeline: show only this op type. */
  opFilter: string | null;
  /** Timeline path overlay for the lineage: tasks of every node on a path through the selected node. */
  lineageTasks: number[];
  /** Graph: nodes of the main pane to outline (a finding's evidence). */
  graphNodes: number[];
  mapping: MappingMarks;
  /** Summary: the op-type row and finding entry to mark. */
  summaryOp: string | null;
  summaryFinding: number;
  /** The summary of a selected time range. */
  rangeSummary: SummaryJson | null;
}

export function emptyResolved(version: number, done = false): Resolved {
  return {
    version, done, node: null, task: null, tasks: [], focus: false, extent: null, zoomTo: null, opFilter: null,
    lineageTasks: [], graphNodes: [], mapping: { nodes: [], tasks: [], opType: null, target: null },
    summaryOp: null, summaryFinding: -1, rangeSummary: null,
  };
}

/** The search box: the query to run on the active pane's level, and its answer. */
export interface SearchState {
  query: string;
  mode: SearchMode;
  /** Set by an op-type selection (cleared with it). */
  fromSelection: boolean;
  /** Bumped per query to run; results of an older one are dropped. */
  seq: number;
  /** The pane the query runs on. */
  pane: number;
  results: SearchResults | null;
}

export interface SearchResults {
  seq: number;
  /** The pane, run and level searched. */
  pane: number;
  run: number;
  level: string;
  matches: NodeRef[];
  total: number;
  error: string | null;
  /** How the server read the query ("glob, matched on scope-path suffixes ..."), or null. */
  readAs?: string | null;
}

/** The heat map's range (colour by time / share), for the legend. */
export interface HeatInfo {
  available: boolean;
  min: number;
  max: number;
  totalUs: number;
  withData: number;
  withoutData: number;
  /** Colour by status: items per status (ran, fused, inserted, not run, no link data). */
  status?: { ran: number; fused: number; inserted: number; notRun: number; unlinked: number };
  /**
   * Colour by compare metric: the compared run, or why there is none
   * (`reason`); items faster / slower / within 5 % / without data in either run.
   */
  compare?: { run: number | null; reason: string | null; faster: number; slower: number; same: number; noData: number };
  /**
   * Colour by diff: the pane's side of the diff ("run 0 (base)"), or why
   * there is none (`reason`); the pane's nodes per structural change and,
   * of the nodes the timing diff lists, those slower / faster beyond the noise.
   */
  diff?: DiffCounts;
  /** Colour by probe statistic: the statistic, its range, items with / without a value, or why none. */
  probe?: { stat: string; reason: string | null; min: number; max: number; withData: number; withoutData: number };
}

/** Node counts of one pane's side of a diff (colour by diff, the legend). */
export interface DiffCounts {
  side: string | null; reason: string | null;
  added: number; removed: number; changed: number; renamed: number; same: number; slower: number; faster: number;
  /** The report's headline: total time change, the gate's verdict, the rules crossed (one line each). */
  summary?: string[];
  /** Whether a rule crossed (the gate failed). */
  failed?: boolean;
  /** The pane's nodes that changed (at most kMaxDiffNodesListed), with what changed, for the legend's list. */
  nodes?: DiffNodeNote[];
}

/** One changed node of a pane's side of a diff: where it is and what changed ("attribute pads: [0, 0] -> [1, 1]"). */
export interface DiffNodeNote {
  pane: number; run: number; level: string; id: number; name: string; kind: string; what: string;
}

/** One diff of two runs (GET /api/diff), as the diff controller fetched it. */
export interface DiffEntry {
  base: number;
  next: number;
  status: 'loading' | 'ready' | 'error';
  report: DiffReportJson | null;
  error: string | null;
}

/** The key of the diff of runs `base` → `next` in `AppState.diffs`. */
export function diffKey(base: number, next: number): string { return `${base}:${next}`; }

/** What the graph view shows in the active pane, for the legend and the status line. */
export interface GraphInfo {
  /** Op types drawn, most frequent first; null before the first layout. */
  ops: { op: string; count: number }[] | null;
  heat: HeatInfo | null;
  /** Node status counts by NodeStatus, when the layout has them. */
  statusCounts: number[] | null;
  /** "N items · M edges · K nodes · webgl2". */
  statusLine: string;
}

export interface AppState {
  /** loading: asking the server for its runs; error: no server; file: a layout file is shown. */
  status: 'loading' | 'ready' | 'error' | 'file';
  runs: RunInfo[];
  /** [main] or [main, second]; the second is kept while compare mode is off. */
  panes: PaneState[];
  savedFolding: SavedFolding[];
  comparing: boolean;
  /** The pane the details, search, legend and export act on. */
  active: number;
  /** Compare mode: the other pane follows a selection (reveals and centres its linked nodes). */
  sync: boolean;
  color: ColorMode;
  lineage: boolean;
  /** The bottom panel: the shown tab (a bottom view's id), which part is maximised. */
  tab: string;
  panel: PanelMode;
  clock: Clock;
  timelineCompare: number | null;
  align: Align;
  /** Timeline tracks pinned to the top (the URL's pin=). */
  timelinePins: number[];
  selection: Selection | null;
  selectionSource: SelectionSource;
  /** Bumped on every selection. */
  selectionVersion: number;
  resolved: Resolved;
  details: { content: DetailsContent; loading: boolean };
  search: SearchState;
  /** The critical path drawn on graph and timeline ("show" in the summary), or null. */
  criticalPath: { tasks: number[]; nodes: number[] } | null;
  /**
   * The critical path is to be drawn (the URL's cpath=1): true while it is,
   * and from a link until the summary has the path and draws it.
   */
  criticalPathOn: boolean;
  banner: string | null;
  graph: GraphInfo;
  /** The bottom views' ids in tab order (the URL's `tab=` values). */
  tabs: readonly string[];
  /** Bottom views whose tab is not offered (yet): the cluster view until the server says it holds a cluster. */
  hiddenTabs: readonly string[];
  /** Diffs of two runs asked for (diffKey → entry): colour by diff, the timeline's compare marks. */
  diffs: Record<string, DiffEntry>;
  /** Colour by probe: the statistic, plugin metric (plugin:NAME.METRIC) or compare metric (compare:METRIC) shown. */
  probeStat: string;
  /** Bumped when the probe store changed (a re-run finished): probe answers are asked again. */
  probeVersion: number;
  /** The settings of each run's next re-run (set by the probe panel, the graph's node menu, a saved session). */
  probeSettings: Record<number, ProbeSettings>;
  /** A level's probe data (probeKey → entry), asked by the probe controller for the panes shown. */
  probeData: Record<string, ProbeDataEntry>;
  /** Re-runs with probes (by run): asked, running, done, failed. */
  reruns: Record<number, RerunEntry>;
  /**
   * The training diagnosis' root-cause chain of a run, marked on its
   * framework graph (the Training view publishes it): per model node id,
   * producer or propagator.
   */
  trainingMarks: TrainingMarks | null;
}

/** The root-cause chain of a training snapshot's run, as graph marks (model node id → role). */
export interface TrainingMarks {
  run: number;
  nodes: { id: number; role: 'producer' | 'propagator' }[];
}

/** The probe data of one run's level (GET /api/runs/{run}/probes?level=), for a probe-store version. */
export interface ProbeDataEntry {
  run: number; level: string; version: number;
  status: 'loading' | 'ready' | 'none' | 'error';
  data: ProbesLevelJson | null;
  /** Why there is none (the run has no probe store: the server's message), or the error. */
  message: string | null;
}

/** What a re-run asks for: probes (node or probe names, globs), triggers, what to keep, the input (-1: the runner's own). */
export interface ProbeSettings {
  probes: string[];
  triggers: string[];
  keep: 'stats' | 'tensor';
  input: number;
}

export const kDefaultProbeSettings: ProbeSettings = { probes: [], triggers: ['nan', 'inf'], keep: 'stats', input: -1 };

/**
 * Run `run`'s re-run settings: the ones set, else the defaults with the
 * probes of the store's latest run at the main pane's level (the node names
 * it probed), so "remove probe" starts from what is probed now.
 */
export function probeSettingsOf(s: AppState, run: number): ProbeSettings {
  const set = s.probeSettings[run];
  if (set) return set;
  const level = s.panes[0].run === run ? s.panes[0].level : s.runs[run]?.levels[0] ?? '';
  const data = s.probeData[probeKey(run, level)]?.data;
  const probes = data ? [...new Set(Object.values(data.nodes).map((e) => probeNodeName(e.probe)))].sort() : [];
  return { ...kDefaultProbeSettings, probes };
}

/** The node a probe name belongs to ("/conv1/Conv:0" → "/conv1/Conv"). */
export function probeNodeName(probe: string): string {
  return probe.replace(/:(in|grad)?\d+$/, '');
}

/** The key of run `run`'s level `level` in `AppState.probeData`. */
export function probeKey(run: number, level: string): string { return `${run}:${level}`; }

/** A re-run of one run's model with probes, as the re-run controller drives it. */
export interface RerunEntry {
  run: number;
  request: RerunRequest;
  status: 'starting' | 'running' | 'complete' | 'failed';
  job: RerunJobJson | null;
  error: string | null;
  /** Bumped by each new re-run of this run. */
  seq: number;
}

/** The state a page opens with, from its URL. */
export function initialState(url: UrlState, tabs: readonly string[], hiddenTabs: readonly string[] = []): AppState {
  const panes: PaneState[] = [{ ...url.pane }];
  if (url.compare) panes.push({ ...url.pane, run: url.compare.run, level: url.compare.level, expand: [], collapse: [], node: null });
  return {
    status: 'loading', runs: [], panes, savedFolding: panes.map(() => ({})), comparing: url.compare !== null, active: 0, sync: true,
    color: url.color, lineage: false, tab: url.tab, panel: url.panel, clock: url.clock, timelineCompare: url.timelineCompare,
    align: url.align, timelinePins: url.pins, selection: url.selection, selectionSource: 'url', selectionVersion: 0, resolved: emptyResolved(0),
    details: { content: { kind: 'empty', message: kDetailsHint }, loading: false },
    search: { query: '', mode: 'auto', fromSelection: false, seq: 0, pane: 0, results: null },
    criticalPath: null, criticalPathOn: url.criticalPath, banner: null, graph: { ops: null, heat: null, statusCounts: null, statusLine: '' }, tabs, hiddenTabs,
    diffs: {}, probeStat: url.probeStat, probeVersion: 0, probeSettings: {}, probeData: {}, reruns: {}, trainingMarks: null,
  };
}

/** The part of the state the URL holds. */
export function urlStateOf(s: AppState): UrlState {
  const sel = s.selection;
  const p1 = s.panes[1];
  return {
    pane: s.panes[0], selection: sel && sel.kind !== 'node' ? sel : null, tab: s.tab, panel: s.panel, color: s.color,
    compare: s.comparing && p1 ? { run: p1.run, level: p1.level } : null, timelineCompare: s.timelineCompare, align: s.align, clock: s.clock,
    criticalPath: s.criticalPathOn,
    pins: s.timelinePins,
    probeStat: s.probeStat,
  };
}

/** The panes on screen (the second only in compare mode). */
export function visiblePanes(s: AppState): PaneState[] {
  return s.comparing ? s.panes : s.panes.slice(0, 1);
}

/** Whether pane state `p` shows a graph: its run has the level (a trace-only or failed run has none). */
export function paneHasGraph(s: AppState, p: PaneState): boolean {
  return s.status === 'file' || (!!p.level && !!s.runs[p.run]?.levels.includes(p.level));
}

/** Whether the views can ask the server about run `run` (it exists and was opened). */
export function runUsable(s: AppState, run: number): boolean {
  return !!s.runs[run] && !s.runs[run].error;
}

/** The main pane's run, if the server has it. */
export function mainRun(s: AppState): RunInfo | undefined {
  return s.runs[s.panes[0].run];
}

export type Action =
  /** The server's runs arrived (the page is ready). */
  | { type: 'runsLoaded'; runs: RunInfo[] }
  /** No server: only a layout file can be opened. */
  | { type: 'loadFailed'; message: string }
  | { type: 'fileOpened' }
  /** The user edited the URL hash. */
  | { type: 'urlChanged'; url: UrlState }
  | { type: 'setRun'; run: number }
  /** A pane shows another level (and, for the second pane, maybe another run); each level keeps its folding. */
  | { type: 'setLevel'; pane: number; level: string; run?: number }
  | { type: 'setGrouping'; grouping: Grouping }
  /** Flow direction of every pane (top to bottom, left to right, or what fits the window). */
  | { type: 'setDirection'; direction: Direction }
  | { type: 'setFolding'; pane: number; expand: number[]; collapse: number[] }
  | { type: 'setPaneNode'; pane: number; node: number | null }
  | { type: 'setActivePane'; pane: number }
  | { type: 'setCompare'; on: boolean }
  | { type: 'setSync'; on: boolean }
  | { type: 'setColor'; color: ColorMode }
  | { type: 'setLineage'; on: boolean }
  | { type: 'setTab'; tab: string }
  /** A hidden bottom view's tab is offered from now on (`focus`: and shown). */
  | { type: 'showTab'; tab: string; focus?: boolean }
  | { type: 'setPanel'; panel: PanelMode }
  | { type: 'setClock'; clock: Clock }
  | { type: 'setTimelineCompare'; run: number | null; align?: Align }
  | { type: 'setTimelinePins'; pins: number[] }
  /**
   * Selects (null clears). `pane`: the graph pane a node was picked in
   * (graph click, search result); without it a node selection goes to the
   * pane showing its level, else to the main pane, switching its level.
   */
  | { type: 'select'; selection: Selection | null; source: SelectionSource; pane?: number }
  /** Parts of the resolution of selection `version` (dropped when a newer selection came). */
  | { type: 'resolved'; version: number; patch: Partial<Omit<Resolved, 'version' | 'done'>>; done?: boolean }
  | { type: 'setDetails'; content: DetailsContent; loading?: boolean; version?: number }
  | { type: 'detailsLoading'; version?: number }
  | { type: 'search'; query: string; mode: SearchMode }
  | { type: 'searchResults'; results: SearchResults }
  | { type: 'searchClear' }
  | { type: 'setCriticalPath'; path: { tasks: number[]; nodes: number[] } | null }
  | { type: 'banner'; message: string | null }
  | { type: 'graphInfo'; info: GraphInfo }
  /** The diff controller's progress on one diff (diffKey(base, next)). */
  | { type: 'diff'; entry: DiffEntry }
  | { type: 'setProbeStat'; stat: string }
  /** The probe store changed (a re-run finished). */
  | { type: 'probesChanged' }
  /** Run `run`'s next re-run: the fields given change. */
  | { type: 'setProbeSettings'; run: number; settings: Partial<ProbeSettings> }
  | { type: 'probeData'; entry: ProbeDataEntry }
  /** Re-run run `run`'s model with these probes (the re-run controller starts it). */
  | { type: 'startRerun'; run: number; request: RerunRequest }
  | { type: 'rerun'; entry: RerunEntry }
  /** The training diagnosis' chain to mark on a run's graph (null: none). */
  | { type: 'setTrainingMarks'; marks: TrainingMarks | null };

/**
 * The run the graph's "time vs compare run" colour compares pane state `st`
 * with: the timeline's compare run, else the other graph pane's run in
 * compare mode; or why there is none (null run and a reason for the colour
 * menu and the legend). Nodes are matched by model node id, so both runs
 * must show the same model file at that level.
 */
export function compareColourTarget(s: AppState, st: PaneState): { run: number | null; reason: string | null } {
  const other = s.comparing ? s.panes.find((p) => p !== st && p.run !== st.run) : undefined;
  const run = s.timelineCompare !== null && s.timelineCompare !== st.run ? s.timelineCompare : other ? other.run : null;
  if (run === null) return { run: null, reason: 'no compare run: pick one in the timeline\'s compare, or Compare with another run' };
  const r = s.runs[run], mine = s.runs[st.run];
  if (!r || r.error) return { run: null, reason: `run ${run} could not be opened` };
  if (!r.levels.includes(st.level)) return { run: null, reason: `run ${run} has no ${st.level} graph` };
  if (!r.has_trace) return { run: null, reason: `run ${run} has no trace: no node times to compare` };
  const a = mine?.inputs.find((i) => i.role === st.level), b = r.inputs.find((i) => i.role === st.level);
  if (a && b && a.path !== b.path) {
    return { run: null, reason: `run ${run}'s ${st.level} graph is another file (${b.path.split('/').pop()}); nodes are matched within one model file` };
  }
  return { run, reason: null };
}

/**
 * The diff the graph's "diff" colour shows, as runs (base → new): in
 * compare mode the left pane's run against the right pane's (one run in
 * both: its framework level against its compiled level); or why there is
 * none.
 */
export function graphDiffPair(s: AppState): { base: number; next: number } | { reason: string } {
  if (!s.comparing || !s.panes[1]) return { reason: 'diff needs Compare: the left pane is the base, the right pane the new run' };
  const base = s.panes[0].run, next = s.panes[1].run;
  for (const r of [base, next]) {
    if (!s.runs[r]) return { reason: `no run ${r}` };
    if (s.runs[r].error) return { reason: `run ${r} could not be opened` };
  }
  return { base, next };
}

/** The diff behind the timeline's compare marks: the main run (base, upper) against the compare run (new, below). */
export function timelineDiffPair(s: AppState): { base: number; next: number } | null {
  const base = s.panes[0].run, next = s.timelineCompare;
  if (next === null || next === base || !runUsable(s, base) || !runUsable(s, next)) return null;
  return { base, next };
}
