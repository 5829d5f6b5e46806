// The configuration-at-scale section of the bench: its table and its targets.
import type { ScaleLoad } from './config-scale-run';
import type { Row } from './report';
import { NAMES } from './scenarios';
import type { Target } from './targets';

/** The name BENCH_ONLY chooses the section by. */
export const CONFIG_SCALE = 'config scale';

const ms = (value: number): string => `${value.toFixed(0)} ms`;
const mib = (value: number): string => `${value.toFixed(0)} MiB`;

/** One line per load: start to first answer, memory, and the reload under load when measured. */
export function scaleTable(loads: readonly ScaleLoad[]): string {
  const lines = [
    '| configuration | start to first answer | RSS after loading | under load while loaded again | longest answer | p99 | longest gap between turns | longest main-thread CPU between turns | loads in the window | ACK | RSS after |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const l of loads) {
    const r = l.reload;
    const cells = [
      `${l.rules.toLocaleString('en')} rules, ${l.source === 'file' ? 'file' : 'xDS'}`,
      ms(l.firstAnswerMs),
      mib(l.rssAfterLoadMiB),
      r === undefined ? '-' : `${r.seconds} s, ${r.answersPerSecond.toFixed(0)}/s`,
      r === undefined ? '-' : ms(r.longestAnswerMs),
      r === undefined ? '-' : `${r.p99Ms.toFixed(1)} ms`,
      r === undefined ? '-' : `${r.longestGapMs.toFixed(1)} ms`,
      r === undefined ? '-' : `${r.longestBusyMs.toFixed(1)} ms`,
      r === undefined ? '-' : String(r.reloads),
      r?.ackMs === undefined ? '-' : ms(r.ackMs),
      r === undefined ? '-' : mib(r.rssAfterMiB),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return `${lines.join('\n')}\n\n`;
}

/** The targets of one reloaded configuration (files or xDS). */
function reloadTargets(load: ScaleLoad): Target[] {
  const where = load.source === 'file' ? 'file' : 'xDS';
  const rules = `${load.rules.toLocaleString('en')} rules (${where})`;
  const out: Target[] = [
    {
      target: `config scale: ${rules}: first answer within 3 s of start`,
      measured: ms(load.firstAnswerMs),
      isMet: load.firstAnswerMs <= 3000,
    },
  ];
  const r = load.reload;
  if (r === undefined) return out;
  out.push(
    {
      target: `config scale: ${rules}: RSS below 400 MiB after loading and ${r.seconds} s of traffic`,
      measured: `${mib(r.rssAfterMiB)} (${mib(load.rssAfterLoadMiB)} after loading)`,
      isMet: r.rssAfterMiB < 400,
    },
    {
      target: `config scale: ${rules}: no answer over 100 ms while it is loaded again under load`,
      measured: `${r.longestAnswerMs.toFixed(1)} ms longest (the service's longest gap between turns ${r.longestGapMs.toFixed(1)} ms, of its own CPU ${r.longestBusyMs.toFixed(1)} ms), ${r.reloads} loads in the window`,
      isMet: r.longestAnswerMs <= 100 && r.reloads > 0,
    },
  );
  if (r.ackMs !== undefined)
    out.push({
      target: `config scale: ${rules}: ACK within 5 s of the push`,
      measured: ms(r.ackMs),
      isMet: r.ackMs <= 5000,
    });
  return out;
}

/** The last of 10,000 prefix rules against the first, and every reloaded load's targets. */
export function scaleTargets(rows: readonly Row[], loads: readonly ScaleLoad[]): Target[] {
  const out: Target[] = [];
  const last = rows.find((r) => r.scenario.name === NAMES.lastPrefix);
  if (last?.baselineRatio !== undefined) {
    out.push({
      target: 'config scale: the last of 10,000 prefix rules at >= 0.8x the first one',
      measured: `${last.baselineRatio.toFixed(2)}x`,
      isMet: last.baselineRatio >= 0.8,
    });
  }
  for (const load of loads) if (load.reload !== undefined) out.push(...reloadTargets(load));
  return out;
}
