// Number formatting shared by the panels and views: durations in ns / µs,
// byte sizes, shares.

/** A duration in nanoseconds with a unit that keeps 1-4 digits before the point. */
export function fmtNs(ns: number): string {
  if (ns >= 1e9) return `${(ns / 1e9).toFixed(3)} s`;
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(3)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(1)} µs`;
  return `${ns} ns`;
}

/** A duration in microseconds (summary.json's unit), shown as fmtNs does. */
export const usNs = (us: number): string => fmtNs(Math.round(us * 1000));

/** A share 0..1 as a percentage with one decimal. */
export const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;

/** Microseconds with three significant digits (legend ranges). */
export function fmtUs(us: number): string {
  if (us >= 1e6) return `${(us / 1e6).toPrecision(3)} s`;
  if (us >= 1e3) return `${(us / 1e3).toPrecision(3)} ms`;
  return `${us.toPrecision(3)} µs`;
}

/** Bytes in binary units, one decimal (the e2e test formats the API's figure the same way). */
export function fmtBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 * 1024) return `${(bytes / (1024 * 1024 * 1024)).toFixed(1)} GiB`;
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}
