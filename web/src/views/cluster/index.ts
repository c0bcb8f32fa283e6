// The cluster tab: shown when the server holds a cluster of ranks
// (`model-inspector open DIR` on a distributed job's profiles; main.ts
// offers the tab and makes it the first screen). It draws the report
// (cluster_view.ts) and connects it to the rest of the UI through the
// store:
// - a heat map cell opens that rank as a run (POST /api/cluster/ranks),
//   makes it the main run and selects the step's time range with the
//   source 'cluster', so the timeline zooms to the step and the details
//   show the step's summary;
// - a collective opens (or reuses) the run of its ranks (at most
//   kMaxCollectiveRanks of them: the last to arrive and the earliest) and
//   selects its device tasks on every rank of that run. Tasks are matched
//   by name and time, not by the report's task ids (those are ids in a run
//   of that rank alone; a run of several ranks numbers its tasks anew):
//   the device tasks whose name holds the collective's name and that
//   overlap one of its ranks' [arrival, end] windows (clock raw: the
//   report's times are each rank's own epoch clock, as the run's raw clock
//   is). The selection controller then shows the first task with its node
//   or launching host op, and the timeline highlights them all.

import type { AppState } from '../../core/state';
import type { ViewContext, ViewInstance, ViewMount, ViewPlugin } from '../../core/view';
import type { ClusterCollectiveJson, ClusterStepJson } from '../../rpc/api';
import { el } from '../../widgets/dom';
import { ClusterView } from './cluster_view';

export const clusterView: ViewPlugin = {
  id: 'cluster',
  title: 'Cluster',
  slot: 'bottom',
  create: (ctx, mount) => new ClusterTab(ctx, mount),
};

/** Ranks of a collective opened together: each brings its full events. */
export const kMaxCollectiveRanks = 8;
/** Margin around a collective's window when its tasks are looked up (the report's times are doubles in JS). */
const kMarginNs = 1000;

/** The ranks of a collective to open: all when few, else the last to arrive and the earliest arrivals. */
export function collectiveRanksToOpen(c: ClusterCollectiveJson, max = kMaxCollectiveRanks): number[] {
  const byArrival = c.ranks.slice().sort((a, b) => a.start_ns - b.start_ns || a.rank - b.rank).map((r) => r.rank);
  if (byArrival.length <= max) return byArrival.sort((a, b) => a - b);
  const last = c.last_rank ?? byArrival[byArrival.length - 1];
  const pick = [last, ...byArrival.filter((r) => r !== last).slice(0, max - 1)];
  return pick.sort((a, b) => a - b);
}

class ClusterTab implements ViewInstance {
  private view: ClusterView | null = null;

  constructor(private readonly ctx: ViewContext, private readonly mount: ViewMount) {
    mount.root.append(el('div', 'tab-message', 'no cluster: open a directory with the profiles of two or more ranks (model-inspector open DIR)'));
    let asked = false;
    // Asked once the page knows its runs (main.ts asks the server for the cluster then too: one answer, cached).
    const ask = (s: AppState): void => {
      if (asked || s.status !== 'ready') return;
      asked = true;
      void this.load();
    };
    ctx.store.subscribe((s) => ask(s));
    ask(ctx.store.state);
  }

  private async load(): Promise<void> {
    const report = await this.ctx.api.cluster().catch((e: Error) => {
      this.ctx.store.dispatch({ type: 'banner', message: `cluster: ${e.message}` });
      return null;
    });
    if (!report) return;
    this.view = new ClusterView(this.mount.root, this.mount.tools, report, {
      openRankStep: (rank, step) => this.openRankStep(rank, step),
      collective: (index) => this.ctx.api.clusterCollective(index),
      selectCollective: (c) => this.selectCollective(c),
    }, this.ctx.stats);
    this.view.draw();
  }

  /** Opens `ranks` as a run (or finds it) and makes it the main run. */
  private async openRun(ranks: number[]): Promise<number> {
    const api = this.ctx.api, store = this.ctx.store;
    const opened = await api.clusterRanks(ranks);
    if (opened.created || !store.state.runs[opened.run]) store.dispatch({ type: 'runsLoaded', runs: await api.runs() });
    store.dispatch({ type: 'setRun', run: opened.run });
    return opened.run;
  }

  private async openRankStep(rank: number, step: ClusterStepJson): Promise<void> {
    const r = step.ranks.find((x) => x.rank === rank);
    if (!r) throw new Error(`rank ${rank} has no figures in ${step.label}`);
    await this.openRun([rank]);
    const store = this.ctx.store;
    store.dispatch({ type: 'setTab', tab: 'timeline' });
    store.dispatch({ type: 'select', selection: { kind: 'range', startNs: r.start_ns, endNs: r.start_ns + Math.max(1, r.wall_ns), tracks: [] }, source: 'cluster' });
  }

  private async selectCollective(c: ClusterCollectiveJson): Promise<void> {
    const ranks = collectiveRanksToOpen(c);
    const run = await this.openRun(ranks);
    const api = this.ctx.api;
    const meta = await api.timeline(run);
    const device = meta.tracks.filter((t) => t.kind === 'device_stream').map((t) => t.id);
    const parts = c.ranks.filter((r) => ranks.includes(r.rank));
    const start = Math.min(...parts.map((p) => p.start_ns)) - kMarginNs, end = Math.max(...parts.map((p) => p.end_ns)) + kMarginNs;
    const items = await api.windowTasks(run, start, end, c.name, device);
    const inWindow = (i: { start_ns: number; end_ns: number }): boolean =>
      parts.some((p) => i.start_ns < p.end_ns + kMarginNs && i.end_ns > p.start_ns - kMarginNs);
    const ids = [...new Set(items.filter((i) => i.task !== null && inWindow(i)).map((i) => i.task as number))];
    if (!ids.length) throw new Error(`no device task named ${c.name} in the run of ranks ${ranks.join(', ')} at the collective's time`);
    this.ctx.store.dispatch({ type: 'select', selection: { kind: 'task', ids }, source: 'cluster' });
  }

  resize(): void { this.view?.resize(); }

  debugHandle(): unknown { return this.view; }
}
