// The analyses tab: the generic view of every registered analysis
// (analyses_view.ts), opened for the main pane's run when its tab first
// shows (and again when the run changes); a task id in its tables selects
// that task everywhere.

import type { AppState } from '../../core/state';
import { runUsable } from '../../core/state';
import type { ViewContext, ViewInstance, ViewMount, ViewPlugin } from '../../core/view';
import { AnalysesView } from './analyses_view';

export const analysesView: ViewPlugin = {
  id: 'analyses',
  title: 'Analyses',
  slot: 'bottom',
  create: (ctx, mount) => new AnalysesTab(ctx, mount),
};

class AnalysesTab implements ViewInstance {
  private readonly view: AnalysesView;
  private run = -1;

  constructor(ctx: ViewContext, mount: ViewMount) {
    this.view = new AnalysesView(mount.root, mount.tools, {
      api: ctx.api,
      selectTask: (id) => ctx.store.dispatch({ type: 'select', selection: { kind: 'task', ids: [id] }, source: 'analyses' }),
    });
    ctx.store.subscribe((s) => this.onState(s));
    this.onState(ctx.store.state);
  }

  resize(): void { this.view.resize(); }

  debugHandle(): unknown { return this.view; }

  private onState(s: AppState): void {
    if (s.status !== 'ready' || !runUsable(s, s.panes[0].run)) return; // a run that could not be opened: nothing to ask
    // Opened lazily: the first time its tab shows for this run.
    if (s.tab === 'analyses' && s.panes[0].run !== this.run) {
      this.run = s.panes[0].run;
      void this.view.open(this.run);
    }
  }
}
