// Responses that arrive while one compiles are coalesced: only the newest of the current stream
// is compiled and answered, and what a replaced stream sent is dropped.
//
// go-control-plane (envoyproxy/go-control-plane at 2b88c16) ignores a request whose nonce is not
// the newest it sent (pkg/server/sotw/v3/ads.go, processADS: "Skipping request as nonce is
// stale"), so the newest response's ACK, carrying its nonce and version, answers the responses
// it superseded; test/integration/xds-coalescing.test.ts measures the same at 110,000 rules.
import * as grpc from '@grpc/grpc-js';
import type { CompileOptions, ConfigSnapshot, LoadOutcome } from '../../../src/config';
import { MemoryLogger } from '../../../src/lib/logger';
import {
  InThreadCompiler,
  XdsConfigProvider,
  decodeResource,
  type CompileJob,
  type ConfigCompiler,
} from '../../../src/provider';
import { loadSettings, type XdsSourceSettings } from '../../../src/settings';
import { StatsStore } from '../../../src/stats';
import { AdsServer, oneLimitConfig, RATE_LIMIT_CONFIG_TYPE_URL } from '../../helpers/ads-server';
import { collectCleanups } from '../../helpers/cleanups';
import { eventually } from '../../helpers/eventually';

const cleanup = collectCleanups();

/** Compiles on this thread, each compile held until the test lets it finish. */
class GatedCompiler implements ConfigCompiler {
  /** The domain of each job begun, in order. */
  readonly begun: string[] = [];
  private readonly gates: (() => void)[] = [];
  private readonly inner = new InThreadCompiler();

  async compile(job: CompileJob, options: CompileOptions): Promise<LoadOutcome> {
    if (job.kind === 'resources') {
      const decoded = job.resources.map(decodeResource)[0];
      this.begun.push(decoded !== undefined && 'domain' in decoded ? decoded.domain : '?');
    }
    await new Promise<void>((resolve) => this.gates.push(resolve));
    return this.inner.compile(job, options);
  }

  /** Lets the oldest held compile finish. */
  release(): void {
    this.gates.shift()?.();
  }

  get held(): number {
    return this.gates.length;
  }
}

let ads: AdsServer;
let compiler: GatedCompiler;
let snapshots: ConfigSnapshot[];
let logger: MemoryLogger;

beforeEach(async () => {
  ads = await AdsServer.start();
  compiler = new GatedCompiler();
  snapshots = [];
  logger = new MemoryLogger();
  const provider = new XdsConfigProvider({
    settings: loadSettings({
      CONFIG_TYPE: 'GRPC_XDS_SOTW',
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${ads.port}`,
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '20ms',
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: '40ms',
    }).config.source as XdsSourceSettings,
    compile: { stats: new StatsStore(), mergeDomainConfig: false, sanitizeDots: false },
    logger,
    compiler,
  });
  await provider.start({ onSnapshot: (s) => snapshots.push(s), onRejected: () => undefined });
  const server = ads;
  cleanup(async () => {
    await provider.stop();
    await server.close();
  });
  await eventually(() => ads.rateLimitRequests(0).length === 1, { what: 'the first request' });
});

/** How many responses were replaced by a newer one before they were compiled. */
function supersededCount(): number {
  return logger.lines.filter(
    (l) => l.message === 'an xDS update was superseded before it was compiled',
  ).length;
}

/** Sends version `n` of domain `d<n>` on stream `stream`. */
function push(stream: number, n: number): void {
  ads.streams[stream]!.write({
    version_info: `v${n}`,
    type_url: RATE_LIMIT_CONFIG_TYPE_URL,
    nonce: `n${n}`,
    resources: [{ type_url: RATE_LIMIT_CONFIG_TYPE_URL, value: oneLimitConfig(`d${n}`, n) }],
  });
}

it('compiles only the newest pending response and answers it alone, with its nonce', async () => {
  push(0, 1);
  await eventually(() => compiler.held === 1, { what: 'the first compile' });
  for (let n = 2; n <= 5; n++) push(0, n);
  // The four arrive while the first compiles; let it finish once they are all in.
  await eventually(() => supersededCount() === 3, { what: 'v2 to v4 to be superseded' });
  compiler.release();
  await eventually(() => compiler.held === 1, { what: 'the compile of the newest' });
  compiler.release();
  await eventually(() => ads.rateLimitRequests(0).length === 2, { what: 'the ACK of v5' });

  expect(compiler.begun).toEqual(['d1', 'd5']);
  // v1 compiled while newer ones waited: it serves, with no request of its own.
  expect(snapshots.map((s) => s.domains.join(','))).toEqual(['d1', 'd5']);
  expect(ads.rateLimitRequests(0)[1]).toMatchObject({ version_info: 'v5', response_nonce: 'n5' });
  expect(ads.rateLimitRequests(0)[1]?.error_detail).toBeUndefined();
});

it('drops what a replaced stream sent, compiled or not, and resumes from the last version applied', async () => {
  push(0, 1);
  await eventually(() => compiler.held === 1, { what: 'the first compile' });
  compiler.release();
  await eventually(() => ads.rateLimitRequests(0).length === 2, { what: 'the ACK of v1' });

  push(0, 2);
  await eventually(() => compiler.held === 1, { what: 'the compile of v2' });
  push(0, 3);
  push(0, 4);
  await eventually(() => supersededCount() === 1, { what: 'v3 to be superseded by v4' });
  ads.streams[0]!.emit('error', { code: grpc.status.UNAVAILABLE, details: 'going away' });
  await eventually(() => ads.rateLimitRequests(1).length === 1, { what: 'a new stream' });
  compiler.release();
  await eventually(() => compiler.held === 0, { what: 'the compile of v2 to end' });

  expect(ads.rateLimitRequests(1)[0]).toMatchObject({ version_info: 'v1', response_nonce: '' });
  expect(compiler.begun).toEqual(['d1', 'd2']);
  expect(snapshots.map((s) => s.domains.join(','))).toEqual(['d1']);
  expect(ads.rateLimitRequests(0)).toHaveLength(2);
  expect(ads.rateLimitRequests(1)).toHaveLength(1);

  push(1, 5);
  await eventually(() => compiler.held === 1, { what: 'the compile of v5' });
  compiler.release();
  await eventually(() => ads.rateLimitRequests(1).length === 2, { what: 'the ACK of v5' });
  expect(compiler.begun).toEqual(['d1', 'd2', 'd5']);
  expect(ads.rateLimitRequests(1)[1]).toMatchObject({ version_info: 'v5', response_nonce: 'n5' });
  expect(snapshots.map((s) => s.domains.join(','))).toEqual(['d1', 'd5']);
});
