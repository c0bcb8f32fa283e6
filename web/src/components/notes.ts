// Notes on nodes: a free-text note per node of a run (what a user found
// there: "NaN starts here", "fp16 overflow after the compiler's cast"),
// edited in the node's details, listed under the bookmarks, kept in
// localStorage per run name like the bookmarks, and saved with the session
// (.mis).

import type { StoreApi } from '../core/store';
import { el, midName } from '../widgets/dom';
import { type NodeEntry, RunNodeList } from './run_node_list';

export interface Note extends NodeEntry { text: string }

export class Notes extends RunNodeList<Note> {
  constructor(store: StoreApi, root: HTMLElement) {
    super(store, root, 'mi.notes');
    this.render();
  }

  /** Sets (or, with empty text, removes) the note on a node of the main pane's run. */
  set(n: Note): void {
    const rest = this.list().filter((x) => !(x.level === n.level && x.id === n.id));
    this.setCurrent(n.text.trim() ? [...rest, n] : rest);
  }

  /** The note box of a node's details: saved when it loses focus (or on Ctrl+Enter). */
  editor(n: Omit<Note, 'text'>): HTMLElement {
    const box = el('div', 'note-box');
    const area = el('textarea', 'note');
    area.rows = 2;
    area.placeholder = 'note on this node (saved with the session)';
    area.value = this.list().find((x) => x.level === n.level && x.id === n.id)?.text ?? '';
    const save = (): void => {
      const cur = this.list().find((x) => x.level === n.level && x.id === n.id)?.text ?? '';
      if (area.value !== cur) this.set({ ...n, text: area.value });
    };
    area.addEventListener('change', save);
    area.addEventListener('blur', save);
    area.addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { save(); area.blur(); } });
    box.append(area);
    return box;
  }

  protected render(): void {
    const root = this.root;
    root.textContent = '';
    const list = this.list();
    if (!list.length) return;
    const ul = el('ul', 'notes');
    for (const n of list) {
      const li = el('li');
      li.dataset.level = n.level;
      li.dataset.node = String(n.id);
      li.append(midName(n.name), el('span', 'note-text', n.text));
      li.title = `${n.name} (${n.op}, ${n.level}): ${n.text}`;
      li.addEventListener('click', () => this.store.dispatch({
        type: 'select', selection: { kind: 'node', level: n.level, id: n.id, run: this.store.state.panes[0].run }, source: 'details',
      }));
      ul.append(li);
    }
    root.append(ul);
  }
}
