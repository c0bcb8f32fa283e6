// The mapping tab: mounts MappingView (mapping_view.ts) for the main
// pane's run when the tab first shows (and again when the run changes),
// marks the rows of the resolved selection and brings its row into sight,
// and dispatches the selections its cells make. The "tasks" cell of a node
// row selects every task of the node, which it asks the server for.

import type { Action, AppState } from '../../core/state';
import { runUsable } from '../../core/state';
import type { ViewContext, ViewInstance, ViewMount, ViewPlugin } from '../../core/view';
import { MappingView } from './mapping_view';

export const mappingView: ViewPlugin = {
  id: 'mapping',
  title: 'Mapping',
  slot: 'bottom',
  create: (ctx, mount) => new MappingTab(ctx, mount),
};

class MappingTab implements ViewInstance {
  private readonly view: MappingView;
  private run = -1;
  private marks: AppState['resolved']['mapping'] | null = null;

  constructor(private readonly ctx: ViewContext, mount: ViewMount) {
    const select = (a: Action): void => ctx.store.dispatch(a);
    this.view = new MappingView(mount.root, {
      api: ctx.api,
      stats: ctx.stats,
      selectNode: (level, id) => select({ type: 'select', selection: { kind: 'node', level, id, run: this.run }, source: 'mapping' }),
      selectNodeTasks: (_level, id) => void this.selectNodeTasks(id),
      selectTasks: (ids) => select({ type: 'select', selection: { kind: 'task', ids }, source: 'mapping' }),
      selectOpType: (op) => select({ type: 'select', selection: { kind: 'op_type', opType: op }, source: 'mapping' }),
      error: (m) => select({ type: 'banner', message: m }),
    });
    ctx.store.subscribe((s) => this.onState(s));
    this.onState(ctx.store.state);
  }

  resize(): void { this.view.resize(); }

  debugHandle(): unknown { return this.view; }

  private onState(s: AppState): void {
    if (s.status !== 'ready' || !runUsable(s, s.panes[0].run)) return; // a run that could not be opened: nothing to ask
    const m = s.resolved.mapping;
    if (m !== this.marks) {
      this.marks = m;
      this.view.setHighlight({ nodes: new Set(m.nodes), tasks: new Set(m.tasks), opType: m.opType }, m.target);
    }
    // Opened lazily: the first time its tab shows for this run.
    if (s.tab === 'mapping' && s.panes[0].run !== this.run) {
      this.run = s.panes[0].run;
      this.view.open(this.run);
    }
  }

  /** Every task of a node (the "tasks" cell of its row). */
  private async selectNodeTasks(node: number): Promise<void> {
    try {
      const r = await this.ctx.api.nodeTasks(this.run, node);
      if (r.tasks.length) this.ctx.store.dispatch({ type: 'select', selection: { kind: 'task', ids: r.tasks }, source: 'mapping' });
    } catch (e) {
      this.ctx.store.dispatch({ type: 'banner', message: `tasks of node ${node}: ${(e as Error).message}` });
    }
  }
}
