// The multi-cluster test environment of the test kit: N real local clusters (one etcd; a kube-apiserver and a
// kube-controller-manager each), CRDs installed, operators run in-process through a Hub, a namespace per test, typed
// admin clients and kubectl, and faults (cut off, apiserver down, credential expired). Disposed, it leaves nothing.
//
// Guarantees:
// - Every port is chosen free (src/testing/free_port.ts, below the kernel's ephemeral range, random start) and every
//   file lives in a fresh temporary folder, so several test files (and several environments in one file) run at once
//   on one machine without colliding; a port taken between the choice and the bind is retried with another.
// - `[Symbol.asyncDispose]` (or `dispose()`) stops the hubs, then every process, and removes every file, also when the
//   test failed; it runs at most once. If the test process dies without disposing (SIGKILL, `Deno.exit`), a watchdog
//   shell started with the environment kills its processes and removes its files within about a second.
// - The hub reaches each cluster through a fault proxy with a ServiceAccount token of its own; the admin (kubectl,
//   `client`) goes straight to the apiserver, so a test can always arrange and observe, whatever fault it injected.
//
// Assumptions: Linux (/proc, setsid, /bin/sh) and `kubectl` on PATH for `env.kubectl`; the binaries come from
// src/testing/kube_binaries.ts (built once into the user cache, or `OPERATOR_HUB_KUBE_BIN`).

import { KubeClient, loadContexts, type ResourceType } from "../../kube/mod.ts";
import { Hub } from "../../hub/mod.ts";
import type { Operator } from "../../sdk/mod.ts";
import { Logger } from "../../util/mod.ts";
import { EnvCluster } from "./_env_cluster.ts";
import { crdManifests, type CrdSource, installCrds } from "./_env_crds.ts";
import { type EnvEtcd, startEtcd } from "./_env_etcd.ts";
import { startWatchdog, type Watchdog } from "./_env_watchdog.ts";
import { type ClientPki, ensureClientPki, ensureServiceAccountKey } from "../control_plane.ts";
import { type KitClient, kitClient, type KitObjectOf } from "../kit_client.ts";
import { type KubeBinaries, kubeBinaries } from "../kube_binaries.ts";
import { stopPid } from "../process.ts";
import { TestEnvError } from "./test_env_error.ts";
import type { RunningOperators, RunOptions, TestEnvOptions } from "./test_env_options.ts";

export type { RunningOperators, RunOptions, TestEnvOptions } from "./test_env_options.ts";

const NAME = /^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$/;

/**
 * A test environment of real local clusters (see the file comment); make one with {@linkcode testEnv}.
 *
 * @example Faults: an apiserver down, a credential revoked
 * ```ts
 * import { eventually, TestEnv, testEnv } from "../../../testing.ts";
 * import { website } from "../../../examples/website_operator.ts";
 *
 * Deno.test("the operator comes back after east's apiserver restarts", async () => {
 *   await using env: TestEnv = await testEnv({ clusters: ["east", "west"] });
 *   const running = await env.run(website);
 *   await env.stopApiserver("east");
 *   await env.startApiserver("east");
 *   await env.expireCredential("west");
 *   await env.renewCredential("west");
 *   await eventually(() => running.hub.health().ready, { what: "the hub ready again" });
 * });
 * ```
 */
export class TestEnv implements AsyncDisposable {
  /** The cluster names, in the order given. */
  readonly clusters: readonly string[];
  /** The environment's folder (kubeconfigs, logs); removed at dispose. */
  readonly dir: string;
  /** The binaries it runs. */
  readonly binaries: KubeBinaries;
  readonly #etcd: EnvEtcd;
  readonly #clusters: Map<string, EnvCluster>;
  readonly #admins = new Map<string, KubeClient>();
  readonly #hubs = new Set<RunningOperators>();
  readonly #namespaces = new Set<string>();
  readonly #watchdog: Watchdog;
  #disposed: Promise<void> | undefined;

  private constructor(
    parts: {
      dir: string;
      binaries: KubeBinaries;
      etcd: EnvEtcd;
      clusters: EnvCluster[];
      watchdog: Watchdog;
    },
  ) {
    this.dir = parts.dir;
    this.binaries = parts.binaries;
    this.#etcd = parts.etcd;
    this.#clusters = new Map(parts.clusters.map((c) => [c.name, c]));
    this.clusters = parts.clusters.map((c) => c.name);
    this.#watchdog = parts.watchdog;
  }

  /** @internal Starts an environment; use {@linkcode testEnv}. */
  static async start(options: TestEnvOptions = {}): Promise<TestEnv> {
    const names = [...(options.clusters ?? ["test"])];
    if (names.length === 0) throw new TestEnvError("testEnv needs at least one cluster name");
    for (const name of names) {
      if (!NAME.test(name)) {
        throw new TestEnvError(`invalid cluster name ${JSON.stringify(name)}: expected a lowercase DNS label`);
      }
    }
    if (new Set(names).size !== names.length) throw new TestEnvError(`cluster names repeat: ${names.join(", ")}`);
    const timeoutMs = options.startTimeoutMs ?? 120_000;
    const crds = await crdManifests(options.crds ?? []);
    const binaries = await kubeBinaries({ prebuilt: options.binaries, log: options.log });
    const dir = await Deno.makeTempDir({ prefix: "operator-hub-testenv-" });
    await Deno.chmod(dir, 0o700);
    const watchdog = await startWatchdog(dir);
    let etcd: EnvEtcd | undefined;
    const started: EnvCluster[] = [];
    try {
      const pki: ClientPki = {
        caCert: `${dir}/pki/client-ca.crt`,
        caKey: `${dir}/pki/client-ca.key`,
        cert: `${dir}/pki/kube-controller-manager.crt`,
        key: `${dir}/pki/kube-controller-manager.key`,
      };
      await Deno.mkdir(`${dir}/pki`, { mode: 0o700 });
      const serviceAccountKey = `${dir}/service-account.key`;
      const [etcdStarted] = await Promise.all([
        startEtcd(binaries.etcd, dir),
        ensureClientPki(binaries.pki, pki),
        ensureServiceAccountKey(serviceAccountKey),
      ]);
      etcd = etcdStarted;
      await watchdog.track([etcd.pid], [etcd.dataDir]);
      const shared = { bins: binaries, etcdUrl: etcd.url, dir, pki, serviceAccountKey };
      const results = await Promise.allSettled(names.map(async (name) => {
        const cluster = await EnvCluster.start(name, shared, timeoutMs);
        started.push(cluster);
        await watchdog.track(cluster.pids());
        await installCrds(cluster, crds, timeoutMs);
        return cluster;
      }));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed) throw failed.reason;
      const clusters = names.map((name) => started.find((c) => c.name === name)!);
      const env = new TestEnv({ dir, binaries, etcd, clusters, watchdog });
      await Promise.all(clusters.map(async (c) => {
        const [access] = (await loadContexts({ files: [c.adminKubeconfig] })).select([c.name]);
        env.#admins.set(c.name, new KubeClient(access, { requestTimeoutMs: 30_000 }));
      }));
      return env;
    } catch (error) {
      await Promise.allSettled(started.map((c) => c.destroy()));
      if (etcd) await stopPid(etcd.pid, { signal: "SIGKILL" }).catch(() => {});
      await watchdog.cleanUp();
      throw error;
    }
  }

  #cluster(name: string): EnvCluster {
    const cluster = this.#clusters.get(name);
    if (!cluster) {
      throw new TestEnvError(
        `no cluster ${JSON.stringify(name)} in this environment (it has ${this.clusters.join(", ")})`,
      );
    }
    if (this.#disposed) throw new TestEnvError(`the environment is disposed: cluster "${name}" is gone`);
    return cluster;
  }

  /** Path of an admin kubeconfig of `cluster` (context named after it), e.g. for kubectl or a hub subprocess. */
  kubeconfig(cluster: string): string {
    return this.#cluster(cluster).adminKubeconfig;
  }

  /** The apiserver URL of `cluster` (direct, not through the fault proxy). */
  url(cluster: string): string {
    return this.#cluster(cluster).url;
  }

  /**
   * Creates a namespace with a fresh name (`<prefix>-<8 random characters>`) in every cluster and returns the name;
   * it is deleted at dispose.
   */
  async namespace(prefix = "test"): Promise<string> {
    const name = `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
    this.#namespaces.add(name);
    await Promise.all(this.clusters.map(async (c) => {
      const created = await this.#cluster(c).request("POST", "/api/v1/namespaces", {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name },
      });
      if (created.status !== 201) {
        throw new TestEnvError(`could not create namespace ${name} in cluster "${c}": HTTP ${created.status}`);
      }
    }));
    return name;
  }

  /** A typed admin client of `type` in `cluster` (straight to its apiserver). */
  client<R extends ResourceType>(cluster: string, type: R): KitClient<KitObjectOf<R>> {
    this.#cluster(cluster);
    return kitClient(this.#admins.get(cluster)!, type);
  }

  /**
   * Runs `kubectl` as the admin of `cluster` and resolves with its stdout; rejects with its stderr when it fails.
   *
   * @param stdin text piped to kubectl (e.g. YAML for `apply -f -`)
   */
  async kubectl(cluster: string, args: readonly string[], stdin?: string): Promise<string> {
    const kubeconfig = this.kubeconfig(cluster);
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command("kubectl", {
        args: [`--kubeconfig=${kubeconfig}`, ...args],
        stdin: stdin === undefined ? "null" : "piped",
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(60_000),
      }).spawn();
    } catch (cause) {
      throw new TestEnvError("could not run kubectl: is it installed and on PATH?", { cause });
    }
    if (stdin !== undefined) {
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(stdin));
      await writer.close();
    }
    const out = await child.output();
    const text = new TextDecoder();
    if (!out.success) {
      throw new TestEnvError(
        `kubectl ${args.join(" ")} in cluster "${cluster}" exited with code ${out.code}: ${
          text.decode(out.stderr).trim()
        }`,
      );
    }
    return text.decode(out.stdout);
  }

  /** Installs more CRDs (in every cluster, or the ones named) and waits until they are served. */
  async installCrds(sources: readonly CrdSource[], options: { clusters?: readonly string[] } = {}): Promise<void> {
    const crds = await crdManifests(sources);
    await Promise.all((options.clusters ?? this.clusters).map((c) => installCrds(this.#cluster(c), crds, 60_000)));
  }

  /**
   * Runs `operators` in-process through one Hub on every cluster (or the ones named), reaching each through its fault
   * proxy, and resolves once they have listed everything they watch in each.
   */
  async run(operators: Operator | readonly Operator[], options: RunOptions = {}): Promise<RunningOperators> {
    const names = [...(options.clusters ?? this.clusters)];
    const clusters = names.map((n) => this.#cluster(n));
    const hub = new Hub({
      operators: Array.isArray(operators) ? operators : [operators as Operator],
      namespaces: options.namespaces ? [...options.namespaces] : undefined,
      // Development: an operator that declared `reads` fails on reading anything else (UndeclaredFieldError).
      checkReads: options.checkReads ?? true,
      logger: options.logger ?? new Logger({ level: options.logLevel ?? "error" }),
    });
    const stop = new AbortController();
    let done: Promise<void> = Promise.resolve();
    let stopped: Promise<void> | undefined;
    const running: RunningOperators = {
      hub,
      stop: () => {
        stopped ??= (async () => {
          stop.abort();
          await done;
          this.#hubs.delete(running);
        })();
        return stopped;
      },
      [Symbol.asyncDispose]: () => running.stop(),
    };
    this.#hubs.add(running);
    try {
      for (const cluster of clusters) {
        const [access] = (await loadContexts({ files: [cluster.hubKubeconfig] })).select([cluster.name]);
        await hub.engage(cluster.name, access);
      }
      done = hub.start(stop.signal);
      const deadline = performance.now() + (options.readyTimeoutMs ?? 60_000);
      while (true) {
        const health = hub.health();
        const waiting = names.filter((n) => !health.clusters[n]?.synced);
        if (waiting.length === 0) return running;
        if (performance.now() > deadline) {
          const detail = waiting.map((n) => `${n}: ${health.clusters[n]?.lastError ?? health.clusters[n]?.state}`);
          throw new TestEnvError(
            `the operators did not list what they watch within ${(options.readyTimeoutMs ?? 60_000) / 1000} s in ` +
              `${detail.join("; ")}`,
          );
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    } catch (error) {
      await running.stop();
      throw error;
    }
  }

  /**
   * Cuts `cluster` off from the hub: its fault proxy refuses new connections (or, with `mode: "blackhole"`, accepts
   * them and never answers) and closes the open ones. The admin still reaches it.
   */
  cutOff(cluster: string, options: { mode?: "refuse" | "blackhole" } = {}): void {
    this.#cluster(cluster).cutOff(options.mode);
  }

  /** Lets the hub reach `cluster` again. */
  restore(cluster: string): void {
    this.#cluster(cluster).restore();
  }

  /** Stops the apiserver of `cluster` (SIGTERM, or SIGKILL for a crash); etcd keeps its objects. */
  stopApiserver(cluster: string, options: { signal?: "SIGTERM" | "SIGKILL" } = {}): Promise<void> {
    return this.#cluster(cluster).stopApiserver(options.signal);
  }

  /** Starts the apiserver of `cluster` again (same port, certificate and objects) and waits until it is ready. */
  async startApiserver(cluster: string): Promise<void> {
    const c = this.#cluster(cluster);
    await c.startApiserver();
    await this.#watchdog.track(c.pids());
  }

  /** Revokes the hub's credential for `cluster`: the apiserver answers its requests with 401 until renewed. */
  expireCredential(cluster: string): Promise<void> {
    return this.#cluster(cluster).expireCredential();
  }

  /** Gives the hub a fresh credential for `cluster` (written where its kubeconfig reads the token from). */
  renewCredential(cluster: string): Promise<void> {
    return this.#cluster(cluster).renewCredential();
  }

  /** Stops the hubs, deletes the namespaces, stops every process and removes every file. Runs once. */
  dispose(): Promise<void> {
    this.#disposed ??= (async () => {
      await Promise.allSettled([...this.#hubs].map((h) => h.stop()));
      await Promise.allSettled(
        [...this.#clusters.values()].flatMap((c) =>
          [...this.#namespaces].map((ns) =>
            c.apiserverRunning() ? c.request("DELETE", `/api/v1/namespaces/${ns}`).catch(() => {}) : undefined
          )
        ),
      );
      for (const admin of this.#admins.values()) admin.close();
      await Promise.allSettled([...this.#clusters.values()].map((c) => c.destroy()));
      await stopPid(this.#etcd.pid, { signal: "SIGKILL" }).catch(() => {});
      await this.#watchdog.cleanUp();
    })();
    return this.#disposed;
  }

  /** {@linkcode dispose}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }
}

/**
 * Starts a test environment of real local clusters (see {@linkcode TestEnv}); dispose it with `await using`.
 *
 * @example Two clusters, an operator on both, one cut off
 * ```ts ignore
 * import { eventually, testEnv } from "../mod.ts";
 * import { kinds } from "../../sdk/mod.ts";
 * import { website } from "../../../examples/website_operator.ts";
 * import { Website } from "../../../examples/website_resource.ts";
 *
 * Deno.test("a Website in two clusters", async () => {
 *   await using env = await testEnv({ clusters: ["east", "west"], crds: [Website] });
 *   const namespace = await env.namespace();
 *   await env.run(website);
 *   await env.client("west", Website).create({ metadata: { name: "w", namespace }, spec: { image: "web:1" } });
 *   await eventually(() => env.client("west", kinds.ConfigMap).find({ namespace, name: "w" }));
 *   env.cutOff("east");
 * });
 * ```
 */
export function testEnv(options: TestEnvOptions = {}): Promise<TestEnv> {
  return TestEnv.start(options);
}
