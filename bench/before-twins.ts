// The [before] twins of BENCH_BEFORE: each service row again on another built checkout's
// service, right after its own or (BENCH_SIDE_BY_SIDE) at the same time. A row that needs what
// the other checkout does not serve (RLQS, in a build older than it) runs without a twin.
import { hasRlqs, needsRlqs } from './rlqs-rows';
import type { Scenario } from './scenarios';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The row without its baseline: it would be divided by a row measured otherwise. */
function withoutBaseline(scenario: Scenario): Scenario {
  const copy: Mutable<Scenario> = { ...scenario };
  delete copy.baseline;
  return copy;
}

function twin(scenario: Scenario, before: string, isSideBySide: boolean): Scenario {
  return {
    ...scenario,
    name: `${scenario.name} [before]`,
    serviceRoot: before,
    baseline: scenario.name,
    ...(isSideBySide ? { beside: scenario.name } : {}),
  };
}

/** The rows with their twins on the checkout at `before`, and a note for those left alone. */
export function beforeTwins(
  scenarios: readonly Scenario[],
  before: string,
  isSideBySide: boolean,
  write: (line: string) => void = (line) => process.stdout.write(line),
): Scenario[] {
  const lacksRlqs = !hasRlqs(before);
  const alone = new Set(
    scenarios.filter((s) => s.server === 'service' && lacksRlqs && needsRlqs(s)),
  );
  if (alone.size > 0) {
    const names = [...alone].map((s) => `"${s.name}"`).join(', ');
    write(
      `note: BENCH_BEFORE=${before} serves no RLQS (it has no dist/src/quota): ${names} run on this checkout only, without a [before] twin` +
        (isSideBySide
          ? '; alone on the core, so their figures do not compare with the side-by-side rows, and none is divided by its baseline row\n'
          : '\n'),
    );
  }
  return scenarios.flatMap((s) => {
    if (s.server !== 'service') return [s];
    if (alone.has(s)) return [isSideBySide ? withoutBaseline(s) : s];
    return [s, twin(s, before, isSideBySide)];
  });
}
