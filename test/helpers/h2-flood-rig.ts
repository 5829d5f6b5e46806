// The flood rig's processes: an attacker and an innocent client each in a process of its own
// (h2-flood-attacker.mjs or h2-flood-connections-attacker.mjs, and h2-flood-innocent.mjs),
// pinned to CPUs with taskset so that the service's CPU is the service's alone, and the
// service's CPU time and memory read from /proc.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { killAndWait } from './child-process';
import { missingProgram } from './programs';

/** One flood: what each attacking connection sends, and how. */
export interface FloodSpec {
  /** Sent once per connection, preface included. */
  readonly opening: Buffer;
  /** Sent again and again while the connection stays open (once when `once`). */
  readonly repeat: Buffer;
  readonly width: number;
  readonly once?: boolean;
  /** false: the attacker never reads what the server sends. */
  readonly isReading?: boolean;
}

/** What the attacker reports when stopped. */
export interface AttackSummary {
  readonly opened: number;
  readonly cut: number;
  readonly written: number;
}

/** One measurement of the innocent client. */
export interface InnocentWindow {
  readonly calls: number;
  readonly ok: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** The innocent client's own longest event-loop delay in the window, ms. */
  readonly ownDelayMaxMs: number;
}

const PROGRAMS = __dirname;

/** The CPUs of this machine for `taskset -c`: the service gets the first, the clients the rest. */
export function cpuSets(): { service: string; clients: string; innocent: string } {
  const check = spawnSync('taskset', ['--version'], { encoding: 'utf8' });
  if (check.error !== undefined) throw missingProgram('taskset', check.error.message);
  const run = spawnSync('nproc', [], { encoding: 'utf8' });
  const count = Number(run.stdout.trim()) || 1;
  if (count < 2) return { service: '0', clients: '0', innocent: '0' };
  const clients = `1-${String(count - 1)}`;
  return { service: '0', clients, innocent: process.env.H2_FLOOD_INNOCENT_CPUS ?? clients };
}

/** Pins every thread of `pid` to `cpus` (taskset -a). */
export function pin(pid: number, cpus: string): void {
  const run = spawnSync('taskset', ['-a', '-c', '-p', cpus, String(pid)], { encoding: 'utf8' });
  if (run.error !== undefined) throw missingProgram('taskset', run.error.message);
  if (run.status !== 0) throw new Error(`taskset failed: ${run.stderr}`);
}

/** User and system CPU seconds a process has used so far (/proc/PID/stat). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${String(pid)}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at ") ".
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks / 100;
}

function lines(child: ChildProcess): AsyncIterator<string> {
  if (child.stdout === null) throw new Error('no standard output to read');
  return readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
}

async function nextLine(reader: AsyncIterator<string>, what: string): Promise<string> {
  const next = await reader.next();
  if (next.done === true) throw new Error(`${what} ended without answering`);
  return next.value;
}

/** A node program of this directory on `cpus`, at `niceness`. */
function nodeProcess(
  script: string,
  args: readonly string[],
  cpus: string,
  niceness: number,
): ChildProcess {
  const command = ['nice', '-n', String(niceness), process.execPath, path.join(PROGRAMS, script)];
  const child = spawn('taskset', ['-c', cpus, ...command, ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  // A failure to start shows as the program ending without answering; cpuSets() checked.
  child.once('error', () => undefined);
  return child;
}

/** A running attack; stop() ends it and says what it did. */
export class Attacker {
  private readonly reader: AsyncIterator<string>;

  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
  ) {
    this.reader = lines(child);
  }

  static start(port: number, spec: FloodSpec, cpus: string): Attacker {
    const dir = mkdtempSync(path.join(tmpdir(), 'rl-flood-'));
    const file = (name: string, bytes: Buffer): string => {
      const at = path.join(dir, name);
      writeFileSync(at, bytes);
      return at;
    };
    const specFile = path.join(dir, 'spec.json');
    writeFileSync(
      specFile,
      JSON.stringify({
        opening: file('opening.bin', spec.opening),
        repeat: file('repeat.bin', spec.repeat),
        width: spec.width,
        once: spec.once === true,
        isReading: spec.isReading !== false,
      }),
    );
    // Niced: the innocent client on the same CPUs is served first when it wakes.
    const child = nodeProcess('h2-flood-attacker.mjs', [String(port), specFile], cpus, 10);
    return new Attacker(child, dir);
  }

  async stop(): Promise<AttackSummary> {
    try {
      this.child.stdin?.end();
      return JSON.parse(await nextLine(this.reader, 'the attacker')) as AttackSummary;
    } finally {
      await killAndWait(this.child);
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

/** What the connections attacker has seen so far. */
export interface ConnectionsSeen {
  /** Connections the server closed. */
  readonly closed: number;
  /** Of those, closed before the server sent a byte: refused at accept. */
  readonly refusedAtAccept: number;
  /** Connections the server sent a byte on (its SETTINGS): accepted. */
  readonly answered: number;
}

/**
 * Many connections from one address, each sending its opening once
 * (h2-flood-connections-attacker.mjs), niced as the flood attacker is.
 */
export class ConnectionsAttacker {
  private readonly reader: AsyncIterator<string>;

  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
  ) {
    this.reader = lines(child);
  }

  /** Opens `count` connections from `localAddress`; resolves once all are open, with how long. */
  static async open(
    port: number,
    localAddress: string,
    count: number,
    opening: Buffer,
    cpus: string,
  ): Promise<{ attacker: ConnectionsAttacker; openedMs: number }> {
    const dir = mkdtempSync(path.join(tmpdir(), 'rl-connections-'));
    const openingFile = path.join(dir, 'opening.bin');
    writeFileSync(openingFile, opening);
    const args = [String(port), localAddress, String(count), openingFile];
    const child = nodeProcess('h2-flood-connections-attacker.mjs', args, cpus, 10);
    const attacker = new ConnectionsAttacker(child, dir);
    const { openedMs } = JSON.parse(await nextLine(attacker.reader, 'the attacker')) as {
      openedMs: number;
    };
    return { attacker, openedMs };
  }

  async seen(): Promise<ConnectionsSeen> {
    this.child.stdin?.write('stats\n');
    return JSON.parse(await nextLine(this.reader, 'the attacker')) as ConnectionsSeen;
  }

  async stop(): Promise<void> {
    this.child.stdin?.end();
    await killAndWait(this.child);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The innocent client: one connection, measured window after window. */
export class Innocent {
  private readonly reader: AsyncIterator<string>;

  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
  ) {
    this.reader = lines(child);
  }

  /** `localAddress`: the loopback address it connects from (another peer than the attacker's). */
  static async start(
    port: number,
    body: Buffer,
    cpus: string,
    localAddress?: string,
  ): Promise<Innocent> {
    const dir = mkdtempSync(path.join(tmpdir(), 'rl-innocent-'));
    const bodyFile = path.join(dir, 'body.bin');
    writeFileSync(bodyFile, body);
    const args = [String(port), bodyFile, ...(localAddress === undefined ? [] : [localAddress])];
    const child = nodeProcess('h2-flood-innocent.mjs', args, cpus, 0);
    const innocent = new Innocent(child, dir);
    const ready = await nextLine(innocent.reader, 'the innocent client');
    if (ready !== 'ready') throw new Error(`the innocent client said ${ready}`);
    return innocent;
  }

  /** Calls at `rate` a second (0: four at a time, back to back) for `ms`. */
  async measure(rate: number, ms: number): Promise<InnocentWindow> {
    this.child.stdin?.write(`${String(rate)} ${String(ms)}\n`);
    return JSON.parse(await nextLine(this.reader, 'the innocent client')) as InnocentWindow;
  }

  async stop(): Promise<void> {
    this.child.stdin?.end();
    await killAndWait(this.child);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The median of `values` (0 when empty). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return 0;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] ?? 0)
    : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}
