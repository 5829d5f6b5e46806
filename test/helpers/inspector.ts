// A full collection in a service process, asked for over its inspector, for figures of memory
// that mean what the process holds rather than when V8 last collected. The service is started
// with INSPECTED (a loopback port the system picks) and prints where it listens on standard
// error; HeapProfiler.collectGarbage is the DevTools protocol's own request, V8's
// LowMemoryNotification: every generation collected, the young one shrunk, free pages given back.

/** Node's options for a service whose heap a test collects (collectGarbage). */
export const INSPECTED: readonly string[] = ['--inspect=127.0.0.1:0'];

const LISTENING = /Debugger listening on (ws:\/\/\S+)/;
/** A collection of a few hundred MiB takes some hundred milliseconds; this is far past that. */
const COLLECT_TIMEOUT_MS = 10_000;

/** Collects the heap of the service whose standard error so far is `stderr`. */
export async function collectGarbage(stderr: string): Promise<void> {
  const url = LISTENING.exec(stderr)?.[1];
  if (url === undefined) throw new Error('the service was not started with INSPECTED');
  const socket = new WebSocket(url);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => {
        resolve();
      });
      socket.addEventListener('error', () => {
        reject(new Error(`no inspector at ${url}`));
      });
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(
          new Error(`HeapProfiler.collectGarbage unanswered in ${String(COLLECT_TIMEOUT_MS)} ms`),
        );
      }, COLLECT_TIMEOUT_MS);
      socket.addEventListener('message', (event: MessageEvent) => {
        const reply = JSON.parse(String(event.data)) as {
          id?: number;
          error?: { message: string };
        };
        if (reply.id !== 1) return;
        clearTimeout(timer);
        if (reply.error === undefined) resolve();
        else reject(new Error(`HeapProfiler.collectGarbage: ${reply.error.message}`));
      });
      socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
    });
  } finally {
    socket.close();
  }
}
