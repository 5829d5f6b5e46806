// Debian's chromium, headless, through playwright-core: for the page tests and the screenshots.
// playwright-core drives a browser that is already installed and downloads none, so Debian's
// package (`.ci/run` installs it when missing) is the one browser, here and in CI.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type BrowserContextOptions } from 'playwright-core';

/** Where Debian puts it; CHROMIUM_PATH points elsewhere. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * No sandbox (tests may run as root, where chromium's sandbox refuses to start), no GPU, and
 * none of the background connections (updates, sync, QUIC probes) a closed network refuses.
 */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  readonly context: BrowserContext;
  /** Closes the browser and removes its profile directory. */
  close(): Promise<void>;
}

/**
 * Starts chromium with a new, empty profile; fails with what to install when it is missing.
 * `options` set the pages' defaults (viewport, locale, time zone ...).
 */
export async function launchChromium(options: BrowserContextOptions = {}): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `no chromium at ${CHROMIUM_PATH}: install Debian's package (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  }
  const profile = mkdtempSync(path.join(tmpdir(), 'rl-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      ...options,
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: ARGS,
      timeout: 30_000,
    });
    return {
      context,
      close: async () => {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (err: unknown) {
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
}
