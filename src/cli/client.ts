// ratelimit-client: one ShouldRateLimit call from the command line, printed as JSON.
import { describeError } from '../lib/errors';
import * as grpc from '@grpc/grpc-js';
import { loadApi } from '../lib/proto';
import { responseFromWire, responseToJson, type WireResponse } from '../server';
import { commandLineTool, type FlagSpec } from './flags';

const FLAGS: readonly FlagSpec[] = [
  {
    name: 'dial_string',
    help: 'address of the ratelimit server, host:port',
    defaultValue: 'localhost:8081',
  },
  { name: 'domain', help: 'rate limit configuration domain to query', defaultValue: '' },
  {
    name: 'descriptors',
    help: 'one descriptor as key=value,key2=value2; repeat for several',
    isRepeatable: true,
  },
  { name: 'hits_addend', help: 'hits to add for the whole request (0 means 1)', defaultValue: '0' },
  { name: 'timeout', help: 'deadline of the call in seconds', defaultValue: '10' },
];

interface Entry {
  key: string;
  value: string;
}

/** Parses `k=v,k2=v2` into entries; a pair without `=` is a key with an empty value. */
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

type Callback = (err: grpc.ServiceError | null, response?: unknown) => void;
type RlsClient = grpc.Client & {
  ShouldRateLimit(request: unknown, options: grpc.CallOptions, callback: Callback): void;
};

type RlsClientConstructor = new (address: string, creds: grpc.ChannelCredentials) => RlsClient;

function connect(dialString: string): RlsClient {
  const root = loadApi(['envoy/service/ratelimit/v3/rls.proto']) as unknown as {
    envoy: { service: { ratelimit: { v3: { RateLimitService: RlsClientConstructor } } } };
  };
  const ClientClass = root.envoy.service.ratelimit.v3.RateLimitService;
  return new ClientClass(dialString, grpc.credentials.createInsecure());
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

/** Runs the client; resolves with the exit code: 1 when the call fails, 2 for wrong flags. */
export const runClient = commandLineTool('ratelimit-client', FLAGS, async (flags, out, err) => {
  const one = (name: string): string => flags.get(name)?.[0] ?? '';
  const hitsAddend = Number(one('hits_addend'));
  if (!Number.isInteger(hitsAddend) || hitsAddend < 0) {
    err.write('-hits_addend must be a whole number of at least 0\n');
    return 2;
  }
  const client = connect(one('dial_string'));
  const request = {
    domain: one('domain'),
    descriptors: (flags.get('descriptors') ?? []).map((d) => ({ entries: parseDescriptor(d) })),
    hitsAddend,
  };
  try {
    const response = await shouldRateLimit(client, request, Number(one('timeout')));
    // The same proto3 JSON as POST /json answers.
    out.write(`${JSON.stringify(responseToJson(responseFromWire(response)), null, 2)}\n`);
    return 0;
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
