// The innocent client of the flood rig, in a process of its own: one HTTP/2 connection to the
// gRPC port (`node h2-flood-innocent.mjs PORT BODY_FILE [LOCAL_ADDRESS]`, from LOCAL_ADDRESS when
// given: another loopback address is another peer), kept across measurements. Each line
// `RATE MS` on standard input starts one: calls sent at RATE a second on a fixed schedule
// whatever the answers do (or, with RATE 0, four at a time, each sent when the last returned),
// for MS milliseconds; once every call has ended, one JSON line comes back: calls, OK answers,
// latency p50, p99 and max in ms, and this process's own longest event-loop delay.
import http2 from 'node:http2';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import readline from 'node:readline';

const [port, bodyFile, localAddress] = process.argv.slice(2);
const body = readFileSync(bodyFile);
const PATH = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';
const HEADERS = {
  ':method': 'POST',
  ':path': PATH,
  'content-type': 'application/grpc',
  te: 'trailers',
};
const CLOSED_LOOP_CALLS = 4;

const session = http2.connect(
  `http://127.0.0.1:${port}`,
  localAddress === undefined ? {} : { localAddress },
);
session.on('error', () => undefined);

/** One call; resolves with its milliseconds and whether it was answered OK. */
function call() {
  const started = performance.now();
  return new Promise((resolve) => {
    if (session.closed || session.destroyed) {
      resolve({ ms: 0, isOk: false });
      return;
    }
    const stream = session.request(HEADERS);
    let status;
    stream.on('response', (h) => (status = h['grpc-status'] ?? status));
    stream.on('trailers', (t) => (status = t['grpc-status']));
    stream.on('data', () => undefined);
    stream.on('error', () => undefined);
    stream.on('close', () => resolve({ ms: performance.now() - started, isOk: status === '0' }));
    stream.end(body);
  });
}

function percentile(sorted, q) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((q / 100) * sorted.length) - 1))];
}

async function openLoop(rate, ms) {
  const pending = [];
  const started = performance.now();
  let sent = 0;
  await new Promise((resolve) => {
    const tick = () => {
      const elapsed = performance.now() - started;
      const due = Math.min(Math.floor((elapsed / 1000) * rate), Math.floor((ms / 1000) * rate));
      for (; sent < due; sent++) pending.push(call());
      if (elapsed >= ms) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  return Promise.all(pending);
}

async function closedLoop(ms) {
  const end = performance.now() + ms;
  const results = [];
  const loop = async () => {
    while (performance.now() < end) results.push(await call());
  };
  await Promise.all(Array.from({ length: CLOSED_LOOP_CALLS }, loop));
  return results;
}

/**
 * This process's own event-loop delay: an answer read late because this client was not
 * scheduled (its CPU is shared with the attacker) counts in its latency like a slow server.
 */
const ownDelay = monitorEventLoopDelay({ resolution: 1 });
ownDelay.enable();

async function measure(rate, ms) {
  ownDelay.reset();
  const results = rate > 0 ? await openLoop(rate, ms) : await closedLoop(ms);
  const sorted = results.map((r) => r.ms).sort((a, b) => a - b);
  return {
    calls: results.length,
    ok: results.filter((r) => r.isOk).length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? 0,
    ownDelayMaxMs: ownDelay.max / 1e6,
  };
}

session.once('remoteSettings', () => {
  process.stdout.write('ready\n');
  const lines = readline.createInterface({ input: process.stdin });
  let queue = Promise.resolve();
  lines.on('line', (line) => {
    const [rate, ms] = line.trim().split(/\s+/).map(Number);
    queue = queue.then(async () => {
      process.stdout.write(`${JSON.stringify(await measure(rate, ms))}\n`);
    });
  });
  lines.once('close', () => {
    void queue.then(() => {
      session.destroy();
      process.exit(0);
    });
  });
});
