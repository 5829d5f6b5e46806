// The debug listener's status page in a real browser (Debian's chromium through playwright-core),
// against the built service: rules from a file, a counter lookup that matches what gRPC calls
// counted, a refusal appearing live, the RLQS buckets an Envoy watches, and a phone-sized screen.
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium, type Browser } from '../../scripts/chromium';
import { collectCleanups } from '../helpers/cleanups';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import { QuotaStreamClient, usage } from '../helpers/rlqs-stream';
import { RuntimeDir } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';

// A day, so that the calls and the lookup fall in one window.
const CONFIG = `domain: shop
descriptors:
  - key: user
    rate_limit: { unit: day, requests_per_unit: 2 }
  - key: path
    value: /cart
    shadow_mode: true
    rate_limit: { unit: day, requests_per_unit: 100 }
quota_buckets:
  - bucket: { name: api, tenant: "*" }
    requests_per_unit: 100
    unit: minute
  - bucket: { name: blocked }
    blanket_rule: deny_all
`;

const cleanup = collectCleanups();
let service: ServiceProcess;
let runtime: RuntimeDir;
let client: RlsClient;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  runtime = new RuntimeDir({ 'shop.yaml': CONFIG });
  cleanup(() => {
    runtime.destroy();
  });
  service = await ServiceProcess.start({ env: { BACKEND_TYPE: 'memory', ...runtime.env() } });
  cleanup(() => service.stop());
  client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  cleanup(() => {
    client.close();
  });
  browser = await launchChromium();
  cleanup(() => browser.close());
  page = await browser.context.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  await page.goto(service.debugUrl('/'));
});

afterEach(() => {
  expect(pageErrors).toEqual([]);
});

const alice = rlsRequest('shop', [[['user', 'alice']]]);

it('shows health and a rule loaded from a file, and filters the rules', async () => {
  await page.locator('#overall.ok').waitFor();
  expect(await page.locator('#health tbody').innerText()).toMatch(/backend\s+healthy/);
  const row = page.locator('#rules tbody tr', { hasText: 'user' }).first();
  await row.waitFor();
  expect(await row.innerText()).toMatch(/shop\s+user\s+2 \/ day/);
  expect(await row.innerText()).toContain('shop.yaml');
  expect(await page.locator('#rules-origin').innerText()).toContain('files in');

  await page.fill('#rules-filter', 'shadow');
  await page.locator('#rules tbody tr', { hasText: 'user' }).waitFor({ state: 'detached' });
  expect(await page.locator('#rules tbody tr').count()).toBe(1);
  await page.fill('#rules-filter', 'no such rule');
  await page.locator('#rules-empty').waitFor({ state: 'visible' });
  await page.fill('#rules-filter', '');
  expect(await page.locator('#rules tbody tr').count()).toBe(2);
});

it('looks up the count that gRPC calls just produced', async () => {
  const answers = [await client.shouldRateLimit(alice), await client.shouldRateLimit(alice)];
  expect(answers.map((a) => a.overallCode)).toEqual(['OK', 'OK']);
  await page.selectOption('#lookup-domain', 'shop');
  await page.fill('#lookup-descriptor', 'user=alice');
  await page.click('#lookup-form button[type=submit]');
  const count = page.locator('#lookup tbody td.count');
  await count.waitFor();
  expect(await count.innerText()).toBe('2');
  expect(await page.locator('#lookup tbody').innerText()).toMatch(/shop_user_alice_\d+/);

  await page.fill('#lookup-descriptor', 'user');
  await page.click('#lookup-form button[type=submit]');
  await page.locator('#lookup-error', { hasText: "has no '='" }).waitFor();
  // The browser logs the 400 it was meant to get; only that.
  expect(pageErrors.splice(0)).toEqual([
    'Failed to load resource: the server responded with a status of 400 (Bad Request)',
  ]);
});

it('shows a refused call in the recent table without a reload', async () => {
  await page.evaluate('window.__sameDocument = true');
  expect((await client.shouldRateLimit(alice)).overallCode).toBe('OVER_LIMIT');
  const row = page.locator('#recent tbody tr', { hasText: 'user=alice' });
  await row.waitFor();
  expect(await row.innerText()).toMatch(
    /refused\s+shop\s+user=alice\s+shop\.user\s+2 \/ day\s+1\s+0/,
  );
  expect(await page.evaluate('window.__sameDocument')).toBe(true);
  await page.locator('#stat-over_limit .value', { hasText: '1' }).waitFor();
  // The bounds of connections and buffered requests refused nothing here, and say so.
  await page.locator('#refusals', { hasText: "Refused by the service's bounds: none" }).waitFor();
});

it('lists the RLQS bucket rules and the Envoy watching a bucket, with its share', async () => {
  const section = page.locator('#quota-section');
  await section.waitFor({ state: 'visible' });
  expect(await page.locator('#quota tbody').innerText()).toMatch(/shop\s+name=blocked\s+deny_all/);
  const envoy = QuotaStreamClient.open(service.ports.grpc);
  cleanup(() => {
    envoy.close();
  });
  envoy.report('shop', [usage({ name: 'api', tenant: 'acme' }, 30)]);
  await envoy.waitForAnswers(1);
  const row = page.locator('#quota tbody tr', { hasText: 'tenant=acme' });
  await row.waitFor();
  // The one Envoy watching gets the whole budget.
  expect(await row.innerText()).toMatch(
    /shop\s+name=api,tenant=\*\s+100 \/ minute, token_bucket \(max 100\)\s+name=api,tenant=acme\s+127\.0\.0\.1:\d+\s+100/,
  );
  expect(await page.locator('#quota-note').innerText()).toContain('1 streams open');
});

it('fits a phone-sized screen without sideways scrolling of the page', async () => {
  const phone = await browser.context.newPage();
  try {
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(service.debugUrl('/'));
    await phone.locator('#rules tbody tr').first().waitFor();
    const widths = await phone.evaluate<[number, number]>(
      '[document.documentElement.scrollWidth, window.innerWidth]',
    );
    expect(widths[0]).toBeLessThanOrEqual(widths[1]);
  } finally {
    await phone.close();
  }
});

// /rlconfig's rule lines are the reference's (envoyproxy/ratelimit: src/config/config_impl.go,
// rateLimitDescriptor.dump); the quota bucket rules, which it does not have, follow them.
it('lists the quota bucket rules on /rlconfig after the rules', async () => {
  const text = await (await fetch(service.debugUrl('/rlconfig'))).text();
  expect(text.split('\n')).toEqual([
    'shop.user: unit=DAY requests_per_unit=2, shadow_mode: false, quota_mode: false',
    'shop.path_/cart: unit=DAY requests_per_unit=100, shadow_mode: true, quota_mode: false',
    'quota_bucket shop name=api,tenant=*: unit=MINUTE requests_per_unit=100, strategy: token_bucket, max_tokens: 100',
    'quota_bucket shop name=blocked: blanket_rule: deny_all',
    '',
  ]);
});

it('fits 1,280 px: neither the page nor a section scrolls sideways', async () => {
  const wide = await browser.context.newPage();
  try {
    await wide.setViewportSize({ width: 1280, height: 900 });
    await wide.goto(service.debugUrl('/'));
    await wide.locator('#health tbody tr').first().waitFor();
    await wide.locator('#rules tbody tr').first().waitFor();
    await wide.screenshot({
      path: path.join(tmpdir(), 'ratelimit-status-1280.png'),
      fullPage: true,
    });
    const overflowing = await wide.evaluate<string[]>(`
      [document.documentElement, ...document.querySelectorAll('#health-section, #health-section .scroll')]
        .filter((e) => e.scrollWidth > e.clientWidth)
        .map((e) => e.id || e.className || e.tagName)
    `);
    expect(overflowing).toEqual([]);
  } finally {
    await wide.close();
  }
});

it('shows a refused update until a good one loads, then clears the banner', async () => {
  const banner = page.locator('#rules-refused');
  runtime.write({
    'shop.yaml':
      'domain: shop\ndescriptors:\n  - key: user\n    rate_limit: { unit: fortnight, requests_per_unit: 2 }\n',
  });
  await banner.waitFor({ state: 'visible', timeout: 20_000 });
  expect(await banner.innerText()).toContain('Update refused at');
  runtime.write({ 'shop.yaml': CONFIG });
  await banner.waitFor({ state: 'hidden', timeout: 20_000 });
});
