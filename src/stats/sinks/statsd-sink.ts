// Plain statsd: lines in the reference's format, EXTRA_TAGS encoded into each name.
import type { StatTags } from '../store';
import { LineSink } from './line-sink';
import { StatsdTransport, type StatsdTransportOptions } from './statsd-client';

export interface StatsdSinkOptions extends StatsdTransportOptions {
  readonly extraTags?: StatTags;
}

export class StatsdSink extends LineSink {
  private readonly transport: StatsdTransport;

  constructor(options: StatsdSinkOptions) {
    super(options.extraTags);
    this.transport = new StatsdTransport(options);
  }

  protected write(line: string): void {
    this.transport.send(line);
  }

  flush(): Promise<void> {
    return this.transport.flush();
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}
