// `npm run bench`: the built service under load next to two ceilings, a no-op grpc-js server
// and a bare node:http2 server answering a constant (the limit for any Node gRPC server), every
// figure also a ratio to both measured in the same round. Scenarios run round-robin, so a
// slow spell of a shared machine lands on every scenario alike; the table shows medians.
// Settings: BENCH_SECONDS (5), BENCH_ROUNDS (3), BENCH_ONLY (name fragments split by |, or
// =name for one exact name; the ceilings, and the single-Redis baselines of chosen Redis modes,
// always run), BENCH_SERVER_NODE_OPTIONS (NODE_OPTIONS for the service under test only),
// BENCH_RLQS_INTERVAL_MS (how often the quota streams beside the calls report, 100).
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import path from 'node:path';
import type { LoadResult } from './load';
import {
  cpuPerAnswer,
  curves,
  median,
  modeRatios,
  table,
  workers,
  type Measurement,
  type Row,
} from './report';
import { targets } from './targets';
import {
  HAS_TASKSET,
  serverCores,
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
import { gcMsInWindow, gcProbe } from './gc-window';
import { startDeployments, type Deployment } from './backends';
import { CURVES, workerScenarios } from './curves';
import type { MemoryKeysResult } from './memory-keys';
import { writeScaleConfig } from './config-scale';
import { CONFIG_SCALE, scaleTable } from './config-scale-report';
import { runConfigScale, type ScaleLoad } from './config-scale-run';
import {
  RLQS_DIRECTORY,
  RLQS_ROWS,
  rlqsLoadNote,
  rlqsLoadOptions,
  startRlqsStreams,
  writeRlqsConfig,
  type RlqsStreamsBeside,
} from './rlqs-rows';
import type { RlqsShape } from './rlqs-load';
import { beforeTwins } from './before-twins';
import {
  CONFIG,
  NAMES,
  SCALE_DIRECTORY,
  SCALE_RULES,
  SCALE_SIZES,
  SCENARIOS,
  TOKEN_BUCKET_CONFIG,
  isDeployed,
  loadOptions,
  type Scenario,
} from './scenarios';

const ROOT = path.resolve(__dirname, '..', '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? '5');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '3');
const ONLY = process.env.BENCH_ONLY;
const WARMUP_MS = 1500;
/**
 * How far into the warm-up the servers are settled (see measure()). A full collection in the
 * first moments of load, while V8 is still collecting type feedback for the code it runs,
 * left the service taking V8's slow runtime path for every object process.nextTick builds,
 * for the rest of the process's life (about 12% of its CPU); the same collection 300 ms or more
 * into the load, or any natural one later, does not.
 */
const SETTLE_AFTER_MS = 500;
/** How long a scenario's fill calls and warm-up may take before the bench gives up. */
const FILL_TIMEOUT_MS = 600_000;
const STOP_GRACE_MS = 5000;
const PORT_ATTEMPTS = 3;
// Another built checkout: each chosen service row runs again on its service right after this
// one's, in every round, and is compared with it (a change's before and after in one run).
const BEFORE = process.env.BENCH_BEFORE;
// With BENCH_BEFORE: each row and its [before] twin run at the same time on the service's core,
// a load generator each, so that whatever else takes the machine takes both alike.
const SIDE_BY_SIDE = process.env.BENCH_SIDE_BY_SIDE === '1';
// Node flags NODE_OPTIONS refuses, such as --cpu-prof, for the service alone.
const SERVER_NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? '')
  .split(' ')
  .filter((a) => a !== '');
const CORES = coreLayout();
// The configuration-at-scale section: seconds of load while the configuration is loaded again.
const SCALE_SECONDS = Number(process.env.BENCH_SCALE_SECONDS ?? String(SECONDS));
const SCALE_REWRITE_EVERY_MS = 3000;
const WORKERS = process.env.BENCH_WORKERS ?? '1,2';
const ALL: readonly Scenario[] = [
  ...SCENARIOS,
  ...CURVES,
  ...workerScenarios(WORKERS),
  ...RLQS_ROWS,
];

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
    RUNTIME_APPDIRECTORY: redis?.backendType === 'memcache' ? 'config-memcache' : 'config',
    RUNTIME_WATCH_ROOT: 'false',
    USE_STATSD: 'false',
    STATS_FLUSH_INTERVAL: '1h',
    LOG_LEVEL: 'error',
    WORKERS: String(scenario.workers),
    ...scenario.env,
  };
}

interface Started {
  child: ChildProcess;
  port: number;
  pids: () => number[];
}

/**
 * Starts the scenario's server, choosing its ports again when one was taken between being
 * found free and being bound (an outgoing connection can take it as its own port).
 */
async function startServer(
  scenario: Scenario,
  redis: Deployment | undefined,
  work: string,
  otlpPort: number,
): Promise<Started> {
  for (let attempt = 1; ; attempt++) {
    const started = await startOnce(scenario, redis, work, otlpPort);
    if (started !== 'port taken' || attempt === PORT_ATTEMPTS) {
      if (started === 'port taken')
        throw new Error(`${scenario.name}: ports taken ${attempt} times`);
      return started;
    }
  }
}

async function startOnce(
  scenario: Scenario,
  redis: Deployment | undefined,
  work: string,
  otlpPort: number,
): Promise<Started | 'port taken'> {
  const ports = { http: await freePort(), grpc: await freePort(), debug: await freePort() };
  const port = scenario.kind === 'http' ? ports.http : ports.grpc;
  const cores = scenario.name.includes('WORKERS=') ? serverCores(scenario.workers) : CORES.server;
  const ceilingScript = { noop: 'noop-server.js', h2limit: 'h2-limit-server.js', service: '' };
  const probe = gcProbe(ROOT, gcDir(work));
  const child =
    scenario.server !== 'service'
      ? pinned(
          cores,
          process.execPath,
          [
            ...probe.args,
            path.join(ROOT, 'dist', 'bench', ceilingScript[scenario.server]),
            String(port),
          ],
          { ...process.env, ...probe.env },
        )
      : pinned(
          cores,
          process.execPath,
          [
            ...probe.args,
            ...SERVER_NODE_ARGS,
            path.join(scenario.serviceRoot ?? ROOT, 'bin', 'ratelimit.js'),
          ],
          { ...serviceEnv(scenario, ports, work, redis, otlpPort), ...probe.env },
        );
  const output = captureOutput(child);
  // taskset execs the command, so the child's id is the server's (or the supervisor's).
  const pids = (): number[] =>
    scenario.workers > 1 ? childrenOf(child.pid) : child.pid === undefined ? [] : [child.pid];
  const hasExited = (): boolean => child.exitCode !== null || child.signalCode !== null;
  await waitFor(
    async () => hasExited() || ((await canConnect(port)) && pids().length === scenario.workers),
    () => `${scenario.name} to listen:\n${output()}`,
  );
  if (hasExited() && output().includes('EADDRINUSE')) return 'port taken';
  if (hasExited()) throw new Error(`${scenario.name} exited:\n${output()}`);
  return { child, port, pids };
}

/** Where the servers' GC probes write (bench/gc-probe.ts). */
function gcDir(work: string): string {
  return path.join(work, 'gc');
}

let loadRuns = 0;

/** Asks each server process's GC probe for a full collection. */
function collectInFull(pids: readonly (number | undefined)[]): void {
  for (const pid of pids) {
    if (pid === undefined) continue;
    try {
      process.kill(pid, 'SIGUSR2');
    } catch {
      // gone already: the run reports it
    }
  }
}

/**
 * One run of `scenario`. `isShared`: another run counts in the same backend at the same time,
 * so the backend's CPU and commands are not this run's to report.
 */
async function measure(
  scenario: Scenario,
  redis: Deployment | undefined,
  work: string,
  otlpPort: number,
  isShared = false,
  allStarted: () => Promise<void> = () => Promise.resolve(),
): Promise<Measurement> {
  const server = await startServer(scenario, redis, work, otlpPort);
  // Servers that share the core start their load together, so the windows are the same.
  await allStarted();
  // A hanging backend is neither measured nor asked for its command count.
  const paused = scenario.pauseBackend === true ? (redis?.dataPids() ?? []) : [];
  const signal = (name: NodeJS.Signals): void => {
    for (const pid of paused) if (pid !== undefined) process.kill(pid, name);
  };
  const counted = paused.length > 0 || isShared ? undefined : redis;
  let measured: Measurement;
  let window: { pids: number[]; started: number; ended: number };
  let beside: RlqsStreamsBeside | undefined;
  signal('SIGSTOP');
  try {
    const rlqs = scenario.rlqsLoad;
    const options =
      rlqs === undefined
        ? loadOptions(scenario, server.port, WARMUP_MS, SECONDS * 1000)
        : rlqsLoadOptions(rlqs, server.port, WARMUP_MS, SECONDS * 1000);
    const optionsFile = path.join(work, `load-options-${++loadRuns}.json`);
    writeFileSync(optionsFile, JSON.stringify(options));
    const streams = scenario.rlqsStreams;
    const openStreams = (shape: RlqsShape): Promise<RlqsStreamsBeside> =>
      startRlqsStreams(ROOT, CORES.load, work, server.port, shape);
    if (streams?.opened === 'first') beside = await openStreams(streams.shape);
    const load = pinned(CORES.load, process.execPath, [
      path.join(ROOT, 'dist', 'bench', rlqs === undefined ? 'load.js' : 'rlqs-load.js'),
      optionsFile,
    ]);
    const loadOutput = captureOutput(load);
    const exited = new Promise<void>((resolve) => {
      load.once('exit', () => {
        resolve();
      });
    });
    // Every server process collects its garbage in full early in the warm-up, so that each is
    // measured in the state a long-running one is in (bench/gc-probe.ts).
    await waitFor(
      () => loadOutput().includes('warming\n'),
      () => `${scenario.name}: the load generator to start its warm-up:\n${loadOutput()}`,
      FILL_TIMEOUT_MS,
    );
    if (streams?.opened === 'under load') {
      // The load holds its warm-up until every stream watches: opening 100 streams beside the
      // load may take longer than a warm-up.
      beside = await openStreams(streams.shape);
      load.kill('SIGUSR2');
    }
    await delay(SETTLE_AFTER_MS);
    collectInFull([...server.pids(), ...(scenario.workers > 1 ? [server.child.pid] : [])]);
    // CPU and Redis commands are counted over the measured window only, which the load
    // generator announces (after its fill calls, if any, and the warm-up).
    await waitFor(
      () => loadOutput().includes('measuring\n'),
      () => `${scenario.name}: the load generator to start measuring:\n${loadOutput()}`,
      FILL_TIMEOUT_MS,
    );
    const pids = server.pids();
    const cpu0 = pids.map(cpuSeconds);
    // With WORKERS above 1 the child is the supervisor, which accepts and hands out connections.
    const supervisor = scenario.workers > 1 ? server.child.pid : undefined;
    const supervisor0 = cpuSeconds(supervisor);
    const backendCpuNow = (): number =>
      (counted?.dataPids() ?? []).reduce((sum: number, pid) => sum + cpuSeconds(pid), 0);
    const backend0 = backendCpuNow();
    const commands0 = counted?.commands() ?? 0;
    const started = Date.now();
    await exited;
    const ended = Date.now();
    const elapsed = (ended - started) / 1000;
    window = { pids: supervisor === undefined ? pids : [...pids, supervisor], started, ended };
    const supervisorCpu = cpuSeconds(supervisor) - supervisor0;
    const serverCpu =
      pids.reduce((sum, pid, i) => sum + cpuSeconds(pid) - (cpu0[i] ?? 0), 0) + supervisorCpu;
    const backendCpu = backendCpuNow() - backend0;
    const commands = (counted?.commands() ?? 0) - commands0;
    const result = JSON.parse(loadOutput().trim().split('\n').pop() ?? '{}') as LoadResult;
    const besideSummary = await beside?.stop();
    process.stdout.write(
      rlqsLoadNote(scenario, result) +
        (besideSummary === undefined ? '' : (beside?.note(besideSummary) ?? '')),
    );
    // A quota stream beside the load that ended counts as a wrong answer.
    const expected =
      scenario.expect
        .split('|')
        .reduce((sum, outcome) => sum + (result.outcomes[outcome] ?? 0), 0) -
      (besideSummary?.streamsEnded ?? 0);
    measured = {
      answersPerSecond: result.completed / (result.durationMs / 1000),
      latencyMs: result.latencyMs,
      serverCpu: serverCpu / elapsed,
      supervisorCpu: supervisor === undefined ? undefined : supervisorCpu / elapsed,
      loadCpu: result.cpuSeconds / (result.durationMs / 1000),
      backendCpu: counted === undefined ? undefined : backendCpu / elapsed,
      peakRssMiB: pids.reduce((sum, pid) => sum + peakRssMiB(pid), 0),
      unexpected: result.completed - expected,
      outcomes: result.outcomes,
      redisCommandsPerAnswer:
        counted?.backendType === 'redis' ? commands / Math.max(1, result.completed) : undefined,
      gcShare: undefined,
    };
  } finally {
    await beside?.stop().catch(() => undefined);
    signal('SIGCONT');
    // SIGTERM lets the service drain and exit, which writes a --cpu-prof profile
    // (BENCH_SERVER_NODE_OPTIONS); SIGKILL follows if it is still there.
    await Promise.race([stop(server.child, 'SIGTERM'), delay(STOP_GRACE_MS)]);
    await stop(server.child);
    for (const pid of server.pids()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  const gcMs = gcMsInWindow(gcDir(work), window.pids, window.started, window.ended);
  const seconds = (window.ended - window.started) / 1000;
  return { ...measured, gcShare: gcMs === undefined ? undefined : gcMs / 1000 / seconds };
}

/** One line per run, as it happens. */
function progress(round: number, scenario: Scenario, m: Measurement, r: RoundRatios): void {
  const ratios = [
    r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}x grpc-js`,
    r.limitRatio === undefined ? '' : `${r.limitRatio.toFixed(2)} of the limit`,
  ].filter((x) => x !== '');
  process.stdout.write(
    `round ${round}/${ROUNDS} ${scenario.name} @${scenario.concurrency}: ${m.answersPerSecond.toFixed(0)}/s` +
      `${ratios.length === 0 ? '' : ` (${ratios.join(', ')})`}, p99 ${m.latencyMs.p99.toFixed(2)} ms` +
      `${m.unexpected > 0 ? `, ${m.unexpected} answers other than ${scenario.expect}: ${JSON.stringify(m.outcomes)}` : ''}\n`,
  );
}

interface RoundRatios {
  ratio: number | undefined;
  limitRatio: number | undefined;
  limitCostRatio: number | undefined;
  baselineRatio: number | undefined;
}

/**
 * This round's ratios of `m`. Run at the same time as `partner`, a server had half its core:
 * only the ratio to that partner means anything then.
 */
function roundRatios(
  scenario: Scenario,
  m: Measurement,
  thisRound: ReadonlyMap<string, Measurement>,
  partner: string | undefined,
): RoundRatios {
  const other = (name: string | undefined): Measurement | undefined =>
    name === undefined || (partner !== undefined && name !== partner)
      ? undefined
      : thisRound.get(name);
  const ratioTo = (name: string | undefined): number | undefined => {
    const o = other(name);
    return o === undefined ? undefined : m.answersPerSecond / o.answersPerSecond;
  };
  const limit = other(scenario.limit);
  return {
    ratio: ratioTo(scenario.ceiling),
    limitRatio: ratioTo(scenario.limit),
    limitCostRatio: limit === undefined ? undefined : cpuPerAnswer(limit) / cpuPerAnswer(m),
    // A Redis mode runs after its single-Redis baseline in every round: same spell of load.
    baselineRatio: ratioTo(scenario.baseline),
  };
}

/** A wait that ends once `parties` callers have called it. */
function barrier(parties: number): () => Promise<void> {
  let arrived = 0;
  let release: () => void = () => undefined;
  const all = new Promise<void>((resolve) => {
    release = resolve;
  });
  return () => {
    arrived += 1;
    if (arrived === parties) release();
    return all;
  };
}

/**
 * The runs of one round in order: alone, or a row with the one it is `beside` (those that
 * pause the backend or fill it first still run one after the other).
 */
function runGroups(scenarios: readonly Scenario[]): Scenario[][] {
  const groups: Scenario[][] = [];
  for (const scenario of scenarios) {
    const last = groups.at(-1);
    const isPartner =
      scenario.beside !== undefined &&
      scenario.pauseBackend !== true &&
      // Fill calls end at different moments: the two windows would not be the same.
      scenario.fill === undefined &&
      last?.length === 1 &&
      last[0]?.name === scenario.beside;
    if (isPartner) last.push(scenario);
    else groups.push([scenario]);
  }
  return groups;
}

/**
 * Every scenario once per round, round-robin. Ratios are taken within a round: to the grpc-js
 * ceiling, to the node:http2 limit and, for a Redis mode, to its single-Redis baseline.
 */
async function runRounds(
  scenarios: readonly Scenario[],
  deploymentOf: (s: Scenario) => Deployment | undefined,
  work: string,
  otlpPort: number,
): Promise<Row[]> {
  const measured = new Map<string, Measurement[]>();
  const ratios = new Map<string, RoundRatios[]>();
  for (let round = 1; round <= ROUNDS; round++) {
    const thisRound = new Map<string, Measurement>();
    for (const group of runGroups(scenarios)) {
      const isShared = group.length > 1;
      for (const scenario of group) deploymentOf(scenario)?.flush();
      const allStarted = barrier(group.length);
      const results = await Promise.all(
        group.map((scenario) =>
          measure(scenario, deploymentOf(scenario), work, otlpPort, isShared, allStarted),
        ),
      );
      for (const [i, scenario] of group.entries()) {
        const m = results[i];
        if (m !== undefined) thisRound.set(scenario.name, m);
      }
      group.forEach((scenario, i) => {
        const m = results[i];
        if (m === undefined) return;
        measured.set(scenario.name, [...(measured.get(scenario.name) ?? []), m]);
        const partner = isShared ? group.find((o) => o !== scenario)?.name : undefined;
        const r = roundRatios(scenario, m, thisRound, partner);
        ratios.set(scenario.name, [...(ratios.get(scenario.name) ?? []), r]);
        progress(round, scenario, m, r);
      });
    }
  }
  return scenarios.map((scenario) => {
    const rounds = measured.get(scenario.name) ?? [];
    const own = ratios.get(scenario.name) ?? [];
    const medianOf = (key: keyof RoundRatios): number | undefined => {
      const values = own.flatMap((r) => (r[key] === undefined ? [] : [r[key]]));
      return values.length === 0 ? undefined : median(values, (x) => x);
    };
    return {
      scenario,
      rounds,
      median: median(rounds, (m) => m.answersPerSecond),
      ratio: medianOf('ratio'),
      limitRatio: medianOf('limitRatio'),
      limitCostRatio: medianOf('limitCostRatio'),
      baselineRatio: medianOf('baselineRatio'),
    };
  });
}

/** With BENCH_BEFORE, each service row followed by its twin on the other checkout's service. */
function withBefore(scenarios: readonly Scenario[]): Scenario[] {
  if (SIDE_BY_SIDE && BEFORE === undefined)
    throw new Error('BENCH_SIDE_BY_SIDE=1 compares with BENCH_BEFORE, which is not set');
  if (BEFORE === undefined) return [...scenarios];
  if (!existsSync(path.join(BEFORE, 'dist', 'src', 'main.js')))
    throw new Error(`BENCH_BEFORE=${BEFORE}: no built service there (run npm run build in it)`);
  return beforeTwins(scenarios, BEFORE, SIDE_BY_SIDE);
}

/** The memory store at a million keys, in-process on the server's core (bench/memory-keys.ts). */
async function runMemoryKeys(): Promise<MemoryKeysResult> {
  const child = pinned(CORES.server, process.execPath, [
    '--expose-gc',
    path.join(ROOT, 'dist', 'bench', 'memory-keys.js'),
  ]);
  const output = captureOutput(child);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`memory-keys failed:\n${output()}`);
  const result = JSON.parse(output().trim().split('\n').pop() ?? '{}') as MemoryKeysResult;
  const k = (n: number): string => `${(n / 1000).toFixed(0)}k/s`;
  process.stdout.write(
    `memory store in-process: ${k(result.incrementsPerSecondSmall)} increments at 10,000 keys, ` +
      `${k(result.incrementsPerSecondLarge)} at ${result.keys.toLocaleString('en')} keys (RSS ${result.rssMiBLarge.toFixed(0)} MiB); ` +
      `one synchronous sweep pass ${result.fullPassMs.toFixed(0)} ms, the sliced sweep's longest pause ` +
      `${result.longestSweepPauseMs.toFixed(1)} ms CPU (${result.longestSweepGapWallMs.toFixed(1)} ms wall) once warm, ` +
      `${result.firstSweepPauseMs.toFixed(1)} ms in the process's first sweep\n\n`,
  );
  return result;
}

/** The configuration-at-scale section (bench/config-scale-run.ts), one service at a time. */
async function runScale(work: string): Promise<ScaleLoad[]> {
  const options = {
    work,
    cores: CORES,
    trafficSeconds: SCALE_SECONDS,
    rewriteEveryMs: SCALE_REWRITE_EVERY_MS,
  };
  const loads = await runConfigScale(options, SCALE_SIZES);
  process.stdout.write(`${CONFIG_SCALE}:\n\n${scaleTable(loads)}`);
  return loads;
}

async function main(): Promise<void> {
  if (!existsSync(path.join(ROOT, 'dist', 'bench', 'load.js')))
    throw new Error('build first: npm run build');
  const work = mkdtempSync(path.join(tmpdir(), 'rl-bench-'));
  for (const dir of ['config', 'config-memcache']) {
    mkdirSync(path.join(work, dir));
    writeFileSync(path.join(work, dir, 'bench.yaml'), CONFIG);
  }
  writeFileSync(path.join(work, 'config', 'bench-token-bucket.yaml'), TOKEN_BUCKET_CONFIG);
  mkdirSync(gcDir(work));
  const isNamed = (name: string): boolean =>
    ONLY === undefined ||
    ONLY.split('|').some((f) => (f.startsWith('=') ? name === f.slice(1) : name.includes(f)));
  const chosen = (s: Scenario): boolean =>
    // Side by side, nothing is compared with the ceilings: they are left out.
    s.server !== 'service' ? !SIDE_BY_SIDE : isNamed(s.name);
  // A chosen Redis mode brings its single-Redis baseline along.
  const scenarios = withBefore(
    ALL.filter((s) => chosen(s) || ALL.some((o) => chosen(o) && o.baseline === s.name)),
  );
  if (scenarios.some((s) => s.env.RUNTIME_APPDIRECTORY === SCALE_DIRECTORY))
    writeScaleConfig(path.join(work, SCALE_DIRECTORY), SCALE_RULES);
  if (scenarios.some((s) => s.env.RUNTIME_APPDIRECTORY === RLQS_DIRECTORY)) writeRlqsConfig(work);
  // The section measures one service at a time, so it has no [before] twin.
  const isScaleChosen = !SIDE_BY_SIDE && isNamed(CONFIG_SCALE);
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
        (SIDE_BY_SIDE ? 'each row and its [before] twin side by side; ' : '') +
        (HAS_TASKSET
          ? `server on core ${CORES.server} (${serverCores(2)} for the WORKERS rows with 2), load generator on ${CORES.load}, redis and memcached on ${CORES.redis}\n`
          : 'taskset missing: nothing pinned\n'),
    );
    const rows = await runRounds(scenarios, deploymentOf, work, otlpPort);
    process.stdout.write(`\n${table(rows)}\n\n${modeRatios(rows)}${curves(rows)}${workers(rows)}`);
    const memoryKeys = scenarios.some((s) => s.name === NAMES.memoryMillion)
      ? await runMemoryKeys()
      : undefined;
    const scaleLoads = isScaleChosen ? await runScale(work) : [];
    // Side by side a service has half its core: its ratios to the ceilings are not measured.
    const results = SIDE_BY_SIDE ? [] : targets(rows, memoryKeys, scaleLoads);
    if (SIDE_BY_SIDE)
      process.stdout.write('targets: not judged side by side (each service had half a core)\n');
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
            limitRatio: r.limitRatio,
            limitCostRatio: r.limitCostRatio,
            baselineRatio: r.baselineRatio,
            median: r.median,
            rounds: r.rounds,
          })),
          memoryKeys,
          configScale: scaleLoads,
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
