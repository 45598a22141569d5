// Runs the hub as a real subprocess, with exactly the permissions of `deno task run`, for end-to-end tests.
// deno-lint-ignore-file no-explicit-any -- JSON from the apiserver and the hub is checked by the tests themselves.

import { freePort } from "./free_port.ts";

export { freePort };

const root = new URL("../..", import.meta.url).pathname;

/** The permission flags of deno.json's `run` task, so tests exercise what users (and the binary) get. */
export function runTaskPermissions(): string[] {
  const config = JSON.parse(Deno.readTextFileSync(`${root}deno.json`));
  const words: string[] = config.tasks.run.split(/\s+/);
  return words.filter((w) => w.startsWith("--allow-") || w.startsWith("--deny-"));
}

export interface HubProcessOptions {
  clusters: string[];
  /** Extra flags, e.g. ["--namespace", "x"]. */
  args?: string[];
  /** Kubeconfig files; default clusters/local.yaml. */
  kubeconfigs?: string[];
  /** The script to run instead of src/cli/main.ts (e.g. examples/run_greeting.ts), relative to the repository root. */
  entry?: string;
  /** Replaces the run task's permission flags (to prove a missing permission fails clearly). */
  permissions?: string[];
  env?: Record<string, string>;
  /** Keeps every log line in memory for later inspection. Default true. */
  captureLogs?: boolean;
}

/** A running hub. */
export class HubProcess {
  readonly port: number;
  readonly logs: string[] = [];
  readonly #child: Deno.ChildProcess;
  readonly #done: Promise<Deno.CommandStatus>;
  readonly #pumps: Promise<void>[] = [];
  #exited: Deno.CommandStatus | undefined;

  private constructor(child: Deno.ChildProcess, port: number) {
    this.#child = child;
    this.port = port;
    this.#done = child.status.then((s) => (this.#exited = s));
  }

  static start(options: HubProcessOptions): HubProcess {
    const port = freePort();
    const kubeconfigs = options.kubeconfigs ?? [`${root}clusters/local.yaml`];
    const args = [
      "run",
      ...(options.permissions ?? runTaskPermissions()),
      `${root}${options.entry ?? "src/cli/main.ts"}`,
      ...kubeconfigs.flatMap((k) => ["--kubeconfig", k]),
      "--clusters",
      options.clusters.join(","),
      "--liveness",
      `http://127.0.0.1:${port}/healthz`,
      "--log-format",
      "json",
      ...(options.args ?? []),
    ];
    const child = new Deno.Command(Deno.execPath(), {
      args,
      cwd: root,
      env: { NO_COLOR: "1", ...options.env },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const hub = new HubProcess(child, port);
    hub.#pumps.push(hub.#pump(child.stdout), hub.#pump(child.stderr));
    return hub;
  }

  async #pump(stream: ReadableStream<Uint8Array>): Promise<void> {
    let buf = "";
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      buf += text;
      const lines = buf.split("\n");
      buf = lines.pop()!;
      this.logs.push(...lines.filter(Boolean));
    }
    if (buf) this.logs.push(buf);
  }

  get pid(): number {
    return this.#child.pid;
  }

  get exited(): Deno.CommandStatus | undefined {
    return this.#exited;
  }

  /** GETs a health path; returns the status code and parsed JSON (or text for /metrics). */
  async get(path: string): Promise<{ status: number; body: any; text: string }> {
    const res = await fetch(`http://127.0.0.1:${this.port}${path}`);
    const text = await res.text();
    let body: unknown = undefined;
    try {
      body = JSON.parse(text);
    } catch { /* /metrics is text */ }
    return { status: res.status, body, text };
  }

  /** Waits until `check` holds for the /status document. */
  async waitStatus(check: (status: any) => boolean, timeoutMs = 60_000, what = "hub status"): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    while (Date.now() < deadline) {
      if (this.#exited) {
        throw new Error(`hub exited with ${this.#exited.code} while waiting for ${what}\n${this.tail()}`);
      }
      try {
        last = (await this.get("/status")).body;
        if (last && check(last)) return last;
      } catch { /* not listening yet */ }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(
      `timed out after ${timeoutMs} ms waiting for ${what}; last /status: ${JSON.stringify(last)}\n${this.tail()}`,
    );
  }

  /** Waits for /readyz to answer 200. */
  waitReady(timeoutMs = 60_000): Promise<unknown> {
    return this.waitStatus((s) => s.ready === true, timeoutMs, "readiness");
  }

  /** Sends a signal and waits for the exit status. */
  async stop(signal: Deno.Signal = "SIGTERM"): Promise<Deno.CommandStatus> {
    if (!this.#exited) {
      try {
        this.#child.kill(signal);
      } catch { /* already gone */ }
    }
    const status = await this.#done;
    await Promise.all(this.#pumps);
    return status;
  }

  kill(): Promise<Deno.CommandStatus> {
    return this.stop("SIGKILL");
  }

  tail(n = 30): string {
    return this.logs.slice(-n).join("\n");
  }
}

/** Runs the hub CLI to completion (for flag and kubeconfig errors). */
export async function runHubCli(
  args: string[],
  options: { permissions?: string[]; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...(options.permissions ?? runTaskPermissions()), `${root}src/cli/main.ts`, ...args],
    cwd: root,
    env: { NO_COLOR: "1", ...options.env },
    stdin: "null",
    signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
  }).output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}
