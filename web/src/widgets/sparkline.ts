// A sparkline: a small SVG line of a statistic over the last runs (or the
// time steps of a recurrent op), with the last value dotted and points
// where the value is missing left out. The numbers it draws stay in its
// dataset (`values`), so a test reads what was drawn.

const kNs = 'http://www.w3.org/2000/svg';

export interface SparklineOptions {
  width?: number;
  height?: number;
  /** Points to mark (e.g. runs with a NaN): drawn red. */
  alert?: boolean[];
  /** The point to ring (the step chosen on a slider). */
  current?: number;
  title?: string;
}

/** `values` in order (null: no value at that point) as an inline SVG. */
export function sparkline(values: (number | null)[], o: SparklineOptions = {}): SVGSVGElement {
  const w = o.width ?? 96, h = o.height ?? 22, pad = 2.5;
  const svg = document.createElementNS(kNs, 'svg');
  svg.setAttribute('class', 'sparkline');
  svg.setAttribute('width', String(w));
  svg.setAttribute('height', String(h));
  svg.setAttribute('viewBox', `0 0 ${w} ${h}`);
  svg.dataset.values = JSON.stringify(values);
  if (o.title) {
    const t = document.createElementNS(kNs, 'title');
    t.textContent = o.title;
    svg.append(t);
  }
  const finite = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (!finite.length) return svg;
  const lo = Math.min(...finite), hi = Math.max(...finite);
  const n = values.length;
  const x = (i: number): number => (n <= 1 ? w / 2 : pad + ((w - 2 * pad) * i) / (n - 1));
  const y = (v: number): number => (hi > lo ? h - pad - ((h - 2 * pad) * (v - lo)) / (hi - lo) : h / 2);
  // One polyline per stretch of present values.
  let pts: string[] = [];
  const flush = (): void => {
    if (pts.length > 1) {
      const line = document.createElementNS(kNs, 'polyline');
      line.setAttribute('points', pts.join(' '));
      line.setAttribute('fill', 'none');
      line.setAttribute('stroke', '#2f6fde');
      line.setAttribute('stroke-width', '1.5');
      svg.append(line);
    }
    pts = [];
  };
  values.forEach((v, i) => {
    if (v === null || !Number.isFinite(v)) { flush(); return; }
    pts.push(`${x(i).toFixed(1)},${y(v).toFixed(1)}`);
  });
  flush();
  values.forEach((v, i) => {
    if (v === null || !Number.isFinite(v)) return;
    const last = i === n - 1, alert = o.alert?.[i], cur = o.current === i;
    if (!last && !alert && !cur) return;
    const c = document.createElementNS(kNs, 'circle');
    c.setAttribute('cx', x(i).toFixed(1));
    c.setAttribute('cy', y(v).toFixed(1));
    c.setAttribute('r', cur ? '3' : '2');
    c.setAttribute('fill', alert ? '#d50000' : cur ? '#fff' : '#2f6fde');
    c.setAttribute('stroke', alert ? '#d50000' : '#2f6fde');
    svg.append(c);
  });
  return svg;
}
