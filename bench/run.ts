// `npm run bench`: the built service under load next to a no-op grpc-js server, every figure
// also a ratio to that ceiling measured in the same round. Scenarios run round-robin, so a
// slow spell of a shared machine lands on every scenario alike; the table shows medians.
// Settings: BENCH_SECONDS (5), BENCH_ROUNDS (3), BENCH_ONLY (a name fragment; the ceilings,
// and the single-Redis baselines of chosen Redis modes, always run), BENCH_SERVER_NODE_OPTIONS
// (NODE_OPTIONS for the service under test only).
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LoadOptions, LoadResult } from './load';
import { median, modeRatios, table, targets, type Measurement, type Row } from './report';
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
import { startDeployments, type Deployment } from './backends';
import { CONFIG, SCENARIOS, isDeployed, type Scenario } from './scenarios';

const ROOT = path.resolve(__dirname, '..', '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? '5');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '3');
const ONLY = process.env.BENCH_ONLY;
const WARMUP_MS = 1000;
const CORES = coreLayout();

function serviceEnv(
  scenario: Scenario,
  ports: Record<string, number>,
  work: string,
  redis: Deployment | undefined,
  otlpPort: number,
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
    BACKEND_TYPE: redis?.backendType ?? 'memory',
    ...redis?.env,
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlpPort}`,
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

async function startServer(
  scenario: Scenario,
  redis: Deployment | undefined,
  work: string,
  otlpPort: number,
): Promise<{ child: ChildProcess; port: number; pids: () => number[] }> {
  const ports = { http: await freePort(), grpc: await freePort(), debug: await freePort() };
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
          serviceEnv(scenario, ports, work, redis, otlpPort),
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

async function measure(
  scenario: Scenario,
  redis: Deployment | undefined,
  work: string,
  otlpPort: number,
): Promise<Measurement> {
  const server = await startServer(scenario, redis, work, otlpPort);
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
    const backendCpuNow = (): number =>
      (redis?.dataPids() ?? []).reduce((sum: number, pid) => sum + cpuSeconds(pid), 0);
    const backend0 = backendCpuNow();
    const commands0 = redis?.commands() ?? 0;
    const started = Date.now();
    await exited;
    const elapsed = (Date.now() - started) / 1000;
    const serverCpu = pids.reduce((sum, pid, i) => sum + cpuSeconds(pid) - (cpu0[i] ?? 0), 0);
    const backendCpu = backendCpuNow() - backend0;
    const commands = (redis?.commands() ?? 0) - commands0;
    const result = JSON.parse(loadOutput().trim().split('\n').pop() ?? '{}') as LoadResult;
    const expected = result.outcomes[scenario.expect] ?? 0;
    return {
      answersPerSecond: result.completed / (result.durationMs / 1000),
      latencyMs: result.latencyMs,
      serverCpu: serverCpu / elapsed,
      loadCpu: result.cpuSeconds / (result.durationMs / 1000),
      backendCpu: redis === undefined ? undefined : backendCpu / elapsed,
      peakRssMiB: pids.reduce((sum, pid) => sum + peakRssMiB(pid), 0),
      unexpected: result.completed - expected,
      outcomes: result.outcomes,
      redisCommandsPerAnswer:
        redis?.backendType === 'redis' ? commands / Math.max(1, result.completed) : undefined,
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

async function main(): Promise<void> {
  if (!existsSync(path.join(ROOT, 'dist', 'bench', 'load.js')))
    throw new Error('build first: npm run build');
  const work = mkdtempSync(path.join(tmpdir(), 'rl-bench-'));
  mkdirSync(path.join(work, 'config'));
  writeFileSync(path.join(work, 'config', 'bench.yaml'), CONFIG);
  const chosen = (s: Scenario): boolean =>
    ONLY === undefined || s.server === 'noop' || s.name.includes(ONLY);
  // A chosen Redis mode brings its single-Redis baseline along.
  const scenarios = SCENARIOS.filter(
    (s) => chosen(s) || SCENARIOS.some((o) => chosen(o) && o.baseline === s.name),
  );
  const modes = new Set(scenarios.flatMap((s) => (isDeployed(s.backend) ? [s.backend] : [])));
  const deployments = await startDeployments(modes, CORES.redis, work);
  const deploymentOf = (s: Scenario): Deployment | undefined =>
    isDeployed(s.backend) ? deployments.get(s.backend) : undefined;
  // The tracing rows export to a sink that accepts and drops, so the export cost is measured.
  const otlpPort = scenarios.some((s) => s.env.TRACING_ENABLED === 'true') ? await freePort() : 0;
  const otlpSink =
    otlpPort === 0
      ? undefined
      : pinned(CORES.redis, process.execPath, [
          path.join(ROOT, 'dist', 'bench', 'otlp-sink.js'),
          String(otlpPort),
        ]);
  try {
    process.stdout.write(
      `${SECONDS} s per run after ${WARMUP_MS / 1000} s of warm-up, ${ROUNDS} rounds round-robin, medians; ` +
        (HAS_TASKSET
          ? `server on core ${CORES.server} (${CORES.serverPair} for the two-core rows), load generator on ${CORES.load}, redis and memcached on ${CORES.redis}\n`
          : 'taskset missing: nothing pinned\n'),
    );
    const measured = new Map<string, Measurement[]>();
    const ratios = new Map<string, number[]>();
    const baselineRatios = new Map<string, number[]>();
    for (let round = 1; round <= ROUNDS; round++) {
      const thisRound = new Map<string, Measurement>();
      for (const scenario of scenarios) {
        for (const d of deployments.values()) d.flush();
        const m = await measure(scenario, deploymentOf(scenario), work, otlpPort);
        thisRound.set(scenario.name, m);
        measured.set(scenario.name, [...(measured.get(scenario.name) ?? []), m]);
        const ceiling =
          scenario.ceiling === undefined ? undefined : thisRound.get(scenario.ceiling);
        const ratio =
          ceiling === undefined ? undefined : m.answersPerSecond / ceiling.answersPerSecond;
        if (ratio !== undefined)
          ratios.set(scenario.name, [...(ratios.get(scenario.name) ?? []), ratio]);
        // A Redis mode runs after its single-Redis baseline in every round: same spell of load.
        const baseline =
          scenario.baseline === undefined ? undefined : thisRound.get(scenario.baseline);
        if (baseline !== undefined) {
          const list = baselineRatios.get(scenario.name) ?? [];
          baselineRatios.set(scenario.name, [
            ...list,
            m.answersPerSecond / baseline.answersPerSecond,
          ]);
        }
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
      const b = baselineRatios.get(scenario.name);
      return {
        scenario,
        rounds,
        median: median(rounds, (m) => m.answersPerSecond),
        ratio: r === undefined ? undefined : median(r, (x) => x),
        baselineRatio: b === undefined ? undefined : median(b, (x) => x),
      };
    });
    process.stdout.write(`\n${table(rows)}\n\n${modeRatios(rows)}`);
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
            baselineRatio: r.baselineRatio,
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
    await Promise.all([...deployments.values()].map((d) => d.stop()));
    if (otlpSink !== undefined) await stop(otlpSink);
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
