// The graph's right-click menu on a node: add or remove a probe on it (the
// run's re-run settings, state.probeSettings) and re-run the model with the
// probes set (action startRerun; the probe controller runs it and the
// probe panel shows its progress). Only offered when the server says the
// run can re-run (GET .../probes/run): otherwise the menu says why.

import type { ApiClient } from '../../rpc/api';
import { probeNodeName, probeSettingsOf, type Action, type AppState } from '../../core/state';
import { el } from '../../widgets/dom';

export interface NodeMenuHost {
  readonly api: ApiClient;
  state(): AppState;
  dispatch(a: Action): void;
}

export class NodeMenu {
  readonly root: HTMLDivElement;
  /** What the menu shows: the node and its run / level (tests read it). */
  target: { run: number; level: string; id: number; name: string | null } | null = null;

  constructor(private readonly host: NodeMenuHost) {
    this.root = el('div', 'node-menu');
    this.root.id = 'node-menu';
    this.root.setAttribute('role', 'menu');
    this.root.hidden = true;
    document.body.append(this.root);
    const close = (e: Event): void => {
      if (this.root.hidden || (e.target instanceof Node && this.root.contains(e.target))) return;
      this.close();
    };
    document.addEventListener('pointerdown', close, true);
    document.addEventListener('keydown', (e) => { if (e.key === 'Escape') this.close(); });
  }

  close(): void {
    this.root.hidden = true;
    this.target = null;
  }

  /** Opens the menu for node `id` of run `run`'s level at page point (x, y). */
  async open(run: number, level: string, id: number, x: number, y: number): Promise<void> {
    const root = this.root;
    root.textContent = '';
    root.style.left = `${Math.round(x)}px`;
    root.style.top = `${Math.round(y)}px`;
    root.hidden = false;
    const target = { run, level, id, name: null as string | null };
    this.target = target;
    root.append(el('div', 'muted', 'loading…'));
    const [node, rerun] = await Promise.all([
      this.host.api.node(run, level, id).catch(() => null),
      this.host.api.rerunState(run).catch((e: Error) => ({ runnable: false, reason: e.message, inputs: [] as string[] })),
    ]);
    if (this.target !== target) return;
    root.textContent = '';
    if (!node) {
      root.append(el('div', 'error', `node ${id} could not be read`));
      return;
    }
    target.name = node.name;
    const head = el('div', 'node-menu-head');
    head.append(el('span', 'op-type', node.op_type), ' ', el('span', 'mid', node.name));
    head.title = node.name;
    root.append(head);
    const settings = probeSettingsOf(this.host.state(), run);
    const probed = settings.probes.some((p) => p === node.name || probeNodeName(p) === node.name);
    const item = (text: string, title: string, act: (() => void) | null, id?: string): HTMLButtonElement => {
      const b = el('button', undefined, text);
      b.type = 'button';
      b.title = title;
      b.setAttribute('role', 'menuitem');
      if (id) b.dataset.action = id;
      if (act) b.addEventListener('click', () => { this.close(); act(); });
      else b.disabled = true;
      root.append(b);
      return b;
    };
    const dispatchProbes = (probes: string[]): void => this.host.dispatch({ type: 'setProbeSettings', run, settings: { probes } });
    const added = [...settings.probes.filter((p) => p !== node.name), node.name];
    const removed = settings.probes.filter((p) => p !== node.name && probeNodeName(p) !== node.name);
    if (probed) item('Remove probe', 'take this node out of the probes of the next re-run', () => dispatchProbes(removed), 'remove');
    else item('Add probe', 'probe this node\'s outputs in the next re-run', () => dispatchProbes(added), 'add');
    const runnable = 'runnable' in rerun && rerun.runnable;
    const why = 'reason' in rerun && rerun.reason ? rerun.reason : '';
    const start = (probes: string[]): void => {
      const st = probeSettingsOf(this.host.state(), run);
      this.host.dispatch({ type: 'setProbeSettings', run, settings: { probes } });
      this.host.dispatch({ type: 'startRerun', run, request: { probes, triggers: st.triggers, keep: st.keep, input: st.input } });
    };
    const next = probed ? removed : added;
    item(`${probed ? 'Remove' : 'Add'} probe and re-run (${next.length} probe${next.length === 1 ? '' : 's'})`,
      runnable ? 'run the model again on the chosen input with these probes (ONNX Runtime); the new run joins the last 10' : why,
      runnable && next.length ? () => start(next) : null, probed ? 'remove-rerun' : 'add-rerun');
    if (!runnable && why) root.append(el('div', 'muted node-menu-note', why));
  }
}
