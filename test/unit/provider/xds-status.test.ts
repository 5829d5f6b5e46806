// What the xDS client says of its management server: its status (connected, ACKs and NACKs
// with their versions) as it changes, an unchanged update's ACK logged with the domains that
// serve on, and the version the debug listener shows being the one the server last sent.
// An unchanged set under a new version is what go-control-plane sends when one snapshot
// version covers every type (envoyproxy/go-control-plane: pkg/cache/v3/snapshot.go,
// NewSnapshot gives every type the same version) and a type other than this one changed.
import type { XdsStatus } from '../../../src/stats';
import { MemoryLogger } from '../../../src/lib/logger';
import { XdsConfigProvider } from '../../../src/provider';
import { ConfigStatus } from '../../../src/server';
import { loadSettings, type XdsSourceSettings } from '../../../src/settings';
import { StatsStore } from '../../../src/stats';
import { AdsServer, oneLimitConfig, RATE_LIMIT_CONFIG_TYPE_URL } from '../../helpers/ads-server';
import { collectCleanups } from '../../helpers/cleanups';
import { eventually } from '../../helpers/eventually';

const cleanup = collectCleanups();

async function rig() {
  const ads = await AdsServer.start();
  const logger = new MemoryLogger();
  const statuses: XdsStatus[] = [];
  const config = new ConfigStatus();
  const provider = new XdsConfigProvider({
    settings: loadSettings({
      CONFIG_TYPE: 'GRPC_XDS_SOTW',
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${ads.port}`,
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '20ms',
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: '40ms',
    }).config.source as XdsSourceSettings,
    compile: { stats: new StatsStore(), mergeDomainConfig: false, sanitizeDots: false },
    logger,
    onStatus: (s) => {
      statuses.push(s);
      config.xds(s);
    },
    nowMs: () => 5_000,
  });
  await provider.start({
    onSnapshot: (_s, origin) => {
      config.loaded(origin);
    },
    onRejected: (errors) => {
      config.refused(errors);
    },
  });
  cleanup(async () => {
    await provider.stop();
    await ads.close();
  });
  await eventually(() => ads.rateLimitRequests(0).length === 1, { what: 'the first request' });
  /** Version `version` of domain `shop`; without a limit, bytes that decode to no resource. */
  const push = (version: string, nonce: string, rpu: number | undefined): void => {
    const value = rpu === undefined ? Buffer.from([0xff, 0xff]) : oneLimitConfig('shop', rpu);
    ads.streams[0]!.write({
      version_info: version,
      type_url: RATE_LIMIT_CONFIG_TYPE_URL,
      nonce,
      resources: [{ type_url: RATE_LIMIT_CONFIG_TYPE_URL, value }],
    });
  };
  const last = (): XdsStatus | undefined => statuses.at(-1);
  return { ads, logger, statuses, config, push, last };
}

it('reports connected, each ACK and NACK with its version, and the end of the stream', async () => {
  const { ads, push, last, statuses } = await rig();
  expect(statuses).toEqual([]);
  push('v1', 'n1', 5);
  await eventually(() => last()?.acks === 1, { what: 'the ACK' });
  expect(last()).toEqual({
    server: `127.0.0.1:${ads.port}`,
    isConnected: true,
    acks: 1,
    nacks: 0,
    lastAck: { version: 'v1', atMs: 5_000 },
    lastNack: undefined,
    rulesVersion: 'v1',
  });
  push('v2', 'n2', undefined);
  await eventually(() => last()?.nacks === 1, { what: 'the NACK' });
  expect(last()?.lastNack).toMatchObject({ version: 'v2', atMs: 5_000 });
  expect(last()?.lastNack?.reason).not.toBe('');
  expect(last()?.lastAck?.version).toBe('v1');
  ads.streams[0]!.end();
  await eventually(() => last()?.isConnected === false, { what: 'the end of the stream' });
  expect(last()).toMatchObject({ acks: 1, nacks: 1 });
});

it('logs an unchanged update with the domains serving on, and shows its version as served', async () => {
  const { logger, push, last, config } = await rig();
  push('v1', 'n1', 5);
  await eventually(() => last()?.acks === 1, { what: 'the first ACK' });
  push('v2', 'n2', 5);
  await eventually(() => last()?.acks === 2, { what: 'the second ACK' });
  const acks = logger.lines.filter((l) => l.message === 'accepted an xDS update (ACK)');
  expect(acks.map((l) => l.fields)).toEqual([
    expect.objectContaining({ version: 'v1', domains: 'shop', unchanged: false }),
    expect.objectContaining({ version: 'v2', domains: 'shop', unchanged: true }),
  ]);
  expect(config.current?.origin).toMatchObject({ kind: 'xds', version: 'v2' });
});
