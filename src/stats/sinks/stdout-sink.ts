// Statistics written to standard output, one line per statistic per flush (USE_STATSD=false).
import type { StatsSink } from '../sink';
import { nameTagSuffix } from '../tags';
import { statsdLine } from './format';

export class StdoutSink implements StatsSink {
  private lines: string[] = [];
  private readonly suffix: string;

  constructor(
    private readonly out: NodeJS.WritableStream = process.stdout,
    extraTags: Readonly<Record<string, string>> = {},
  ) {
    this.suffix = nameTagSuffix(extraTags);
  }

  counter(name: string, delta: number): void {
    this.lines.push(statsdLine(name + this.suffix, delta, 'c'));
  }

  gauge(name: string, value: number): void {
    this.lines.push(statsdLine(name + this.suffix, value, 'g'));
  }

  timing(name: string, ms: number, sampleRate: number): void {
    this.lines.push(statsdLine(name + this.suffix, ms, 'ms', sampleRate));
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
