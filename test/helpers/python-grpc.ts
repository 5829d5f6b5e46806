// Calls the built service from Debian's python3-grpcio (gRPC's C core), a client this project
// did not write: bytes in and bytes out, so no generated code, over plaintext or (mutual) TLS.
import { spawnSync } from 'node:child_process';
import { missingPythonModule } from './programs';

/** Debian's python3 is the one with python3-grpcio, whatever else is first on PATH. */
const DEBIAN_PYTHON = '/usr/bin/python3';

/** How the Python client reaches a TLS listener. */
export interface PythonTls {
  /** The CA the server certificate must chain to. */
  readonly ca: string;
  /** The name expected in the server certificate (the dial address is 127.0.0.1). */
  readonly serverName: string;
  /** The client certificate and key for mutual TLS. */
  readonly identity?: { readonly cert: string; readonly key: string };
}

// The C core does the HTTP/2, TLS, framing, deadlines and status handling.
const PYTHON_CALLER = `
import sys, json, grpc
address, method, tls, *bodies = sys.argv[1:]
tls = json.loads(tls)
read = lambda f: open(f, 'rb').read()
if tls:
    identity = (read(tls['key']), read(tls['cert'])) if 'cert' in tls else ()
    creds = grpc.ssl_channel_credentials(read(tls['ca']), *identity)
    options = [('grpc.ssl_target_name_override', tls['serverName'])]
    channel = grpc.secure_channel(address, creds, options=options)
else:
    channel = grpc.insecure_channel(address)
with channel:
    call = channel.unary_unary(method)
    for body in bodies:
        try:
            print('0', call(bytes.fromhex(body), timeout=5).hex())
        except grpc.RpcError as err:
            print(err.code().value[0], err.details())
`;

export interface PythonAnswer {
  /** The gRPC status code, 0 for OK. */
  readonly status: number;
  /** The response bytes in hex (status 0) or the status message. */
  readonly detail: string;
}

/** One call of `method` per body, in order, on one channel to 127.0.0.1:`port`. */
export function pythonCalls(
  port: number,
  method: string,
  bodies: readonly Buffer[],
  tls?: PythonTls,
): PythonAnswer[] {
  const tlsArg =
    tls === undefined
      ? {}
      : {
          ca: tls.ca,
          serverName: tls.serverName,
          ...(tls.identity === undefined ? {} : tls.identity),
        };
  const run = spawnSync(
    DEBIAN_PYTHON,
    [
      '-c',
      PYTHON_CALLER,
      `127.0.0.1:${port}`,
      method,
      JSON.stringify(tlsArg),
      ...bodies.map((b) => b.toString('hex')),
    ],
    { encoding: 'utf8', timeout: 20_000 },
  );
  if (run.error !== undefined) throw new Error(`cannot run ${DEBIAN_PYTHON}: ${run.error.message}`);
  if (run.status !== 0)
    throw new Error(
      missingPythonModule(run.stderr) ?? `python3 exited ${String(run.status)}: ${run.stderr}`,
    );
  return run.stdout
    .trim()
    .split('\n')
    .map((line) => {
      const space = line.indexOf(' ');
      return { status: Number(line.slice(0, space)), detail: line.slice(space + 1) };
    });
}
