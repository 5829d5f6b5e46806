// Health that tells the truth: liveness (/livez) apart from readiness (/healthcheck), and the
// status page naming a missing configuration or an unreachable backend first, in red, even
// when the settings keep them out of /healthcheck (the reference's semantics).
import type { Page } from 'playwright-core';
import { launchChromium, type Browser } from '../../scripts/chromium';
import { collectCleanups } from '../helpers/cleanups';
import { eventually } from '../helpers/eventually';
import { RlsClient } from '../helpers/grpc-client';
import { RedisServer } from '../helpers/redis-server';
import { RuntimeDir } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';

const cleanup = collectCleanups();
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
  cleanup(() => browser.close());
});

async function status(service: ServiceProcess, path: string): Promise<number> {
  return (await fetch(service.url(path))).status;
}

/** The status page of `service`, and the errors it logs (none expected). */
async function statusPage(service: ServiceProcess): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.context.newPage();
  cleanup(() => page.close());
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(service.debugUrl('/'));
  return { page, errors };
}

/** The problem banner says `text`, above the health table, in the page's red. */
async function expectProblemOnTop(page: Page, text: RegExp): Promise<void> {
  const problem = page.locator('#problems .alert', { hasText: text });
  await problem.waitFor();
  const [problemBox, healthBox] = await Promise.all([
    problem.boundingBox(),
    page.locator('#health-section').boundingBox(),
  ]);
  expect(problemBox?.y).toBeLessThan(healthBox?.y ?? 0);
  const [color, bad] = await page.evaluate<[string, string]>(
    `[getComputedStyle(document.querySelector('#problems .alert')).color,
      getComputedStyle(document.documentElement).getPropertyValue('--bad').trim()]`,
  );
  // --bad is #b42318 (light) or #ff8a80 (dark): either way a red.
  expect(['rgb(180, 35, 24)', 'rgb(255, 138, 128)']).toContain(color);
  expect(bad).toMatch(/^#(b42318|ff8a80)$/);
  expect(await page.locator('#overall').getAttribute('class')).toBe('badge bad');
}

describe('no configuration loaded (HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED off)', () => {
  let service: ServiceProcess;

  beforeAll(async () => {
    // The only file is refused: the service starts with no configuration.
    const runtime = new RuntimeDir({
      'bad.yaml':
        'domain: d\ndescriptors:\n  - key: k\n    rate_limit: { unit: fortnight, requests_per_unit: 1 }\n',
    });
    cleanup(() => {
      runtime.destroy();
    });
    service = await ServiceProcess.start({ env: { BACKEND_TYPE: 'memory', ...runtime.env() } });
    cleanup(() => service.stop());
  });

  it('keeps /healthcheck 200, as the reference does, and /livez 200', async () => {
    expect(await status(service, '/healthcheck')).toBe(200);
    expect(await status(service, '/livez')).toBe(200);
    const health = (await (await fetch(service.debugUrl('/health'))).json()) as {
      components: { name: string; healthy: boolean; affectsHealth: boolean }[];
    };
    expect(health.components.find((c) => c.name === 'config')).toMatchObject({
      healthy: false,
      affectsHealth: false,
    });
  });

  it('puts "No configuration loaded" at the top of the status page, in red', async () => {
    const { page, errors } = await statusPage(service);
    await expectProblemOnTop(page, /^No configuration loaded since /);
    expect(await page.locator('#overall').innerText()).toBe('no configuration loaded');
    expect(errors).toEqual([]);
  });
});

describe('backend unreachable (REDIS_HEALTH_CHECK_ACTIVE_CONNECTION on)', () => {
  let redis: RedisServer;
  let service: ServiceProcess;
  let client: RlsClient;

  beforeAll(async () => {
    redis = await RedisServer.start();
    cleanup(() => redis.destroy());
    const runtime = new RuntimeDir({
      'd.yaml':
        'domain: d\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 5 }\n',
    });
    cleanup(() => {
      runtime.destroy();
    });
    service = await ServiceProcess.start({
      env: {
        ...runtime.env(),
        REDIS_URL: `127.0.0.1:${redis.port}`,
        REDIS_HEALTH_CHECK_ACTIVE_CONNECTION: 'true',
        HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: 'true',
      },
    });
    cleanup(() => service.stop());
    client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
    cleanup(() => {
      client.close();
    });
  });

  it('is not ready while Redis is away, yet alive, and says so on top of the page', async () => {
    const { page, errors } = await statusPage(service);
    await page.locator('#overall.ok').waitFor();
    await redis.stop();
    await eventually(async () => (await status(service, '/healthcheck')) === 500, {
      what: '/healthcheck to fail',
    });
    expect(await client.healthCheck()).toBe('NOT_SERVING');
    expect(await status(service, '/livez')).toBe(200);
    await expectProblemOnTop(page, /^Backend unreachable since .*: calls that need it fail$/);

    await redis.restart();
    await eventually(async () => (await status(service, '/healthcheck')) === 200, {
      what: 'ready again',
      timeoutMs: 15_000,
    });
    await page.locator('#overall.ok').waitFor();
    expect(await page.locator('#problems').isHidden()).toBe(true);
    expect(errors).toEqual([]);
  });
});
