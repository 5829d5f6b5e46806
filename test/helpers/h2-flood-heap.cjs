// Preloaded into the service by the flood rig (NODE_OPTIONS=-r), never by the service itself:
// writes the process's memory every 200 ms to the file named by H2_FLOOD_HEAP_FILE, so that the
// rig can tell RSS held by live objects (V8 heap used, Buffers) from RSS the heap or the
// allocator keeps once the objects are garbage. On SIGUSR2, sent by the rig only once its
// figures are taken, it collects garbage and writes the memory then to FILE.collected: what
// was still live, and what RSS stays after the collection. The service itself never collects.
'use strict';
const { renameSync, writeFileSync } = require('node:fs');
const v8 = require('node:v8');
const vm = require('node:vm');

const file = process.env.H2_FLOOD_HEAP_FILE;
const MIB = 1024 * 1024;

function write(to) {
  const usage = process.memoryUsage();
  const line = {
    rss: usage.rss / MIB,
    heapUsed: usage.heapUsed / MIB,
    heapTotal: usage.heapTotal / MIB,
    external: usage.external / MIB,
  };
  // Written aside and renamed: the rig reads the file at any moment and must see it whole.
  writeFileSync(`${to}.tmp`, JSON.stringify(line));
  renameSync(`${to}.tmp`, to);
}

if (file !== undefined && file !== '') {
  write(file);
  setInterval(() => write(file), 200).unref();
  // The collector, for this preload alone: the service's global scope stays as it is.
  v8.setFlagsFromString('--expose-gc');
  const collect = vm.runInNewContext('gc');
  // The last-resort flavour is V8's CollectAllAvailableGarbage, what LowMemoryNotification runs:
  // a plain gc() leaves the young generation at its grown size and the freed pages committed,
  // so RSS after it still counts space that held garbage (30 MiB more, seen in h2-streams).
  const reduce = () => collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  // Freed Buffers leave the external count only once V8 has swept them, after the collection
  // returns: collect again a little later, then write.
  process.on('SIGUSR2', () => {
    reduce();
    setTimeout(() => {
      reduce();
      setTimeout(() => write(`${file}.collected`), 300);
    }, 300);
  });
}
