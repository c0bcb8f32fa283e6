// The side panel's Probes section, for the main pane's run and level: what
// the probe store holds (runs kept, the latest), the statistic the graph is
// coloured by ("colour by probe"), the marked nodes (first NaN / Inf
// producer, first divergent) as links, and the re-run: the probes set (the
// graph's right-click menu adds and removes them), triggers, what to keep,
// the model input, the Run button, and the job's progress and errors.

import type { ApiClient } from '../rpc/api';
import { colourStats, firstNanNode, type RerunStateJson } from '../rpc/probe_api';
import { mainRun, probeKey, probeSettingsOf, type AppState } from '../core/state';
import type { StoreApi } from '../core/store';
import { el, midName } from '../widgets/dom';

/** Labels of the colour statistics (others show as they are named). */
const kStatLabels: Record<string, string> = {
  nan: 'NaN count', pos_inf: '+Inf count', neg_inf: '−Inf count', zero: 'zero count', zero_fraction: 'zero fraction', nan_fraction: 'NaN fraction',
  inf_count: 'Inf count', mean: 'mean', std: 'std', min: 'min', max: 'max', l2: 'L2 norm', abs_max: 'largest |x|', count: 'elements',
};

export class ProbePanel {
  private readonly status = el('div', 'probe-status');
  private readonly stat = el('select');
  private readonly marks = el('div', 'probe-marks');
  private readonly rerunBox = el('div', 'rerun');
  /** The main run's re-run state (inputs offered, why it cannot), asked per run and after each re-run. */
  private rerunState: RerunStateJson | null = null;
  private rerunKey = '';

  constructor(private readonly store: StoreApi, private readonly api: ApiClient, private readonly root: HTMLElement) {
    this.stat.id = 'probe-stat';
    this.stat.title = 'colour the graph by this statistic of each node\'s probe in the latest run';
    this.stat.addEventListener('change', () => {
      store.dispatch({ type: 'setProbeStat', stat: this.stat.value });
      store.dispatch({ type: 'setColor', color: 'probe' });
    });
    const colour = el('label', 'probe-colour');
    colour.append('colour by ', this.stat);
    root.append(this.status, colour, this.marks, this.rerunBox);
    store.subscribe((s, prev) => this.render(s, prev));
    this.render(store.state, null);
  }

  private entry(s: AppState) {
    const p = s.panes[0];
    return s.probeData[probeKey(p.run, p.level)];
  }

  private render(s: AppState, prev: AppState | null): void {
    const run = s.panes[0].run;
    const e = this.entry(s);
    const changed = !prev || e !== this.entry(prev) || s.probeStat !== prev.probeStat || s.color !== prev.color;
    if (changed) this.renderStore(s);
    const key = `${run}|${s.probeVersion}|${s.status}`;
    if (key !== this.rerunKey && s.status === 'ready' && mainRun(s) && !mainRun(s)!.error) {
      this.rerunKey = key;
      this.rerunState = null;
      this.api.rerunState(run).then((st) => {
        if (this.rerunKey !== key) return;
        this.rerunState = st;
        this.renderRerun(this.store.state);
      }, () => { /* a server without re-runs: the section says so below */ });
    }
    if (!prev || changed || s.reruns !== prev.reruns || s.probeSettings !== prev.probeSettings || run !== prev.panes[0].run) this.renderRerun(s);
  }

  /** What the store holds, the colour statistic, the marks. */
  private renderStore(s: AppState): void {
    const e = this.entry(s);
    const data = e?.data ?? null;
    this.root.dataset.state = e?.status ?? 'none';
    this.status.textContent = '';
    if (!e || e.status === 'loading') this.status.append(el('span', 'muted', 'reading the probe store…'));
    else if (!data) this.status.append(el('span', 'muted', e.message ?? 'no probe store for this run'));
    else if (data.store === null) this.status.append(el('span', 'muted', 'no probe store in this run\'s directory yet (<run dir>/probes/probes.db): re-run with probes below, or probe from Python (docs/guides/probes.md)'));
    else {
      const runs = data.runs;
      const last = runs[runs.length - 1];
      const nodes = Object.keys(data.nodes).length;
      const what = last ? `latest #${last.id}${last.backend ? ` (${last.backend})` : ''}${last.status && last.status !== 'complete' ? `, ${last.status}${last.stopped_at ? ` at ${last.stopped_at}` : ''}` : ''}` : 'no run yet';
      this.status.append(`${runs.length} run${runs.length === 1 ? '' : 's'} kept · ${what} · ${nodes} node${nodes === 1 ? '' : 's'} probed at this level`);
    }
    const names = colourStats(data);
    if (!names.includes(s.probeStat)) names.unshift(s.probeStat);
    const have = Array.from(this.stat.options).map((o) => o.value).join('|');
    if (have !== names.join('|')) {
      this.stat.textContent = '';
      for (const n of names) {
        const cmp = data?.compare;
        const label = n.startsWith('compare:') ? `${n.slice(8).replace(/_/g, ' ')} (run ${cmp?.run} vs ${cmp?.base})` : kStatLabels[n] ?? n;
        const o = el('option', undefined, label);
        o.value = n;
        this.stat.append(o);
      }
    }
    this.stat.value = s.probeStat;
    this.stat.classList.toggle('active', s.color === 'probe');
    this.marks.textContent = '';
    if (!data) return;
    const mark = (label: string, cls: string, id: number, name: string, extra: string): void => {
      const a = el('a', `node-link probe-mark ${cls}`);
      a.href = '#';
      a.dataset.node = String(id);
      a.append(midName(name));
      a.title = `${name}: ${extra}; click to select`;
      a.addEventListener('click', (ev) => {
        ev.preventDefault();
        const p = this.store.state.panes[0];
        this.store.dispatch({ type: 'select', selection: { kind: 'node', level: p.level, id, run: p.run }, source: 'details' });
      });
      const row = el('div', 'probe-mark-row');
      row.append(el('span', `mark-chip ${cls}`), `${label} `, a, el('span', 'muted', ` ${extra}`));
      this.marks.append(row);
    };
    const nan = firstNanNode(data);
    if (nan) mark('first NaN / Inf', 'mark-nan', nan.id, nan.hit.node, `${nan.hit.trigger}, ${nan.hit.role}${nan.hit.detail ? `: ${nan.hit.detail}` : ''}`);
    const cmp = data.compare;
    const div = cmp?.first_divergent;
    if (cmp && div !== null && div !== undefined) {
      mark('first divergent', 'mark-divergent', div, cmp.first_divergent_node ?? `node ${div}`,
        `run ${cmp.run} against run ${cmp.base}: the first to fail msprobe's rule, in execution order (${cmp.failed} of ${cmp.compared} failed)`);
    }
    if (!this.marks.childElementCount) this.marks.append(el('div', 'muted', 'no NaN or Inf in the latest run'));
  }

  /** The re-run form and the job's progress. */
  private renderRerun(s: AppState): void {
    const box = this.rerunBox;
    box.textContent = '';
    const run = s.panes[0].run;
    const st = this.rerunState;
    box.append(el('h3', undefined, 'Re-run with probes'));
    if (!st) {
      box.append(el('div', 'muted', 'asking the server whether this run can re-run…'));
      return;
    }
    if (!st.runnable) {
      box.append(el('div', 'muted rerun-reason', st.reason ?? 'this run cannot re-run'));
      return;
    }
    const set = probeSettingsOf(s, run);
    const list = el('div', 'probe-list');
    if (!set.probes.length) list.append(el('span', 'muted', 'no probes: right-click a node in the graph → Add probe'));
    for (const p of set.probes) {
      const c = el('span', 'probe-chip');
      c.dataset.probe = p;
      const x = el('button', undefined, '×');
      x.type = 'button';
      x.title = `remove ${p} from the next re-run`;
      x.addEventListener('click', () => this.store.dispatch({ type: 'setProbeSettings', run, settings: { probes: set.probes.filter((q) => q !== p) } }));
      c.append(midName(p), x);
      list.append(c);
    }
    const input = el('select');
    input.id = 'rerun-input';
    const def = el('option', undefined, 'runner\'s input (x[i] = (i mod 7) / 7)');
    def.value = '-1';
    input.append(def);
    st.inputs.forEach((path, i) => {
      const o = el('option', undefined, path.split('/').slice(-2).join('/'));
      o.value = String(i);
      o.title = path;
      input.append(o);
    });
    input.value = String(set.input < st.inputs.length ? set.input : -1);
    input.addEventListener('change', () => this.store.dispatch({ type: 'setProbeSettings', run, settings: { input: parseInt(input.value, 10) } }));
    const triggers = el('input');
    triggers.id = 'rerun-triggers';
    triggers.value = set.triggers.join(', ');
    triggers.placeholder = 'nan, inf, range:-1e4:1e4';
    triggers.title = 'triggers: stop the run at the first tensor that fires and record its producer (docs/guides/probes.md)';
    triggers.addEventListener('change', () => this.store.dispatch({
      type: 'setProbeSettings', run, settings: { triggers: triggers.value.split(',').map((t) => t.trim()).filter(Boolean) },
    }));
    const keep = el('select');
    keep.id = 'rerun-keep';
    for (const k of ['stats', 'tensor']) { const o = el('option', undefined, k === 'stats' ? 'statistics' : 'full tensors'); o.value = k; keep.append(o); }
    keep.value = set.keep;
    keep.addEventListener('change', () => this.store.dispatch({ type: 'setProbeSettings', run, settings: { keep: keep.value as 'stats' | 'tensor' } }));
    const form = el('div', 'rerun-form');
    const lab = (text: string, control: HTMLElement): HTMLLabelElement => { const l = el('label'); l.append(text, ' ', control); return l; };
    form.append(lab('input', input), lab('triggers', triggers), lab('keep', keep));
    const job = s.reruns[run];
    const busy = job?.status === 'starting' || job?.status === 'running';
    const go = el('button', 'rerun-go', busy ? 're-running…' : `Re-run (${set.probes.length} probe${set.probes.length === 1 ? '' : 's'})`);
    go.id = 'rerun-go';
    go.type = 'button';
    go.disabled = busy || !set.probes.length;
    go.title = `python3 -m model_inspector.runner on ${st.model} into ${st.run_dir}`;
    go.addEventListener('click', () => this.store.dispatch({
      type: 'startRerun', run, request: { probes: set.probes, triggers: set.triggers, keep: set.keep, input: set.input },
    }));
    box.append(list, form, go);
    if (job) {
      const out = el('div', `rerun-status rerun-${job.status}`);
      out.id = 'rerun-status';
      out.dataset.status = job.status;
      const j = job.job;
      const line = j?.log.length ? j.log[j.log.length - 1] : '';
      if (job.status === 'starting') out.append('starting the runner…');
      else if (job.status === 'running') out.append(`running · ${j?.lines ?? 0} line(s) of output${line ? `: ${line}` : ''}`);
      else if (job.status === 'complete') out.append(`done in ${((j?.elapsed_ms ?? 0) / 1000).toFixed(1)} s${line ? `: ${line}` : ''}`);
      else {
        out.append(el('div', 'error', job.error ?? 'the re-run failed'));
        if (j?.log.length) out.append(el('pre', 'rerun-log', j.log.slice(-12).join('\n')));
      }
      box.append(out);
    }
  }
}
