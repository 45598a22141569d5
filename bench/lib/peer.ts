// The kube-rs peer (bench/peers/kube_rs): built with cargo on first use, run as a subprocess, measured from /proc.
//
// Guarantees: a peer that cannot be built is reported as `{ ok: false, error }` with cargo's own last lines; the
// bench never substitutes another figure for it. The build is `cargo build --release --locked` (Cargo.lock is
// committed), so cargo's own cache makes every later call a no-op of well under a second.

import { cpuMs, memoryMb } from "./proc.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
/** The peer's Cargo project. */
export const PEER_DIR = `${ROOT}bench/peers/kube_rs`;
const BINARY = `${PEER_DIR}/target/release/uuid_peer_kube_rs`;

/** The outcome of building the peer. */
export type PeerBuild =
  | { ok: true; binary: string; buildSeconds: number }
  | { ok: false; error: string };

/** Runs `cargo build --release --locked` in bench/peers/kube_rs (a no-op when nothing changed). */
export async function buildPeer(log: (msg: string) => void): Promise<PeerBuild> {
  const t0 = performance.now();
  log(`peer: cargo build --release --locked in ${PEER_DIR} (about 2 minutes the first time)`);
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command("cargo", {
      args: ["build", "--release", "--locked", "--quiet"],
      cwd: PEER_DIR,
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (err) {
    return { ok: false, error: `cannot run cargo (${(err as Error).message}); install Rust to measure the peer` };
  }
  const seconds = (performance.now() - t0) / 1000;
  if (out.code !== 0) {
    const tail = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-8).join("\n");
    return { ok: false, error: `cargo build --release --locked exited with ${out.code}:\n${tail}` };
  }
  return { ok: true, binary: BINARY, buildSeconds: seconds };
}

/** A running peer on `contexts`, watching one namespace, measured from outside. */
export class PeerProcess {
  readonly spawnedAt: number;
  readonly logs: string[] = [];
  readonly #child: Deno.ChildProcess;
  readonly #done: Promise<Deno.CommandStatus>;
  readonly #pump: Promise<void>;
  readonly #contexts: string[];
  /** The contexts that printed `synced` (kept apart from the log lines, which are trimmed). */
  readonly #synced = new Set<string>();
  #exited: Deno.CommandStatus | undefined;
  #peakSampled = 0;
  #sampler: ReturnType<typeof setInterval>;

  private constructor(child: Deno.ChildProcess, contexts: string[], spawnedAt: number) {
    this.#child = child;
    this.#contexts = contexts;
    this.spawnedAt = spawnedAt;
    this.#done = child.status.then((s) => (this.#exited = s));
    this.#pump = this.#read(child.stderr);
    this.#sampler = setInterval(() => {
      const m = memoryMb(child.pid);
      if (m.peak > this.#peakSampled) this.#peakSampled = m.peak;
    }, 250);
  }

  /** Spawns the peer binary on `contexts` of clusters/local.yaml, watching `namespace`. */
  static start(binary: string, contexts: string[], namespace: string, statusSubresource: boolean): PeerProcess {
    return PeerProcess.#spawn(binary, contexts, [
      "--kubeconfig",
      `${ROOT}clusters/local.yaml`,
      "--contexts",
      contexts.join(","),
      "--namespace",
      namespace,
      "--status-subresource",
      String(statusSubresource),
    ]);
  }

  /**
   * Spawns the peer binary on every context of `kubeconfig` (the bench's tenant contexts), each watching its own
   * context's namespace.
   */
  static startOnTenants(binary: string, kubeconfig: string, contexts: string[]): PeerProcess {
    return PeerProcess.#spawn(binary, contexts, ["--kubeconfig", kubeconfig, "--context-namespace", "true"]);
  }

  static #spawn(binary: string, contexts: string[], args: string[]): PeerProcess {
    const spawnedAt = performance.now();
    const child = new Deno.Command(binary, { args, cwd: ROOT, stdin: "null", stdout: "null", stderr: "piped" }).spawn();
    return new PeerProcess(child, contexts, spawnedAt);
  }

  async #read(stream: ReadableStream<Uint8Array>): Promise<void> {
    let buf = "";
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      buf += text;
      const lines = buf.split("\n");
      buf = lines.pop()!;
      for (const line of lines) {
        if (line.startsWith("synced ")) this.#synced.add(line.slice(7));
        else if (line) this.logs.push(line);
      }
      if (this.logs.length > 2000) this.logs.splice(0, this.logs.length - 1000);
    }
    if (buf.startsWith("synced ")) this.#synced.add(buf.slice(7));
    else if (buf) this.logs.push(buf);
  }

  get pid(): number {
    return this.#child.pid;
  }

  /** Waits until every context printed `synced`; resolves with seconds from spawn. */
  async waitReady(timeoutMs = 120_000): Promise<number> {
    const deadline = this.spawnedAt + timeoutMs;
    while (performance.now() < deadline) {
      if (this.#exited) throw new Error(`peer exited with ${this.#exited.code}\n${this.tail()}`);
      if (this.#synced.size >= this.#contexts.length && this.#contexts.every((c) => this.#synced.has(c))) {
        return (performance.now() - this.spawnedAt) / 1000;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(
      `peer not synced after ${timeoutMs} ms (${this.#synced.size} of ${this.#contexts.length} contexts)\n${this.tail()}`,
    );
  }

  cpuMs(): number {
    return cpuMs(this.#child.pid);
  }

  /** Current RSS and the peak (VmHWM, and the bench's own samples as a cross-check) in MB. */
  memory(): { rss: number; peak: number } {
    const m = memoryMb(this.#child.pid);
    return { rss: m.rss, peak: Math.max(m.peak, this.#peakSampled) };
  }

  tail(n = 20): string {
    return this.logs.slice(-n).join("\n");
  }

  /** SIGTERM (kube-rs shuts its controllers down gracefully), SIGKILL after 10 s. */
  async stop(): Promise<void> {
    clearInterval(this.#sampler);
    if (!this.#exited) {
      try {
        this.#child.kill("SIGTERM");
      } catch { /* already gone */ }
    }
    const timer = setTimeout(() => {
      try {
        this.#child.kill("SIGKILL");
      } catch { /* gone */ }
    }, 10_000);
    const status = await this.#done;
    clearTimeout(timer);
    await this.#pump;
    if (status.code !== 0 && status.signal !== "SIGTERM") {
      console.error(`warning: peer exited with ${status.code}\n${this.tail()}`);
    }
  }
}
