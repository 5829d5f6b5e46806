// A throwaway certificate authority and certificates for TLS tests, made with openssl.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runProgram } from './programs';

export interface Certificates {
  readonly dir: string;
  readonly caCert: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
  /** A second CA, which signed nothing above, for tests that must fail verification. */
  readonly otherCaCert: string;
  /**
   * Issues one more certificate (a new serial each time) into the directory, signed by `ca`
   * ('ca' or 'other-ca'), with `san` as its subjectAltName (`DNS:a,DNS:b`).
   */
  issue(name: string, san: string, ca?: 'ca' | 'other-ca'): { cert: string; key: string };
  /** A client certificate signed by the second CA, which a server trusting `caCert` refuses. */
  readonly otherClientCert: string;
  readonly otherClientKey: string;
  destroy(): void;
}

function openssl(dir: string, args: string[]): void {
  const run = runProgram('openssl', args, { cwd: dir });
  if (run.status !== 0) throw new Error(`openssl ${args.join(' ')} failed:\n${run.stderr}`);
}

function issue(dir: string, name: string, subject: string, san: string, ca: string): void {
  openssl(dir, [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    subject,
  ]);
  writeFileSync(
    path.join(dir, `${name}.ext`),
    `subjectAltName=${san}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n`,
  );
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.crt`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-out',
    `${name}.crt`,
    '-days',
    '2',
    '-extfile',
    `${name}.ext`,
  ]);
}

/**
 * Makes a CA, a server certificate for `serverName` (a host name, or an IP address such as
 * 127.0.0.1) and client certificates.
 */
export function makeCertificates(serverName: string): Certificates {
  const dir = mkdtempSync(path.join(tmpdir(), 'rl-certs-'));
  const file = (name: string): string => path.join(dir, name);
  for (const ca of ['ca', 'other-ca']) {
    openssl(dir, [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${ca}.key`,
      '-out',
      `${ca}.crt`,
      '-days',
      '2',
      '-subj',
      `/CN=test ${ca}`,
    ]);
  }
  const isIp = /^[\d.]+$|:/.test(serverName);
  issue(dir, 'server', `/CN=${serverName}`, `${isIp ? 'IP' : 'DNS'}:${serverName}`, 'ca');
  issue(dir, 'client', '/CN=ratelimit-client', 'DNS:ratelimit-client', 'ca');
  issue(dir, 'other-client', '/CN=ratelimit-client', 'DNS:ratelimit-client', 'other-ca');
  return {
    dir,
    caCert: file('ca.crt'),
    serverCert: file('server.crt'),
    serverKey: file('server.key'),
    clientCert: file('client.crt'),
    clientKey: file('client.key'),
    otherCaCert: file('other-ca.crt'),
    issue: (name, san, ca = 'ca') => {
      issue(dir, name, `/CN=${name}`, san, ca);
      return { cert: file(`${name}.crt`), key: file(`${name}.key`) };
    },
    otherClientCert: file('other-client.crt'),
    otherClientKey: file('other-client.key'),
    destroy: () => {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
