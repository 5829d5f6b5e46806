// The configuration at scale: start to first answer and memory for 1k, 10k and 110k rules, and the
// longest answer while 110k rules are loaded again under load, from files and over xDS.
import type { ChildProcess } from 'node:child_process';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { SCALE_DOMAIN, scaleConfigYaml, writeScaleConfig, type ScaleConfig } from './config-scale';
import { RawGrpcConnection } from './h2-raw';
import type { LoadOptions, LoadResult } from './load';
import { loopWorst, type LoopSecond } from './loop-probe';
import {
  canConnect,
  captureOutput,
  freePort,
  pinned,
  stop,
  waitFor,
  type CoreLayout,
} from './processes';
import { body } from './scenarios';

const ROOT = path.resolve(__dirname, '..', '..');
const RLS_PATH = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';
/** How long a service may take to answer its first call before the bench gives up. */
const START_TIMEOUT_MS = 300_000;

/** One load of a configuration of `rules` rules, from files or over xDS. */
export interface ScaleLoad {
  readonly source: 'file' | 'xds';
  readonly rules: number;
  /** From starting the process to the first answer of the last rule configured. */
  readonly firstAnswerMs: number;
  readonly rssAfterLoadMiB: number;
  /** Set for the rows that go on under load while the configuration is loaded again. */
  readonly reload?: ScaleReload;
}

export interface ScaleReload {
  readonly seconds: number;
  readonly longestAnswerMs: number;
  readonly p99Ms: number;
  readonly answersPerSecond: number;
  /** Loads of the new configuration that finished in the window. */
  readonly reloads: number;
  /** xDS: from the simulator publishing the last version to its ACK. */
  readonly ackMs: number | undefined;
  readonly rssAfterMiB: number;
  /** The longest stretch of the main thread's own CPU between two turns (bench/loop-probe.ts). */
  readonly longestBusyMs: number;
  /** The longest wall-clock time between two turns of the service's event loop. */
  readonly longestGapMs: number;
}

export interface ScaleOptions {
  readonly work: string;
  readonly cores: CoreLayout;
  /** Seconds of load, with the configuration written again every `rewriteEveryMs`. */
  readonly trafficSeconds: number;
  readonly rewriteEveryMs: number;
}

/** Resident memory of a process now, in MiB. */
export function rssMiB(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? 0 : Number(match[1]) / 1024;
  } catch {
    return 0;
  }
}

/** A gRPC call body for one descriptor of the generated domain. */
const callOf = (key: string, value: string): string => body('grpc', [[[key, value]]], SCALE_DOMAIN);

/** Calls until the service answers OK for `value`; the time that took from `since`. */
async function firstAnswer(port: number, call: string, since: number): Promise<number> {
  const message = Buffer.from(call, 'base64');
  for (;;) {
    if (Date.now() - since > START_TIMEOUT_MS) throw new Error('no answer from the service');
    if (await canConnect(port)) {
      const connection = new RawGrpcConnection('127.0.0.1', port, RLS_PATH);
      const outcome = await new Promise<string>((resolve) => {
        connection.call(message, resolve);
      });
      connection.close();
      if (outcome === 'OK') return Date.now() - since;
    }
    await delay(10);
  }
}

interface Service {
  readonly child: ChildProcess;
  readonly grpc: number;
  readonly output: () => string;
  /** Where its loop probe writes. */
  readonly loopFile: string;
}

/** A measured window of load: the generator's result and when the window was. */
interface Window {
  readonly result: LoadResult;
  readonly from: number;
  readonly to: number;
}

let services = 0;

async function startService(
  options: ScaleOptions,
  env: Record<string, string>,
): Promise<{ service: Service; startedAt: number }> {
  const grpc = await freePort();
  const loopFile = path.join(options.work, `loop-${++services}.jsonl`);
  const startedAt = Date.now();
  const child = pinned(
    options.cores.server,
    process.execPath,
    [
      '-r',
      path.join(ROOT, 'dist', 'bench', 'loop-probe.js'),
      path.join(ROOT, 'bin', 'ratelimit.js'),
    ],
    {
      BENCH_LOOP_FILE: loopFile,
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: String(grpc),
      DEBUG_HOST: '127.0.0.1',
      DEBUG_PORT: String(await freePort()),
      BACKEND_TYPE: 'memory',
      USE_STATSD: 'false',
      LOG_LEVEL: 'info',
      ...env,
    },
  );
  return { service: { child, grpc, output: captureOutput(child), loopFile }, startedAt };
}

/** Runs the load generator for `seconds` against `port`, calling `during` once it measures. */
async function loadWhile(
  options: ScaleOptions,
  port: number,
  bodies: string[],
  during: () => Promise<void>,
): Promise<Window> {
  const load: LoadOptions = {
    kind: 'grpc',
    host: '127.0.0.1',
    port,
    bodies,
    concurrency: 64,
    connections: 4,
    warmupMs: 1000,
    durationMs: options.trafficSeconds * 1000,
  };
  const file = path.join(options.work, `scale-load-${Date.now()}.json`);
  writeFileSync(file, JSON.stringify(load));
  const child = pinned(options.cores.load, process.execPath, [
    path.join(ROOT, 'dist', 'bench', 'load.js'),
    file,
  ]);
  const output = captureOutput(child);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });
  await waitFor(
    () => output().includes('measuring\n'),
    () => `the load generator:\n${output()}`,
  );
  const from = Date.now();
  const work = during();
  await exited;
  const to = Date.now();
  await work;
  return { result: JSON.parse(output().trim().split('\n').pop() ?? '{}') as LoadResult, from, to };
}

/** Writes `dir/scale.yaml` (whole, by rename) with each of `versions` in turn, every `everyMs`, until `isDone()`. */
async function rewriteUntil(
  dir: string,
  versions: readonly Buffer[],
  everyMs: number,
  isDone: () => boolean,
): Promise<void> {
  for (let turn = 0; !isDone(); turn++) {
    const next = path.join(dir, 'scale.yaml.next');
    writeFileSync(next, versions[turn % versions.length] ?? '');
    renameSync(next, path.join(dir, 'scale.yaml'));
    const until = Date.now() + everyMs;
    while (!isDone() && Date.now() < until) await delay(50);
  }
}

/** Bodies that spread calls over rules from the first to the last of each kind. */
function spreadBodies(config: ScaleConfig): string[] {
  const picks = [0, 1, Math.floor(config.exact / 2), config.exact - 1];
  const prefixes = config.prefix > 0 ? [0, config.prefix - 1] : [];
  return [
    ...picks.map((i) => callOf('tenant', `t${i}`)),
    ...prefixes.map((i) => callOf('path', `/api/v${i}/items`)),
  ];
}

/** A call matched by the last rule configured, whose answer shows the whole file is loaded. */
function lastRuleCall(config: ScaleConfig): string {
  return config.prefix > 0
    ? callOf('path', `/api/v${config.prefix - 1}/x`)
    : callOf('tenant', `t${config.exact - 1}`);
}

const countOf = (text: string, needle: string): number => text.split(needle).length - 1;

/**
 * Waits until no load has finished for two seconds (one may still run when the load stops),
 * so that the memory measured next is the service's own, not a compile's in flight.
 */
async function settled(service: Service, needle: string): Promise<void> {
  let count = countOf(service.output(), needle);
  let since = Date.now();
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() - since < 2000 && Date.now() < deadline) {
    await delay(100);
    const now = countOf(service.output(), needle);
    if (now !== count) {
      count = now;
      since = Date.now();
    }
  }
}

/** Starts the service on a directory of one generated file; with `reload`, loads it again under load. */
export async function fileScale(
  options: ScaleOptions,
  config: ScaleConfig,
  reload: boolean,
): Promise<ScaleLoad> {
  const dir = path.join(options.work, `scale-${config.exact + config.prefix}`, 'config');
  writeScaleConfig(dir, config);
  const { service, startedAt } = await startService(options, {
    RUNTIME_ROOT: path.dirname(dir),
    RUNTIME_SUBDIRECTORY: '',
    RUNTIME_APPDIRECTORY: 'config',
    RUNTIME_WATCH_ROOT: 'false',
  });
  try {
    const firstAnswerMs = await firstAnswer(service.grpc, lastRuleCall(config), startedAt);
    const rssAfterLoadMiB = rssMiB(service.child.pid);
    const rules = config.exact + config.prefix;
    if (!reload) return { source: 'file', rules, firstAnswerMs, rssAfterLoadMiB };
    // Two versions made before the window and written in turn: making 10 MB of text in the
    // window would take CPU from the load generator, and show as slow answers.
    const versions = [1, 2].map((variant) => Buffer.from(scaleConfigYaml({ ...config, variant })));
    const loadsBefore = countOf(service.output(), 'loaded a new configuration');
    let isDone = false;
    const window = await loadWhile(options, service.grpc, spreadBodies(config), async () => {
      const rewriting = rewriteUntil(dir, versions, options.rewriteEveryMs, () => isDone);
      await delay(options.trafficSeconds * 1000);
      isDone = true;
      await rewriting;
    });
    const reloads = countOf(service.output(), 'loaded a new configuration') - loadsBefore;
    await settled(service, 'loaded a new configuration');
    return {
      source: 'file',
      rules,
      firstAnswerMs,
      rssAfterLoadMiB,
      reload: reloadOf(options, service, window, reloads, undefined),
    };
  } finally {
    await stop(service.child);
  }
}

function longest(worst: LoopSecond): { longestBusyMs: number; longestGapMs: number } {
  return { longestBusyMs: worst.busyMs, longestGapMs: worst.gapMs };
}

function reloadOf(
  options: ScaleOptions,
  service: Service,
  window: Window,
  reloads: number,
  ackMs: number | undefined,
): ScaleReload {
  const { result } = window;
  return {
    seconds: options.trafficSeconds,
    longestAnswerMs: result.latencyMs.max,
    p99Ms: result.latencyMs.p99,
    answersPerSecond: result.completed / (result.durationMs / 1000),
    reloads,
    ackMs,
    rssAfterMiB: rssMiB(service.child.pid),
    ...longest(loopWorst(service.loopFile, window.from, window.to)),
  };
}

interface SimStatus {
  readonly version: string;
  readonly versions: readonly { readonly version: string; readonly at: string }[];
  readonly nodes: Record<string, { lastAckVersion?: string; lastAckAt?: string }>;
}

async function simStatus(adminPort: number): Promise<SimStatus> {
  const res = await fetch(`http://127.0.0.1:${adminPort}/status`);
  return (await res.json()) as SimStatus;
}

/** The simulator serving `dir`, on ports of its own. */
async function startSimulator(
  options: ScaleOptions,
  dir: string,
): Promise<{ child: ChildProcess; port: number; admin: number }> {
  const port = await freePort();
  const admin = await freePort();
  const bin = path.join(ROOT, 'bin', 'ratelimit-control-plane-sim.js');
  const child = pinned(options.cores.load, process.execPath, [
    bin,
    '-config_dir',
    dir,
    '-port',
    String(port),
    '-admin_port',
    String(admin),
  ]);
  const output = captureOutput(child);
  await waitFor(
    async () => (await canConnect(admin)) && (await simStatus(admin)).version !== '',
    () => `the simulator:\n${output()}`,
    START_TIMEOUT_MS,
  );
  return { child, port, admin };
}

/** Waits for a version other than `before` to be published and ACKed by `node`: how long that took. */
async function ackMs(admin: number, node: string, before: string): Promise<number> {
  let status = await simStatus(admin);
  await waitFor(
    async () => {
      status = await simStatus(admin);
      return status.version !== before && status.nodes[node]?.lastAckVersion === status.version;
    },
    () => `an ACK of a version after ${before}`,
    START_TIMEOUT_MS,
  );
  const published = status.versions.find((v) => v.version === status.version)?.at ?? '';
  return Date.parse(status.nodes[node]?.lastAckAt ?? '') - Date.parse(published);
}

/** The service on a resource of the simulator's; under load, the simulator publishes it again. */
export async function xdsScale(options: ScaleOptions, config: ScaleConfig): Promise<ScaleLoad> {
  const dir = path.join(options.work, 'scale-xds');
  writeScaleConfig(dir, config);
  const sim = await startSimulator(options, dir);
  const node = 'bench-scale';
  const { service, startedAt } = await startService(options, {
    CONFIG_TYPE: 'GRPC_XDS_SOTW',
    CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${sim.port}`,
    CONFIG_GRPC_XDS_NODE_ID: node,
    XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: String(64 * 1024 * 1024),
  });
  try {
    const firstAnswerMs = await firstAnswer(service.grpc, lastRuleCall(config), startedAt);
    const rssAfterLoadMiB = rssMiB(service.child.pid);
    await ackMs(sim.admin, node, '');
    const loadsBefore = countOf(service.output(), 'accepted an xDS update');
    let ack: number | undefined;
    const window = await loadWhile(options, service.grpc, spreadBodies(config), async () => {
      // The simulator publishes the same resource as a new version: the service compiles it
      // whole (the simulator, which keeps what it made of an unchanged file, at once).
      const before = (await simStatus(sim.admin)).version;
      await fetch(`http://127.0.0.1:${sim.admin}/republish`, { method: 'POST' });
      ack = await ackMs(sim.admin, node, before);
    });
    const reloads = countOf(service.output(), 'accepted an xDS update') - loadsBefore;
    await settled(service, 'accepted an xDS update');
    return {
      source: 'xds',
      rules: config.exact + config.prefix,
      firstAnswerMs,
      rssAfterLoadMiB,
      reload: reloadOf(options, service, window, reloads, ack),
    };
  } finally {
    await stop(service.child);
    await stop(sim.child);
  }
}

/** Every row: each size from files, the largest reloaded under load, then over xDS. */
export async function runConfigScale(
  options: ScaleOptions,
  sizes: readonly ScaleConfig[],
): Promise<ScaleLoad[]> {
  const rows: ScaleLoad[] = [];
  for (const [i, config] of sizes.entries()) {
    const isLargest = i === sizes.length - 1;
    rows.push(await fileScale(options, config, isLargest));
    if (isLargest) rows.push(await xdsScale(options, config));
  }
  return rows;
}
