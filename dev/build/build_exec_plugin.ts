// Builds the tests' exec credential plugin (dev/build/exec_plugin/, Go standard library only) into
// .cache/exec-plugin-bin/, rebuilding only on change, like the control planes and helm.
//
// Guarantees:
// - rebuilt only when the sha256 over go.mod, go.sum, cmd/**/*.go and the Go version differs from the one stored in
//   `.cache/exec-plugin-bin/stamp`, or when the binary is missing;
// - concurrent callers build at most once (an exclusive lock on `.cache/exec-plugin-bin/.lock`, the stamp re-checked
//   once held); the binary is renamed into place, so a running plugin is never overwritten.
//
// Assumptions: `go` (1.26+) is on PATH. Nothing is downloaded (no dependencies).

import { goVersion as goVersionOf, isExecutable, moduleHash, readStamp } from "./_go_build.ts";
import { REPO_ROOT } from "./build.ts";

export const EXEC_PLUGIN_MODULE_DIR = `${REPO_ROOT}/dev/build/exec_plugin`;
export const EXEC_PLUGIN_BIN_DIR = `${REPO_ROOT}/.cache/exec-plugin-bin`;
/** The built plugin's path. */
export const EXEC_PLUGIN = `${EXEC_PLUGIN_BIN_DIR}/expiring-token-plugin`;

/** The build failed or its inputs could not be read. */
export class ExecPluginBuildError extends Error {
  override name = "ExecPluginBuildError";
}

/** Returns the plugin's path, building it first when the stamp does not match the sources. */
export async function ensureExecPlugin(log: (line: string) => void = (l) => console.error(l)): Promise<string> {
  await Deno.mkdir(EXEC_PLUGIN_BIN_DIR, { recursive: true });
  const go = await goVersionOf((message, cause) => new ExecPluginBuildError(message, { cause }));
  const hash = await moduleHash(EXEC_PLUGIN_MODULE_DIR, "-s -w", go);
  const upToDate = async () => (await readStamp(EXEC_PLUGIN_BIN_DIR)) === hash && (await isExecutable(EXEC_PLUGIN));
  if (await upToDate()) return EXEC_PLUGIN;
  using lock = await Deno.open(`${EXEC_PLUGIN_BIN_DIR}/.lock`, { create: true, write: true });
  await lock.lock(true);
  try {
    if (await upToDate()) return EXEC_PLUGIN;
    log(`building the tests' exec credential plugin into ${EXEC_PLUGIN_BIN_DIR}`);
    const tmp = await Deno.makeTempDir({ dir: EXEC_PLUGIN_BIN_DIR, prefix: ".build-" });
    try {
      const out = await new Deno.Command("go", {
        args: ["build", "-trimpath", "-ldflags", "-s -w", "-o", `${tmp}/plugin`, "./cmd/expiring-token-plugin"],
        cwd: EXEC_PLUGIN_MODULE_DIR,
        env: { CGO_ENABLED: "0", GOFLAGS: "-mod=mod" },
        stdout: "inherit",
        stderr: "inherit",
      }).output();
      if (!out.success) {
        throw new ExecPluginBuildError(`go build in ${EXEC_PLUGIN_MODULE_DIR} failed with exit code ${out.code}`);
      }
      await Deno.rename(`${tmp}/plugin`, EXEC_PLUGIN);
    } finally {
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
    await Deno.writeTextFile(`${EXEC_PLUGIN_BIN_DIR}/stamp`, `${hash}\n`);
    return EXEC_PLUGIN;
  } finally {
    await lock.unlock();
  }
}

if (import.meta.main) {
  try {
    const started = performance.now();
    const path = await ensureExecPlugin();
    console.log(`exec credential plugin ready in ${((performance.now() - started) / 1000).toFixed(1)}s: ${path}`);
  } catch (error) {
    console.error(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
    Deno.exit(1);
  }
}
