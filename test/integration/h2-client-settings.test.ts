// ShouldRateLimit from clients whose HTTP/2 settings are not the defaults: nghttp with a header
// table of 0 (the answers must open with a table size update), a client that opens with an
// initial window of 0 and then grants a few bytes at a time, and h2load with a 16 MiB
// SETTINGS_MAX_FRAME_SIZE and a header table of 0. Each gets real answers.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { collectCleanups } from '../helpers/cleanups';
import {
  ACK,
  END_HEADERS,
  END_STREAM,
  frame,
  PREFACE,
  request,
  settings,
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
/** RateLimitResponse{overall_code OK}: field 1, varint 1. */
const OK_ANSWER = Buffer.from([0x08, 0x01]);

let service: ServiceProcess;
let url: string;
let bodyFile: string;
beforeAll(async () => {
  service = await ServiceProcess.start({ env: { ...runtime.env(), BACKEND_TYPE: 'memory' } });
  cleanup(() => service.stop());
  url = `http://127.0.0.1:${String(service.ports.grpc)}${RLS_PATH}`;
  const dir = mkdtempSync(path.join(tmpdir(), 'rl-h2-settings-'));
  cleanup(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  bodyFile = path.join(dir, 'request.bin');
  writeFileSync(bodyFile, BODY);
});

/** Runs a program to its end; a missing program fails naming it. */
function run(program: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', (err) => {
      reject(new Error(`${program} could not run (is nghttp2-client installed?): ${err.message}`));
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(output);
    });
  });
}

const GRPC_HEADERS = ['-H', 'content-type: application/grpc', '-H', 'te: trailers'];

it('nghttp with a header table size of 0: every answer reads, grpc-status 0', async () => {
  const output = await run('nghttp', [
    '-v',
    '--header-table-size=0',
    '--no-content-length',
    '-m',
    '3',
    '-d',
    bodyFile,
    ...GRPC_HEADERS,
    url,
  ]);
  expect(output).not.toMatch(/COMPRESSION_ERROR|recv GOAWAY/);
  expect(output.match(/recv \(stream_id=\d+\) grpc-status: 0/g)).toHaveLength(3);
});

it('a client opening with an initial window of 0, then granting 3 bytes at a time', async () => {
  const socket = net.connect(service.ports.grpc, '127.0.0.1');
  cleanup(() => {
    socket.destroy();
  });
  const body: Buffer[] = [];
  let status: string | undefined;
  await new Promise<void>((resolve, reject) => {
    let pending = Buffer.alloc(0);
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 9 && pending.length >= 9 + pending.readUIntBE(0, 3)) {
        const length = pending.readUIntBE(0, 3);
        const [type, flags] = [pending[3], pending[4] ?? 0];
        const payload = pending.subarray(9, 9 + length);
        pending = pending.subarray(9 + length);
        if (type === T.SETTINGS && (flags & ACK) === 0) socket.write(frame(T.SETTINGS, ACK, 0));
        if (type === T.HEADERS && (flags & END_STREAM) === 0) {
          socket.write(frame(T.WINDOW_UPDATE, 0, 1, words(3)));
        }
        if (type === T.DATA && length > 0) {
          body.push(payload);
          socket.write(frame(T.WINDOW_UPDATE, 0, 1, words(3)));
        }
        if (type === T.HEADERS && (flags & END_STREAM) !== 0) {
          status = /grpc-status.?0/.test(payload.toString('latin1'))
            ? '0'
            : payload.toString('hex');
          resolve();
        }
        if (type === T.GOAWAY || type === T.RST_STREAM)
          reject(new Error(`the server sent frame ${String(type)}`));
      }
    });
    const call = request(RLS_PATH, [
      ['content-type', 'application/grpc'],
      ['te', 'trailers'],
    ]);
    socket.write(
      Buffer.concat([
        PREFACE,
        frame(T.SETTINGS, 0, 0, settings([0x4, 0])),
        frame(T.HEADERS, END_HEADERS, 1, call),
        frame(T.DATA, END_STREAM, 1, BODY),
      ]),
    );
  });
  const answer = Buffer.concat(body);
  // The framed answer arrived 3 bytes at a time and starts with overall_code OK.
  expect(answer.subarray(5, 7)).toEqual(OK_ANSWER);
  expect(body.every((part) => part.length <= 3)).toBe(true);
  expect(status).toBe('0');
});

it('h2load with a 16 MiB frame size and a header table of 0: every call answered 200', async () => {
  const output = await run('h2load', [
    '-n',
    '300',
    '-c',
    '3',
    '-m',
    '10',
    '--max-frame-size=16777215',
    '--header-table-size=0',
    '-d',
    bodyFile,
    ...GRPC_HEADERS,
    url,
  ]);
  expect(output).toMatch(/requests: 300 total, 300 started, 300 done, 300 succeeded, 0 failed/);
  expect(output).toMatch(/status codes: 300 2xx/);
});
