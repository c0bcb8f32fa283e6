// Canvas2D fallback renderer (no WebGL2): draws the same Scene with the same
// order and level of detail, culling items and edges outside the view. Slower
// than WebGL for big layouts but needs nothing from the GPU.

import type { Camera } from './camera';
import { kEdgeColor, kLineageColor, kLinkedColor, kMatchColor, kSelectColor, rgbCss } from '../../base/palette';
import { edgeHighlights, type Highlights, type Renderer } from './renderer';
import { kLodNever, kPolyStride, kRectDashed, kRectStride, kRectTopRounded, kArrowLength, lodPx, type Scene } from './scene';
import { collectText, fitMiddle, type Align, type TextSink } from './text_runs';
import { kFontFamily } from './glyph_atlas';

export class Canvas2DRenderer implements Renderer, TextSink {
  readonly kind = 'canvas2d';
  private readonly ctx: CanvasRenderingContext2D;
  private scene: Scene | null = null;
  private hl: Highlights = { selected: -1, matches: [] };
  private hlEdges = new Map<number, number>();
  private lodT = 0;
  private dpr = 1;
  private stamp = new Uint32Array(0);
  private mark = 0;
  private scale = 1;
  lastFrameMs = 0;

  constructor(readonly canvas: HTMLCanvasElement) {
    const ctx = canvas.getContext('2d', { alpha: false });
    if (!ctx) throw new Error('no Canvas2D context');
    this.ctx = ctx;
  }

  setScene(scene: Scene | null): void {
    this.scene = scene;
    this.hlEdges.clear();
    if (scene && this.stamp.length < scene.layout.itemCount) this.stamp = new Uint32Array(scene.layout.itemCount);
  }

  setHighlights(h: Highlights): void {
    this.hl = h;
    this.hlEdges = this.scene ? edgeHighlights(this.scene, h) : new Map();
  }

  resize(cssW: number, cssH: number, dpr: number): void {
    this.dpr = dpr;
    this.canvas.width = Math.max(1, Math.round(cssW * dpr));
    this.canvas.height = Math.max(1, Math.round(cssH * dpr));
  }

  private rect(r: Float32Array, k: number, x0: number, y0: number, x1: number, y1: number): void {
    const o = k * kRectStride;
    const x = r[o], y = r[o + 1], w = r[o + 2], h = r[o + 3];
    if (x > x1 || y > y1 || x + w < x0 || y + h < y0) return;
    if (r[o + 14] * this.scale < this.lodT) return; // inside a silhouette
    const ctx = this.ctx;
    const flags = r[o + 13];
    const rad = Math.min(r[o + 12], w / 2, h / 2);
    ctx.beginPath();
    if (w * this.scale < 3 || h * this.scale < 3) ctx.rect(x, y, w, h);
    else if (flags & kRectTopRounded) ctx.roundRect(x, y, w, h, [rad, rad, 0, 0]);
    else ctx.roundRect(x, y, w, h, rad);
    ctx.fillStyle = `rgba(${r[o + 4] * 255 | 0},${r[o + 5] * 255 | 0},${r[o + 6] * 255 | 0},${r[o + 7]})`;
    if (r[o + 7] > 0) ctx.fill();
    const sw = r[o + 11];
    if (sw !== 0) {
      ctx.lineWidth = sw > 0 ? Math.min(3, Math.max(0.6, sw * this.scale)) / this.scale : -sw / this.scale;
      ctx.strokeStyle = `rgb(${r[o + 8] * 255 | 0},${r[o + 9] * 255 | 0},${r[o + 10] * 255 | 0})`;
      ctx.setLineDash(flags & kRectDashed ? [4, 3] : []);
      ctx.stroke();
    }
  }

  text(x: number, y: number, size: number, bold: boolean, align: Align, maxWidth: number, s: string, shade: number): void {
    if (!s || maxWidth <= 0) return;
    const ctx = this.ctx;
    ctx.font = `${bold ? 'bold ' : ''}${size}px ${kFontFamily}`;
    ctx.textAlign = align === 0 ? 'left' : align === 1 ? 'center' : 'right';
    const v = Math.round(shade * 255);
    ctx.fillStyle = `rgb(${v},${v},${v})`;
    if (ctx.measureText(s).width > maxWidth) {
      s = fitMiddle(s, maxWidth, (ch) => ctx.measureText(ch).width);
      if (!s) return;
    }
    ctx.fillText(s, x, y);
  }

  render(cam: Camera): void {
    const t0 = performance.now();
    const ctx = this.ctx;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
    const s = this.scene;
    if (!s) return;
    const l = s.layout;
    this.scale = cam.scale;
    this.lodT = s.polyVertexCount > 0 ? lodPx(cam.scale) : 0;
    const d = this.dpr;
    ctx.setTransform(cam.scale * d, 0, 0, cam.scale * d, cam.tx * d, cam.ty * d);
    const v = cam.visibleWorld();
    const x0 = v.x, y0 = v.y, x1 = v.x + v.w, y1 = v.y + v.h;
    for (let k = 0; k < s.frameRectCount; ++k) this.rect(s.rects, k, x0, y0, x1, y1);
    // Edges.
    const lr = l.direction === 'lr', P = l.points, eb = s.edgeBox;
    ctx.setLineDash([]);
    const edgeCss = rgbCss(kEdgeColor);
    for (let e = 0; e < l.edgeCount; ++e) {
      if (eb[4 * e] > x1 || eb[4 * e + 1] > y1 || eb[4 * e + 2] < x0 || eb[4 * e + 3] < y0) continue;
      if (this.lodT > 0) {
        const f = l.edgeFrom[e], t = l.edgeTo[e];
        const lod = Math.max(s.itemLod[f] ?? kLodNever, s.itemLod[t] ?? kLodNever);
        if (lod * cam.scale < this.lodT) continue;
      }
      const hlv = this.hlEdges.get(e) ?? 0;
      const hl = hlv > 0;
      const b = l.edgePointBegin[e], en = l.edgePointBegin[e + 1];
      if (en - b < 2) continue;
      ctx.beginPath();
      ctx.moveTo(P[2 * b], P[2 * b + 1]);
      for (let p = b; p + 1 < en; ++p) {
        const xa = P[2 * p], ya = P[2 * p + 1], xb = P[2 * p + 2], yb = P[2 * p + 3];
        if (lr) ctx.bezierCurveTo(xa + (xb - xa) / 2, ya, xb - (xb - xa) / 2, yb, xb, yb);
        else ctx.bezierCurveTo(xa, ya + (yb - ya) / 2, xb, yb - (yb - ya) / 2, xb, yb);
      }
      const w = (l.edgeCountArr[e] > 1 ? 1.9 : 1.2) * (hlv === 2 ? 1.8 : hl ? 2.2 : 1);
      ctx.lineWidth = Math.max(w, 0.9 / cam.scale);
      ctx.strokeStyle = hlv === 2 ? rgbCss(kLineageColor) : hl ? rgbCss(kSelectColor) : edgeCss;
      ctx.setLineDash(l.edgeFlags[e] & 1 ? [5.5 / cam.scale, 3.5 / cam.scale] : []);
      ctx.stroke();
      if (cam.scale > 0.08) {
        const xe = P[2 * en - 2], ye = P[2 * en - 1], xp = P[2 * en - 4], yp = P[2 * en - 3];
        const dx = lr ? Math.sign(xe - xp || 1) : 0, dy = lr ? 0 : Math.sign(ye - yp || 1);
        const bx = xe - dx * kArrowLength, by = ye - dy * kArrowLength, hw = kArrowLength / 2;
        ctx.beginPath();
        ctx.moveTo(xe, ye);
        ctx.lineTo(bx - dy * hw, by + dx * hw);
        ctx.lineTo(bx + dy * hw, by - dx * hw);
        ctx.closePath();
        ctx.fillStyle = ctx.strokeStyle;
        ctx.fill();
      }
    }
    ctx.setLineDash([]);
    for (let k = s.frameRectCount; k < s.rectCount; ++k) this.rect(s.rects, k, x0, y0, x1, y1);
    // Silhouettes of small frames (level of detail).
    if (this.lodT > 0) {
      const p = s.polys, T = this.lodT;
      for (let v = 0; v + 3 <= s.polyVertexCount; v += 3) {
        const o = v * kPolyStride;
        if (p[o + 6] * cam.scale < T) break; // sorted by parent lod, descending
        if (!(p[o + 5] * cam.scale < T)) continue;
        ctx.beginPath();
        ctx.moveTo(p[o], p[o + 1]);
        ctx.lineTo(p[o + kPolyStride], p[o + kPolyStride + 1]);
        ctx.lineTo(p[o + 2 * kPolyStride], p[o + 2 * kPolyStride + 1]);
        ctx.closePath();
        ctx.fillStyle = `rgb(${p[o + 2] * 255 | 0},${p[o + 3] * 255 | 0},${p[o + 4] * 255 | 0})`;
        ctx.fill();
        ctx.strokeStyle = ctx.fillStyle;
        ctx.lineWidth = 0.6 / cam.scale; // close the hairline seams between triangles
        ctx.stroke();
      }
    }
    if (++this.mark === 0xffffffff) { this.stamp.fill(0); this.mark = 1; }
    ctx.textBaseline = 'alphabetic';
    collectText(s, x0, y0, x1, y1, cam.scale, this.stamp, this.mark, this);
    // Overlays: matches, then the selection.
    const box = l.itemBox;
    const outline = (i: number, css: string, px: number): void => {
      if (i < 0 || i >= l.itemCount) return;
      ctx.beginPath();
      ctx.roundRect(box[4 * i] - 2, box[4 * i + 1] - 2, box[4 * i + 2] + 4, box[4 * i + 3] + 4, 8);
      ctx.lineWidth = px / cam.scale;
      ctx.strokeStyle = css;
      ctx.stroke();
    };
    if (this.hl.lineage) for (let k = 0; k < this.hl.lineage.length; ++k) outline(this.hl.lineage[k], rgbCss(kLineageColor), 2.5);
    for (let k = 0; k < this.hl.matches.length; ++k) outline(this.hl.matches[k], rgbCss(kMatchColor), 3);
    if (this.hl.linked) for (let k = 0; k < this.hl.linked.length; ++k) outline(this.hl.linked[k], rgbCss(kLinkedColor), 3.5);
    outline(this.hl.selected, rgbCss(kSelectColor), 3.5);
    this.lastFrameMs = performance.now() - t0;
  }

  dispose(): void { /* nothing held */ }
}
