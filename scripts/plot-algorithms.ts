// `npm run plot:algorithms`: one bursty load through fixed_window, sliding_window and
// token_bucket (10 a minute each) on the memory backend with a hand-driven clock, drawn as the
// requests each admits over time into docs/algorithms.svg for the README.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { compile, parseConfigFile, ConfigError, type Algorithm } from '../src/config';
import { RateLimitEngine } from '../src/engine';
import { ManualClock } from '../src/lib/clock';
import { silentLogger } from '../src/lib/logger';
import { loadSettings } from '../src/settings';
import { StatsStore } from '../src/stats';
import { MemoryCounterStore } from '../src/store';

/** One line of the picture: an algorithm, with the settings it runs under. */
export interface Run {
  readonly label: string;
  readonly algorithm: Algorithm;
  readonly env: Readonly<Record<string, string>>;
  readonly colour: string;
}

/**
 * A sliding window counts refused hits as the fixed window does (so a client that keeps asking
 * keeps its estimate over); a token bucket does not count them.
 */
export const RUNS: readonly Run[] = [
  { label: 'fixed_window', algorithm: 'fixed_window', env: {}, colour: '#d62728' },
  { label: 'sliding_window', algorithm: 'sliding_window', env: {}, colour: '#1f77b4' },
  { label: 'token_bucket', algorithm: 'token_bucket', env: {}, colour: '#2ca02c' },
];
/** A minute boundary, so the fixed windows start at 0 s, 60 s, 120 s and 180 s. */
const START_MS = 1_700_000_040_000;
export const DURATION_S = 240;
export const LIMIT_PER_MINUTE = 10;

/** Offsets (ms) of the requests: one every 12 s (half the limit's rate), and three bursts of 12. */
export function bursty(): number[] {
  const times: number[] = [];
  for (let t = 0; t < DURATION_S * 1000; t += 12_000) times.push(t);
  for (const burstAt of [50_000, 61_000, 150_000])
    for (let i = 0; i < 12; i++) times.push(burstAt + i * 80);
  return times.sort((a, b) => a - b);
}

export interface Series {
  readonly label: string;
  readonly colour: string;
  /** Per request in time order: its offset in ms and the admitted count so far. */
  readonly points: readonly (readonly [number, number])[];
}

const config = (algorithm: Algorithm): string => `
domain: plot
descriptors:
  - key: k
    rate_limit: { unit: minute, requests_per_unit: ${LIMIT_PER_MINUTE}, algorithm: ${algorithm} }
`;

/** Sends the load through one algorithm; resolves with the running count admitted. */
async function admitted(run: Run, times: readonly number[]): Promise<Series> {
  const { algorithm } = run;
  const clock = new ManualClock(START_MS);
  const store = new MemoryCounterStore({ clock });
  const stats = new StatsStore();
  const doc = parseConfigFile('plot.yaml', config(algorithm));
  if (doc instanceof ConfigError) throw doc;
  const compiled = compile([doc], { stats, mergeDomainConfig: false, sanitizeDots: false });
  if (!compiled.ok) throw new Error(compiled.errors.map((e) => e.message).join('\n'));
  const settings = loadSettings({ EXPIRATION_JITTER_MAX_SECONDS: '0', ...run.env }).limiter;
  const engine = new RateLimitEngine({
    store,
    stats,
    clock,
    settings,
    logger: silentLogger,
    localCache: undefined,
  });
  engine.setSnapshot(compiled.snapshot);
  const points: [number, number][] = [];
  let count = 0;
  for (const t of times) {
    clock.set(START_MS + t);
    const answer = await engine.shouldRateLimit({
      domain: 'plot',
      descriptors: [
        {
          entries: [{ key: 'k', value: 'v' }],
          limit: undefined,
          hitsAddend: undefined,
          isNegativeHits: false,
        },
      ],
      hitsAddend: 1,
    });
    if (answer.overallCode === 'OK') count += 1;
    points.push([t, count]);
  }
  await store.close();
  return { label: run.label, colour: run.colour, points };
}

export async function simulate(times: readonly number[] = bursty()): Promise<Series[]> {
  const offered: Series = {
    label: 'offered',
    colour: '#999999',
    points: times.map((t, i) => [t, i + 1]),
  };
  const runs = [];
  for (const run of RUNS) runs.push(await admitted(run, times));
  return [offered, ...runs];
}

/** Cumulative admitted requests as step lines, with the limit's rate as a dotted reference. */
export function renderSvg(series: readonly Series[]): string {
  const [w, h, left, bottom, top, right] = [860, 420, 50, 40, 20, 220];
  const maxY = Math.max(...series.flatMap((s) => s.points.map(([, y]) => y)));
  const x = (ms: number): number => left + ((w - left - right) * ms) / (DURATION_S * 1000);
  const y = (n: number): number => h - bottom - ((h - bottom - top) * n) / maxY;
  const line = (s: Series): string => {
    let d = `M${x(0).toFixed(1)},${y(0).toFixed(1)}`;
    let last = 0;
    for (const [t, n] of s.points) {
      d += ` H${x(t).toFixed(1)} V${y(n).toFixed(1)}`;
      last = n;
    }
    d += ` H${x(DURATION_S * 1000).toFixed(1)} V${y(last).toFixed(1)}`;
    const dash = s.label === 'offered' ? ' stroke-dasharray="4 3"' : '';
    return `<path d="${d}" fill="none" stroke="${s.colour}" stroke-width="2"${dash}/>`;
  };
  const rate = LIMIT_PER_MINUTE * (DURATION_S / 60);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" font-family="sans-serif" font-size="12">`,
    `<rect width="${w}" height="${h}" fill="white"/>`,
    `<line x1="${left}" y1="${y(0)}" x2="${x(DURATION_S * 1000)}" y2="${y(0)}" stroke="black"/>`,
    `<line x1="${left}" y1="${y(0)}" x2="${left}" y2="${top}" stroke="black"/>`,
  ];
  for (let s = 0; s <= DURATION_S; s += 30) {
    const tx = x(s * 1000).toFixed(1);
    parts.push(`<text x="${tx}" y="${h - bottom + 16}" text-anchor="middle">${s}s</text>`);
    if (s % 60 === 0)
      parts.push(`<line x1="${tx}" y1="${top}" x2="${tx}" y2="${y(0)}" stroke="#eeeeee"/>`);
  }
  for (let n = 0; n <= maxY; n += 10)
    parts.push(`<text x="${left - 6}" y="${y(n) + 4}" text-anchor="end">${n}</text>`);
  parts.push(
    `<line x1="${x(0)}" y1="${y(0)}" x2="${x(DURATION_S * 1000)}" y2="${y(rate)}" stroke="black" stroke-dasharray="1 3"/>`,
    ...series.map(line),
  );
  const labels: [string, string][] = [
    ...series.map((s): [string, string] => [s.colour, s.label]),
    ['black', `${LIMIT_PER_MINUTE} a minute`],
  ];
  labels.forEach(([colour, name], i) => {
    const ly = top + 10 + i * 20;
    const lx = w - right + 15;
    parts.push(
      `<line x1="${lx}" y1="${ly}" x2="${lx + 20}" y2="${ly}" stroke="${colour}" stroke-width="2"/>`,
      `<text x="${lx + 26}" y="${ly + 4}">${name}</text>`,
    );
  });
  parts.push(
    `<text x="${left + 4}" y="${top + 4}">requests admitted (cumulative), one bursty load</text>`,
    '</svg>',
  );
  return parts.join('\n') + '\n';
}

async function main(): Promise<void> {
  const out = path.resolve(__dirname, '..', '..', 'docs', 'algorithms.svg');
  const series = await simulate();
  writeFileSync(out, renderSvg(series));
  for (const s of series) process.stdout.write(`${s.label}: ${s.points.at(-1)?.[1] ?? 0}\n`);
  process.stdout.write(`wrote ${out}\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exitCode = 1;
  });
}
