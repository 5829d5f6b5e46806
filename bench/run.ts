// `npm run bench`: the built service under load next to a no-op grpc-js server, every figure
// also a ratio to that ceiling measured in the same round. Scenarios run round-robin, so a
// slow spell of a shared machine lands on every scenario alike; the table shows medians.
// Settings: BENCH_SECONDS (5), BENCH_ROUNDS (3), BENCH_ONLY (a name fragment; the ceilings
// always run), BENCH_SERVER_NODE_OPTIONS (NODE_OPTIONS for the service under test only).
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LoadOptions, LoadResult } from './load';
import { startMemcached, type BenchBackend } from './memcached';
import {
  HAS_TASKSET,
  canConnect,
  captureOutput,
  childrenOf,
  coreLayout,
  cpuSeconds,
  freePort,
  peakRssMiB,
  pinned,
  stop,
  waitFor,
} from './processes';
import { CONFIG, NAMES, SCENARIOS, type Scenario } from './scenarios';

const ROOT = path.resolve(__dirname, '..', '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? '5');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '3');
const ONLY = process.env.BENCH_ONLY;
const WARMUP_MS = 1000;
const CORES = coreLayout();

interface Measurement {
  readonly answersPerSecond: number;
  readonly latencyMs: LoadResult['latencyMs'];
  readonly serverCpu: number;
  readonly loadCpu: number;
  /** CPU of the scenario's backend process (redis-server or memcached). */
  readonly backendCpu: number | undefined;
  readonly peakRssMiB: number;
  readonly unexpected: number;
  readonly outcomes: Record<string, number>;
  /** Redis commands per answer during the measured window. */
  readonly redisCommandsPerAnswer: number | undefined;
}

interface Row {
  readonly scenario: Scenario;
  readonly median: Measurement;
  /** Median over rounds of (this scenario / its ceiling in the same round). */
  readonly ratio: number | undefined;
  readonly rounds: readonly Measurement[];
}

function redisCommands(port: number): number {
  const text = execFileSync('redis-cli', ['-p', String(port), 'info', 'stats']).toString();
  const match = /total_commands_processed:(\d+)/.exec(text);
  return match === null ? 0 : Number(match[1]);
}

function serviceEnv(
  scenario: Scenario,
  ports: Record<string, number>,
  work: string,
): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    // Lets a run try V8 flags on the server alone (the load generator keeps its own).
    NODE_OPTIONS: process.env.BENCH_SERVER_NODE_OPTIONS ?? '',
    HOST: '127.0.0.1',
    PORT: String(ports.http),
    GRPC_HOST: '127.0.0.1',
    GRPC_PORT: String(ports.grpc),
    DEBUG_HOST: '127.0.0.1',
    DEBUG_PORT: String(ports.debug),
    BACKEND_TYPE: scenario.backend === '-' ? 'redis' : scenario.backend,
    REDIS_URL: `127.0.0.1:${ports.redis}`,
    MEMCACHE_HOST_PORT: `127.0.0.1:${ports.memcached}`,
    RUNTIME_ROOT: work,
    RUNTIME_SUBDIRECTORY: '',
    RUNTIME_APPDIRECTORY: 'config',
    RUNTIME_WATCH_ROOT: 'false',
    USE_STATSD: 'false',
    STATS_FLUSH_INTERVAL: '1h',
    LOG_LEVEL: 'error',
    WORKERS: String(scenario.workers),
    ...scenario.env,
  };
}

/** The backend processes every scenario may count in. */
interface Backends {
  readonly redis: { readonly port: number; readonly pid: number | undefined };
  /** Started only when a chosen scenario counts in memcached. */
  readonly memcached: BenchBackend | undefined;
}

async function startServer(
  scenario: Scenario,
  backends: Backends,
  work: string,
): Promise<{ child: ChildProcess; port: number; pids: () => number[] }> {
  const ports = {
    http: await freePort(),
    grpc: await freePort(),
    debug: await freePort(),
    redis: backends.redis.port,
    memcached: backends.memcached?.port ?? 0,
  };
  const port = scenario.kind === 'http' ? ports.http : ports.grpc;
  const cores =
    scenario.workers > 1 || scenario.name.includes('two cores') ? CORES.serverPair : CORES.server;
  const child =
    scenario.server === 'noop'
      ? pinned(cores, process.execPath, [
          path.join(ROOT, 'dist', 'bench', 'noop-server.js'),
          String(port),
        ])
      : pinned(
          cores,
          process.execPath,
          [path.join(ROOT, 'bin', 'ratelimit.js')],
          serviceEnv(scenario, ports, work),
        );
  const output = captureOutput(child);
  // taskset execs the command, so the child's id is the server's (or the supervisor's).
  const pids = (): number[] =>
    scenario.workers > 1 ? childrenOf(child.pid) : child.pid === undefined ? [] : [child.pid];
  await waitFor(
    async () => (await canConnect(port)) && pids().length === scenario.workers,
    () => `${scenario.name} to listen:\n${output()}`,
  );
  return { child, port, pids };
}

async function measure(scenario: Scenario, backends: Backends, work: string): Promise<Measurement> {
  const redis = backends.redis;
  const backendPid = scenario.backend === 'memcache' ? backends.memcached?.pid : redis.pid;
  const server = await startServer(scenario, backends, work);
  try {
    const options: LoadOptions = {
      kind: scenario.kind,
      host: '127.0.0.1',
      port: server.port,
      bodies: scenario.bodies(scenario.kind),
      concurrency: scenario.concurrency,
      connections: 4,
      warmupMs: WARMUP_MS,
      durationMs: SECONDS * 1000,
    };
    const optionsFile = path.join(work, 'load-options.json');
    writeFileSync(optionsFile, JSON.stringify(options));
    const load = pinned(CORES.load, process.execPath, [
      path.join(ROOT, 'dist', 'bench', 'load.js'),
      optionsFile,
    ]);
    const loadOutput = captureOutput(load);
    const exited = new Promise<void>((resolve) => {
      load.once('exit', () => {
        resolve();
      });
    });
    // CPU and Redis commands are counted over the measured window only.
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    const pids = server.pids();
    const cpu0 = pids.map(cpuSeconds);
    const backend0 = cpuSeconds(backendPid);
    const commands0 = redisCommands(redis.port);
    const started = Date.now();
    await exited;
    const elapsed = (Date.now() - started) / 1000;
    const serverCpu = pids.reduce((sum, pid, i) => sum + cpuSeconds(pid) - (cpu0[i] ?? 0), 0);
    const backendCpu = cpuSeconds(backendPid) - backend0;
    const commands = redisCommands(redis.port) - commands0;
    const result = JSON.parse(loadOutput().trim().split('\n').pop() ?? '{}') as LoadResult;
    const expected = result.outcomes[scenario.expect] ?? 0;
    return {
      answersPerSecond: result.completed / (result.durationMs / 1000),
      latencyMs: result.latencyMs,
      serverCpu: serverCpu / elapsed,
      loadCpu: result.cpuSeconds / (result.durationMs / 1000),
      backendCpu:
        scenario.backend === 'redis' || scenario.backend === 'memcache'
          ? backendCpu / elapsed
          : undefined,
      peakRssMiB: pids.reduce((sum, pid) => sum + peakRssMiB(pid), 0),
      unexpected: result.completed - expected,
      outcomes: result.outcomes,
      // info stats counts itself; the window holds one such call.
      redisCommandsPerAnswer:
        scenario.backend === 'redis' ? (commands - 1) / Math.max(1, result.completed) : undefined,
    };
  } finally {
    await stop(server.child);
    for (const pid of server.pids()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

function median<T>(values: readonly T[], key: (v: T) => number): T {
  const sorted = [...values].sort((a, b) => key(a) - key(b));
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (middle === undefined) throw new Error('no values');
  return middle;
}

const f = (n: number | undefined, digits = 2): string =>
  n === undefined ? '-' : n.toFixed(digits);

function table(rows: readonly Row[]): string {
  const head = [
    'scenario',
    'in flight',
    'answers/s',
    'x ceiling',
    'p50 ms',
    'p90 ms',
    'p99 ms',
    'max ms',
    'server CPU',
    'backend CPU',
    'load CPU',
    'redis cmds/answer',
    'RSS MiB',
    'wrong answers',
  ];
  const lines = rows.map(({ scenario, median: m, ratio }) => [
    scenario.name,
    String(scenario.concurrency),
    m.answersPerSecond.toFixed(0),
    ratio === undefined ? '-' : `${ratio.toFixed(2)}x`,
    f(m.latencyMs.p50),
    f(m.latencyMs.p90),
    f(m.latencyMs.p99),
    f(m.latencyMs.max, 1),
    f(m.serverCpu),
    f(m.backendCpu),
    f(m.loadCpu),
    f(m.redisCommandsPerAnswer),
    m.peakRssMiB.toFixed(0),
    String(m.unexpected),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const fmt = (cells: string[]): string =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [fmt(head), fmt(widths.map((w) => '-'.repeat(w))), ...lines.map(fmt)].join('\n');
}

interface Target {
  readonly target: string;
  readonly measured: string;
  readonly isMet: boolean | undefined;
}

function targets(rows: readonly Row[]): Target[] {
  const row = (name: string): Row | undefined => rows.find((r) => r.scenario.name === name);
  const out: Target[] = [];
  const ratio = (name: string, min: number, label: string): void => {
    const r = row(name);
    if (r?.ratio === undefined) return;
    out.push({
      target: `${label}: >= ${min.toFixed(1)}x the ceiling`,
      measured: `${r.ratio.toFixed(2)}x`,
      isMet: r.ratio >= min,
    });
  };
  const p99 = (name: string, max: number, label: string): void => {
    const r = row(name);
    if (r === undefined) return;
    const value = r.median.latencyMs.p99;
    out.push({
      target: `${label}: p99 < ${max} ms at 16 in flight`,
      measured: `${value.toFixed(2)} ms`,
      isMet: value < max,
    });
  };
  ratio(NAMES.redisOne, 1.0, '1. gRPC, Redis, 1 descriptor, 64 in flight');
  ratio(NAMES.memoryOne, 1.2, '2. memory backend, 64 in flight');
  p99(NAMES.memoryOne16, 2, '3. memory');
  p99(NAMES.redisOne16, 3, '3. Redis');
  const cached = row(NAMES.overLimitCached);
  if (cached?.ratio !== undefined) {
    const commands = cached.median.redisCommandsPerAnswer ?? 0;
    out.push({
      target: '4. over limit with the local cache: no Redis round trip, >= 1.2x',
      measured: `${cached.ratio.toFixed(2)}x, ${commands.toFixed(4)} Redis commands per answer`,
      isMet: cached.ratio >= 1.2 && commands < 0.001,
    });
  }
  const w1 = row(NAMES.workers1);
  const w2 = row(NAMES.workers2);
  if (w1 !== undefined && w2 !== undefined) {
    out.push({
      target: '5. WORKERS 1 -> 2 on two cores (reported)',
      measured: `${(w2.median.answersPerSecond / w1.median.answersPerSecond).toFixed(2)}x (${w1.median.answersPerSecond.toFixed(0)} -> ${w2.median.answersPerSecond.toFixed(0)} answers/s)`,
      isMet: undefined,
    });
  }
  return out;
}

async function main(): Promise<void> {
  if (!existsSync(path.join(ROOT, 'dist', 'bench', 'load.js')))
    throw new Error('build first: npm run build');
  const work = mkdtempSync(path.join(tmpdir(), 'rl-bench-'));
  mkdirSync(path.join(work, 'config'));
  writeFileSync(path.join(work, 'config', 'bench.yaml'), CONFIG);
  const redisPort = await freePort();
  const redis = pinned(CORES.redis, 'redis-server', [
    '--port',
    String(redisPort),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
  ]);
  const redisOutput = captureOutput(redis);
  const scenarios = SCENARIOS.filter(
    (s) => ONLY === undefined || s.server === 'noop' || s.name.includes(ONLY),
  );
  const memcached = scenarios.some((s) => s.backend === 'memcache')
    ? await startMemcached(CORES.redis)
    : undefined;
  try {
    await waitFor(
      () => {
        execFileSync('redis-cli', ['-p', String(redisPort), 'ping'], { stdio: 'ignore' });
        return true;
      },
      () => `redis-server (is it installed?):\n${redisOutput()}`,
    );
    process.stdout.write(
      `${SECONDS} s per run after ${WARMUP_MS / 1000} s of warm-up, ${ROUNDS} rounds round-robin, medians; ` +
        (HAS_TASKSET
          ? `server on core ${CORES.server} (${CORES.serverPair} for the two-core rows), load generator on ${CORES.load}, redis and memcached on ${CORES.redis}\n`
          : 'taskset missing: nothing pinned\n'),
    );
    const measured = new Map<string, Measurement[]>();
    const ratios = new Map<string, number[]>();
    for (let round = 1; round <= ROUNDS; round++) {
      const thisRound = new Map<string, Measurement>();
      for (const scenario of scenarios) {
        execFileSync('redis-cli', ['-p', String(redisPort), 'flushall'], { stdio: 'ignore' });
        const m = await measure(
          scenario,
          { redis: { port: redisPort, pid: redis.pid }, memcached },
          work,
        );
        thisRound.set(scenario.name, m);
        measured.set(scenario.name, [...(measured.get(scenario.name) ?? []), m]);
        const ceiling =
          scenario.ceiling === undefined ? undefined : thisRound.get(scenario.ceiling);
        const ratio =
          ceiling === undefined ? undefined : m.answersPerSecond / ceiling.answersPerSecond;
        if (ratio !== undefined)
          ratios.set(scenario.name, [...(ratios.get(scenario.name) ?? []), ratio]);
        process.stdout.write(
          `round ${round}/${ROUNDS} ${scenario.name} @${scenario.concurrency}: ${m.answersPerSecond.toFixed(0)}/s` +
            `${ratio === undefined ? '' : ` (${ratio.toFixed(2)}x)`}, p99 ${m.latencyMs.p99.toFixed(2)} ms` +
            `${m.unexpected > 0 ? `, ${m.unexpected} answers other than ${scenario.expect}: ${JSON.stringify(m.outcomes)}` : ''}\n`,
        );
      }
    }
    const rows: Row[] = scenarios.map((scenario) => {
      const rounds = measured.get(scenario.name) ?? [];
      const r = ratios.get(scenario.name);
      return {
        scenario,
        rounds,
        median: median(rounds, (m) => m.answersPerSecond),
        ratio: r === undefined ? undefined : median(r, (x) => x),
      };
    });
    process.stdout.write(`\n${table(rows)}\n\n`);
    const results = targets(rows);
    for (const t of results)
      process.stdout.write(
        `${t.isMet === undefined ? 'info' : t.isMet ? 'met ' : 'GAP '}  ${t.target}: ${t.measured}\n`,
      );
    const outDir = path.join(ROOT, 'bench-results');
    mkdirSync(outDir, { recursive: true });
    const file = path.join(outDir, `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(
      file,
      JSON.stringify(
        {
          date: new Date().toISOString(),
          node: process.version,
          cpu:
            readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/)?.[1] ?? 'unknown',
          seconds: SECONDS,
          rounds: ROUNDS,
          cores: CORES,
          rows: rows.map((r) => ({
            scenario: r.scenario.name,
            concurrency: r.scenario.concurrency,
            ratio: r.ratio,
            median: r.median,
            rounds: r.rounds,
          })),
          targets: results,
        },
        null,
        2,
      ),
    );
    process.stdout.write(`\nresults: ${path.relative(process.cwd(), file)}\n`);
  } finally {
    await stop(redis);
    if (memcached !== undefined) await stop(memcached.child);
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
