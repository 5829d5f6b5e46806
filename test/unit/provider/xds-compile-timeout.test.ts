// A compile process that hangs is killed after CONFIG_COMPILE_TIMEOUT: the update is NACKed
// naming the setting, the configuration in service stays, and later updates compile again.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CompileOptions, ConfigSnapshot, LoadOutcome } from '../../../src/config';
import { MemoryLogger } from '../../../src/lib/logger';
import {
  CompileTimeout,
  InThreadCompiler,
  ProcessCompiler,
  XdsConfigProvider,
  type CompileJob,
  type ConfigCompiler,
} from '../../../src/provider';
import { loadSettings, type XdsSourceSettings } from '../../../src/settings';
import { StatsStore } from '../../../src/stats';
import {
  AdsServer,
  oneLimitConfig,
  RATE_LIMIT_CONFIG_TYPE_URL,
  type AdsRequest,
} from '../../helpers/ads-server';
import { collectCleanups } from '../../helpers/cleanups';
import { eventually } from '../../helpers/eventually';

const cleanup = collectCleanups();
/** Long enough for the hung process to start and write its pid before it is killed. */
const TIMEOUT_MS = 2000;

/** A compile script that writes its pid beside itself and then never answers. */
function hangingScript(): { script: string; pidFile: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'rl-hung-compile-'));
  const script = path.join(dir, 'hang.js');
  const pidFile = `${script}.pid`;
  cleanup(() => {
    // Should the test fail before the compiler kills it, the process is ended here by its id.
    if (existsSync(pidFile)) {
      const pid = Number(readFileSync(pidFile, 'utf8'));
      if (isRunning(pid)) process.kill(pid, 'SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  });
  writeFileSync(
    script,
    `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));\n` +
      'process.on("message", () => undefined);\nsetInterval(() => undefined, 60000);\n',
  );
  return { script, pidFile };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pid the hung compile process wrote once it started. */
async function startedPid(pidFile: string): Promise<number> {
  const pid = await eventually(
    () => {
      const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : 0;
      return pid > 0 ? pid : false;
    },
    { what: 'the compile process to start' },
  );
  if (pid === false) throw new Error('eventually() resolves only with a pid');
  return pid;
}

it('kills a compile process that does not answer, naming the setting', async () => {
  const { script, pidFile } = hangingScript();
  const compiler = new ProcessCompiler(script, TIMEOUT_MS);
  const job: CompileJob = { kind: 'resources', resources: [] };
  const compiling = compiler.compile(job, {
    stats: new StatsStore(),
    mergeDomainConfig: false,
    sanitizeDots: false,
  });
  const pid = await startedPid(pidFile);
  expect(isRunning(pid)).toBe(true);
  await expect(compiling).rejects.toThrow(CompileTimeout);
  await expect(compiling).rejects.toThrow(
    'the compile process did not answer within 2s (CONFIG_COMPILE_TIMEOUT) and was stopped',
  );
  await eventually(() => !isRunning(pid), { what: `the hung compile process ${pid} to end` });
});

it('NACKs an update whose compile hangs, keeps the configuration in service, and compiles the next', async () => {
  const ads = await AdsServer.start();
  cleanup(() => ads.close());
  const { script, pidFile } = hangingScript();
  const hanging = new ProcessCompiler(script, TIMEOUT_MS);
  const working = new InThreadCompiler();
  let isHanging = false;
  const compiler: ConfigCompiler = {
    compile: (job: CompileJob, options: CompileOptions): Promise<LoadOutcome> =>
      (isHanging ? hanging : working).compile(job, options),
  };
  const logger = new MemoryLogger();
  const provider = new XdsConfigProvider({
    settings: loadSettings({
      CONFIG_TYPE: 'GRPC_XDS_SOTW',
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${ads.port}`,
    }).config.source as XdsSourceSettings,
    compile: { stats: new StatsStore(), mergeDomainConfig: false, sanitizeDots: false },
    logger,
    compiler,
  });
  const snapshots: ConfigSnapshot[] = [];
  await provider.start({ onSnapshot: (s) => snapshots.push(s), onRejected: () => undefined });
  cleanup(() => provider.stop());
  await eventually(() => ads.rateLimitRequests(0).length === 1, { what: 'the first request' });
  const requests = (): AdsRequest[] => ads.rateLimitRequests(0);
  const push = (n: number, requestsPerUnit: number): void => {
    ads.streams[0]!.write({
      version_info: `v${n}`,
      type_url: RATE_LIMIT_CONFIG_TYPE_URL,
      nonce: `n${n}`,
      resources: [
        { type_url: RATE_LIMIT_CONFIG_TYPE_URL, value: oneLimitConfig('edge', requestsPerUnit) },
      ],
    });
  };
  const limitIn = (snapshot: ConfigSnapshot | undefined): number | undefined =>
    snapshot?.findLimit('edge', { entries: [{ key: 'k', value: 'x' }], limit: undefined })?.rule
      .requestsPerUnit;

  push(1, 10);
  await eventually(() => requests().length === 2, { what: 'the ACK of v1' });
  expect(limitIn(snapshots[0])).toBe(10);

  isHanging = true;
  push(2, 20);
  const pid = await startedPid(pidFile);
  await eventually(() => requests().length === 3, { what: 'the NACK of v2', timeoutMs: 5000 });
  expect(requests()[2]).toMatchObject({
    version_info: 'v1',
    response_nonce: 'n2',
    error_detail: {
      code: 3,
      message:
        'the update could not be applied: the compile process did not answer within 2s (CONFIG_COMPILE_TIMEOUT) and was stopped',
    },
  });
  await eventually(() => !isRunning(pid), { what: `the hung compile process ${pid} to end` });
  expect(snapshots).toHaveLength(1);
  expect(logger.lines).toContainEqual(
    expect.objectContaining({ level: 'error', message: 'refused an xDS update (NACK)' }),
  );

  isHanging = false;
  push(3, 30);
  await eventually(() => requests().length === 4, { what: 'the ACK of v3' });
  expect(requests()[3]).toMatchObject({ version_info: 'v3', response_nonce: 'n3' });
  expect(limitIn(snapshots[1])).toBe(30);
});
