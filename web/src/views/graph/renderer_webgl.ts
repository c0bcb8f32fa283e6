// WebGL2 renderer: one instanced draw for all frame rects, one for the edge
// segments (thick anti-aliased quads, dashed for back edges), one triangle
// batch for arrowheads, one for item rects, one for glyph quads. Geometry is
// uploaded once per Scene; a frame only sets uniforms, so panning a 100k-node
// layout allocates nothing. Text is rebuilt only when the view leaves the
// region it was built for (or, zoomed out, when the zoom changes).

import type { Camera } from './camera';
import { GlyphAtlas } from './glyph_atlas';
import { kBackground, kEdgeColor, kLineageColor, kLinkedColor, kMatchColor, kSelectColor } from '../../base/palette';
import { edgeHighlights, type Highlights, type Renderer } from './renderer';
import {
  descPrefix, FloatBuilder, kLodNever, kPolyStride, kRectStride, kSegStride, lodPrefix, lodPx, visibleRange, type CulledBatch, type LodBatch,
  type Scene,
} from './scene';
import { collectText, fitMiddle, kTextMinScale, type Align, type TextSink } from './text_runs';

const kRectVs = `#version 300 es
layout(location=0) in vec2 a_corner;
layout(location=1) in vec4 a_box;
layout(location=2) in vec4 a_fill;
layout(location=3) in vec4 a_stroke;
layout(location=4) in vec3 a_extra;
uniform vec2 u_view; uniform float u_scale; uniform vec2 u_t; uniform float u_lodPx;
out vec2 v_p; out vec2 v_half; out vec4 v_fill; out vec4 v_stroke; out float v_r; flat out float v_flags;
void main() {
  // Inside a frame drawn as its silhouette: skip (outside the clip volume).
  if (a_extra.z * u_scale < u_lodPx) { gl_Position = vec4(2.0, 2.0, 2.0, 1.0); return; }
  float sw = a_stroke.w > 0.0 ? clamp(a_stroke.w * u_scale, 0.6, 3.0) : -a_stroke.w;
  float pad = (1.5 + sw) / u_scale;
  vec2 pos = a_box.xy - pad + a_corner * (a_box.zw + 2.0 * pad);
  vec2 c = a_box.xy + a_box.zw * 0.5;
  v_p = (pos - c) * u_scale;
  v_half = max(a_box.zw * 0.5 * u_scale, vec2(0.35));
  v_r = min(a_extra.x * u_scale, min(v_half.x, v_half.y));
  v_flags = a_extra.y;
  v_fill = a_fill;
  v_stroke = vec4(a_stroke.rgb, sw);
  vec2 s = pos * u_scale + u_t;
  gl_Position = vec4(s.x / u_view.x * 2.0 - 1.0, 1.0 - s.y / u_view.y * 2.0, 0.0, 1.0);
}`;

const kRectFs = `#version 300 es
precision highp float;
in vec2 v_p; in vec2 v_half; in vec4 v_fill; in vec4 v_stroke; in float v_r; flat in float v_flags;
out vec4 o;
void main() {
  bool topOnly = mod(v_flags, 4.0) >= 2.0;
  bool dashed = mod(v_flags, 2.0) >= 1.0;
  float r = (topOnly && v_p.y > 0.0) ? 0.0 : v_r;
  vec2 q = abs(v_p) - v_half + r;
  float d = length(max(q, 0.0)) + min(max(q.x, q.y), 0.0) - r;
  float cover = 1.0 - clamp(d + 0.5, 0.0, 1.0);
  float sw = v_stroke.w;
  float band = sw > 0.0 ? clamp(d + sw + 0.5, 0.0, 1.0) : 0.0;
  if (dashed && mod(v_p.x + v_p.y, 7.0) > 4.0) band = 0.0;
  vec3 col = mix(v_fill.rgb, v_stroke.rgb, band);
  float a = cover * mix(v_fill.a, 1.0, band);
  if (a <= 0.0) discard;
  o = vec4(col * a, a);
}`;

const kSegVs = `#version 300 es
layout(location=0) in vec2 a_corner;
layout(location=1) in vec4 a_seg;
layout(location=2) in vec4 a_attr;
layout(location=3) in float a_lod;
uniform vec2 u_view; uniform float u_scale; uniform vec2 u_t; uniform float u_lodPx;
out float v_across; out float v_dist; flat out float v_hw; flat out float v_dashed; flat out float v_hl;
void main() {
  if (a_lod * u_scale < u_lodPx) { gl_Position = vec4(2.0, 2.0, 2.0, 1.0); return; }
  vec2 a = a_seg.xy * u_scale + u_t, b = a_seg.zw * u_scale + u_t;
  vec2 d = b - a; float len = length(d);
  vec2 dir = len > 1e-4 ? d / len : vec2(1.0, 0.0);
  vec2 n = vec2(-dir.y, dir.x);
  float hl = a_attr.w;
  float hw = max(a_attr.x * u_scale, 0.9) * 0.5 * (hl > 1.5 ? 1.8 : hl > 0.0 ? 2.2 : 1.0);
  float ext = hw + 1.0;
  vec2 p = mix(a, b, a_corner.x) + dir * (a_corner.x * 2.0 - 1.0) * hw * 0.5 + n * a_corner.y * ext;
  v_across = a_corner.y * ext;
  v_dist = a_attr.y * u_scale + a_corner.x * len;
  v_hw = hw; v_dashed = a_attr.z; v_hl = hl;
  gl_Position = vec4(p.x / u_view.x * 2.0 - 1.0, 1.0 - p.y / u_view.y * 2.0, 0.0, 1.0);
}`;

const kSegFs = `#version 300 es
precision highp float;
in float v_across; in float v_dist; flat in float v_hw; flat in float v_dashed; flat in float v_hl;
uniform vec3 u_color; uniform vec3 u_hl; uniform vec3 u_hl2;
out vec4 o;
void main() {
  float a = clamp(v_hw + 0.5 - abs(v_across), 0.0, 1.0);
  if (v_dashed > 0.5 && mod(v_dist, 9.0) > 5.5) discard;
  vec3 c = v_hl > 1.5 ? u_hl2 : v_hl > 0.0 ? u_hl : u_color;
  o = vec4(c * a, a);
}`;

const kFlatVs = `#version 300 es
layout(location=0) in vec2 a_pos;
uniform vec2 u_view; uniform float u_scale; uniform vec2 u_t;
void main() {
  vec2 s = a_pos * u_scale + u_t;
  gl_Position = vec4(s.x / u_view.x * 2.0 - 1.0, 1.0 - s.y / u_view.y * 2.0, 0.0, 1.0);
}`;

const kFlatFs = `#version 300 es
precision highp float;
uniform vec3 u_color; out vec4 o;
void main() { o = vec4(u_color, 1.0); }`;

// Silhouettes of frames (level of detail): drawn where the frame is small on
// screen and the frame around it is not.
const kPolyVs = `#version 300 es
layout(location=0) in vec2 a_pos;
layout(location=1) in vec3 a_color;
layout(location=2) in vec2 a_lod;
uniform vec2 u_view; uniform float u_scale; uniform vec2 u_t; uniform float u_lodPx;
out vec3 v_color;
void main() {
  if (!(a_lod.x * u_scale < u_lodPx && a_lod.y * u_scale >= u_lodPx)) { gl_Position = vec4(2.0, 2.0, 2.0, 1.0); return; }
  v_color = a_color;
  vec2 s = a_pos * u_scale + u_t;
  gl_Position = vec4(s.x / u_view.x * 2.0 - 1.0, 1.0 - s.y / u_view.y * 2.0, 0.0, 1.0);
}`;

const kPolyFs = `#version 300 es
precision highp float;
in vec3 v_color; out vec4 o;
void main() { o = vec4(v_color, 1.0); }`;

const kGlyphVs = `#version 300 es
layout(location=0) in vec2 a_corner;
layout(location=1) in vec4 a_box;
layout(location=2) in vec4 a_uv;
layout(location=3) in float a_shade;
uniform vec2 u_view; uniform float u_scale; uniform vec2 u_t;
out vec2 v_uv; flat out float v_shade;
void main() {
  vec2 pos = a_box.xy + a_corner * a_box.zw;
  v_uv = mix(a_uv.xy, a_uv.zw, a_corner);
  v_shade = a_shade;
  vec2 s = pos * u_scale + u_t;
  gl_Position = vec4(s.x / u_view.x * 2.0 - 1.0, 1.0 - s.y / u_view.y * 2.0, 0.0, 1.0);
}`;

const kGlyphFs = `#version 300 es
precision highp float;
in vec2 v_uv; flat in float v_shade;
uniform sampler2D u_tex;
out vec4 o;
void main() {
  float a = texture(u_tex, v_uv).a;
  if (a <= 0.0) discard;
  o = vec4(vec3(v_shade) * a, a);
}`;

interface Program {
  p: WebGLProgram; view: WebGLUniformLocation | null; scale: WebGLUniformLocation | null; t: WebGLUniformLocation | null;
  color: WebGLUniformLocation | null; hl: WebGLUniformLocation | null; hl2: WebGLUniformLocation | null;
  tex: WebGLUniformLocation | null; lod: WebGLUniformLocation | null;
}

const kGlyphStride = 9; // x y w h u0 v0 u1 v1 shade
const kRectAttrs = [[1, 4, 0], [2, 4, 16], [3, 4, 32], [4, 3, 48]] as const;
const kSegAttrs = [[1, 4, 0], [2, 4, 16], [3, 1, 32]] as const;

/** Creates the WebGL2 renderer, or null when WebGL2 is not available. */
export function createWebGLRenderer(canvas: HTMLCanvasElement): WebGLRenderer | null {
  const gl = canvas.getContext('webgl2', { antialias: false, premultipliedAlpha: true, alpha: false, preserveDrawingBuffer: true });
  if (!gl) return null;
  try {
    return new WebGLRenderer(canvas, gl);
  } catch (e) {
    console.warn('WebGL2 renderer failed, using Canvas2D:', e);
    return null;
  }
}

export class WebGLRenderer implements Renderer, TextSink {
  readonly kind = 'webgl2';
  private readonly rectProg: Program;
  private readonly segProg: Program;
  private readonly flatProg: Program;
  private readonly polyProg: Program;
  private readonly polyVao: WebGLVertexArrayObject;
  private readonly polyBuf: WebGLBuffer;
  private readonly frameLodBuf: WebGLBuffer;
  private readonly frameLodVao: WebGLVertexArrayObject;
  private readonly itemLodBuf: WebGLBuffer;
  private readonly itemLodVao: WebGLVertexArrayObject;
  private readonly glyphProg: Program;
  private readonly rectVao: WebGLVertexArrayObject;
  private readonly overlayVao: WebGLVertexArrayObject;
  private readonly segVao: WebGLVertexArrayObject;
  private readonly arrowVao: WebGLVertexArrayObject;
  private readonly glyphVao: WebGLVertexArrayObject;
  private readonly rectBuf: WebGLBuffer;
  private readonly frameBuf: WebGLBuffer;
  private readonly frameVao: WebGLVertexArrayObject;
  private readonly overlayBuf: WebGLBuffer;
  private readonly segBuf: WebGLBuffer;
  private readonly arrowBuf: WebGLBuffer;
  private readonly glyphBuf: WebGLBuffer;
  private readonly tex: WebGLTexture;
  private readonly atlas = new GlyphAtlas();
  private scene: Scene | null = null;
  private overlayCount = 0;
  private readonly overlay = new FloatBuilder(kRectStride * 16);
  private readonly glyphs = new FloatBuilder(kGlyphStride * 4096);
  private glyphCount = 0;
  private glyphBufCap = 0;
  private textRegion = { x0: 0, y0: 0, x1: -1, y1: -1, scale: 0, detailed: false };
  private stamp = new Uint32Array(0);
  private mark = 0;
  private hlSegs: number[] = [];
  /** Time spent in the last render() call (ms), for the benchmark. */
  lastFrameMs = 0;

  constructor(readonly canvas: HTMLCanvasElement, private readonly gl: WebGL2RenderingContext) {
    this.rectProg = this.program(kRectVs, kRectFs);
    this.segProg = this.program(kSegVs, kSegFs);
    this.flatProg = this.program(kFlatVs, kFlatFs);
    this.glyphProg = this.program(kGlyphVs, kGlyphFs);
    this.polyProg = this.program(kPolyVs, kPolyFs);
    const quad = gl.createBuffer()!;
    gl.bindBuffer(gl.ARRAY_BUFFER, quad);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([0, 0, 1, 0, 0, 1, 1, 1]), gl.STATIC_DRAW);
    const segQuad = gl.createBuffer()!;
    gl.bindBuffer(gl.ARRAY_BUFFER, segQuad);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([0, -1, 1, -1, 0, 1, 1, 1]), gl.STATIC_DRAW);
    this.rectBuf = gl.createBuffer()!;
    this.frameBuf = gl.createBuffer()!;
    this.overlayBuf = gl.createBuffer()!;
    this.segBuf = gl.createBuffer()!;
    this.arrowBuf = gl.createBuffer()!;
    this.glyphBuf = gl.createBuffer()!;
    const rectAttrs = (vao: WebGLVertexArrayObject, buf: WebGLBuffer): void => {
      gl.bindVertexArray(vao);
      gl.bindBuffer(gl.ARRAY_BUFFER, quad);
      gl.enableVertexAttribArray(0);
      gl.vertexAttribPointer(0, 2, gl.FLOAT, false, 0, 0);
      gl.bindBuffer(gl.ARRAY_BUFFER, buf);
      const s = kRectStride * 4;
      for (const [loc, size, off] of kRectAttrs) {
        gl.enableVertexAttribArray(loc);
        gl.vertexAttribPointer(loc, size, gl.FLOAT, false, s, off);
        gl.vertexAttribDivisor(loc, 1);
      }
    };
    this.rectVao = gl.createVertexArray()!;
    rectAttrs(this.rectVao, this.rectBuf);
    this.frameVao = gl.createVertexArray()!;
    rectAttrs(this.frameVao, this.frameBuf);
    this.overlayVao = gl.createVertexArray()!;
    rectAttrs(this.overlayVao, this.overlayBuf);
    this.frameLodBuf = gl.createBuffer()!;
    this.frameLodVao = gl.createVertexArray()!;
    rectAttrs(this.frameLodVao, this.frameLodBuf);
    this.itemLodBuf = gl.createBuffer()!;
    this.itemLodVao = gl.createVertexArray()!;
    rectAttrs(this.itemLodVao, this.itemLodBuf);
    this.segVao = gl.createVertexArray()!;
    gl.bindVertexArray(this.segVao);
    gl.bindBuffer(gl.ARRAY_BUFFER, segQuad);
    gl.enableVertexAttribArray(0);
    gl.vertexAttribPointer(0, 2, gl.FLOAT, false, 0, 0);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.segBuf);
    for (const [loc, size, off] of kSegAttrs) {
      gl.enableVertexAttribArray(loc);
      gl.vertexAttribPointer(loc, size, gl.FLOAT, false, kSegStride * 4, off);
      gl.vertexAttribDivisor(loc, 1);
    }
    this.polyBuf = gl.createBuffer()!;
    this.polyVao = gl.createVertexArray()!;
    gl.bindVertexArray(this.polyVao);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.polyBuf);
    for (const [loc, size, off] of [[0, 2, 0], [1, 3, 8], [2, 2, 20]]) {
      gl.enableVertexAttribArray(loc);
      gl.vertexAttribPointer(loc, size, gl.FLOAT, false, kPolyStride * 4, off);
    }
    this.arrowVao = gl.createVertexArray()!;
    gl.bindVertexArray(this.arrowVao);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.arrowBuf);
    gl.enableVertexAttribArray(0);
    gl.vertexAttribPointer(0, 2, gl.FLOAT, false, 0, 0);
    this.glyphVao = gl.createVertexArray()!;
    gl.bindVertexArray(this.glyphVao);
    gl.bindBuffer(gl.ARRAY_BUFFER, quad);
    gl.enableVertexAttribArray(0);
    gl.vertexAttribPointer(0, 2, gl.FLOAT, false, 0, 0);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.glyphBuf);
    for (const [loc, size, off] of [[1, 4, 0], [2, 4, 16], [3, 1, 32]]) {
      gl.enableVertexAttribArray(loc);
      gl.vertexAttribPointer(loc, size, gl.FLOAT, false, kGlyphStride * 4, off);
      gl.vertexAttribDivisor(loc, 1);
    }
    gl.bindVertexArray(null);
    this.tex = gl.createTexture()!;
    gl.bindTexture(gl.TEXTURE_2D, this.tex);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR_MIPMAP_LINEAR);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
  }

  private program(vs: string, fs: string): Program {
    const gl = this.gl;
    const compile = (type: number, src: string): WebGLShader => {
      const s = gl.createShader(type)!;
      gl.shaderSource(s, src);
      gl.compileShader(s);
      if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(`shader: ${gl.getShaderInfoLog(s)}`);
      return s;
    };
    const p = gl.createProgram()!;
    gl.attachShader(p, compile(gl.VERTEX_SHADER, vs));
    gl.attachShader(p, compile(gl.FRAGMENT_SHADER, fs));
    gl.linkProgram(p);
    if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(`program: ${gl.getProgramInfoLog(p)}`);
    const u = (n: string): WebGLUniformLocation | null => gl.getUniformLocation(p, n);
    return {
      p, view: u('u_view'), scale: u('u_scale'), t: u('u_t'), color: u('u_color'), hl: u('u_hl'), hl2: u('u_hl2'),
      tex: u('u_tex'), lod: u('u_lodPx'),
    };
  }

  setScene(scene: Scene | null): void {
    const gl = this.gl;
    this.scene = scene;
    this.hlSegs = [];
    this.textRegion.x1 = -1;
    if (!scene) return;
    gl.bindBuffer(gl.ARRAY_BUFFER, this.frameBuf);
    gl.bufferData(gl.ARRAY_BUFFER, scene.frameBatch.data, gl.STATIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.rectBuf);
    gl.bufferData(gl.ARRAY_BUFFER, scene.itemBatch.data, gl.STATIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.segBuf);
    gl.bufferData(gl.ARRAY_BUFFER, scene.segBatch.data, gl.STATIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.arrowBuf);
    gl.bufferData(gl.ARRAY_BUFFER, scene.arrowBatch.data, gl.STATIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.polyBuf);
    gl.bufferData(gl.ARRAY_BUFFER, scene.polys, gl.STATIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.frameLodBuf);
    gl.bufferData(gl.ARRAY_BUFFER, scene.frameLodBatch.data, gl.STATIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.itemLodBuf);
    gl.bufferData(gl.ARRAY_BUFFER, scene.itemLodBatch.data, gl.STATIC_DRAW);
    if (this.stamp.length < scene.layout.itemCount) this.stamp = new Uint32Array(scene.layout.itemCount);
    this.overlayCount = 0;
  }

  setHighlights(h: Highlights): void {
    const s = this.scene;
    if (!s) return;
    const gl = this.gl;
    const b = s.layout.itemBox;
    this.overlay.length = 0;
    const add = (i: number, c: readonly number[], px: number): void => {
      if (i < 0 || i >= s.layout.itemCount) return;
      this.overlay.push(b[4 * i] - 2, b[4 * i + 1] - 2, b[4 * i + 2] + 4, b[4 * i + 3] + 4, 0, 0, 0, 0, c[0], c[1], c[2], -px, 8, 0, kLodNever);
    };
    if (h.lineage) for (let k = 0; k < h.lineage.length; ++k) add(h.lineage[k], kLineageColor, 2.5);
    for (let k = 0; k < h.matches.length; ++k) add(h.matches[k], kMatchColor, 3);
    if (h.linked) for (let k = 0; k < h.linked.length; ++k) add(h.linked[k], kLinkedColor, 3.5);
    add(h.selected, kSelectColor, 3.5);
    this.overlayCount = this.overlay.length / kRectStride;
    gl.bindBuffer(gl.ARRAY_BUFFER, this.overlayBuf);
    gl.bufferData(gl.ARRAY_BUFFER, this.overlay.view(), gl.DYNAMIC_DRAW);
    // Edges of the selection (1) and of its lineage (2): the highlight column
    // of the segment batch is rewritten in place and uploaded.
    const data = s.segBatch.data;
    const changed: number[] = [];
    for (const k of this.hlSegs) { data[k * kSegStride + 7] = 0; changed.push(k); }
    this.hlSegs = [];
    const want = edgeHighlights(s, h);
    if (want.size) {
      for (let k = 0; k < s.segCount; ++k) {
        const v = want.get(s.segEdge[k]);
        if (v) { data[k * kSegStride + 7] = v; this.hlSegs.push(k); changed.push(k); }
      }
    }
    gl.bindBuffer(gl.ARRAY_BUFFER, this.segBuf);
    if (changed.length > 4096) {
      gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW);
    } else {
      for (const k of changed) gl.bufferSubData(gl.ARRAY_BUFFER, (k * kSegStride + 7) * 4, data, k * kSegStride + 7, 1);
    }
  }

  resize(cssW: number, cssH: number, dpr: number): void {
    this.canvas.width = Math.max(1, Math.round(cssW * dpr));
    this.canvas.height = Math.max(1, Math.round(cssH * dpr));
  }

  private uniforms(p: Program, cam: Camera): void {
    const gl = this.gl;
    gl.useProgram(p.p);
    gl.uniform2f(p.view, cam.viewW, cam.viewH);
    gl.uniform1f(p.scale, cam.scale);
    gl.uniform2f(p.t, cam.tx, cam.ty);
    if (p.lod) gl.uniform1f(p.lod, lodPx(cam.scale));
  }

  // TextSink: lay out one line as glyph quads.
  text(x: number, y: number, size: number, bold: boolean, align: Align, maxWidth: number, s: string, shade: number): void {
    if (!s || maxWidth <= 0) return;
    const atlas = this.atlas;
    const k = size / GlyphAtlas.px;
    let w = atlas.measure(s, bold) * k;
    if (w > maxWidth) {
      s = fitMiddle(s, maxWidth, (ch) => atlas.get(ch, bold).advance * k);
      if (!s) return;
      w = atlas.measure(s, bold) * k;
    }
    let cx = align === 0 ? x : align === 1 ? x - w / 2 : x - w;
    const top = y - (GlyphAtlas.px * GlyphAtlas.ascent + 4) * k;
    const h = GlyphAtlas.cellH * k;
    const gb = this.glyphs;
    for (const ch of s) {
      const g = atlas.get(ch, bold);
      if (ch !== ' ') {
        gb.reserve(kGlyphStride);
        const d = gb.data;
        let i = gb.length;
        d[i++] = cx - 2 * k; d[i++] = top; d[i++] = g.w * k; d[i++] = h;
        d[i++] = g.u0; d[i++] = g.v0; d[i++] = g.u1; d[i++] = g.v1; d[i++] = shade;
        gb.length = i;
      }
      cx += g.advance * k;
    }
  }

  private updateText(cam: Camera): void {
    const s = this.scene!;
    const v = cam.visibleWorld();
    const r = this.textRegion;
    const detailed = cam.scale >= kTextMinScale;
    const inside = v.x >= r.x0 && v.y >= r.y0 && v.x + v.w <= r.x1 && v.y + v.h <= r.y1;
    const sameZoom = detailed ? r.detailed && cam.scale < r.scale * 4 : !r.detailed && Math.abs(cam.scale / r.scale - 1) < 0.02;
    if (inside && sameZoom) return;
    // Build for the view plus half a view on each side, so small pans reuse it.
    r.x0 = v.x - v.w * 0.5; r.y0 = v.y - v.h * 0.5; r.x1 = v.x + v.w * 1.5; r.y1 = v.y + v.h * 1.5;
    r.scale = cam.scale; r.detailed = detailed;
    this.glyphs.length = 0;
    if (++this.mark === 0xffffffff) { this.stamp.fill(0); this.mark = 1; }
    collectText(s, r.x0, r.y0, r.x1, r.y1, cam.scale, this.stamp, this.mark, this);
    this.glyphCount = this.glyphs.length / kGlyphStride;
    const gl = this.gl;
    gl.bindBuffer(gl.ARRAY_BUFFER, this.glyphBuf);
    if (this.glyphs.data.length > this.glyphBufCap) {
      gl.bufferData(gl.ARRAY_BUFFER, this.glyphs.data.byteLength, gl.DYNAMIC_DRAW);
      this.glyphBufCap = this.glyphs.data.length;
    }
    gl.bufferSubData(gl.ARRAY_BUFFER, 0, this.glyphs.data, 0, this.glyphs.length);
  }

  render(cam: Camera): void {
    const t0 = performance.now();
    const gl = this.gl;
    gl.viewport(0, 0, this.canvas.width, this.canvas.height);
    gl.clearColor(kBackground[0], kBackground[1], kBackground[2], 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
    const s = this.scene;
    if (!s) return;
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
    this.updateText(cam);
    if (this.atlas.dirty) {
      gl.bindTexture(gl.TEXTURE_2D, this.tex);
      gl.pixelStorei(gl.UNPACK_PREMULTIPLY_ALPHA_WEBGL, false);
      gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, gl.RGBA, gl.UNSIGNED_BYTE, this.atlas.canvas as TexImageSource);
      gl.generateMipmap(gl.TEXTURE_2D);
      this.atlas.dirty = false;
    }
    // Frames, then edges and arrowheads, then items, overlays and text; each
    // batch drawn as its long instances plus the range visible on the main axis.
    const v = cam.visibleWorld();
    const lr = s.layout.direction === 'lr';
    const v0 = lr ? v.x : v.y, v1 = lr ? v.x + v.w : v.y + v.h;
    this.uniforms(this.rectProg, cam);
    // Nodes under ~2 px tall: decimate (see drawBatch).
    const far = cam.scale * 36 < 2 ? 20000 : Infinity;
    const lodT = s.polyVertexCount > 0 ? lodPx(cam.scale) : 0;
    this.drawRects(this.frameVao, this.frameBuf, s.frameBatch, this.frameLodVao, s.frameLodBatch, v0, v1, far, cam.scale, lodT);
    // Level of detail: edges are noise once nodes are a few pixels tall.
    if (s.segCount > 0 && cam.scale > 0.04) {
      this.uniforms(this.segProg, cam);
      gl.uniform3f(this.segProg.color, kEdgeColor[0], kEdgeColor[1], kEdgeColor[2]);
      gl.uniform3f(this.segProg.hl, kSelectColor[0], kSelectColor[1], kSelectColor[2]);
      gl.uniform3f(this.segProg.hl2, kLineageColor[0], kLineageColor[1], kLineageColor[2]);
      this.drawBatch(this.segVao, this.segBuf, s.segBatch, v0, v1, kSegStride, kSegAttrs);
    }
    if (s.arrowCount > 0 && cam.scale > 0.08) {
      this.uniforms(this.flatProg, cam);
      gl.uniform3f(this.flatProg.color, kEdgeColor[0], kEdgeColor[1], kEdgeColor[2]);
      gl.bindVertexArray(this.arrowVao);
      const b = s.arrowBatch;
      if (b.longCount) gl.drawArrays(gl.TRIANGLES, 0, 3 * b.longCount);
      const [lo, hi] = visibleRange(b, v0, v1);
      if (hi > lo) gl.drawArrays(gl.TRIANGLES, 3 * lo, 3 * (hi - lo));
    }
    this.uniforms(this.rectProg, cam);
    this.drawRects(this.rectVao, this.rectBuf, s.itemBatch, this.itemLodVao, s.itemLodBatch, v0, v1, far, cam.scale, lodT);
    // Silhouettes over (the skipped contents of) small frames.
    if (s.polyVertexCount > 0 && lodPx(cam.scale) > 0) {
      this.uniforms(this.polyProg, cam);
      gl.bindVertexArray(this.polyVao);
      const n = descPrefix(s.polyParentLod, s.polyVertexCount, cam.scale, lodPx(cam.scale));
      if (n > 0) gl.drawArrays(gl.TRIANGLES, 0, n - (n % 3));
    }
    if (this.glyphCount > 0) {
      this.uniforms(this.glyphProg, cam);
      gl.activeTexture(gl.TEXTURE0);
      gl.bindTexture(gl.TEXTURE_2D, this.tex);
      gl.uniform1i(this.glyphProg.tex, 0);
      gl.bindVertexArray(this.glyphVao);
      gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, this.glyphCount);
    }
    if (this.overlayCount > 0) {
      this.uniforms(this.rectProg, cam);
      gl.bindVertexArray(this.overlayVao);
      gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, this.overlayCount);
    }
    gl.bindVertexArray(null);
    this.lastFrameMs = performance.now() - t0;
  }

  /**
   * Draws rects by whichever submits fewer instances: the culled batch (long
   * ones + the range on screen), or, under silhouettes (far zoom), the prefix
   * of the lod-ordered batch that the silhouettes do not hide.
   */
  private drawRects(vao: WebGLVertexArrayObject, buf: WebGLBuffer, b: CulledBatch, lodVao: WebGLVertexArrayObject,
    lb: LodBatch, v0: number, v1: number, far: number, scale: number, lodT: number): void {
    if (lodT > 0) {
      const n = lodPrefix(lb, scale, lodT);
      const [lo, hi] = visibleRange(b, v0, v1);
      if (n < b.longCount + Math.min(hi - lo, far)) {
        this.gl.bindVertexArray(lodVao);
        if (n > 0) this.gl.drawArraysInstanced(this.gl.TRIANGLE_STRIP, 0, 4, n);
        return;
      }
    }
    this.drawBatch(vao, buf, b, v0, v1, kRectStride, kRectAttrs, far);
  }

  /** Draws a culled batch: its long instances, then the visible range (attributes rebased). */
  private drawBatch(vao: WebGLVertexArrayObject, buf: WebGLBuffer, b: CulledBatch, v0: number, v1: number,
    stride: number, attrs: readonly (readonly [number, number, number])[], maxInstances = Infinity): void {
    const gl = this.gl;
    gl.bindVertexArray(vao);
    if (b.longCount) gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, b.longCount);
    const [lo, hi] = visibleRange(b, v0, v1);
    if (hi <= lo) return;
    gl.bindBuffer(gl.ARRAY_BUFFER, buf);
    const bytes = stride * 4;
    // Level of detail: past maxInstances draw every k-th one (a larger attribute
    // stride): instances are sub-pixel then, and sorted, so the silhouette stays.
    const k = Math.max(1, Math.ceil((hi - lo) / maxInstances));
    for (const [loc, size, off] of attrs) gl.vertexAttribPointer(loc, size, gl.FLOAT, false, bytes * k, lo * bytes + off);
    gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, Math.ceil((hi - lo) / k));
    for (const [loc, size, off] of attrs) gl.vertexAttribPointer(loc, size, gl.FLOAT, false, bytes, off);
  }

  dispose(): void {
    this.gl.getExtension('WEBGL_lose_context')?.loseContext();
  }
}
