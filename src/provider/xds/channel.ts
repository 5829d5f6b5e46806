// The ADS channel as the settings describe it: TLS credentials, channel options, and the node
// this client presents to its management server.
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { describeError } from '../../lib/errors';
import { toStruct } from '../../lib/struct';
import { SERVICE_NAME, SERVICE_VERSION } from '../../lib/version';
import type { XdsSourceSettings } from '../../settings';

export function credentials(settings: XdsSourceSettings): grpc.ChannelCredentials {
  const tls = settings.tls;
  if (tls === undefined) return grpc.credentials.createInsecure();
  const read = (file: string | undefined, setting: string): Buffer | null => {
    if (file === undefined) return null;
    try {
      return readFileSync(file);
    } catch (err: unknown) {
      throw new Error(`${setting}: cannot read ${file}: ${describeError(err)}`, { cause: err });
    }
  };
  return grpc.credentials.createSsl(
    read(tls.caFile, 'CONFIG_GRPC_XDS_SERVER_TLS_CACERT'),
    read(tls.keyFile, 'CONFIG_GRPC_XDS_CLIENT_TLS_KEY'),
    read(tls.certFile, 'CONFIG_GRPC_XDS_CLIENT_TLS_CERT'),
  );
}

export function channelOptions(settings: XdsSourceSettings): grpc.ChannelOptions {
  const options: grpc.ChannelOptions = {};
  if (settings.maxMessageSizeBytes !== undefined)
    options['grpc.max_receive_message_length'] = settings.maxMessageSizeBytes;
  const serverName = settings.tls?.serverName;
  if (serverName !== undefined) {
    // The name the server certificate is checked against, instead of the dialled host.
    options['grpc.ssl_target_name_override'] = serverName;
    options['grpc.default_authority'] = serverName;
  }
  return options;
}

/** The xDS node this client presents: its id, metadata and user agent. */
export function xdsNode(settings: XdsSourceSettings): unknown {
  return {
    id: settings.nodeId,
    metadata: toStruct(settings.nodeMetadata),
    userAgentName: SERVICE_NAME,
    userAgentVersion: SERVICE_VERSION,
  };
}
