// The load generator: keeps N calls in flight over HTTP/2 (gRPC) or HTTP/1.1 (/json) and
// reports throughput, latency percentiles and how each call ended. It runs in its own
// process, pinned to its own core, and is cheaper per call than the server it measures.
import { readFileSync } from 'node:fs';
import { RawHttpConnection, jsonRequest } from './h1-raw';
import { RawGrpcConnection } from './h2-raw';

export interface LoadOptions {
  readonly kind: 'grpc' | 'http';
  readonly host: string;
  readonly port: number;
  /** gRPC: framed request messages (base64); HTTP: JSON bodies. Sent in rotation. */
  readonly bodies: readonly string[];
  /**
   * When set, each body's run of PLACEHOLDER digits is replaced per call by the next number
   * below `distinct`, zero-padded: a million distinct keys without a million bodies.
   */
  readonly distinct?: number;
  /**
   * Calls sent before the warm-up, numbered the same way (every placeholder of a body gets the
   * next number): fills the counters so that the measured window meets `distinct` live keys.
   */
  readonly fill?: { readonly bodies: readonly string[]; readonly calls: number };
  /** gRPC: a grpc-timeout header on every call (Envoy sends its filter's timeout, 20m by default). */
  readonly grpcTimeout?: string;
  readonly concurrency: number;
  /** gRPC connections the calls in flight are spread over; HTTP uses one per call. */
  readonly connections: number;
  readonly warmupMs: number;
  /**
   * The warm-up's clock starts on SIGUSR2 rather than at once: the bench opens what must run
   * beside the load (quota streams) under the load, and only then lets the window come.
   */
  readonly holdWarmUp?: boolean;
  readonly durationMs: number;
}

export interface LoadResult {
  readonly completed: number;
  readonly errors: number;
  readonly durationMs: number;
  readonly latencyMs: { p50: number; p90: number; p99: number; max: number };
  readonly outcomes: Record<string, number>;
  /** CPU seconds this generator spent in the measured window, to show it was not the limit. */
  readonly cpuSeconds: number;
}

const PATH = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';
const GOOD = new Set(['OK', 'OVER_LIMIT', 'http-200', 'http-429']);

type Send = (body: Buffer, done: (outcome: string) => void) => void;

function grpcSender(options: LoadOptions): { send: Send; close: () => void } {
  const connections = Array.from(
    { length: options.connections },
    () => new RawGrpcConnection(options.host, options.port, PATH, options.grpcTimeout),
  );
  let next = 0;
  return {
    send: (body, done) => {
      const connection = connections[next++ % connections.length];
      if (connection === undefined) throw new Error('no connection');
      connection.call(body, done);
    },
    close: () => {
      for (const c of connections) c.close();
    },
  };
}

function httpSender(options: LoadOptions): { send: Send; close: () => void } {
  const idle = Array.from(
    { length: options.concurrency },
    () => new RawHttpConnection(options.host, options.port),
  );
  const all = [...idle];
  return {
    send: (body, done) => {
      const connection = idle.pop();
      if (connection === undefined) throw new Error('more calls in flight than connections');
      connection.call(body, (outcome) => {
        idle.push(connection);
        done(outcome);
      });
    },
    close: () => {
      for (const c of all) c.close();
    },
  };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** The run of characters a body marks its per-call number with (gRPC and JSON alike). */
export const PLACEHOLDER = '#######';

/** Every offset at which `mark` occurs in `body`. */
function offsets(body: Buffer, mark: string): number[] {
  const out: number[] = [];
  for (let at = body.indexOf(mark); at >= 0; at = body.indexOf(mark, at + mark.length))
    out.push(at);
  if (out.length === 0) throw new Error(`distinct: a body lacks ${mark}`);
  return out;
}

/** The next body: a rotating fixed body, or a copy numbered with the next distinct values. */
function bodySource(bodies: readonly Buffer[], distinct: number | undefined): () => Buffer {
  let index = 0;
  if (distinct === undefined) return () => bodies[index++ % bodies.length] ?? Buffer.alloc(0);
  const marks = bodies.map((b) => offsets(b, PLACEHOLDER));
  let n = 0;
  return () => {
    const i = index++ % bodies.length;
    const copy = Buffer.from(bodies[i] ?? Buffer.alloc(0));
    for (const at of marks[i] ?? [])
      copy.write(String(n++ % distinct).padStart(PLACEHOLDER.length, '0'), at, 'latin1');
    return copy;
  };
}

/** Runs the load: warm-up first (not measured), then the measured window. */
export function runLoad(options: LoadOptions): Promise<LoadResult> {
  const encode = (b: string): Buffer =>
    options.kind === 'grpc'
      ? Buffer.from(b, 'base64')
      : jsonRequest(options.host, options.port, Buffer.from(b));
  const measuredBody = bodySource(options.bodies.map(encode), options.distinct);
  const fillBody = bodySource((options.fill?.bodies ?? []).map(encode), options.distinct);
  let toFill = options.fill?.calls ?? 0;
  const nextBody = (): Buffer => {
    if (toFill === 0) return measuredBody();
    toFill -= 1;
    if (toFill === 0) startWarmUp();
    return fillBody();
  };
  const { send, close } = options.kind === 'grpc' ? grpcSender(options) : httpSender(options);
  // Preallocated so that recording a latency never allocates during the measured window.
  let latencies = new Float64Array(1 << 20);
  const outcomes: Record<string, number> = {};
  let completed = 0;
  let errors = 0;
  let isMeasuring = false;
  let isStopping = false;
  let inFlight = 0;
  let cpuAtStart = process.cpuUsage();
  let cpuInWindow = 0;
  let startWarmUp = (): void => undefined;
  return new Promise((resolve) => {
    const finish = (): void => {
      close();
      const sorted = latencies.subarray(0, completed).sort();
      resolve({
        completed,
        errors,
        durationMs: options.durationMs,
        latencyMs: {
          p50: percentile(sorted, 50),
          p90: percentile(sorted, 90),
          p99: percentile(sorted, 99),
          max: sorted[sorted.length - 1] ?? 0,
        },
        outcomes,
        cpuSeconds: cpuInWindow,
      });
    };
    const fire = (): void => {
      if (isStopping) {
        if (inFlight === 0) finish();
        return;
      }
      const body = nextBody();
      const started = process.hrtime.bigint();
      const counted = isMeasuring;
      inFlight += 1;
      send(body, (outcome) => {
        inFlight -= 1;
        if (counted && isMeasuring) {
          if (completed === latencies.length) {
            const grown = new Float64Array(latencies.length * 2);
            grown.set(latencies);
            latencies = grown;
          }
          latencies[completed] = Number(process.hrtime.bigint() - started) / 1e6;
          completed += 1;
          outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
          if (!GOOD.has(outcome)) errors += 1;
        }
        // A closed connection would spin: stop issuing and let the window end.
        if (outcome === 'closed') {
          isStopping = true;
          if (inFlight === 0) finish();
          return;
        }
        fire();
      });
    };
    startWarmUp = (): void => {
      // Tells the bench to bring the server to its steady state (bench/gc-probe.ts).
      process.stdout.write('warming\n');
      const warmUp = (): void => {
        setTimeout(measure, options.warmupMs);
      };
      if (options.holdWarmUp === true) process.once('SIGUSR2', warmUp);
      else warmUp();
    };
    const measure = (): void => {
      isMeasuring = true;
      // Tells the bench when to start counting the server's CPU.
      process.stdout.write('measuring\n');
      cpuAtStart = process.cpuUsage();
      setTimeout(() => {
        const used = process.cpuUsage(cpuAtStart);
        cpuInWindow = (used.user + used.system) / 1e6;
        isMeasuring = false;
        isStopping = true;
        if (inFlight === 0) finish();
      }, options.durationMs);
    };
    for (let i = 0; i < options.concurrency; i++) fire();
    if ((options.fill?.calls ?? 0) === 0) startWarmUp();
  });
}

if (require.main === module) {
  const file = process.argv[2];
  if (file === undefined) {
    process.stderr.write('usage: load OPTIONS_FILE\n');
    process.exit(2);
  }
  const options = JSON.parse(readFileSync(file, 'utf8')) as LoadOptions;
  runLoad(options).then(
    (result) => {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(`load: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
