// Plain statsd: lines in the reference's format, EXTRA_TAGS encoded into each name.
import type { StatsSink } from '../sink';
import { nameTagSuffix } from '../tags';
import { statsdLine } from './format';
import { StatsdTransport, type StatsdTransportOptions } from './statsd-client';

export interface StatsdSinkOptions extends StatsdTransportOptions {
  readonly extraTags?: Readonly<Record<string, string>>;
}

export class StatsdSink implements StatsSink {
  private readonly transport: StatsdTransport;
  private readonly suffix: string;

  constructor(options: StatsdSinkOptions) {
    this.transport = new StatsdTransport(options);
    this.suffix = nameTagSuffix(options.extraTags ?? {});
  }

  counter(name: string, delta: number): void {
    this.transport.send(statsdLine(name + this.suffix, delta, 'c'));
  }

  gauge(name: string, value: number): void {
    this.transport.send(statsdLine(name + this.suffix, value, 'g'));
  }

  timing(name: string, ms: number, sampleRate: number): void {
    this.transport.send(statsdLine(name + this.suffix, ms, 'ms', sampleRate));
  }

  flush(): Promise<void> {
    return this.transport.flush();
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}
