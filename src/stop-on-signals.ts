// How a service process ends: drained on SIGTERM or SIGINT, or when its supervisor goes away.
import { describeError } from './lib/errors';

/** Stops cleanly on SIGTERM or SIGINT; a worker also stops when its supervisor goes away. */
export function stopOnSignals(service: { stop(): Promise<void> }, isWorker: boolean): void {
  if (isWorker) {
    // Without its supervisor a worker gets no more connections: drain and go.
    process.once('disconnect', () => {
      void service.stop().then(() => process.exit(0));
    });
  }
  const onSignal = (signal: NodeJS.Signals): void => {
    process.stderr.write(`ratelimit: ${signal} received, draining\n`);
    service.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`ratelimit: error while stopping: ${describeError(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}
