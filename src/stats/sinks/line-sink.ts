// Sinks that write statsd lines (statsd itself, stdout): EXTRA_TAGS and a gauge's tags in the name.
import type { StatsSink } from '../sink';
import type { StatTags } from '../store';
import { nameTagSuffix } from '../tags';
import { statsdLine } from './format';

/**
 * Formats every statistic as the reference's statsd line, tags encoded into the name
 * (`name.__k=v`), and hands it to `write`; subclasses say where lines go.
 */
export abstract class LineSink implements StatsSink {
  private readonly suffix: string;

  constructor(private readonly extraTags: StatTags = {}) {
    this.suffix = nameTagSuffix(extraTags);
  }

  protected abstract write(line: string): void;
  abstract flush(): Promise<void>;
  abstract close(): Promise<void>;

  counter(name: string, delta: number): void {
    this.write(statsdLine(name + this.suffix, delta, 'c'));
  }

  gauge(name: string, value: number, tags?: StatTags): void {
    const suffix =
      tags === undefined || Object.keys(tags).length === 0
        ? this.suffix
        : nameTagSuffix({ ...this.extraTags, ...tags });
    this.write(statsdLine(name + suffix, value, 'g'));
  }

  timing(name: string, ms: number, sampleRate: number): void {
    this.write(statsdLine(name + this.suffix, ms, 'ms', sampleRate));
  }
}
