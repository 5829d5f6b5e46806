// Statistics written to standard output, one line per statistic per flush (USE_STATSD=false).
import type { StatsSink } from '../sink';
import { formatNumber } from './statsd-sink';

export class StdoutSink implements StatsSink {
  private lines: string[] = [];

  constructor(private readonly out: NodeJS.WritableStream = process.stdout) {}

  counter(name: string, delta: number): void {
    this.lines.push(`${name}:${formatNumber(delta)}|c`);
  }

  gauge(name: string, value: number): void {
    this.lines.push(`${name}:${formatNumber(value)}|g`);
  }

  timing(name: string, ms: number, sampleRate: number): void {
    this.lines.push(
      `${name}:${formatNumber(ms)}|ms${sampleRate < 1 ? `|@${formatNumber(sampleRate)}` : ''}`,
    );
  }

  flush(): Promise<void> {
    if (this.lines.length > 0) this.out.write(`${this.lines.join('\n')}\n`);
    this.lines = [];
    return Promise.resolve();
  }

  close(): Promise<void> {
    return this.flush();
  }
}
