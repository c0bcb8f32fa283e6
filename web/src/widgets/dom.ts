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
