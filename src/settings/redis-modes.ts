// Sentinel, cluster, TLS and AWS IAM settings of one Redis instance: their checks and typed parts.
import type { SettingsProblem } from './errors';
import { clientTlsSettings, optional } from './section';
import type { ClientTlsSettings, RedisIamSettings } from './types';

/** The raw values of one instance read here: a part of the redis section's group. */
interface RawInstance {
  readonly TYPE: 'single' | 'sentinel' | 'cluster';
  readonly AUTH: string;
  readonly AUTH_FILE: string;
  readonly TLS: boolean;
  readonly TLS_CLIENT_CERT: string;
  readonly TLS_CLIENT_KEY: string;
  readonly TLS_CACERT: string;
  readonly TLS_SKIP_HOSTNAME_VERIFICATION: boolean;
  readonly AWS_IAM_AUTH: boolean;
  readonly AWS_IAM_CACHE_NAME: string;
  readonly AWS_IAM_USER_ID: string;
  readonly AWS_IAM_SERVERLESS: boolean;
  readonly AWS_IAM_REGION: string;
}

/** host:port, with an IPv6 host in brackets. */
const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[^\s,:[\]/]+):(\d{1,5})$/;

function isHostPort(text: string): boolean {
  const match = HOST_PORT.exec(text);
  if (match === null) return false;
  const port = Number(match[2]);
  return port >= 1 && port <= 65535;
}

/** A rediss:// URL asks for TLS whatever REDIS_TLS says. */
export function isTlsUrl(url: string): boolean {
  return /^rediss:\/\//i.test(url);
}

/** The TLS files of the instance, or undefined when it connects in plain text. */
export function redisTls(raw: RawInstance, url: string): ClientTlsSettings | undefined {
  return clientTlsSettings({ ...raw, TLS: raw.TLS || isTlsUrl(url) });
}

/**
 * The reference builds one TLS configuration from the REDIS_TLS_* files and gives it to both
 * instances. So while none of REDIS_PERSECOND_TLS_CACERT, _CLIENT_CERT and _CLIENT_KEY is set,
 * the per-second instance takes the main instance's files (and skips hostname verification when
 * either says so); setting any of its own configures it apart.
 */
export function withInheritedTlsFiles<T extends RawInstance>(perSecond: T, main: RawInstance): T {
  if (perSecond.TLS_CACERT !== '' || perSecond.TLS_CLIENT_CERT !== '') return perSecond;
  if (perSecond.TLS_CLIENT_KEY !== '') return perSecond;
  return {
    ...perSecond,
    TLS_CACERT: main.TLS_CACERT,
    TLS_CLIENT_CERT: main.TLS_CLIENT_CERT,
    TLS_CLIENT_KEY: main.TLS_CLIENT_KEY,
    TLS_SKIP_HOSTNAME_VERIFICATION:
      perSecond.TLS_SKIP_HOSTNAME_VERIFICATION || main.TLS_SKIP_HOSTNAME_VERIFICATION,
  };
}

/** The IAM identity of the instance, or undefined when it authenticates otherwise. */
export function redisIam(raw: RawInstance): RedisIamSettings | undefined {
  if (!raw.AWS_IAM_AUTH) return undefined;
  return {
    cacheName: raw.AWS_IAM_CACHE_NAME.trim(),
    userId: raw.AWS_IAM_USER_ID.trim(),
    serverless: raw.AWS_IAM_SERVERLESS,
    region: optional(raw.AWS_IAM_REGION.trim()),
  };
}

function addressProblems(
  raw: RawInstance,
  prefix: string,
  url: string,
  socketType: 'tcp' | 'unix',
): SettingsProblem[] {
  if (raw.TYPE === 'single' || url === '') return [];
  if (socketType === 'unix') {
    return [
      {
        setting: `${prefix}SOCKET_TYPE`,
        message: `is unix but ${prefix}TYPE is ${raw.TYPE}, whose nodes are reached over TCP; accepted with ${raw.TYPE}: tcp`,
      },
    ];
  }
  const items = url.split(',').map((item) => item.trim());
  const accepted =
    raw.TYPE === 'sentinel'
      ? 'master-name,host:port[,host:port...] (the sentinels)'
      : 'host:port[,host:port...] (seed nodes of the cluster)';
  // Sentinel: the first item is the master name; fewer than two items is reported where the
  // URL is read.
  if (raw.TYPE === 'sentinel') {
    if (items.length < 2) return [];
    if (items[0] === '' || isHostPort(items[0] ?? '')) {
      return [
        {
          setting: `${prefix}URL`,
          message: `starts with ${JSON.stringify(items[0])}, not a master name; accepted for ${prefix}TYPE sentinel: ${accepted}`,
        },
      ];
    }
  }
  const nodes = raw.TYPE === 'sentinel' ? items.slice(1) : items;
  const bad = nodes.filter((item) => !isHostPort(item));
  if (bad.length === 0) return [];
  return [
    {
      setting: `${prefix}URL`,
      message: `${bad.map((b) => JSON.stringify(b)).join(', ')} ${bad.length === 1 ? 'is' : 'are'} not host:port; accepted for ${prefix}TYPE ${raw.TYPE}: ${accepted}`,
    },
  ];
}

function tlsProblems(raw: RawInstance, prefix: string): SettingsProblem[] {
  const hasCert = raw.TLS_CLIENT_CERT !== '';
  const hasKey = raw.TLS_CLIENT_KEY !== '';
  if (hasCert === hasKey) return [];
  return [
    {
      setting: hasCert ? `${prefix}TLS_CLIENT_KEY` : `${prefix}TLS_CLIENT_CERT`,
      message: `${prefix}TLS_CLIENT_CERT and ${prefix}TLS_CLIENT_KEY go together; set both or neither`,
    },
  ];
}

function iamProblems(raw: RawInstance, prefix: string, url: string): SettingsProblem[] {
  if (!raw.AWS_IAM_AUTH) return [];
  const problems: SettingsProblem[] = [];
  const setting = `${prefix}AWS_IAM_AUTH`;
  if (!raw.TLS && !isTlsUrl(url)) {
    problems.push({
      setting,
      message: `is true but ${prefix}TLS is false: an IAM token must never travel in plain text (ElastiCache requires in-transit encryption for IAM); set ${prefix}TLS=true`,
    });
  }
  if (raw.AUTH !== '' || raw.AUTH_FILE !== '') {
    problems.push({
      setting,
      message: `is true and ${raw.AUTH !== '' ? `${prefix}AUTH` : `${prefix}AUTH_FILE`} is set; the IAM token is the password: set only one`,
    });
  }
  for (const field of ['AWS_IAM_CACHE_NAME', 'AWS_IAM_USER_ID'] as const) {
    if (raw[field].trim() === '') {
      problems.push({
        setting: `${prefix}${field}`,
        message:
          field === 'AWS_IAM_CACHE_NAME'
            ? `is empty but ${setting} is true; accepted: the replication group ID or serverless cache name (not the endpoint host name)`
            : `is empty but ${setting} is true; accepted: the ElastiCache user ID (IAM users have user ID = user name)`,
      });
    }
  }
  return problems;
}

/** Every problem of the instance's mode, TLS and IAM settings. */
export function redisModeProblems(
  raw: RawInstance,
  prefix: string,
  url: string,
  socketType: 'tcp' | 'unix',
): SettingsProblem[] {
  return [
    ...addressProblems(raw, prefix, url, socketType),
    ...tlsProblems(raw, prefix),
    ...iamProblems(raw, prefix, url),
  ];
}
