// One redis-server process (a data node or a sentinel) with any arguments, stopped by its pid.
// redis-server cannot report a port it picked, so ports are chosen unused and a bind that loses
// the race to another process is retried on other ports, a bounded number of times.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { NodeOptions } from '../../src/store/redis/credentials';
import type { Certificates } from './certs';
import { eventually } from './eventually';
import { unusedPort } from './ports';
import { missingProgram } from './programs';

export interface RedisNodeOptions {
  /** The directory the node writes to (nodes.conf, sentinel.conf). */
  readonly dir: string;
  /** 'only': no plain-text port at all; 'also': a TLS port beside the plain one. */
  readonly tls?: { readonly certs: Certificates; readonly mode: 'only' | 'also' };
  /** Cluster mode, on a bus port of its own (the default, port + 10000, may be taken). */
  readonly cluster?: boolean;
  /** Further arguments, e.g. `--replicaof ...`. */
  readonly args?: readonly string[];
  /** Run as a sentinel with this configuration (written to sentinel.conf, which it rewrites). */
  readonly sentinelConfig?: string;
  /** Addresses to listen on; 127.0.0.1 by default. */
  readonly bind?: readonly string[];
}

/** The ports a node listens on; 0 for none. */
interface Ports {
  readonly plain: number;
  readonly tls: number;
  readonly bus: number;
}

/** Ports tried before giving up when each turns out taken by the time redis-server binds it. */
const BIND_ATTEMPTS = 5;

async function pickPorts(options: RedisNodeOptions): Promise<Ports> {
  const plain = options.tls?.mode === 'only' ? 0 : await unusedPort();
  const tls = options.tls === undefined ? 0 : await unusedPort();
  const bus = options.cluster === true ? await unusedPort() : 0;
  return { plain, tls, bus };
}

/** TLS arguments shared by data nodes and sentinels: client certificates optional but checked. */
function tlsArgs(options: RedisNodeOptions, ports: Ports): string[] {
  const tls = options.tls;
  if (tls === undefined) return [];
  return [
    ...['--tls-port', String(ports.tls), '--tls-cert-file', tls.certs.serverCert],
    ...['--tls-key-file', tls.certs.serverKey, '--tls-ca-cert-file', tls.certs.caCert],
    ...['--tls-auth-clients', 'optional', '--tls-replication', 'yes'],
    ...(options.cluster === true ? ['--tls-cluster', 'yes'] : []),
  ];
}

export class RedisNode {
  private process: ChildProcess | undefined;
  private output = '';

  private constructor(
    readonly options: RedisNodeOptions,
    private ports: Ports,
  ) {}

  /** Starts the node and waits until it answers PING. */
  static async start(options: RedisNodeOptions): Promise<RedisNode> {
    const node = new RedisNode(options, await pickPorts(options));
    for (let attempt = 1; ; attempt++) {
      const exited = await node.launch();
      if (exited === undefined) return node;
      if (!/address already in use/i.test(exited) || attempt >= BIND_ATTEMPTS) {
        throw new Error(`redis-server exited before serving (${attempt} tries):\n${exited}`);
      }
      node.ports = await pickPorts(options);
    }
  }

  /** The port clients use: the TLS one on a TLS-only node. */
  get port(): number {
    return this.ports.plain === 0 ? this.ports.tls : this.ports.plain;
  }

  /** The plain-text port, or undefined on a TLS-only node. */
  get plainPort(): number | undefined {
    return this.ports.plain === 0 ? undefined : this.ports.plain;
  }

  /** The TLS port, or undefined without TLS. */
  get tlsPort(): number | undefined {
    return this.ports.tls === 0 ? undefined : this.ports.tls;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  get isRunning(): boolean {
    return (
      this.process !== undefined &&
      this.process.exitCode === null &&
      this.process.signalCode === null
    );
  }

  /** The end of what the process printed, for failures. */
  get logTail(): string {
    return this.output;
  }

  private args(): string[] {
    const { options, ports } = this;
    const args: string[] = [];
    if (options.sentinelConfig !== undefined) {
      const file = path.join(options.dir, 'sentinel.conf');
      // A restart keeps what the sentinel learnt (it rewrites the file).
      if (this.process === undefined) writeFileSync(file, options.sentinelConfig);
      args.push(file, '--sentinel');
    } else {
      args.push('--save', '', '--appendonly', 'no', '--enable-debug-command', 'yes');
    }
    args.push('--port', String(ports.plain), '--bind', ...(options.bind ?? ['127.0.0.1']));
    args.push('--dir', options.dir, ...tlsArgs(options, ports));
    if (options.cluster === true) {
      args.push('--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf');
      args.push('--cluster-port', String(ports.bus), '--cluster-node-timeout', '1000');
    }
    return [...args, ...(options.args ?? [])];
  }

  /** Runs the process until it answers PING (undefined) or exits (what it printed). */
  private async launch(): Promise<string | undefined> {
    const child = spawn('redis-server', this.args(), { stdio: ['ignore', 'pipe', 'pipe'] });
    this.process = child;
    this.output = '';
    const keep = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString()).slice(-2000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (err) => {
        reject(missingProgram('redis-server', err.message));
      });
    });
    return eventually(
      async () => {
        if (child.exitCode !== null) return this.output;
        const client = this.client();
        try {
          await client.ping();
          return undefined;
        } finally {
          client.disconnect();
        }
      },
      { what: `redis-server on port ${this.port}`, timeoutMs: 15_000 },
    );
  }

  /** A client for checks and administration; over TLS with the client certificate on a TLS node. */
  client(extra: NodeOptions = {}): Redis {
    const tls = this.options.tls;
    return new Redis({
      host: '127.0.0.1',
      port: this.port,
      lazyConnect: false,
      maxRetriesPerRequest: 1,
      // ioredis waits 2 s for a closed stream by default, which keeps jest from exiting.
      disconnectTimeout: 50,
      retryStrategy: () => null,
      ...(this.ports.plain === 0 && tls !== undefined
        ? {
            tls: {
              ca: readFileSync(tls.certs.caCert),
              cert: readFileSync(tls.certs.clientCert),
              key: readFileSync(tls.certs.clientKey),
            },
          }
        : {}),
      ...extra,
    });
  }

  /** Runs one command on a short-lived admin connection. */
  async command(...args: [string, ...(string | number)[]]): Promise<unknown> {
    const client = this.client();
    try {
      return await client.call(...args);
    } finally {
      client.disconnect();
    }
  }

  /** Kills the process by its id (SIGKILL: no goodbye to clients) and waits for its exit. */
  async kill(): Promise<void> {
    const child = this.process;
    if (child === undefined || !this.isRunning) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => {
        resolve();
      });
      child.kill('SIGKILL');
    });
  }

  /** Starts a killed node again with the same options, directory and ports. */
  async restart(): Promise<void> {
    await this.kill();
    const exited = await this.launch();
    if (exited !== undefined) throw new Error(`redis-server did not restart:\n${exited}`);
  }
}
