// What ratelimit-client -replay counts as a difference between two services' answers: every
// decision field, the reset within its tolerance, a window boundary between the two calls
// noted, a failed call compared by its gRPC code alone. Resets run from the window's length down
// to 1, as the reference computes them (envoyproxy/ratelimit src/utils/utilities.go,
// CalculateReset), so a boundary between the calls shows as 1 against the window's length.
import { BOUNDARY_NOTE, compareOutcomes, type Outcome } from '../../../src/cli/compare-answers';
import type { DescriptorStatus, RateLimitResponse } from '../../../src/engine';

function status(over: Partial<DescriptorStatus> = {}): DescriptorStatus {
  return {
    code: 'OK',
    currentLimit: { requestsPerUnit: 10, unit: 'MINUTE', name: undefined },
    limitRemaining: 7,
    durationUntilResetSeconds: 30,
    ...over,
  };
}

function answer(...statuses: DescriptorStatus[]): Outcome {
  const response: RateLimitResponse = {
    overallCode: statuses.some((s) => s.code === 'OVER_LIMIT') ? 'OVER_LIMIT' : 'OK',
    statuses,
    responseHeadersToAdd: [],
    requestHeadersToAdd: [],
    dynamicMetadata: undefined,
  };
  return { kind: 'answer', response };
}

describe('compareOutcomes', () => {
  it('finds nothing between equal answers, nor between resets within the tolerance', () => {
    expect(compareOutcomes(answer(status()), answer(status()), 1)).toEqual([]);
    expect(
      compareOutcomes(answer(status()), answer(status({ durationUntilResetSeconds: 29 })), 1),
    ).toEqual([]);
  });

  it('names each field that differs, with both values', () => {
    const first = answer(status(), status());
    const second = answer(
      status({ limitRemaining: 6 }),
      status({
        code: 'OVER_LIMIT',
        currentLimit: { requestsPerUnit: 5, unit: 'HOUR', name: undefined },
        limitRemaining: 0,
        durationUntilResetSeconds: 1000,
      }),
    );
    expect(compareOutcomes(first, second, 1)).toEqual([
      { field: 'overall_code', first: 'OK', second: 'OVER_LIMIT' },
      { field: 'statuses[0].limit_remaining', first: '7', second: '6' },
      { field: 'statuses[1].code', first: 'OK', second: 'OVER_LIMIT' },
      { field: 'statuses[1].current_limit', first: '10/MINUTE', second: '5/HOUR' },
      { field: 'statuses[1].limit_remaining', first: '7', second: '0' },
      { field: 'statuses[1].duration_until_reset', first: '30s', second: '1000s' },
    ]);
  });

  it('reports a reset past the tolerance, and a status without a limit', () => {
    expect(
      compareOutcomes(answer(status()), answer(status({ durationUntilResetSeconds: 28 })), 1),
    ).toEqual([{ field: 'statuses[0].duration_until_reset', first: '30s', second: '28s' }]);
    expect(
      compareOutcomes(
        answer(status()),
        answer(
          status({
            currentLimit: undefined,
            limitRemaining: 0,
            durationUntilResetSeconds: undefined,
          }),
        ),
        1,
      ),
    ).toEqual([
      { field: 'statuses[0].current_limit', first: '10/MINUTE', second: 'none' },
      { field: 'statuses[0].limit_remaining', first: '7', second: '0' },
      { field: 'statuses[0].duration_until_reset', first: '30s', second: 'none' },
    ]);
  });

  it('notes a window boundary between the calls: the second call counted in a fresh window', () => {
    const before = status({ limitRemaining: 2, durationUntilResetSeconds: 1 });
    const after = status({ limitRemaining: 9, durationUntilResetSeconds: 60 });
    expect(compareOutcomes(answer(before), answer(after), 1)).toEqual([
      { field: 'statuses[0].limit_remaining', first: '2', second: '9', note: BOUNDARY_NOTE },
      {
        field: 'statuses[0].duration_until_reset',
        first: '1s',
        second: '60s',
        note: BOUNDARY_NOTE,
      },
    ]);
  });

  it('reports a different number of statuses and compares the ones both have', () => {
    expect(compareOutcomes(answer(status(), status()), answer(status()), 1)).toEqual([
      { field: 'statuses', first: '2 statuses', second: '1 statuses' },
    ]);
  });

  it('compares a failed call by its gRPC code only', () => {
    const unknown: Outcome = { kind: 'error', code: 'UNKNOWN' };
    const invalid: Outcome = { kind: 'error', code: 'INVALID_ARGUMENT' };
    expect(compareOutcomes(invalid, { kind: 'error', code: 'INVALID_ARGUMENT' }, 1)).toEqual([]);
    expect(compareOutcomes(unknown, invalid, 1)).toEqual([
      { field: 'grpc_status', first: 'UNKNOWN', second: 'INVALID_ARGUMENT' },
    ]);
    expect(compareOutcomes(answer(status()), invalid, 1)).toEqual([
      { field: 'grpc_status', first: 'OK', second: 'INVALID_ARGUMENT' },
    ]);
  });
});
