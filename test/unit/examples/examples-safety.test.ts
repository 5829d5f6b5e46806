// The examples are safe to copy: every YAML file under examples/ parsed (not grepped), Envoy's
// admin interface on loopback, nothing published by compose beyond this machine's loopback,
// and every request header an example takes an identity from commented where it is read as
// one that a trusted hop must set. The admin and statistics layout imitates Envoy Gateway's
// proxies (envoyproxy/gateway internal/xds/bootstrap/bootstrap.yaml.tpl: admin on
// AdminServer.Address, 127.0.0.1; a listener routing /stats/prometheus alone to a
// `prometheus_stats` cluster of the admin address). Docker's compose publishes a port without
// a host address on every interface of the host.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { isNode, isPair, isScalar, parse, parseDocument, visit } from 'yaml';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const EXAMPLES = path.join(ROOT, 'examples');

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return yamlFiles(file);
    return /\.ya?ml$/.test(name) ? [file] : [];
  });
}

const FILES = yamlFiles(EXAMPLES).map((file) => ({
  name: path.relative(ROOT, file),
  text: readFileSync(file, 'utf8'),
}));

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

interface SocketAddress {
  readonly address?: string;
  readonly port_value?: number;
}
interface Endpoint {
  readonly endpoint?: { readonly address?: { readonly socket_address?: SocketAddress } };
}
interface Cluster {
  readonly name: string;
  readonly load_assignment?: { readonly endpoints?: { readonly lb_endpoints?: Endpoint[] }[] };
}
interface Route {
  readonly match?: Record<string, unknown>;
  readonly route?: { readonly cluster?: string };
}
interface Listener {
  readonly name: string;
  readonly address?: { readonly socket_address?: SocketAddress };
  readonly filter_chains?: {
    readonly filters?: {
      readonly typed_config?: {
        readonly route_config?: { readonly virtual_hosts?: { readonly routes?: Route[] }[] };
      };
    }[];
  }[];
}
interface Bootstrap {
  readonly admin?: { readonly address?: { readonly socket_address?: SocketAddress } };
  readonly static_resources?: { readonly listeners?: Listener[]; readonly clusters?: Cluster[] };
}
interface ComposePort {
  readonly host_ip?: string;
  readonly published?: string | number;
  readonly target?: number;
}
interface Compose {
  readonly services?: Record<string, { readonly ports?: (string | number | ComposePort)[] }>;
}

/** What an Envoy bootstrap exposes of its admin interface, as problems. */
function adminProblems(name: string, bootstrap: Bootstrap): string[] {
  const admin = bootstrap.admin?.address?.socket_address;
  if (admin === undefined) return [];
  const problems: string[] = [];
  if (!LOOPBACK.has(admin.address ?? ''))
    problems.push(`${name}: admin on ${admin.address ?? '?'}:${admin.port_value ?? '?'}`);
  // A cluster whose endpoint is the admin interface may be routed to only for its statistics.
  const adminClusters = new Set(
    (bootstrap.static_resources?.clusters ?? [])
      .filter((c) =>
        (c.load_assignment?.endpoints ?? [])
          .flatMap((e) => e.lb_endpoints ?? [])
          .some((e) => e.endpoint?.address?.socket_address?.port_value === admin.port_value),
      )
      .map((c) => c.name),
  );
  for (const listener of bootstrap.static_resources?.listeners ?? [])
    for (const chain of listener.filter_chains ?? [])
      for (const filter of chain.filters ?? [])
        for (const host of filter.typed_config?.route_config?.virtual_hosts ?? [])
          for (const route of host.routes ?? []) {
            if (!adminClusters.has(route.route?.cluster ?? '')) continue;
            const exact = route.match?.path;
            if (typeof exact !== 'string' || !exact.startsWith('/stats'))
              problems.push(
                `${name}: listener ${listener.name} routes ${JSON.stringify(route.match)} to the admin interface`,
              );
          }
  return problems;
}

/** The host address of a compose port: short syntax [HOST_IP:]HOST:CONTAINER, or host_ip. */
function hostAddress(port: string | number | ComposePort): string {
  if (typeof port === 'object') return port.host_ip ?? '0.0.0.0';
  const text = String(port);
  const bracketed = /^\[([^\]]+)\]:/.exec(text);
  if (bracketed !== null) return bracketed[1]!;
  const parts = text.split(':');
  return parts.length === 3 ? parts[0]! : '0.0.0.0';
}

function publishProblems(name: string, compose: Compose): string[] {
  return Object.entries(compose.services ?? {}).flatMap(([service, spec]) =>
    (spec.ports ?? [])
      .filter((port) => !LOOPBACK.has(hostAddress(port)))
      .map((port) => `${name}: ${service} publishes ${JSON.stringify(port)} on every interface`),
  );
}

/**
 * The request headers a file reads (`header_name` anywhere: rate limit actions, matcher
 * inputs, bucket id builders) without a comment, on the node or one of its enclosing nodes
 * below the file's own header, that names the header and says a trusted hop must set it.
 */
function uncommentedHeaders(name: string, text: string): string[] {
  const problems: string[] = [];
  visit(parseDocument(text), {
    Pair(_, pair, ancestors) {
      if (!isScalar(pair.key) || pair.key.value !== 'header_name') return;
      const header = isScalar(pair.value) ? String(pair.value.value) : '?';
      // ancestors[0] is the document, ancestors[1] its root map, whose comment is the file's.
      const comments: string[] = [];
      for (const node of [...ancestors.slice(2), pair]) {
        if (isNode(node)) comments.push(node.commentBefore ?? '', node.comment ?? '');
        if (isPair(node) && isNode(node.key)) comments.push(node.key.commentBefore ?? '');
        if (isPair(node) && isNode(node.value)) comments.push(node.value.commentBefore ?? '');
      }
      const said = comments.some(
        (c) => c.toLowerCase().includes(header.toLowerCase()) && /\btrusted?\b/i.test(c),
      );
      if (!said) problems.push(`${name}: ${header} is read without a trusted-hop comment`);
    },
  });
  return problems;
}

describe('examples are safe to copy', () => {
  test('the scan reads every example file', () => {
    expect(FILES.map((f) => f.name)).toEqual(
      expect.arrayContaining([
        'examples/envoy/envoy.yaml',
        'examples/envoy/envoy-rlqs.yaml',
        'examples/envoy/compose.yaml',
      ]),
    );
  });

  test('no Envoy admin interface on a public address, and only /stats routed to it', () => {
    const problems = FILES.flatMap((f) => adminProblems(f.name, parse(f.text) as Bootstrap));
    expect(problems).toEqual([]);
    // The check sees an admin on every interface, and a listener passing more than statistics.
    const open: Bootstrap = {
      admin: { address: { socket_address: { address: '0.0.0.0', port_value: 9901 } } },
      static_resources: {
        clusters: [
          {
            name: 'admin',
            load_assignment: {
              endpoints: [
                {
                  lb_endpoints: [
                    { endpoint: { address: { socket_address: { port_value: 9901 } } } },
                  ],
                },
              ],
            },
          },
        ],
        listeners: [
          {
            name: 'stats',
            filter_chains: [
              {
                filters: [
                  {
                    typed_config: {
                      route_config: {
                        virtual_hosts: [
                          { routes: [{ match: { prefix: '/' }, route: { cluster: 'admin' } }] },
                        ],
                      },
                    },
                  },
                ],
              },
            ],
          },
        ],
      },
    };
    expect(adminProblems('x', open)).toHaveLength(2);
  });

  test('compose publishes on the loopback address only', () => {
    const problems = FILES.flatMap((f) => publishProblems(f.name, parse(f.text) as Compose));
    expect(problems).toEqual([]);
    const published: Compose = {
      services: {
        a: { ports: ['9901:9901', '127.0.0.1:6070:6070', 8080, { target: 1, published: 1 }] },
      },
    };
    expect(publishProblems('x', published)).toHaveLength(3);
  });

  test('every header an example takes an identity from says a trusted hop must set it', () => {
    const problems = FILES.flatMap((f) => uncommentedHeaders(f.name, f.text));
    expect(problems).toEqual([]);
    // The files do read headers, and a header without the comment is found.
    const read = FILES.map((f) => f.text.match(/header_name: (\S+)/g) ?? []).flat();
    expect(read.length).toBeGreaterThanOrEqual(3);
    expect(
      uncommentedHeaders(
        'x',
        'a:\n  # the tier\n  - request_headers: { header_name: x-tier, descriptor_key: t }\n',
      ),
    ).toEqual(['x: x-tier is read without a trusted-hop comment']);
    expect(
      uncommentedHeaders(
        'x',
        'a:\n  # x-tier must be set by a trusted hop\n  - request_headers: { header_name: x-tier }\n',
      ),
    ).toEqual([]);
  });
});
