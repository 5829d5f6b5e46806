// The control-plane simulator's admin page in a real browser: a connected service's ACK, then a
// NACK with its error after the bad-resource button, and the other buttons' effects.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium, type Browser } from '../../scripts/chromium';
import { collectCleanups } from '../helpers/cleanups';
import { ServiceProcess } from '../helpers/service-process';
import { SimProcess } from '../helpers/sim-process';

const cleanup = collectCleanups();
let sim: SimProcess;
let service: ServiceProcess;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
const NODE = 'page-node';

beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rl-sim-page-'));
  cleanup(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  writeFileSync(
    path.join(dir, 'a.yaml'),
    'domain: a\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 5 }\n',
  );
  sim = await SimProcess.start(dir);
  cleanup(() => sim.kill());
  service = await ServiceProcess.start({
    env: {
      BACKEND_TYPE: 'memory',
      CONFIG_TYPE: 'GRPC_XDS_SOTW',
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${sim.port}`,
      CONFIG_GRPC_XDS_NODE_ID: NODE,
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '100ms',
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: '400ms',
      CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: '100ms',
    },
  });
  cleanup(() => service.stop());
  browser = await launchChromium();
  cleanup(() => browser.close());
  page = await browser.context.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
  await page.goto(sim.admin('/'));
});

afterEach(() => {
  expect(pageErrors).toEqual([]);
});

const nodeRow = () => page.locator('#nodes tbody tr', { hasText: NODE });

async function rulesVersion(): Promise<unknown> {
  const body = (await (await fetch(service.debugUrl('/rules'))).json()) as {
    origin: { kind: string; version: string };
  };
  return body.origin;
}

it('shows the connected service with its ACK of the current version', async () => {
  await nodeRow().locator('.state', { hasText: 'ACKed' }).waitFor();
  const version = (await page.locator('#version').innerText()).replace('version ', '');
  expect(await nodeRow().locator('.ack').innerText()).toContain(version);
  expect(await rulesVersion()).toEqual({
    kind: 'xds',
    server: `127.0.0.1:${sim.port}`,
    version,
  });
});

it('shows a NACK with the error after the bad-resource button is pressed', async () => {
  const accepted = await rulesVersion();
  await page.click('#bad-on');
  await nodeRow().locator('.state', { hasText: 'NACKed' }).waitFor();
  expect(await nodeRow().locator('.nack').innerText()).not.toBe('');
  expect(await page.locator('#nodes tbody tr.nack-detail', { hasText: NODE }).innerText()).toMatch(
    /NACKed version \S+: resource bad-resource: invalid rate limit unit/,
  );
  expect(await page.locator('#resources').innerText()).toContain('bad-resource');
  // The service refused the update and keeps serving the version it had.
  expect(await rulesVersion()).toEqual(accepted);
});

it('pushes the directory again and drops the streams, and the service follows', async () => {
  await page.click('#bad-off');
  await nodeRow().locator('.state', { hasText: 'ACKed' }).waitFor();
  const before = await page.locator('#version').innerText();
  await page.click('#republish');
  await page.locator('#version', { hasNotText: before }).waitFor();
  await page.locator('#action-result', { hasText: 'Pushed the directory again' }).waitFor();
  await nodeRow().locator('.state', { hasText: 'ACKed' }).waitFor();
  expect(await page.locator('#versions tbody tr').count()).toBeGreaterThanOrEqual(4);

  await page.click('#disconnect');
  await page
    .locator('#action-result', { hasText: 'Dropped the streams: 1 streams ended' })
    .waitFor();
  // The service reconnects on its own.
  await nodeRow().locator('td.streams', { hasText: '1' }).waitFor();
});
