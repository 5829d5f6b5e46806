// ratelimit-client -replay: the same requests to two services, one after the other, and every
// difference between their answers.
import * as grpc from '@grpc/grpc-js';
import { describeError } from '../lib/errors';
import { responseFromWire } from '../server';
import { compareOutcomes, type Difference, type Outcome } from './compare-answers';
import type { ReplayRequest } from './replay-file';
import { shouldRateLimit, type RlsClient } from './rls-client';

/** One of the two services compared. */
export interface ReplayEndpoint {
  readonly address: string;
  readonly client: RlsClient;
}

export interface ReplayOptions {
  readonly requests: readonly ReplayRequest[];
  readonly first: ReplayEndpoint;
  readonly second: ReplayEndpoint;
  readonly timeoutSeconds: number;
  readonly resetToleranceSeconds: number;
}

/** Exit codes: no difference, differences, (2 is wrong flags or file), a service unreachable. */
export const REPLAY_EXIT = { same: 0, different: 1, unreachable: 3 } as const;

/** A call that says nothing of the service's decisions: nothing to compare. */
const TRANSPORT_FAILURES: ReadonlySet<number> = new Set([
  grpc.status.UNAVAILABLE,
  grpc.status.DEADLINE_EXCEEDED,
]);

class Unreachable extends Error {}

async function outcomeOf(
  endpoint: ReplayEndpoint,
  request: ReplayRequest,
  timeoutSeconds: number,
): Promise<Outcome> {
  try {
    const wire = await shouldRateLimit(endpoint.client, request.wire, timeoutSeconds);
    return { kind: 'answer', response: responseFromWire(wire) };
  } catch (e: unknown) {
    const code = (e as Partial<grpc.ServiceError>).code;
    if (code === undefined || TRANSPORT_FAILURES.has(code))
      throw new Unreachable(`${endpoint.address}, line ${request.line}: ${describeError(e)}`);
    return { kind: 'error', code: grpc.status[code] };
  }
}

/** `a=1,b=2` for the report, the descriptor a status answers. */
function descriptorText(request: ReplayRequest, field: string): string {
  const index = /^statuses\[(\d+)\]/.exec(field)?.[1];
  const descriptor = index === undefined ? undefined : request.request.descriptors[Number(index)];
  if (descriptor === undefined) return '';
  return ` (${descriptor.entries.map((e) => `${e.key}=${e.value}`).join(',')})`;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function reportLine(request: ReplayRequest, d: Difference): string {
  const note = d.note === undefined ? '' : ` [${d.note}]`;
  return `line ${request.line}: ${d.field}${descriptorText(request, d.field)}: first ${d.first}, second ${d.second}${note}\n`;
}

/**
 * Sends each request to the first service, then to the second, and writes a line per difference
 * and a summary. Resolves with a REPLAY_EXIT code; stops at the first call that cannot reach a
 * service (UNAVAILABLE, DEADLINE_EXCEEDED), as nothing after it would compare decisions.
 */
export async function replay(
  options: ReplayOptions,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const { first, second, timeoutSeconds, resetToleranceSeconds } = options;
  out.write(`first: ${first.address}, second: ${second.address}\n`);
  let differences = 0;
  let requestsDiffering = 0;
  try {
    for (const request of options.requests) {
      const a = await outcomeOf(first, request, timeoutSeconds);
      const b = await outcomeOf(second, request, timeoutSeconds);
      const found = compareOutcomes(a, b, resetToleranceSeconds);
      for (const d of found) out.write(reportLine(request, d));
      differences += found.length;
      if (found.length > 0) requestsDiffering += 1;
    }
  } catch (e: unknown) {
    if (!(e instanceof Unreachable)) throw e;
    err.write(`cannot compare: ${e.message}\n`);
    return REPLAY_EXIT.unreachable;
  }
  const total = options.requests.length;
  out.write(
    differences === 0
      ? `${count(total, 'request')}: no differences\n`
      : `${count(total, 'request')}: ${count(differences, 'difference')} in ${count(requestsDiffering, 'request')}\n`,
  );
  return differences === 0 ? REPLAY_EXIT.same : REPLAY_EXIT.different;
}
