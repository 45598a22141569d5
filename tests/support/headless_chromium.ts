// Debian's chromium, headless, driven by playwright-core (npm) for the tests that look at the status page.

import { type BrowserContext, chromium } from "playwright-core";

/** Where Debian's `chromium` package installs the browser (.ci/run installs it). */
export const CHROMIUM = "/usr/bin/chromium";

/** A running headless Chromium with a fresh profile; `close()` stops it and removes the profile. */
export interface HeadlessChromium extends AsyncDisposable {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Starts Chromium headless with a new temporary profile and no background traffic (no QUIC, sync, component
 * updates or first-run pages), accepting self-signed certificates as `curl -k` does.
 */
export async function headlessChromium(viewport = { width: 1280, height: 560 }): Promise<HeadlessChromium> {
  try {
    Deno.statSync(CHROMIUM);
  } catch (cause) {
    throw new Error(`${CHROMIUM} not found: install Debian's chromium package (apt-get install -y chromium)`, {
      cause,
    });
  }
  const profile = await Deno.makeTempDir({ prefix: "operator-hub-chromium-" });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    ignoreHTTPSErrors: true,
    viewport,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const close = async () => {
    await context.close().catch(() => {});
    await Deno.remove(profile, { recursive: true }).catch(() => {});
  };
  return { context, close, [Symbol.asyncDispose]: close };
}
