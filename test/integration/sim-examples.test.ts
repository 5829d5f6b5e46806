// The bundled simulator serving the repository's own rule files (examples/ and the Kustomize
// base) to the built service: the service ACKs them and answers every rule as the files say.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { collectCleanups } from '../helpers/cleanups';
import { eventually } from '../helpers/eventually';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import { ServiceProcess } from '../helpers/service-process';
import { SimProcess } from '../helpers/sim-process';

const ROOT = path.resolve(__dirname, '..', '..');
const cleanup = collectCleanups();

interface YamlRule {
  key: string;
  value?: string;
  rate_limit?: { unit?: string; requests_per_unit?: number; unlimited?: boolean };
  descriptors?: YamlRule[];
}

/** A request for one rule and what the file says its answer is. */
interface Expectation {
  readonly entries: [string, string][];
  readonly limit: { requestsPerUnit: number; unit: string } | undefined;
}

/** Every rule with a rate_limit, as a request that reaches it (a wildcard value filled in). */
function expectations(rules: readonly YamlRule[], above: [string, string][] = []): Expectation[] {
  return rules.flatMap((rule) => {
    const value = (rule.value ?? 'any').replace(/\*$/, 'x');
    const entries: [string, string][] = [...above, [rule.key, value]];
    const own: Expectation[] = [];
    const rl = rule.rate_limit;
    if (rl !== undefined) {
      const limit =
        rl.unlimited === true
          ? undefined
          : { requestsPerUnit: rl.requests_per_unit ?? 0, unit: (rl.unit ?? '').toUpperCase() };
      own.push({ entries, limit });
    }
    return [...own, ...expectations(rule.descriptors ?? [], entries)];
  });
}

function domainsOf(dir: string): { domain: string; expected: Expectation[] }[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => {
      const doc = parse(readFileSync(path.join(dir, f), 'utf8')) as {
        domain: string;
        descriptors: YamlRule[];
      };
      return { domain: doc.domain, expected: expectations(doc.descriptors) };
    });
}

describe.each([['examples/ratelimit/config'], ['deploy/kubernetes/base/rules']])(
  'the simulator serving %s',
  (relative) => {
    const dir = path.join(ROOT, relative);
    let sim: SimProcess;
    let client: RlsClient;
    const nodeId = `examples-${relative.replace(/\W/g, '-')}`;

    beforeAll(async () => {
      sim = await SimProcess.start(dir);
      cleanup(() => sim.kill());
      // Healthy only once a configuration with a domain is loaded: a NACK would never get there.
      const service = await ServiceProcess.start({
        env: {
          BACKEND_TYPE: 'memory',
          CONFIG_TYPE: 'GRPC_XDS_SOTW',
          CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${sim.port}`,
          CONFIG_GRPC_XDS_NODE_ID: nodeId,
          HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: 'true',
          FORCE_START_WITHOUT_INITIAL_CONFIG: 'true',
        },
        waitFor: 'listening',
      });
      cleanup(() => service.stop());
      client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
      cleanup(() => {
        client.close();
      });
    });

    it('is ACKed, never NACKed', async () => {
      await eventually(
        async () => {
          const status = await sim.status();
          const seen = status.nodes[nodeId];
          if (seen?.lastNack !== undefined) throw new Error(`NACK: ${seen.lastNack.message}`);
          return seen?.lastAckVersion === status.version;
        },
        { what: 'an ACK of the current version' },
      );
      expect(await client.healthCheck()).toBe('SERVING');
    });

    it('answers each rule of the files with its limit', async () => {
      const domains = domainsOf(dir);
      expect(domains.length).toBeGreaterThan(0);
      for (const { domain, expected } of domains) {
        expect(expected.length).toBeGreaterThan(0);
        for (const { entries, limit } of expected) {
          const res = await client.shouldRateLimit(rlsRequest(domain, [entries]));
          const status = res.statuses?.[0];
          const what = `${domain} ${entries.map((e) => e.join('=')).join(',')}`;
          // proto3 leaves a zero out: a limit of 0 arrives without requestsPerUnit.
          const current = status?.currentLimit;
          const got =
            current === undefined
              ? undefined
              : { requestsPerUnit: current.requestsPerUnit ?? 0, unit: current.unit };
          expect([what, got]).toEqual([what, limit]);
          expect([what, status?.code]).toEqual([
            what,
            limit?.requestsPerUnit === 0 ? 'OVER_LIMIT' : 'OK',
          ]);
        }
      }
    });
  },
);
