// The control-plane simulator started as a process (its bin), with its admin API. It binds
// ports the system picks and logs them; a restart binds the same ones again.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { eventually } from './eventually';

const BIN = path.resolve(__dirname, '..', '..', 'bin', 'ratelimit-control-plane-sim.js');

export interface NodeStatus {
  connectedStreams: number;
  lastSentVersion?: string;
  lastAckVersion?: string;
  lastNack?: { version?: string; message: string };
  /** DiscoveryRequests received from the node, on every stream. */
  requests: number;
  userAgent?: string;
  headers: Record<string, string>;
  metadata: Record<string, string>;
}

export interface SimStatus {
  version: string;
  resources: string[];
  nodes: Record<string, NodeStatus>;
}

/** The simulator's start-up line: `... over ADS on HOST:PORT[ (TLS)]; admin on http://HOST:PORT`. */
const SERVING = /serving RateLimitConfig over ADS on \S+:(\d+)\b.*; admin on http:\/\/\S+:(\d+)/;

export class SimProcess {
  private output = '';
  private child: ChildProcess | undefined;
  /** Both 0 until the first start reads back what the simulator bound. */
  private ports = { ads: 0, admin: 0 };

  private constructor(private readonly args: string[]) {}

  /** Starts the simulator serving `configDir` on ports it picks. */
  static async start(configDir: string, extraArgs: string[] = []): Promise<SimProcess> {
    const sim = new SimProcess([...extraArgs, '-config_dir', configDir]);
    await sim.launch();
    return sim;
  }

  /** The ADS port. */
  get port(): number {
    return this.ports.ads;
  }

  get adminPort(): number {
    return this.ports.admin;
  }

  private async launch(): Promise<void> {
    const child = spawn(
      process.execPath,
      [BIN, ...this.args, '-port', String(this.ports.ads), '-admin_port', String(this.ports.admin)],
      {
        env: { PATH: process.env.PATH ?? '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    this.child = child;
    child.stdout.on('data', (c: Buffer) => (this.output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (this.output += c.toString()));

    const match = await eventually(
      () => {
        if (child.exitCode !== null) throw new Error(`the simulator exited:\n${this.output}`);
        const serving = SERVING.exec(this.output);
        if (serving === null) throw new Error(`it has not said so yet:\n${this.output}`);
        return serving;
      },
      { what: 'the simulator to serve' },
    );
    this.ports = { ads: Number(match[1]), admin: Number(match[2]) };
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
