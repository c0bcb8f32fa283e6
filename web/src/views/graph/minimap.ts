// Minimap: the whole layout in a small canvas (drawn once per layout into an
// offscreen bitmap) with the current viewport as a rectangle; click or drag
// to move the view there. It never hides what is being looked at: on every
// frame it goes to the pane corner covering the fewest nodes in view (never
// the selected one), and when every corner would cover some it folds to a
// small "map" button. The button and the minimap's corner "×" switch it
// between shown (always, still moving to the free corner) and hidden,
// kept in localStorage (`mi.minimap`: auto | on | off).

import type { Camera } from './camera';
import type { Scene } from './scene';

export class Minimap {
  private readonly ctx: CanvasRenderingContext2D;
  private base: HTMLCanvasElement = document.createElement('canvas');
  private scene: Scene | null = null;
  private k = 1;
  private ox = 0;
  private oy = 0;

  /** The item drawn selected (screen box kept clear), -1 none; set by the pane. */
  selectedItem = -1;
  /** Where the minimap is now: a corner, or folded to its button (for tests). */
  placement: 'br' | 'bl' | 'tr' | 'tl' | 'folded' | 'hidden' = 'hidden';
  readonly button: HTMLButtonElement;
  private readonly closer: HTMLButtonElement;
  private corner: 'br' | 'bl' | 'tr' | 'tl' = 'br';
  private readonly stamp = { arr: new Uint32Array(0), mark: 0 };

  constructor(readonly canvas: HTMLCanvasElement, private readonly cam: Camera) {
    this.ctx = canvas.getContext('2d')!;
    this.button = document.createElement('button');
    this.button.className = 'minimap-button';
    this.button.textContent = 'map';
    this.button.hidden = true;
    this.closer = document.createElement('button');
    this.closer.className = 'minimap-close';
    this.closer.textContent = '×';
    this.closer.title = 'hide the minimap (the "map" button shows it again)';
    this.closer.hidden = true;
    canvas.after(this.button, this.closer);
    this.button.addEventListener('click', () => { Minimap.setPref('on'); this.draw(); });
    this.closer.addEventListener('click', () => { Minimap.setPref('off'); this.draw(); });
    let down = false;
    const move = (e: PointerEvent): void => {
      if (!this.scene) return;
      const r = canvas.getBoundingClientRect();
      cam.centreOn((e.clientX - r.left - this.ox) / this.k, (e.clientY - r.top - this.oy) / this.k);
    };
    canvas.addEventListener('pointerdown', (e) => { down = true; canvas.setPointerCapture(e.pointerId); move(e); });
    canvas.addEventListener('pointermove', (e) => { if (down) move(e); });
    canvas.addEventListener('pointerup', () => { down = false; });
  }

  setScene(scene: Scene | null): void {
    this.scene = scene;
    const W = this.canvas.clientWidth || 180, H = this.canvas.clientHeight || 140;
    this.canvas.width = W; this.canvas.height = H;
    this.base.width = W; this.base.height = H;
    const c = this.base.getContext('2d')!;
    c.fillStyle = '#fafafa';
    c.fillRect(0, 0, W, H);
    if (!scene) return;
    const l = scene.layout;
    this.k = Math.min((W - 8) / Math.max(1, l.width), (H - 8) / Math.max(1, l.height));
    this.ox = (W - l.width * this.k) / 2;
    this.oy = (H - l.height * this.k) / 2;
    const k = this.k;
    c.strokeStyle = '#8696b4';
    c.lineWidth = 1;
    for (let f = 0; f < l.frameCount; ++f) {
      const g = l.frames[f];
      if (l.groupDepth[g] > 2) continue;
      const b = l.groupBounds;
      c.strokeRect(this.ox + b[4 * g] * k, this.oy + b[4 * g + 1] * k, Math.max(1, b[4 * g + 2] * k), Math.max(1, b[4 * g + 3] * k));
    }
    // Items straight into pixels: one ImageData write per item, no strings.
    const img = c.getImageData(0, 0, W, H);
    const px = img.data;
    const b = l.itemBox, col = scene.itemColor;
    for (let i = 0; i < l.itemCount; ++i) {
      const x0 = Math.max(0, Math.floor(this.ox + b[4 * i] * k)), y0 = Math.max(0, Math.floor(this.oy + b[4 * i + 1] * k));
      const x1 = Math.min(W, Math.max(x0 + 1, Math.round(this.ox + (b[4 * i] + b[4 * i + 2]) * k)));
      const y1 = Math.min(H, Math.max(y0 + 1, Math.round(this.oy + (b[4 * i + 1] + b[4 * i + 3]) * k)));
      const r = col[3 * i] * 217, g = col[3 * i + 1] * 217, bl = col[3 * i + 2] * 217;
      for (let y = y0; y < y1; ++y) {
        for (let x = x0; x < x1; ++x) {
          const o = 4 * (y * W + x);
          px[o] = r; px[o + 1] = g; px[o + 2] = bl; px[o + 3] = 255;
        }
      }
    }
    c.putImageData(img, 0, 0);
    this.draw();
  }

  /** The user's choice: auto (fold when every corner covers nodes), on, off.
   *  Read from storage once per page: draw() asks on every frame. */
  static pref(): 'auto' | 'on' | 'off' {
    if (Minimap.cachedPref === null) {
      let v: string | null = null;
      try { v = localStorage.getItem('mi.minimap'); } catch { /* private mode */ }
      Minimap.cachedPref = v === 'on' || v === 'off' ? v : 'auto';
    }
    return Minimap.cachedPref;
  }
  static setPref(v: 'auto' | 'on' | 'off'): void {
    Minimap.cachedPref = v;
    try { localStorage.setItem('mi.minimap', v); } catch { /* private mode: this page only */ }
  }
  private static cachedPref: 'auto' | 'on' | 'off' | null = null;

  /**
   * What a corner would cover, in screen px of the pane: Infinity over the
   * selected item, else the number of nodes in view it overlaps by more than
   * a quarter of their area on screen.
   */
  private cost(x: number, y: number, w: number, h: number): number {
    const s = this.scene!, l = s.layout, cam = this.cam, b = l.itemBox;
    const over = (i: number): number => {
      const ix = cam.toScreenX(b[4 * i]), iy = cam.toScreenY(b[4 * i + 1]);
      const iw = b[4 * i + 2] * cam.scale, ih = b[4 * i + 3] * cam.scale;
      const ox = Math.min(x + w, ix + iw) - Math.max(x, ix), oy = Math.min(y + h, iy + ih) - Math.max(y, iy);
      return ox > 0 && oy > 0 ? (ox * oy) / Math.max(1, iw * ih) : 0;
    };
    const pad = 6;
    if (this.selectedItem >= 0 && this.selectedItem < l.itemCount) {
      const i = this.selectedItem;
      const ix = cam.toScreenX(b[4 * i]) - pad, iy = cam.toScreenY(b[4 * i + 1]) - pad;
      if (ix < x + w && ix + b[4 * i + 2] * cam.scale + 2 * pad > x && iy < y + h && iy + b[4 * i + 3] * cam.scale + 2 * pad > y) return Infinity;
    }
    if (this.stamp.arr.length < l.itemCount) this.stamp.arr = new Uint32Array(l.itemCount);
    if (++this.stamp.mark === 0xffffffff) { this.stamp.arr.fill(0); this.stamp.mark = 1; }
    let n = 0;
    s.forItemsIn(cam.toWorldX(x), cam.toWorldY(y), cam.toWorldX(x + w), cam.toWorldY(y + h), this.stamp.arr, this.stamp.mark, (i) => {
      if (over(i) > 0.25) n++;
    });
    return n;
  }

  /** Puts the minimap in the free corner, or folds it to its button. */
  private place(): void {
    const pane = this.canvas.parentElement;
    const pref = Minimap.pref();
    const W = pane?.clientWidth ?? 0, H = pane?.clientHeight ?? 0;
    const w = this.canvas.offsetWidth || this.canvas.width, h = this.canvas.offsetHeight || this.canvas.height;
    const m = 10;
    let best = this.corner, bestCost = Infinity;
    if (pref !== 'off' && W > 0) {
      const at = (c: string): [number, number] => [c[1] === 'l' ? m : W - m - w, c[0] === 't' ? m : H - m - h];
      // The current corner first: a tie keeps it where it is.
      const order = [this.corner, ...(['br', 'bl', 'tr', 'tl'] as const).filter((c) => c !== this.corner)];
      for (const c of order) {
        const [x, y] = at(c);
        const k = this.cost(x, y, w, h);
        if (k < bestCost) { best = c; bestCost = k; }
        if (k === 0) break;
      }
    }
    const folded = pref === 'off' || bestCost === Infinity || (pref === 'auto' && bestCost > 0);
    this.corner = best;
    this.placement = folded ? 'folded' : best;
    this.canvas.classList.toggle('folded', folded);
    this.button.hidden = !folded;
    this.closer.hidden = folded;
    this.button.title = pref === 'off' ? 'show the minimap (hidden by its ×)' : 'show the minimap (folded: every corner would cover nodes in view)';
    const st = this.canvas.style, bs = this.button.style, cs = this.closer.style;
    st.left = best[1] === 'l' ? `${m}px` : 'auto'; st.right = best[1] === 'r' ? `${m}px` : 'auto';
    st.top = best[0] === 't' ? `${m}px` : 'auto'; st.bottom = best[0] === 'b' ? `${m}px` : 'auto';
    bs.left = st.left; bs.right = st.right; bs.top = st.top; bs.bottom = st.bottom;
    // The closer on the minimap's inner top corner.
    cs.right = best[1] === 'r' ? `${m + 1}px` : 'auto'; cs.left = best[1] === 'l' ? `${m + w - 17}px` : 'auto';
    cs.top = best[0] === 't' ? `${m + 1}px` : 'auto'; cs.bottom = best[0] === 'b' ? `${m + h - 17}px` : 'auto';
  }

  draw(): void {
    const c = this.ctx;
    c.drawImage(this.base, 0, 0);
    // No graph, or nothing out of view: the minimap would only cover the pane.
    if (!this.scene) {
      this.canvas.classList.add('all-visible');
      this.button.hidden = true; this.closer.hidden = true; this.placement = 'hidden';
      return;
    }
    const v = this.cam.visibleWorld();
    const l = this.scene.layout;
    const all = v.x <= 1 && v.y <= 1 && v.x + v.w >= l.width - 1 && v.y + v.h >= l.height - 1;
    this.canvas.classList.toggle('all-visible', all);
    if (all) { this.button.hidden = true; this.closer.hidden = true; this.placement = 'hidden'; return; }
    this.place();
    c.strokeStyle = '#ff6a00';
    c.lineWidth = 1.5;
    c.strokeRect(this.ox + v.x * this.k, this.oy + v.y * this.k, v.w * this.k, v.h * this.k);
  }
}
