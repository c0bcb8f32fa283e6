// Decoder of the compact layout binary ("MILY", docs/reference/layout-binary.md).
//
// Every section is wrapped as a typed array view over the response buffer: no
// copies, so a 100k-node layout costs one ArrayBuffer. Strings are decoded
// lazily (TextDecoder on a subarray) and memoised, because most of them are
// only needed when zoomed in or in a panel.

export const kMagic = 0x594c494d; // "MILY" read as little-endian u32
export const kVersion = 1;
export const kNone = 0xffffffff;

export enum ItemKind {
  Node = 0,
  GraphInput = 1,
  GraphOutput = 2,
  Group = 3,
  /** A tensor a node reads that nothing provides (the graph's fault). */
  MissingInput = 4,
}

export enum GroupKind {
  Scope = 0,
  Fusion = 1,
  Repeat = 2,
  Chunk = 3,
}

export enum NodeStatus {
  None = 0,
  Executed = 1,
  Fused = 2,
  NotExecuted = 3,
  Inserted = 4,
}

/** Bands per frame in frame_profiles (section 30). */
export const kProfileBands = 16;

export const kEdgeReversed = 1;
export const kEdgeShowLabel = 2;
export const kGroupExpanded = 1;
export const kGroupVisible = 2;

enum ElemType {
  U8 = 1,
  I32 = 2,
  U32 = 3,
  F32 = 4,
}

/** A malformed or unsupported layout binary; the message says where. */
export class LayoutBinaryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LayoutBinaryError';
  }
}

/** One decoded layout: header fields plus one typed array per section. */
export interface Layout {
  version: number;
  direction: 'tb' | 'lr';
  width: number;
  height: number;
  nodeCount: number;
  itemCount: number;
  edgeCount: number;
  frameCount: number;
  groupCount: number;
  title: string;

  itemBox: Float32Array;
  itemKind: Uint8Array;
  itemRef: Uint32Array;
  itemModelId: Uint32Array;
  itemTitle: Uint32Array;
  itemSubtitle: Uint32Array;
  edgeFrom: Uint32Array;
  edgeTo: Uint32Array;
  edgeCountArr: Uint32Array;
  edgeFlags: Uint8Array;
  edgeLabel: Uint32Array;
  edgePointBegin: Uint32Array;
  points: Float32Array;
  frames: Int32Array;
  groupParent: Int32Array;
  groupRepeatOf: Int32Array;
  groupKind: Uint8Array;
  groupFlags: Uint8Array;
  groupDepth: Uint32Array;
  groupNodeCount: Uint32Array;
  groupBounds: Float32Array;
  groupLabel: Uint32Array;
  groupTopOps: Int32Array;
  groupTopOpCounts: Uint32Array;
  opNames: Uint32Array;
  nodeItem: Uint32Array;
  nodeModelId: Uint32Array;
  stringOffsets: Uint32Array;
  stringData: Uint8Array;
  // Optional sections (null when the server / file predates them):
  /** 30: per frame 16 bands × [lo, hi] across the rank axis (silhouette). */
  frameProfiles: Float32Array | null;
  /** 31: per layout node, NodeStatus (0 none, 1 executed, 2 fused, 3 not executed, 4 inserted). */
  nodeStatus: Uint8Array | null;
  /** 32: per layout node, total linked task time in µs, -1 none. */
  nodeTimeUs: Float32Array | null;
  /** 33: per layout node, linked task count. */
  nodeTaskCount: Uint32Array | null;

  /** String `i` of the string table (memoised). */
  str(i: number): string;
}

type SectionSpec = { id: number; type: ElemType; name: keyof Layout; optional?: boolean };

const kSections: SectionSpec[] = [
  { id: 1, type: ElemType.F32, name: 'itemBox' },
  { id: 2, type: ElemType.U8, name: 'itemKind' },
  { id: 3, type: ElemType.U32, name: 'itemRef' },
  { id: 4, type: ElemType.U32, name: 'itemModelId' },
  { id: 5, type: ElemType.U32, name: 'itemTitle' },
  { id: 6, type: ElemType.U32, name: 'itemSubtitle' },
  { id: 7, type: ElemType.U32, name: 'edgeFrom' },
  { id: 8, type: ElemType.U32, name: 'edgeTo' },
  { id: 9, type: ElemType.U32, name: 'edgeCountArr' },
  { id: 10, type: ElemType.U8, name: 'edgeFlags' },
  { id: 11, type: ElemType.U32, name: 'edgeLabel' },
  { id: 12, type: ElemType.U32, name: 'edgePointBegin' },
  { id: 13, type: ElemType.F32, name: 'points' },
  { id: 14, type: ElemType.I32, name: 'frames' },
  { id: 15, type: ElemType.I32, name: 'groupParent' },
  { id: 16, type: ElemType.I32, name: 'groupRepeatOf' },
  { id: 17, type: ElemType.U8, name: 'groupKind' },
  { id: 18, type: ElemType.U8, name: 'groupFlags' },
  { id: 19, type: ElemType.U32, name: 'groupDepth' },
  { id: 20, type: ElemType.U32, name: 'groupNodeCount' },
  { id: 21, type: ElemType.F32, name: 'groupBounds' },
  { id: 22, type: ElemType.U32, name: 'groupLabel' },
  { id: 23, type: ElemType.I32, name: 'groupTopOps' },
  { id: 24, type: ElemType.U32, name: 'groupTopOpCounts' },
  { id: 25, type: ElemType.U32, name: 'opNames' },
  { id: 26, type: ElemType.U32, name: 'nodeItem' },
  { id: 27, type: ElemType.U32, name: 'nodeModelId' },
  { id: 28, type: ElemType.U32, name: 'stringOffsets' },
  { id: 29, type: ElemType.U8, name: 'stringData' },
  { id: 30, type: ElemType.F32, name: 'frameProfiles', optional: true },
  { id: 31, type: ElemType.U8, name: 'nodeStatus', optional: true },
  { id: 32, type: ElemType.F32, name: 'nodeTimeUs', optional: true },
  { id: 33, type: ElemType.U32, name: 'nodeTaskCount', optional: true },
];

const kTypeNames: Record<number, string> = { 1: 'u8', 2: 'i32', 3: 'u32', 4: 'f32' };
const kTypeBytes: Record<number, number> = { 1: 1, 2: 4, 3: 4, 4: 4 };

function fail(offset: number, what: string): never {
  throw new LayoutBinaryError(`layout binary@byte ${offset}: ${what}`);
}

/**
 * Decodes a MILY buffer. Throws LayoutBinaryError (with the byte offset)
 * on a bad magic, an unsupported version, or a section that does not fit.
 */
export function decodeLayout(buf: ArrayBuffer): Layout {
  if (buf.byteLength < 64) {
    fail(0, `too short for a layout header; expected at least 64 bytes, found ${buf.byteLength}`);
  }
  const h = new Uint32Array(buf, 0, 16);
  const hf = new Float32Array(buf, 0, 16);
  if (h[0] !== kMagic) {
    const m = Array.from(new Uint8Array(buf, 0, 4), (b) => b.toString(16).padStart(2, '0')).join(' ');
    fail(0, `bad magic; expected 'MILY' (4d 49 4c 59), found ${m}; is this a layout binary?`);
  }
  if (h[1] !== kVersion) {
    fail(4, `unsupported layout binary version ${h[1]}; this UI reads version ${kVersion} (rebuild the UI with the server)`);
  }
  const sectionCount = h[14];
  const headerBytes = h[2];
  if (64 + 16 * sectionCount > buf.byteLength || headerBytes !== 64 + 16 * sectionCount) {
    fail(8, `header size ${headerBytes} does not match ${sectionCount} sections in a ${buf.byteLength}-byte buffer`);
  }
  const I = h[7], E = h[8], P = h[9], F = h[10], G = h[11], O = h[12], S = h[13], N = h[6];
  const expected: Record<number, number> = {
    1: 4 * I, 2: I, 3: I, 4: I, 5: I, 6: I,
    7: E, 8: E, 9: E, 10: E, 11: E, 12: E + 1, 13: 2 * P, 14: F,
    15: G, 16: G, 17: G, 18: G, 19: G, 20: G, 21: 4 * G, 22: G, 23: 3 * G, 24: 3 * G,
    25: O, 26: N, 27: N, 28: S + 1, 30: 32 * F, 31: N, 32: N, 33: N,
  };
  const dir = new Uint32Array(buf, 64, 4 * sectionCount);
  const byId = new Map<number, { type: number; offset: number; count: number; at: number }>();
  for (let k = 0; k < sectionCount; ++k) {
    byId.set(dir[4 * k], { type: dir[4 * k + 1], offset: dir[4 * k + 2], count: dir[4 * k + 3], at: 64 + 16 * k });
  }
  const out: Record<string, unknown> = {};
  for (const spec of kSections) {
    const s = byId.get(spec.id);
    if (!s && spec.optional) { out[spec.name] = null; continue; }
    if (!s) fail(64, `section ${spec.id} (${spec.name}) is missing from the directory`);
    if (s.type !== spec.type) {
      fail(s.at + 4, `section ${spec.id} (${spec.name}) has element type ${s.type}; expected ${kTypeNames[spec.type]}`);
    }
    if (s.offset % 4 !== 0) fail(s.at + 8, `section ${spec.id} offset ${s.offset} is not a multiple of 4`);
    const want = expected[spec.id];
    if (want !== undefined && s.count !== want) {
      fail(s.at + 12, `section ${spec.id} (${spec.name}) has ${s.count} elements; expected ${want}`);
    }
    const bytes = s.count * kTypeBytes[s.type];
    if (s.offset < headerBytes || s.offset + bytes > buf.byteLength) {
      fail(s.at + 8, `section ${spec.id} (${spec.name}) [${s.offset}, ${s.offset + bytes}) lies outside the ${buf.byteLength}-byte buffer`);
    }
    switch (s.type) {
      case ElemType.U8: out[spec.name] = new Uint8Array(buf, s.offset, s.count); break;
      case ElemType.I32: out[spec.name] = new Int32Array(buf, s.offset, s.count); break;
      case ElemType.U32: out[spec.name] = new Uint32Array(buf, s.offset, s.count); break;
      case ElemType.F32: out[spec.name] = new Float32Array(buf, s.offset, s.count); break;
    }
  }
  const offsets = out.stringOffsets as Uint32Array;
  const data = out.stringData as Uint8Array;
  if (offsets[S] !== data.length) fail(64, `string_offsets ends at ${offsets[S]} but string_data holds ${data.length} bytes`);
  const decoder = new TextDecoder();
  const cache: (string | undefined)[] = new Array(S);
  const str = (i: number): string => {
    if (i >= S) return '';
    let v = cache[i];
    if (v === undefined) {
      const a = offsets[i], b = offsets[i + 1];
      v = a <= b && b <= data.length ? decoder.decode(data.subarray(a, b)) : '';
      cache[i] = v;
    }
    return v;
  };
  const layout = out as unknown as Layout;
  layout.version = h[1];
  layout.direction = h[3] === 1 ? 'lr' : 'tb';
  layout.width = hf[4];
  layout.height = hf[5];
  layout.nodeCount = N;
  layout.itemCount = I;
  layout.edgeCount = E;
  layout.frameCount = F;
  layout.groupCount = G;
  layout.str = str;
  layout.title = str(h[15]);
  return layout;
}

/** The op type name of op index `op` (from group_top_ops). */
export function opName(l: Layout, op: number): string {
  return op >= 0 && op < l.opNames.length ? l.str(l.opNames[op]) : '';
}

/** Path of a group: labels from the top (excluding group 0) joined by '/'. */
export function groupPath(l: Layout, g: number): string {
  const parts: string[] = [];
  for (let x = g; x > 0; x = l.groupParent[x]) parts.push(l.str(l.groupLabel[x]));
  return parts.reverse().join('/');
}

/**
 * Number of graph nodes among the N layout nodes (graph nodes come first,
 * then graph inputs, then outputs). The binary has no field for it, so it is
 * the smallest layout node shown by a graph input/output item.
 */
export function graphNodeCount(l: Layout): number {
  let n = l.nodeCount;
  for (let i = 0; i < l.itemCount; ++i) {
    const k = l.itemKind[i];
    if ((k === ItemKind.GraphInput || k === ItemKind.GraphOutput || k === ItemKind.MissingInput) && l.itemRef[i] < n) n = l.itemRef[i];
  }
  return n;
}

/** Layout node index of a model NodeId, or -1. */
export function layoutNodeOfModelNode(l: Layout, modelId: number): number {
  const n = graphNodeCount(l);
  for (let i = 0; i < n; ++i) if (l.nodeModelId[i] === modelId) return i;
  return -1;
}
