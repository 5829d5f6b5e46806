// How ratelimit-client prints an answer: a line per descriptor for people, or the /json JSON.
import type { RateLimitResponse } from '../engine';

/** One descriptor as the command line wrote it. */
export interface DescriptorArgument {
  readonly text: string;
}

/**
 * `overall: OK`, then per descriptor its code, what is left of its limit and when it resets,
 * in the order the descriptors were given.
 */
export function describeResponse(
  response: RateLimitResponse,
  descriptors: readonly DescriptorArgument[],
): string {
  const lines = [`overall: ${response.overallCode}`];
  response.statuses.forEach((status, i) => {
    const which = descriptors[i]?.text ?? `#${i + 1}`;
    const limit = status.currentLimit;
    const detail =
      limit === undefined
        ? 'no limit applies'
        : `${status.limitRemaining} of ${limit.requestsPerUnit} per ${limit.unit.toLowerCase()} left, resets in ${status.durationUntilResetSeconds ?? 0}s`;
    lines.push(`  ${which}: ${status.code}, ${detail}`);
  });
  return `${lines.join('\n')}\n`;
}
