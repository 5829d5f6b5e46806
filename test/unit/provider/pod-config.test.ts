// One compile per pod, without processes: the supervisor's side turns a provider's snapshots
// into messages (through the v8 serialiser, as the cluster's IPC channel carries them), the
// fan-out hands the current one to a worker that follows late, and a worker's side builds the
// same snapshot from them, in order, a newer load dropping an unfinished older one.
import type { Worker } from 'node:cluster';
import { deserialize, serialize } from 'node:v8';
import type { ConfigUpdate, SupervisorLink } from '../../../src/cluster';
import { ConfigFanOut } from '../../../src/cluster/config-fan-out';
import {
  ConfigError,
  type ConfigOrigin,
  type ConfigSnapshot,
  type CompileOptions,
} from '../../../src/config';
import { silentLogger } from '../../../src/lib/logger';
import {
  ProviderPodConfig,
  SupervisedProvider,
  type ConfigListener,
  type ConfigProvider,
} from '../../../src/provider';
import { StatsStore, type StatsSnapshot } from '../../../src/stats';
import { eventually } from '../../helpers/eventually';
import { snapshotOf } from '../../helpers/engine';

/** Rules of every shape: plain, wildcard, key-only, nested, several limits, named; and quota. */
function configText(rules: number, perHour: number): string {
  let text = `quota_buckets:
  - bucket: { name: api, tenant: "*" }
    requests_per_unit: 100
    unit: second
domain: d
descriptors:
  - key: w
    value: "pre*"
    rate_limit: { unit: minute, requests_per_unit: 3 }
  - key: only
    rate_limit: { unit: second, requests_per_unit: 2 }
  - key: nest
    value: a
    descriptors:
      - key: inner
        name: named
        rate_limits:
          - { unit: minute, requests_per_unit: 4 }
          - { unit: hour, requests_per_unit: 40 }
`;
  for (let i = 0; i < rules; i++)
    text += `  - key: k\n    value: v${i}\n    rate_limit: { unit: hour, requests_per_unit: ${perHour} }\n`;
  return text;
}

/** What a snapshot answers with, everything an operator or a request sees. */
function viewOf(snapshot: ConfigSnapshot): unknown {
  return {
    domains: snapshot.domains,
    dump: snapshot.dump(),
    rules: JSON.stringify(snapshot.rules()),
    quota: snapshot.quotaRules.domains().map((d) => snapshot.quotaRules.rulesOf(d)),
  };
}

/** A provider a test pushes outcomes through. */
class PushedProvider implements ConfigProvider {
  listener: ConfigListener | undefined;
  start(listener: ConfigListener): Promise<void> {
    this.listener = listener;
    return Promise.resolve();
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }
}

/** The messages the pod's source makes of each outcome of `provider`. */
async function podOf(provider: PushedProvider): Promise<ConfigUpdate[][]> {
  const outcomes: ConfigUpdate[][] = [];
  let attempts = 0;
  const stats = (): StatsSnapshot => {
    attempts += 1;
    return { counters: new Map([['runtime.load_attempts', attempts]]), gauges: new Map() };
  };
  await new ProviderPodConfig(provider, stats).start({
    loaded: (messages) => outcomes.push([...messages]),
    refused: (messages) => outcomes.push([...messages]),
    xds: (message) => outcomes.push([message]),
  });
  return outcomes;
}

/** A worker's link whose messages the test delivers, each through the v8 serialiser. */
function testLink(): { link: SupervisorLink; deliver(messages: readonly ConfigUpdate[]): void } {
  const handlers: ((update: ConfigUpdate) => void)[] = [];
  return {
    link: {
      request: () => undefined,
      listen: (handler) => {
        handlers.push(handler);
        return () => handlers.splice(handlers.indexOf(handler), 1);
      },
    },
    deliver(messages) {
      for (const m of messages)
        for (const h of handlers) h(deserialize(serialize(m)) as ConfigUpdate);
    },
  };
}

interface Seen {
  readonly snapshots: { snapshot: ConfigSnapshot; origin: ConfigOrigin | undefined }[];
  readonly events: string[];
}

async function workerOf(
  link: SupervisorLink,
  stats = new StatsStore(),
  reportsLoading = true,
): Promise<Seen> {
  const compile: CompileOptions = {
    stats,
    mergeDomainConfig: false,
    sanitizeDots: false,
  };
  const seen: Seen = { snapshots: [], events: [] };
  const provider = new SupervisedProvider({
    compile,
    link,
    logger: silentLogger,
    stats,
    reportsLoading,
  });
  await provider.start({
    onSnapshot: (snapshot, origin) => {
      seen.snapshots.push({ snapshot, origin });
      seen.events.push(`loaded ${snapshot.domains.join(',')}`);
    },
    onRejected: (errors) => {
      seen.events.push(`refused ${errors.map((e) => e.message).join(';')}`);
    },
  });
  return seen;
}

it('builds in a worker the snapshot the supervisor compiled, from its tables in parts', async () => {
  const compiled = snapshotOf([configText(17_000, 5)], new StatsStore());
  const provider = new PushedProvider();
  const outcomes = await podOf(provider);
  const origin: ConfigOrigin = { kind: 'xds', server: '127.0.0.1:1', version: 'v7' };
  provider.listener?.onSnapshot(compiled, origin);
  const [messages] = outcomes;
  // A header, parts of at most 8192 nodes each, and the statistics of loading.
  expect(messages?.map((m) => m.kind)).toEqual([
    'ratelimit:config-header',
    'ratelimit:config-part',
    'ratelimit:config-part',
    'ratelimit:config-part',
    'ratelimit:config-stats',
  ]);
  const { link, deliver } = testLink();
  const seen = await workerOf(link);
  deliver(messages ?? []);
  await eventually(() => seen.snapshots.length === 1, { what: 'the snapshot' });
  const built = seen.snapshots[0];
  expect(built?.origin).toEqual(origin);
  expect(built === undefined ? undefined : viewOf(built.snapshot)).toEqual(viewOf(compiled));
  expect(
    built?.snapshot.findLimit('d', { entries: [{ key: 'w', value: 'prefix' }], limit: undefined })
      ?.rule.statKey,
  ).toBe('d.w_pre*');
});

it('reports the statistics of loading in the worker serving debug only, so totals count them once', async () => {
  const provider = new PushedProvider();
  const outcomes = await podOf(provider);
  provider.listener?.onSnapshot(snapshotOf([configText(10, 5)], new StatsStore()));
  provider.listener?.onSnapshot(snapshotOf([configText(10, 7)], new StatsStore()));
  const messages = outcomes.flat();
  const workers = [true, false].map((reports) => {
    const { link, deliver } = testLink();
    const stats = new StatsStore();
    return { stats, deliver, seen: workerOf(link, stats, reports) };
  });
  for (const worker of workers) {
    const seen = await worker.seen;
    worker.deliver(messages);
    // The first load's statistics come before the second load, which is awaited here.
    await eventually(() => seen.snapshots.length === 2, { what: 'both loads' });
  }
  expect(workers.map((w) => w.stats.counter('runtime.load_attempts').value)).toEqual([2, 0]);
});

it('drops an unfinished load when a newer one arrives, and keeps refusals in order', async () => {
  const provider = new PushedProvider();
  const outcomes = await podOf(provider);
  provider.listener?.onSnapshot(snapshotOf([configText(9_000, 5)], new StatsStore()));
  provider.listener?.onSnapshot(snapshotOf([configText(10, 7)], new StatsStore()));
  provider.listener?.onRejected([
    new ConfigError('INVALID_UNIT', 'bad.yaml', 'no such unit', { line: 3, column: 5 }),
  ]);
  const [older, newer, refused] = outcomes;
  const { link, deliver } = testLink();
  const stats = new StatsStore();
  const seen = await workerOf(link, stats);
  // The older load's header and first part, then the newer load, then the older's rest.
  deliver([
    ...(older ?? []).slice(0, 2),
    ...(newer ?? []),
    ...(refused ?? []),
    ...(older ?? []).slice(2),
  ]);
  await eventually(() => seen.events.length === 2, { what: 'the newer load and the refusal' });
  expect(seen.events).toEqual(['loaded d', 'refused bad.yaml: no such unit (line 3, column 5)']);
  // The supervisor's totals, reported once each however they arrive.
  await eventually(() => stats.counter('runtime.load_attempts').value === 3, {
    what: 'the totals of loading',
  });
  expect(
    seen.snapshots[0]?.snapshot.findLimit('d', {
      entries: [{ key: 'k', value: 'v1' }],
      limit: undefined,
    })?.rule.requestsPerUnit,
  ).toBe(7);
});

/** A worker as the fan-out sees one: connected, recording what it is sent. */
function fakeWorker(): { worker: Worker; got: string[] } {
  const got: string[] = [];
  const worker = {
    isConnected: () => true,
    send: (message: ConfigUpdate, done: (err: Error | null) => void) => {
      got.push(
        message.kind === 'ratelimit:config-header' || message.kind === 'ratelimit:config-part'
          ? `${message.kind.slice('ratelimit:config-'.length)} ${message.generation}`
          : 'refused',
      );
      done(null);
      return true;
    },
  };
  return { worker: worker as unknown as Worker, got };
}

it('hands a worker that follows late the current configuration and the refusal since', () => {
  const fanOut = new ConfigFanOut(silentLogger);
  const header = (generation: number): ConfigUpdate =>
    ({
      kind: 'ratelimit:config-header',
      generation,
      header: { nodeCount: 1 },
    }) as unknown as ConfigUpdate;
  const part = (generation: number): ConfigUpdate =>
    ({ kind: 'ratelimit:config-part', generation }) as unknown as ConfigUpdate;
  const refusal: ConfigUpdate = { kind: 'ratelimit:config-refused', errors: [] };
  const early = fakeWorker();
  fanOut.follow(early.worker);
  fanOut.loaded([header(1), part(1)]);
  fanOut.refused([refusal]);
  const late = fakeWorker();
  fanOut.follow(late.worker);
  expect(late.got).toEqual(['header 1', 'part 1', 'refused']);
  fanOut.forget(early.worker);
  fanOut.loaded([header(2)]);
  const later = fakeWorker();
  fanOut.follow(later.worker);
  expect(early.got).toEqual(['header 1', 'part 1', 'refused']);
  expect(late.got).toEqual(['header 1', 'part 1', 'refused', 'header 2']);
  expect(later.got).toEqual(['header 2']);
});
