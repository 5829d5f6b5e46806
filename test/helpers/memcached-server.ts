// A real memcached on a loopback port (optionally TLS), started and stopped by process id.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { killAndWait, spawnServer } from './child-process';
import { eventually } from './eventually';
import { unusedPort } from './ports';

export interface MemcachedServerOptions {
  /** Use this port (for restarting a server on the same port). */
  readonly port?: number;
  /** Serve TLS only (`-Z`) with this certificate and key. */
  readonly tls?: {
    readonly certFile: string;
    readonly keyFile: string;
    /** Verifies client certificates against this CA. */
    readonly caFile?: string;
    /** Refuses clients that present no certificate (ssl_verify_mode=2); the helper's own
     * commands then present this one. */
    readonly requireClientCert?: { readonly certFile: string; readonly keyFile: string };
  };
}

/** What `mg` reports about a key. */
export interface StoredItem {
  readonly value: string;
  /** Seconds left, or -1 for no expiry. */
  readonly ttlSeconds: number;
}

/** Ports tried before giving up when each turns out taken by the time memcached binds it. */
const BIND_ATTEMPTS = 5;

/**
 * memcached cannot bind port 0 and report it (port 0 turns TCP off), so, as for redis-server,
 * a port is chosen free and a bind that loses the race is retried on another port.
 */
export class MemcachedServer {
  private process: ChildProcess | undefined;

  private constructor(
    private currentPort: number,
    private readonly options: MemcachedServerOptions,
  ) {}

  static async start(options: MemcachedServerOptions = {}): Promise<MemcachedServer> {
    const server = new MemcachedServer(options.port ?? (await unusedPort()), options);
    for (let attempt = 1; ; attempt++) {
      const output = await server.launch();
      if (output === undefined) return server;
      const isTaken = /address already in use/i.test(output);
      if (!isTaken || options.port !== undefined || attempt >= BIND_ATTEMPTS) {
        throw new Error(`memcached on port ${server.port} exited before serving:\n${output}`);
      }
      server.currentPort = await unusedPort();
    }
  }

  get port(): number {
    return this.currentPort;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  private args(): string[] {
    const args = ['-l', '127.0.0.1', '-p', String(this.port), '-U', '0', '-m', '16', '-t', '1'];
    // memcached refuses to run as root unless told which user to be.
    if (process.getuid?.() === 0) args.push('-u', 'root');
    const t = this.options.tls;
    if (t !== undefined) {
      const extended = [`ssl_chain_cert=${t.certFile}`, `ssl_key=${t.keyFile}`];
      if (t.caFile !== undefined) extended.push(`ssl_ca_cert=${t.caFile}`);
      if (t.requireClientCert !== undefined) extended.push('ssl_verify_mode=2');
      args.push('-Z', '-o', extended.join(','));
    }
    return args;
  }

  /** Starts memcached; resolves undefined once it answers, or with its output if it exited. */
  private async launch(): Promise<string | undefined> {
    const { child, output, closed } = await spawnServer('memcached', this.args());
    this.process = child;
    const state = await eventually(
      async () => {
        if (child.exitCode !== null || child.signalCode !== null) return 'exited';
        return (await this.command('version')).startsWith('VERSION') && 'serving';
      },
      { what: `memcached on port ${this.port}` },
    );
    if (state === 'serving') return undefined;
    await closed;
    this.process = undefined;
    return output();
  }

  /** Sends one text-protocol command and resolves with the reply up to its terminator. */
  command(line: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket: net.Socket =
        this.options.tls === undefined
          ? net.connect({ host: '127.0.0.1', port: this.port })
          : tls.connect({
              host: '127.0.0.1',
              port: this.port,
              rejectUnauthorized: false,
              ...clientCertificate(this.options.tls.requireClientCert),
            });
      let reply = '';
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`memcached on port ${this.port} did not answer ${line}`));
      }, 2000);
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        reply += chunk;
        if (isComplete(reply)) {
          clearTimeout(timer);
          socket.end();
          resolve(reply);
        }
      });
      socket.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      socket.write(`${line}\r\n`);
    });
  }

  /** The item under `key` as this server holds it, or undefined when absent. */
  async item(key: string): Promise<StoredItem | undefined> {
    const reply = await this.command(`mg ${key} v t`);
    if (reply.startsWith('EN')) return undefined;
    const match = /^VA \d+ t(-?\d+)\r\n([^\r]*)\r\n/.exec(reply);
    if (match === null) throw new Error(`unexpected mg reply: ${JSON.stringify(reply)}`);
    return { value: match[2] ?? '', ttlSeconds: Number(match[1]) };
  }

  /** Stores a value as the reference's client would (text protocol `add`). */
  async add(key: string, value: string, ttlSeconds: number): Promise<string> {
    return (await this.command(`add ${key} 0 ${ttlSeconds} ${value.length}\r\n${value}`)).trim();
  }

  /** Freezes the process (SIGSTOP): connections stay open but nothing answers. */
  pause(): void {
    this.process?.kill('SIGSTOP');
  }

  resume(): void {
    this.process?.kill('SIGCONT');
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
    const output = await this.launch();
    if (output !== undefined) {
      throw new Error(`memcached on port ${this.port} did not start again:\n${output}`);
    }
  }
}

function clientCertificate(
  files: { readonly certFile: string; readonly keyFile: string } | undefined,
): tls.ConnectionOptions {
  if (files === undefined) return {};
  return { cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) };
}

function isComplete(reply: string): boolean {
  if (!reply.endsWith('\r\n')) return false;
  const va = /^VA (\d+)/.exec(reply);
  if (va === null) return true;
  const header = reply.indexOf('\r\n');
  return reply.length >= header + 2 + Number(va[1]) + 2;
}
