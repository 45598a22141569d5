// What the Go builds of dev/build (the control planes, helm, the exec plugin) share: the Go version, the hash of a module's build
// inputs, and the stamp that says which inputs the cached binaries were built from. Private to dev/build (and bench/lib/peer_go.ts).

import { sourceStamp } from "../../src/testing/kube_binaries.ts";

/** Relative paths (sorted) of every file whose content decides a module's build: go.mod, go.sum and cmd/**\/*.go. */
async function buildInputs(moduleDir: string): Promise<string[]> {
  const files = ["go.mod", "go.sum"];
  const walk = async (rel: string): Promise<void> => {
    for await (const entry of Deno.readDir(`${moduleDir}/${rel}`)) {
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory) await walk(child);
      else if (entry.isFile && entry.name.endsWith(".go")) files.push(child);
    }
  };
  await walk("cmd");
  return files.sort();
}

/** `go env GOVERSION`; a missing or failing Go toolchain is thrown as `makeError(message, cause)`. */
export async function goVersion(makeError: (message: string, cause?: unknown) => Error): Promise<string> {
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command("go", { args: ["env", "GOVERSION"], stdout: "piped", stderr: "piped" }).output();
  } catch (cause) {
    throw makeError("could not run `go env GOVERSION`: is Go 1.26+ installed and on PATH?", cause);
  }
  if (!out.success) {
    throw makeError(`\`go env GOVERSION\` exited with code ${out.code}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout).trim();
}

/** Hex sha256 over a module's build inputs, its ldflags and the Go version (the kit's `sourceStamp` of those files). */
export async function moduleHash(moduleDir: string, ldflags: string, go: string): Promise<string> {
  const files = await Promise.all(
    (await buildInputs(moduleDir)).map(async (path) => ({ path, bytes: await Deno.readFile(`${moduleDir}/${path}`) })),
  );
  return sourceStamp(files, ldflags, go);
}

/** The hash the binaries in `binDir` were built from, or null when nothing was built there yet. */
export async function readStamp(binDir: string): Promise<string | null> {
  try {
    return (await Deno.readTextFile(`${binDir}/stamp`)).trim();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** True when `path` is a file with an execute bit. */
export async function isExecutable(path: string): Promise<boolean> {
  try {
    const info = await Deno.stat(path);
    return info.isFile && ((info.mode ?? 0) & 0o111) !== 0;
  } catch {
    return false;
  }
}
