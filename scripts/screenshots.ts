// `npm run screenshots`: the status page and the simulator's admin page in Debian's chromium, on
// a desktop and a phone-sized screen, saved under docs/screenshots/ for the README. It runs the
// built service (memory backend, the example configuration) and the simulator in this process,
// with two more services following the simulator over xDS, and sends a little traffic first.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Page } from 'playwright-core';
import { runSimulator } from '../control-plane-sim/src/main';
import { silentLogger } from '../src/lib/logger';
import { loadApi } from '../src/lib/proto';
import { startService, type RunningService } from '../src/main';
import type { StatsSink } from '../src/stats';
import { launchChromium } from './chromium';

const ROOT = path.resolve(__dirname, '..', '..');
const OUT = path.join(ROOT, 'docs', 'screenshots');
// Relative from the repository root (npm runs scripts there), so the pictures show no home.
const EXAMPLES = process.cwd() === ROOT ? 'examples' : path.join(ROOT, 'examples');

const SCREENS = {
  desktop: { width: 1280, height: 900 },
  phone: { width: 390, height: 844 },
} as const;

const discard: StatsSink = {
  counter: () => undefined,
  gauge: () => undefined,
  timing: () => undefined,
  flush: () => Promise.resolve(),
  close: () => Promise.resolve(),
};

const LOOPBACK = {
  HOST: '127.0.0.1',
  PORT: '0',
  GRPC_HOST: '127.0.0.1',
  GRPC_PORT: '0',
  DEBUG_HOST: '127.0.0.1',
  DEBUG_PORT: '0',
  BACKEND_TYPE: 'memory',
  USE_STATSD: 'false',
  LOG_LEVEL: 'error',
};

function start(env: Record<string, string>): Promise<RunningService> {
  return startService({ env: { ...LOOPBACK, ...env }, logger: silentLogger, statsSink: discard });
}

type RlsStub = grpc.Client & {
  ShouldRateLimit(
    request: unknown,
    options: grpc.CallOptions,
    callback: (err: grpc.ServiceError | null) => void,
  ): void;
};
type Entries = [string, string][];

/** ShouldRateLimit over gRPC, as a proxy calls it. */
function rlsClient(port: number): { send: (entries: Entries) => Promise<void>; close: () => void } {
  const root = loadApi(['envoy/service/ratelimit/v3/rls.proto']) as unknown as {
    envoy: { service: { ratelimit: { v3: { RateLimitService: grpc.ServiceClientConstructor } } } };
  };
  const stub = new root.envoy.service.ratelimit.v3.RateLimitService(
    `127.0.0.1:${port}`,
    grpc.credentials.createInsecure(),
  ) as unknown as RlsStub;
  const send = (entries: Entries): Promise<void> =>
    new Promise((resolve, reject) => {
      const request = {
        domain: 'example',
        descriptors: [{ entries: entries.map(([key, value]) => ({ key, value })) }],
      };
      stub.ShouldRateLimit(request, { deadline: Date.now() + 5000 }, (err) => {
        if (err === null) resolve();
        else reject(err);
      });
    });
  return {
    send,
    close: () => {
      stub.close();
    },
  };
}

/** Some calls within their limits, some over, and a shadow-mode rule going over. */
async function traffic(send: (entries: Entries) => Promise<void>): Promise<void> {
  const times = async (n: number, entries: Entries): Promise<void> => {
    for (let i = 0; i < n; i++) await send(entries);
  };
  await times(12, [['path', '/api/orders']]);
  await times(3, [
    ['tier', 'free'],
    ['user', 'alice'],
  ]);
  await times(62, [['api_key', 'k-7f3a']]);
  await times(7, [['remote_address', '10.0.0.1']]);
  await times(2, [['user_agent', 'bad-bot']]);
}

async function shoot(page: Page, name: string): Promise<void> {
  const file = path.join(OUT, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  process.stdout.write(`wrote ${path.relative(ROOT, file)}\n`);
}

async function statusPage(page: Page, debugPort: number): Promise<void> {
  await page.goto(`http://127.0.0.1:${debugPort}/`);
  await page.locator('#recent tbody tr').first().waitFor();
  await page.locator('#rules tbody tr').first().waitFor();
  await page.selectOption('#lookup-domain', 'example');
  await page.fill('#lookup-descriptor', 'remote_address=10.0.0.1');
  await page.click('#lookup-form button[type=submit]');
  await page.locator('#lookup tbody td.count').waitFor();
  // Two statistics polls, so the cards show rates.
  await page.locator('#stat-requests .rate', { hasText: '/s' }).waitFor({ timeout: 10_000 });
}

async function simPage(page: Page, adminPort: number): Promise<void> {
  await page.goto(`http://127.0.0.1:${adminPort}/`);
  await page.locator('#nodes tbody tr .state', { hasText: 'NACKed' }).first().waitFor();
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const service = await start({
    RUNTIME_ROOT: EXAMPLES,
    RUNTIME_SUBDIRECTORY: 'ratelimit',
    RUNTIME_APPDIRECTORY: 'config',
    RUNTIME_WATCH_ROOT: 'false',
  });
  const sim = await runSimulator(
    ['-config_dir', path.join(EXAMPLES, 'ratelimit', 'config'), '-port', '0', '-admin_port', '0'],
    {},
    () => undefined,
  );
  const followers = await Promise.all(
    ['ratelimit-eu-1', 'ratelimit-eu-2'].map((node) =>
      start({
        CONFIG_TYPE: 'GRPC_XDS_SOTW',
        CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${sim.port}`,
        CONFIG_GRPC_XDS_NODE_ID: node,
      }),
    ),
  );
  const browser = await launchChromium({
    locale: 'en-GB',
    timezoneId: 'UTC',
    colorScheme: 'light',
  });
  const client = rlsClient(service.ports.grpc);
  // A trickle while the pages poll, so the statistics show rates.
  const trickle = setInterval(() => {
    client.send([['path', '/api/orders']]).catch(() => undefined);
  }, 40);
  try {
    await traffic(client.send);
    const admin = `http://127.0.0.1:${sim.adminPort}`;
    await fetch(`${admin}/republish`, { method: 'POST' });
    await fetch(`${admin}/bad-resource`, { method: 'POST' });
    for (const [screen, viewport] of Object.entries(SCREENS)) {
      const page = await browser.context.newPage();
      await page.setViewportSize(viewport);
      await statusPage(page, service.ports.debug ?? 0);
      await shoot(page, `status-${screen}`);
      await simPage(page, sim.adminPort);
      await shoot(page, `sim-${screen}`);
      await page.close();
    }
  } finally {
    clearInterval(trickle);
    client.close();
    await browser.close();
    for (const follower of followers) await follower.stop();
    await sim.stop();
    await service.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `screenshots: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exitCode = 1;
});
