// The built service started as a separate process (the `ratelimit` bin), its listeners on
// loopback ports the system picks, read back from its log.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { eventually } from './eventually';
import { LOOPBACK_LISTENERS, loggedPorts, type ListenerName } from './ports';

const ROOT = path.resolve(__dirname, '..', '..');
export const BIN = {
  ratelimit: path.join(ROOT, 'bin', 'ratelimit.js'),
  client: path.join(ROOT, 'bin', 'ratelimit-client.js'),
  configCheck: path.join(ROOT, 'bin', 'ratelimit-config-check.js'),
};

/** The longest an exited service's output is waited for. */
const OUTPUT_END_WAIT_MS = 2_000;

export interface ServiceProcessOptions {
  /** Settings; ports default to 0 (any free one), as the listeners report what they bound. */
  readonly env: Record<string, string>;
  /** Wait until /healthcheck answers 200 (default), or only until the HTTP port answers. */
  readonly waitFor?: 'healthy' | 'listening' | 'nothing';
  /** Options for node itself, before the script (V8's heap flags, which NODE_OPTIONS refuses). */
  readonly nodeArgs?: readonly string[];
}

/** The ports the service bound, as it logged them; reading one not logged yet throws. */
export type ServicePorts = Readonly<Record<ListenerName, number>>;

export class ServiceProcess {
  private output = '';
  /** Standard error alone, where the log lines go, whole whatever arrives on standard output. */
  private errors = '';
  private exitCode: number | null | undefined;
  private readonly exited: Promise<number | null>;
  private readonly known: Partial<Record<ListenerName, number>> = {};
  readonly ports: ServicePorts;

  private constructor(readonly child: ChildProcess) {
    const port = (name: ListenerName): number => this.port(name);
    this.ports = {
      get http() {
        return port('http');
      },
      get grpc() {
        return port('grpc');
      },
      get debug() {
        return port('debug');
      },
      get metrics() {
        return port('metrics');
      },
    };
    child.stdout?.on('data', (chunk: Buffer) => {
      this.output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      this.output += text;
      this.errors += text;
    });
    // Node emits 'exit' before the last output has been read from the pipes: a test that reads
    // the logs once the process has exited waits for the output's end as well (a worker that
    // outlived its supervisor could hold a pipe open, hence the bound).
    const outputEnded = Promise.all(
      [child.stdout, child.stderr].map((stream) =>
        stream === null || stream.readableEnded
          ? Promise.resolve()
          : new Promise((resolve) => stream.once('close', resolve)),
      ),
    );
    this.exited = new Promise((resolve) => {
      child.once('exit', (code) => {
        const bound = new Promise((bounded) => setTimeout(bounded, OUTPUT_END_WAIT_MS).unref());
        void Promise.race([outputEnded, bound]).then(() => {
          this.exitCode = code;
          resolve(code);
        });
      });
    });
  }

  static async start(options: ServiceProcessOptions): Promise<ServiceProcess> {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      ...LOOPBACK_LISTENERS,
      USE_STATSD: 'false',
      STATS_FLUSH_INTERVAL: '1h',
      LOG_LEVEL: 'info',
      EXPIRATION_JITTER_MAX_SECONDS: '0',
      // A view of the shared read buffer kept past its read fails the suite (poison-reads.ts).
      H2_POISON_READS: '1',
      ...options.env,
    };
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), BIN.ratelimit], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const service = new ServiceProcess(child);
    const waitFor = options.waitFor ?? 'healthy';
    if (waitFor !== 'nothing') {
      await eventually(
        async () => {
          if (service.exitCode !== undefined)
            throw new Error(
              `the service exited with ${String(service.exitCode)}:\n${service.output}`,
            );
          const res = await fetch(service.url('/healthcheck'));
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

  /** Standard error alone: the log lines, and whatever else was written there (a stack trace). */
  get stderr(): string {
    return this.errors;
  }

  /** A bound port from the service's log; throws until the service has logged it. */
  private port(name: ListenerName): number {
    const known = this.known[name] ?? loggedPorts(this.errors)[name];
    if (known === undefined) {
      throw new Error(
        `the service has not logged its ${name} port yet (its "listening" line, at info level: LOG_LEVEL=info)`,
      );
    }
    this.known[name] = known;
    return known;
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

  /**
   * Waits until the log holds `pattern` and returns the first line with it. A line the service
   * writes while it answers a request can reach this process after the answer: the answer comes
   * over a socket, the log over a pipe, and nothing orders the two.
   */
  async logged(pattern: string | RegExp, what?: string): Promise<string> {
    const matches = (line: string): boolean =>
      typeof pattern === 'string' ? line.includes(pattern) : pattern.test(line);
    return eventually(
      () => {
        const line = this.output.split('\n').find(matches);
        if (line === undefined) throw new Error(`no log line matches ${String(pattern)}`);
        return line;
      },
      { what: what ?? `a log line matching ${String(pattern)}` },
    );
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
