// The page's keyboard shortcuts and the help overlay that lists every one
// (the page's, the graph's, the timeline's, the search box's):
//   /         focus the search box (when no text field has the keys)
//   Ctrl+F    focus the search box while the page has the focus; pressed
//             again in the box, the browser's own find
//   ?         open / close this help
//   Esc       close the help or the export menu (the search box: leave it)
// The graph's and the timeline's own keys act on their canvas when it has
// the focus (views/graph/camera.ts, views/timeline/timeline_view.ts).

import { el } from '../widgets/dom';

/** Every shortcut the UI has, by where it acts: [keys, what]. */
export const kShortcuts: readonly { where: string; keys: readonly [string, string][] }[] = [
  {
    where: 'Anywhere',
    keys: [
      ['/', 'search the nodes (focus the search box)'],
      ['Ctrl+F  ⌘F', 'search the nodes; again in the box: the browser\'s find'],
      ['?', 'this help'],
      ['Esc', 'close this help or the export menu'],
    ],
  },
  {
    where: 'Search box',
    keys: [
      ['Enter', 'run the search (auto: a glob when it has * or ?, else a name part)'],
      ['Esc', 'leave the box for the graph; the results stay'],
    ],
  },
  {
    where: 'Graph',
    keys: [
      ['drag', 'pan'],
      ['wheel  Ctrl+wheel  pinch', 'zoom at the pointer (two-finger scroll pans)'],
      ['+  -', 'zoom in / out'],
      ['← → ↑ ↓', 'pan'],
      ['0', 'fit the graph'],
      ['click', 'select a node or group'],
      ['double-click', 'expand / collapse a group'],
    ],
  },
  {
    where: 'Timeline',
    keys: [
      ['W  S', 'zoom in / out at the pointer'],
      ['A  D', 'pan left / right'],
      ['F', 'zoom to the selection'],
      ['0', 'fit the trace'],
      ['↑ ↓', 'scroll the lanes'],
      ['Esc', 'clear the selection'],
      ['shift-drag', 'select a time range'],
      ['wheel  Ctrl+wheel', 'zoom at the pointer (shift+wheel pans)'],
    ],
  },
];

/** Whether keys typed at `t` are text (an input, a text area, an editable element). */
function typingIn(t: EventTarget | null): boolean {
  if (!(t instanceof HTMLElement)) return false;
  if (t.isContentEditable) return true;
  if (t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement) return true;
  return t instanceof HTMLInputElement && !['checkbox', 'radio', 'button', 'range', 'file'].includes(t.type);
}

/** Installs the page's shortcuts and the help overlay; returns the overlay element. */
export function mountShortcuts(search: HTMLInputElement, menus: () => HTMLDetailsElement[]): HTMLElement {
  const overlay = el('div', 'shortcuts-overlay');
  overlay.id = 'shortcuts';
  overlay.hidden = true;
  overlay.setAttribute('role', 'dialog');
  overlay.setAttribute('aria-label', 'keyboard shortcuts');
  const box = el('div', 'shortcuts-box');
  const head = el('div', 'shortcuts-head');
  const close = el('button', 'shortcuts-close', '×');
  close.title = 'close (Esc)';
  head.append(el('h2', undefined, 'Keyboard shortcuts'), close);
  box.append(head);
  const cols = el('div', 'shortcuts-cols');
  for (const group of kShortcuts) {
    const sec = el('section');
    sec.append(el('h3', undefined, group.where));
    const table = el('table');
    for (const [keys, what] of group.keys) {
      const tr = el('tr');
      const k = el('td', 'keys');
      for (const part of keys.split('  ')) k.append(el('kbd', undefined, part));
      tr.append(k, el('td', undefined, what));
      table.append(tr);
    }
    sec.append(table);
    cols.append(sec);
  }
  box.append(cols);
  overlay.append(box);
  document.body.append(overlay);

  let returnFocus: HTMLElement | null = null;
  const show = (on: boolean): void => {
    if (on === !overlay.hidden) return;
    overlay.hidden = !on;
    if (on) {
      returnFocus = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      close.focus();
    } else {
      returnFocus?.focus();
    }
  };
  close.addEventListener('click', () => show(false));
  overlay.addEventListener('click', (e) => { if (e.target === overlay) show(false); });

  window.addEventListener('keydown', (e) => {
    if (e.defaultPrevented) return;
    if (e.key === 'Escape') {
      if (!overlay.hidden) { show(false); e.preventDefault(); return; }
      for (const m of menus()) if (m.open) { m.open = false; e.preventDefault(); }
      return;
    }
    if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'f') {
      // In the box already: let the browser find in the page.
      if (document.activeElement === search) return;
      e.preventDefault();
      show(false);
      search.focus();
      search.select();
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey || typingIn(e.target)) return;
    if (e.key === '/') {
      e.preventDefault();
      show(false);
      search.focus();
      search.select();
    } else if (e.key === '?') {
      e.preventDefault();
      show(overlay.hidden);
    }
  });
  return overlay;
}
