// What an HTTP/2 server did with a sequence of raw frames, in terms two implementations can be
// compared on: which streams were answered or reset with which code, and the connection error.
import { ACK, frame, PREFACE, RawClient, T } from './h2-frames';

export interface Outcome {
  /** GOAWAY's code when it was an error; undefined when none or NO_ERROR came. */
  readonly connectionError: number | undefined;
  /** Per stream: 'answered' (HEADERS came), or 'rst:CODE'. */
  readonly streams: Readonly<Record<number, string>>;
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Sends `bytes` after the preface and an empty SETTINGS, then reads what came back. Bytes that
 * end inside a frame (`isCut`) get no PING behind them: what came back in 100 ms counts.
 */
export async function outcomeOf(port: number, bytes: Buffer, isCut = false): Promise<Outcome> {
  const client = new RawClient(port, Buffer.concat([PREFACE, frame(T.SETTINGS, 0, 0), bytes]));
  try {
    if (isCut) await pause(100);
    // Two round trips: a server that answers a stream a tick after reading it has by then.
    for (let i = 0; i < 2 && !isCut && !client.isClosed; i++) {
      await Promise.race([client.roundTrip().catch(() => undefined), pause(200)]);
      await pause(10);
    }
  } finally {
    client.destroy();
  }
  const streams: Record<number, string> = {};
  let connectionError: number | undefined;
  for (const f of client.frames) {
    if (f.type === T.GOAWAY) {
      const code = f.payload.readUInt32BE(4);
      if (code !== 0) connectionError ??= code;
    } else if (f.type === T.HEADERS && f.stream !== 0) {
      streams[f.stream] = 'answered';
    } else if (f.type === T.RST_STREAM && streams[f.stream] === undefined) {
      streams[f.stream] = `rst:${String(f.payload.readUInt32BE(0))}`;
    } else if (f.type === T.PING && (f.flags & ACK) !== 0) {
      continue;
    }
  }
  return { connectionError, streams };
}
