// The ceiling: a grpc-js server answering ShouldRateLimit with a constant and doing nothing else.
import * as grpc from '@grpc/grpc-js';
import { loadApi } from '../src/lib/proto';

/** The constant answer of both ceilings (this server and bench/h2-limit-server.ts). */
export const RESPONSE = {
  overallCode: 'OK',
  statuses: [
    {
      code: 'OK',
      currentLimit: { requestsPerUnit: 1000000, unit: 'MINUTE' },
      limitRemaining: 999999,
      durationUntilReset: { seconds: 30 },
    },
  ],
};

if (require.main === module) {
  const root = loadApi(['envoy/service/ratelimit/v3/rls.proto']) as unknown as {
    envoy: {
      service: { ratelimit: { v3: { RateLimitService: { service: grpc.ServiceDefinition } } } };
    };
  };
  // Exiting through process.exit lets `node --cpu-prof` write its profile.
  process.once('SIGTERM', () => process.exit(0));
  const server = new grpc.Server();
  server.addService(root.envoy.service.ratelimit.v3.RateLimitService.service, {
    ShouldRateLimit: (_call: unknown, callback: grpc.sendUnaryData<unknown>) => {
      callback(null, RESPONSE);
    },
  });
  server.bindAsync(
    `127.0.0.1:${process.argv[2] ?? '0'}`,
    grpc.ServerCredentials.createInsecure(),
    (err, port) => {
      if (err !== null) throw err;
      process.stdout.write(`listening ${port}\n`);
    },
  );
}
