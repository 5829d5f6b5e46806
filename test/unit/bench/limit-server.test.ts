// The bench's limit is only a fair ceiling if a real gRPC client takes its answers as the
// answers of a ShouldRateLimit server: grpc-js calls it and gets the grpc-js ceiling's constant.
import type http2 from 'node:http2';
import { createLimitServer } from '../../../bench/h2-limit-server';
import { RESPONSE } from '../../../bench/noop-server';
import { RlsClient } from '../../helpers/grpc-client';

describe('the bench limit server (bench/h2-limit-server.ts)', () => {
  let server: http2.Http2Server;
  let client: RlsClient;

  beforeAll(async () => {
    server = createLimitServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    client = new RlsClient(`127.0.0.1:${port}`);
  });

  afterAll(async () => {
    client.close();
    await new Promise<void>((resolve) =>
      server.close(() => {
        resolve();
      }),
    );
  });

  it('answers ShouldRateLimit with the no-op grpc-js server constant, status OK', async () => {
    const request = { domain: 'bench', descriptors: [{ entries: [{ key: 'k', value: 'v' }] }] };
    for (let i = 0; i < 3; i++) {
      const response = await client.shouldRateLimit(request);
      expect(response.overallCode).toBe(RESPONSE.overallCode);
      expect(response.statuses?.[0]?.limitRemaining).toBe(RESPONSE.statuses[0]?.limitRemaining);
      expect(response.statuses?.[0]?.currentLimit?.unit).toBe('MINUTE');
    }
  });
});
