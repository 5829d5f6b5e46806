// Ports of servers started by tests. Listeners bind port 0 and report what they got, so no
// port is picked in advance (a port found free and closed can be taken before the child binds
// it, more so with several suites running at once).
import net from 'node:net';

export type ListenerName = 'grpc' | 'http' | 'debug' | 'metrics';

/** The log messages that carry listener addresses: each worker's, and the supervisor's. */
const ADDRESS_MESSAGES = new Set(['listening', 'serving metrics of all workers']);

/** A `host:port` (or `host:port/path`) address's port; undefined for a unix socket path. */
function portOf(address: unknown): number | undefined {
  if (typeof address !== 'string') return undefined;
  const hostPort = address.replace(/\/.*$/, '');
  const port = Number(hostPort.slice(hostPort.lastIndexOf(':') + 1));
  return Number.isInteger(port) && port > 0 ? port : undefined;
}

/** The fields of one log line in either LOG_FORMAT, or undefined for another message. */
function addressFields(line: string): Record<string, unknown> | undefined {
  if (line.startsWith('{')) {
    try {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      return ADDRESS_MESSAGES.has(String(parsed['@message'])) ? parsed : undefined;
    } catch {
      return undefined;
    }
  }
  const fields: Record<string, unknown> = {};
  for (const match of line.matchAll(/(?:^|\s)(\w+)=("(?:[^"\\]|\\.)*"|[^\s"]+)/g)) {
    const [, name, raw] = match;
    if (name === undefined || raw === undefined) continue;
    fields[name] = raw.startsWith('"') ? (JSON.parse(raw) as unknown) : raw;
  }
  return ADDRESS_MESSAGES.has(String(fields.msg)) ? fields : undefined;
}

/**
 * The bound ports the service logged: its "listening" line (one per worker with WORKERS) and
 * the supervisor's metrics line, in the text or the JSON log format. The first port logged
 * for a listener wins; workers share theirs. A line still being written is not read.
 */
export function loggedPorts(output: string): Partial<Record<ListenerName, number>> {
  const ports: Partial<Record<ListenerName, number>> = {};
  const lines = output.split('\n');
  lines.pop();
  for (const line of lines) {
    const fields = addressFields(line);
    if (fields === undefined) continue;
    for (const name of ['grpc', 'http', 'debug', 'metrics'] as const) {
      const port = portOf(fields[name]);
      if (port !== undefined) ports[name] ??= port;
    }
  }
  return ports;
}

/** The service's listeners on loopback ports the system picks; the service reports them. */
export const LOOPBACK_LISTENERS: Readonly<Record<string, string>> = Object.freeze({
  HOST: '127.0.0.1',
  PORT: '0',
  GRPC_HOST: '127.0.0.1',
  GRPC_PORT: '0',
  DEBUG_HOST: '127.0.0.1',
  DEBUG_PORT: '0',
});

/** Settings for an in-process service on the memory backend; RunningService.ports has the ports. */
export function loopbackServiceEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { BACKEND_TYPE: 'memory', ...LOOPBACK_LISTENERS, USE_STATSD: 'false', ...extra };
}

/**
 * A loopback port with nothing listening on it a moment ago. Only for what must know a port
 * before anything listens there: a client that must fail to connect, or a server the test
 * starts later at an address the service already has. Anything that can bind port 0 should.
 */
export function unusedPort(): Promise<number> {
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
