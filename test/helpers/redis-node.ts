// One redis-server process (a data node or a sentinel) with any arguments, stopped by its pid.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { NodeOptions } from '../../src/store/redis/credentials';
import type { Certificates } from './certs';
import { eventually } from './eventually';

export interface RedisNodeOptions {
  /** The directory the node writes to (nodes.conf, sentinel.conf). */
  readonly dir: string;
  /** The plain TCP port; 0 for a TLS-only node. */
  readonly port: number;
  /** With TLS: the port it listens on, and the certificates it presents and trusts. */
  readonly tls?: { readonly port: number; readonly certs: Certificates };
  /** Further arguments, e.g. `--cluster-enabled yes` or `--replicaof ...`. */
  readonly args?: readonly string[];
  /** Run as a sentinel with this configuration (written to sentinel.conf, which it rewrites). */
  readonly sentinelConfig?: string;
  /** Addresses to listen on; 127.0.0.1 by default. */
  readonly bind?: readonly string[];
}

/** TLS arguments shared by data nodes and sentinels: client certificates optional but checked. */
function tlsArgs(tls: RedisNodeOptions['tls']): string[] {
  if (tls === undefined) return [];
  return [
    '--tls-port',
    String(tls.port),
    '--tls-cert-file',
    tls.certs.serverCert,
    '--tls-key-file',
    tls.certs.serverKey,
    '--tls-ca-cert-file',
    tls.certs.caCert,
    '--tls-auth-clients',
    'optional',
    '--tls-replication',
    'yes',
  ];
}

export class RedisNode {
  private process: ChildProcess | undefined;
  private output = '';

  private constructor(readonly options: RedisNodeOptions) {}

  /** Starts the node and waits until it answers PING. */
  static async start(options: RedisNodeOptions): Promise<RedisNode> {
    const node = new RedisNode(options);
    await node.launch();
    return node;
  }

  /** The port clients use: the TLS one on a TLS-only node. */
  get port(): number {
    return this.options.port === 0 ? (this.options.tls?.port ?? 0) : this.options.port;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  get isRunning(): boolean {
    return this.process !== undefined && this.process.exitCode === null;
  }

  private async launch(): Promise<void> {
    const { options } = this;
    const args: string[] = [];
    if (options.sentinelConfig !== undefined) {
      const file = path.join(options.dir, 'sentinel.conf');
      // A restart keeps what the sentinel learnt (it rewrites the file).
      if (this.process === undefined) writeFileSync(file, options.sentinelConfig);
      args.push(file, '--sentinel');
    }
    args.push('--port', String(options.port), '--bind', ...(options.bind ?? ['127.0.0.1']));
    args.push('--dir', options.dir, ...tlsArgs(options.tls));
    if (options.sentinelConfig === undefined) {
      args.push('--save', '', '--appendonly', 'no', '--enable-debug-command', 'yes');
    }
    args.push(...(options.args ?? []));
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.process = child;
    const keep = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString()).slice(-2000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (err) => {
        reject(new Error(`cannot start redis-server (.ci/run installs it): ${err.message}`));
      });
    });
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`redis-server exited: ${this.output}`);
        const client = this.client();
        try {
          await client.ping();
          return true;
        } finally {
          client.disconnect();
        }
      },
      { what: `redis-server on port ${this.port}`, timeoutMs: 15_000 },
    );
  }

  /** The end of what the process printed, for failures. */
  get logTail(): string {
    return this.output;
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
      ...(this.options.port === 0 && tls !== undefined
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
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
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
    await this.launch();
  }
}
