// TLS and mutual TLS on the gRPC listener of the built service, with certificates made by
// openssl: who is refused, and certificates renewed (in place, broken, by a symlink swap)
// while the service runs; on the service's own HTTP/2 and on node:http2 (GRPC_HTTP2=node).
import * as grpc from '@grpc/grpc-js';
import { X509Certificate } from 'node:crypto';
import tls, { type PeerCertificate } from 'node:tls';
import {
  copyFileSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { makeCertificates, type Certificates } from '../helpers/certs';
import { eventually } from '../helpers/eventually';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import { pythonCalls, type PythonTls } from '../helpers/python-grpc';
import { RuntimeDir } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';

const SERVER_NAME = 'ratelimit.test';
const CONFIG = {
  'tls.yaml':
    'domain: tls\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 100 }\n',
};
const REQUEST = rlsRequest('tls', [[['k', 'v']]]);
const HANDSHAKE_ERROR = 'ratelimit.tls.grpc_server.handshake_error';

interface Client {
  readonly rls: RlsClient;
  /** Serial numbers of the server certificates this client's connections were shown. */
  readonly serials: string[];
}

/**
 * A grpc-js client on its own connection (no subchannel shared with other clients), trusting
 * `ca`, presenting `identity` when given, and recording the server certificate it is shown.
 */
function tlsClient(port: number, ca: string, identity?: { cert: string; key: string }): Client {
  const serials: string[] = [];
  const creds = grpc.credentials.createSsl(
    readFileSync(ca),
    identity === undefined ? null : readFileSync(identity.key),
    identity === undefined ? null : readFileSync(identity.cert),
    {
      checkServerIdentity: (_host: string, cert: PeerCertificate) => {
        serials.push(cert.serialNumber);
        return undefined;
      },
    },
  );
  const rls = new RlsClient(
    `127.0.0.1:${port}`,
    { 'grpc.ssl_target_name_override': SERVER_NAME, 'grpc.use_local_subchannel_pool': 1 },
    creds,
  );
  return { rls, serials };
}

function serialOf(certFile: string): string {
  return new X509Certificate(readFileSync(certFile)).serialNumber;
}

/** Replaces `target` with `source`'s bytes in one rename, as cert-manager and most tools do. */
function replaceFile(source: string, target: string): void {
  const temporary = `${target}.tmp`;
  copyFileSync(source, temporary);
  renameSync(temporary, target);
}

/** ShouldRateLimit of domain tls, k=v, as its protobuf bytes. */
const REQUEST_BYTES = Buffer.from('0a03746c7312080a060a016b120176', 'hex');
const RLS_METHOD = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';

describe.each(['own', 'node'])('on GRPC_HTTP2=%s', (http2Impl) => {
  describe('gRPC over mutual TLS', () => {
    let certs: Certificates;
    let runtime: RuntimeDir;
    let service: ServiceProcess;
    let served: { cert: string; key: string };
    const clients: Client[] = [];
    const open = (identity?: { cert: string; key: string }, ca?: string): Client => {
      const client = tlsClient(service.ports.grpc, ca ?? certs.caCert, identity);
      clients.push(client);
      return client;
    };
    const goodIdentity = (): { cert: string; key: string } => ({
      cert: certs.clientCert,
      key: certs.clientKey,
    });

    beforeAll(async () => {
      certs = makeCertificates(SERVER_NAME);
      const dir = path.join(certs.dir, 'served');
      mkdirSync(dir);
      served = { cert: path.join(dir, 'tls.crt'), key: path.join(dir, 'tls.key') };
      copyFileSync(certs.serverCert, served.cert);
      copyFileSync(certs.serverKey, served.key);
      runtime = new RuntimeDir(CONFIG);
      service = await ServiceProcess.start({
        env: {
          ...runtime.env(),
          BACKEND_TYPE: 'memory',
          GRPC_SERVER_USE_TLS: 'true',
          GRPC_SERVER_TLS_CERT: served.cert,
          GRPC_SERVER_TLS_KEY: served.key,
          GRPC_CLIENT_TLS_CACERT: certs.caCert,
          GRPC_CLIENT_TLS_SAN: 'ratelimit-client',
          GRPC_HTTP2: http2Impl,
        },
      });
    });

    afterAll(async () => {
      for (const client of clients) client.rls.close();
      await service.stop();
      runtime.destroy();
      certs.destroy();
    });

    it('runs on the HTTP/2 GRPC_HTTP2 names', () => {
      expect(service.logs.includes('node:http2 (GRPC_HTTP2=node)')).toBe(http2Impl === 'node');
    });

    it('answers a client with a certificate from the CA and the required SAN', async () => {
      const client = open(goodIdentity());
      const response = await client.rls.shouldRateLimit(REQUEST);
      expect(response.overallCode).toBe('OK');
      expect(client.serials).toEqual([serialOf(certs.serverCert)]);
    });

    it("answers a client this project did not write: Debian's python3-grpcio (C-core)", () => {
      const tlsTo = (identity?: { cert: string; key: string }): PythonTls => ({
        ca: certs.caCert,
        serverName: SERVER_NAME,
        ...(identity === undefined ? {} : { identity }),
      });
      const port = service.ports.grpc;
      const [ok] = pythonCalls(port, RLS_METHOD, [REQUEST_BYTES], tlsTo(goodIdentity()));
      // Field 1 (overall_code) = 1 (OK).
      expect(ok?.status).toBe(0);
      expect(ok?.detail.startsWith('0801')).toBe(true);
      const [refused] = pythonCalls(port, RLS_METHOD, [REQUEST_BYTES], tlsTo());
      expect(refused?.status).toBe(grpc.status.UNAVAILABLE);
    });

    it.each([
      ['h2 over TLS 1.2', { ALPNProtocols: ['h2'], maxVersion: 'TLSv1.2' }, /^accepted with h2/],
      ['HTTP/1.1 alone in ALPN', { ALPNProtocols: ['http/1.1'] }, /^refused: /],
      [
        'TLS 1.1',
        {
          ALPNProtocols: ['h2'],
          minVersion: 'TLSv1',
          maxVersion: 'TLSv1.1',
          ciphers: 'DEFAULT@SECLEVEL=0',
        },
        /^refused: /,
      ],
    ] as const)('answers a handshake offering %s as it should', async (_what, offer, expected) => {
      const outcome = await new Promise<string>((resolve) => {
        const socket = tls.connect({
          host: '127.0.0.1',
          port: service.ports.grpc,
          servername: SERVER_NAME,
          ca: readFileSync(certs.caCert),
          cert: readFileSync(certs.clientCert),
          key: readFileSync(certs.clientKey),
          ...offer,
        });
        socket.once('secureConnect', () => {
          socket.destroy();
          resolve(
            `accepted with ${String(socket.alpnProtocol)} over ${String(socket.getProtocol())}`,
          );
        });
        socket.once('error', (err) => {
          resolve(`refused: ${err.message}`);
        });
      });
      expect(outcome).toMatch(expected);
    });

    /** Runs `refused` and checks the service counted at least one more failed handshake. */
    async function countsHandshakeError(refused: () => Promise<void>): Promise<void> {
      const before = await service.stat(HANDSHAKE_ERROR);
      await refused();
      await eventually(async () => (await service.stat(HANDSHAKE_ERROR)) > before, {
        what: 'the failed handshake to be counted',
      });
    }

    it('refuses a plaintext client', async () => {
      const plain = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
      try {
        await countsHandshakeError(async () => {
          const err = await plain.error(REQUEST);
          expect(err.code).toBe(grpc.status.UNAVAILABLE);
        });
      } finally {
        plain.close();
      }
    });

    it('refuses a client without a certificate, in the handshake', async () => {
      await countsHandshakeError(async () => {
        const err = await open().rls.error(REQUEST);
        expect(err.code).toBe(grpc.status.UNAVAILABLE);
      });
    });

    it('refuses a client whose certificate another CA signed', async () => {
      const stranger = certs.issue('stranger', 'DNS:ratelimit-client', 'other-ca');
      await countsHandshakeError(async () => {
        const err = await open(stranger).rls.error(REQUEST);
        expect(err.code).toBe(grpc.status.UNAVAILABLE);
      });
    });

    it('refuses a client whose certificate lacks the SAN, logging the names it presented', async () => {
      const intruder = certs.issue('intruder', 'DNS:intruder.test,DNS:other.test');
      const before = await service.stat('ratelimit.tls.grpc_server.client_san_refused');
      const err = await open(intruder).rls.error(REQUEST);
      expect(err.code).toBe(grpc.status.UNAVAILABLE);
      await service.logged(
        /refused a gRPC client whose certificate lacks the required SAN.*required=ratelimit-client presented="intruder\.test,other\.test"/,
      );
      expect(await service.stat('ratelimit.tls.grpc_server.client_san_refused')).toBeGreaterThan(
        before,
      );
    });

    it('serves a renewed certificate to new connections while old ones keep answering', async () => {
      const old = open(goodIdentity());
      expect((await old.rls.shouldRateLimit(REQUEST)).overallCode).toBe('OK');
      const oldSerial = serialOf(served.cert);
      expect(old.serials).toEqual([oldSerial]);

      const renewed = certs.issue('renewed', `DNS:${SERVER_NAME}`);
      const newSerial = serialOf(renewed.cert);
      expect(newSerial).not.toBe(oldSerial);
      replaceFile(renewed.key, served.key);
      replaceFile(renewed.cert, served.cert);
      await eventually(
        async () => {
          const fresh = open(goodIdentity());
          await fresh.rls.shouldRateLimit(REQUEST);
          return fresh.serials.includes(newSerial);
        },
        { what: 'a new connection to be shown the renewed certificate' },
      );
      // The old connection was not cut: it answers without a new handshake.
      expect((await old.rls.shouldRateLimit(REQUEST)).overallCode).toBe('OK');
      expect(old.serials).toEqual([oldSerial]);
      expect(await service.stat('ratelimit.tls.grpc_server.reload_success')).toBeGreaterThan(0);
    });

    it('keeps the previous credentials when a file is broken, naming it and counting it', async () => {
      const serving = serialOf(served.cert);
      const good = path.join(certs.dir, 'serving.crt');
      copyFileSync(served.cert, good);
      const errorsBefore = await service.stat('ratelimit.tls.grpc_server.reload_error');
      writeFileSync(served.cert, '-----BEGIN CERTIFICATE-----\nMIIcut short');
      await eventually(
        async () => (await service.stat('ratelimit.tls.grpc_server.reload_error')) > errorsBefore,
        { what: 'the broken certificate to be counted' },
      );
      await service.logged(
        `msg="gRPC TLS files not reloaded; the previous credentials keep serving" setting=GRPC_SERVER_TLS_CERT file=${served.cert}`,
      );
      const fresh = open(goodIdentity());
      expect((await fresh.rls.shouldRateLimit(REQUEST)).overallCode).toBe('OK');
      expect(fresh.serials).toEqual([serving]);

      // A key that belongs to another certificate is refused the same way, naming the key.
      const other = certs.issue('other', `DNS:${SERVER_NAME}`);
      replaceFile(good, served.cert);
      const reloads = await service.stat('ratelimit.tls.grpc_server.reload_success');
      replaceFile(other.key, served.key);
      await eventually(
        () =>
          service.logs.includes(
            `setting=GRPC_SERVER_TLS_KEY file=${served.key} reason="the private key does not match the certificate`,
          ),
        { what: 'the mismatched key to be refused' },
      );
      const after = open(goodIdentity());
      expect((await after.rls.shouldRateLimit(REQUEST)).overallCode).toBe('OK');
      expect(after.serials).toEqual([serving]);
      // Restoring the bytes already served is no new certificate.
      expect(await service.stat('ratelimit.tls.grpc_server.reload_success')).toBe(reloads);
    });

    it('trusts a renewed client CA bundle for new connections', async () => {
      const stranger = certs.issue('newcomer', 'DNS:ratelimit-client', 'other-ca');
      expect((await open(stranger).rls.error(REQUEST)).code).toBe(grpc.status.UNAVAILABLE);
      // The previous test left a key that matches nothing: serve a fresh, matching pair.
      const rotated = certs.issue('rotated', `DNS:${SERVER_NAME}`);
      replaceFile(rotated.key, served.key);
      replaceFile(rotated.cert, served.cert);
      const bundle = path.join(certs.dir, 'bundle.crt');
      writeFileSync(
        bundle,
        Buffer.concat([readFileSync(certs.caCert), readFileSync(certs.otherCaCert)]),
      );
      replaceFile(bundle, certs.caCert);
      let accepted: Client | undefined;
      await eventually(
        async () => {
          const fresh = open(stranger);
          try {
            await fresh.rls.shouldRateLimit(REQUEST);
            accepted = fresh;
            return true;
          } catch {
            return false;
          }
        },
        { what: 'a client of the CA added to GRPC_CLIENT_TLS_CACERT to be accepted' },
      );
      expect(accepted?.serials).toEqual([serialOf(rotated.cert)]);
    });
  });

  describe('gRPC TLS from a Kubernetes Secret mount', () => {
    let certs: Certificates;
    let runtime: RuntimeDir;
    let service: ServiceProcess | undefined;
    let mount: string;
    const clients: Client[] = [];

    /** Lays out a Secret volume: `..<version>/` holds the files, `..data` points at it. */
    function publish(version: string, files: { cert: string; key: string }): void {
      const dir = path.join(mount, `..${version}`);
      mkdirSync(dir);
      copyFileSync(files.cert, path.join(dir, 'tls.crt'));
      copyFileSync(files.key, path.join(dir, 'tls.key'));
      symlinkSync(`..${version}`, path.join(mount, '..data_tmp'));
      renameSync(path.join(mount, '..data_tmp'), path.join(mount, '..data'));
    }

    beforeAll(() => {
      certs = makeCertificates(SERVER_NAME);
      runtime = new RuntimeDir(CONFIG);
      mount = path.join(certs.dir, 'secret');
      mkdirSync(mount);
      publish('2024_01_01', { cert: certs.serverCert, key: certs.serverKey });
      symlinkSync('..data/tls.crt', path.join(mount, 'tls.crt'));
      symlinkSync('..data/tls.key', path.join(mount, 'tls.key'));
    });

    afterAll(async () => {
      for (const client of clients) client.rls.close();
      await service?.stop();
      runtime.destroy();
      certs.destroy();
    });

    it('picks up the atomic swap of the ..data symlink', async () => {
      service = await ServiceProcess.start({
        env: {
          ...runtime.env(),
          BACKEND_TYPE: 'memory',
          GRPC_SERVER_USE_TLS: 'true',
          GRPC_SERVER_TLS_CERT: path.join(mount, 'tls.crt'),
          GRPC_SERVER_TLS_KEY: path.join(mount, 'tls.key'),
          GRPC_HTTP2: http2Impl,
        },
      });
      const port = service.ports.grpc;
      const first = tlsClient(port, certs.caCert);
      clients.push(first);
      await first.rls.shouldRateLimit(REQUEST);
      expect(first.serials).toEqual([serialOf(certs.serverCert)]);

      const renewed = certs.issue('renewed', `DNS:${SERVER_NAME}`);
      publish('2024_02_01', renewed);
      rmSync(path.join(mount, '..2024_01_01'), { recursive: true });
      await eventually(
        async () => {
          const fresh = tlsClient(port, certs.caCert);
          clients.push(fresh);
          await fresh.rls.shouldRateLimit(REQUEST);
          return fresh.serials.includes(serialOf(renewed.cert));
        },
        { what: 'the certificate of the new ..data directory to be served' },
      );
      expect((await first.rls.shouldRateLimit(REQUEST)).overallCode).toBe('OK');
    });
  });
});

describe('gRPC TLS start-up', () => {
  // Envoy Gateway sets GRPC_SERVER_TLS_CA_CERT (envoyproxy/gateway
  // internal/infrastructure/kubernetes/ratelimit/resource.go, GRPCServerTLSCACertEnvVar), but the
  // reference reads no such setting (envoyproxy/ratelimit src/settings/settings.go: its client CA
  // is GRPC_CLIENT_TLS_CACERT alone), so there a client without a certificate is served.
  it('says at start that GRPC_SERVER_TLS_CA_CERT is ignored, and asks no client certificate', async () => {
    const certs = makeCertificates(SERVER_NAME);
    const runtime = new RuntimeDir(CONFIG);
    const service = await ServiceProcess.start({
      env: {
        ...runtime.env(),
        BACKEND_TYPE: 'memory',
        GRPC_SERVER_USE_TLS: 'true',
        GRPC_SERVER_TLS_CERT: certs.serverCert,
        GRPC_SERVER_TLS_KEY: certs.serverKey,
        GRPC_SERVER_TLS_CA_CERT: certs.caCert,
      },
    });
    const client = tlsClient(service.ports.grpc, certs.caCert);
    try {
      const warning = service.logs
        .split('\n')
        .find((line) => line.includes('GRPC_SERVER_TLS_CA_CERT'));
      expect(warning).toMatch(/warn/i);
      expect(warning).toContain('GRPC_CLIENT_TLS_CACERT');
      expect(warning).toContain(certs.caCert);
      expect((await client.rls.shouldRateLimit(REQUEST)).overallCode).toBe('OK');
    } finally {
      client.rls.close();
      await service.stop();
      runtime.destroy();
      certs.destroy();
    }
  });

  it('stops when a file is missing, naming the setting and the file', async () => {
    const certs = makeCertificates(SERVER_NAME);
    const runtime = new RuntimeDir(CONFIG);
    try {
      const missing = path.join(certs.dir, 'absent.key');
      const service = await ServiceProcess.start({
        env: {
          ...runtime.env(),
          BACKEND_TYPE: 'memory',
          GRPC_SERVER_USE_TLS: 'true',
          GRPC_SERVER_TLS_CERT: certs.serverCert,
          GRPC_SERVER_TLS_KEY: missing,
        },
        waitFor: 'nothing',
      });
      expect(await service.waitForExit()).toBe(1);
      expect(service.logs).toContain(
        `ratelimit: GRPC_SERVER_TLS_KEY (${missing}): cannot read the file: ENOENT`,
      );
    } finally {
      runtime.destroy();
      certs.destroy();
    }
  });
});
