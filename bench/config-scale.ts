// Generated configurations of many rules, as platform teams generate them from tenant databases.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface ScaleConfig {
  /** Exact rules `tenant=t<i>`. */
  readonly exact: number;
  /** Prefix rules `path=/api/v<i>/*`. */
  readonly prefix: number;
  /** Changes every limit, so that a rewrite is a new configuration. */
  readonly variant?: number;
}

/**
 * The sizes the bench measures, smallest first, as BENCH_SCALE_SIZES writes them
 * (`exact:prefix,...`); the largest also serves the prefix rows and is loaded again under load.
 * By default: 1,000 and 10,000 exact rules, then 100,000 exact and 10,000 prefix.
 */
export function scaleSizes(text = '1000:0,10000:0,100000:10000'): ScaleConfig[] {
  const sizes = text.split(',').map((size) => {
    const [exact, prefix] = size.split(':').map(Number);
    if (!Number.isInteger(exact) || !Number.isInteger(prefix ?? 0) || (exact ?? 0) < 1)
      throw new Error(
        `BENCH_SCALE_SIZES: '${size}' is not exact:prefix (whole numbers, exact >= 1)`,
      );
    return { exact: exact ?? 1, prefix: prefix ?? 0 };
  });
  return sizes.sort((a, b) => a.exact + a.prefix - (b.exact + b.prefix));
}

/** The domain of every generated file. */
export const SCALE_DOMAIN = 'scale';

/** The value of the i-th prefix rule, and a request value it matches. */
export const prefixValue = (i: number): string => `/api/v${i}/*`;
export const pathUnder = (i: number): string => `/api/v${i}/items`;

/** One domain of `exact` exact rules then `prefix` prefix rules, in block YAML. */
export function scaleConfigYaml(config: ScaleConfig): string {
  const limit = 1_000_000_000 - (config.variant ?? 0);
  const rule = (key: string, value: string): string =>
    `  - key: ${key}\n    value: ${value}\n    rate_limit:\n      unit: second\n      requests_per_unit: ${limit}\n`;
  const parts = [`domain: ${SCALE_DOMAIN}\ndescriptors:\n`];
  for (let i = 0; i < config.exact; i++) parts.push(rule('tenant', `t${i}`));
  for (let i = 0; i < config.prefix; i++) parts.push(rule('path', prefixValue(i)));
  return parts.join('');
}

/** Writes the configuration as `<dir>/scale.yaml`; returns the file's path. */
export function writeScaleConfig(dir: string, config: ScaleConfig): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'scale.yaml');
  writeFileSync(file, scaleConfigYaml(config));
  return file;
}

/** `node dist/bench/config-scale.js DIR EXACT PREFIX`: writes one such file. */
if (require.main === module) {
  const [dir, exact, prefix] = process.argv.slice(2);
  if (dir === undefined) {
    process.stderr.write('usage: node dist/bench/config-scale.js DIR [EXACT] [PREFIX]\n');
    process.exit(2);
  }
  const file = writeScaleConfig(dir, {
    exact: Number(exact ?? '100000'),
    prefix: Number(prefix ?? '10000'),
  });
  process.stdout.write(`${file}\n`);
}
