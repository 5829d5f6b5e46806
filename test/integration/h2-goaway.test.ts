// Connection ageing with calls in flight: the two-phase GOAWAY (2^31-1 and a PING, then the
// last stream taken) leaves no call unanswered that a client sent before it learnt of the
// GOAWAY, so a client that does not retry (Envoy's rate limit filter) loses none.
import net from 'node:net';
import type * as grpc from '@grpc/grpc-js';
import { collectCleanups } from '../helpers/cleanups';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import {
  ACK,
  END_HEADERS,
  END_STREAM,
  frame,
  PREFACE,
  request,
  T,
  words,
} from '../helpers/h2-frames';
import { RLS_PATH } from '../helpers/h2-raw';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';

const CONFIG = {
  't.yaml':
    'domain: t\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 1000000 }\n',
};
const runtime = runtimeDirForFile(CONFIG);
const cleanup = collectCleanups();

/** ShouldRateLimit{domain t, descriptors [{k: v}]}, gRPC-framed. */
const MESSAGE = Buffer.from('0a01741208' + '0a060a016b120176', 'hex');
const BODY = Buffer.concat([Buffer.from([0, 0, 0, 0, MESSAGE.length]), MESSAGE]);
const CALL = request(RLS_PATH, [
  ['content-type', 'application/grpc'],
  ['te', 'trailers'],
]);

interface Outcome {
  answered: number;
  /** Sent, above the final GOAWAY's last stream id: never processed, safe to send again. */
  refused: number;
  /** Sent, at or below it, and never answered: lost. */
  lost: number;
}

/**
 * One connection that keeps `depth` calls in flight, opening a new one the moment one is
 * answered, until the server's first GOAWAY; then waits for the connection to end.
 */
function pipelineUntilGoaway(port: number, depth: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const inFlight = new Set<number>();
    let nextId = 1;
    let isGoawaySeen = false;
    let lastId = 2 ** 31 - 1;
    let answered = 0;
    let pending = Buffer.alloc(0);
    const call = (): void => {
      socket.write(
        Buffer.concat([
          frame(T.HEADERS, END_HEADERS, nextId, CALL),
          frame(T.DATA, END_STREAM, nextId, BODY),
        ]),
      );
      inFlight.add(nextId);
      nextId += 2;
    };
    const onFrame = (type: number, flags: number, id: number, payload: Buffer): void => {
      // The connection's window given back as answers arrive (streams' windows suffice).
      if (type === T.DATA && payload.length > 0) {
        socket.write(frame(T.WINDOW_UPDATE, 0, 0, words(payload.length)));
      }
      if (type === T.GOAWAY) {
        isGoawaySeen = true;
        lastId = payload.readUInt32BE(0) & 0x7fffffff;
      } else if (type === T.PING && (flags & ACK) === 0) {
        socket.write(frame(T.PING, ACK, 0, payload));
      } else if (type === T.SETTINGS && (flags & ACK) === 0) {
        socket.write(frame(T.SETTINGS, ACK, 0));
      } else if ((type === T.HEADERS || type === T.DATA) && (flags & END_STREAM) !== 0) {
        answered += 1;
        inFlight.delete(id);
        if (!isGoawaySeen) call();
      }
    };
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 9 && pending.length >= 9 + pending.readUIntBE(0, 3)) {
        const length = pending.readUIntBE(0, 3);
        onFrame(
          pending[3] ?? -1,
          pending[4] ?? 0,
          pending.readUInt32BE(5),
          pending.subarray(9, 9 + length),
        );
        pending = pending.subarray(9 + length);
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const left = [...inFlight];
      resolve({
        answered,
        refused: left.filter((id) => id > lastId).length,
        lost: left.filter((id) => id <= lastId).length,
      });
    });
    socket.write(Buffer.concat([PREFACE, frame(T.SETTINGS, 0, 0)]));
    for (let i = 0; i < depth; i++) call();
  });
}

async function ageingService(): Promise<ServiceProcess> {
  const service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      BACKEND_TYPE: 'memory',
      GRPC_MAX_CONNECTION_AGE: '200ms',
      GRPC_MAX_CONNECTION_AGE_GRACE: '10s',
    },
  });
  cleanup(() => service.stop());
  return service;
}

it('ages connections under pipelined calls: none refused, none lost', async () => {
  const service = await ageingService();
  const outcomes: Outcome[] = [];
  for (let i = 0; i < 8; i++) outcomes.push(await pipelineUntilGoaway(service.ports.grpc, 16));
  const total = outcomes.reduce(
    (sum, o) => ({
      answered: sum.answered + o.answered,
      refused: sum.refused + o.refused,
      lost: sum.lost + o.lost,
    }),
    { answered: 0, refused: 0, lost: 0 },
  );
  expect(total).toEqual({ answered: expect.any(Number) as number, refused: 0, lost: 0 });
  expect(total.answered).toBeGreaterThan(8 * 16);
});

it('grpc-js calling back to back while connections age: every call answered', async () => {
  const service = await ageingService();
  const client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  cleanup(() => {
    client.close();
  });
  const request = rlsRequest('t', [[['k', 'v']]]);
  const failed: string[] = [];
  let ok = 0;
  const until = performance.now() + 2000;
  const worker = async (): Promise<void> => {
    for (let i = 0; i < 100_000 && performance.now() < until; i++) {
      await client.shouldRateLimit(request).then(
        () => (ok += 1),
        (err: unknown) => failed.push(String((err as grpc.ServiceError).code)),
      );
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  expect(failed).toEqual([]);
  expect(ok).toBeGreaterThan(200);
});
