// The summary tab: mounts SummaryView (summary_view.ts) for the main pane's
// run as soon as the run is known (whatever tab shows: links to findings
// read its analyses), marks the op type and finding of the resolved
// selection, shows a selected range's summary, and dispatches the
// selections its rows, bars and findings make and the critical path's
// "show".

import { findingIds } from '../../rpc/api';
import type { Action, AppState } from '../../core/state';
import { runUsable } from '../../core/state';
import type { ViewContext, ViewInstance, ViewMount, ViewPlugin } from '../../core/view';
import { SummaryView } from './summary_view';

export const summaryView: ViewPlugin = {
  id: 'summary',
  title: 'Summary',
  slot: 'bottom',
  create: (ctx, mount) => new SummaryTab(ctx, mount),
};

class SummaryTab implements ViewInstance {
  private readonly view: SummaryView;
  private run = -1;
  private opened = false;
  /** The run whose summary and critical path are in. */
  private loadedRun = -1;
  /** What was last handed to the view. */
  private shown = { op: '', finding: -2, range: null as unknown, path: false };

  constructor(private readonly ctx: ViewContext, mount: ViewMount) {
    const dispatch = (a: Action): void => ctx.store.dispatch(a);
    this.view = new SummaryView(mount.root, {
      api: ctx.api,
      selectOpType: (op) => dispatch({ type: 'select', selection: { kind: 'op_type', opType: op }, source: 'summary' }),
      selectFinding: (index, f) => dispatch({
        type: 'select', selection: { kind: 'finding', index, nodes: findingIds(f.nodes), tasks: findingIds(f.tasks), label: f.message }, source: 'summary',
      }),
      showCriticalPath: (cp) => dispatch({ type: 'setCriticalPath', path: cp ? { tasks: cp.tasks, nodes: cp.nodes } : null }),
      clearRange: () => {
        if (ctx.store.state.selection?.kind === 'range') dispatch({ type: 'select', selection: null, source: 'summary' });
      },
      error: (m) => dispatch({ type: 'banner', message: m }),
    });
    ctx.store.subscribe((s) => this.onState(s));
    this.onState(ctx.store.state);
  }

  debugHandle(): unknown { return this.view; }

  private onState(s: AppState): void {
    if (s.status !== 'ready' || !runUsable(s, s.panes[0].run)) return; // a run that could not be opened: nothing to ask
    const run = s.panes[0].run;
    if (run !== this.run) void this.open(run, s);
    if (this.opened) this.sync(s);
  }

  private async open(run: number, s: AppState): Promise<void> {
    this.run = run;
    this.loadedRun = -1;
    this.opened = false;
    // Times in the range header count from the trace's start.
    const origin = s.runs[run]?.has_trace ? (await this.ctx.api.timeline(run).catch(() => null))?.start_ns ?? 0 : 0;
    if (run !== this.run) return;
    const loaded = this.view.open(run, origin);
    this.opened = true;
    void loaded.then(() => { if (run === this.run) { this.loadedRun = run; this.drawAskedPath(); } });
    this.shown = { op: '', finding: -2, range: null, path: false };
    this.sync(this.ctx.store.state);
  }

  /**
   * A link with cpath=1 (or an edited hash): draws the run's critical path
   * once the summary has it; a run without one drops the ask.
   */
  private drawAskedPath(): void {
    const st = this.ctx.store.state;
    if (!st.criticalPathOn || st.criticalPath || this.loadedRun !== this.run) return;
    const cp = this.view.path();
    this.ctx.store.dispatch({ type: 'setCriticalPath', path: cp ? { tasks: cp.tasks, nodes: cp.nodes } : null });
  }

  private sync(s: AppState): void {
    this.drawAskedPath();
    const r = s.resolved, sel = s.selection, was = this.shown;
    if ((r.summaryOp ?? '') !== was.op || r.summaryFinding !== was.finding) {
      this.view.setSelection(r.summaryOp, r.summaryFinding);
      was.op = r.summaryOp ?? '';
      was.finding = r.summaryFinding;
    }
    const range = sel?.kind === 'range' && r.rangeSummary ? r.rangeSummary : null;
    if (range !== was.range) {
      was.range = range;
      if (range && sel?.kind === 'range') this.view.showRange(range, sel.startNs, sel.endNs, s.clock);
      else this.view.clearRange();
    }
    if ((s.criticalPath !== null) !== was.path) {
      was.path = s.criticalPath !== null;
      this.view.setPathShown(was.path);
    }
  }
}
