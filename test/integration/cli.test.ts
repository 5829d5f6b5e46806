// The command-line tools, run as the bins: ratelimit-client and ratelimit-config-check.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { makeCertificates, type Certificates } from '../helpers/certs';
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
        'domain: cli\ndescriptors:\n  - key: a\n    descriptors:\n      - key: b\n        rate_limit: { unit: hour, requests_per_unit: 10 }\n  - key: one\n    rate_limit: { unit: hour, requests_per_unit: 1 }\n  - key: zero\n    rate_limit: { unit: second, requests_per_unit: 0 }\n',
    });
    service = await ServiceProcess.start({ env: { ...runtime.env(), BACKEND_TYPE: 'memory' } });
  });

  afterAll(async () => {
    await service.stop();
    runtime.destroy();
  });

  it('sends descriptors and prints the response as JSON with -json', async () => {
    const result = await run(BIN.client, [
      '-json',
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

  it('prints a line per descriptor, honours per-descriptor hits, and -exit_code', async () => {
    const dial = ['-dial_string', `127.0.0.1:${service.ports.grpc}`, '-domain', 'cli'];
    const result = await run(BIN.client, [
      ...dial,
      '-descriptors',
      'a=9,b=9;hits_addend=3',
      '-descriptors',
      'one=y;hits_addend=0',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^overall: OK\n {2}a=9,b=9;hits_addend=3: OK, 7 of 10 per hour left, resets in \d+s\n {2}one=y;hits_addend=0: OK, 1 of 1 per hour left, resets in \d+s\n$/,
    );
    const over = ['-descriptors', 'one=z', '-hits_addend', '2'];
    expect((await run(BIN.client, [...dial, ...over])).code).toBe(0);
    const scripted = await run(BIN.client, [...dial, ...over, '-exit_code']);
    expect(scripted.code).toBe(1);
    expect(scripted.stdout).toMatch(
      /^overall: OVER_LIMIT\n {2}one=z: OVER_LIMIT, 0 of 1 per hour left/,
    );
  });

  it('prints a limit of 0 as blocked, not as a count left of nothing', async () => {
    const result = await run(BIN.client, [
      ...['-dial_string', `127.0.0.1:${service.ports.grpc}`, '-domain', 'cli'],
      ...['-descriptors', 'zero=z'],
    ]);
    expect(result).toEqual({
      code: 0,
      stdout: 'overall: OVER_LIMIT\n  zero=z: OVER_LIMIT, blocked: requests_per_unit 0\n',
      stderr: '',
    });
  });

  it('refuses a per-descriptor hits_addend that is not a whole number', async () => {
    const result = await run(BIN.client, ['-domain', 'cli', '-descriptors', 'a=1;hits_addend=-1']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      '-descriptors a=1;hits_addend=-1: hits_addend must be a whole number of at least 0\n',
    );
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

describe('ratelimit-client over mutual TLS', () => {
  const SERVER_NAME = 'ratelimit.test';
  let certs: Certificates;
  let runtime: RuntimeDir;
  let service: ServiceProcess;

  beforeAll(async () => {
    certs = makeCertificates(SERVER_NAME);
    runtime = new RuntimeDir({
      'c.yaml':
        'domain: cli\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 5 }\n',
    });
    service = await ServiceProcess.start({
      env: {
        ...runtime.env(),
        BACKEND_TYPE: 'memory',
        GRPC_SERVER_USE_TLS: 'true',
        GRPC_SERVER_TLS_CERT: certs.serverCert,
        GRPC_SERVER_TLS_KEY: certs.serverKey,
        GRPC_CLIENT_TLS_CACERT: certs.caCert,
      },
    });
  });

  afterAll(async () => {
    await service.stop();
    runtime.destroy();
    certs.destroy();
  });

  it('calls with the CA, client certificate and key, and server name given as flags', async () => {
    const call = [
      '-dial_string',
      `127.0.0.1:${service.ports.grpc}`,
      '-domain',
      'cli',
      '-descriptors',
      'k=v',
    ];
    const tls = ['-tls_ca_cert', certs.caCert, '-tls_server_name', SERVER_NAME];
    const identity = ['-tls_client_cert', certs.clientCert, '-tls_client_key', certs.clientKey];
    const ok = await run(BIN.client, [...call, ...tls, ...identity, '-timeout', '5']);
    expect(ok.stderr).toBe('');
    expect(ok.stdout).toMatch(/^overall: OK\n {2}k=v: OK, 4 of 5 per hour left/);
    const anonymous = await run(BIN.client, [...call, ...tls, '-timeout', '5']);
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toMatch(/^request error: UNAVAILABLE: /);
    const halfIdentity = await run(BIN.client, [
      ...call,
      ...tls,
      '-tls_client_cert',
      certs.clientCert,
    ]);
    expect(halfIdentity.code).toBe(2);
    expect(halfIdentity.stderr).toBe(
      '-tls_client_cert and -tls_client_key go together: give both or neither\n',
    );
  });
});

describe('ratelimit-config-check', () => {
  const cleanups: (() => void)[] = [];
  afterAll(() => {
    for (const cleanup of cleanups) cleanup();
  });

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
      `configuration refused: ${dir}/typo.yaml: config error, unknown key 'ratelimit' (line 4, column 5, at descriptors[0].ratelimit)\n` +
        `configuration refused: ${dir}/unit.yaml: invalid rate limit unit 'decade'; accepted: second, minute, hour, day, week, month, year (line 4, column 17, at descriptors[0].rate_limit)\n` +
        '2 problems found; the configuration would be refused\n',
    );
  });

  it('checks what the service loads: subdirectories too, dot files unless ignored', async () => {
    const dir = path.join(FIXTURES, 'nested');
    const result = await run(BIN.configCheck, ['-config_dir', dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `warning: ${dir}/notes.txt: not a .yaml or .yml file, so the service does not read it\n` +
        `configuration refused: ${dir}/team/broken.yaml: invalid rate limit unit 'fortnight'; accepted: second, minute, hour, day, week, month, year (line 4, column 17, at descriptors[0].rate_limit)\n` +
        `configuration refused: ${dir}/top.yaml: duplicate domain 'top' in config file\n` +
        '2 problems found; the configuration would be refused\n',
    );
    const ignoring = await run(BIN.configCheck, ['-config_dir', dir, '-ignore_dot_files']);
    expect(ignoring.code).toBe(1);
    expect(ignoring.stderr).toBe(
      `warning: ${dir}/notes.txt: not a .yaml or .yml file, so the service does not read it\n` +
        `configuration refused: ${dir}/team/broken.yaml: invalid rate limit unit 'fortnight'; accepted: second, minute, hour, day, week, month, year (line 4, column 17, at descriptors[0].rate_limit)\n` +
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

  it('checks one file with -config_file, printing its problem as the service logs it', async () => {
    const file = path.join(FIXTURES, 'bad', 'unit.yaml');
    const result = await run(BIN.configCheck, ['-config_file', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `configuration refused: ${file}: invalid rate limit unit 'decade'; accepted: second, minute, hour, day, week, month, year (line 4, column 17, at descriptors[0].rate_limit)\n` +
        '1 problem found; the configuration would be refused\n',
    );
    const good = path.join(FIXTURES, 'good', readdirSync(path.join(FIXTURES, 'good'))[0] ?? '');
    const ok = await run(BIN.configCheck, ['-config_file', good]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(
      new RegExp(`^checked 1 file in ${good}: all rate limit configs ok\n`),
    );
  });

  it('needs -config_dir or -config_file, not both', async () => {
    const result = await run(BIN.configCheck, []);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^give -config_dir or -config_file \(one of them\)\n/);
    const both = await run(BIN.configCheck, ['-config_dir', FIXTURES, '-config_file', 'x.yaml']);
    expect(both.code).toBe(2);
  });

  it('warns of a limit without requests_per_unit, a misplaced key and files it would not read; -strict fails on them', async () => {
    const runtime = new RuntimeDir({
      'w.yaml':
        'domain: w\ndescriptors:\n  - key: k\n    rate_limit: { unit: minute }\n  - key: j\n    unit: minute\n    rate_limits:\n      - { unit: hour }\n',
      'notes.txt': 'not a rule file',
    });
    cleanups.push(() => {
      runtime.destroy();
    });
    const dir = runtime.configDir;
    const warnings =
      `warning: ${dir}/w.yaml: key 'unit' has no meaning in a descriptor and is ignored (line 6, column 5)\n` +
      `warning: ${dir}/notes.txt: not a .yaml or .yml file, so the service does not read it\n` +
      `warning: ${dir}/w.yaml: descriptors[0].rate_limit has no requests_per_unit, so its limit is 0 and it refuses every request; write requests_per_unit: 0 if that is meant (line 4, column 17)\n` +
      `warning: ${dir}/w.yaml: descriptors[1].rate_limits[0] has no requests_per_unit, so its limit is 0 and it refuses every request; write requests_per_unit: 0 if that is meant (line 8, column 9)\n`;
    expect(await run(BIN.configCheck, ['-config_dir', dir])).toEqual({
      code: 0,
      stdout: `checked 1 file in ${dir}: all rate limit configs ok (4 warnings above)\ndomain: w\n`,
      stderr: warnings,
    });
    expect(await run(BIN.configCheck, ['-config_dir', dir, '-strict'])).toEqual({
      code: 1,
      stdout: '',
      stderr: `${warnings}4 warnings found; -strict counts them as problems\n`,
    });
  });

  it('warns of a directory holding no YAML file, which -strict refuses', async () => {
    const runtime = new RuntimeDir({});
    cleanups.push(() => {
      runtime.destroy();
    });
    const dir = runtime.configDir;
    const warning = `warning: ${dir}: no .yaml or .yml file, so the service would load no rule and limit nothing\n`;
    expect(await run(BIN.configCheck, ['-config_dir', dir])).toEqual({
      code: 0,
      stdout: `checked 0 files in ${dir}: all rate limit configs ok (1 warning above)\n`,
      stderr: warning,
    });
    expect((await run(BIN.configCheck, ['-config_dir', dir, '-strict'])).code).toBe(1);
  });

  it('reports a missing directory', async () => {
    const result = await run(BIN.configCheck, ['-config_dir', '/nonexistent/dir']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error opening directory \/nonexistent\/dir: ENOENT/);
  });
});
