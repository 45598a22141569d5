// Builds the real helm v4 CLI from dev/build/helm/ into .cache/helm-bin/, rebuilding only on change.
//
// Guarantees:
// - The binary is rebuilt only when the sha256 over go.mod, go.sum, cmd/**/*.go, the ldflags and the Go version
//   differs from the one stored in `.cache/helm-bin/stamp`, or when the binary is missing.
// - Concurrent callers (two test files, CI and a test run) build at most once: the build holds an exclusive lock on
//   `.cache/helm-bin/.lock` and re-checks the stamp once it has it.
// - The binary is linked into a temporary folder and renamed into place, so a running helm is never overwritten.
//
// Assumptions: `go` (1.26+) is on PATH; the Go module proxy is reachable for the first build.

import { goVersion as goVersionOf, isExecutable, moduleHash, readStamp as readStampIn } from "./_go_build.ts";
import { REPO_ROOT } from "./build.ts";

/** The helm release the module requires (dev/build/helm/go.mod) and the binary reports on `helm version`. */
export const HELM_VERSION = "v4.3.2";

/** Folder of the Go module that builds helm. */
export const HELM_MODULE_DIR = `${REPO_ROOT}/dev/build/helm`;

/** Folder the binary and the stamp are written to. */
export const HELM_BIN_DIR = `${REPO_ROOT}/.cache/helm-bin`;

/** Path of the built binary, and how it was obtained. */
export interface HelmBinary {
  helm: string;
  /** True when the stamp matched and nothing was built. */
  cached: boolean;
  /** Seconds spent building (0 when cached). */
  buildSeconds: number;
}

/** Options of {@linkcode ensureHelm}. */
export interface EnsureHelmOptions {
  /** Receives progress lines; defaults to writing them to stderr. */
  log?: (line: string) => void;
}

/** The helm build failed or its inputs could not be read. */
export class HelmBuildError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "HelmBuildError";
  }
}

/** The `-ldflags` value: strip symbols and stamp the version that `helm version` reports. */
export function helmLdflags(version: string = HELM_VERSION): string {
  return [
    "-s",
    "-w",
    `-X helm.sh/helm/v4/internal/version.version=${version}`,
    "-X helm.sh/helm/v4/internal/version.gitTreeState=clean",
  ].join(" ");
}

function goVersion(): Promise<string> {
  return goVersionOf((message, cause) => new HelmBuildError(message, { cause }));
}

/** Hex sha256 over the build inputs, the ldflags and the Go version (`go env GOVERSION` unless given). */
export async function helmSourceHash(go?: string): Promise<string> {
  return moduleHash(HELM_MODULE_DIR, helmLdflags(), go ?? await goVersion());
}

function readStamp(): Promise<string | null> {
  return readStampIn(HELM_BIN_DIR);
}

/**
 * Returns the path of helm, building it first when the stamp does not match the sources.
 *
 * Prints nothing when cached; when building, the `go build` output goes to stderr.
 */
export async function ensureHelm(options: EnsureHelmOptions = {}): Promise<HelmBinary> {
  const log = options.log ?? ((line: string) => console.error(line));
  const helm = `${HELM_BIN_DIR}/helm`;
  await Deno.mkdir(HELM_BIN_DIR, { recursive: true });
  let go: string;
  try {
    go = await goVersion();
  } catch (error) {
    // No Go toolchain: a prebuilt binary (for example restored from a CI cache) is still usable.
    if ((await readStamp()) !== null && (await isExecutable(helm))) {
      log(`warning: ${(error as Error).message}; using the prebuilt ${helm} unchecked`);
      return { helm, cached: true, buildSeconds: 0 };
    }
    throw error;
  }
  const hash = await helmSourceHash(go);
  const upToDate = async () => (await readStamp()) === hash && (await isExecutable(helm));
  if (await upToDate()) return { helm, cached: true, buildSeconds: 0 };

  using lock = await Deno.open(`${HELM_BIN_DIR}/.lock`, { create: true, write: true });
  await lock.lock(true);
  try {
    if (await upToDate()) return { helm, cached: true, buildSeconds: 0 };
    log(`building helm ${HELM_VERSION} into ${HELM_BIN_DIR} (a few minutes on a cold Go cache)`);
    const started = performance.now();
    const tmp = await Deno.makeTempDir({ dir: HELM_BIN_DIR, prefix: ".build-" });
    try {
      const child = new Deno.Command("go", {
        args: ["build", "-trimpath", "-ldflags", helmLdflags(), "-o", `${tmp}/helm`, "./cmd/helm"],
        cwd: HELM_MODULE_DIR,
        env: { CGO_ENABLED: "0" },
        stdout: "inherit",
        stderr: "inherit",
      }).spawn();
      const status = await child.status;
      if (!status.success) {
        throw new HelmBuildError(
          `go build ./cmd/helm in ${HELM_MODULE_DIR} failed with exit code ${status.code} (see the output above)`,
        );
      }
      await Deno.rename(`${tmp}/helm`, helm);
    } finally {
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
    await Deno.writeTextFile(`${HELM_BIN_DIR}/stamp`, `${hash}\n`);
    const buildSeconds = (performance.now() - started) / 1000;
    return { helm, cached: false, buildSeconds };
  } finally {
    await lock.unlock();
  }
}

if (import.meta.main) {
  try {
    const started = performance.now();
    const bin = await ensureHelm();
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      bin.cached
        ? `helm is up to date (cached, checked in ${seconds}s): ${bin.helm}`
        : `helm ${HELM_VERSION} built in ${bin.buildSeconds.toFixed(1)}s: ${bin.helm}`,
    );
  } catch (error) {
    console.error(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
    Deno.exit(1);
  }
}
