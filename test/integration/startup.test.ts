// Start-up waits for the first configuration unless FORCE_START_WITHOUT_INITIAL_CONFIG is set.
import * as grpc from '@grpc/grpc-js';
import type { ConfigListener, ConfigProvider } from '../../src/provider';
import type { RunningService } from '../../src/main';
import { startInProcess } from '../helpers/in-process-service';
import { eventually } from '../helpers/eventually';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import { loopbackServiceEnv } from '../helpers/ports';

/** A source that has not heard from its server yet: nothing can produce this with files. */
class SilentProvider implements ConfigProvider {
  listener: ConfigListener | undefined;
  start(listener: ConfigListener): Promise<void> {
    this.listener = listener;
    return Promise.resolve();
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }
}

it('waits for the first configuration before opening the listeners', async () => {
  const provider = new SilentProvider();
  let service: RunningService | undefined;
  const starting = startInProcess({
    env: loopbackServiceEnv({}),
    provider,
  }).then((s) => {
    service = s;
    return s;
  });
  await eventually(() => provider.listener !== undefined, { what: 'the provider to start' });
  // Nothing has been delivered, so nothing listens yet.
  await new Promise((resolve) => setImmediate(resolve));
  expect(service).toBeUndefined();
  provider.listener?.onRejected([]);
  const started = await starting;
  expect(started.engine.currentSnapshot).toBeUndefined();
  await started.stop();
});

it('opens the listeners at once with FORCE_START_WITHOUT_INITIAL_CONFIG and refuses requests until a configuration arrives', async () => {
  const provider = new SilentProvider();
  const service = await startInProcess({
    env: loopbackServiceEnv({ FORCE_START_WITHOUT_INITIAL_CONFIG: 'true' }),
    provider,
  });
  const client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  try {
    const err = await client.error(rlsRequest('any', [[['k', 'v']]]));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toBe('no rate limit configuration loaded');
    expect(
      service.stats
        .snapshot()
        .counters.get('ratelimit.service.call.should_rate_limit.service_error'),
    ).toBe(1);
  } finally {
    client.close();
    await service.stop();
  }
});

it('answers a request whose bytes are not a RateLimitRequest with a clean status and keeps serving', async () => {
  const provider = new SilentProvider();
  const service = await startInProcess({
    env: loopbackServiceEnv({ FORCE_START_WITHOUT_INITIAL_CONFIG: 'true' }),
    provider,
  });
  const raw = new grpc.Client(`127.0.0.1:${service.ports.grpc}`, grpc.credentials.createInsecure());
  try {
    const err = await new Promise<grpc.ServiceError>((resolve) => {
      raw.makeUnaryRequest(
        '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
        () => Buffer.from([0x0f, 0x01]),
        (b: Buffer) => b,
        {},
        (e) => {
          resolve(e as grpc.ServiceError);
        },
      );
    });
    // 0x0f is field 1 with wire type 7, which protobuf does not have.
    expect([err.code, err.details]).toEqual([
      grpc.status.INVALID_ARGUMENT,
      'the request is not a RateLimitRequest: wire type 7 is not supported',
    ]);
    const client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
    try {
      expect(await client.healthCheck()).toBe('SERVING');
    } finally {
      client.close();
    }
  } finally {
    raw.close();
    await service.stop();
  }
});
