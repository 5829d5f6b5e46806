// A debug listener over a real engine on the memory backend, listening on a loopback port, for
// tests of its endpoints; time is a ManualClock.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ManualClock } from '../../src/lib/clock';
import { MemoryLogger } from '../../src/lib/logger';
import { ConfigStatus, createDebugServer, HealthState, LastResort } from '../../src/server';
import { MemoryCounterStore, type CounterStore } from '../../src/store';
import { engineOf, type EngineFixture } from './engine';

export interface DebugListener extends EngineFixture {
  readonly base: string;
  readonly clock: ManualClock;
  readonly health: HealthState;
  readonly config: ConfigStatus;
  /** What the last-resort handler logged. */
  readonly logger: MemoryLogger;
  readonly port: number;
  /** GET with an Accept header; resolves with the status, the content type and the body. */
  get(
    path: string,
    accept?: string,
  ): Promise<{ status: number; type: string; text: string; json: () => unknown }>;
  close(): Promise<void>;
}

export interface DebugListenerOptions {
  readonly env?: Record<string, string>;
  readonly nowMs?: number;
  /** What the engine gets in place of the memory store (a store that fails, say). */
  readonly wrapStore?: (store: MemoryCounterStore) => CounterStore;
  /** DEBUG_PROFILING_ENABLED; false unless given. */
  readonly isProfilingEnabled?: boolean;
}

export async function startDebugListener(
  files: readonly string[],
  options: DebugListenerOptions = {},
): Promise<DebugListener> {
  const clock = new ManualClock(options.nowMs ?? 1_700_000_000_000);
  const store = new MemoryCounterStore({ clock });
  const fixture = engineOf(options.wrapStore?.(store) ?? store, clock, files, options.env ?? {});
  const health = new HealthState({ requireConfig: false, nowMs: () => clock.nowMs() });
  const config = new ConfigStatus(() => clock.nowMs());
  const logger = new MemoryLogger();
  const server = createDebugServer(
    { engine: fixture.engine, stats: fixture.stats, health, config },
    {
      isProfilingEnabled: options.isProfilingEnabled ?? false,
      lastResort: new LastResort(fixture.stats, logger),
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const base = `http://127.0.0.1:${port}`;
  return {
    ...fixture,
    base,
    port,
    logger,
    clock,
    health,
    config,
    get: async (path, accept) => {
      const res = await fetch(`${base}${path}`, {
        headers: accept === undefined ? {} : { accept },
      });
      const text = await res.text();
      return {
        status: res.status,
        type: res.headers.get('content-type') ?? '',
        text,
        json: () => JSON.parse(text) as unknown,
      };
    },
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
      await store.close();
    },
  };
}

/** Raw GET, for targets fetch() would normalise. */
export function rawGet(base: string, target: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    http
      .get({ host: url.hostname, port: url.port, path: target }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', reject);
  });
}
