// The xDS client reconnects on its own documented schedule, not on grpc-js's channel backoff:
// a management server that comes up while the client waits is reached at the next planned
// retry (CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL, 3 s by default, spread by half).
// The reference retries on the same fixed interval until its first connection
// (envoyproxy/ratelimit: src/provider/xds_grpc_sotw_provider.go, initXdsClient and
// getGrpcConnection, which retry with backoff.NewConstantBackOff(ConnectRetryInterval)).
// grpc-js's channel would otherwise wait out its own reconnect backoff (1 s growing by 1.6
// to two minutes: @grpc/grpc-js src/backoff-timeout.ts), long after the server is back.
import { silentLogger } from '../../../src/lib/logger';
import { XdsConfigProvider } from '../../../src/provider';
import { loadSettings, type XdsSourceSettings } from '../../../src/settings';
import { StatsStore } from '../../../src/stats';
import { AdsServer } from '../../helpers/ads-server';
import { eventually } from '../../helpers/eventually';

/**
 * How long the server stays down: long enough for grpc-js's own backoff to have grown past
 * several seconds (0.3.0 took 15 s to connect after this).
 */
const DOWN_MS = 30_000;
/** The documented bound: the retry interval (3 s) plus half of it. */
const CONNECTED_WITHIN_MS = 4_500;

jest.setTimeout(60_000);

it('is connected within 4.5 s of its management server coming up', async () => {
  // A free loopback port, closed again: the server comes up on it later.
  const probe = await AdsServer.start();
  const port = probe.port;
  await probe.close();
  const settings = loadSettings({
    CONFIG_TYPE: 'GRPC_XDS_SOTW',
    CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${port}`,
  }).config.source as XdsSourceSettings;
  expect(settings.connectRetryIntervalMs).toBe(3_000);
  const provider = new XdsConfigProvider({
    settings,
    compile: { stats: new StatsStore(), mergeDomainConfig: false, sanitizeDots: false },
    logger: silentLogger,
    // The middle of the spread: every wait is the interval, 3 s, which leaves the bound's last
    // 1.5 s to a loaded machine.
    random: () => 0.5,
  });
  await provider.start({ onSnapshot: () => undefined, onRejected: () => undefined });
  let ads: AdsServer | undefined;
  try {
    await new Promise((resolve) => setTimeout(resolve, DOWN_MS));
    ads = await AdsServer.start(port);
    const upAt = Date.now();
    const server = ads;
    await eventually(() => server.streams.length > 0, {
      what: 'a stream from the client',
      timeoutMs: 20_000,
      intervalMs: 10,
    });
    const tookMs = Date.now() - upAt;
    expect(tookMs).toBeLessThanOrEqual(CONNECTED_WITHIN_MS);
  } finally {
    await provider.stop();
    await ads?.close();
  }
});
