// Settings: the environment read once into one frozen, typed object, one module per section.
export { loadSettings } from './load';
export { logFormatOf } from './log';
export type { Environment } from './environment';
export { SettingsError, type SettingsProblem } from './errors';
export { allSettingNames } from './schema';
export { DEFAULT_CONNECTION_LIMITS, DEFAULT_REQUEST_LIMITS } from './limits';
export { namesFor, neutralName } from './aliases';
export type * from './types';
