// Builds the real kube-apiserver, kube-controller-manager, an embedded etcd and a small client-certificate tool into
// .cache/kube-bin/ in one `go build`, rebuilding only on change: the test kit's build (src/testing/kube_binaries.ts,
// whose Go module is src/testing/go/), pointed at this checkout's folder.
//
// Guarantees (the kit's):
// - The binaries are rebuilt only when the sha256 over go.mod, go.sum, cmd/**/*.go, the ldflags and the Go version
//   differs from the one stored in `.cache/kube-bin/stamp`, or when a binary is missing.
// - Concurrent callers (two test runs, a test run and `clusters:up`) build at most once: the build holds an exclusive
//   lock on `.cache/kube-bin/.lock` and re-checks the stamp once it has it.
// - Binaries are linked into a temporary folder and renamed into place, so running apiservers are never overwritten.
//
// Assumptions: `go` (1.26+) is on PATH; the Go module proxy is reachable for the first build.

import {
  KUBE_BINARY_NAMES,
  KUBE_SOURCE,
  KUBE_VERSION,
  type KubeBinaries,
  kubeBinaries,
  KubeBuildError,
  readSources,
  sourceStamp,
  versionLdflags,
} from "../../src/testing/kube_binaries.ts";

export { KUBE_BINARY_NAMES, KUBE_VERSION, type KubeBinaries, KubeBuildError, versionLdflags };

/** Absolute path of the repository root (two levels above this file). */
export const REPO_ROOT: string = decodeURIComponent(new URL("../../", import.meta.url).pathname).replace(/\/$/, "");

/** Folder of the Go module that builds the control-plane binaries (shipped with the test kit). */
export const KUBE_MODULE_DIR: string = decodeURIComponent(KUBE_SOURCE.pathname).replace(/\/$/, "");

/** Folder the binaries and the stamp are written to. */
export const KUBE_BIN_DIR = `${REPO_ROOT}/.cache/kube-bin`;

/** Options of {@linkcode ensureBinaries}. */
export interface EnsureBinariesOptions {
  /** Receives progress lines; defaults to writing them to stderr. */
  log?: (line: string) => void;
}

/** Hex sha256 over the build inputs, the ldflags and the Go version (`go env GOVERSION` unless given). */
export async function sourceHash(go?: string): Promise<string> {
  let version = go;
  if (version === undefined) {
    const out = await new Deno.Command("go", { args: ["env", "GOVERSION"], stdout: "piped" }).output();
    version = new TextDecoder().decode(out.stdout).trim();
  }
  return sourceStamp(await readSources(), versionLdflags(), version);
}

/**
 * Returns the paths of the binaries in .cache/kube-bin, building them all first when the stamp does not match the
 * sources. Prints nothing when cached; when building, the `go build` output goes to stderr.
 */
export function ensureBinaries(options: EnsureBinariesOptions = {}): Promise<KubeBinaries> {
  // `prebuilt: ""` keeps OPERATOR_HUB_KUBE_BIN (the kit's override) out of the checkout's own clusters.
  return kubeBinaries({ binDir: KUBE_BIN_DIR, prebuilt: "", log: options.log });
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
