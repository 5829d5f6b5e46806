// The control-plane simulator started as a process (its bin), with its admin API.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { eventually } from './eventually';
import { freePort } from './ports';

const BIN = path.resolve(__dirname, '..', '..', 'bin', 'ratelimit-control-plane-sim.js');

export interface NodeStatus {
  connectedStreams: number;
  lastSentVersion?: string;
  lastAckVersion?: string;
  lastNack?: { version?: string; message: string };
  userAgent?: string;
  headers: Record<string, string>;
  metadata: Record<string, string>;
}

export interface SimStatus {
  version: string;
  resources: string[];
  nodes: Record<string, NodeStatus>;
}

export class SimProcess {
  private output = '';
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    readonly adminPort: number,
    private readonly args: string[],
  ) {}

  /** Starts the simulator serving `configDir`; `port` keeps an address across restarts. */
  static async start(
    configDir: string,
    extraArgs: string[] = [],
    port?: number,
  ): Promise<SimProcess> {
    const sim = new SimProcess(port ?? (await freePort()), await freePort(), [
      ...extraArgs,
      '-config_dir',
      configDir,
    ]);
    await sim.launch();
    return sim;
  }

  private async launch(): Promise<void> {
    const child = spawn(
      process.execPath,
      [BIN, ...this.args, '-port', String(this.port), '-admin_port', String(this.adminPort)],
      {
        env: { PATH: process.env.PATH ?? '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    this.child = child;
    child.stdout.on('data', (c: Buffer) => (this.output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (this.output += c.toString()));

    await eventually(() => this.output.includes('serving RateLimitConfig over ADS'), {
      what: `the simulator:\n${this.output}`,
    });
  }

  get logs(): string {
    return this.output;
  }

  async status(): Promise<SimStatus> {
    return (await (await fetch(this.admin('/status'))).json()) as SimStatus;
  }

  admin(pathName: string): string {
    return `http://127.0.0.1:${this.adminPort}${pathName}`;
  }

  async post(pathName: string, body?: string, method = 'POST'): Promise<void> {
    const res = await fetch(this.admin(pathName), {
      method,
      ...(body === undefined ? {} : { body }),
    });
    if (res.status !== 200)
      throw new Error(`${method} ${pathName}: ${res.status} ${await res.text()}`);
  }

  /** Stops the process by its id, at once, as a crash would. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child === undefined || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => {
        resolve();
      });
      child.kill('SIGKILL');
    });
  }

  /** Starts it again on the same ports, with fresh state. */
  async restart(): Promise<void> {
    await this.kill();
    this.output = '';
    await this.launch();
  }
}
