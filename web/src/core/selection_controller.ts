// The selection controller: whenever the selection changes, it asks the
// server once what the selection stands for in every view's terms and
// publishes the answers to the store (`resolved`, `details`), where each
// view reads its part; views never call each other.
//
//   selected  | asks                                  | publishes
//   node      | node details; its tasks; with lineage | details; the op type (summary); its tasks (timeline, in view);
//             | on, its dependency paths              | its mapping row; the lineage's tasks (timeline path)
//   task      | task details                          | details; the tasks (timeline); its node (graph, mapping row);
//             |                                       | its op type (summary)
//   op type   | the run's summary (its row)           | details; the timeline's op filter; mapping rows; summary row
//   finding   | the run's analyses (a link's finding  | details; evidence tasks (timeline), nodes (graph, mapping)
//             | names only its index)                 |
//   range     | the range's summary                   | details; the summary view's range
//
// Answers for a selection that is no longer current are dropped (the
// reducer compares the selection version). Parts are published as they
// arrive; `resolved.done` says all have.

import type { ApiClient, SummaryJson } from '../rpc/api';
import { findingIds } from '../rpc/api';
import type { Selection, SelectionSource } from './selection';
import type { StoreApi } from './store';
import { kDetailsHint, type Action, type AppState, type DetailsContent, type Resolved } from './state';

type Patch = Partial<Omit<Resolved, 'version' | 'done'>>;

export class SelectionController {
  /** The selection version last resolved (or being resolved). */
  private version = -1;

  constructor(private readonly store: StoreApi, private readonly api: ApiClient) {
    store.subscribe((s, prev) => this.changed(s, prev));
    this.changed(store.state, store.state);
  }

  private changed(s: AppState, prev: AppState): void {
    if (s.status !== 'ready' && s.status !== 'file') return;
    if (s.selectionVersion !== this.version) {
      this.version = s.selectionVersion;
      void this.resolve(s).catch((e: Error) => this.store.dispatch({ type: 'banner', message: `selection: ${e.message}` }));
    } else if (s.lineage !== prev.lineage && s.selection?.kind === 'node') {
      void this.lineage(s, s.selection);
    }
  }

  private dispatch(a: Action): void { this.store.dispatch(a); }

  private current(version: number): boolean { return this.store.state.selectionVersion === version; }

  private patch(version: number, patch: Patch, done = false): void {
    this.dispatch({ type: 'resolved', version, patch, done });
  }

  private details(version: number, content: DetailsContent): void {
    this.dispatch({ type: 'setDetails', content, version });
  }

  /** Where relative times count from: the trace's start (0 without a trace). */
  private async originNs(s: AppState, run: number): Promise<number> {
    if (!s.runs[run]?.has_trace) return 0;
    return (await this.api.timeline(run).catch(() => null))?.start_ns ?? 0;
  }

  private async resolve(s: AppState): Promise<void> {
    const v = s.selectionVersion, sel = s.selection, source = s.selectionSource;
    if (!sel) {
      // A click on empty graph space set its own details (a group, an input).
      if (source !== 'graph') this.details(v, { kind: 'empty', message: kDetailsHint });
      this.patch(v, {}, true);
      return;
    }
    if (s.status === 'file') {
      if (sel.kind === 'node') this.details(v, { kind: 'empty', message: `node ${sel.id} (details need the server)` });
      this.patch(v, {}, true);
      return;
    }
    switch (sel.kind) {
      case 'node': return this.node(s, v, sel, source);
      case 'task': return this.task(s, v, sel, source);
      case 'op_type': return this.opType(s, v, sel.opType);
      case 'finding': return this.finding(s, v, sel);
      case 'range': return this.range(s, v, sel, source);
    }
  }

  private async node(s: AppState, v: number, sel: Extract<Selection, { kind: 'node' }>, source: SelectionSource): Promise<void> {
    const run = s.panes[0].run, nodeRun = sel.run ?? run;
    const here = nodeRun === run;
    this.patch(v, { mapping: { nodes: [sel.id], tasks: [], opType: null, target: here ? { node: sel.id } : null } });
    this.dispatch({ type: 'detailsLoading', version: v });
    const details = this.api.node(nodeRun, sel.level, sel.id).then((d) => {
      if (!this.current(v)) return;
      this.details(v, { kind: 'node', node: d });
      this.patch(v, { node: d, summaryOp: d.op_type });
    }, (e: Error) => {
      if (this.current(v)) this.details(v, { kind: 'error', message: e.message });
    });
    if (here && s.runs[run]?.has_trace) {
      const r = await this.api.nodeTasks(run, sel.id).catch(() => null);
      if (!this.current(v)) return;
      const tasks = r?.tasks ?? [];
      const extent = r && r.start_ns !== null && r.end_ns !== null ? { startNs: r.start_ns, endNs: r.end_ns } : null;
      this.patch(v, { tasks, focus: source !== 'timeline' && tasks.length > 0, extent });
      if (s.lineage) await this.lineage(s, sel, tasks);
    }
    await details;
    if (this.current(v)) this.patch(v, {}, true);
  }

  /**
   * With lineage on, the node's dependency paths (every node on a path from
   * the inputs to it and from it to the outputs): the tasks that executed
   * them, for the timeline's path overlay; off (or no trace), none.
   */
  private async lineage(s: AppState, sel: Extract<Selection, { kind: 'node' }>, own?: number[]): Promise<void> {
    const v = s.selectionVersion, run = s.panes[0].run;
    if (!s.lineage || (sel.run ?? run) !== run || !s.runs[run]?.has_trace) {
      this.patch(v, { lineageTasks: [] });
      return;
    }
    const paths = await this.api.nodePaths(run, sel.level, sel.id).catch(() => null);
    if (!this.current(v) || !this.store.state.lineage) return;
    if (!paths) { this.patch(v, { lineageTasks: [] }); return; }
    const mine = paths.node_tasks ?? own ?? this.store.state.resolved.tasks;
    this.patch(v, { lineageTasks: [...paths.ancestor_tasks, ...mine, ...paths.descendant_tasks] });
  }

  private async task(s: AppState, v: number, sel: Extract<Selection, { kind: 'task' }>, source: SelectionSource): Promise<void> {
    const run = s.panes[0].run;
    this.patch(v, { tasks: sel.ids, focus: source !== 'timeline' });
    this.dispatch({ type: 'detailsLoading', version: v });
    try {
      const [t, origin] = await Promise.all([this.api.task(run, sel.ids[0]), this.originNs(s, run)]);
      if (!this.current(v)) return;
      this.details(v, { kind: 'task', task: t, originNs: origin });
      this.patch(v, {
        task: t, summaryOp: t.op_type || null,
        mapping: { nodes: t.node ? [t.node.id] : [], tasks: sel.ids, opType: null, target: { task: sel.ids[0] } },
      }, true);
    } catch (e) {
      if (!this.current(v)) return;
      this.details(v, { kind: 'error', message: (e as Error).message });
      this.patch(v, {}, true);
    }
  }

  private async opType(s: AppState, v: number, op: string): Promise<void> {
    const run = s.panes[0].run;
    // The graph's part (its nodes highlighted) is the search the reducer set for it.
    this.patch(v, { mapping: { nodes: [], tasks: [], opType: op, target: null }, opFilter: op, summaryOp: op });
    const summary: SummaryJson | null = await this.api.summary(run).catch(() => null);
    if (!this.current(v)) return;
    this.details(v, { kind: 'op_type', opType: op, row: summary?.op_types.find((o) => o.op_type === op) ?? null });
    this.patch(v, {}, true);
  }

  private async finding(s: AppState, v: number, sel: Extract<Selection, { kind: 'finding' }>): Promise<void> {
    const run = s.panes[0].run;
    this.patch(v, { summaryFinding: sel.index });
    let { nodes, tasks } = sel;
    const analyses = await this.api.analyses(run).catch(() => null);
    if (!this.current(v)) return;
    const f = analyses?.findings?.[sel.index];
    if (!nodes.length && !tasks.length) {
      // A link names the finding by its index: its evidence comes from the run's analyses.
      if (!f) {
        this.details(v, { kind: 'error', message: `no finding ${sel.index} in this run's analyses` });
        this.patch(v, {}, true);
        return;
      }
      nodes = findingIds(f.nodes);
      tasks = findingIds(f.tasks);
    }
    if (f) this.details(v, { kind: 'finding', finding: f, nodes: nodes.length, tasks: tasks.length });
    this.patch(v, {
      mapping: { nodes, tasks, opType: null, target: nodes.length ? { node: nodes[0] } : tasks.length ? { task: tasks[0] } : null },
      tasks, focus: tasks.length > 0, graphNodes: nodes,
    }, true);
  }

  private async range(s: AppState, v: number, sel: Extract<Selection, { kind: 'range' }>, source: SelectionSource): Promise<void> {
    const run = s.panes[0].run;
    // A range opened from a link or from the cluster view (a rank's step): the timeline zooms to it
    // (one drawn there is in view already).
    this.patch(v, { zoomTo: source === 'url' || source === 'cluster' ? { startNs: sel.startNs, endNs: sel.endNs } : null });
    let summary: SummaryJson | null = null;
    try {
      summary = await this.api.summaryRange(run, sel.startNs, sel.endNs, s.clock);
    } catch (e) {
      if (this.current(v)) this.dispatch({ type: 'banner', message: `range summary: ${(e as Error).message}` });
    }
    const origin = await this.originNs(s, run);
    if (!this.current(v)) return;
    if (summary) {
      this.details(v, { kind: 'range', summary, startNs: sel.startNs, endNs: sel.endNs, originNs: origin });
      this.patch(v, { rangeSummary: summary });
    }
    this.patch(v, {}, true);
  }
}
