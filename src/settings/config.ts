// Config section: where configurations come from (files or xDS) and how they are loaded.
import { deepFreeze } from '../lib/freeze';
import type { SettingsProblem } from './errors';
import { bool, duration, oneOf, str } from './fields';
import { group, type Values } from './section';
import type { ConfigSettings, FileSourceSettings } from './types';
import { xdsSourceSettings, type XDS } from './xds';

export const CONFIG = group('', {
  CONFIG_TYPE: oneOf('FILE', ['FILE', 'GRPC_XDS_SOTW']),
  FORCE_START_WITHOUT_INITIAL_CONFIG: bool(false),
  RUNTIME_ROOT: str('/srv/runtime_data/current'),
  RUNTIME_SUBDIRECTORY: str(),
  RUNTIME_APPDIRECTORY: str('config'),
  RUNTIME_IGNOREDOTFILES: bool(false),
  RUNTIME_WATCH_ROOT: bool(true),
  MERGE_DOMAIN_CONFIG: bool(false),
  HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: bool(false),
  CONFIG_COMPILE_TIMEOUT: duration('60s'),
});

function fileSource(c: Values<typeof CONFIG>): FileSourceSettings {
  return {
    type: 'FILE',
    runtimeRoot: c.RUNTIME_ROOT,
    runtimeSubdirectory: c.RUNTIME_SUBDIRECTORY,
    runtimeAppDirectory: c.RUNTIME_APPDIRECTORY,
    ignoreDotFiles: c.RUNTIME_IGNOREDOTFILES,
    watchRoot: c.RUNTIME_WATCH_ROOT,
  };
}

export function configSettings(
  c: Values<typeof CONFIG>,
  x: Values<typeof XDS>,
  problems: SettingsProblem[],
): ConfigSettings {
  return deepFreeze({
    source: c.CONFIG_TYPE === 'FILE' ? fileSource(c) : xdsSourceSettings(x, problems),
    forceStartWithoutInitialConfig: c.FORCE_START_WITHOUT_INITIAL_CONFIG,
    healthyWithAtLeastOneConfigLoaded: c.HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED,
    mergeDomainConfig: c.MERGE_DOMAIN_CONFIG,
    compileTimeoutMs: c.CONFIG_COMPILE_TIMEOUT,
  });
}
