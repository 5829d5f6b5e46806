// The most recently closed streams of a connection and how each closed, so a frame arriving on
// one gets the answer RFC 9113 section 5.1 gives for its state, without keeping every stream.

/** How a stream closed, as far as frames arriving on it afterwards are concerned. */
export const ClosedHow = {
  /** The client sent END_STREAM: anything more from it on the stream is STREAM_CLOSED. */
  ENDED_BY_CLIENT: 1,
  /** The client sent RST_STREAM: likewise STREAM_CLOSED. */
  RESET_BY_CLIENT: 2,
  /** This side sent RST_STREAM: frames already on their way are ignored. */
  RESET_HERE: 3,
} as const;
export type ClosedHow = (typeof ClosedHow)[keyof typeof ClosedHow];

/** Enough for the frames in flight when a stream closes; older ones are forgotten. */
const REMEMBERED = 64;

export class ClosedStreams {
  private readonly ids = new Int32Array(REMEMBERED);
  private readonly hows = new Uint8Array(REMEMBERED);
  private next = 0;

  record(id: number, how: ClosedHow): void {
    this.ids[this.next] = id;
    this.hows[this.next] = how;
    this.next = (this.next + 1) % REMEMBERED;
  }

  /** How stream `id` closed, if it is among the remembered ones. */
  lookup(id: number): ClosedHow | undefined {
    for (let i = 0; i < REMEMBERED; i++) {
      if (this.ids[i] === id) return this.hows[i] as ClosedHow;
    }
    return undefined;
  }
}
