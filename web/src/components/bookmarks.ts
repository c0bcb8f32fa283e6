// Bookmarks on nodes (as Model Explorer has them): the star in a node's
// details adds or removes it; the side panel lists the current run's
// bookmarks, a click selects the node (its level switches in, the graph
// reveals and centres it). Kept in localStorage per run name, so they
// survive reloads and a later `open` of the same run; the URL stays the
// selection's.

import { opColor, rgbCss } from '../base/palette';
import type { StoreApi } from '../core/store';
import { chip, el, midName } from '../widgets/dom';
import { type NodeEntry, RunNodeList } from './run_node_list';

export type Bookmark = NodeEntry;

export class Bookmarks extends RunNodeList<Bookmark> {
  constructor(store: StoreApi, root: HTMLElement) {
    super(store, root, 'mi.bookmarks');
    this.render();
  }

  has(level: string, id: number): boolean {
    return this.list().some((b) => b.level === level && b.id === id);
  }

  toggle(b: Bookmark): void {
    const list = this.list();
    const i = list.findIndex((x) => x.level === b.level && x.id === b.id);
    this.setCurrent(i >= 0 ? list.filter((_, j) => j !== i) : [...list, b]);
  }

  /** The star button of a node's details. */
  star(b: Bookmark): HTMLButtonElement {
    const btn = el('button', 'bookmark');
    btn.type = 'button';
    const show = (): void => {
      const on = this.has(b.level, b.id);
      btn.textContent = on ? '★ bookmarked' : '☆ bookmark';
      btn.classList.toggle('on', on);
      btn.title = on ? 'remove this node from the bookmarks' : 'add this node to the bookmarks (listed in the side panel)';
    };
    btn.addEventListener('click', () => this.toggle(b));
    this.onChange(show);
    show();
    return btn;
  }

  protected render(): void {
    const root = this.root;
    root.textContent = '';
    const list = this.list();
    if (!list.length) {
      root.append(el('div', 'muted', 'None yet: ☆ in a node\'s details adds it.'));
      return;
    }
    const ul = el('ul', 'bookmarks');
    for (const b of list) {
      const li = el('li');
      li.dataset.level = b.level;
      li.dataset.node = String(b.id);
      const rm = el('button', undefined, '×');
      rm.title = 'remove the bookmark';
      rm.addEventListener('click', (e) => { e.stopPropagation(); this.toggle(b); });
      li.append(chip(rgbCss(opColor(b.op))), midName(b.name), el('span', 'op', `${b.op} · ${b.level}`), rm);
      li.title = `${b.name} (${b.op}, ${b.level}): click to select`;
      li.addEventListener('click', () => this.store.dispatch({
        type: 'select', selection: { kind: 'node', level: b.level, id: b.id, run: this.store.state.panes[0].run }, source: 'details',
      }));
      ul.append(li);
    }
    root.append(ul);
  }
}
