// A dedicated, disposable kube-apiserver for fault tests, on the shared etcd, plus etcd, kubeconfig and admin helpers.
//
// Why not `clustersUp({ names: ["fault"] })`: a cluster recorded in .cache/clusters/state.json is part of everybody's
// world. While a fault test keeps it down, `requireClusters()` (and so `testNamespace()`, which by default creates its
// namespace in every recorded cluster) fails for every other test running at the same time, and the recorded
// apiserver can only be restarted with the fixed flags of dev/clusters/clusters.ts. A FaultApiserver is the same real
// binary with the same flags, but private to the test that started it: its own port, etcd prefix, token file, serving
// certificate and extra flags (e.g. `--watch-cache=false`), and it never appears in clusters/local.yaml.
//
// Guarantees:
// - `start` resolves once /readyz answers 200 and the production Uuid CRD is Established.
// - The port, serving certificate (and CA), admin token and etcd data survive `kill`/`stop` + `restart`.
// - `destroy` stops the process, deletes its etcd prefix and its folder. `deno task clusters:down` also stops it (it
//   stops every process of the apiserver binary), so a crashed test leaves nothing behind for long.
// - Tokens are random, kept in files of mode 0600 and never printed.
//
// Assumptions: the local clusters are up (`deno task clusters:up`): the shared etcd and the binaries are reused.

import { KUBE_BIN_DIR, REPO_ROOT } from "../build/build.ts";
import {
  apiserverArgs,
  type ApiserverRecord,
  applyCrds,
  CRDS_DIR,
  ETCD_CLIENT_PORT,
  type EtcdRecord,
  readStateSync,
  STATE_DIR,
} from "../clusters/clusters.ts";
import { pidRunning, spawnDetached, stopPid, waitPortFree } from "../clusters/_process.ts";
import { ClusterApi } from "./cluster_api.ts";
import { freePort } from "./free_port.ts";
import { kubeconfigText, type KubeContext, type KubeUser } from "./kubeconfig_text.ts";
import { ClustersNotRunningError } from "./local_clusters.ts";
import { setTimeout as sleep } from "node:timers/promises";

/** Where fault tests keep their apiservers, kubeconfigs and captured logs (ignored by git). */
export const FAULTS_DIR = `${REPO_ROOT}/.cache/faults`;
/** The shared etcd's plain-HTTP client URL (v3 gRPC gateway). */
export const ETCD_URL = `http://127.0.0.1:${ETCD_CLIENT_PORT}`;
const APISERVER_BINARY = `${KUBE_BIN_DIR}/kube-apiserver`;

/** A fault-test helper could not do its job. */
export class FaultSetupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "FaultSetupError";
  }
}

/** 64 random hex characters. */
export function randomToken(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("");
}

function randomSuffix(): string {
  return randomToken().slice(0, 8);
}

// ---------------------------------------------------------------------------------------------------------------
// etcd (v3 gRPC gateway on the shared etcd)

const b64 = (s: string) => btoa(String.fromCharCode(...new TextEncoder().encode(s)));
const unb64 = (s: string) => new TextDecoder().decode(Uint8Array.from(atob(s), (c) => c.charCodeAt(0)));

/** The key just after every key starting with `prefix` (etcd's range_end for a prefix). */
function prefixEnd(prefix: string): string {
  const bytes = new TextEncoder().encode(prefix);
  bytes[bytes.length - 1]++;
  return btoa(String.fromCharCode(...bytes));
}

async function etcdCall<T>(path: string, body: unknown): Promise<T> {
  const res = await fetch(`${ETCD_URL}${path}`, {
    method: "POST",
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (!res.ok) throw new FaultSetupError(`etcd ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/** etcd's current revision (global across every cluster sharing it). */
export async function etcdRevision(): Promise<number> {
  const out = await etcdCall<{ header: { revision: string } }>("/v3/kv/range", { key: b64("/"), limit: 1 });
  return Number(out.header.revision);
}

/**
 * Compacts etcd's history up to its current revision (physically), so any resourceVersion or continue token older
 * than now is gone: watches from them end with an ERROR 410 event, continued lists answer HTTP 410. Returns the
 * revision compacted to.
 */
export async function etcdCompact(): Promise<number> {
  // Write first, so the revision moves past any resourceVersion handed out until now (and past an earlier compaction).
  await etcdPut("/operator-hub-fault-tests/compaction-marker", new Date().toISOString());
  const revision = await etcdRevision();
  await etcdCall("/v3/kv/compaction", { revision: String(revision), physical: true });
  return revision;
}

/** The raw value of one etcd key, or undefined. */
export async function etcdGet(key: string): Promise<string | undefined> {
  const out = await etcdCall<{ kvs?: { value: string }[] }>("/v3/kv/range", { key: b64(key) });
  return out.kvs?.[0] ? unb64(out.kvs[0].value) : undefined;
}

/** The keys under `prefix` (at most `limit`). */
export async function etcdKeys(prefix: string, limit = 1000): Promise<string[]> {
  const out = await etcdCall<{ kvs?: { key: string }[] }>("/v3/kv/range", {
    key: b64(prefix),
    range_end: prefixEnd(prefix),
    keys_only: true,
    limit: String(limit),
  });
  return (out.kvs ?? []).map((kv) => unb64(kv.key));
}

/** Writes one etcd key directly, behind the apiserver's back (no admission, no validation). */
export async function etcdPut(key: string, value: string): Promise<void> {
  await etcdCall("/v3/kv/put", { key: b64(key), value: b64(value) });
}

/** Deletes every key under `prefix`; returns how many. */
export async function etcdDeletePrefix(prefix: string): Promise<number> {
  if (!prefix.startsWith("/registry-fault")) throw new FaultSetupError(`refusing to delete etcd prefix ${prefix}`);
  const out = await etcdCall<{ deleted?: string }>("/v3/kv/deleterange", {
    key: b64(prefix),
    range_end: prefixEnd(prefix),
  });
  return Number(out.deleted ?? 0);
}

// ---------------------------------------------------------------------------------------------------------------
// kubeconfig files (their text: kubeconfig_text.ts)

/** A temporary folder under .cache/faults (mode 0700) that removes itself. */
export interface TempDir extends AsyncDisposable {
  path: string;
  /** Writes `name` in the folder with mode 0600 (atomically) and returns its path. */
  write(name: string, text: string, mode?: number): Promise<string>;
  remove(): Promise<void>;
}

/** Creates a temporary folder for one test's kubeconfigs, token files and plugins. */
export async function tempDir(prefix: string): Promise<TempDir> {
  await Deno.mkdir(FAULTS_DIR, { recursive: true, mode: 0o700 });
  const path = await Deno.makeTempDir({ dir: FAULTS_DIR, prefix: `${prefix}-` });
  await Deno.chmod(path, 0o700);
  const remove = () => Deno.remove(path, { recursive: true }).catch(() => {});
  return {
    path,
    async write(name: string, text: string, mode = 0o600): Promise<string> {
      const file = `${path}/${name}`;
      const tmp = `${file}.tmp-${randomSuffix()}`;
      await Deno.writeTextFile(tmp, text, { mode });
      await Deno.chmod(tmp, mode);
      await Deno.rename(tmp, file);
      return file;
    },
    remove,
    [Symbol.asyncDispose]: remove,
  };
}

/** Every admin token of the shared local clusters (for the "no credential in any output" checks). */
export function localClusterTokens(): string[] {
  return readStateSync()?.clusters.map((c) => c.token) ?? [];
}

// ---------------------------------------------------------------------------------------------------------------
// The apiserver

/** Options of {@linkcode FaultApiserver.start}. */
export interface FaultApiserverOptions {
  /** Label used in folder and prefix names. */
  name: string;
  /** Flags appended to the standard ones (a later flag wins), e.g. ["--watch-cache=false"]. */
  extraArgs?: string[];
  /** Install crds/ (default true; false when `peerOf` is set). */
  installCrds?: boolean;
  /** Share this apiserver's etcd prefix: a second replica of the same cluster (an HA control plane). */
  peerOf?: FaultApiserver;
}

/** One line of the apiserver's static token file. */
export interface StaticToken {
  token: string;
  user: string;
  groups?: string[];
}

/** A private kube-apiserver for one fault test (see the file comment). */
export class FaultApiserver {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  readonly certDir: string;
  readonly etcdPrefix: string;
  readonly adminToken: string;
  readonly logFile: string;
  readonly tokenFile: string;
  #extraArgs: string[];
  #tokens: StaticToken[];
  readonly #ownsPrefix: boolean;
  #pid: number | null = null;
  #http: Deno.HttpClient | undefined;

  private constructor(options: FaultApiserverOptions) {
    this.name = options.name;
    this.port = freePort();
    this.url = `https://127.0.0.1:${this.port}`;
    this.dir = `${FAULTS_DIR}/apiserver-${options.name}-${randomSuffix()}`;
    this.certDir = `${this.dir}/certs`;
    this.etcdPrefix = options.peerOf?.etcdPrefix ?? `/registry-fault-${options.name}-${randomSuffix()}`;
    this.adminToken = randomToken();
    this.logFile = `${this.dir}/apiserver.log`;
    this.tokenFile = `${this.dir}/tokens.csv`;
    this.#ownsPrefix = !options.peerOf;
    this.#extraArgs = options.extraArgs ?? [];
    this.#tokens = [{ token: this.adminToken, user: "admin", groups: ["system:masters"] }];
  }

  /** Starts a new apiserver and waits until it serves the Uuid CRD. */
  static async start(options: FaultApiserverOptions): Promise<FaultApiserver> {
    const state = readStateSync();
    if (!state) throw new ClustersNotRunningError(`no state file in ${STATE_DIR}`);
    const server = new FaultApiserver(options);
    await Deno.mkdir(server.certDir, { recursive: true, mode: 0o700 });
    try {
      await server.restart();
      if (options.installCrds ?? !options.peerOf) await server.installCrds();
    } catch (err) {
      await server.destroy().catch(() => {});
      throw err;
    }
    return server;
  }

  get pid(): number | null {
    return this.#pid;
  }

  /** The apiserver's self-generated serving certificate, which is also the CA to trust (covers 127.0.0.1). */
  get caFile(): string {
    return `${this.certDir}/apiserver.crt`;
  }

  get keyFile(): string {
    return `${this.certDir}/apiserver.key`;
  }

  get caPem(): string {
    return Deno.readTextFileSync(this.caFile);
  }

  /** Path of a kubeconfig with one admin context named after this apiserver (for kubectl). */
  get adminKubeconfig(): string {
    return `${this.dir}/admin.kubeconfig`;
  }

  /** A kubeconfig context for this apiserver, optionally through `server` (a proxy), as `user` (default admin). */
  context(name: string, options: { server?: string; user?: KubeUser } = {}): KubeContext {
    return {
      name,
      server: options.server ?? this.url,
      caPem: this.caPem,
      user: options.user ?? { token: this.adminToken },
    };
  }

  /** An admin client of this apiserver, reported as `name` (default its own); close it when done. */
  api(name = this.name): ClusterApi {
    return new ClusterApi({ name, server: this.url, token: this.adminToken, caPem: this.caPem });
  }

  /** Replaces the static tokens (besides admin) the apiserver accepts from its next (re)start. */
  setTokens(tokens: StaticToken[]): void {
    this.#tokens = [{ token: this.adminToken, user: "admin", groups: ["system:masters"] }, ...tokens];
  }

  /** Replaces the extra flags used from the next (re)start. */
  setExtraArgs(args: string[]): void {
    this.#extraArgs = args;
  }

  /** Starts the process (same port, certificates, etcd data) and waits for /readyz 200. */
  async restart(options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.alive()) await this.stop();
    await this.#writeTokenFile();
    const record: ApiserverRecord = {
      name: this.name,
      port: this.port,
      url: this.url,
      pid: null,
      token: this.adminToken,
      etcdPrefix: this.etcdPrefix,
      dir: this.dir,
      certDir: this.certDir,
      caFile: this.caFile,
      tokenFile: this.tokenFile,
      logFile: this.logFile,
    };
    const etcd = { clientUrl: ETCD_URL } as EtcdRecord;
    await waitPortFree(this.port, `apiserver ${this.name}`, 15_000);
    await Deno.writeTextFile(this.logFile, `--- started ${new Date().toISOString()}\n`, { append: true });
    this.#pid = await spawnDetached(
      APISERVER_BINARY,
      [...apiserverArgs(record, etcd), ...this.#extraArgs],
      this.logFile,
    );
    await this.#waitReady(options.timeoutMs ?? 90_000);
    await Deno.writeTextFile(this.adminKubeconfig, kubeconfigText([this.context(this.name)]), { mode: 0o600 });
  }

  /** True while the process runs. */
  alive(): boolean {
    return this.#pid !== null && pidRunning(this.#pid);
  }

  /** Kills the process with SIGKILL (a crash) and waits until it is gone. */
  kill(): Promise<void> {
    return this.stop("SIGKILL");
  }

  /** Stops the process (SIGTERM, SIGKILL after 10 s) and waits until it is gone. */
  async stop(signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
    const pid = this.#pid;
    this.#http?.close();
    this.#http = undefined;
    if (pid === null) return;
    await stopPid(pid, { signal });
    this.#pid = null;
  }

  /** Stops the process, deletes its etcd data and its folder. */
  async destroy(): Promise<void> {
    await this.stop("SIGKILL");
    if (this.#ownsPrefix) await etcdDeletePrefix(this.etcdPrefix).catch(() => 0);
    await Deno.remove(this.dir, { recursive: true }).catch(() => {});
  }

  /** Applies crds/ and waits until Established and served with its status subresource. */
  async installCrds(): Promise<void> {
    const files: string[] = [];
    for await (const e of Deno.readDir(CRDS_DIR)) if (/\.ya?ml$/.test(e.name)) files.push(`${CRDS_DIR}/${e.name}`);
    await this.installCrdFiles(files.sort(), true);
  }

  /**
   * Applies CRD manifests (server-side, like `clusters:up`) and waits until discovery serves the Uuid resource with
   * (`statusSubresource` true) or without the status subresource: e.g. dev/support/fixtures/seed_uuid_crd.yaml.
   */
  async installCrdFiles(files: string[], statusSubresource: boolean): Promise<void> {
    await applyCrds(this.adminKubeconfig, this.name, files);
    const deadline = performance.now() + 30_000;
    while (performance.now() < deadline) {
      const r = await this.rawRequest("GET", "/apis/demo.operator/v1");
      if (r.status === 200 && r.body.includes('"uuid"') && r.body.includes('"uuid/status"') === statusSubresource) {
        return;
      }
      await sleep(50);
    }
    throw new FaultSetupError(`apiserver ${this.name} did not serve the Uuid CRD from ${files} within 30 s`);
  }

  /** Runs kubectl against this apiserver as admin; throws with stderr on failure. */
  async kubectl(args: string[], stdin?: string): Promise<string> {
    const child = new Deno.Command("kubectl", {
      args: [`--kubeconfig=${this.adminKubeconfig}`, `--context=${this.name}`, ...args],
      stdin: stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(60_000),
    }).spawn();
    if (stdin !== undefined) {
      const w = child.stdin.getWriter();
      await w.write(new TextEncoder().encode(stdin));
      await w.close();
    }
    const out = await child.output();
    const d = new TextDecoder();
    if (!out.success) {
      throw new FaultSetupError(
        `kubectl ${args.join(" ")} on ${this.name} exited ${out.code}: ${d.decode(out.stderr)}`,
      );
    }
    return d.decode(out.stdout);
  }

  /** One admin request; resolves with status and body text (never throws on a non-2xx). */
  async rawRequest(
    method: string,
    path: string,
    body?: unknown,
    contentType = "application/json",
  ): Promise<{ status: number; body: string }> {
    this.#http ??= Deno.createHttpClient({ caCerts: [this.caPem] });
    const res = await fetch(this.url + path, {
      method,
      client: this.#http,
      headers: { authorization: `Bearer ${this.adminToken}`, "content-type": contentType, accept: "application/json" },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: res.status, body: await res.text() };
  }

  /** Closes the admin HTTP client (keeps the process running). */
  closeClient(): void {
    this.#http?.close();
    this.#http = undefined;
  }

  async #writeTokenFile(): Promise<void> {
    const lines = this.#tokens.map((t) =>
      `${t.token},${t.user},${t.user}${t.groups?.length ? `,"${t.groups.join(",")}"` : ""}`
    );
    const tmp = `${this.tokenFile}.tmp`;
    await Deno.writeTextFile(tmp, lines.join("\n") + "\n", { mode: 0o600 });
    await Deno.rename(tmp, this.tokenFile);
  }

  async #waitReady(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (true) {
      if (!this.alive()) {
        const log = await Deno.readTextFile(this.logFile).catch(() => "");
        throw new FaultSetupError(
          `fault apiserver ${this.name} (port ${this.port}) exited during startup; log tail:\n${
            log.split("\n").slice(-20).join("\n")
          }`,
        );
      }
      try {
        await Deno.stat(this.caFile);
        const r = await this.rawRequest("GET", "/readyz");
        if (r.status === 200) return;
      } catch {
        this.closeClient();
      }
      if (performance.now() > deadline) {
        throw new FaultSetupError(
          `fault apiserver ${this.name} not ready within ${timeoutMs / 1000} s; see ${this.logFile}`,
        );
      }
      await sleep(100);
    }
  }
}
