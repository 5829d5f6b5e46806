// Settings: the environment read once into one frozen, typed object.
export { loadSettings, type Environment } from './load';
export { SettingsError, type SettingsProblem } from './errors';
export { allSettingNames } from './schema';
export { namesFor, neutralName } from './aliases';
export type * from './types';
