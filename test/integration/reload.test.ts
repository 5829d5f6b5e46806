// Configuration reloads of the built server: both watch modes, refusals that keep the old
// configuration, merging, and the health that follows the configuration.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { status } from '@grpc/grpc-js';
import { eventually } from '../helpers/eventually';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import { RuntimeDir } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import { collectCleanups } from '../helpers/cleanups';

const cleanup = collectCleanups();

function domainFile(domain: string, rpu: number): string {
  return `domain: ${domain}\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: ${rpu} }\n`;
}

async function boot(
  files: Record<string, string>,
  env: Record<string, string> = {},
  useSymlink = false,
): Promise<{
  runtime: RuntimeDir;
  service: ServiceProcess;
  client: RlsClient;
}> {
  const runtime = new RuntimeDir(files, useSymlink);
  const service = await ServiceProcess.start({
    env: { ...runtime.env(), BACKEND_TYPE: 'memory', ...env },
    waitFor: 'listening',
  });
  const client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  cleanup(() => {
    runtime.destroy();
  });
  cleanup(() => service.stop());
  cleanup(() => {
    client.close();
  });
  return { runtime, service, client };
}

async function limitOf(client: RlsClient, domain: string): Promise<number | undefined> {
  const res = await client.shouldRateLimit(rlsRequest(domain, [[['k', `v${Math.random()}`]]]));
  return res.statuses?.[0]?.currentLimit?.requestsPerUnit;
}

describe('RUNTIME_WATCH_ROOT=false: changes in the directory reload', () => {
  it('adds, changes and removes domains as files come and go', async () => {
    const { runtime, client, service } = await boot({ 'a.yaml': domainFile('a', 5) });
    expect(await limitOf(client, 'a')).toBe(5);
    runtime.write({ 'b.yaml': domainFile('b', 7) });
    await eventually(async () => (await limitOf(client, 'b')) === 7, { what: 'domain b' });
    runtime.write({ 'a.yaml': domainFile('a', 9) });
    await eventually(async () => (await limitOf(client, 'a')) === 9, {
      what: 'the new limit of a',
    });
    runtime.remove('b.yaml');
    await eventually(async () => (await limitOf(client, 'b')) === undefined, {
      what: 'domain b to go',
    });
    expect(await service.stat('ratelimit.service.config_load_success')).toBeGreaterThanOrEqual(4);
  });

  it('reloads on a change in a subdirectory, which the loader reads too', async () => {
    const { runtime, client } = await boot({ 'a.yaml': domainFile('a', 5) });
    const team = path.join(runtime.configDir, 'team');
    mkdirSync(team);
    writeFileSync(path.join(team, 't.yaml'), domainFile('t', 2));
    await eventually(async () => (await limitOf(client, 't')) === 2, { what: 'domain t' });
    writeFileSync(path.join(team, 't.yaml'), domainFile('t', 4));
    await eventually(async () => (await limitOf(client, 't')) === 4, {
      what: 'the new limit of t',
    });
  });

  it('refuses a bad file, keeps the previous configuration serving and says which file and why', async () => {
    const { runtime, client, service } = await boot({ 'a.yaml': domainFile('a', 5) });
    runtime.write({
      'broken.yaml':
        'domain: broken\ndescriptors:\n  - key: k\n    rate_limit: { unit: fortnight, requests_per_unit: 1 }\n',
    });
    await eventually(
      async () => (await service.stat('ratelimit.service.config_load_error')) === 1,
      { what: 'a refused load' },
    );
    // One line: the file, the reason and what keeps serving.
    await service.logged(
      `configuration refused: ${runtime.configDir}/broken.yaml: invalid rate limit unit 'fortnight'; accepted: second, minute, hour, day, week, month, year (line 4, column 17, at descriptors[0].rate_limit); the previous configuration keeps serving`,
    );
    expect(await limitOf(client, 'a')).toBe(5);
    expect(await limitOf(client, 'broken')).toBeUndefined();
    runtime.write({ 'broken.yaml': domainFile('broken', 3) });
    await eventually(async () => (await limitOf(client, 'broken')) === 3, {
      what: 'the fixed file',
    });
  });
});

describe('RUNTIME_WATCH_ROOT=true: repointing the root symlink reloads', () => {
  it('loads the new tree when the symlink is swapped', async () => {
    const { runtime, client } = await boot({ 'a.yaml': domainFile('a', 5) }, {}, true);
    expect(await limitOf(client, 'a')).toBe(5);
    runtime.repoint({ 'a.yaml': domainFile('a', 6), 'c.yaml': domainFile('c', 2) });
    await eventually(async () => (await limitOf(client, 'c')) === 2, { what: 'the new tree' });
    expect(await limitOf(client, 'a')).toBe(6);
  });
});

describe('MERGE_DOMAIN_CONFIG', () => {
  const files = {
    'one.yaml':
      'domain: shared\ndescriptors:\n  - key: x\n    rate_limit: { unit: hour, requests_per_unit: 1 }\n',
    'two.yaml':
      'domain: shared\ndescriptors:\n  - key: y\n    rate_limit: { unit: hour, requests_per_unit: 2 }\n',
  };

  it('merges the files of one domain when true', async () => {
    const { client } = await boot(files, { MERGE_DOMAIN_CONFIG: 'true' });
    const res = await client.shouldRateLimit(rlsRequest('shared', [[['x', '1']], [['y', '1']]]));
    expect(res.statuses?.map((s) => s.currentLimit?.requestsPerUnit)).toEqual([1, 2]);
  });

  it('refuses them when false; with no configuration loaded, requests are refused', async () => {
    const { client, service } = await boot(files);
    await service.logged(
      /configuration refused: .*two\.yaml: duplicate domain 'shared' in config file/,
    );
    await service.logged(
      'no configuration is loaded; requests are refused until a valid one arrives',
    );
    const err = await client.error(rlsRequest('shared', [[['x', '1']]]));
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toBe('no rate limit configuration loaded');
  });
});

describe('HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED', () => {
  it('is unhealthy without a domain and healthy with one', async () => {
    const { runtime, service, client } = await boot(
      {},
      { HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: 'true' },
    );
    // Every method tells the health: HAProxy's httpchk probes with OPTIONS.
    for (const method of ['GET', 'HEAD', 'OPTIONS', 'POST']) {
      expect((await fetch(service.url('/healthcheck'), { method })).status).toBe(500);
    }
    expect(await client.healthCheck()).toBe('NOT_SERVING');
    runtime.write({ 'a.yaml': domainFile('a', 1) });
    await eventually(async () => (await fetch(service.url('/healthcheck'))).status === 200, {
      what: 'healthy',
    });
    expect(await client.healthCheck()).toBe('SERVING');
    runtime.remove('a.yaml');
    await eventually(async () => (await fetch(service.url('/healthcheck'))).status === 500, {
      what: 'unhealthy again',
    });
  });

  it('is healthy from the start when false, even without a domain', async () => {
    const { service } = await boot({});
    expect((await fetch(service.url('/healthcheck'))).status).toBe(200);
  });
});
