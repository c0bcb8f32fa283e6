// The timeline tab: mounts TimelineView (timeline_view.ts) for the main
// pane's run, keeps it in step with the store (clock, compare run and
// alignment, the resolved selection's tasks, the op-type filter an op-type
// selection sets, the lineage or critical path overlay, a range opened from
// a link) and dispatches what the user does in it (a task click, an area
// selection, the toolbar's clock, a track pinned or unpinned: the URL's
// pin=). Its tools in the bottom bar: compare with another run (never the
// run on screen), alignment, zoom to the selection. With a compare run, the
// diff of the main run against it marks what got slower (diff_marks.ts).

import type { DiffReportJson } from '../../rpc/api';
import type { Action, AppState } from '../../core/state';
import { diffKey, runUsable, timelineDiffPair } from '../../core/state';
import { fmtPct, kMaxSlowerNodes, slowerLabels, slowerNodes } from './diff_marks';
import type { ViewContext, ViewInstance, ViewMount, ViewPlugin } from '../../core/view';
import { el } from '../../widgets/dom';
import { TimelineView } from './timeline_view';

export const timelineView: ViewPlugin = {
  id: 'timeline',
  title: 'Timeline',
  slot: 'bottom',
  create: (ctx, mount) => new TimelineTab(ctx, mount),
};

class TimelineTab implements ViewInstance {
  private view: TimelineView | null = null;
  /** The run the view was opened for (-1: none yet). */
  private run = -1;
  private opened = false;
  private openSeq = 0;
  private readonly compareSel: HTMLSelectElement;
  private readonly alignSel: HTMLSelectElement;
  /** What was last handed to the view (so each part is applied once, and again after a reopen). */
  private applied: { compare: string; tasks: number[] | null; path: number[] | null; opFilter: string | null; zoom: unknown; diff: unknown } =
    { compare: '', tasks: null, path: null, opFilter: null, zoom: null, diff: null };

  constructor(private readonly ctx: ViewContext, private readonly mount: ViewMount) {
    const tools = mount.tools;
    const label = el('label', undefined, 'compare ');
    label.title = 'draw a second run\'s timeline below, on a shared axis';
    this.compareSel = el('select');
    this.compareSel.id = 'tl-compare';
    label.append(this.compareSel);
    this.alignSel = el('select');
    this.alignSel.id = 'tl-align';
    this.alignSel.title = 'how the compared run is aligned: both starts at 0, or their first runs (iterations) at 0';
    for (const [v, t] of [['start', 'align starts'], ['first_run', 'align first runs']]) {
      const o = el('option', undefined, t);
      o.value = v;
      this.alignSel.append(o);
    }
    const zoom = el('button', undefined, 'zoom to selection');
    zoom.id = 'tl-zoom-sel';
    zoom.title = 'zoom to the selected tasks';
    tools.append(label, this.alignSel, zoom);
    this.compareSel.addEventListener('change', () => {
      const v = this.compareSel.value;
      this.dispatch({ type: 'setTimelineCompare', run: v === '' ? null : parseInt(v, 10) });
    });
    this.alignSel.addEventListener('change', () => {
      this.dispatch({ type: 'setTimelineCompare', run: this.ctx.store.state.timelineCompare, align: this.alignSel.value === 'first_run' ? 'first_run' : 'start' });
    });
    zoom.addEventListener('click', () => this.view?.zoomToSelection());
    ctx.store.subscribe((s, prev) => this.onState(s, prev));
    this.onState(ctx.store.state, null);
  }

  private dispatch(a: Action): void { this.ctx.store.dispatch(a); }

  resize(): void { this.view?.resize(); }

  debugHandle(): unknown { return this.view; }

  private onState(s: AppState, prev: AppState | null): void {
    if (!prev || s.runs !== prev.runs || s.panes[0].run !== prev.panes[0].run) this.fillCompareRuns(s);
    if (!prev || s.timelineCompare !== prev.timelineCompare) this.compareSel.value = s.timelineCompare !== null ? String(s.timelineCompare) : '';
    if (!prev || s.align !== prev.align) this.alignSel.value = s.align;
    if (s.status !== 'ready' || !runUsable(s, s.panes[0].run)) return; // a run that could not be opened: nothing to ask
    const run = s.panes[0].run;
    if (run !== this.run) void this.open(s, run);
    if (this.opened) this.sync(s);
  }

  private fillCompareRuns(s: AppState): void {
    const sel = this.compareSel;
    sel.textContent = '';
    const none = el('option', undefined, 'none');
    none.value = '';
    sel.append(none);
    // Never the run on screen: comparing a run with itself shows nothing new.
    const current = s.panes[0].run;
    let offered = 0;
    for (const r of s.runs) {
      if (!r.has_trace || r.id === current) continue;
      offered++;
      const o = el('option', undefined, `${r.id}: ${r.name}`);
      o.value = String(r.id);
      sel.append(o);
    }
    sel.value = s.timelineCompare !== null && s.timelineCompare !== current ? String(s.timelineCompare) : '';
    sel.disabled = offered === 0;
    sel.title = offered === 0 ? 'no other run with a trace is open (open two runs to compare their timelines)' : 'draw a second run\'s timeline below';
  }

  /** Opens run `run` (a message instead when it has no trace). */
  private async open(s: AppState, run: number): Promise<void> {
    // Pins name tracks of the run they were made on: another run drops them
    // (a link's pins apply to the run it opens).
    if (this.run !== -1 && this.run !== run && s.timelinePins.length) this.dispatch({ type: 'setTimelinePins', pins: [] });
    this.run = run;
    this.opened = false;
    const seq = ++this.openSeq;
    const root = this.mount.root;
    if (!s.runs[run]?.has_trace) {
      this.view?.destroy();
      this.view = null;
      root.textContent = '';
      root.append(el('div', 'tab-message', `run ${run} has no trace: nothing to show on a timeline. Open a run with a profile ` +
        '(e.g. model-inspector open MODEL PROFILE) for the timeline, mapping times and summary.'));
      return;
    }
    if (!this.view) {
      root.textContent = '';
      this.view = new TimelineView(root, {
        taskClicked: (taskId) => this.dispatch({ type: 'select', selection: { kind: 'task', ids: [taskId] }, source: 'timeline' }),
        rangeSelected: (startNs, endNs, tracks) => this.dispatch({ type: 'select', selection: { kind: 'range', startNs, endNs, tracks }, source: 'timeline' }),
        rangeCleared: () => {
          if (this.ctx.store.state.selection?.kind === 'range') this.dispatch({ type: 'select', selection: null, source: 'timeline' });
        },
        clockChanged: (clock) => this.dispatch({ type: 'setClock', clock }),
        pinsChanged: (pins) => this.dispatch({ type: 'setTimelinePins', pins }),
      }, { forceCanvas2d: this.ctx.options.forceCanvas2d, stats: this.ctx.stats });
    }
    const view = this.view;
    this.applied = { compare: '', tasks: null, path: null, opFilter: null, zoom: null, diff: null };
    // The clock first, so the first window is already in it.
    if (view.state.clock !== s.clock) view.setClock(s.clock);
    view.setPins(this.ctx.store.state.timelinePins);
    try {
      await view.open(run);
    } catch (e) {
      if (seq === this.openSeq) this.dispatch({ type: 'banner', message: `timeline: ${(e as Error).message}` });
      return;
    }
    if (seq !== this.openSeq) return;
    this.opened = true;
    this.ctx.stats.set('timeline.run', run);
    this.sync(this.ctx.store.state);
  }

  private slowerSeq = 0;
  /**
   * Outlines the compared run's tasks of the nodes the diff found slower
   * (the most slowed first, at most kMaxSlowerNodes nodes; their tasks from
   * GET /tasks?node= of that run).
   */
  private async markSlowerNodes(run: number, report: DiffReportJson): Promise<void> {
    const seq = ++this.slowerSeq;
    const nodes = slowerNodes(report).slice(0, kMaxSlowerNodes);
    const lists = await Promise.all(nodes.map((d) => this.ctx.api.nodeTasks(run, d.new_node_id!).then((t) => t.tasks, () => [] as number[])));
    if (seq !== this.slowerSeq || !this.view) return;
    this.view.setSlowerTasks([...new Set(lists.flat())]);
  }

  /** Hands the view what changed in the state since it was last told. */
  private sync(s: AppState): void {
    const view = this.view;
    if (!view) return;
    const a = this.applied;
    if (view.state.clock !== s.clock) view.setClock(s.clock);
    view.setPins(s.timelinePins);
    const cmp = s.timelineCompare;
    const valid = cmp !== null && cmp !== this.run && !!s.runs[cmp]?.has_trace;
    const compareKey = valid ? `${cmp}:${s.align}` : '';
    if (compareKey !== a.compare) {
      const was = a.compare;
      a.compare = compareKey;
      if (valid || was) view.setCompareRun(valid ? cmp : null, s.align);
    }
    // Compare marks: the op types the diff of the main run against the
    // compare run found slower (the diff controller asks for it).
    const pair = valid ? timelineDiffPair(s) : null;
    const entry = pair ? s.diffs[diffKey(pair.base, pair.next)] ?? null : null;
    if (entry !== a.diff) {
      a.diff = entry;
      view.setSlowerTasks([]);
      if (!entry) view.setSlower(null);
      else if (entry.status === 'loading') view.setSlower({ labels: [], note: `diff of run ${entry.base} → run ${entry.next}…` });
      else if (entry.status === 'error' || !entry.report) view.setSlower({ labels: [], note: `diff: ${entry.error ?? 'no answer'}` });
      else {
        const slower = slowerLabels(entry.report);
        const total = entry.report.timing?.total;
        const head = total ? `total ${fmtPct(total.delta_pct)} (${total.verdict})` : 'no timing in the diff';
        void this.markSlowerNodes(entry.next, entry.report);
        view.setSlower({
          labels: slower.map((d) => d.key),
          note: slower.length
            ? `${head} · slower in run ${entry.next}: ${slower.slice(0, 4).map((d) => `${d.key} ${fmtPct(d.delta_pct)}`).join(', ')}${slower.length > 4 ? ` +${slower.length - 4}` : ''}`
            : `${head} · no op type slower beyond the noise`,
        });
      }
    }
    const r = s.resolved;
    // The op-type filter of an op-type selection (cleared with it).
    if (r.opFilter !== a.opFilter) {
      const was = a.opFilter;
      a.opFilter = r.opFilter;
      if (r.opFilter !== null) view.setFilter({ opTypes: [r.opFilter] });
      else if (was !== null) view.setFilter({});
    }
    if (r.tasks !== a.tasks) {
      a.tasks = r.tasks;
      const e = r.extent;
      view.highlightTasks(r.tasks, r.focus ? { focus: true, startNs: e?.startNs, endNs: e?.endNs } : undefined);
    }
    // The lineage's dependency paths, else the critical path while it is shown.
    const path = r.lineageTasks.length ? r.lineageTasks : s.criticalPath?.tasks ?? null;
    if (path !== a.path) {
      a.path = path;
      view.setPath(path);
    }
    if (r.zoomTo !== a.zoom) {
      a.zoom = r.zoomTo;
      if (r.zoomTo) view.zoomTo(r.zoomTo.startNs, r.zoomTo.endNs);
    }
  }
}
