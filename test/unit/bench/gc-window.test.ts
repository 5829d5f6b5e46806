// The bench's GC column adds up what each server's probe recorded inside the measured window.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gcMsInWindow } from '../../../bench/gc-window';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gc-window-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function record(pid: number, events: number[]): void {
  writeFileSync(path.join(dir, `${pid}.json`), JSON.stringify(events));
}

it('counts the collections that began inside the window, over every process', () => {
  // Pairs of start (ms since the epoch) and length.
  record(101, [999, 5, 1000, 2, 1500, 3.5, 2000, 7]);
  record(102, [1999.9, 1, 2500, 9]);
  expect(gcMsInWindow(dir, [101, 102], 1000, 2000)).toBeCloseTo(6.5);
  expect(gcMsInWindow(dir, [101], 3000, 4000)).toBe(0);
});

it('gives no figure when a process left no record, rather than a low one', () => {
  record(101, [1500, 3]);
  expect(gcMsInWindow(dir, [101, 103], 1000, 2000)).toBeUndefined();
});
