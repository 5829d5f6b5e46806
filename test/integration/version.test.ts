// The version, from package.json alone: `ratelimit --version`, and ratelimit_build_info.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { collectCleanups } from '../helpers/cleanups';
import { parseExposition } from '../helpers/prometheus';
import { RuntimeDir } from '../helpers/runtime-dir';
import { BIN, ServiceProcess } from '../helpers/service-process';

const cleanup = collectCleanups();
const packageJson = path.resolve(__dirname, '..', '..', 'package.json');
const pkg = JSON.parse(readFileSync(packageJson, 'utf8')) as { name: string; version: string };

it('prints the name and version with --version and exits 0, without reading the settings', () => {
  // PORT is wrong on purpose: reading the settings would stop with a message and code 1.
  const result = spawnSync(process.execPath, [BIN.ratelimit, '--version'], {
    env: { PATH: process.env.PATH ?? '', PORT: 'not-a-port' },
    encoding: 'utf8',
    timeout: 20_000,
  });
  expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({
    status: 0,
    stdout: `${pkg.name} ${pkg.version}\n`,
    stderr: '',
  });
});

it('exposes ratelimit_build_info with the version as a label to a Prometheus scrape', async () => {
  const runtime = new RuntimeDir({
    'v.yaml':
      'domain: v\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 5 }\n',
  });
  cleanup(() => {
    runtime.destroy();
  });
  const service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      BACKEND_TYPE: 'memory',
      USE_PROMETHEUS: 'true',
      PROMETHEUS_ADDR: '127.0.0.1:0',
    },
  });
  cleanup(() => service.stop());
  const res = await fetch(`http://127.0.0.1:${service.ports.metrics}/metrics`);
  const metrics = parseExposition(await res.text());
  expect(metrics.get(`ratelimit_build_info{version="${pkg.version}"}`)).toBe(1);
  expect(
    await service.stat(`ratelimit.build_info.__version=${pkg.version.replace(/\./g, '_')}`),
  ).toBe(1);
});
