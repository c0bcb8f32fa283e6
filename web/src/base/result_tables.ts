// Any analysis result (a JSON value) laid out as titled blocks for people,
// with no code per analysis — the UI's twin of the CLI's table encoder
// (src/encoders/table_encoder.h), with the same rules:
//  - an object's scalars (and arrays of scalars) become a field list;
//  - an array of objects becomes a table whose columns are the keys (in
//    first-seen order over the rows; a nested object's scalars become
//    columns "outer.inner", an array of scalars one cell, an array of
//    objects its item count);
//  - a nested object becomes a titled section, recursively.
// Units come from key names: `_ns` and `_us` durations, `_bytes` sizes,
// `share` / `*_share` (0..1) percentages; the header drops the suffix.

import { fmtBytes, fmtNs, pct, usNs } from './format';

export interface ResultCell {
  /** The flattened key ("busy_ns", "idle.total_ns"). */
  key: string;
  value: unknown;
  text: string;
}

export type ResultBlock =
  | { kind: 'fields'; title: string; rows: ResultCell[] }
  | {
    kind: 'table'; title: string; keys: string[]; header: string[]; numeric: boolean[];
    rows: ResultCell[][];
    /** Rows in the result (more than `rows` when cut at the row limit). */
    total: number;
  };

/** Table rows shown at most (the rest is counted). */
export const kMaxResultRows = 500;
/** Items of an array of scalars shown in one cell. */
const kMaxListItems = 8;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isObjectArray = (v: unknown): v is Record<string, unknown>[] => Array.isArray(v) && v.length > 0 && v.every(isObject);

const lastSegment = (key: string): string => key.slice(key.lastIndexOf('.') + 1);
type Unit = 'ns' | 'us' | 'bytes' | 'share' | null;

function unitOfSegment(k: string): Unit {
  if (k === 'ns' || k.endsWith('_ns')) return 'ns';
  if (k === 'us' || k.endsWith('_us')) return 'us';
  if (k === 'bytes' || k.endsWith('_bytes')) return 'bytes';
  if (k === 'share' || k.endsWith('_share')) return 'share';
  return null;
}

/** The segment before the last one ('' for a key of one segment). */
function parentSegment(key: string): string {
  const dot = key.lastIndexOf('.');
  return dot < 0 ? '' : lastSegment(key.slice(0, dot));
}

/** A member's unit is its own suffix's; a member without one takes its
 *  object's ("idle_by_reason_ns.host" holds nanoseconds), as the CLI. */
function unitOf(key: string): Unit {
  const own = unitOfSegment(lastSegment(key));
  if (own) return own;
  const inherited = unitOfSegment(parentSegment(key));
  return inherited === 'share' ? null : inherited;
}

/** A column header / field label: the key without its unit, words apart. */
export function headerOf(key: string): string {
  const u = unitOf(key);
  let k = key;
  if (u && !unitOfSegment(lastSegment(key))) {
    // The unit came from the parent: drop its suffix there.
    const dot = k.lastIndexOf('.');
    return (k.slice(0, dot).replace(new RegExp(`_${u}$`), '') + k.slice(dot)).replace(/_/g, ' ');
  }
  if (u && k.endsWith(`_${u}`)) k = k.slice(0, -(u.length + 1));
  else if (u === 'ns' || u === 'us') k = k.slice(0, -u.length) + 'time';
  else if (u === 'bytes' && lastSegment(k) === 'bytes') k = k.slice(0, -5) + 'size';
  return k.replace(/_/g, ' ');
}

/** A value under `key` as text (units from the key). */
export function cellText(key: string, v: unknown): string {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) {
    if (isObjectArray(v)) return `${v.length} items`;
    const shown = v.slice(0, kMaxListItems).map((x) => cellText(key, x)).join(', ');
    return v.length > kMaxListItems ? `${shown}, … (${v.length} in all)` : shown;
  }
  if (isObject(v)) return Object.entries(v).map(([k, x]) => `${headerOf(k)}=${cellText(k, x)}`).join(', ');
  if (typeof v === 'number') {
    switch (unitOf(key)) {
      case 'ns': return fmtNs(v);
      case 'us': return usNs(v);
      case 'bytes': return fmtBytes(v);
      case 'share': return pct(v);
      default: return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4)));
    }
  }
  return String(v);
}

function flatten(prefix: string, o: Record<string, unknown>, out: [string, unknown][]): void {
  for (const [k, v] of Object.entries(o)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (isObject(v)) flatten(key, v, out);
    else out.push([key, v]);
  }
}

function table(title: string, items: Record<string, unknown>[]): ResultBlock {
  const keys: string[] = [];
  const flat = items.map((item) => {
    const cells: [string, unknown][] = [];
    flatten('', item, cells);
    for (const [k] of cells) if (!keys.includes(k)) keys.push(k);
    return new Map(cells);
  });
  const numeric = keys.map((k) => flat.every((row) => !row.has(k) || row.get(k) === null || typeof row.get(k) === 'number'));
  const rows = flat.slice(0, kMaxResultRows).map((row) => keys.map((k) => ({ key: k, value: row.get(k) ?? null, text: cellText(k, row.get(k)) })));
  return { kind: 'table', title, keys, header: keys.map(headerOf), numeric, rows, total: items.length };
}

function objectBlocks(title: string, o: Record<string, unknown>, out: ResultBlock[]): void {
  const fields: ResultCell[] = [];
  const nested: [string, unknown][] = [];
  for (const [k, v] of Object.entries(o)) {
    if (isObject(v) || isObjectArray(v)) nested.push([k, v]);
    else fields.push({ key: k, value: v, text: Array.isArray(v) && v.length === 0 ? 'none' : cellText(k, v) });
  }
  if (fields.length) out.push({ kind: 'fields', title, rows: fields });
  for (const [k, v] of nested) {
    const sub = title ? `${title} / ${headerOf(k)}` : headerOf(k);
    if (isObject(v)) objectBlocks(sub, v, out);
    else out.push(table(sub, v as Record<string, unknown>[]));
  }
}

/** The blocks of a result, headed by `title` (the analysis' title). */
export function resultBlocks(value: unknown, title: string): ResultBlock[] {
  const out: ResultBlock[] = [];
  if (isObject(value)) objectBlocks(title, value, out);
  else if (isObjectArray(value)) out.push(table(title, value));
  else out.push({ kind: 'fields', title, rows: [{ key: '', value, text: Array.isArray(value) && value.length === 0 ? 'none' : cellText('', value) }] });
  return out;
}
