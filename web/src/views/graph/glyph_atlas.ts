// Glyph atlas for the WebGL renderer: glyphs are drawn once with Canvas2D
// (system sans-serif, no web fonts) into a texture; text becomes one textured
// quad per glyph. Printable ASCII is drawn up front; other characters are
// added on first use (the texture is re-uploaded once per frame at most).

const kPx = 40; // raster size of the atlas font
const kCellH = 52;
const kAtlasW = 2048;
const kAtlasH = 2048;
export const kFontFamily = 'system-ui, "Segoe UI", Helvetica, Arial, sans-serif';

export interface Glyph { u0: number; v0: number; u1: number; v1: number; advance: number; w: number }

export class GlyphAtlas {
  readonly canvas: HTMLCanvasElement | OffscreenCanvas;
  private readonly ctx: CanvasRenderingContext2D | OffscreenCanvasRenderingContext2D;
  private readonly glyphs = new Map<string, Glyph>();
  private x = 0;
  private y = 0;
  dirty = true;
  /** Atlas units → world units: multiply by size / kPx. */
  static readonly px = kPx;
  static readonly ascent = 0.8;

  constructor() {
    this.canvas = typeof OffscreenCanvas !== 'undefined' ? new OffscreenCanvas(kAtlasW, kAtlasH) : Object.assign(document.createElement('canvas'), { width: kAtlasW, height: kAtlasH });
    this.ctx = this.canvas.getContext('2d') as CanvasRenderingContext2D;
    this.ctx.textBaseline = 'alphabetic';
    this.ctx.fillStyle = '#fff';
    for (const bold of [false, true]) for (let c = 32; c < 127; ++c) this.get(String.fromCharCode(c), bold);
    for (const ch of '×…') { this.get(ch, false); this.get(ch, true); }
  }

  get(ch: string, bold: boolean): Glyph {
    const key = bold ? '\u0001' + ch : ch;
    let g = this.glyphs.get(key);
    if (g) return g;
    const ctx = this.ctx;
    ctx.font = `${bold ? 'bold ' : ''}${kPx}px ${kFontFamily}`;
    const adv = ctx.measureText(ch).width;
    const w = Math.ceil(adv) + 4;
    if (this.x + w > kAtlasW) { this.x = 0; this.y += kCellH; }
    if (this.y + kCellH > kAtlasH) {
      // Full: fall back to '?' rather than growing without bound.
      return this.glyphs.get(bold ? '\u0001?' : '?') ?? { u0: 0, v0: 0, u1: 0, v1: 0, advance: adv, w: 0 };
    }
    ctx.fillText(ch, this.x + 2, this.y + kPx * GlyphAtlas.ascent + 4);
    g = {
      u0: this.x / kAtlasW, v0: this.y / kAtlasH, u1: (this.x + w) / kAtlasW, v1: (this.y + kCellH) / kAtlasH,
      advance: adv, w,
    };
    this.x += w + 2;
    this.glyphs.set(key, g);
    this.dirty = true;
    return g;
  }

  /** Width of `s` in atlas px. */
  measure(s: string, bold: boolean): number {
    let w = 0;
    for (const ch of s) w += this.get(ch, bold).advance;
    return w;
  }

  static get cellH(): number { return kCellH; }
}
