// The controller-runtime peer (bench/peers/controller_runtime): built with `go build` on first use into
// .cache/peer-controller-runtime-bin/, run as a subprocess beside the hub and the kube-rs peer (bench/lib/peer.ts's
// PeerProcess: the same command line, the same `synced <context>` lines, measured from /proc).
//
// Guarantees: rebuilt only when the sha256 over go.mod, go.sum, cmd/**/*.go and the Go version differs from the stamp
// beside the binary (the tests' Go builds' rule, dev/build/_go_build.ts), so every later call takes well under a
// second; the binary is renamed into place. A peer that cannot be built is `{ ok: false, error }` with go's last
// lines; the bench never substitutes another figure for it.
//
// Assumptions: `go` 1.26+ on PATH and the Go module proxy (or a warm module cache) for the pinned modules of go.mod.

import { goVersion, isExecutable, moduleHash, readStamp } from "../../dev/build/_go_build.ts";
import type { PeerBuild } from "./peer.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
/** The peer's Go module. */
export const GO_PEER_DIR = `${ROOT}bench/peers/controller_runtime`;
const BIN_DIR = `${ROOT}.cache/peer-controller-runtime-bin`;
const BINARY = `${BIN_DIR}/uuid_peer_controller_runtime`;
const LDFLAGS = "-s -w";

/** Builds the controller-runtime peer when its sources changed (about 2 minutes the first time). */
export async function buildGoPeer(log: (msg: string) => void): Promise<PeerBuild> {
  const t0 = performance.now();
  let hash: string;
  try {
    await Deno.mkdir(BIN_DIR, { recursive: true });
    const go = await goVersion((message) => new Error(message));
    hash = await moduleHash(GO_PEER_DIR, LDFLAGS, go);
  } catch (err) {
    return { ok: false, error: `cannot build the controller-runtime peer: ${(err as Error).message}` };
  }
  if ((await readStamp(BIN_DIR)) === hash && (await isExecutable(BINARY))) {
    return { ok: true, binary: BINARY, buildSeconds: (performance.now() - t0) / 1000 };
  }
  log(`go peer: go build in ${GO_PEER_DIR} (about 2 minutes the first time)`);
  const tmp = await Deno.makeTempDir({ dir: BIN_DIR, prefix: ".build-" });
  try {
    const out = await new Deno.Command("go", {
      args: ["build", "-trimpath", "-ldflags", LDFLAGS, "-o", `${tmp}/peer`, "./cmd/uuid_peer_controller_runtime"],
      cwd: GO_PEER_DIR,
      env: { CGO_ENABLED: "0", GOFLAGS: "-mod=mod" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) {
      const tail = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-8).join("\n");
      return { ok: false, error: `go build in ${GO_PEER_DIR} exited with ${out.code}:\n${tail}` };
    }
    await Deno.rename(`${tmp}/peer`, BINARY);
    await Deno.writeTextFile(`${BIN_DIR}/stamp`, `${hash}\n`);
  } catch (err) {
    return {
      ok: false,
      error: `cannot run go build (${(err as Error).message}); install Go 1.26+ to measure the peer`,
    };
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
  return { ok: true, binary: BINARY, buildSeconds: (performance.now() - t0) / 1000 };
}

if (import.meta.main) {
  const b = await buildGoPeer((m) => console.error(m));
  if (!b.ok) {
    console.error(b.error);
    Deno.exit(1);
  }
  console.log(`${b.binary} (${b.buildSeconds.toFixed(1)} s)`);
}
