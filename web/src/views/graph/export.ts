// Export of a pane's graph as SVG and PNG, of the whole graph, the
// selection or the visible view, at a chosen scale, and downloads of the
// server's Model Explorer JSON. The SVG is the scene serialised for a world
// rectangle with the same order, level of detail and text as the renderers
// (frames, edges as spline paths by the rule of layout-binary.md,
// arrowheads, items, silhouettes, highlights, text); the PNG is that SVG
// rasterised at the chosen scale (so it is not bound to the canvas's size),
// within the browser's canvas limits (a larger export is scaled down, and
// the menu says so). The export menu closes after a choice.

import type { Camera } from './camera';
import { ItemKind } from '../../rpc/layout_binary';
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

/** The canvas as a PNG. */
export function canvasPng(canvas: HTMLCanvasElement): Promise<Blob> {
  return new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('the canvas gave no PNG'))), 'image/png'));
}

/** A rectangle in world (layout) coordinates. */
export interface WorldRect { x: number; y: number; w: number; h: number }

/** What an export covers. */
export type ExportExtent = 'graph' | 'selection' | 'view';

/** Margin (world px) around the whole graph or the selection. */
const kExportMargin = 16;
/** Chromium's canvas limits, kept well inside: longest side and area (px). */
export const kMaxExportSide = 16384;
export const kMaxExportArea = 100e6;

/**
 * The world rectangle an export covers: the whole layout, the selection
 * (the selected node or group with the items outlined with it: lineage,
 * linked nodes, the critical path; else the search matches), or the view.
 * Null when the selection is asked and nothing is selected or matched.
 */
export function exportRect(scene: Scene, cam: Camera, hl: Highlights, extent: ExportExtent, selectedGroup = -1): WorldRect | null {
  const l = scene.layout;
  const gb = l.groupBounds;
  if (extent === 'view') return cam.visibleWorld();
  if (extent === 'graph') return { x: -kExportMargin, y: -kExportMargin, w: l.width + 2 * kExportMargin, h: l.height + 2 * kExportMargin };
  let items: number[] = [];
  if (hl.selected >= 0) items.push(hl.selected);
  for (const a of [hl.lineage, hl.linked]) if (a) for (let k = 0; k < a.length; ++k) items.push(a[k]);
  if (!items.length) items = Array.from(hl.matches);
  items = items.filter((i) => i >= 0 && i < l.itemCount);
  const boxes: number[][] = items.map((i) => {
    const b = l.itemBox;
    return [b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]];
  });
  // A selected frame (an expanded group): its bounds.
  const g = selectedGroup;
  if (hl.selected < 0 && g > 0 && g < l.groupCount && !items.some((i) => l.itemKind[i] === ItemKind.Group && l.itemRef[i] === g)) {
    boxes.push([gb[4 * g], gb[4 * g + 1], gb[4 * g + 2], gb[4 * g + 3]]);
  }
  if (!boxes.length) return null;
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const [x, y, w, h] of boxes) {
    x0 = Math.min(x0, x); y0 = Math.min(y0, y); x1 = Math.max(x1, x + w); y1 = Math.max(y1, y + h);
  }
  return { x: x0 - kExportMargin, y: y0 - kExportMargin, w: x1 - x0 + 2 * kExportMargin, h: y1 - y0 + 2 * kExportMargin };
}

/**
 * The output scale (image px per world px) for `rect` at `scale`, lowered
 * so the image stays inside the canvas limits; `clamped` when it was.
 */
export function fitScale(rect: WorldRect, scale: number): { scale: number; clamped: boolean } {
  let s = scale;
  s = Math.min(s, kMaxExportSide / Math.max(1, rect.w), kMaxExportSide / Math.max(1, rect.h));
  s = Math.min(s, Math.sqrt(kMaxExportArea / Math.max(1, rect.w * rect.h)));
  return { scale: s, clamped: s < scale - 1e-9 };
}

/** Rasterises SVG text into a `w` x `h` PNG (the SVG's own width and height). */
export async function svgPng(svg: string, w: number, h: number): Promise<Blob> {
  const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  try {
    const img = new Image();
    img.decoding = 'async';
    img.src = url;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = w;
    c.height = h;
    const g = c.getContext('2d');
    if (!g) throw new Error('no 2D canvas for the PNG');
    g.fillStyle = '#fff';
    g.fillRect(0, 0, w, h);
    g.drawImage(img, 0, 0, w, h);
    return await canvasPng(c);
  } finally {
    URL.revokeObjectURL(url);
  }
}

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const n2 = (v: number): string => (Math.round(v * 100) / 100).toString();
const css = (r: Float32Array | number[], o: number): string => rgbCss([r[o], r[o + 1], r[o + 2]] as Rgb);

/**
 * SVG of the world rectangle `v` of `scene` drawn at `scale` (image px per
 * world px: the level of detail and the line widths follow it), with
 * highlights `hl`; its width and height are `v` times `scale`, rounded.
 */
export function sceneSvg(scene: Scene, v: WorldRect, scale: number, hl: Highlights): string {
  const l = scene.layout;
  const x0 = v.x, y0 = v.y, x1 = v.x + v.w, y1 = v.y + v.h;
  const T = scene.polyVertexCount > 0 ? lodPx(scale) : 0;
  const out: string[] = [];
  const W = Math.max(1, Math.round(v.w * scale)), H = Math.max(1, Math.round(v.h * scale));
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="${n2(x0)} ${n2(y0)} ${n2(v.w)} ${n2(v.h)}" font-family="${esc(kFontFamily)}">`);
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

/** What the export menu needs of the graph view. */
export interface ExportHost {
  /** The pane exported: its scene, camera, highlights, selected group, level. */
  exportPane(): { scene: Scene | null; cam: Camera; highlights: Highlights; selectedGroup: number; level: string } | null;
  modelExplorer(what: 'graph' | 'node-data'): Promise<void>;
  /** Where the menu reports a failure. */
  banner(message: string | null): void;
}

/** The last export, for the tests and the menu's note. */
export interface ExportRecord {
  kind: 'png' | 'svg';
  extent: ExportExtent;
  rect: WorldRect;
  /** The scale asked, and the one used (lower when the image would pass the canvas limits). */
  scaleAsked: number;
  scale: number;
  width: number;
  height: number;
  name: string;
}

/**
 * The header's export menu: extent (whole graph / selection / view) and
 * scale, then PNG, SVG or Model Explorer JSON. The menu closes after a
 * choice (and on Escape or a click elsewhere).
 */
export class ExportMenu {
  last: ExportRecord | null = null;

  constructor(private readonly host: ExportHost, private readonly menu: HTMLDetailsElement,
    private readonly extent: HTMLSelectElement, private readonly scale: HTMLSelectElement, private readonly note: HTMLElement) {
    const on = (id: string, f: () => Promise<unknown>): void => {
      document.getElementById(id)?.addEventListener('click', () => {
        this.menu.open = false;
        f().catch((e: Error) => this.host.banner(`export: ${e.message}`));
      });
    };
    on('export-png', () => this.export('png'));
    on('export-svg', () => this.export('svg'));
    on('export-me-graph', () => this.host.modelExplorer('graph'));
    on('export-me-data', () => this.host.modelExplorer('node-data'));
    document.addEventListener('pointerdown', (e) => {
      if (this.menu.open && !this.menu.contains(e.target as Node)) this.menu.open = false;
    });
  }

  /** Exports the active pane as `kind` with the menu's extent and scale (downloaded as `name`). */
  async export(kind: 'png' | 'svg', name?: string): Promise<ExportRecord | null> {
    const p = this.host.exportPane();
    if (!p || !p.scene) throw new Error('no graph to export');
    const extent = this.extent.value as ExportExtent;
    const asked = Math.max(0.25, parseFloat(this.scale.value) || 1);
    const rect = exportRect(p.scene, p.cam, p.highlights, extent, p.selectedGroup);
    if (!rect) {
      // The menu stays open with the reason.
      this.note.textContent = 'nothing selected: select a node or group (or search) to export the selection';
      this.menu.open = true;
      return null;
    }
    // The view's scale times the asked one for the view; the asked one for the rest.
    const wanted = extent === 'view' ? p.cam.scale * asked : asked;
    const { scale, clamped } = fitScale(rect, wanted);
    const svg = sceneSvg(p.scene, rect, scale, p.highlights);
    const width = Math.max(1, Math.round(rect.w * scale)), height = Math.max(1, Math.round(rect.h * scale));
    const title = (p.scene.layout.title || 'graph').replace(/[^\w.-]+/g, '_');
    const file = name ?? `${title}-${p.level}-${extent}.${kind}`;
    const blob = kind === 'svg' ? new Blob([svg], { type: 'image/svg+xml' }) : await svgPng(svg, width, height);
    download(blob, file);
    this.last = { kind, extent, rect, scaleAsked: wanted, scale, width, height, name: file };
    this.note.textContent = `${kind.toUpperCase()} ${width} × ${height} px` +
      (clamped ? ` (scaled to ${(scale / (extent === 'view' ? p.cam.scale : 1)).toFixed(2)}×: the browser's canvas limit)` : '');
    return this.last;
  }
}
