// The Training tab: a training snapshot's diagnosis and captured tensors
// (training_view.ts). Offered once the server has a training snapshot
// among its runs (main.ts shows the tab then); opened for the main pane's
// run when its tab shows (and again when that run changes).

import type { AppState } from '../../core/state';
import type { ViewContext, ViewInstance, ViewMount, ViewPlugin } from '../../core/view';
import { el } from '../../widgets/dom';
import { trainingRun, TrainingView } from './training_view';

export const trainingView: ViewPlugin = {
  id: 'training',
  title: 'Training',
  slot: 'bottom',
  create: (ctx, mount) => new TrainingTab(ctx, mount),
};

class TrainingTab implements ViewInstance {
  private readonly view: TrainingView;
  private run = -1;

  constructor(ctx: ViewContext, private readonly mount: ViewMount) {
    this.view = new TrainingView(ctx, mount.root, mount.tools);
    ctx.store.subscribe((s) => this.onState(s));
    this.onState(ctx.store.state);
  }

  resize(): void { this.view.resize(); }

  debugHandle(): unknown { return this.view; }

  private onState(s: AppState): void {
    if (s.status !== 'ready' || s.tab !== 'training') return;
    const run = s.panes[0].run;
    if (run === this.run) return;
    this.run = run;
    if (trainingRun(s, run)) {
      this.view.open(run);
    } else {
      this.mount.root.textContent = '';
      this.mount.root.append(el('div', 'tab-message', `run ${run} is not a training snapshot (open a snapshot written by model_inspector.train or \`model-inspector trace\`)`));
    }
  }
}
