// Export of the current view: PNG (the canvas as drawn) and SVG (the scene
// serialised for the visible world rectangle, with the same order, level of
// detail and text as the renderers: frames, edges as spline paths by the rule
// of layout-binary.md, arrowheads, items, silhouettes, highlights, text), and
// downloads of the server's Model Explorer JSON.

import type { Camera } from './camera';
import { kFontFamily } from './glyph_atlas';
import { kEdgeReversed } from '../../rpc/layout_binary';
import { kEdgeColor, kLineageColor, kLinkedColor, kMatchColor, kSelectColor, rgbCss, type Rgb } from '../../base/palette';
import { edgeHighlights, type Highlights } from './renderer';
import {
  kArrowLength, kLodNever, kPolyStride, kRectDashed, kRectStride, kRectTopRounded, lodPx, type Scene,
} from './scene';
import { collectText, type Align, type TextSink } from './text_runs';

/** Saves a blob as a file (an <a download> click). */
export function download(blob: Blob, name: string): void {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

/** The canvas as a PNG (the WebGL context keeps its drawing buffer). */
export function canvasPng(canvas: HTMLCanvasElement): Promise<Blob> {
  return new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('the canvas gave no PNG'))), 'image/png'));
}

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const n2 = (v: number): string => (Math.round(v * 100) / 100).toString();
const css = (r: Float32Array | number[], o: number): string => rgbCss([r[o], r[o + 1], r[o + 2]] as Rgb);

/** SVG of what `cam` shows of `scene`, with highlights `hl`. */
export function sceneSvg(scene: Scene, cam: Camera, hl: Highlights): string {
  const l = scene.layout;
  const v = cam.visibleWorld();
  const x0 = v.x, y0 = v.y, x1 = v.x + v.w, y1 = v.y + v.h;
  const scale = cam.scale;
  const T = scene.polyVertexCount > 0 ? lodPx(scale) : 0;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${n2(cam.viewW)}" height="${n2(cam.viewH)}" viewBox="${n2(x0)} ${n2(y0)} ${n2(v.w)} ${n2(v.h)}" font-family="${esc(kFontFamily)}">`);
  out.push(`<title>${esc(l.title)}</title>`);
  out.push(`<rect x="${n2(x0)}" y="${n2(y0)}" width="${n2(v.w)}" height="${n2(v.h)}" fill="#fff"/>`);
  const rect = (k: number): void => {
    const R = scene.rects, o = k * kRectStride;
    const x = R[o], y = R[o + 1], w = R[o + 2], h = R[o + 3];
    if (x > x1 || y > y1 || x + w < x0 || y + h < y0) return;
    if (R[o + 14] * scale < T) return;
    const flags = R[o + 13];
    const rad = Math.min(R[o + 12], w / 2, h / 2);
    const sw = R[o + 11];
    const strokeW = sw > 0 ? Math.min(3, Math.max(0.6, sw * scale)) / scale : -sw / scale;
    const stroke = sw !== 0 ? ` stroke="${css(R, o + 8)}" stroke-width="${n2(strokeW)}"${flags & kRectDashed ? ' stroke-dasharray="4 3"' : ''}` : '';
    const fill = R[o + 7] > 0 ? css(R, o + 4) : 'none';
    if (flags & kRectTopRounded) {
      out.push(`<path d="M${n2(x)},${n2(y + h)}V${n2(y + rad)}Q${n2(x)},${n2(y)} ${n2(x + rad)},${n2(y)}H${n2(x + w - rad)}Q${n2(x + w)},${n2(y)} ${n2(x + w)},${n2(y + rad)}V${n2(y + h)}Z" fill="${fill}"${stroke}/>`);
    } else {
      out.push(`<rect x="${n2(x)}" y="${n2(y)}" width="${n2(w)}" height="${n2(h)}" rx="${n2(rad)}" fill="${fill}"${stroke}/>`);
    }
  };
  out.push('<g class="frames">');
  for (let k = 0; k < scene.frameRectCount; ++k) rect(k);
  out.push('</g><g class="edges" fill="none">');
  const hlEdges = edgeHighlights(scene, hl);
  const lr = l.direction === 'lr', P = l.points, eb = scene.edgeBox;
  const arrows: string[] = [];
  for (let e = 0; e < l.edgeCount; ++e) {
    if (eb[4 * e] > x1 || eb[4 * e + 1] > y1 || eb[4 * e + 2] < x0 || eb[4 * e + 3] < y0) continue;
    if (T > 0 && Math.max(scene.itemLod[l.edgeFrom[e]] ?? kLodNever, scene.itemLod[l.edgeTo[e]] ?? kLodNever) * scale < T) continue;
    const b = l.edgePointBegin[e], en = l.edgePointBegin[e + 1];
    if (en - b < 2) continue;
    // The spline rule: per piece a cubic with control points half-way along the main axis.
    let d = `M${n2(P[2 * b])},${n2(P[2 * b + 1])}`;
    for (let p = b; p + 1 < en; ++p) {
      const xa = P[2 * p], ya = P[2 * p + 1], xb = P[2 * p + 2], yb = P[2 * p + 3];
      if (lr) d += `C${n2(xa + (xb - xa) / 2)},${n2(ya)} ${n2(xb - (xb - xa) / 2)},${n2(yb)} ${n2(xb)},${n2(yb)}`;
      else d += `C${n2(xa)},${n2(ya + (yb - ya) / 2)} ${n2(xb)},${n2(yb - (yb - ya) / 2)} ${n2(xb)},${n2(yb)}`;
    }
    const h = hlEdges.get(e) ?? 0;
    const colour = rgbCss(h === 2 ? kLineageColor : h === 1 ? kSelectColor : kEdgeColor);
    const w = (l.edgeCountArr[e] > 1 ? 1.9 : 1.2) * (h === 2 ? 1.8 : h === 1 ? 2.2 : 1);
    out.push(`<path d="${d}" stroke="${colour}" stroke-width="${n2(Math.max(w, 0.9 / scale))}"${l.edgeFlags[e] & kEdgeReversed ? ' stroke-dasharray="5.5 3.5"' : ''}/>`);
    if (scale > 0.08) {
      const xe = P[2 * en - 2], ye = P[2 * en - 1], xp = P[2 * en - 4], yp = P[2 * en - 3];
      const dx = lr ? Math.sign(xe - xp || 1) : 0, dy = lr ? 0 : Math.sign(ye - yp || 1);
      const bx = xe - dx * kArrowLength, by = ye - dy * kArrowLength, hw = kArrowLength / 2;
      arrows.push(`<path d="M${n2(xe)},${n2(ye)}L${n2(bx - dy * hw)},${n2(by + dx * hw)}L${n2(bx + dy * hw)},${n2(by - dx * hw)}Z" fill="${colour}"/>`);
    }
  }
  out.push('</g><g class="arrows">', ...arrows, '</g><g class="items">');
  for (let k = scene.frameRectCount; k < scene.rectCount; ++k) rect(k);
  out.push('</g>');
  if (T > 0) {
    out.push('<g class="silhouettes">');
    const p = scene.polys;
    for (let vtx = 0; vtx + 3 <= scene.polyVertexCount; vtx += 3) {
      const o = vtx * kPolyStride;
      if (!(p[o + 5] * scale < T && p[o + 6] * scale >= T)) continue;
      const pts = [0, 1, 2].map((j) => `${n2(p[o + j * kPolyStride])},${n2(p[o + j * kPolyStride + 1])}`).join(' ');
      out.push(`<polygon points="${pts}" fill="${css(p, o + 2)}" stroke="${css(p, o + 2)}" stroke-width="${n2(0.6 / scale)}"/>`);
    }
    out.push('</g>');
  }
  // Highlights: lineage, matches, linked, selection.
  out.push('<g class="highlights" fill="none">');
  const box = l.itemBox;
  const outline = (i: number, c: Rgb, px: number): void => {
    if (i < 0 || i >= l.itemCount) return;
    out.push(`<rect x="${n2(box[4 * i] - 2)}" y="${n2(box[4 * i + 1] - 2)}" width="${n2(box[4 * i + 2] + 4)}" height="${n2(box[4 * i + 3] + 4)}" rx="8" stroke="${rgbCss(c)}" stroke-width="${n2(px / scale)}"/>`);
  };
  if (hl.lineage) for (let k = 0; k < hl.lineage.length; ++k) outline(hl.lineage[k], kLineageColor, 2.5);
  for (let k = 0; k < hl.matches.length; ++k) outline(hl.matches[k], kMatchColor, 3);
  if (hl.linked) for (let k = 0; k < hl.linked.length; ++k) outline(hl.linked[k], kLinkedColor, 3.5);
  outline(hl.selected, kSelectColor, 3.5);
  out.push('</g><g class="text">');
  // Text: the same runs the renderers draw, truncated with a Canvas2D measure.
  const measure = document.createElement('canvas').getContext('2d')!;
  const sink: TextSink = {
    text(x: number, y: number, size: number, bold: boolean, align: Align, maxWidth: number, s: string, shade: number): void {
      if (!s || maxWidth <= 0) return;
      measure.font = `${bold ? 'bold ' : ''}${size}px ${kFontFamily}`;
      if (measure.measureText(s).width > maxWidth) {
        const chars = Array.from(s);
        while (chars.length > 1 && measure.measureText(chars.join('') + '…').width > maxWidth) chars.pop();
        s = chars.join('') + '…';
      }
      const g = Math.round(shade * 255);
      const anchor = align === 0 ? 'start' : align === 1 ? 'middle' : 'end';
      out.push(`<text x="${n2(x)}" y="${n2(y)}" font-size="${n2(size)}"${bold ? ' font-weight="bold"' : ''} text-anchor="${anchor}" fill="rgb(${g},${g},${g})">${esc(s)}</text>`);
    },
  };
  collectText(scene, x0, y0, x1, y1, scale, new Uint32Array(l.itemCount), 1, sink);
  out.push('</g></svg>');
  return out.join('\n');
}
