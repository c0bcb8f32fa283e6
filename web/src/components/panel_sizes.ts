// Panel sizes the user drags: the side panel's width (its handle left of
// it) and the bottom panel's height (the splitter above it, in
// bottom_panel.ts), kept in localStorage so a reload opens as left. A
// double-click on a handle goes back to the default size (CSS: the side
// panel grows with the window, 300-560 px; the bottom panel 42 %). Sizes
// are clamped to the window when it shrinks, so the graph keeps room.

import { byId } from '../widgets/dom';

const kPrefix = 'mi.panel.';

/** The saved size of panel `key` in px, or null (none saved, or storage off). */
export function savedSize(key: string): number | null {
  try {
    const v = localStorage.getItem(kPrefix + key);
    return v !== null && /^\d+$/.test(v) ? parseInt(v, 10) : null;
  } catch { return null; }
}

/** Saves (or, with null, forgets) the size of panel `key`. */
export function saveSize(key: string, px: number | null): void {
  try {
    if (px === null) localStorage.removeItem(kPrefix + key);
    else localStorage.setItem(kPrefix + key, String(Math.round(px)));
  } catch { /* storage off: sizes last until reload */ }
}

/** The graph keeps at least this width next to the side panel. */
const kMinGraphWidth = 360;
const kMinSide = 220;

function clampSide(px: number): number {
  return Math.max(kMinSide, Math.min(px, window.innerWidth - kMinGraphWidth));
}

/** Makes the side panel resizable by its handle and restores its saved width. */
export function mountSidePanelSizer(): void {
  const side = byId('side'), handle = byId('side-splitter');
  const apply = (): void => {
    const w = savedSize('side');
    side.style.width = w === null ? '' : `${clampSide(w)}px`;
  };
  apply();
  window.addEventListener('resize', apply);
  handle.addEventListener('pointerdown', (e) => {
    e.preventDefault();
    handle.setPointerCapture(e.pointerId);
    handle.classList.add('dragging');
    const move = (ev: PointerEvent): void => {
      side.style.width = `${clampSide(window.innerWidth - ev.clientX - handle.offsetWidth / 2)}px`;
    };
    const up = (): void => {
      handle.classList.remove('dragging');
      handle.removeEventListener('pointermove', move);
      handle.removeEventListener('pointerup', up);
      saveSize('side', side.getBoundingClientRect().width);
    };
    handle.addEventListener('pointermove', move);
    handle.addEventListener('pointerup', up);
  });
  handle.addEventListener('dblclick', () => { saveSize('side', null); apply(); });
}
