// Named counters, gauges and samples that the views record as they work
// (layouts loaded, frames drawn, window requests, their times). Nothing in
// the UI reads them; the debug surface (core/debug.ts) and the benchmark
// scripts do, so the views carry no fields that exist only to be measured.
// Names are "<view>.<what>", e.g. "graph.renders", "timeline.fetch_ms".

export type StatValue = number | string;

/** How many samples a series keeps (the oldest half is dropped beyond). */
const kMaxSamples = 2000;

export class Stats {
  private readonly values = new Map<string, StatValue>();
  private readonly series = new Map<string, number[]>();
  private readonly listeners: ((name: string) => void)[] = [];

  /** Adds `n` to counter `name`. */
  count(name: string, n = 1): void {
    this.values.set(name, (Number(this.values.get(name)) || 0) + n);
    this.changed(name);
  }

  /** Sets gauge `name`. */
  set(name: string, v: StatValue): void {
    this.values.set(name, v);
    this.changed(name);
  }

  /** Appends a sample to series `name`. */
  sample(name: string, v: number): void {
    let s = this.series.get(name);
    if (!s) this.series.set(name, (s = []));
    s.push(v);
    if (s.length > kMaxSamples) s.splice(0, kMaxSamples / 2);
  }

  get(name: string): StatValue | undefined { return this.values.get(name); }
  num(name: string): number { return Number(this.values.get(name)) || 0; }
  samples(name: string): readonly number[] { return this.series.get(name) ?? []; }

  /** A copy of every counter, gauge and series. */
  snapshot(): Record<string, StatValue | number[]> {
    const out: Record<string, StatValue | number[]> = {};
    for (const [k, v] of this.values) out[k] = v;
    for (const [k, v] of this.series) out[k] = v.slice();
    return out;
  }

  /** Called with the name of each counter or gauge that changes (not for samples). */
  onChange(fn: (name: string) => void): void {
    this.listeners.push(fn);
  }

  private changed(name: string): void {
    for (const fn of this.listeners) fn(name);
  }
}
