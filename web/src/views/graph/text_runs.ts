// Which text to draw where, shared by both renderers: node titles and names,
// group labels and summaries, frame headers and edge shape labels. Level of
// detail: below kTextMinScale item text is hidden; frames and collapsed
// groups then get a summary label at a constant screen size instead.

import { fmtUs } from '../../base/format';
import { ItemKind, kEdgeShowLabel, opName, type Layout } from '../../rpc/layout_binary';
import { kFontFamily } from './glyph_atlas';
import { kHeaderHeight, lodPx, type Scene } from './scene';

export const kTextMinScale = 0.45;
/** Screen px of the summary labels drawn when zoomed out. */
export const kSummaryPx = 12;

export type Align = 0 | 1 | 2; // left, centre, right
/** Screen px of node op types drawn when zoomed out (overview). */
export const kOverviewNodePx = 10;
/** World px a zoomed-out label may spill past its box (into the rank gaps). */
const kOverviewSpill = 36;

/**
 * `s` cut in the middle to fit `maxWidth` ("layer1.0/c…/Conv"): names differ
 * at both ends (scope in front, the op at the back), so both are kept.
 * `adv` gives a character's advance; '' when not even "x…" fits.
 */
export function fitMiddle(s: string, maxWidth: number, adv: (ch: string) => number): string {
  const chars = Array.from(s);
  let total = 0;
  for (const ch of chars) total += adv(ch);
  if (total <= maxWidth) return s;
  const room = maxWidth - adv('…');
  let head = 0, tail = 0, used = 0;
  // Alternate, front first, so the front keeps the extra character.
  while (head + tail < chars.length) {
    const front = head <= tail;
    const ch = front ? chars[head] : chars[chars.length - 1 - tail];
    const a = adv(ch);
    if (used + a > room) break;
    used += a;
    if (front) head++; else tail++;
  }
  if (head === 0) return '';
  return chars.slice(0, head).join('') + '…' + (tail ? chars.slice(chars.length - tail).join('') : '');
}

/** Rough text width (px at `size`) for placing labels without a font: 0.6 em per character. */
function roughWidth(s: string, size: number, bold: boolean): number {
  return s.length * size * (bold ? 0.6 : 0.55);
}

// Edge labels are placed by their measured width (the font the renderers and
// the SVG use), so the box that is kept clear of nodes and other labels is
// the box the text covers; without a canvas (node), a bound over the
// widest digit. Memoised per label.
const edgeLabelWidths = new Map<string, number>();
let widthCanvas: CanvasRenderingContext2D | null | undefined;
export function edgeLabelWidth(s: string, size: number): number {
  const key = `${size}|${s}`;
  let w = edgeLabelWidths.get(key);
  if (w !== undefined) return w;
  if (widthCanvas === undefined) {
    widthCanvas = typeof document !== 'undefined' ? document.createElement('canvas').getContext('2d') : null;
  }
  if (widthCanvas) {
    widthCanvas.font = `${size}px ${kFontFamily}`;
    w = Math.ceil(widthCanvas.measureText(s).width) + 1;
  } else {
    w = s.length * size * 0.62;
  }
  if (edgeLabelWidths.size > 20000) edgeLabelWidths.clear();
  edgeLabelWidths.set(key, w);
  return w;
}

/** Receives one line of text: baseline at (x, y), world units. */
export interface TextSink {
  text(x: number, y: number, size: number, bold: boolean, align: Align, maxWidth: number, s: string, shade: number): void;
}

function topOpsText(l: Layout, g: number): string {
  const rep = l.groupRepeatOf[g];
  if (rep >= 0) return `same as ${l.str(l.groupLabel[rep])}`;
  const parts: string[] = [];
  for (let k = 0; k < 3; ++k) {
    const op = l.groupTopOps[3 * g + k];
    if (op >= 0) parts.push(`${opName(l, op)} ×${l.groupTopOpCounts[3 * g + k]}`);
  }
  return parts.join(', ');
}

/**
 * Emits the text visible in world rect [x0,x1]×[y0,y1] at `scale`.
 * `stamp`/`mark` dedupe items found in several grid cells.
 */
// Screen rects of the summary labels placed so far (zoomed out), so a nested
// frame whose header lies under its parent's label gets none. Reused.
const placed: number[] = [];
const kMaxSummaryLabels = 400;
// World rects of the frame headers drawn zoomed in (label and node count),
// which edge labels keep clear of; bucketed by cells of kHeaderCell world px
// so a whole-graph export stays linear. Reused.
const kHeaderCell = 256;
const headers = new Map<number, number[]>();
const headerCell = (cx: number, cy: number): number => cx * 65536 + cy;
function addHeader(x: number, y: number, w: number, h: number): void {
  for (let cx = Math.floor(x / kHeaderCell); cx <= Math.floor((x + w) / kHeaderCell); ++cx) {
    for (let cy = Math.floor(y / kHeaderCell); cy <= Math.floor((y + h) / kHeaderCell); ++cy) {
      const k = headerCell(cx, cy);
      const list = headers.get(k);
      if (list) list.push(x, y, x + w, y + h); else headers.set(k, [x, y, x + w, y + h]);
    }
  }
}
function coversHeader(x: number, y: number, w: number, h: number): boolean {
  for (let cx = Math.floor(x / kHeaderCell); cx <= Math.floor((x + w) / kHeaderCell); ++cx) {
    for (let cy = Math.floor(y / kHeaderCell); cy <= Math.floor((y + h) / kHeaderCell); ++cy) {
      const r = headers.get(headerCell(cx, cy));
      if (!r) continue;
      for (let k = 0; k < r.length; k += 4) if (x < r[k + 2] && x + w > r[k] && y < r[k + 3] && y + h > r[k + 1]) return true;
    }
  }
  return false;
}

/** World rects (x, y, w, h) of the edge labels placed by the last collectText (for tests). */
export const edgeLabelRects: number[] = [];

const coverStamp = { arr: new Uint32Array(0), mark: 0 };
/** Whether the rect overlaps an item's box. */
function coversItem(scene: Scene, x: number, y: number, w: number, h: number): boolean {
  const l = scene.layout, b = l.itemBox;
  if (coverStamp.arr.length < l.itemCount) coverStamp.arr = new Uint32Array(l.itemCount);
  if (++coverStamp.mark === 0xffffffff) { coverStamp.arr.fill(0); coverStamp.mark = 1; }
  let hit = false;
  scene.forItemsIn(x, y, x + w, y + h, coverStamp.arr, coverStamp.mark, (i) => {
    if (x < b[4 * i] + b[4 * i + 2] && x + w > b[4 * i] && y < b[4 * i + 1] + b[4 * i + 3] && y + h > b[4 * i + 1]) hit = true;
  });
  return hit;
}

function place(x: number, y: number, w: number, h: number): boolean {
  if (placed.length >= 4 * kMaxSummaryLabels) return false;
  for (let k = 0; k < placed.length; k += 4) {
    if (x < placed[k + 2] && x + w > placed[k] && y < placed[k + 3] && y + h > placed[k + 1]) return false;
  }
  placed.push(x, y, x + w, y + h);
  return true;
}

export function collectText(scene: Scene, x0: number, y0: number, x1: number, y1: number, scale: number,
  stamp: Uint32Array, mark: number, sink: TextSink): void {
  const l = scene.layout;
  placed.length = 0;
  headers.clear();
  edgeLabelRects.length = 0;
  const b = l.itemBox, gb = l.groupBounds;
  const detailed = scale >= kTextMinScale;
  // Inside a silhouette (level of detail): no labels.
  const lodT = scene.polyVertexCount > 0 ? lodPx(scale) : 0;
  // Frame headers (or, zoomed out, summaries over the frame at screen size).
  for (let k = 0; k < l.frameCount; ++k) {
    const g = l.frames[k];
    const x = gb[4 * g], y = gb[4 * g + 1], w = gb[4 * g + 2], h = gb[4 * g + 3];
    if (x > x1 || y > y1 || x + w < x0 || y + h < y0) continue;
    if (scene.frameParentLod[k] * scale < lodT) continue;
    if (detailed) {
      const count = l.groupNodeCount[g];
      sink.text(x + 8, y + 16, 11, true, 0, w - 70, l.str(l.groupLabel[g]), 0.2);
      if (count > 0) sink.text(x + w - 8, y + 16, 9, false, 2, 60, `${count} nodes`, 0.4);
      addHeader(x, y, w, kHeaderHeight);
    } else if (w * scale > 80) {
      const size = kSummaryPx / scale;
      if ((size < kHeaderHeight * 1.5 || h * scale > 3 * kSummaryPx) && place(x, y, w, size * 1.3)) {
        sink.text(x + 6 / scale, y + 4 / scale + size * 0.9, size, true, 0, w - 12 / scale, l.str(l.groupLabel[g]), 0.15);
      }
    }
  }
  scene.forItemsIn(x0, y0, x1, y1, stamp, mark, (i) => {
    const x = b[4 * i], y = b[4 * i + 1], w = b[4 * i + 2], h = b[4 * i + 3];
    const cx = x + w / 2, cy = y + h / 2;
    const kind = l.itemKind[i];
    if (scene.itemLod[i] * scale < lodT) return;
    if (kind === ItemKind.Group) {
      const g = l.itemRef[i];
      // Inside the box while its summary fits there at 9 screen px; a box
      // too small for it on screen gets its lines beside it, as zoomed out.
      const inside = detailed && roughWidth(`${l.groupNodeCount[g]} nodes${scene.itemTime[i] > 0 ? ` · ${fmtUs(scene.itemTime[i])}` : ''}`,
        Math.max(9, 9 / scale), false) <= w - 8;
      if (inside) {
        sink.text(cx, y + 14, 11, true, 1, w - 8, l.str(l.itemTitle[i]), 0.1);
        const t = scene.itemTime[i];
        // Never under 9 screen px: just above the overview's zoom the box is
        // still small on screen and its summary must stay readable.
        sink.text(cx, y + 27, Math.max(9, 9 / scale), false, 1, w - 8, `${l.groupNodeCount[g]} nodes${t > 0 ? ` · ${fmtUs(t)}` : ''}`, 0.2);
        if (h >= 44) sink.text(cx, y + 38, 8, false, 1, w - 8, topOpsText(l, g), 0.33);
      } else if (w * scale > 12 && !(detailed && scale >= 1)) {
        // Overview: the label on the box, then "N nodes · time" and the op
        // mix beside it (below or above left to right, right or left top to
        // bottom: the free side of a chain), at a constant screen size; text
        // that would cover another label is dropped.
        const size = kSummaryPx / scale, small = (kSummaryPx - 2) / scale;
        const room = w + Math.max(kOverviewSpill, 30 / scale);
        const title = l.str(l.itemTitle[i]);
        // The whole title when it covers no other label, else cut to the box and the gaps beside it.
        const full = Math.min(160 / scale, roughWidth(title, size, true));
        const cut = Math.min(room, full);
        // (never over a neighbouring box, where the neighbour's own name goes).
        const whole = full > cut && !coversItem(scene, cx - full / 2, cy - size * 0.6, (full - cut) / 2, size * 1.2)
          && !coversItem(scene, cx + cut / 2, cy - size * 0.6, (full - cut) / 2, size * 1.2)
          && place(cx - full / 2, cy - size * 0.6, full, size * 1.2);
        if (!whole && !place(cx - cut / 2, cy - size * 0.6, cut, size * 1.2)) return;
        sink.text(cx, cy + size * 0.35, size, true, 1, whole ? full : room, title, 0.1);
        const t = scene.itemTime[i];
        const lines = [`${l.groupNodeCount[g]} nodes${t > 0 ? ` · ${fmtUs(t)}` : ''}`, topOpsText(l, g)].filter((x) => x);
        const maxW = 220 / scale;
        const bw = Math.min(maxW, Math.max(...lines.map((x) => roughWidth(x, small, false))));
        const bh = lines.length * small * 1.25;
        const gap = 4 / scale;
        const lrDir = l.direction === 'lr';
        const spots: [number, number][] = lrDir
          ? [[cx - bw / 2, y + h + gap], [cx - bw / 2, y - gap - bh], [cx - bw / 2, y + h + 2 * gap + bh], [cx - bw / 2, y - 2 * gap - 2 * bh]]
          : [[x + w + gap, cy - bh / 2], [x - gap - bw, cy - bh / 2]];
        for (const [sx, sy] of spots) {
          if (coversItem(scene, sx, sy, bw, bh) || !place(sx, sy, bw, bh)) continue;
          lines.forEach((line, k) => sink.text(sx + bw / 2, sy + small * (1.25 * k + 0.95), small, false, 1, maxW, line, 0.25));
          break;
        }
      }
      return;
    }
    if (!detailed) {
      // Overview: the op type of a node at a constant screen size, when it
      // does not cover another label.
      if (kind !== ItemKind.Node || w * scale < 6) return;
      const size = kOverviewNodePx / scale;
      const s = l.str(l.itemTitle[i]);
      const room = w + Math.max(kOverviewSpill, 24 / scale);
      const tw = Math.min(room, roughWidth(s, size, false));
      if (!place(cx - tw / 2, cy - size * 0.6, tw, size * 1.2)) return;
      const c = scene.itemColor;
      const dark = 0.2126 * c[3 * i] + 0.7152 * c[3 * i + 1] + 0.0722 * c[3 * i + 2] < 0.42;
      // Inside the box when it fits there, else dark text over the gap.
      const inside = tw <= w;
      sink.text(cx, cy + size * 0.35, size, false, 1, room, s, inside && dark ? 0.97 : 0.1);
      return;
    }
    if (kind === ItemKind.Node) {
      // Light text on dark fills (the heat map's hot end).
      const c = scene.itemColor;
      const dark = 0.2126 * c[3 * i] + 0.7152 * c[3 * i + 1] + 0.0722 * c[3 * i + 2] < 0.42;
      sink.text(cx, cy - 2, 12, true, 1, w - 4, l.str(l.itemTitle[i]), dark ? 0.97 : 0.1);
      sink.text(cx, cy + 12, 10, false, 1, w - 4, l.str(l.itemSubtitle[i]), dark ? 0.88 : 0.2);
    } else {
      sink.text(cx, cy + 4, 12, false, 1, w - 4, l.str(l.itemTitle[i]), 0.1);
    }
  });
  if (!detailed) return;
  // Edge labels: beside the midpoint of the longest segment, as the SVG does.
  const eb = scene.edgeBox, P = l.points;
  for (let e = 0; e < l.edgeCount; ++e) {
    if (!(l.edgeFlags[e] & kEdgeShowLabel) && l.edgeCountArr[e] <= 1) continue;
    if (eb[4 * e] > x1 || eb[4 * e + 1] > y1 || eb[4 * e + 2] < x0 || eb[4 * e + 3] < y0) continue;
    const shape = (l.edgeFlags[e] & kEdgeShowLabel) ? l.str(l.edgeLabel[e]) : '';
    const n = l.edgeCountArr[e];
    const label = n > 1 ? (shape ? `×${n} ${shape}` : `×${n}`) : shape;
    if (!label) continue;
    // Candidates: beside the midpoint of each segment, longest first; the
    // first whose text covers no item and no other label wins, else none.
    const segs: [number, number][] = [];
    for (let p = l.edgePointBegin[e]; p + 1 < l.edgePointBegin[e + 1]; ++p) {
      segs.push([p, Math.hypot(P[2 * p + 2] - P[2 * p], P[2 * p + 3] - P[2 * p + 1])]);
    }
    segs.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    const tw = Math.min(200, edgeLabelWidth(label, 9)), th = 11;
    for (const [p] of segs) {
      const mx = (P[2 * p] + P[2 * p + 2]) / 2, my = (P[2 * p + 1] + P[2 * p + 3]) / 2;
      const lrDir = l.direction === 'lr';
      // The text's box: centred above the point (lr) or right of it (tb).
      const rx = lrDir ? mx - tw / 2 : mx + 4, ry = lrDir ? my - 4 - th + 2 : my + 3 - th + 2;
      if (coversItem(scene, rx, ry, tw, th) || coversHeader(rx, ry, tw, th) || !place(rx, ry, tw, th)) continue;
      // Drawn within the box it was placed by (a longer one is cut there).
      if (lrDir) sink.text(mx, my - 4, 9, false, 1, tw, label, 0.33);
      else sink.text(mx + 4, my + 3, 9, false, 0, tw, label, 0.33);
      edgeLabelRects.push(rx, ry, tw, th);
      break;
    }
  }
}
