// The header's controls of the UI state: run picker, graph level, grouping,
// colour mode, lineage, compare; the status line (the graph view's size of
// the main pane and renderer); the banner over the graph. Each control
// dispatches its action and shows the state's value.

import type { Grouping } from '../rpc/api';
import { compareColourTarget, diffKey, graphDiffPair, type AppState, type ColorMode } from '../core/state';
import type { StoreApi } from '../core/store';
import { byId, el } from '../widgets/dom';

export function mountToolbar(store: StoreApi): void {
  const run = byId<HTMLSelectElement>('run');
  const grouping = byId<HTMLSelectElement>('grouping');
  const color = byId<HTMLSelectElement>('color-by');
  const lineage = byId<HTMLInputElement>('lineage');
  const compare = byId('compare');
  run.addEventListener('change', () => store.dispatch({ type: 'setRun', run: parseInt(run.value, 10) }));
  grouping.addEventListener('change', () => store.dispatch({ type: 'setGrouping', grouping: grouping.value as Grouping }));
  color.addEventListener('change', () => store.dispatch({ type: 'setColor', color: color.value as ColorMode }));
  lineage.addEventListener('change', () => store.dispatch({ type: 'setLineage', on: lineage.checked }));
  compare.addEventListener('click', () => store.dispatch({ type: 'setCompare', on: !store.state.comparing }));

  const render = (s: AppState, prev: AppState | null): void => {
    const main = s.panes[0];
    if (!prev || s.runs !== prev.runs) {
      run.textContent = '';
      for (const r of s.runs) {
        // What the run is, when it is not a graph with a trace.
        const what = r.error ? ' — could not be opened' : !r.levels.length ? ' — trace only, no graph' : '';
        const o = el('option', undefined, `${r.id}: ${r.name}${what}`);
        o.value = String(r.id);
        run.append(o);
      }
    }
    if (!prev || s.runs !== prev.runs || main.run !== prev.panes[0].run || main.level !== prev.panes[0].level) {
      const root = byId('levels');
      root.textContent = '';
      for (const lv of s.runs[main.run]?.levels ?? []) {
        const b = el('button', lv === main.level ? 'active' : undefined, lv);
        b.dataset.level = lv;
        b.addEventListener('click', () => store.dispatch({ type: 'setLevel', pane: 0, level: lv }));
        root.append(b);
      }
      // The level buttons scroll sideways when the header is short of room.
      root.querySelector('.active')?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    }
    if (s.runs.length) run.value = String(main.run);
    grouping.value = main.grouping;
    color.value = s.color;
    // "time vs compare run" needs a compare run: disabled with the reason.
    const cmpOption = color.querySelector<HTMLOptionElement>('option[value="compare"]');
    if (cmpOption) {
      const t = compareColourTarget(s, main);
      cmpOption.disabled = t.run === null && s.color !== 'compare';
      cmpOption.title = t.reason ?? `colour each node by its time change against run ${t.run}`;
      cmpOption.textContent = t.run === null ? 'time vs compare run (none)' : `time vs run ${t.run}`;
    }
    // "diff" needs compare mode (left pane = base, right pane = new run).
    const diffOption = color.querySelector<HTMLOptionElement>('option[value="diff"]');
    if (diffOption) {
      const pair = graphDiffPair(s);
      diffOption.disabled = !('base' in pair) && s.color !== 'diff';
      if ('base' in pair) {
        const entry = s.diffs[diffKey(pair.base, pair.next)];
        const what = pair.base === pair.next ? `run ${pair.base}: framework → compiled` : `run ${pair.base} → run ${pair.next}`;
        diffOption.textContent = `diff (${what})${entry?.status === 'loading' ? ' …' : ''}`;
        diffOption.title = `colour added / removed / changed / renamed nodes and time changes beyond the noise (${what})`;
      } else {
        diffOption.textContent = 'diff (needs Compare)';
        diffOption.title = pair.reason;
      }
    }
    lineage.checked = s.lineage;
    compare.classList.toggle('active', s.comparing);
    if (!prev || s.graph.statusLine !== prev.graph.statusLine) byId('status').textContent = s.graph.statusLine;
    if (!prev || s.banner !== prev.banner) {
      const b = byId('banner');
      b.hidden = !s.banner;
      b.textContent = s.banner ?? '';
    }
  };
  store.subscribe(render);
  render(store.state, null);
}
