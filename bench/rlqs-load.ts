// The RLQS load generator: Envoys' quota streams (StreamRateLimitQuotas) over a few connections,
// each stream watching its own buckets, then reporting their usage either as fast as the server
// reads the reports (one message in flight per stream: a round of one report per stream, then a
// PING whose answer says the server has read them) or every interval, as Envoy does. Measured
// (a window after a warm-up, like bench/load.ts) or, without a window, kept up beside another
// load until SIGTERM, when it prints what it did.
import { readFileSync } from 'node:fs';
import { messageType } from '../src/lib/proto';
import type { LoadResult } from './load';
import { grpcFrame, RlqsConnection } from './rlqs-wire';

/** The domain of the bench's quota rule (bench/rlqs-rows.ts writes it). */
export const RLQS_DOMAIN = 'rlqs_bench';

export interface RlqsShape {
  readonly connections: number;
  readonly streamsPerConnection: number;
  /** Distinct buckets per stream, each in every report of the stream. */
  readonly bucketsPerStream: number;
  /** Each stream reports every this many ms; undefined: as fast as the server reads them. */
  readonly intervalMs?: number;
}

export interface RlqsLoadOptions {
  readonly host: string;
  readonly port: number;
  readonly shape: RlqsShape;
  readonly warmupMs: number;
  /** The measured window; undefined: reports until SIGTERM, then prints its summary. */
  readonly durationMs?: number;
}

/** What the streams did, as a summary line can say it. */
export interface RlqsSummary {
  readonly streams: number;
  /** Report messages (each of bucketsPerStream usages): read by the server, or sent. */
  readonly messages: number;
  readonly usages: number;
  /** Over how long messages and usages were counted. */
  readonly seconds: number;
  /** Bucket actions received, after the first assignment of each bucket. */
  readonly assignments: number;
  readonly abandons: number;
  readonly streamsEnded: number;
  /** Why streams ended, with how many. */
  readonly endings: Readonly<Record<string, number>>;
  /** From a stream's first report (its watches) to its first response. */
  readonly watchMs: LoadResult['latencyMs'];
  readonly cpuSeconds: number;
}

export type RlqsLoadResult = LoadResult & { readonly rlqs: RlqsSummary };

const RLQS_PROTO = 'envoy/service/rate_limit_quota/v3/rlqs.proto';
const reportsType = messageType(
  RLQS_PROTO,
  'envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports',
);
const responseType = messageType(
  RLQS_PROTO,
  'envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse',
);
/** A report's time_elapsed when reports go as fast as they can. */
const FLOOD_ELAPSED_MS = 1000;
/** Envoy's first report of a bucket covers almost no time. */
const WATCH_ELAPSED_MS = 1;
const WATCH_TIMEOUT_MS = 30_000;
/** Interval mode: a connection whose reports wait for window this deep skips a turn. */
const MAX_QUEUED_WRITES = 1000;

/** One stream's report of its buckets, framed. */
function report(buckets: readonly Record<string, string>[], elapsedMs: number): Buffer {
  const seconds = Math.floor(elapsedMs / 1000);
  const usage = (bucket: Record<string, string>): Record<string, unknown> => ({
    bucketId: { bucket },
    timeElapsed: { seconds, nanos: (elapsedMs - seconds * 1000) * 1e6 },
    numRequestsAllowed: 100,
    numRequestsDenied: 0,
  });
  const message = reportsType.fromObject({
    domain: RLQS_DOMAIN,
    bucketQuotaUsages: buckets.map(usage),
  });
  return grpcFrame(reportsType.encode(message).finish());
}

/** Bucket actions in a response: assignments and abandons. */
function actions(message: Buffer): { assign: number; abandon: number } {
  const decoded = responseType.toObject(responseType.decode(message)) as {
    bucketAction?: { abandonAction?: unknown }[];
  };
  const all = decoded.bucketAction ?? [];
  const abandon = all.filter((a) => a.abandonAction !== undefined).length;
  return { assign: all.length - abandon, abandon };
}

function percentiles(values: readonly number[]): LoadResult['latencyMs'] {
  const sorted = Float64Array.from(values).sort();
  const at = (p: number): number =>
    sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
  return { p50: at(50), p90: at(90), p99: at(99), max: sorted.at(-1) ?? 0 };
}

/** What a run does with the streams' events. */
interface Hooks {
  /** Every stream has its first assignment. */
  watching(): void;
  failure(why: string): void;
  /** The PING sent on connection `c` came back. */
  pong(c: number): void;
}

/** The streams of a run, their watches, and what came back. */
class RlqsStreams {
  readonly connections: RlqsConnection[];
  /** Per connection, per stream: the report it sends after its watch. */
  readonly reports: Buffer[][];
  private readonly watchStarted: (number | undefined)[][];
  private readonly watchMs: number[] = [];
  private watched = 0;
  private readonly total: number;
  assignments = 0;
  abandons = 0;
  streamsEnded = 0;
  readonly endings: Record<string, number> = {};

  constructor(
    options: RlqsLoadOptions,
    private readonly hooks: Hooks,
  ) {
    const { connections, streamsPerConnection: streams, bucketsPerStream } = options.shape;
    this.total = connections * streams;
    const buckets = (c: number, s: number): Record<string, string>[] =>
      Array.from({ length: bucketsPerStream }, (_, b) => ({
        name: 'bench',
        id: `c${c}s${s}b${b}`,
      }));
    const elapsed = options.shape.intervalMs ?? FLOOD_ELAPSED_MS;
    this.reports = Array.from({ length: connections }, (_, c) =>
      Array.from({ length: streams }, (_, s) => report(buckets(c, s), elapsed)),
    );
    this.watchStarted = Array.from({ length: connections }, () => []);
    this.connections = Array.from({ length: connections }, (_, c) => {
      const connection = new RlqsConnection(options.host, options.port, streams, {
        message: (i, message) => {
          this.onMessage(c, i, message);
        },
        ended: (_i, why) => {
          this.onEnded(why);
        },
        pong: () => {
          hooks.pong(c);
        },
      });
      const started = this.watchStarted[c] ?? [];
      connection.batch(() => {
        for (let s = 0; s < streams; s++) {
          started[s] = performance.now();
          connection.send(s, report(buckets(c, s), WATCH_ELAPSED_MS));
        }
      });
      return connection;
    });
  }

  get watchPercentiles(): RlqsSummary['watchMs'] {
    return percentiles(this.watchMs);
  }

  /** Sends a report on every open stream of connection `c`; how many were sent. */
  reportRound(c: number): number {
    const connection = this.connections[c];
    if (connection === undefined) return 0;
    let sent = 0;
    connection.batch(() => {
      (this.reports[c] ?? []).forEach((framed, s) => {
        if (connection.send(s, framed)) sent += 1;
      });
    });
    return sent;
  }

  close(): void {
    for (const c of this.connections) c.close();
  }

  private onMessage(c: number, i: number, message: Buffer): void {
    const started = this.watchStarted[c]?.[i];
    if (started !== undefined) {
      (this.watchStarted[c] ?? [])[i] = undefined;
      this.watchMs.push(performance.now() - started);
      this.watched += 1;
      if (this.watched === this.total) this.hooks.watching();
      return;
    }
    const counted = actions(message);
    this.assignments += counted.assign;
    this.abandons += counted.abandon;
  }

  private onEnded(why: string): void {
    this.streamsEnded += 1;
    this.endings[why] = (this.endings[why] ?? 0) + 1;
    if (this.watched < this.total)
      this.hooks.failure(`a stream ended before its first answer: ${why}`);
  }
}

function cpuSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}

function summary(
  streams: RlqsStreams,
  counts: { messages: number; usages: number; seconds: number; cpuSeconds: number },
): RlqsSummary {
  return {
    streams: streams.connections.reduce((sum, c) => sum + c.streams, 0),
    ...counts,
    assignments: streams.assignments,
    abandons: streams.abandons,
    streamsEnded: streams.streamsEnded,
    endings: streams.endings,
    watchMs: streams.watchPercentiles,
  };
}

/** Fails a run whose streams do not all get their first assignment in time. */
function watchDeadline(fail: (why: string) => void): () => void {
  const timer = setTimeout(() => {
    fail(`not every stream got its first assignment within ${WATCH_TIMEOUT_MS} ms`);
  }, WATCH_TIMEOUT_MS);
  return () => {
    clearTimeout(timer);
  };
}

/**
 * Reports as fast as the server reads them: per connection, one report on each of its streams
 * and a PING; the next round when the PING comes back. Latency is that round trip.
 */
export function flood(options: RlqsLoadOptions, durationMs: number): Promise<RlqsLoadResult> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = [];
    const counts = { messages: 0, usages: 0, seconds: durationMs / 1000, cpuSeconds: 0 };
    const sentAt: { at: number; sent: number; counted: boolean }[] = [];
    let isMeasuring = false;
    let isStopping = false;
    const round = (c: number): void => {
      if (isStopping) return;
      const sent = streams.reportRound(c);
      if (sent === 0) return;
      sentAt[c] = { at: performance.now(), sent, counted: isMeasuring };
      streams.connections[c]?.ping();
    };
    const streams: RlqsStreams = new RlqsStreams(options, {
      watching: () => {
        cancelDeadline();
        process.stdout.write('warming\n');
        streams.connections.forEach((_, c) => {
          round(c);
        });
        setTimeout(measure, options.warmupMs);
      },
      failure: (why) => {
        streams.close();
        reject(new Error(why));
      },
      pong: (c) => {
        const last = sentAt[c];
        if (last !== undefined && last.counted && isMeasuring) {
          latencies.push(performance.now() - last.at);
          counts.messages += last.sent;
          counts.usages += last.sent * options.shape.bucketsPerStream;
        }
        round(c);
      },
    });
    const cancelDeadline = watchDeadline((why) => {
      streams.close();
      reject(new Error(why));
    });
    const measure = (): void => {
      isMeasuring = true;
      process.stdout.write('measuring\n');
      const cpuAtStart = process.cpuUsage();
      setTimeout(() => {
        counts.cpuSeconds = cpuSince(cpuAtStart);
        isMeasuring = false;
        isStopping = true;
        streams.close();
        resolve(floodResult(streams, counts, latencies, durationMs));
      }, durationMs);
    };
  });
}

function floodResult(
  streams: RlqsStreams,
  counts: { messages: number; usages: number; seconds: number; cpuSeconds: number },
  latencies: readonly number[],
  durationMs: number,
): RlqsLoadResult {
  const latency = percentiles(latencies);
  const ended = streams.streamsEnded;
  return {
    // A stream that ended counts as a wrong answer: every one should stay open.
    completed: counts.usages + ended,
    errors: ended,
    durationMs,
    latencyMs: latency,
    outcomes: { 'usage reports': counts.usages, ...(ended > 0 ? { 'streams ended': ended } : {}) },
    cpuSeconds: counts.cpuSeconds,
    rlqs: summary(streams, counts),
  };
}

/**
 * Reports every interval on every stream (the connections' turns spread over the interval)
 * until SIGTERM, then prints its summary. 'watching' once every stream has its assignments.
 */
export function beside(options: RlqsLoadOptions, intervalMs: number): Promise<RlqsSummary> {
  return new Promise((resolve, reject) => {
    const counts = { messages: 0, usages: 0, seconds: 0, cpuSeconds: 0 };
    const timers: NodeJS.Timeout[] = [];
    let startedAt = 0;
    let cpuAtStart = process.cpuUsage();
    const turn = (c: number): void => {
      if ((streams.connections[c]?.queuedWrites ?? 0) > MAX_QUEUED_WRITES) return;
      const sent = streams.reportRound(c);
      counts.messages += sent;
      counts.usages += sent * options.shape.bucketsPerStream;
    };
    const streams: RlqsStreams = new RlqsStreams(options, {
      watching: () => {
        cancelDeadline();
        startedAt = performance.now();
        cpuAtStart = process.cpuUsage();
        streams.connections.forEach((_, c) => {
          const offset = (c * intervalMs) / streams.connections.length;
          timers.push(
            setTimeout(() => {
              turn(c);
              timers.push(setInterval(turn, intervalMs, c));
            }, offset),
          );
        });
        process.stdout.write('watching\n');
      },
      failure: (why) => {
        streams.close();
        reject(new Error(why));
      },
      pong: () => undefined,
    });
    const cancelDeadline = watchDeadline((why) => {
      streams.close();
      reject(new Error(why));
    });
    process.once('SIGTERM', () => {
      for (const t of timers) clearTimeout(t);
      counts.seconds = (performance.now() - startedAt) / 1000;
      counts.cpuSeconds = cpuSince(cpuAtStart);
      resolve(summary(streams, counts));
      streams.close();
    });
  });
}

if (require.main === module) {
  const file = process.argv[2];
  if (file === undefined) {
    process.stderr.write('usage: rlqs-load OPTIONS_FILE\n');
    process.exit(2);
  }
  const options = JSON.parse(readFileSync(file, 'utf8')) as RlqsLoadOptions;
  const { durationMs } = options;
  const { intervalMs } = options.shape;
  const run: Promise<unknown> =
    durationMs !== undefined
      ? flood(options, durationMs)
      : intervalMs !== undefined
        ? beside(options, intervalMs)
        : Promise.reject(new Error('streams beside another load need shape.intervalMs'));
  run.then(
    (result) => {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(`rlqs-load: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
