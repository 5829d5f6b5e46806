// RLQS rules over xDS: the bundled simulator serves the Envoy example's rule files, quota_buckets
// included, to the built service, which lists the rules on /rlqs, assigns budgets by them,
// takes a changed rule, and NACKs a bad one naming the resource and the item.
import path from 'node:path';
import { collectCleanups } from '../helpers/cleanups';
import { eventually } from '../helpers/eventually';
import { SimEnvoy } from '../helpers/rlqs-sim-envoy';
import { ServiceProcess } from '../helpers/service-process';
import { SimProcess } from '../helpers/sim-process';

const cleanup = collectCleanups();
const EXAMPLE = path.resolve(__dirname, '..', '..', 'examples', 'envoy', 'ratelimit', 'config');
const NODE_ID = 'rlqs-xds';

interface RuleView {
  domain: string;
  bucket: string;
  source: string;
  path: string;
  policy: Record<string, unknown>;
}

let sim: SimProcess;
let service: ServiceProcess;

async function rulesShown(): Promise<RuleView[]> {
  const view = (await (await fetch(service.debugUrl('/rlqs'))).json()) as { rules: RuleView[] };
  return view.rules;
}

function envoy(tenant: string): SimEnvoy {
  const origin = performance.now();
  const e = new SimEnvoy({
    name: tenant,
    ports: [service.ports.grpc],
    domain: 'edge-quota',
    bucket: { name: 'api', tenant },
    demandPerSecond: 20,
    reportIntervalMs: 200,
    nowMs: () => performance.now() - origin,
  });
  cleanup(() => {
    e.stop();
  });
  e.start();
  return e;
}

beforeAll(async () => {
  sim = await SimProcess.start(EXAMPLE);
  cleanup(() => sim.kill());
  service = await ServiceProcess.start({
    env: {
      BACKEND_TYPE: 'memory',
      CONFIG_TYPE: 'GRPC_XDS_SOTW',
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${sim.port}`,
      CONFIG_GRPC_XDS_NODE_ID: NODE_ID,
      HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: 'true',
      RLQS_TICK: '100ms',
    },
  });
  cleanup(() => service.stop());
});

it('lists the quota rules of the served resource on /rlqs', async () => {
  await eventually(async () => (await rulesShown()).length === 3, { what: 'three rules' });
  // Listed most specific first; in file order here.
  const byPath = (await rulesShown()).sort((a, b) => a.path.localeCompare(b.path));
  expect(byPath).toMatchObject([
    {
      domain: 'edge-quota',
      bucket: 'name=api,tenant=*',
      source: 'resource edge-quota',
      path: 'quota_buckets[0]',
      policy: { kind: 'budget', requestsPerUnit: 100, unit: 'SECOND' },
    },
    {
      bucket: 'name=api,tenant=anonymous',
      path: 'quota_buckets[1]',
      policy: { kind: 'budget', requestsPerUnit: 20, unit: 'SECOND' },
    },
    {
      bucket: 'name=api,tenant=blocked',
      path: 'quota_buckets[2]',
      policy: { kind: 'blanket', rule: 'deny_all' },
    },
  ]);
  const node = (await sim.status()).nodes[NODE_ID];
  expect(node?.lastNack).toBeUndefined();
});

it('assigns by those rules, takes a changed rule, and NACKs a bad one keeping the last', async () => {
  const acme = envoy('acme');
  const blocked = envoy('blocked');
  await eventually(() => acme.share === 100 && blocked.share === 0, {
    what: 'the budget of tenant=* and the deny_all of tenant=blocked',
  });

  await sim.post(
    '/push?name=edge-quota',
    "domain: edge-quota\nquota_buckets:\n  - { bucket: { name: api, tenant: '*' }, requests_per_unit: 300, unit: second }\n",
  );
  await eventually(() => acme.share === 300, { what: 'the changed budget at the Envoy' });

  await sim.post(
    '/push?name=edge-quota',
    'domain: edge-quota\nquota_buckets:\n  - { bucket: { name: api }, blanket_rule: deny_all, unit: second }\n',
  );
  const nack = await eventually(
    async () => {
      const status = await sim.status();
      const node = status.nodes[NODE_ID];
      // The NACK of this version: eventually() takes anything but false as done.
      if (node?.lastNack === undefined || node.lastNack.version !== status.version)
        throw new Error(`no NACK of ${status.version} yet`);
      return node.lastNack.message;
    },
    { what: 'a NACK of the bad rule' },
  );
  expect(nack).toContain(
    "resource edge-quota: config error, 'unit' has no meaning beside 'blanket_rule' (at quota_buckets[0].unit)",
  );
  expect((await rulesShown()).map((r) => [r.bucket, r.policy.requestsPerUnit])).toEqual([
    ['name=api,tenant=*', 300],
  ]);
  expect(acme.share).toBe(300);
});
