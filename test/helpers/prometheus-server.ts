// Debian's prometheus on a loopback port, scraping given targets every second, stopped by its
// process id. Prometheus cannot report a port it picked, so a free one is chosen and a bind that
// loses the race to another process is retried on another port, a bounded number of times.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { killAndWait } from './child-process';
import { eventually } from './eventually';
import { missingProgram } from './programs';
import { unusedPort } from './ports';

const BIND_ATTEMPTS = 5;

/** One series of an instant query's answer. */
export interface PromSample {
  readonly metric: Readonly<Record<string, string>>;
  readonly value: readonly [number, string];
}

export class PrometheusServer {
  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    readonly port: number,
    private readonly output: () => string,
  ) {}

  /** Starts prometheus scraping `targets` (host:port) at /metrics every second, with `ruleFiles`. */
  static async start(targets: readonly string[], ruleFiles: readonly string[] = []) {
    const dir = mkdtempSync(path.join(tmpdir(), 'rl-prometheus-'));
    const config = path.join(dir, 'prometheus.yml');
    writeFileSync(
      config,
      JSON.stringify({
        global: { scrape_interval: '1s', evaluation_interval: '1s' },
        rule_files: ruleFiles,
        scrape_configs: [{ job_name: 'ratelimit', static_configs: [{ targets }] }],
      }),
    );
    for (let attempt = 1; ; attempt++) {
      const port = await unusedPort();
      const server = PrometheusServer.launch(dir, config, port);
      const ready = await server.ready();
      if (ready) return server;
      const output = server.output();
      await server.stop();
      if (!/address already in use/i.test(output) || attempt >= BIND_ATTEMPTS)
        throw new Error(`prometheus on port ${port} did not become ready:\n${output}`);
    }
  }

  private static launch(dir: string, config: string, port: number): PrometheusServer {
    const child = spawn(
      'prometheus',
      [
        `--config.file=${config}`,
        `--web.listen-address=127.0.0.1:${port}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const keep = (chunk: Buffer): void => {
      output += chunk.toString();
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', (err) => {
      output += `\n${missingProgram('prometheus', err.message).message}`;
    });
    return new PrometheusServer(child, dir, port, () => output);
  }

  /** True once /-/ready answers 200; false if the process exits first. */
  private async ready(): Promise<boolean> {
    return eventually(
      async () => {
        if (this.child.exitCode !== null || this.child.signalCode !== null) return 'exited';
        const res = await fetch(`http://127.0.0.1:${this.port}/-/ready`);
        return res.status === 200 ? 'ready' : false;
      },
      { what: 'prometheus to be ready', timeoutMs: 20_000, intervalMs: 100 },
    ).then((state) => state === 'ready');
  }

  /** An instant query; throws with Prometheus's error for one it refuses. */
  async query(expr: string): Promise<PromSample[]> {
    const res = await fetch(
      `http://127.0.0.1:${this.port}/api/v1/query?query=${encodeURIComponent(expr)}`,
    );
    const body = (await res.json()) as {
      status: string;
      error?: string;
      data?: { resultType: string; result: PromSample[] };
    };
    if (body.status !== 'success' || body.data === undefined)
      throw new Error(`prometheus refused ${expr}: ${body.error ?? res.status}`);
    if (body.data.resultType !== 'vector')
      throw new Error(`${expr} gives a ${body.data.resultType}, not a vector`);
    return body.data.result;
  }

  /** The rule groups Prometheus loaded, with each rule's health. */
  async rules(): Promise<{ name: string; health: string; lastError?: string }[]> {
    const res = await fetch(`http://127.0.0.1:${this.port}/api/v1/rules`);
    const body = (await res.json()) as {
      data: { groups: { rules: { name: string; health: string; lastError?: string }[] }[] };
    };
    return body.data.groups.flatMap((g) => g.rules);
  }

  async stop(): Promise<void> {
    await killAndWait(this.child);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
