// The view transform: screen = world * scale + (tx, ty), in CSS pixels.
// Input handling (mouse drag, wheel / trackpad, keyboard) lives here so both
// renderers and the minimap share one camera.

export interface Rect { x: number; y: number; w: number; h: number }

export class Camera {
  scale = 1;
  tx = 0;
  ty = 0;
  viewW = 1;
  viewH = 1;
  minScale = 1e-5;
  maxScale = 8;
  private listeners: (() => void)[] = [];

  onChange(f: () => void): void { this.listeners.push(f); }
  private changed(): void { for (const f of this.listeners) f(); }

  setViewport(w: number, h: number): void {
    this.viewW = Math.max(1, w);
    this.viewH = Math.max(1, h);
    this.changed();
  }

  toWorldX(sx: number): number { return (sx - this.tx) / this.scale; }
  toWorldY(sy: number): number { return (sy - this.ty) / this.scale; }
  toScreenX(wx: number): number { return wx * this.scale + this.tx; }
  toScreenY(wy: number): number { return wy * this.scale + this.ty; }

  /** The world rectangle currently on screen. */
  visibleWorld(): Rect {
    return { x: this.toWorldX(0), y: this.toWorldY(0), w: this.viewW / this.scale, h: this.viewH / this.scale };
  }

  panBy(dx: number, dy: number): void {
    this.tx += dx;
    this.ty += dy;
    this.changed();
  }

  /** Zooms by `factor` keeping the screen point (sx, sy) fixed. */
  zoomAt(factor: number, sx: number, sy: number): void {
    const s = Math.min(this.maxScale, Math.max(this.minScale, this.scale * factor));
    const wx = this.toWorldX(sx), wy = this.toWorldY(sy);
    this.scale = s;
    this.tx = sx - wx * s;
    this.ty = sy - wy * s;
    this.changed();
  }

  /** Fits a world rectangle into the view with a margin (CSS px). */
  fit(r: Rect, margin = 24, maxScale = 1.5): void {
    const sw = (this.viewW - 2 * margin) / Math.max(1, r.w);
    const sh = (this.viewH - 2 * margin) / Math.max(1, r.h);
    this.scale = Math.min(maxScale, Math.max(this.minScale, Math.min(sw, sh)));
    this.tx = this.viewW / 2 - (r.x + r.w / 2) * this.scale;
    this.ty = this.viewH / 2 - (r.y + r.h / 2) * this.scale;
    this.changed();
  }

  /** Centres the world point (wx, wy), optionally at a given scale. */
  centreOn(wx: number, wy: number, scale?: number): void {
    if (scale !== undefined) this.scale = Math.min(this.maxScale, Math.max(this.minScale, scale));
    this.tx = this.viewW / 2 - wx * this.scale;
    this.ty = this.viewH / 2 - wy * this.scale;
    this.changed();
  }

  /** Moves the camera so world point (wx, wy) shows at screen (sx, sy). */
  pin(wx: number, wy: number, sx: number, sy: number): void {
    this.tx = sx - wx * this.scale;
    this.ty = sy - wy * this.scale;
    this.changed();
  }
}

/**
 * Wires mouse, wheel and keyboard input of `el` to `cam`.
 * - drag: pan; wheel with ctrl/meta (also trackpad pinch): zoom at cursor;
 * - a discrete mouse wheel (vertical only, |deltaY| >= 50 or line mode): zoom;
 * - other wheel events (two-finger trackpad scroll): pan;
 * - keys: + / - zoom, arrows pan, 0 fits (calls `fit`).
 * `onClick`/`onDoubleClick` receive clicks that did not drag.
 */
export function attachCameraInput(
  el: HTMLElement, cam: Camera,
  handlers: { fit: () => void; onClick?: (sx: number, sy: number, e: MouseEvent) => void; onDoubleClick?: (sx: number, sy: number) => void },
): void {
  let dragging = false, moved = false, lastX = 0, lastY = 0, downX = 0, downY = 0;
  el.addEventListener('pointerdown', (e) => {
    if (e.button !== 0) return;
    dragging = true; moved = false;
    lastX = downX = e.clientX; lastY = downY = e.clientY;
    el.setPointerCapture(e.pointerId);
    el.focus();
  });
  el.addEventListener('pointermove', (e) => {
    if (!dragging) return;
    if (!moved && Math.abs(e.clientX - downX) + Math.abs(e.clientY - downY) > 3) moved = true;
    if (moved) {
      cam.panBy(e.clientX - lastX, e.clientY - lastY);
      el.style.cursor = 'grabbing';
    }
    lastX = e.clientX; lastY = e.clientY;
  });
  const up = (e: PointerEvent): void => {
    if (!dragging) return;
    dragging = false;
    el.style.cursor = '';
    if (el.hasPointerCapture(e.pointerId)) el.releasePointerCapture(e.pointerId);
    if (!moved && handlers.onClick) {
      const r = el.getBoundingClientRect();
      handlers.onClick(e.clientX - r.left, e.clientY - r.top, e);
    }
  };
  el.addEventListener('pointerup', up);
  el.addEventListener('pointercancel', up);
  el.addEventListener('dblclick', (e) => {
    const r = el.getBoundingClientRect();
    handlers.onDoubleClick?.(e.clientX - r.left, e.clientY - r.top);
  });
  el.addEventListener('wheel', (e) => {
    e.preventDefault();
    const r = el.getBoundingClientRect();
    const sx = e.clientX - r.left, sy = e.clientY - r.top;
    const lineMode = e.deltaMode === 1;
    const unit = lineMode ? 16 : e.deltaMode === 2 ? cam.viewH : 1;
    const dx = e.deltaX * unit, dy = e.deltaY * unit;
    const discreteWheel = lineMode || (e.deltaX === 0 && Math.abs(e.deltaY) >= 50 && Number.isInteger(e.deltaY));
    if (e.ctrlKey || e.metaKey || discreteWheel) {
      cam.zoomAt(Math.exp(-dy * (e.ctrlKey ? 0.01 : 0.002)), sx, sy);
    } else {
      cam.panBy(-dx, -dy);
    }
  }, { passive: false });
  el.addEventListener('keydown', (e) => {
    const step = 60;
    switch (e.key) {
      case '+': case '=': cam.zoomAt(1.25, cam.viewW / 2, cam.viewH / 2); break;
      case '-': case '_': cam.zoomAt(0.8, cam.viewW / 2, cam.viewH / 2); break;
      case 'ArrowLeft': cam.panBy(step, 0); break;
      case 'ArrowRight': cam.panBy(-step, 0); break;
      case 'ArrowUp': cam.panBy(0, step); break;
      case 'ArrowDown': cam.panBy(0, -step); break;
      case '0': handlers.fit(); break;
      default: return;
    }
    e.preventDefault();
  });
}
