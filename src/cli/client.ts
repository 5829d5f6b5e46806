// ratelimit-client: one ShouldRateLimit call from the command line, over plaintext or (m)TLS.
import * as grpc from '@grpc/grpc-js';
import { describeError } from '../lib/errors';
import { loadApi } from '../lib/proto';
import { responseFromWire, responseToJson, type WireResponse } from '../server';
import { describeResponse } from './client-output';
import { channelCredentials } from './client-tls';
import { commandLineTool, flagIsTrue, type FlagSpec } from './flags';

const FLAGS: readonly FlagSpec[] = [
  {
    name: 'dial_string',
    help: 'address of the ratelimit server, host:port',
    defaultValue: 'localhost:8081',
  },
  { name: 'domain', help: 'rate limit configuration domain to query', defaultValue: '' },
  {
    name: 'descriptors',
    help: 'one descriptor as key=value,key2=value2, with ;hits_addend=N at the end for its own hits; repeat for several',
    isRepeatable: true,
  },
  { name: 'hits_addend', help: 'hits to add for the whole request (0 means 1)', defaultValue: '0' },
  { name: 'timeout', help: 'deadline of the call in seconds', defaultValue: '10' },
  { name: 'json', help: 'print the answer as POST /json would (proto3 JSON)', isBoolean: true },
  {
    name: 'exit_code',
    help: 'exit 1 when the overall answer is OVER_LIMIT (scripts)',
    isBoolean: true,
  },
  { name: 'tls', help: 'connect over TLS, trusting the system CAs', isBoolean: true },
  { name: 'tls_ca_cert', help: 'CA certificate (PEM) to trust for the server; implies -tls' },
  { name: 'tls_client_cert', help: 'client certificate chain (PEM) for mutual TLS; implies -tls' },
  { name: 'tls_client_key', help: 'client private key (PEM) for mutual TLS; implies -tls' },
  {
    name: 'tls_server_name',
    help: 'name expected in the server certificate, when it is not the dial host; implies -tls',
  },
];

interface Entry {
  key: string;
  value: string;
}

/** Parses `k=v,k2=v2`; a pair without `=` is a key with an empty value. */
export function parseDescriptor(text: string): Entry[] {
  return text
    .split(',')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return eq < 0
        ? { key: pair, value: '' }
        : { key: pair.slice(0, eq), value: pair.slice(eq + 1) };
    });
}

/** A descriptor for the wire: `k=v,k2=v2;hits_addend=3` carries its own hits. */
function wireDescriptor(
  text: string,
): { entries: Entry[]; hitsAddend?: { value: number } } | string {
  const semicolon = text.lastIndexOf(';hits_addend=');
  if (semicolon < 0) return { entries: parseDescriptor(text) };
  const hits = Number(text.slice(semicolon + ';hits_addend='.length));
  if (!Number.isSafeInteger(hits) || hits < 0)
    return `-descriptors ${text}: hits_addend must be a whole number of at least 0`;
  return { entries: parseDescriptor(text.slice(0, semicolon)), hitsAddend: { value: hits } };
}

type Callback = (err: grpc.ServiceError | null, response?: unknown) => void;
type RlsClient = grpc.Client & {
  ShouldRateLimit(request: unknown, options: grpc.CallOptions, callback: Callback): void;
};
type RlsClientConstructor = new (
  address: string,
  creds: grpc.ChannelCredentials,
  options: grpc.ClientOptions,
) => RlsClient;

function connect(
  dialString: string,
  creds: grpc.ChannelCredentials,
  options: grpc.ClientOptions,
): RlsClient {
  const root = loadApi(['envoy/service/ratelimit/v3/rls.proto']) as unknown as {
    envoy: { service: { ratelimit: { v3: { RateLimitService: RlsClientConstructor } } } };
  };
  const ClientClass = root.envoy.service.ratelimit.v3.RateLimitService;
  return new ClientClass(dialString, creds, options);
}

function shouldRateLimit(
  client: RlsClient,
  request: unknown,
  timeoutSeconds: number,
): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    client.ShouldRateLimit(request, { deadline: Date.now() + timeoutSeconds * 1000 }, (e, res) => {
      if (e !== null) reject(e);
      else resolve(res as WireResponse);
    });
  });
}

const TOOL = {
  command: 'ratelimit-client',
  about:
    'Makes one ShouldRateLimit call to a rate limit service and prints the answer: a line per descriptor, or JSON with -json. Exits 0 (1 with -exit_code when OVER_LIMIT, or when the call fails; 2 for wrong flags).',
  flags: FLAGS,
};

/**
 * Runs the client; resolves with the exit code: 1 when the call fails (or, with -exit_code,
 * when the answer is OVER_LIMIT), 2 for wrong flags.
 */
export const runClient = commandLineTool(TOOL, async (flags, out, err) => {
  const one = (name: string): string => flags.get(name)?.[0] ?? '';
  const hitsAddend = Number(one('hits_addend'));
  if (!Number.isInteger(hitsAddend) || hitsAddend < 0) {
    err.write('-hits_addend must be a whole number of at least 0\n');
    return 2;
  }
  const texts = flags.get('descriptors') ?? [];
  const descriptors = texts.map(wireDescriptor);
  const wrong = descriptors.find((d) => typeof d === 'string');
  if (wrong !== undefined) {
    err.write(`${wrong}\n`);
    return 2;
  }
  const channel = channelCredentials({
    useTls: flagIsTrue(flags, 'tls'),
    caCert: one('tls_ca_cert'),
    clientCert: one('tls_client_cert'),
    clientKey: one('tls_client_key'),
    serverName: one('tls_server_name'),
  });
  if (typeof channel === 'string') {
    err.write(`${channel}\n`);
    return 2;
  }
  const client = connect(one('dial_string'), channel.creds, channel.options);
  const request = { domain: one('domain'), descriptors, hitsAddend };
  try {
    const response = responseFromWire(
      await shouldRateLimit(client, request, Number(one('timeout'))),
    );
    if (flagIsTrue(flags, 'json'))
      // The same proto3 JSON as POST /json answers.
      out.write(`${JSON.stringify(responseToJson(response), null, 2)}\n`);
    else
      out.write(
        describeResponse(
          response,
          texts.map((text) => ({ text })),
        ),
      );
    return flagIsTrue(flags, 'exit_code') && response.overallCode === 'OVER_LIMIT' ? 1 : 0;
  } catch (e: unknown) {
    const se = e as Partial<grpc.ServiceError>;
    err.write(
      `request error: ${se.code === undefined ? '' : `${grpc.status[se.code]}: `}${se.details ?? describeError(e)}\n`,
    );
    return 1;
  } finally {
    client.close();
  }
});
