// Private to src/testing: one cluster of a test environment: its kube-apiserver and kube-controller-manager on free
// ports, the fault proxy the hub reaches it through, the admin and hub kubeconfigs, and the faults.
//
// Guarantees:
// - The admin (kubectl, `env.client`) talks to the apiserver directly with a static token (system:masters); the hub
//   talks to it through the fault proxy as the ServiceAccount `kube-system/operator-hub-testing` (cluster-admin), with
//   a token kept in a file its kubeconfig names (`tokenFile`), so a cut-off or an expired credential hits the hub only.
// - The hub's token is bound to a Secret: `expireCredential` deletes that Secret, so the apiserver refuses the token
//   the hub holds (HTTP 401), and resolves once it does; `renewCredential` writes a fresh token into the file, as
//   kubelet refreshes a projected token.
// - `stopApiserver` / `startApiserver` keep the port, serving certificate, tokens and etcd data.
// - Tokens are random, in files of mode 0600, and never printed.

import { FaultProxy } from "../fault_proxy.ts";
import { freePort } from "../free_port.ts";
import { logTail, pidRunning, spawnDetached, stopPid } from "../process.ts";
import { apiserverFlags } from "../control_plane.ts";
import { type EnvControllerManager, startControllerManager } from "./_env_controller_manager.ts";
import { TestEnvError } from "./test_env_error.ts";
import type { EnvShared } from "./_env_shared.ts";

/** Status and body text of one admin request. */
export interface AdminResponse {
  status: number;
  body: string;
}

const HUB_ACCOUNT = "operator-hub-testing";
const HUB_NAMESPACE = "kube-system";

function randomToken(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function writeSecretFile(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.writeTextFile(tmp, text, { mode: 0o600 });
  await Deno.rename(tmp, path);
}

/** A kubeconfig of one context; `user` is a YAML user section's fields. */
function kubeconfigYaml(name: string, server: string, caFile: string, user: Record<string, string>): string {
  const q = (s: string) => JSON.stringify(s);
  return [
    "# Written by the operator-hub test kit for one test environment. Do not commit.",
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `  - name: ${q(name)}`,
    "    cluster:",
    `      server: ${q(server)}`,
    `      certificate-authority: ${q(caFile)}`,
    "users:",
    `  - name: ${q(name)}`,
    "    user:",
    ...Object.entries(user).map(([k, v]) => `      ${k}: ${q(v)}`),
    "contexts:",
    `  - name: ${q(name)}`,
    "    context:",
    `      cluster: ${q(name)}`,
    `      user: ${q(name)}`,
    `current-context: ${q(name)}`,
    "",
  ].join("\n");
}

/** One cluster of a test environment (see the file comment). */
export class EnvCluster {
  readonly name: string;
  readonly dir: string;
  readonly certDir: string;
  readonly logFile: string;
  readonly tokenFile: string;
  readonly etcdPrefix: string;
  /** Kubeconfig of the admin, straight to the apiserver (kubectl, `env.client`). */
  readonly adminKubeconfig: string;
  /** Kubeconfig of the hub: through the fault proxy, as the ServiceAccount, token from {@linkcode hubTokenFile}. */
  readonly hubKubeconfig: string;
  readonly hubTokenFile: string;
  readonly #shared: EnvShared;
  readonly #adminToken = randomToken();
  #port = 0;
  #pid: number | null = null;
  #proxy: FaultProxy | undefined;
  #manager: EnvControllerManager;
  #http: Deno.HttpClient | undefined;
  #credential = 0;
  #secret: string | undefined;

  private constructor(name: string, shared: EnvShared) {
    this.name = name;
    this.#shared = shared;
    this.dir = `${shared.dir}/${name}`;
    this.certDir = `${this.dir}/certs`;
    this.logFile = `${this.dir}/apiserver.log`;
    this.tokenFile = `${this.dir}/tokens.csv`;
    this.etcdPrefix = `/registry-${name}`;
    this.adminKubeconfig = `${this.dir}/admin.kubeconfig`;
    this.hubKubeconfig = `${this.dir}/hub.kubeconfig`;
    this.hubTokenFile = `${this.dir}/hub.token`;
    this.#manager = {
      pid: null,
      port: 0,
      certDir: `${this.dir}/controller-manager/certs`,
      kubeconfig: `${this.dir}/controller-manager/kubeconfig.yaml`,
      logFile: `${this.dir}/controller-manager/controller-manager.log`,
    };
  }

  /** Starts the apiserver, the proxy in front of it, the controller manager and the hub's credential. */
  static async start(name: string, shared: EnvShared, timeoutMs: number): Promise<EnvCluster> {
    const cluster = new EnvCluster(name, shared);
    try {
      await Deno.mkdir(cluster.certDir, { recursive: true, mode: 0o700 });
      await Deno.mkdir(cluster.#manager.certDir, { recursive: true, mode: 0o700 });
      await writeSecretFile(cluster.tokenFile, `${cluster.#adminToken},admin,admin,"system:masters"\n`);
      for (let attempt = 1;; attempt++) {
        cluster.#port = freePort();
        try {
          await cluster.startApiserver(timeoutMs);
          break;
        } catch (error) {
          // Another test file's process took the port between freePort() and the bind: try another.
          if (attempt >= 3 || !/address already in use/.test(await logTail(cluster.logFile))) throw error;
        }
      }
      await writeSecretFile(
        cluster.adminKubeconfig,
        kubeconfigYaml(name, cluster.url, cluster.caFile, { token: cluster.#adminToken }),
      );
      cluster.#proxy = FaultProxy.start({ targetPort: cluster.#port, port: freePort() });
      await Promise.all([
        startControllerManager(cluster.#manager, cluster, shared, timeoutMs),
        cluster.#setUpHubCredential(timeoutMs),
      ]);
      await writeSecretFile(
        cluster.hubKubeconfig,
        kubeconfigYaml(name, cluster.#proxy.url, cluster.caFile, { tokenFile: cluster.hubTokenFile }),
      );
      return cluster;
    } catch (error) {
      await cluster.destroy();
      throw error;
    }
  }

  /** The apiserver's own URL (not through the proxy). */
  get url(): string {
    return `https://127.0.0.1:${this.#port}`;
  }

  /** The apiserver's self-signed serving certificate, which is also the CA to trust. */
  get caFile(): string {
    return `${this.certDir}/apiserver.crt`;
  }

  /** The fault proxy's URL: where the hub reaches this cluster. */
  get proxyUrl(): string {
    return this.#proxy?.url ?? "";
  }

  /** The pids of this cluster's processes (for the leak guard). */
  pids(): number[] {
    return [this.#pid, this.#manager.pid].filter((p): p is number => p !== null);
  }

  /** True while the apiserver process runs. */
  apiserverRunning(): boolean {
    return this.#pid !== null && pidRunning(this.#pid);
  }

  /** One admin request straight to the apiserver; never throws on a non-2xx status. */
  async request(
    method: string,
    path: string,
    body?: unknown,
    contentType = "application/json",
  ): Promise<AdminResponse> {
    this.#http ??= Deno.createHttpClient({ caCerts: [await Deno.readTextFile(this.caFile)] });
    const response = await fetch(`${this.url}${path}`, {
      method,
      client: this.#http,
      headers: { authorization: `Bearer ${this.#adminToken}`, "content-type": contentType, accept: "application/json" },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: response.status, body: await response.text() };
  }

  async #requestOk(method: string, path: string, body?: unknown, accept: number[] = []): Promise<AdminResponse> {
    const response = await this.request(method, path, body);
    if (response.status >= 300 && !accept.includes(response.status)) {
      throw new TestEnvError(
        `${method} ${path} in cluster "${this.name}" answered HTTP ${response.status}: ${response.body.slice(0, 300)}`,
      );
    }
    return response;
  }

  #closeHttp(): void {
    this.#http?.close();
    this.#http = undefined;
  }

  /** Starts the apiserver (same port, certificates and etcd data as before) and waits for /readyz 200. */
  async startApiserver(timeoutMs = 60_000): Promise<void> {
    if (this.apiserverRunning()) return;
    const flags = apiserverFlags({
      port: this.#port,
      certDir: this.certDir,
      etcdUrl: this.#shared.etcdUrl,
      etcdPrefix: this.etcdPrefix,
      tokenFile: this.tokenFile,
      clientCaFile: this.#shared.pki.caCert,
      serviceAccountKey: this.#shared.serviceAccountKey,
    });
    await Deno.writeTextFile(this.logFile, `--- started ${new Date().toISOString()}\n`, { append: true });
    this.#pid = await spawnDetached(this.#shared.bins.apiserver, flags, this.logFile);
    const deadline = performance.now() + timeoutMs;
    while (true) {
      if (!this.apiserverRunning()) {
        throw new TestEnvError(
          `kube-apiserver of cluster "${this.name}" (port ${this.#port}) exited during startup; last lines of ` +
            `${this.logFile}:\n${await logTail(this.logFile)}`,
        );
      }
      try {
        if ((await this.request("GET", "/readyz")).status === 200) return;
      } catch {
        this.#closeHttp();
      }
      if (performance.now() > deadline) {
        throw new TestEnvError(
          `kube-apiserver of cluster "${this.name}" did not answer /readyz with 200 on ${this.url} within ` +
            `${timeoutMs / 1000} s; last lines of ${this.logFile}:\n${await logTail(this.logFile)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Stops the apiserver: SIGTERM (a graceful shutdown, SIGKILL after 5 s) or SIGKILL (a crash). */
  async stopApiserver(signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
    this.#closeHttp();
    if (this.#pid === null) return;
    await stopPid(this.#pid, { signal, graceMs: 5_000 });
    this.#pid = null;
  }

  /** The hub can no longer reach this cluster: new connections are refused (or held), open ones are cut. */
  cutOff(mode: "refuse" | "blackhole" = "refuse"): void {
    this.#proxy!.setMode(mode);
    this.#proxy!.dropAll();
  }

  /** The hub reaches this cluster again. */
  restore(): void {
    this.#proxy!.setMode("forward");
  }

  /** The ServiceAccount the hub works as, bound to cluster-admin, and its first token. */
  async #setUpHubCredential(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    // kube-system is made by the apiserver's own bootstrap, shortly after /readyz: retry until it exists.
    while (true) {
      const sa = await this.request("POST", `/api/v1/namespaces/${HUB_NAMESPACE}/serviceaccounts`, {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: HUB_ACCOUNT },
      });
      if (sa.status === 201 || sa.status === 409) break;
      if (sa.status !== 404 || performance.now() > deadline) {
        throw new TestEnvError(
          `could not create ServiceAccount ${HUB_NAMESPACE}/${HUB_ACCOUNT} in cluster "${this.name}": HTTP ` +
            `${sa.status} ${sa.body.slice(0, 300)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    await this.#requestOk("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: HUB_ACCOUNT },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ kind: "ServiceAccount", name: HUB_ACCOUNT, namespace: HUB_NAMESPACE }],
    }, [409]);
    await this.renewCredential();
  }

  /** Writes a fresh hub token (bound to a new Secret) into the hub's token file. */
  async renewCredential(): Promise<void> {
    const name = `${HUB_ACCOUNT}-credential-${++this.#credential}`;
    const secret = await this.#requestOk("POST", `/api/v1/namespaces/${HUB_NAMESPACE}/secrets`, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name },
      type: "Opaque",
    });
    const uid = (JSON.parse(secret.body) as { metadata: { uid: string } }).metadata.uid;
    const answer = await this.#requestOk(
      "POST",
      `/api/v1/namespaces/${HUB_NAMESPACE}/serviceaccounts/${HUB_ACCOUNT}/token`,
      {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { expirationSeconds: 3600, boundObjectRef: { apiVersion: "v1", kind: "Secret", name, uid } },
      },
    );
    const token = (JSON.parse(answer.body) as { status: { token: string } }).status.token;
    await writeSecretFile(this.hubTokenFile, `${token}\n`);
    this.#secret = name;
  }

  /**
   * Revokes the hub's token (deletes the Secret it is bound to) and resolves once the apiserver refuses it with
   * HTTP 401. The token file keeps the revoked token until {@linkcode renewCredential}.
   */
  async expireCredential(timeoutMs = 30_000): Promise<void> {
    if (this.#secret === undefined) return;
    await this.#requestOk("DELETE", `/api/v1/namespaces/${HUB_NAMESPACE}/secrets/${this.#secret}`, undefined, [404]);
    this.#secret = undefined;
    const token = (await Deno.readTextFile(this.hubTokenFile)).trim();
    const deadline = performance.now() + timeoutMs;
    while (true) {
      this.#http ??= Deno.createHttpClient({ caCerts: [await Deno.readTextFile(this.caFile)] });
      const response = await fetch(`${this.url}/api/v1/namespaces/${HUB_NAMESPACE}`, {
        client: this.#http,
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(10_000),
      });
      await response.body?.cancel();
      if (response.status === 401) return;
      if (performance.now() > deadline) {
        throw new TestEnvError(
          `cluster "${this.name}" still accepted the hub's revoked token ${timeoutMs / 1000} s after its Secret was ` +
            `deleted (HTTP ${response.status})`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Stops every process of this cluster and closes its proxy (its folder goes with the environment's). */
  async destroy(): Promise<void> {
    this.#closeHttp();
    await this.#proxy?.close();
    const pids = this.pids();
    this.#pid = null;
    this.#manager.pid = null;
    await Promise.all(pids.map((pid) => stopPid(pid, { signal: "SIGKILL" }).catch(() => {})));
  }
}
