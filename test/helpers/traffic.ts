// A steady stream of ShouldRateLimit calls during a failover, each call's outcome and timing kept.
import type { ServiceError } from '@grpc/grpc-js';
import type { RlsClient } from './grpc-client';

/** One call of the stream. */
export interface CallRecord {
  readonly startMs: number;
  readonly endMs: number;
  /** The descriptor value the call counted, so a test can tell which shard it went to. */
  readonly value: string;
  readonly isOk: boolean;
  /** gRPC status code and details of a failed call. */
  readonly code?: number;
  readonly details?: string;
}

/** The longest a stream runs, so a test that forgets to stop it still ends. */
const MAX_RUN_MS = 90_000;

/**
 * Keeps `concurrency` calls in flight, one after another on each lane, the n-th call counting
 * `valueOf(n)`, until stop() or MAX_RUN_MS. A fresh value per call gives each call a key of
 * its own, so a test can tell which node counted which call.
 */
export class CallStream {
  private readonly records: CallRecord[] = [];
  private isRunning = false;
  private lanes: Promise<void>[] = [];
  private next = 0;

  constructor(
    private readonly client: RlsClient,
    private readonly request: (value: string) => unknown,
    private readonly valueOf: (n: number) => string,
    private readonly concurrency = 4,
  ) {}

  start(): void {
    this.isRunning = true;
    const stopAt = Date.now() + MAX_RUN_MS;
    this.lanes = Array.from({ length: this.concurrency }, async () => {
      while (this.isRunning && Date.now() < stopAt) await this.call();
    });
  }

  private async call(): Promise<void> {
    const value = this.valueOf(this.next++);
    const startMs = Date.now();
    try {
      await this.client.shouldRateLimit(this.request(value));
      this.records.push({ startMs, endMs: Date.now(), value, isOk: true });
    } catch (err: unknown) {
      const { code, details } = err as ServiceError;
      this.records.push({ startMs, endMs: Date.now(), value, isOk: false, code, details });
    }
  }

  /** Calls so far. */
  get calls(): readonly CallRecord[] {
    return this.records;
  }

  /** Successful calls started at or after `ms`, in the order they ended. */
  okAfter(ms: number): CallRecord[] {
    return this.records.filter((r) => r.isOk && r.startMs >= ms);
  }

  /** Stops after the calls in flight and returns every call made. */
  async stop(): Promise<readonly CallRecord[]> {
    this.isRunning = false;
    await Promise.all(this.lanes);
    return this.records;
  }
}

/** For eventually(): the value, or a throw that says "not yet". */
export function found<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('not yet');
  return value;
}
