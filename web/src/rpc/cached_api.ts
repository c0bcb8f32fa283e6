// An ApiClient that asks the server once per run for the documents several
// parts of the UI read (the run's summary, analyses, list of registered
// analyses, timeline track list, critical path): the selection controller, the summary view and the
// details panel then share one answer. A failed request is forgotten, so
// the next caller asks again.

import type {
  AnalysesJson, AnalysisInfo, ApiClient, DiffReportJson, HistoryRunsJson, HistoryTrendJson, Clock, ClusterCollectiveJson, ClusterRanksResult, ClusterReportJson, WindowItemJson, CriticalPathJson, LayoutRequest, LinksJson, MappingPage, MappingQuery, ModelProperties, NodeDetails, NodePathsJson,
  NodeTasks, PairResult, RunInfo, SearchMode, SearchResult, SummaryJson, TaskDetails, TensorValues, TimelineMeta,
} from './api';
import type { Layout } from './layout_binary';
import type {
  ProbeCompareJson, ProbeNodeJson, ProbesLevelJson, RerunRequest, RerunStateJson, SavedSessionJson, SessionSavedJson, SessionStateJson,
} from './probe_api';

export class CachedApi implements ApiClient {
  private readonly memo = new Map<string, Promise<unknown>>();

  constructor(private readonly api: ApiClient) {}

  private once<T>(key: string, f: () => Promise<T>): Promise<T> {
    let p = this.memo.get(key) as Promise<T> | undefined;
    if (!p) {
      p = f();
      this.memo.set(key, p);
      p.catch(() => { if (this.memo.get(key) === p) this.memo.delete(key); });
    }
    return p;
  }

  runs(): Promise<RunInfo[]> { return this.api.runs(); }
  /** Probe answers are not kept: a re-run adds a run to the store while the page is open. */
  probes(run: number, level: string): Promise<ProbesLevelJson> { return this.api.probes(run, level); }
  probeNode(run: number, level: string, node: number): Promise<ProbeNodeJson> { return this.api.probeNode(run, level, node); }
  probeCompare(run: number, level: string): Promise<ProbeCompareJson> { return this.api.probeCompare(run, level); }
  rerunState(run: number): Promise<RerunStateJson> { return this.api.rerunState(run); }
  rerun(run: number, req: RerunRequest): Promise<{ job: number; state: string; command: string[] }> { return this.api.rerun(run, req); }
  savedSession(): Promise<SessionStateJson> { return this.api.savedSession(); }
  saveSession(doc: SavedSessionJson): Promise<SessionSavedJson> { return this.api.saveSession(doc); }
  /** Once per pair: the graph's diff colours and the timeline's marks share it. */
  diff(base: number, next: number): Promise<DiffReportJson> { return this.once(`diff:${base}:${next}`, () => this.api.diff(base, next)); }
  historyRuns(model: string | null, limit: number): Promise<HistoryRunsJson | null> { return this.api.historyRuns(model, limit); }
  /** Not kept: another job may add runs to the store while the page is open. */
  historyTrend(model: string): Promise<HistoryTrendJson> { return this.api.historyTrend(model); }
  summary(run: number): Promise<SummaryJson> { return this.once(`summary:${run}`, () => this.api.summary(run)); }
  analyses(run: number): Promise<AnalysesJson | null> { return this.once(`analyses:${run}`, () => this.api.analyses(run)); }
  timeline(run: number): Promise<TimelineMeta> { return this.once(`timeline:${run}`, () => this.api.timeline(run)); }
  criticalPath(run: number, clock: Clock): Promise<CriticalPathJson | null> {
    return this.once(`critical-path:${run}:${clock}`, () => this.api.criticalPath(run, clock));
  }
  analysisList(run: number): Promise<AnalysisInfo[]> { return this.once(`analysis-list:${run}`, () => this.api.analysisList(run)); }
  runAnalysis(run: number, id: string, params: Record<string, string>): Promise<unknown> { return this.api.runAnalysis(run, id, params); }
  summaryRange(run: number, fromNs: number, toNs: number, clock: Clock): Promise<SummaryJson> { return this.api.summaryRange(run, fromNs, toNs, clock); }
  task(run: number, id: number): Promise<TaskDetails> { return this.api.task(run, id); }
  nodeTasks(run: number, node: number): Promise<NodeTasks> { return this.api.nodeTasks(run, node); }
  nodePaths(run: number, level: string, node: number): Promise<NodePathsJson> { return this.api.nodePaths(run, level, node); }
  mapping(run: number, q: MappingQuery): Promise<MappingPage> { return this.api.mapping(run, q); }
  layout(q: LayoutRequest): Promise<Layout> { return this.api.layout(q); }
  node(run: number, level: string, node: number): Promise<NodeDetails> { return this.api.node(run, level, node); }
  exportModelExplorer(run: number, level: string, what: 'graph' | 'node-data'): Promise<Blob> { return this.api.exportModelExplorer(run, level, what); }
  search(run: number, level: string, q: string, mode: SearchMode): Promise<SearchResult> { return this.api.search(run, level, q, mode); }
  links(run: number): Promise<LinksJson> { return this.once(`links:${run}`, () => this.api.links(run)); }
  pair(run: number, candidate: number): Promise<PairResult> { return this.api.pair(run, candidate); }
  cluster(): Promise<ClusterReportJson | null> { return this.once('cluster', () => this.api.cluster()); }
  clusterRanks(ranks: number[]): Promise<ClusterRanksResult> { return this.api.clusterRanks(ranks); }
  clusterCollective(index: number): Promise<ClusterCollectiveJson> { return this.once(`cluster-collective:${index}`, () => this.api.clusterCollective(index)); }
  windowTasks(run: number, startNs: number, endNs: number, name: string, tracks: number[]): Promise<WindowItemJson[]> {
    return this.api.windowTasks(run, startNs, endNs, name, tracks);
  }
  properties(run: number, level: string): Promise<ModelProperties> { return this.once(`properties:${run}:${level}`, () => this.api.properties(run, level)); }
  values(run: number, level: string, name: string, limit: number): Promise<TensorValues> { return this.api.values(run, level, name, limit); }
}
