// ratelimit-client: one ShouldRateLimit call from the command line, over plaintext or (m)TLS;
// with -replay, a file of requests to two services and the differences between their answers.
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { describeError } from '../lib/errors';
import { responseFromWire, responseToJson, type WireDescriptor } from '../server';
import { describeResponse } from './client-output';
import { replay } from './client-replay';
import { channelCredentials } from './client-tls';
import { commandLineTool, flagIsTrue, type FlagSpec, type Flags } from './flags';
import { parseReplayFile } from './replay-file';
import { connect, shouldRateLimit } from './rls-client';

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
  {
    name: 'replay',
    help: 'file of requests, one POST /json body per line, sent to -dial_string and to -compare_dial_string in turn; prints every difference between their answers (docs/migration.md)',
  },
  {
    name: 'compare_dial_string',
    help: 'with -replay: the second service, host:port (the TLS flags apply to both)',
  },
  {
    name: 'reset_tolerance',
    help: 'with -replay: seconds by which the two duration_until_reset may differ',
    defaultValue: '1',
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
function wireDescriptor(text: string): WireDescriptor | string {
  const semicolon = text.lastIndexOf(';hits_addend=');
  if (semicolon < 0) return { entries: parseDescriptor(text) };
  const hits = Number(text.slice(semicolon + ';hits_addend='.length));
  if (!Number.isSafeInteger(hits) || hits < 0)
    return `-descriptors ${text}: hits_addend must be a whole number of at least 0`;
  return { entries: parseDescriptor(text.slice(0, semicolon)), hitsAddend: { value: hits } };
}

const TOOL = {
  command: 'ratelimit-client',
  about:
    'Makes one ShouldRateLimit call to a rate limit service and prints the answer: a line per descriptor, or JSON with -json. Exits 0 (1 with -exit_code when OVER_LIMIT, or when the call fails; 2 for wrong flags). With -replay FILE -compare_dial_string ADDR, replays the file against both services and exits 0 when their answers agree, 1 when they differ, 2 for wrong flags or a wrong file, 3 when a service cannot be reached.',
  flags: FLAGS,
};

type Channel = Exclude<ReturnType<typeof channelCredentials>, string>;

function flagValue(flags: Flags, name: string): string {
  return flags.get(name)?.[0] ?? '';
}

/** One call, its answer printed; 1 when it fails or, with -exit_code, when OVER_LIMIT. */
async function callOnce(
  flags: Flags,
  channel: Channel,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const one = (name: string): string => flagValue(flags, name);
  const hitsAddend = Number(one('hits_addend'));
  if (!Number.isInteger(hitsAddend) || hitsAddend < 0) {
    err.write('-hits_addend must be a whole number of at least 0\n');
    return 2;
  }
  const texts = flags.get('descriptors') ?? [];
  const parsed = texts.map(wireDescriptor);
  const wrong = parsed.find((d) => typeof d === 'string');
  if (wrong !== undefined) {
    err.write(`${wrong}\n`);
    return 2;
  }
  const descriptors = parsed.filter((d): d is WireDescriptor => typeof d !== 'string');
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
}

/** What -replay needs besides the file, or why the flags are wrong. */
function replayFlags(flags: Flags): { second: string; tolerance: number } | string {
  const second = flagValue(flags, 'compare_dial_string');
  if (second === '') return '-replay needs -compare_dial_string, the second service to compare';
  if (flagValue(flags, 'domain') !== '' || (flags.get('descriptors') ?? []).length > 0)
    return '-replay takes its requests from the file: leave out -domain and -descriptors';
  const tolerance = Number(flagValue(flags, 'reset_tolerance'));
  if (!Number.isInteger(tolerance) || tolerance < 0)
    return '-reset_tolerance must be a whole number of seconds, at least 0';
  return { second, tolerance };
}

/** -replay: the file to both services; 0 when they agree, 1 when not, 2 wrong input, 3 unreachable. */
async function replayFile(
  flags: Flags,
  channel: Channel,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const checked = replayFlags(flags);
  if (typeof checked === 'string') {
    err.write(`${checked}\n`);
    return 2;
  }
  const path = flagValue(flags, 'replay');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e: unknown) {
    err.write(`-replay ${path}: ${describeError(e)}\n`);
    return 2;
  }
  const file = parseReplayFile(text);
  if ('errors' in file) {
    err.write(file.errors.map((line) => `${path}: ${line}\n`).join(''));
    return 2;
  }
  const endpoint = (address: string) => ({
    address,
    client: connect(address, channel.creds, channel.options),
  });
  const first = endpoint(flagValue(flags, 'dial_string'));
  const second = endpoint(checked.second);
  try {
    return await replay(
      {
        requests: file.requests,
        first,
        second,
        timeoutSeconds: Number(flagValue(flags, 'timeout')),
        resetToleranceSeconds: checked.tolerance,
      },
      out,
      err,
    );
  } finally {
    first.client.close();
    second.client.close();
  }
}

/**
 * Runs the client; resolves with the exit code: 1 when the call fails (or, with -exit_code,
 * when the answer is OVER_LIMIT), 2 for wrong flags; with -replay, replayFile's codes.
 */
export const runClient = commandLineTool(TOOL, async (flags, out, err) => {
  const one = (name: string): string => flagValue(flags, name);
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
  return one('replay') === ''
    ? callOnce(flags, channel, out, err)
    : replayFile(flags, channel, out, err);
});
