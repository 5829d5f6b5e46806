// The built service started as a separate process (the `ratelimit` bin) on free loopback ports.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { eventually } from './eventually';
import { freePort } from './ports';

const ROOT = path.resolve(__dirname, '..', '..');
export const BIN = {
  ratelimit: path.join(ROOT, 'bin', 'ratelimit.js'),
  client: path.join(ROOT, 'bin', 'ratelimit-client.js'),
  configCheck: path.join(ROOT, 'bin', 'ratelimit-config-check.js'),
};

export interface ServiceProcessOptions {
  readonly env: Record<string, string>;
  /** Wait until /healthcheck answers 200 (default), or only until the HTTP port answers. */
  readonly waitFor?: 'healthy' | 'listening' | 'nothing';
}

export class ServiceProcess {
  private output = '';
  private exitCode: number | null | undefined;
  private readonly exited: Promise<number | null>;

  private constructor(
    readonly child: ChildProcess,
    readonly ports: { readonly http: number; readonly grpc: number; readonly debug: number },
  ) {
    child.stdout?.on('data', (chunk: Buffer) => {
      this.output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      this.output += chunk.toString();
    });
    this.exited = new Promise((resolve) => {
      child.once('exit', (code) => {
        this.exitCode = code;
        resolve(code);
      });
    });
  }

  static async start(options: ServiceProcessOptions): Promise<ServiceProcess> {
    const ports = { http: await freePort(), grpc: await freePort(), debug: await freePort() };
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(ports.http),
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: String(ports.grpc),
      DEBUG_HOST: '127.0.0.1',
      DEBUG_PORT: String(ports.debug),
      USE_STATSD: 'false',
      STATS_FLUSH_INTERVAL: '1h',
      LOG_LEVEL: 'info',
      EXPIRATION_JITTER_MAX_SECONDS: '0',
      ...options.env,
    };
    const child = spawn(process.execPath, [BIN.ratelimit], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const service = new ServiceProcess(child, ports);
    const waitFor = options.waitFor ?? 'healthy';
    if (waitFor !== 'nothing') {
      await eventually(
        async () => {
          if (service.exitCode !== undefined)
            throw new Error(
              `the service exited with ${String(service.exitCode)}:\n${service.output}`,
            );
          const res = await fetch(`http://127.0.0.1:${ports.http}/healthcheck`);
          return waitFor === 'listening' || res.status === 200;
        },
        { what: `the service to be ${waitFor}`, timeoutMs: 20_000 },
      ).catch((err: unknown) => {
        child.kill('SIGKILL');
        throw new Error(
          `${err instanceof Error ? err.message : String(err)}\n--- service output ---\n${service.output}`,
        );
      });
    }
    return service;
  }

  get logs(): string {
    return this.output;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.ports.http}${path}`;
  }

  debugUrl(path: string): string {
    return `http://127.0.0.1:${this.ports.debug}${path}`;
  }

  /** A statistic's value as the debug listener's /stats shows it (0 when absent). */
  async stat(name: string): Promise<number> {
    const text = await (await fetch(this.debugUrl('/stats'))).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}: `));
    return line === undefined ? 0 : Number(line.slice(name.length + 2));
  }

  /** POSTs a /json request and returns the status and parsed body. */
  async json(body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(this.url('/json'), {
      method: 'POST',
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
  }

  /** Sends a signal and waits for the exit code. */
  async signal(signal: NodeJS.Signals): Promise<number | null> {
    if (this.exitCode === undefined) this.child.kill(signal);
    return this.exited;
  }

  waitForExit(): Promise<number | null> {
    return this.exited;
  }

  /** Stops the process by its id if it still runs. */
  async stop(): Promise<void> {
    if (this.exitCode !== undefined) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }
}
