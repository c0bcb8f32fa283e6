// Minimap: the whole layout in a small canvas (drawn once per layout into an
// offscreen bitmap) with the current viewport as a rectangle; click or drag
// to move the view there.

import type { Camera } from './camera';
import type { Scene } from './scene';

export class Minimap {
  private readonly ctx: CanvasRenderingContext2D;
  private base: HTMLCanvasElement = document.createElement('canvas');
  private scene: Scene | null = null;
  private k = 1;
  private ox = 0;
  private oy = 0;

  constructor(readonly canvas: HTMLCanvasElement, private readonly cam: Camera) {
    this.ctx = canvas.getContext('2d')!;
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

  draw(): void {
    const c = this.ctx;
    c.drawImage(this.base, 0, 0);
    // No graph, or nothing out of view: the minimap would only cover the pane.
    if (!this.scene) { this.canvas.classList.add('all-visible'); return; }
    const v = this.cam.visibleWorld();
    const l = this.scene.layout;
    this.canvas.classList.toggle('all-visible', v.x <= 1 && v.y <= 1 && v.x + v.w >= l.width - 1 && v.y + v.h >= l.height - 1);
    c.strokeStyle = '#ff6a00';
    c.lineWidth = 1.5;
    c.strokeRect(this.ox + v.x * this.k, this.oy + v.y * this.k, v.w * this.k, v.h * this.k);
  }
}
