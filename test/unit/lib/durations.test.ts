// Go-syntax durations.
import { parseGoDurationMs } from '../../../src/lib/durations';

it.each([
  ['0', 0],
  ['10s', 10_000],
  ['1m30s', 90_000],
  ['24h', 86_400_000],
  ['150us', 0.15],
  ['150µs', 0.15],
  ['500ms', 500],
  ['1.5h', 5_400_000],
  ['2h45m', 9_900_000],
  ['1000ns', 0.001],
])('parses %s', (text, ms) => {
  expect(parseGoDurationMs(text)).toBeCloseTo(ms, 9);
});

it.each(['', '10', '5 seconds', 's', '1d', '1m-3s', 'abc'])('refuses %j', (text) => {
  expect(parseGoDurationMs(text)).toBeUndefined();
});
