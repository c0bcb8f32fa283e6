// What the app shell says about the main pane's run when it is not the usual
// graph + trace pair:
//   - a run `open --keep-going` could not open: its error takes the room
//     (which file, where, what was expected), nothing is asked of it;
//   - a run without a graph (a trace alone): the graph pane gives its room
//     to the timeline, mapping and summary, and a note above them offers a
//     graph — the model files next to the trace — as a "Pair with FILE"
//     button (the server opens the model with the trace as a new run, and
//     the page switches to it) and the command that opens them as one run;
//   - a graph and a trace that do not link: a note over the graph says why
//     (the reasons the CLI's summary prints, from GET /links), so nodes
//     shown "not executed" while the timeline shows their op running are
//     explained where the user looks.
// The body classes `no-graph` and `run-failed` lay the page out (style.css).

import type { ApiClient, LinksJson, RunInfo } from '../rpc/api';
import { paneHasGraph, type AppState } from '../core/state';
import type { StoreApi } from '../core/store';
import { byId, el } from '../widgets/dom';

/** A run's error message split into file, place and what was expected. */
export interface ErrorParts { file: string; place: string; what: string; expected: string }

/**
 * Reads "FILE:LINE:COL: WHAT; expected X, found 'Y'", "FILE@byte N: WHAT"
 * or "FILE: WHAT" (CONVENTIONS.md, error messages); what does not match
 * stays whole in `what`.
 */
export function errorParts(message: string): ErrorParts {
  let file = '', place = '', what = message;
  let m = /^(.+?):(\d+)(?::(\d+))?: ([\s\S]*)$/.exec(message);
  if (m) {
    file = m[1];
    place = m[3] ? `line ${m[2]}, column ${m[3]}` : `line ${m[2]}`;
    what = m[4];
  } else if ((m = /^(.+?)@byte (\d+): ([\s\S]*)$/.exec(message))) {
    file = m[1];
    place = `byte ${m[2]}`;
    what = m[3];
  } else if ((m = /^([^\s:][^:]*): ([\s\S]*)$/.exec(message))) {
    file = m[1];
    what = m[2];
  }
  let expected = '';
  const e = /^([\s\S]*?)[;,] (expected [\s\S]*)$/.exec(what);
  if (e) {
    what = e[1];
    expected = e[2];
  }
  return { file, place, what, expected };
}

/** A shell word: quoted when it holds anything but plain path characters. */
function shellWord(s: string): string {
  return /^[\w./+@:=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** "model-inspector open --run MODEL PATH..." pairing a model with what the run was opened from. */
export function pairCommand(model: string, run: RunInfo): string {
  const paths = run.paths.length ? run.paths : run.inputs.filter((i) => i.role === 'trace').map((i) => i.path);
  return ['model-inspector open --run', shellWord(model), ...paths.map(shellWord)].join(' ');
}

/** "2 of 5 tasks …: 3 name a node the graphs lack, …" or null when everything links. */
export function linkNoteText(l: LinksJson): string | null {
  if (!l.has_graph || !l.has_trace || l.tasks === 0) return null;
  const named = l.reasons.filter((r) => r.code === 'unknown_node' || r.code === 'ambiguous_node');
  if (l.linked_tasks > 0 && !named.length) return null;
  const why = l.reasons.map((r) => `${r.count.toLocaleString('en-US')} ${r.text}`).join(', ');
  const head = l.linked_tasks === 0
    ? `None of the ${l.tasks.toLocaleString('en-US')} tasks link to a graph node, so every node shows as not executed`
    : `${l.unlinked_tasks.toLocaleString('en-US')} of ${l.tasks.toLocaleString('en-US')} tasks link to no graph node`;
  return why ? `${head}: ${why}.` : `${head}.`;
}

export class RunNotes {
  private readonly note = byId('run-note');
  private readonly error = byId('run-error');
  private readonly linkNote = byId('link-note');
  /** Runs whose link note the user closed. */
  private readonly dismissed = new Set<number>();
  private linkSeq = 0;

  constructor(private readonly store: StoreApi, private readonly api: ApiClient) {
    store.subscribe((s, prev) => this.render(s, prev));
    this.render(store.state, null);
  }

  private render(s: AppState, prev: AppState | null): void {
    const main = s.panes[0];
    if (prev && s.runs === prev.runs && s.status === prev.status && main.run === prev.panes[0].run && main.level === prev.panes[0].level) return;
    const run = s.status === 'ready' ? s.runs[main.run] : undefined;
    const failed = !!run?.error;
    const noGraph = !!run && !failed && !paneHasGraph(s, main);
    document.body.classList.toggle('run-failed', failed);
    document.body.classList.toggle('no-graph', noGraph || failed);
    this.error.hidden = !failed;
    this.note.hidden = !noGraph;
    this.error.textContent = '';
    this.note.textContent = '';
    if (run && failed) this.showError(run, s);
    if (run && noGraph) this.showNoGraph(run);
    this.linkNote.hidden = true;
    if (run && !failed && !noGraph && run.has_trace && !this.dismissed.has(run.id)) void this.showLinks(run.id);
  }

  private showError(run: RunInfo, s: AppState): void {
    const p = errorParts(run.error!.message);
    this.error.append(el('h2', undefined, `Run ${run.id} could not be opened`));
    const dl = el('dl');
    const row = (k: string, v: string): void => {
      if (!v) return;
      const dd = el('dd', undefined, v);
      dd.dataset.field = k;
      dl.append(el('dt', undefined, k), dd);
    };
    row('file', p.file || run.paths.join(', '));
    row('place', p.place);
    row('problem', p.what);
    row('expected', p.expected);
    row('error', run.error!.code);
    this.error.append(dl);
    const full = el('pre', 'run-error-message', run.error!.message);
    this.error.append(full);
    const others = s.runs.filter((r) => !r.error).length;
    this.error.append(el('p', 'muted', others
      ? `The other ${others === 1 ? 'run is' : `${others} runs are`} served: pick one in the run menu. Fix the file and run model-inspector open again to load this one.`
      : 'Fix the file and run model-inspector open again.'));
  }

  private showNoGraph(run: RunInfo): void {
    const what = run.has_trace ? 'a trace alone' : 'neither a graph nor a trace';
    const head = el('div', 'run-note-head');
    head.append(el('strong', undefined, 'No graph in this run'), ` — ${run.name} is ${what}; the timeline, mapping and summary have the room.`);
    this.note.append(head);
    if (!run.has_trace) return;
    // Offered: the model files next to the trace (the server lists them),
    // else the command with MODEL to fill in.
    const offers: { text: string; command: string; candidate?: number; file?: string }[] = (run.pair_candidates ?? []).map((m, i) => ({
      text: `${m.split('/').pop()} lies next to the trace; open them as one run to link the tasks to its nodes`, command: pairCommand(m, run),
      candidate: i, file: m.split('/').pop(),
    }));
    if (!offers.length) {
      offers.push({ text: 'open the trace with its model (the ONNX export, the .om or the GE graph dump) as one run', command: pairCommand('MODEL', run) });
    }
    const status = el('div', 'run-note-pair-status');
    status.hidden = true;
    for (const o of offers.slice(0, 3)) {
      if (o.candidate !== undefined) {
        const pair = el('button', 'run-note-pair', `Pair with ${o.file}`);
        pair.dataset.candidate = String(o.candidate);
        pair.title = `open ${o.file} with this trace as a new run and show its graph`;
        pair.addEventListener('click', () => void this.pair(run.id, o.candidate!, pair, status));
        this.note.append(pair);
      }
      const line = el('div', 'run-note-offer');
      line.dataset.offer = o.command;
      const code = el('code', undefined, o.command);
      code.title = o.command;
      const copy = el('button', undefined, 'copy');
      copy.title = 'copy the command';
      copy.addEventListener('click', () => {
        void navigator.clipboard?.writeText(o.command).then(() => { copy.textContent = 'copied'; }, () => { copy.textContent = 'select and copy'; });
      });
      line.append(el('span', 'run-note-what', `Graph: ${o.text}:`), code, copy);
      this.note.append(line);
    }
    this.note.append(status);
  }

  /**
   * Asks the server to open the candidate with this run's traces, then
   * reloads the run list and switches to the new run. The button waits
   * disabled meanwhile; a refusal shows the server's message (file, place,
   * what was expected).
   */
  private async pair(run: number, candidate: number, button: HTMLButtonElement, status: HTMLElement): Promise<void> {
    const label = button.textContent ?? '';
    for (const b of this.note.querySelectorAll<HTMLButtonElement>('button.run-note-pair')) b.disabled = true;
    button.textContent = `${label}…`;
    status.hidden = false;
    status.classList.remove('error');
    status.textContent = 'Opening the model with the trace…';
    try {
      const paired = await this.api.pair(run, candidate);
      const runs = await this.api.runs();
      this.store.dispatch({ type: 'runsLoaded', runs });
      this.store.dispatch({ type: 'setRun', run: paired.run });
    } catch (e) {
      if (!button.isConnected) return;
      for (const b of this.note.querySelectorAll<HTMLButtonElement>('button.run-note-pair')) b.disabled = false;
      button.textContent = label;
      status.classList.add('error');
      status.textContent = `Could not pair: ${(e as Error).message}`;
    }
  }

  private async showLinks(run: number): Promise<void> {
    const seq = ++this.linkSeq;
    let l: LinksJson;
    try {
      l = await this.api.links(run);
    } catch {
      return; // an older server without /links: nothing to say
    }
    if (seq !== this.linkSeq || this.store.state.panes[0].run !== run) return;
    const text = linkNoteText(l);
    if (!text) return;
    const n = this.linkNote;
    n.textContent = '';
    const close = el('button', 'link-note-close', '×');
    close.title = 'hide this note';
    close.addEventListener('click', () => { this.dismissed.add(run); n.hidden = true; });
    n.append(close, el('span', 'link-note-text', text));
    // Names the graph lacks, and no compiled graph loaded: the usual cause
    // is a trace of the compiled model (ONNX Runtime's optimized model, the .om).
    const levels = this.store.state.runs[run]?.levels ?? [];
    if (l.reasons.some((r) => r.code === 'unknown_node') && !levels.includes('compiled')) {
      n.append(el('div', 'link-note-hint',
        'The trace may be of the compiled model: open it with this run (model-inspector open --run MODEL COMPILED_MODEL TRACE).'));
    }
    if (l.examples.length) {
      const d = el('details');
      d.append(el('summary', undefined, 'examples'));
      for (const e of l.examples.slice(0, 5)) d.append(el('div', 'link-note-example', e));
      n.append(d);
    }
    n.hidden = false;
  }
}
