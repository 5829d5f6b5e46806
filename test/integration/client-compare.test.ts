// ratelimit-client -replay: the same request file against two instances of the built service,
// each counting under its own CACHE_KEY_PREFIX in one real Redis. Identical rules give no
// difference; rules with planted changes give exactly the planted fields, line by line.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RedisServer } from '../helpers/redis-server';
import { RuntimeDir } from '../helpers/runtime-dir';
import { BIN, ServiceProcess } from '../helpers/service-process';
import { unusedPort } from '../helpers/ports';

const ROOT = path.resolve(__dirname, '..', '..');
const EXAMPLE_CONFIG = path.join(ROOT, 'examples', 'compare', 'config', 'compare.yaml');
const EXAMPLE_REQUESTS = path.join(ROOT, 'examples', 'compare', 'requests.jsonl');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function client(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN.client, ...args], {
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

let redis: RedisServer;
let files: string;

beforeAll(async () => {
  redis = await RedisServer.start();
  files = mkdtempSync(path.join(tmpdir(), 'rl-compare-'));
});

afterAll(async () => {
  await redis.destroy();
  rmSync(files, { recursive: true, force: true });
});

/** Two services on the given rules, counting apart in the one Redis. */
async function pair(
  first: string,
  second: string,
): Promise<{ services: ServiceProcess[]; dial: string[]; stop: () => Promise<void> }> {
  const run = `${process.pid}-${Date.now()}`;
  const runtimes = [first, second].map((yaml) => new RuntimeDir({ 'rules.yaml': yaml }));
  const services = await Promise.all(
    runtimes.map((runtime, i) =>
      ServiceProcess.start({
        env: {
          ...runtime.env(),
          REDIS_SOCKET_TYPE: 'tcp',
          REDIS_URL: `127.0.0.1:${redis.port}`,
          CACHE_KEY_PREFIX: `${run}-${i}:`,
        },
      }),
    ),
  );
  const [a, b] = services;
  if (a === undefined || b === undefined) throw new Error('two services expected');
  return {
    services,
    dial: [
      ...['-dial_string', `127.0.0.1:${a.ports.grpc}`],
      ...['-compare_dial_string', `127.0.0.1:${b.ports.grpc}`],
    ],
    stop: async () => {
      await Promise.all(services.map((s) => s.stop()));
      for (const r of runtimes) r.destroy();
    },
  };
}

/**
 * The rules count per minute or hour: start the replay early in a minute so that no window
 * boundary falls between the two services' calls of one request (bounded: at most 16 s).
 */
async function awayFromMinuteBoundary(): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second >= 45) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
}

describe('identical rules', () => {
  it('reports no difference over the example request file, and exits 0', async () => {
    const yaml = readFileSync(EXAMPLE_CONFIG, 'utf8');
    const services = await pair(yaml, yaml);
    try {
      await awayFromMinuteBoundary();
      const result = await client(['-replay', EXAMPLE_REQUESTS, ...services.dial]);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(
        /^first: 127\.0\.0\.1:\d+, second: 127\.0\.0\.1:\d+\n31 requests: no differences\n$/,
      );
      expect(result.code).toBe(0);
    } finally {
      await services.stop();
    }
  }, 60_000);
});

const PLANTED_FIRST = `domain: cmp
descriptors:
  - key: a
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: b
    rate_limit: { unit: hour, requests_per_unit: 5 }
  - key: d
    rate_limit: { unit: hour, requests_per_unit: 5 }
`;
// b allows one request fewer; d has no rule at all.
const PLANTED_SECOND = `domain: cmp
descriptors:
  - key: a
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: b
    rate_limit: { unit: hour, requests_per_unit: 4 }
`;

function line(descriptor: string, hits?: number): string {
  const [key = '', value = ''] = descriptor.split('=');
  return JSON.stringify({
    domain: 'cmp',
    descriptors: [{ entries: [{ key, value }] }],
    ...(hits === undefined ? {} : { hits_addend: hits }),
  });
}

describe('planted differences', () => {
  it('reports exactly the planted fields, per line, and exits 1', async () => {
    const file = path.join(files, 'planted.jsonl');
    writeFileSync(
      file,
      [
        line('a=x'), // 1: the same rule: no difference
        line('b=x'), // 2: 5 against 4 per hour
        line('b=x', 3), // 3: counts 4: 1 left against 0
        line('b=x'), // 4: counts 5: OK against OVER_LIMIT
        line('d=x'), // 5: a rule against none
        line('a=x', 2), // 6: over the same limit on both: no difference
      ].join('\n'),
    );
    const services = await pair(PLANTED_FIRST, PLANTED_SECOND);
    try {
      await awayFromMinuteBoundary(); // hour windows start on a minute boundary too
      const result = await client(['-replay', file, ...services.dial]);
      expect(result.stderr).toBe('');
      const lines = result.stdout.split('\n');
      expect(lines.slice(1)).toEqual([
        'line 2: statuses[0].current_limit (b=x): first 5/HOUR, second 4/HOUR',
        'line 2: statuses[0].limit_remaining (b=x): first 4, second 3',
        'line 3: statuses[0].current_limit (b=x): first 5/HOUR, second 4/HOUR',
        'line 3: statuses[0].limit_remaining (b=x): first 1, second 0',
        'line 4: overall_code: first OK, second OVER_LIMIT',
        'line 4: statuses[0].code (b=x): first OK, second OVER_LIMIT',
        'line 4: statuses[0].current_limit (b=x): first 5/HOUR, second 4/HOUR',
        'line 5: statuses[0].current_limit (d=x): first 5/HOUR, second none',
        'line 5: statuses[0].limit_remaining (d=x): first 4, second 0',
        expect.stringMatching(
          /^line 5: statuses\[0\]\.duration_until_reset \(d=x\): first \d+s, second none$/,
        ),
        '6 requests: 10 differences in 4 requests',
        '',
      ]);
      expect(result.code).toBe(1);
    } finally {
      await services.stop();
    }
  }, 60_000);
});

describe('what stops a replay', () => {
  it('exits 3 naming the service that cannot be reached', async () => {
    const closed = await unusedPort();
    const file = path.join(files, 'one.jsonl');
    writeFileSync(file, `${line('a=x')}\n`);
    const result = await client([
      ...['-replay', file, '-timeout', '2'],
      ...['-dial_string', `127.0.0.1:${closed}`, '-compare_dial_string', `127.0.0.1:${closed}`],
    ]);
    expect(result.stderr).toMatch(
      new RegExp(`^cannot compare: 127\\.0\\.0\\.1:${closed}, line 1: `),
    );
    expect(result.code).toBe(3);
  });

  it('exits 2 listing every wrong line of the file before calling anything', async () => {
    const file = path.join(files, 'wrong.jsonl');
    writeFileSync(file, `${line('a=x')}\n{"domain": 1}\n{\n`);
    const result = await client([
      ...['-replay', file, '-dial_string', '127.0.0.1:1', '-compare_dial_string', '127.0.0.1:1'],
    ]);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      new RegExp(
        `^${file}: line 2: domain must be a string\\n${file}: line 3: the body is not valid JSON`,
      ),
    );
    expect(result.code).toBe(2);
  });

  it('exits 2 without -compare_dial_string', async () => {
    const result = await client(['-replay', EXAMPLE_REQUESTS]);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: '-replay needs -compare_dial_string, the second service to compare\n',
    });
  });
});
