// examples/envoy against Envoy's own API, the service's config loader and its compose file.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { configCheckDirectory } from '../../helpers/deploy/config-check';
import { loadEnvoyProtos, ProtoJsonChecker } from '../../helpers/deploy/proto-json';
import { unreadNames } from '../../helpers/deploy/settings-names';
import { ROOT } from '../../helpers/deploy/chart';

const EXAMPLE = path.join(ROOT, 'examples', 'envoy');
const RULES_DIR = path.join(EXAMPLE, 'ratelimit', 'config');
const RATELIMIT_FILTER = 'type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit';
const HCM =
  'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const HTTP_OPTIONS = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';

// Envoy's YAML is read by deep paths, after ProtoJsonChecker has checked it against the protos.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;

const envoy = parse(readFileSync(path.join(EXAMPLE, 'envoy.yaml'), 'utf8')) as Obj;
const compose = parse(readFileSync(path.join(EXAMPLE, 'compose.yaml'), 'utf8')) as Obj;

/** Every HTTP connection manager of the listeners. */
function connectionManagers(): Obj[] {
  const out: Obj[] = [];
  for (const listener of envoy.static_resources.listeners as Obj[])
    for (const chain of listener.filter_chains as Obj[])
      for (const filter of chain.filters as Obj[])
        if (filter.typed_config['@type'] === HCM) out.push(filter.typed_config);
  return out;
}

function rateLimitFilter(): Obj {
  const filters = connectionManagers()
    .flatMap((hcm) => hcm.http_filters as Obj[])
    .filter((f) => f.typed_config['@type'] === RATELIMIT_FILTER);
  expect(filters).toHaveLength(1);
  return filters[0]!.typed_config;
}

function cluster(name: string): Obj {
  const found = (envoy.static_resources.clusters as Obj[]).find((c) => c.name === name);
  if (found === undefined) throw new Error(`envoy.yaml has no cluster ${name}`);
  return found;
}

/** The descriptor keys each route rate limit entry sends, in order. */
function descriptorKeyLists(): string[][] {
  const lists: string[][] = [];
  for (const hcm of connectionManagers())
    for (const vhost of hcm.route_config.virtual_hosts as Obj[])
      for (const route of vhost.routes as Obj[])
        for (const limit of (route.route?.rate_limits ?? []) as Obj[])
          lists.push(
            (limit.actions as Obj[]).map((action) => {
              if ('remote_address' in action) return 'remote_address';
              if ('request_headers' in action) return String(action.request_headers.descriptor_key);
              if ('generic_key' in action)
                return String(action.generic_key.descriptor_key ?? 'generic_key');
              throw new Error(`an action this test does not know: ${Object.keys(action).join()}`);
            }),
          );
  return lists;
}

/** Whether the rules have a chain of nested descriptors with these keys. */
function rulesCover(descriptors: Obj[] | undefined, keys: readonly string[]): boolean {
  if (keys.length === 0) return true;
  return (descriptors ?? []).some(
    (d) =>
      d.key === keys[0] &&
      (keys.length === 1 ? 'rate_limit' in d : rulesCover(d.descriptors, keys.slice(1))),
  );
}

describe('examples/envoy', () => {
  test('envoy.yaml is a valid Envoy Bootstrap (upstream protos, unknown fields refused)', () => {
    const root = loadEnvoyProtos([
      'envoy/config/bootstrap/v3/bootstrap.proto',
      'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
      'envoy/extensions/filters/http/router/v3/router.proto',
      'envoy/extensions/filters/http/ratelimit/v3/rate_limit.proto',
      'envoy/extensions/upstreams/http/v3/http_protocol_options.proto',
    ]);
    const checker = new ProtoJsonChecker(root);
    checker.message(root.lookupType('envoy.config.bootstrap.v3.Bootstrap'), envoy, 'envoy.yaml');
    expect(checker.problems).toEqual([]);

    // The checker itself refuses what Envoy refuses.
    const broken = structuredClone(envoy);
    broken.static_resources.clusters[0].conect_timeout = '1s';
    broken.static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value = 70000;
    broken.admin.address.socket_address.address = '';
    const brokenFilter =
      broken.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_filters[0];
    brokenFilter.typed_config.timeout = 250;
    const backendHcm =
      broken.static_resources.listeners[2].filter_chains[0].filters[0].typed_config;
    backendHcm['@type'] = `${HCM}x`;
    const strict = new ProtoJsonChecker(root);
    strict.message(root.lookupType('envoy.config.bootstrap.v3.Bootstrap'), broken, 'envoy.yaml');
    expect(strict.problems.join('\n')).toMatch(/conect_timeout: unknown field/);
    expect(strict.problems.join('\n')).toMatch(/port_value: 70000 must be lte 65535/);
    expect(strict.problems.join('\n')).toMatch(/socket_address.address: at least 1 character/);
    expect(strict.problems.join('\n')).toMatch(/timeout: expected a duration/);
    expect(strict.problems.join('\n')).toMatch(/unknown type \S+HttpConnectionManagerx/);
  });

  test("the rate limit filter calls the service's gRPC port over HTTP/2", () => {
    const filter = rateLimitFilter();
    const service = filter.rate_limit_service;
    expect(service.transport_api_version).toBe('V3');
    const target = cluster(service.grpc_service.envoy_grpc.cluster_name as string);
    expect(
      target.typed_extension_protocol_options[HTTP_OPTIONS].explicit_http_config,
    ).toHaveProperty('http2_protocol_options');
    const endpoints = (target.load_assignment.endpoints as Obj[]).flatMap(
      (e) => e.lb_endpoints as Obj[],
    );
    expect(endpoints).toHaveLength(1);
    const socket = endpoints[0]!.endpoint.address.socket_address;

    // The compose service of that name runs ratelimit-ts with gRPC on that port.
    const ratelimit = compose.services[socket.address] as Obj;
    expect(ratelimit.build.dockerfile).toBe('deploy/Dockerfile');
    const grpcPort = Number(ratelimit.environment.GRPC_PORT ?? 8081);
    expect(socket.port_value).toBe(grpcPort);
    // Envoy reaches it over the compose network: the gRPC port is not published on the host.
    expect((ratelimit.ports as string[]).filter((p) => p.endsWith(`:${grpcPort}`))).toEqual([]);
    // failure_mode_deny is set explicitly (and explained in envoy.yaml and the README).
    expect(filter.failure_mode_deny).toBe(false);
    expect(readFileSync(path.join(EXAMPLE, 'envoy.yaml'), 'utf8')).toMatch(
      /failure_mode_deny.*\n.*fail open|fail open/,
    );
  });

  test('the front listener takes the client address from the connection, not from the client', () => {
    const [front] = connectionManagers();
    expect(front?.stat_prefix).toBe('front');
    // Otherwise a client chooses its own remote_address through X-Forwarded-For.
    expect(front?.use_remote_address).toBe(true);
    expect(front?.xff_num_trusted_hops).toBe(0);
    expect(descriptorKeyLists()).toContainEqual(['remote_address']);
    expect(readFileSync(path.join(EXAMPLE, 'envoy.yaml'), 'utf8')).toMatch(
      /set xff_num_trusted_hops: N/,
    );
  });

  test('the rule file passes ratelimit-config-check and serves every descriptor Envoy sends', () => {
    const check = configCheckDirectory(RULES_DIR);
    expect(check.output).not.toMatch(/error/i);
    expect(check.status).toBe(0);

    const rules = parse(readFileSync(path.join(RULES_DIR, 'front-proxy.yaml'), 'utf8')) as Obj;
    expect(rateLimitFilter().domain).toBe(rules.domain);
    const lists = descriptorKeyLists();
    expect(lists).toEqual([['remote_address'], ['tier', 'user']]);
    for (const keys of lists) expect(rulesCover(rules.descriptors, keys)).toBe(true);
  });

  test('the compose file wires Envoy, the service, Redis and a statsd exporter together', () => {
    const services = compose.services as Record<string, Obj>;
    expect(Object.keys(services).sort()).toEqual([
      'envoy',
      'ratelimit',
      'redis',
      'statsd-exporter',
    ]);
    for (const [name, service] of Object.entries(services))
      expect([name, service.image]).toEqual([
        name,
        expect.stringMatching(/^[^:]+:v?\d+\.\d+\.\d+/),
      ]);

    // Envoy runs this envoy.yaml and publishes, on the host's loopback, its front listener and
    // the listener of its statistics; the admin interface stays inside the container.
    const envoyService = services.envoy!;
    const command = envoyService.command as string[];
    const configPath = command[command.indexOf('-c') + 1]!;
    expect(envoyService.volumes).toContain(`./envoy.yaml:${configPath}:ro`);
    const listenerPort = (name: string): number =>
      (envoy.static_resources.listeners as Obj[]).find((l) => l.name === name)!.address
        .socket_address.port_value as number;
    expect(envoyService.ports).toEqual([
      `127.0.0.1:${listenerPort('front')}:${listenerPort('front')}`,
      `127.0.0.1:${listenerPort('stats')}:${listenerPort('stats')}`,
    ]);
    expect(envoy.admin.address.socket_address.address).toBe('127.0.0.1');
    // The service's debug listener, which the README's commands read, on loopback too.
    const debugPort = Number(
      (services.ratelimit!.environment as Record<string, string>).DEBUG_PORT ?? 6070,
    );
    expect(services.ratelimit!.ports).toEqual([`127.0.0.1:${debugPort}:${debugPort}`]);

    // The service reads the checked rule directory, counts in the redis service and sends
    // statistics to the exporter's statsd port.
    const ratelimit = services.ratelimit!;
    const env = ratelimit.environment as Record<string, string>;
    expect(unreadNames(Object.keys(env))).toEqual([]);
    const rulesPath = path.posix.join(
      env.RUNTIME_ROOT!,
      env.RUNTIME_SUBDIRECTORY!,
      env.RUNTIME_APPDIRECTORY!,
    );
    expect(ratelimit.volumes).toContain(`./ratelimit/config:${rulesPath}:ro`);
    expect(env.REDIS_URL).toBe('redis:6379');
    expect(env.STATSD_HOST).toBe('statsd-exporter');
    expect(services['statsd-exporter']!.command).toContain(
      `--statsd.listen-udp=:${env.STATSD_PORT}`,
    );
    expect(ratelimit.read_only).toBe(true);
    expect(
      path.resolve(
        EXAMPLE,
        ratelimit.build.context as string,
        ratelimit.build.dockerfile as string,
      ),
    ).toBe(path.join(ROOT, 'deploy', 'Dockerfile'));
    // Envoy starts once the service's image HEALTHCHECK passes.
    expect(envoyService.depends_on.ratelimit.condition).toBe('service_healthy');
  });
});
