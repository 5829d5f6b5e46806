// Statistics written to standard output, one line per statistic per flush (USE_STATSD=false).
import type { StatTags } from '../store';
import { LineSink } from './line-sink';

export class StdoutSink extends LineSink {
  private lines: string[] = [];

  constructor(
    private readonly out: NodeJS.WritableStream = process.stdout,
    extraTags: StatTags = {},
  ) {
    super(extraTags);
  }

  protected write(line: string): void {
    this.lines.push(line);
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
