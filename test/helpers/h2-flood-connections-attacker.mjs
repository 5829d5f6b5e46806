// Many connections from one address, in a process of its own so that the attacker's CPU is not
// the innocent client's:
// `node h2-flood-connections-attacker.mjs PORT LOCAL_ADDRESS COUNT OPENING_FILE`.
// Opens COUNT connections from LOCAL_ADDRESS, 100 at a time, each sending the bytes of
// OPENING_FILE once; what the server sends is read and dropped. Once all are open it prints
// `{"openedMs": ...}`. Each line `stats` on standard input is answered with what happened so far:
// connections the server closed, those it closed before sending a byte (refused at accept),
// and those it answered. When standard input ends, every connection is cut and it exits.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import readline from 'node:readline';

const [port, localAddress, countText, openingFile] = process.argv.slice(2);
const count = Number(countText);
const opening = readFileSync(openingFile);
const BATCH = 100;

const sockets = [];
let closed = 0;
let refusedAtAccept = 0;
let answered = 0;

function connect() {
  const socket = net.connect({ port: Number(port), host: '127.0.0.1', localAddress });
  sockets.push(socket);
  let received = 0;
  socket.on('error', () => undefined);
  socket.on('data', (chunk) => {
    if (received === 0) answered += 1;
    received += chunk.length;
  });
  return new Promise((resolve) => {
    socket.once('connect', () => {
      socket.write(opening);
      resolve();
    });
    socket.once('close', () => {
      closed += 1;
      if (received === 0) refusedAtAccept += 1;
      resolve();
    });
  });
}

const started = performance.now();
for (let at = 0; at < count; at += BATCH) {
  await Promise.all(Array.from({ length: Math.min(BATCH, count - at) }, connect));
}
process.stdout.write(`${JSON.stringify({ openedMs: performance.now() - started })}\n`);

const lines = readline.createInterface({ input: process.stdin });
lines.on('line', () => {
  process.stdout.write(`${JSON.stringify({ closed, refusedAtAccept, answered })}\n`);
});
lines.once('close', () => {
  for (const socket of sockets) socket.destroy();
  process.exit(0);
});
