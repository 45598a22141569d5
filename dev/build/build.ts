// Builds the real kube-apiserver, kube-controller-manager, an embedded etcd and a small client-certificate tool from
// dev/build/ (its go.mod and cmd/) into .cache/kube-bin/ in one `go build`, rebuilding only on change.
//
// Guarantees:
// - The binaries are rebuilt only when the sha256 over go.mod, go.sum, cmd/**/*.go, the ldflags and the Go version
//   differs from the one stored in `.cache/kube-bin/stamp`, or when a binary is missing.
// - Concurrent callers (two test runs, a test run and `clusters:up`) build at most once: the build holds an exclusive
//   lock on `.cache/kube-bin/.lock` and re-checks the stamp once it has it.
// - Binaries are linked into a temporary folder and renamed into place, so running apiservers are never overwritten.
//
// Assumptions: `go` (1.26+) is on PATH; the Go module proxy is reachable for the first build.

import { goVersion as goVersionOf, isExecutable, moduleHash, readStamp as readStampIn } from "./_go_build.ts";

/** The Kubernetes version the binaries report on `/version` and `--version`. */
export const KUBE_VERSION = "v1.36.3";

/** Absolute path of the repository root (two levels above this file). */
export const REPO_ROOT: string = decodeURIComponent(new URL("../../", import.meta.url).pathname).replace(/\/$/, "");

/** Folder of the Go module that builds the control-plane binaries. */
export const KUBE_MODULE_DIR = `${REPO_ROOT}/dev/build`;

/** Folder the binaries and the stamp are written to. */
export const KUBE_BIN_DIR = `${REPO_ROOT}/.cache/kube-bin`;

/** Names of the binaries built from dev/build/cmd/ (one folder each). */
export const KUBE_BINARY_NAMES = ["kube-apiserver", "kube-controller-manager", "etcd", "local-pki"] as const;

/** Paths of the built binaries, and how they were obtained. */
export interface KubeBinaries {
  apiserver: string;
  controllerManager: string;
  etcd: string;
  /** dev/build/cmd/local-pki: writes the local client CA and client certificates. */
  pki: string;
  /** True when the stamp matched and nothing was built. */
  cached: boolean;
  /** Seconds spent building (0 when cached). */
  buildSeconds: number;
}

/** Options of {@linkcode ensureBinaries}. */
export interface EnsureBinariesOptions {
  /** Receives progress lines; defaults to writing them to stderr. */
  log?: (line: string) => void;
}

/** The build failed or its inputs could not be read. */
export class KubeBuildError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "KubeBuildError";
  }
}

/** The `-ldflags` value: strip symbols and stamp the version that `/version` reports. */
export function versionLdflags(version: string = KUBE_VERSION): string {
  const [major, minor] = version.replace(/^v/, "").split(".");
  return [
    "-s",
    "-w",
    `-X k8s.io/component-base/version.gitVersion=${version}`,
    `-X k8s.io/component-base/version.gitMajor=${major}`,
    `-X k8s.io/component-base/version.gitMinor=${minor}`,
    "-X k8s.io/component-base/version.gitTreeState=clean",
    "-X k8s.io/component-base/version.buildDate=2026-01-01T00:00:00Z",
    `-X k8s.io/client-go/pkg/version.gitVersion=${version}`,
    `-X k8s.io/client-go/pkg/version.gitMajor=${major}`,
    `-X k8s.io/client-go/pkg/version.gitMinor=${minor}`,
  ].join(" ");
}

function goVersion(): Promise<string> {
  return goVersionOf((message, cause) => new KubeBuildError(message, { cause }));
}

/** Hex sha256 over the build inputs, the ldflags and the Go version (`go env GOVERSION` unless given). */
export async function sourceHash(go?: string): Promise<string> {
  return moduleHash(KUBE_MODULE_DIR, versionLdflags(), go ?? await goVersion());
}

function readStamp(): Promise<string | null> {
  return readStampIn(KUBE_BIN_DIR);
}

async function allExecutable(): Promise<boolean> {
  for (const name of KUBE_BINARY_NAMES) {
    if (!(await isExecutable(`${KUBE_BIN_DIR}/${name}`))) return false;
  }
  return true;
}

/**
 * Returns the paths of the binaries, building them all first when the stamp does not match the sources.
 *
 * Prints nothing when cached; when building, the `go build` output goes to stderr.
 */
export async function ensureBinaries(options: EnsureBinariesOptions = {}): Promise<KubeBinaries> {
  const log = options.log ?? ((line: string) => console.error(line));
  const paths = {
    apiserver: `${KUBE_BIN_DIR}/kube-apiserver`,
    controllerManager: `${KUBE_BIN_DIR}/kube-controller-manager`,
    etcd: `${KUBE_BIN_DIR}/etcd`,
    pki: `${KUBE_BIN_DIR}/local-pki`,
  };
  await Deno.mkdir(KUBE_BIN_DIR, { recursive: true });
  let go: string;
  try {
    go = await goVersion();
  } catch (error) {
    // No Go toolchain: prebuilt binaries (for example restored from a CI cache) are still usable.
    if ((await readStamp()) !== null && (await allExecutable())) {
      log(`warning: ${(error as Error).message}; using the prebuilt binaries in ${KUBE_BIN_DIR} unchecked`);
      return { ...paths, cached: true, buildSeconds: 0 };
    }
    throw error;
  }
  const hash = await sourceHash(go);
  const upToDate = async () => (await readStamp()) === hash && (await allExecutable());
  if (await upToDate()) return { ...paths, cached: true, buildSeconds: 0 };

  using lock = await Deno.open(`${KUBE_BIN_DIR}/.lock`, { create: true, write: true });
  await lock.lock(true);
  try {
    if (await upToDate()) return { ...paths, cached: true, buildSeconds: 0 };
    log(
      `building ${KUBE_BINARY_NAMES.join(", ")} (Kubernetes ${KUBE_VERSION}) into ${KUBE_BIN_DIR} ` +
        "(several minutes on a cold Go cache)",
    );
    const started = performance.now();
    const tmp = await Deno.makeTempDir({ dir: KUBE_BIN_DIR, prefix: ".build-" });
    try {
      const child = new Deno.Command("go", {
        args: ["build", "-trimpath", "-ldflags", versionLdflags(), "-o", `${tmp}/`, "./cmd/..."],
        cwd: KUBE_MODULE_DIR,
        env: { CGO_ENABLED: "0" },
        stdout: "inherit",
        stderr: "inherit",
      }).spawn();
      const status = await child.status;
      if (!status.success) {
        throw new KubeBuildError(
          `go build ./cmd/... in ${KUBE_MODULE_DIR} failed with exit code ${status.code} (see the output above)`,
        );
      }
      for (const name of KUBE_BINARY_NAMES) await Deno.rename(`${tmp}/${name}`, `${KUBE_BIN_DIR}/${name}`);
    } finally {
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
    await Deno.writeTextFile(`${KUBE_BIN_DIR}/stamp`, `${hash}\n`);
    const buildSeconds = (performance.now() - started) / 1000;
    return { ...paths, cached: false, buildSeconds };
  } finally {
    await lock.unlock();
  }
}

if (import.meta.main) {
  try {
    const started = performance.now();
    const bins = await ensureBinaries();
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const list = [bins.apiserver, bins.controllerManager, bins.etcd, bins.pki].join(", ");
    console.log(
      bins.cached
        ? `kube binaries are up to date (cached, checked in ${seconds}s): ${list}`
        : `kube binaries built in ${bins.buildSeconds.toFixed(1)}s: ${list}`,
    );
  } catch (error) {
    console.error(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
    Deno.exit(1);
  }
}
