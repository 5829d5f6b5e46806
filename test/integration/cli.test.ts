// The command-line tools, run as the bins: ratelimit-client and ratelimit-config-check.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { RuntimeDir } from '../helpers/runtime-dir';
import { BIN, ServiceProcess } from '../helpers/service-process';

const FIXTURES = path.resolve(__dirname, '..', 'fixtures', 'config-check');

function run(
  bin: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env: { PATH: process.env.PATH ?? '' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => {
      resolve({ code, stdout, stderr });
    });
  });
}

describe('ratelimit-client', () => {
  let runtime: RuntimeDir;
  let service: ServiceProcess;

  beforeAll(async () => {
    runtime = new RuntimeDir({
      'c.yaml':
        'domain: cli\ndescriptors:\n  - key: a\n    descriptors:\n      - key: b\n        rate_limit: { unit: hour, requests_per_unit: 10 }\n  - key: one\n    rate_limit: { unit: hour, requests_per_unit: 1 }\n',
    });
    service = await ServiceProcess.start({ env: { ...runtime.env(), BACKEND_TYPE: 'memory' } });
  });

  afterAll(async () => {
    await service.stop();
    runtime.destroy();
  });

  it('sends descriptors and prints the response as JSON', async () => {
    const result = await run(BIN.client, [
      '-dial_string',
      `127.0.0.1:${service.ports.grpc}`,
      '-domain',
      'cli',
      '-descriptors',
      'a=1,b=2',
      '--descriptors=one=x',
      '-hits_addend',
      '2',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const response = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(response).toMatchObject({
      overallCode: 'OVER_LIMIT',
      statuses: [
        { code: 'OK', currentLimit: { requestsPerUnit: 10, unit: 'HOUR' }, limitRemaining: 8 },
        { code: 'OVER_LIMIT', currentLimit: { requestsPerUnit: 1, unit: 'HOUR' } },
      ],
    });
  });

  it('reports a failed call with its gRPC status and exits 1', async () => {
    const result = await run(BIN.client, [
      '-dial_string',
      `127.0.0.1:${service.ports.grpc}`,
      '-domain',
      '',
      '-descriptors',
      'a=1',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'request error: INVALID_ARGUMENT: rate limit domain must not be empty\n',
    );
  });

  it('refuses an unknown flag with usage and exit 2', async () => {
    const result = await run(BIN.client, ['-colour', 'red']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^unknown flag -colour\nusage: ratelimit-client \[flags\]/);
  });
});

describe('ratelimit-config-check', () => {
  it('prints the domains of a valid directory and exits 0', async () => {
    const result = await run(BIN.configCheck, ['-config_dir', path.join(FIXTURES, 'good')]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      `checked 2 files in ${path.join(FIXTURES, 'good')}: all rate limit configs ok\ndomain: alpha\ndomain: beta\n`,
    );
  });

  it('names every bad file with its reason and exits 1', async () => {
    const dir = path.join(FIXTURES, 'bad');
    const result = await run(BIN.configCheck, ['-config_dir', dir]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `error: ${dir}/typo.yaml: config error, unknown key 'ratelimit' (line 4, column 5)\n` +
        `error: ${dir}/unit.yaml: invalid rate limit unit 'decade' (line 4, column 17)\n` +
        '2 problems found; the configuration would be refused\n',
    );
  });

  it('checks what the service loads: subdirectories too, dot files unless ignored', async () => {
    const dir = path.join(FIXTURES, 'nested');
    const result = await run(BIN.configCheck, ['-config_dir', dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `error: ${dir}/team/broken.yaml: invalid rate limit unit 'fortnight' (line 4, column 17)\n` +
        `error: ${dir}/top.yaml: duplicate domain 'top' in config file\n` +
        '2 problems found; the configuration would be refused\n',
    );
    const ignoring = await run(BIN.configCheck, ['-config_dir', dir, '-ignore_dot_files']);
    expect(ignoring.code).toBe(1);
    expect(ignoring.stderr).toBe(
      `error: ${dir}/team/broken.yaml: invalid rate limit unit 'fortnight' (line 4, column 17)\n` +
        '1 problem found; the configuration would be refused\n',
    );
  });

  it('refuses a boolean flag that Go would not read as one', async () => {
    const dir = path.join(FIXTURES, 'good');
    const result = await run(BIN.configCheck, ['-config_dir', dir, '-merge_domain_configs=maybe']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^invalid boolean value "maybe" for -merge_domain_configs: parse error\nusage: ratelimit-config-check/,
    );
    const merged = await run(BIN.configCheck, ['-config_dir', dir, '-merge_domain_configs=T']);
    expect(merged.code).toBe(0);
  });

  it('needs -config_dir', async () => {
    const result = await run(BIN.configCheck, []);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^-config_dir is required\n/);
  });

  it('reports a missing directory', async () => {
    const result = await run(BIN.configCheck, ['-config_dir', '/nonexistent/dir']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error opening directory \/nonexistent\/dir: ENOENT/);
  });
});
