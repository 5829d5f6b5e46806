// A real redis-server on a free loopback port, started and stopped by process id.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { killAndWait } from './child-process';
import { eventually } from './eventually';
import { freePort } from './ports';

export interface RedisServerOptions {
  readonly password?: string;
  /** Listen on a unix socket as well as TCP. */
  readonly unixSocket?: boolean;
  /** Use this port (for restarting a server on the same port). */
  readonly port?: number;
}

export class RedisServer {
  private constructor(
    readonly port: number,
    readonly socketPath: string | undefined,
    private readonly dir: string,
    private process: ChildProcess | undefined,
    private readonly options: RedisServerOptions,
  ) {}

  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    const port = options.port ?? (await freePort());
    const dir = mkdtempSync(path.join(tmpdir(), 'rl-redis-'));
    const socketPath = options.unixSocket === true ? path.join(dir, 'redis.sock') : undefined;
    const server = new RedisServer(port, socketPath, dir, undefined, options);
    await server.launch();
    return server;
  }

  private async launch(): Promise<void> {
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      this.dir,
      // DEBUG SLEEP lets a test hold a request in flight.
      '--enable-debug-command',
      'yes',
    ];
    if (this.socketPath !== undefined)
      args.push('--unixsocket', this.socketPath, '--unixsocketperm', '700');
    if (this.options.password !== undefined) args.push('--requirepass', this.options.password);
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    this.process = child;
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (err) => {
        reject(
          new Error(
            `cannot start redis-server (is it installed? .ci/run installs it): ${err.message}`,
          ),
        );
      });
    });
    await eventually(
      async () => {
        const client = this.client();
        try {
          await client.ping();
          return true;
        } finally {
          client.disconnect();
        }
      },
      { what: `redis-server on port ${this.port}` },
    );
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** A client for checking keys and TTLs directly. */
  client(): Redis {
    return new Redis({
      host: '127.0.0.1',
      port: this.port,
      lazyConnect: false,
      maxRetriesPerRequest: 1,
      // ioredis waits 2 s for a closed stream by default, which keeps jest from exiting.
      disconnectTimeout: 50,
      retryStrategy: () => null,
      ...(this.options.password === undefined ? {} : { password: this.options.password }),
    });
  }

  /** Stops the server by its process id and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    await killAndWait(child);
  }

  /** Starts the server again on the same port, empty. */
  async restart(): Promise<void> {
    await this.stop();
    await this.launch();
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
