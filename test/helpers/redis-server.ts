// A real redis-server on a loopback port, started and stopped by process id. redis-server
// cannot report a port it picked, so the port is chosen free and a bind that loses the race
// to another process is retried on another port, a bounded number of times.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { killAndWait, spawnServer } from './child-process';
import { eventually } from './eventually';
import { unusedPort } from './ports';

export interface RedisServerOptions {
  readonly password?: string;
  /** Listen on a unix socket as well as TCP. */
  readonly unixSocket?: boolean;
  /** Use this port (a server the service already has the address of). */
  readonly port?: number;
}

/** Ports tried before giving up when each turns out taken by the time redis-server binds it. */
const BIND_ATTEMPTS = 5;

const hasExited = (child: ChildProcess): boolean =>
  child.exitCode !== null || child.signalCode !== null;

/** How one launch ended: serving, or exited (with what it printed). */
type Launch = { readonly ok: true } | { readonly ok: false; readonly output: string };

export class RedisServer {
  private process: ChildProcess | undefined;

  private constructor(
    private currentPort: number,
    readonly socketPath: string | undefined,
    private readonly dir: string,
    private readonly options: RedisServerOptions,
  ) {}

  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    const dir = mkdtempSync(path.join(tmpdir(), 'rl-redis-'));
    const socketPath = options.unixSocket === true ? path.join(dir, 'redis.sock') : undefined;
    const server = new RedisServer(options.port ?? (await unusedPort()), socketPath, dir, options);
    await server.launchRetrying(options.port === undefined);
    return server;
  }

  /** The TCP port it listens on. */
  get port(): number {
    return this.currentPort;
  }

  private async launchRetrying(mayMove: boolean): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const result = await this.launch();
      if (result.ok) return;
      const isTaken = /address already in use/i.test(result.output);
      if (!isTaken || !mayMove || attempt >= BIND_ATTEMPTS) {
        throw new Error(
          `redis-server on port ${this.currentPort} exited before serving` +
            `${isTaken && mayMove ? ` (${attempt} ports tried)` : ''}:\n${result.output}`,
        );
      }
      this.currentPort = await unusedPort();
    }
  }

  private args(): string[] {
    const args = [
      '--port',
      String(this.currentPort),
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
    return args;
  }

  /** Starts redis-server and waits until it answers PING, or until it exits. */
  private async launch(): Promise<Launch> {
    const { child, output, closed } = await spawnServer('redis-server', this.args());
    this.process = child;
    const state = await eventually(
      async () => {
        if (hasExited(child)) return 'exited';
        return (await this.answersPing()) && 'serving';
      },
      { what: `redis-server on port ${this.currentPort}` },
    );
    if (state === 'serving') return { ok: true };
    await closed;
    this.process = undefined;
    return { ok: false, output: output() };
  }

  /** Whether this server answers PING; a time limit, as another program may hold the port. */
  private async answersPing(): Promise<boolean> {
    const client = this.client({ commandTimeout: 500 });
    // A refused or silent port is an answer here, not an error to report.
    client.on('error', () => undefined);
    try {
      await client.ping();
      return true;
    } finally {
      client.disconnect();
    }
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** A client for checking keys and TTLs directly. */
  client(options: { commandTimeout?: number } = {}): Redis {
    return new Redis({
      ...options,
      host: '127.0.0.1',
      port: this.currentPort,
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
    await this.launchRetrying(false);
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
