// ratelimit-control-plane-sim: a development xDS management server for RateLimitConfig.
import { existsSync, readFileSync, watch } from 'node:fs';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { createAdmin, currentResources, type AdminState } from './admin';
import { ConfigFileError, readConfigDirectory } from './config-files';
import { ManagementServer } from './management-server';

interface Options {
  configDir: string;
  host: string;
  port: number;
  adminPort: number;
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  clientCa: string | undefined;
}

const USAGE = `usage: ratelimit-control-plane-sim [flags]
A development xDS management server: serves the rate limit configuration files of a directory
as RateLimitConfig resources over ADS, with an HTTP admin API and page to watch and disturb it.

  -config_dir DIR     rate limit configuration files (the service's YAML format), watched
  -host HOST          listen address (default 127.0.0.1)
  -port N             ADS port (default 18000)
  -admin_port N       HTTP admin port (default 18001)
  -tls_cert FILE      serve TLS with this certificate chain ...
  -tls_key FILE       ... and this key
  -client_ca FILE     require client certificates signed by this CA (mutual TLS)
  -h, --help          print this and exit
Each flag can also be given as an environment variable: SIM_CONFIG_DIR, SIM_PORT ...
`;

function parse(argv: readonly string[], env: NodeJS.ProcessEnv): Options {
  const values = new Map<string, string>();
  for (const [key, value] of Object.entries(env)) {
    if (key.startsWith('SIM_') && value !== undefined)
      values.set(key.slice(4).toLowerCase(), value);
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = (argv[i] ?? '').replace(/^--?/, '');
    const eq = arg.indexOf('=');
    if (eq >= 0) values.set(arg.slice(0, eq), arg.slice(eq + 1));
    else values.set(arg, argv[++i] ?? '');
  }
  const known = new Set([
    'config_dir',
    'host',
    'port',
    'admin_port',
    'tls_cert',
    'tls_key',
    'client_ca',
  ]);
  for (const key of values.keys())
    if (!known.has(key)) throw new Error(`unknown flag -${key}\n${USAGE}`);
  const number = (key: string, fallback: number): number => {
    const value = Number(values.get(key) ?? fallback);
    if (!Number.isInteger(value) || value < 0 || value > 65535)
      throw new Error(`-${key} must be a port number\n${USAGE}`);
    return value;
  };
  const configDir = values.get('config_dir');
  if (configDir === undefined || !existsSync(configDir))
    throw new Error(`-config_dir must name an existing directory\n${USAGE}`);
  return {
    configDir,
    host: values.get('host') ?? '127.0.0.1',
    port: number('port', 18000),
    adminPort: number('admin_port', 18001),
    tlsCert: values.get('tls_cert'),
    tlsKey: values.get('tls_key'),
    clientCa: values.get('client_ca'),
  };
}

function credentials(options: Options): grpc.ServerCredentials {
  if (options.tlsCert === undefined || options.tlsKey === undefined)
    return grpc.ServerCredentials.createInsecure();
  const ca = options.clientCa === undefined ? null : readFileSync(options.clientCa);
  return grpc.ServerCredentials.createSsl(
    ca,
    [{ cert_chain: readFileSync(options.tlsCert), private_key: readFileSync(options.tlsKey) }],
    ca !== null,
  );
}

/** Starts the simulator; resolves with its ports and a stop function. */
export async function runSimulator(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  log: (line: string) => void = (line) =>
    process.stdout.write(`${new Date().toISOString()} ${line}\n`),
): Promise<{ port: number; adminPort: number; stop: () => Promise<void> }> {
  const options = parse(argv, env);
  const server = new ManagementServer(log);
  const state: AdminState = { directory: [], pushed: new Map(), isBadResourceOn: false };
  const reload = (): void => {
    try {
      state.directory = readConfigDirectory(options.configDir);
      server.setResources(currentResources(state));
    } catch (err: unknown) {
      // A bad file names itself, its line and column; nothing of the directory is published.
      if (err instanceof ConfigFileError)
        log(`refused ${err.message}; the previous version keeps being served`);
      else
        log(
          `cannot read ${options.configDir}: ${err instanceof Error ? err.message : String(err)}`,
        );
    }
  };
  reload();
  let debounce: NodeJS.Timeout | undefined;
  const watcher = watch(options.configDir, { persistent: false }, () => {
    if (debounce !== undefined) clearTimeout(debounce);
    debounce = setTimeout(reload, 50);
  });
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const port = await server.listen(`${host}:${options.port}`, credentials(options));
  const admin = createAdmin(server, state, reload);
  await new Promise<void>((resolve) => admin.listen(options.adminPort, options.host, resolve));
  const adminPort = (admin.address() as AddressInfo).port;
  log(
    `serving RateLimitConfig over ADS on ${options.host}:${port}${options.tlsCert === undefined ? '' : options.clientCa === undefined ? ' (TLS)' : ' (mutual TLS)'}; admin on http://${options.host}:${adminPort}`,
  );
  return {
    port,
    adminPort,
    stop: async () => {
      watcher.close();
      if (debounce !== undefined) clearTimeout(debounce);
      await new Promise<void>((resolve) =>
        admin.close(() => {
          resolve();
        }),
      );
      await server.shutdown();
    },
  };
}

/** The arguments that ask for usage, as Go's flag package reads them. */
const HELP = new Set(['-h', '-help', '--help']);

/** The command line: runs until SIGTERM or SIGINT; -h or --help prints the usage. */
export function main(argv: readonly string[] = process.argv.slice(2)): void {
  if (argv.some((arg) => HELP.has(arg))) {
    process.stdout.write(USAGE);
    return;
  }
  runSimulator(argv).then(
    (sim) => {
      const stop = (): void => {
        sim.stop().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    },
    (err: unknown) => {
      process.stderr.write(
        `ratelimit-control-plane-sim: ${err instanceof Error ? err.message : String(err)}\n`,
      );
      process.exit(2);
    },
  );
}
