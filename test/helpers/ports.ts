// Free loopback ports for servers started by tests.
import net from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => {
        resolve(port);
      });
    });
  });
}

/** Settings for an in-process service on the memory backend, every listener on a free loopback port. */
export async function loopbackServiceEnv(
  extra: Record<string, string> = {},
): Promise<Record<string, string>> {
  return {
    BACKEND_TYPE: 'memory',
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    GRPC_HOST: '127.0.0.1',
    GRPC_PORT: String(await freePort()),
    DEBUG_HOST: '127.0.0.1',
    DEBUG_PORT: String(await freePort()),
    USE_STATSD: 'false',
    ...extra,
  };
}
