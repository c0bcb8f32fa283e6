// Stable colour per op type, the same in every view and every run: a fixed
// table for the common ONNX ops (families share a hue: convolutions blue,
// activations green, normalisation purple, ...) and a hash of the name for the
// rest. Colours are RGB in [0, 1] for the renderers and CSS strings for DOM.

export type Rgb = [number, number, number];

// The table lives in src/layout/op_palette.json, which the server's SVG
// reads too: one source for both.
import palette from '../../../src/layout/op_palette.json';

interface PaletteFamily { family: string; ops: Record<string, string> }
const kFixed: Record<string, string> = Object.assign(
  {},
  ...(palette.families as unknown as PaletteFamily[]).map((f) => f.ops),
);
const kFallbackSaturation: number = palette.fallback.saturation;
const kFallbackLightness: number = palette.fallback.lightness;
const kOutlineFactor: number = palette.outline_factor;

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; ++i) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

function hexToRgb(hex: string): Rgb {
  const v = parseInt(hex.slice(1), 16);
  return [((v >> 16) & 255) / 255, ((v >> 8) & 255) / 255, (v & 255) / 255];
}

function hslToRgb(h: number, s: number, l: number): Rgb {
  const a = s * Math.min(l, 1 - l);
  const f = (n: number): number => {
    const k = (n + h / 30) % 12;
    return l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
  };
  return [f(0), f(8), f(4)];
}

const cache = new Map<string, Rgb>();

/** Fill colour of an op type. */
export function opColor(op: string): Rgb {
  let c = cache.get(op);
  if (!c) {
    const fixed = kFixed[op];
    c = fixed ? hexToRgb(fixed) : hslToRgb(fnv1a(op) % 360, kFallbackSaturation, kFallbackLightness);
    cache.set(op, c);
  }
  return c;
}

export function rgbCss(c: Rgb, alpha = 1): string {
  const r = Math.round(c[0] * 255), g = Math.round(c[1] * 255), b = Math.round(c[2] * 255);
  return alpha >= 1 ? `rgb(${r},${g},${b})` : `rgba(${r},${g},${b},${alpha})`;
}

/** A darker shade of `c` for outlines. */
export function darker(c: Rgb, f = kOutlineFactor): Rgb {
  return [c[0] * f, c[1] * f, c[2] * f];
}

export function isFixedOp(op: string): boolean {
  return op in kFixed;
}

// Styles of groups by kind (scope, fusion, repeat, chunk), matching the
// server-side SVG (src/layout/layout_encoding.cc StyleOf).
export interface GroupStyle { fill: Rgb; band: Rgb; stroke: Rgb; dashed: boolean }
export const kGroupStyles: GroupStyle[] = [
  { fill: hexToRgb('#f1f4f9'), band: hexToRgb('#dce4f1'), stroke: hexToRgb('#8696b4'), dashed: false },
  { fill: hexToRgb('#fdf3e7'), band: hexToRgb('#f9dfc2'), stroke: hexToRgb('#c3873f'), dashed: false },
  { fill: hexToRgb('#eff7ec'), band: hexToRgb('#d5ebcd'), stroke: hexToRgb('#6f9f62'), dashed: false },
  { fill: hexToRgb('#f4f4f4'), band: hexToRgb('#e3e3e3'), stroke: hexToRgb('#8c8c8c'), dashed: true },
];

export const kIoFill: Rgb = hexToRgb('#eeeeee');
export const kIoStroke: Rgb = hexToRgb('#888888');
// A missing input (a tensor nothing provides): the graph's fault, in red.
export const kFaultFill: Rgb = hexToRgb('#fde8e8');
export const kFaultStroke: Rgb = hexToRgb('#c62828');
export const kEdgeColor: Rgb = hexToRgb('#666666');
export const kSelectColor: Rgb = hexToRgb('#ff6a00');
export const kMatchColor: Rgb = hexToRgb('#ffd400');
export const kBackground: Rgb = [1, 1, 1];

/** Linear mix of two colours: t = 0 → a, 1 → b. */
export function mix(a: Rgb, b: Rgb, t: number): Rgb {
  return [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t];
}

// Heat map ramp (pale yellow → orange → red → dark red), chosen to be
// distinct from the op-type hues and readable in greyscale (lightness falls).
const kHeatStops: Rgb[] = ['#fff7bc', '#fec44f', '#fb9a29', '#e34a33', '#b30000', '#67000d'].map(hexToRgb);

/** Heat map colour of t in [0, 1]. */
export function heatColor(t: number): Rgb {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (kHeatStops.length - 1);
  const k = Math.min(kHeatStops.length - 2, Math.floor(x));
  return mix(kHeatStops[k], kHeatStops[k + 1], x - k);
}

/** CSS linear-gradient of the heat ramp, for the legend. */
export function heatGradientCss(): string {
  return `linear-gradient(to right, ${kHeatStops.map((c) => rgbCss(c)).join(', ')})`;
}

export const kNoDataFill: Rgb = hexToRgb('#e4e4e4');
export const kNoDataStroke: Rgb = hexToRgb('#b4b4b4');
export const kInsertedStroke: Rgb = hexToRgb('#7b3fe4');
export const kFusedMark: Rgb = hexToRgb('#e08a1e');
/** Ancestors / descendants of the selection. */
export const kLineageColor: Rgb = hexToRgb('#2f6fde');
/** Nodes linked to the other pane's selection (fused_from / fused_into). */
export const kLinkedColor: Rgb = hexToRgb('#d0279a');

/**
 * Colour by status (what the link data says of each node): ran (a task
 * linked to it), fused into a compiled node that ran, inserted by the
 * compiler, not executed (no task), and no link data at all (no trace
 * linked to this graph).
 */
export const kStatusRan: Rgb = hexToRgb('#4caf6a');
export const kStatusFused: Rgb = hexToRgb('#3f8fd0');
export const kStatusInserted: Rgb = hexToRgb('#9a6be0');
export const kStatusNotRun: Rgb = hexToRgb('#c9c9c9');
export const kStatusUnlinked: Rgb = hexToRgb('#f4f4f4');

/**
 * Colour by diff (what changed between two runs' graphs): a node added in
 * the new run, removed from the base, changed (matched, but its op type,
 * attributes, shapes, dtypes or layouts differ), renamed (matched by
 * structure, nothing else differs), and unchanged. Timing changes beyond
 * the noise use the diverging scale below (fill of an unchanged node, a
 * thick outline of a changed one: kDiffSlower / kDiffFaster).
 */
export const kDiffAdded: Rgb = hexToRgb('#3fae5a');
export const kDiffRemoved: Rgb = hexToRgb('#e377c2');
export const kDiffChanged: Rgb = hexToRgb('#f2b134');
export const kDiffRenamed: Rgb = hexToRgb('#8e7cc3');
export const kDiffSame: Rgb = hexToRgb('#ededed');
export const kDiffSlower: Rgb = hexToRgb('#b2182b');
export const kDiffFaster: Rgb = hexToRgb('#2166ac');

/**
 * Diverging scale of a time change against a compared run: `t` in [-1, 1]
 * is log2(time / compared time) clamped to halved..doubled; blue faster,
 * white the same, red slower.
 */
export function divergingColor(t: number): Rgb {
  const c = Math.max(-1, Math.min(1, t));
  const white: Rgb = [0.97, 0.97, 0.97];
  return c < 0 ? mix(white, hexToRgb('#2166ac'), -c) : mix(white, hexToRgb('#b2182b'), c);
}
export function divergingGradientCss(): string {
  const stops = [-1, -0.5, 0, 0.5, 1].map((t) => rgbCss(divergingColor(t)));
  return `linear-gradient(to right, ${stops.join(', ')})`;
}

/**
 * Probe marks, drawn as a thick outline in every colour mode: the node
 * that first produced a NaN / Inf (a trigger's producer, else the first in
 * execution order), and the first node whose compare metric failed.
 */
export const kProbeNanMark: Rgb = hexToRgb('#d50000');
export const kProbeDivergentMark: Rgb = hexToRgb('#aa00ff');
/**
 * The training diagnosis' root-cause chain (views/training): the producer
 * (the earliest anomalous layer) in the probe's producer red, the layers
 * that propagated the anomaly in amber.
 */
export const kTrainProducerMark: Rgb = kProbeNanMark;
export const kTrainPropagatorMark: Rgb = hexToRgb('#ff8f00');
