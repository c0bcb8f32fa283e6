// Small DOM builders shared by the panels and views.

/** A new element with an optional class and text. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** The element with id `id` of index.html (throws when the page lacks it: a build mismatch). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (!e) throw new Error(`missing #${id} in index.html`);
  return e as T;
}

/** A colour chip (a small square) in a CSS colour. */
export function chip(color: string, cls = 'chip'): HTMLSpanElement {
  const c = el('span', cls);
  c.style.background = color;
  return c;
}

let copyInstalled = false;

/**
 * A name that keeps its start and its end when the room is short: the
 * tail (the last path segment, at most `tailMax` characters, at least a
 * third of the name) never shrinks, the head shrinks with an ellipsis in
 * the middle ("layer1/layer1.0/…/conv1/Conv"). The whole name stays in
 * the DOM, so selecting and copying gives it whole, and it shows on hover.
 */
export function midName(text: string, cls = 'mid', tailMax = 28): HTMLSpanElement {
  if (!copyInstalled) {
    copyInstalled = true;
    // Copying a selection inside one name gives the name as text (the
    // browser would add a line break after its flex parts).
    document.addEventListener('copy', (e) => {
      const sel = getSelection();
      const at = (n: Node | null): HTMLElement | null => (n instanceof Element ? n : n?.parentElement ?? null)?.closest<HTMLElement>('.mid') ?? null;
      const m = sel && !sel.isCollapsed ? at(sel.anchorNode) : null;
      if (!m || m !== at(sel!.focusNode) || !e.clipboardData) return;
      e.clipboardData.setData('text/plain', sel!.toString().replace(/\n/g, ''));
      e.preventDefault();
    });
  }
  const root = el('span', cls);
  root.title = text;
  root.dataset.full = text;
  const slash = Math.max(text.lastIndexOf('/'), text.lastIndexOf('.'), text.lastIndexOf('::'));
  let cut = slash > 0 && text.length - slash <= tailMax ? slash : Math.max(0, text.length - Math.min(tailMax, Math.ceil(text.length / 3)));
  if (text.length <= 12) cut = text.length;
  const head = el('span', 'mid-head', text.slice(0, cut));
  const tail = el('span', 'mid-tail', text.slice(cut));
  root.append(head, tail);
  return root;
}
