// The control-plane binaries of the test kit (kube-apiserver, kube-controller-manager, etcd, local-pki): found
// prebuilt, or built once from the Go sources shipped beside this file (./go/) and cached in a user cache folder.
//
// Guarantees:
// - The cache folder is keyed by a stamp: the sha256 over the Go sources, the ldflags and the Go version, so a new
//   release of this package or a new Go toolchain builds into a folder of its own and never reuses stale binaries.
// - The sources are read through `new URL("./go/…", import.meta.url)` and fetch: the same code builds from a checkout
//   (file: URLs, built in place) and from the published package (https: URLs, written to the cache folder first).
// - Concurrent callers (4 test files starting at once) build at most once: the build holds an exclusive lock in the
//   cache folder and re-checks the stamp once it has it. Binaries are linked into a temporary folder and renamed into
//   place, so running apiservers are never overwritten.
// - A build prints one line saying what it builds, where and why, then one line every 30 s while `go build` runs.
//
// Assumptions: building needs `go` (1.26+) on PATH and the Go module proxy (or a warm module cache); with prebuilt
// binaries (`OPERATOR_HUB_KUBE_BIN` or the `prebuilt` option) neither is needed.

/**
 * The Kubernetes version the binaries report on `/version` and `--version`.
 *
 * @example
 * ```ts
 * import { KUBE_VERSION, type TestEnv } from "../../testing.ts";
 *
 * declare const env: TestEnv;
 * const version = await env.kubectl("east", ["version", "-o", "json"]);
 * console.log(JSON.parse(version).serverVersion.gitVersion === KUBE_VERSION); // true: "v1.36.3"
 * ```
 */
export const KUBE_VERSION = "v1.36.3";

/** Names of the binaries built from ./go/cmd/ (one folder each). */
export const KUBE_BINARY_NAMES = ["kube-apiserver", "kube-controller-manager", "etcd", "local-pki"] as const;

/** Every file of the Go module the binaries are built from, relative to {@linkcode KUBE_SOURCE}, sorted. */
export const KUBE_SOURCE_FILES: readonly string[] = [
  "cmd/etcd/main.go",
  "cmd/kube-apiserver/main.go",
  "cmd/kube-controller-manager/main.go",
  "cmd/local-pki/main.go",
  "go.mod",
  "go.sum",
];

/** Where the Go module of the binaries is: ./go/ beside this file (a file: or https: URL). */
export const KUBE_SOURCE: URL = new URL("./go/", import.meta.url);

/**
 * Paths of the control-plane binaries, and how they were obtained.
 *
 * @example
 * ```ts
 * import { type KubeBinaries, kubeBinaries } from "../../testing.ts";
 *
 * const bins: KubeBinaries = await kubeBinaries();
 * console.log(bins.cached ? `cached in ${bins.dir}` : `built in ${bins.buildSeconds} s into ${bins.dir}`);
 * console.log(bins.apiserver, bins.controllerManager, bins.etcd);
 * ```
 */
export interface KubeBinaries {
  /** The folder holding them. */
  dir: string;
  /** kube-apiserver. */
  apiserver: string;
  /** kube-controller-manager. */
  controllerManager: string;
  /** An embedded etcd server. */
  etcd: string;
  /** local-pki: writes a client CA and client certificates signed by it. */
  pki: string;
  /** True when nothing was built (prebuilt, or the stamp matched). */
  cached: boolean;
  /** Seconds spent building (0 when cached). */
  buildSeconds: number;
}

/**
 * Options of {@linkcode kubeBinaries}.
 *
 * @example
 * ```ts
 * import { kubeBinaries, type KubeBinariesOptions } from "../../testing.ts";
 *
 * const options: KubeBinariesOptions = {
 *   binDir: ".cache/kube-bin", // a checkout's own folder instead of the user cache
 *   log: (line) => console.log(`[kube-bin] ${line}`),
 * };
 * const bins = await kubeBinaries(options);
 * console.log(bins.apiserver);
 * ```
 */
export interface KubeBinariesOptions {
  /**
   * A folder of prebuilt binaries, used as they are (no Go needed). Default: `$OPERATOR_HUB_KUBE_BIN`, else the
   * user cache folder.
   */
  prebuilt?: string;
  /** Build into (and reuse) exactly this folder, with a `stamp` file, instead of a stamp-keyed cache folder. */
  binDir?: string;
  /** Where the Go module is (default {@linkcode KUBE_SOURCE}). */
  source?: URL;
  /** Reads environment variables (default `Deno.env.get`). */
  env?: (name: string) => string | undefined;
  /** Receives the progress lines; default: stderr. */
  log?: (line: string) => void;
}

/**
 * The binaries could not be found or built.
 *
 * @example
 * ```ts
 * import { kubeBinaries, KubeBuildError } from "../../testing.ts";
 *
 * try {
 *   await kubeBinaries({ prebuilt: "/opt/kube-bin" });
 * } catch (err) {
 *   if (!(err instanceof KubeBuildError)) throw err;
 *   console.error(err.message); // names the folder and the binaries it lacks
 * }
 * ```
 */
export class KubeBuildError extends Error {
  /** An error whose `message` says what could not be found or built, and why. */
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

/** One build input: its path in the module and its bytes. */
export interface SourceFile {
  path: string;
  bytes: Uint8Array;
}

/**
 * Hex sha256 over the build inputs (sorted by path), the ldflags and the Go version: the stamp of a build. The same
 * value as dev/build's stamp of the module, so a checkout's `.cache/kube-bin` and the kit agree on what is current.
 */
export async function sourceStamp(files: readonly SourceFile[], ldflags: string, go: string): Promise<string> {
  const encoder = new TextEncoder();
  const parts: Uint8Array[] = [encoder.encode(`ldflags=${ldflags}\ngo=${go}\n`)];
  for (const file of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    parts.push(encoder.encode(`\0file=${file.path}\0`));
    parts.push(file.bytes);
  }
  const total = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    total.set(part, offset);
    offset += part.length;
  }
  const digest = await crypto.subtle.digest("SHA-256", total);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The user cache folder of the kit: `$OPERATOR_HUB_CACHE`, else `$XDG_CACHE_HOME/operator-hub`, else
 * `$HOME/.cache/operator-hub` (as setup-envtest keeps envtest's binaries in the user's cache).
 *
 * @example
 * ```ts
 * import { kitCacheRoot } from "../../testing.ts";
 *
 * console.log(kitCacheRoot()); // e.g. /home/me/.cache/operator-hub
 * console.log(kitCacheRoot((name) => name === "XDG_CACHE_HOME" ? "/tmp/cache" : undefined)); // /tmp/cache/operator-hub
 * ```
 */
export function kitCacheRoot(env: (name: string) => string | undefined = (n) => Deno.env.get(n)): string {
  const own = env("OPERATOR_HUB_CACHE");
  if (own) return own.replace(/\/+$/, "");
  const xdg = env("XDG_CACHE_HOME");
  if (xdg) return `${xdg.replace(/\/+$/, "")}/operator-hub`;
  const home = env("HOME");
  if (home) return `${home.replace(/\/+$/, "")}/.cache/operator-hub`;
  throw new KubeBuildError(
    "could not choose a cache folder for the test kit's binaries: none of OPERATOR_HUB_CACHE, XDG_CACHE_HOME, HOME is set",
  );
}

/** The binaries' paths in `dir`. */
export function binariesIn(dir: string): Omit<KubeBinaries, "cached" | "buildSeconds"> {
  return {
    dir,
    apiserver: `${dir}/kube-apiserver`,
    controllerManager: `${dir}/kube-controller-manager`,
    etcd: `${dir}/etcd`,
    pki: `${dir}/local-pki`,
  };
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    const info = await Deno.stat(path);
    return info.isFile && ((info.mode ?? 0) & 0o111) !== 0;
  } catch {
    return false;
  }
}

async function missingIn(dir: string): Promise<string[]> {
  const missing: string[] = [];
  for (const name of KUBE_BINARY_NAMES) if (!(await isExecutable(`${dir}/${name}`))) missing.push(name);
  return missing;
}

async function readStamp(dir: string): Promise<string | null> {
  try {
    return (await Deno.readTextFile(`${dir}/stamp`)).trim();
  } catch {
    return null;
  }
}

/** `go env GOVERSION`, or null when there is no working Go toolchain. */
async function goVersion(): Promise<{ version: string } | { error: string }> {
  try {
    const out = await new Deno.Command("go", { args: ["env", "GOVERSION"], stdout: "piped", stderr: "piped" })
      .output();
    if (!out.success) {
      return { error: `\`go env GOVERSION\` exited with code ${out.code}: ${new TextDecoder().decode(out.stderr)}` };
    }
    return { version: new TextDecoder().decode(out.stdout).trim() };
  } catch {
    return { error: "could not run `go env GOVERSION`: is Go 1.26+ installed and on PATH?" };
  }
}

/** Reads the Go module's files from `source` (file: or https:). */
export async function readSources(source: URL = KUBE_SOURCE): Promise<SourceFile[]> {
  return await Promise.all(KUBE_SOURCE_FILES.map(async (path) => {
    const url = new URL(path, source);
    let response: Response;
    try {
      response = await fetch(url);
    } catch (cause) {
      throw new KubeBuildError(`could not read the test kit's Go source ${url}`, { cause });
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new KubeBuildError(`could not read the test kit's Go source ${url}: HTTP ${response.status}`);
    }
    return { path, bytes: new Uint8Array(await response.arrayBuffer()) };
  }));
}

/**
 * The control-plane binaries: prebuilt ones when given, else those cached for the current stamp, else built now.
 *
 * @example
 * ```ts
 * import { kubeBinaries } from "./kube_binaries.ts";
 *
 * const bins = await kubeBinaries(); // builds on first use: minutes; then instant
 * console.log(bins.apiserver, bins.cached);
 * ```
 */
export async function kubeBinaries(options: KubeBinariesOptions = {}): Promise<KubeBinaries> {
  const env = options.env ?? ((name: string) => Deno.env.get(name));
  const log = options.log ?? ((line: string) => console.error(line));
  const prebuilt = options.prebuilt ?? env("OPERATOR_HUB_KUBE_BIN");
  if (prebuilt) {
    const missing = await missingIn(prebuilt);
    if (missing.length > 0) {
      throw new KubeBuildError(
        `the prebuilt binaries folder ${prebuilt} (OPERATOR_HUB_KUBE_BIN or the prebuilt option) lacks executable ` +
          `${missing.join(", ")}; unset it to build them into the user cache`,
      );
    }
    return { ...binariesIn(prebuilt), cached: true, buildSeconds: 0 };
  }
  const go = await goVersion();
  if ("error" in go) {
    // No Go toolchain: a binDir built earlier (for example restored from a CI cache) is still usable.
    if (
      options.binDir && (await readStamp(options.binDir)) !== null && (await missingIn(options.binDir)).length === 0
    ) {
      log(`warning: ${go.error}; using the prebuilt binaries in ${options.binDir} unchecked`);
      return { ...binariesIn(options.binDir), cached: true, buildSeconds: 0 };
    }
    throw new KubeBuildError(
      `${go.error} The test kit builds kube-apiserver, kube-controller-manager and etcd with Go on first use; ` +
        "or set OPERATOR_HUB_KUBE_BIN to a folder of prebuilt binaries.",
    );
  }
  const source = options.source ?? KUBE_SOURCE;
  const files = await readSources(source);
  const ldflags = versionLdflags();
  const stamp = await sourceStamp(files, ldflags, go.version);
  const dir = options.binDir ?? `${kitCacheRoot(env)}/kube/${KUBE_VERSION}-${stamp.slice(0, 16)}`;
  const upToDate = async () => (await readStamp(dir)) === stamp && (await missingIn(dir)).length === 0;
  if (await upToDate()) return { ...binariesIn(dir), cached: true, buildSeconds: 0 };

  await Deno.mkdir(dir, { recursive: true });
  using lock = await Deno.open(`${dir}/.lock`, { create: true, write: true });
  await lock.lock(true);
  try {
    if (await upToDate()) return { ...binariesIn(dir), cached: true, buildSeconds: 0 };
    log(
      `operator-hub testing: building ${KUBE_BINARY_NAMES.join(", ")} (Kubernetes ${KUBE_VERSION}, ${go.version}) ` +
        `from the Go module proxy into ${dir}: once per version, several minutes on a cold Go cache ` +
        "(OPERATOR_HUB_KUBE_BIN=<folder> uses prebuilt binaries instead)",
    );
    const started = performance.now();
    const tmp = await Deno.makeTempDir({ dir, prefix: ".build-" });
    try {
      const moduleDir = source.protocol === "file:" ? decodeURIComponent(source.pathname) : `${tmp}/src`;
      if (source.protocol !== "file:") {
        for (const file of files) {
          const path = `${moduleDir}/${file.path}`;
          await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
          await Deno.writeFile(path, file.bytes);
        }
      }
      const child = new Deno.Command("go", {
        args: ["build", "-trimpath", "-ldflags", ldflags, "-o", `${tmp}/bin/`, "./cmd/..."],
        cwd: moduleDir,
        env: { CGO_ENABLED: "0" },
        stdin: "null",
        stdout: "inherit",
        stderr: "inherit",
      }).spawn();
      const ticker = setInterval(() => {
        log(`operator-hub testing: still building (${((performance.now() - started) / 1000).toFixed(0)} s)`);
      }, 30_000);
      let status: Deno.CommandStatus;
      try {
        status = await child.status;
      } finally {
        clearInterval(ticker);
      }
      if (!status.success) {
        throw new KubeBuildError(
          `go build ./cmd/... in ${moduleDir} failed with exit code ${status.code} (see the output above)`,
        );
      }
      for (const name of KUBE_BINARY_NAMES) await Deno.rename(`${tmp}/bin/${name}`, `${dir}/${name}`);
    } finally {
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
    await Deno.writeTextFile(`${dir}/stamp`, `${stamp}\n`);
    const buildSeconds = (performance.now() - started) / 1000;
    log(`operator-hub testing: built in ${buildSeconds.toFixed(1)} s into ${dir}`);
    return { ...binariesIn(dir), cached: false, buildSeconds };
  } finally {
    await lock.unlock();
  }
}
