// The statsd transport: hot-shots, used only to buffer pre-formatted lines and send them.
import { StatsD } from 'hot-shots';

export interface StatsdTransportOptions {
  readonly host: string;
  readonly port: number;
  readonly protocol: 'udp' | 'tcp';
  /** Called when sending fails; statistics never fail the service. */
  readonly onError: (err: Error) => void;
}

/**
 * The lines this service formats itself (so counters, timers with sample rates and tags come
 * out exactly as the reference writes them); hot-shots batches them into datagrams below the
 * MTU, keeps TCP connections, and flushes.
 */
export class StatsdTransport {
  private readonly client: StatsD;

  constructor(options: StatsdTransportOptions) {
    this.client = new StatsD({
      host: options.host,
      port: options.port,
      protocol: options.protocol,
      // 1432 bytes keeps a UDP datagram inside a 1500-byte Ethernet frame.
      maxBufferSize: 1432,
      bufferFlushInterval: 1000,
      errorHandler: options.onError,
      tcpGracefulErrorHandling: true,
      includeDataDogTags: false,
      includeDatadogTelemetry: false,
      originDetection: false,
      cacheDns: false,
    });
  }

  /** Queues one line, with DogStatsD tags when given. */
  send(line: string, tags?: readonly string[]): void {
    // send() is hot-shots' raw path (the typed helpers would sample timers a second time).
    (this.client as unknown as { send(message: string, tags?: string[]): void }).send(
      line,
      tags === undefined || tags.length === 0 ? undefined : [...tags],
    );
  }

  flush(): Promise<void> {
    return new Promise((resolve) => {
      this.client.flush(() => {
        resolve();
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.client.close(() => {
        resolve();
      });
    });
  }
}
