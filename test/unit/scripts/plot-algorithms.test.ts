// The algorithms picture's numbers: the same bursty load, and what each algorithm lets through.
import { renderSvg, simulate, type Series } from '../../../scripts/plot-algorithms';

/** Admitted between two offsets (ms), from a series' running count. */
function admittedBetween(series: Series | undefined, fromMs: number, toMs: number): number {
  const at = (ms: number): number => series?.points.filter(([t]) => t < ms).at(-1)?.[1] ?? 0;
  return at(toMs) - at(fromMs);
}

it('shows the fixed window letting through far more than its limit around a window edge, the others not', async () => {
  const series = await simulate();
  const byLabel = new Map(series.map((s) => [s.label, s]));
  // The bursts at 50 s and 61 s straddle the edge at 60 s.
  const edge = (label: string): number => admittedBetween(byLabel.get(label), 45_000, 63_000);
  expect(edge('fixed_window')).toBe(16);
  expect(edge('sliding_window')).toBeLessThanOrEqual(10);
  // A full bucket of 10, plus one refill every 6 s over those 18 s.
  expect(edge('token_bucket')).toBeLessThanOrEqual(13);
  // Over the four minutes the bucket admits its burst plus its refill, never more.
  const total = (label: string): number => byLabel.get(label)?.points.at(-1)?.[1] ?? 0;
  expect(total('token_bucket')).toBeLessThanOrEqual(10 + 40);
  expect(total('fixed_window')).toBeLessThanOrEqual(4 * 10);
  const svg = renderSvg(series);
  expect(svg.match(/<path /g)).toHaveLength(series.length);
  expect(svg).toContain('token_bucket');
});
