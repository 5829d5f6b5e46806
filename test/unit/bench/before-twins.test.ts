// BENCH_BEFORE's twins: every service row again on the other checkout, except the rows that
// need what an older build does not serve (RLQS), which run alone and say so.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeTwins } from '../../../bench/before-twins';
import { RLQS_NAMES, RLQS_ROWS } from '../../../bench/rlqs-rows';
import { NAMES, SCENARIOS } from '../../../bench/scenarios';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A checkout's directory, with the quota service built or not. */
function checkout(hasQuota: boolean): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'rl-before-'));
  dirs.push(dir);
  if (hasQuota) {
    mkdirSync(path.join(dir, 'dist', 'src', 'quota'), { recursive: true });
    writeFileSync(path.join(dir, 'dist', 'src', 'quota', 'index.js'), '');
  }
  return dir;
}

const redisOne = SCENARIOS.find((s) => s.name === NAMES.redisOne);
const rows = [...(redisOne === undefined ? [] : [redisOne]), ...RLQS_ROWS];

test('a build without RLQS: its rows run alone, a note says so, side by side without a baseline', () => {
  const before = checkout(false);
  for (const sideBySide of [false, true]) {
    const lines: string[] = [];
    const out = beforeTwins(rows, before, sideBySide, (line) => lines.push(line));
    expect(out.map((s) => s.name)).toEqual([
      NAMES.redisOne,
      `${NAMES.redisOne} [before]`,
      ...RLQS_ROWS.map((s) => s.name),
    ]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('serves no RLQS');
    const beside = out.find((s) => s.name === RLQS_NAMES.beside);
    expect(beside?.baseline).toBe(sideBySide ? undefined : NAMES.redisOne);
    expect(out.find((s) => s.name === `${NAMES.redisOne} [before]`)?.beside).toBe(
      sideBySide ? NAMES.redisOne : undefined,
    );
  }
});

test('a build with RLQS: every service row has its twin, and nothing is said', () => {
  const lines: string[] = [];
  const out = beforeTwins(rows, checkout(true), true, (line) => lines.push(line));
  expect(out).toHaveLength(2 * rows.length);
  expect(out.filter((s) => s.name.endsWith('[before]'))).toHaveLength(rows.length);
  expect(lines).toEqual([]);
});
