// Asks the server for the probe data the UI shows and publishes it in the
// state (`probeData`, action `probeData`): per graph pane on screen, its
// run's level (latest statistics per node, trigger hits, compare metrics),
// asked again when the probe store changed (`probeVersion`: a re-run
// finished). A run without a probe store answers 404 with the server's
// reason: kept as 'none' (the panels say why), not asked again.
//
// And runs the re-runs (action `startRerun`): POST .../probes/run, then the
// job's state polled until it ends; a finished job bumps `probeVersion`.

import type { ApiClient } from '../rpc/api';
import { ApiError } from '../rpc/api';
import { probeKey, visiblePanes, type AppState, type RerunEntry } from './state';
import type { StoreApi } from './store';

/** How often a running re-run's state is asked (ms). */
const kPollMs = 300;

export class ProbeController {
  private readonly asked = new Map<string, number>();
  private readonly started = new Map<number, number>();

  constructor(private readonly store: StoreApi, private readonly api: ApiClient) {
    store.subscribe((s) => this.onState(s));
    this.onState(store.state);
  }

  private onState(s: AppState): void {
    if (s.status !== 'ready') return;
    for (const p of visiblePanes(s)) {
      if (!p.level || !s.runs[p.run] || s.runs[p.run].error) continue;
      const key = probeKey(p.run, p.level);
      if (this.asked.get(key) === s.probeVersion) continue;
      this.asked.set(key, s.probeVersion);
      this.fetch(p.run, p.level, s.probeVersion);
    }
    for (const r of Object.values(s.reruns)) {
      if (r.status === 'starting' && this.started.get(r.run) !== r.seq) {
        this.started.set(r.run, r.seq);
        void this.rerun(r);
      }
    }
  }

  private fetch(run: number, level: string, version: number): void {
    const prev = this.store.state.probeData[probeKey(run, level)];
    // While asking again, the previous answer stays shown.
    this.store.dispatch({ type: 'probeData', entry: { run, level, version, status: prev?.data ? prev.status : 'loading', data: prev?.data ?? null, message: null } });
    this.api.probes(run, level).then(
      async (data) => {
        // With two runs kept or more: the newest against the one before it (colour by compare metric, the first divergent mark).
        if (data.store !== null && data.runs.length >= 2) {
          data = { ...data, compare: await this.api.probeCompare(run, level).catch(() => null) };
        }
        this.store.dispatch({ type: 'probeData', entry: { run, level, version, status: 'ready', data, message: null } });
      },
      (e: unknown) => {
        const message = e instanceof Error ? e.message : String(e);
        const none = e instanceof ApiError && (e.status === 404 || e.status === 501);
        this.store.dispatch({ type: 'probeData', entry: { run, level, version, status: none ? 'none' : 'error', data: null, message } });
      });
  }

  private update(r: RerunEntry, patch: Partial<RerunEntry>): RerunEntry {
    const next = { ...r, ...patch };
    this.store.dispatch({ type: 'rerun', entry: next });
    return next;
  }

  private async rerun(entry: RerunEntry): Promise<void> {
    let r = entry;
    try {
      await this.api.rerun(r.run, r.request);
      r = this.update(r, { status: 'running' });
      for (;;) {
        const st = await this.api.rerunState(r.run);
        const job = st.job;
        if (job && job.state !== 'running') {
          r = this.update(r, { status: job.state === 'complete' ? 'complete' : 'failed', job, error: job.error });
          break;
        }
        r = this.update(r, { job });
        await new Promise((res) => setTimeout(res, kPollMs));
      }
      if (r.status === 'complete') this.store.dispatch({ type: 'probesChanged' });
    } catch (e) {
      this.update(r, { status: 'failed', error: e instanceof Error ? e.message : String(e) });
    }
  }
}
