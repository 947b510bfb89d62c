/** The `p`th percentile (0-100) of `values`. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** A figure line for the report (the fault suite's output is where its figures are read). */
export function report(scenario: string, figures: Record<string, unknown>): void {
  console.log(`[faults] ${scenario}: ${JSON.stringify(figures)}`);
}

/** How many times each value occurs. */
export function countBy(values: readonly (number | string)[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
