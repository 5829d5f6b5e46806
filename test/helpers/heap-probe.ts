// The test side of h2-flood-heap.cjs, the preload that writes a service's memory every 200 ms
// and collects garbage on SIGUSR2: the environment that loads it, the last figures it wrote,
// and a collection asked for, so that a rig can tell RSS held by live objects from RSS the heap
// or the allocator keeps once they are garbage.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from './eventually';

/** The service's memory as the preload wrote it, in MiB. */
export interface Heap {
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
}

export class HeapProbe {
  private readonly dir = mkdtempSync(path.join(tmpdir(), 'rl-heap-'));
  private readonly file = path.join(this.dir, 'heap.json');

  /** Settings that load the preload into the service (its NODE_OPTIONS). */
  get env(): Record<string, string> {
    return {
      NODE_OPTIONS: `-r ${path.join(__dirname, 'h2-flood-heap.cjs')}`,
      H2_FLOOD_HEAP_FILE: this.file,
    };
  }

  /** What the preload last wrote. */
  latest(): Heap {
    return JSON.parse(readFileSync(this.file, 'utf8')) as Heap;
  }

  /** Has the preload of process `pid` collect garbage, and returns the memory then. */
  async collected(pid: number): Promise<Heap> {
    const file = `${this.file}.collected`;
    rmSync(file, { force: true });
    process.kill(pid, 'SIGUSR2');
    await eventually(() => {
      expect(existsSync(file)).toBe(true);
    });
    return JSON.parse(readFileSync(file, 'utf8')) as Heap;
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
