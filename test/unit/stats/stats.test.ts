// The stats store, the flusher's deltas, and the statsd and stdout sinks (real UDP datagrams).
import dgram from 'node:dgram';
import { PassThrough } from 'node:stream';
import { silentLogger } from '../../../src/lib/logger';
import {
  StatsdSink,
  StatsFlusher,
  StatsStore,
  StdoutSink,
  sanitizeStatName,
  type StatsSink,
} from '../../../src/stats';

class RecordingSink implements StatsSink {
  readonly lines: string[] = [];
  counter(name: string, delta: number): void {
    this.lines.push(`${name}:${delta}|c`);
  }
  gauge(name: string, value: number): void {
    this.lines.push(`${name}:${value}|g`);
  }
  timing(name: string, ms: number): void {
    this.lines.push(`${name}:${ms}|ms`);
  }
  flush(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe('StatsStore', () => {
  it('binds rule handles once and names them as the reference does', () => {
    const store = new StatsStore();
    const a = store.forRule('domain.key_value');
    expect(store.forRule('domain.key_value')).toBe(a);
    a.totalHits.add(3);
    a.overLimitWithLocalCache.inc();
    expect(
      store.snapshot().counters.get('ratelimit.service.rate_limit.domain.key_value.total_hits'),
    ).toBe(3);
    expect(
      store
        .snapshot()
        .counters.get('ratelimit.service.rate_limit.domain.key_value.over_limit_with_local_cache'),
    ).toBe(1);
    expect(
      [...store.snapshot().counters.keys()].filter((n) => n.includes('.rate_limit.')).sort(),
    ).toEqual(
      [
        'near_limit',
        'over_limit',
        'over_limit_with_local_cache',
        'shadow_mode',
        'total_hits',
        'total_negative_hits',
        'within_limit',
      ].map((s) => `ratelimit.service.rate_limit.domain.key_value.${s}`),
    );
  });

  it('sanitises : and | and the dots of IPv4 addresses in rule names', () => {
    expect(sanitizeStatName('d.remote_address_10.0.0.1.port:80|x')).toBe(
      'd.remote_address_10_0_0_1.port_80_x',
    );
    const store = new StatsStore();
    store.forRule('d.ip_192.168.1.20').totalHits.inc();
    expect(
      store.snapshot().counters.has('ratelimit.service.rate_limit.d.ip_192_168_1_20.total_hits'),
    ).toBe(true);
  });

  it('does nothing when disabled', () => {
    const store = new StatsStore(false);
    store.forRule('d.k').totalHits.add(5);
    store.counter('c').inc();
    expect(store.snapshot().counters.size).toBe(0);
    expect(store.forRule('d.k')).toBe(store.forRule('other'));
  });
});

describe('StatsFlusher', () => {
  it('sends counters as deltas since the last flush, and only when they moved', async () => {
    const store = new StatsStore();
    const sink = new RecordingSink();
    const flusher = new StatsFlusher(store, [sink], silentLogger);
    const c = store.counter('a.b');
    c.add(5);
    await flusher.flush();
    c.add(2);
    await flusher.flush();
    await flusher.flush();
    store.gauge('g').set(7);
    store.timer('t').record(1.5);
    await flusher.close();
    expect(sink.lines).toEqual(['a.b:5|c', 'a.b:2|c', 'g:7|g', 't:1.5|ms']);
  });
});

describe('StatsdSink', () => {
  it('sends statsd lines over UDP, batched into datagrams below the MTU', async () => {
    const server = dgram.createSocket('udp4');
    const datagrams: string[] = [];
    server.on('message', (msg) => datagrams.push(msg.toString()));
    await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve));
    const { port } = server.address();
    const sink = new StatsdSink({
      host: '127.0.0.1',
      port,
      protocol: 'udp',
      onError: (err) => {
        throw err;
      },
    });
    sink.counter('ratelimit.service.config_load_success', 1);
    sink.gauge('some.gauge', 3);
    sink.timing('ratelimit_server.ShouldRateLimit.response_time', 0.25, 1);
    sink.timing('t', 2, 0.5);
    for (let i = 0; i < 100; i++)
      sink.counter(`ratelimit.service.rate_limit.domain.key_${i}.total_hits`, i + 1);
    await sink.close();
    const deadline = Date.now() + 5000;
    while (datagrams.join('\n').split('\n').length < 104 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    server.close();
    const lines = datagrams.join('\n').split('\n');
    expect(lines.slice(0, 4)).toEqual([
      'ratelimit.service.config_load_success:1|c',
      'some.gauge:3|g',
      'ratelimit_server.ShouldRateLimit.response_time:0.25|ms',
      't:2|ms|@0.5',
    ]);
    expect(lines).toHaveLength(104);
    expect(lines[103]).toBe('ratelimit.service.rate_limit.domain.key_99.total_hits:100|c');
    expect(datagrams.length).toBeGreaterThan(1);
    for (const d of datagrams) expect(Buffer.byteLength(d)).toBeLessThanOrEqual(1432);
  });
});

describe('StdoutSink', () => {
  it('writes one line per statistic per flush', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (c: Buffer) => (text += c.toString()));
    const sink = new StdoutSink(out);
    sink.counter('a', 2);
    sink.gauge('b', 1);
    await sink.flush();
    await sink.flush();
    expect(text).toBe('a:2|c\nb:1|g\n');
  });
});
