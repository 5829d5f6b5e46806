// DogStatsD: names mogrified into shorter names plus tags, EXTRA_TAGS as tags.
import type { MogrifierSettings } from '../../settings';
import type { StatsSink } from '../sink';
import type { StatTags } from '../store';
import { tagList } from '../tags';
import { statsdLine } from './format';
import { Mogrifier } from './mogrifier';
import { StatsdTransport, type StatsdTransportOptions } from './statsd-client';

export interface DogStatsdSinkOptions extends StatsdTransportOptions {
  readonly extraTags?: Readonly<Record<string, string>>;
  readonly mogrifiers: readonly MogrifierSettings[];
}

export class DogStatsdSink implements StatsSink {
  private readonly transport: StatsdTransport;
  private readonly extraTags: readonly string[];
  private readonly mogrifier: Mogrifier;

  constructor(options: DogStatsdSinkOptions) {
    this.transport = new StatsdTransport(options);
    this.extraTags = tagList(options.extraTags ?? {});
    this.mogrifier = new Mogrifier(options.mogrifiers);
  }

  private send(
    name: string,
    value: number,
    type: 'c' | 'g' | 'ms',
    sampleRate = 1,
    ownTags: readonly string[] = [],
  ): void {
    const mogrified = this.mogrifier.apply(name);
    this.transport.send(statsdLine(mogrified.name, value, type, sampleRate), [
      ...this.extraTags,
      ...ownTags,
      ...mogrified.tags,
    ]);
  }

  counter(name: string, delta: number): void {
    this.send(name, delta, 'c');
  }

  gauge(name: string, value: number, tags?: StatTags): void {
    // A gauge's own tags keep their dots (a version): DogStatsD tags may hold them.
    const own = Object.entries(tags ?? {}).map(([key, tag]) => `${key}:${tag}`);
    this.send(name, value, 'g', 1, own);
  }

  timing(name: string, ms: number, sampleRate: number): void {
    this.send(name, ms, 'ms', sampleRate);
  }

  flush(): Promise<void> {
    return this.transport.flush();
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}
