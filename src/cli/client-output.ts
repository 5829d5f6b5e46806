// How ratelimit-client prints an answer: a line per descriptor for people, or the /json JSON.
import type { RateLimitResponse } from '../engine';

/** One descriptor as the command line wrote it. */
export interface DescriptorArgument {
  readonly text: string;
}

type Status = RateLimitResponse['statuses'][number];

/** What is left of the status's limit, or what the limit is when "left" means nothing. */
function limitDetail(status: Status): string {
  const limit = status.currentLimit;
  if (limit === undefined) return 'no limit applies';
  // proto3 leaves a zero out, so a limit of 0 arrives without requests_per_unit.
  const perUnit = (limit.requestsPerUnit as number | undefined) ?? 0;
  if (perUnit === 0) return 'blocked: requests_per_unit 0';
  const reset = status.durationUntilResetSeconds ?? 0;
  return `${status.limitRemaining} of ${perUnit} per ${limit.unit.toLowerCase()} left, resets in ${reset}s`;
}

/**
 * `overall: OK`, then per descriptor its code, what is left of its limit and when it resets
 * (or `blocked` for a limit of 0), in the order the descriptors were given.
 */
export function describeResponse(
  response: RateLimitResponse,
  descriptors: readonly DescriptorArgument[],
): string {
  const lines = [`overall: ${response.overallCode}`];
  response.statuses.forEach((status, i) => {
    const which = descriptors[i]?.text ?? `#${i + 1}`;
    lines.push(`  ${which}: ${status.code}, ${limitDetail(status)}`);
  });
  return `${lines.join('\n')}\n`;
}
