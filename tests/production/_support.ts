// Helpers for the production tests: the compile task's permissions, deploy/ manifests, ServiceAccount identities
// bound to the hub's ClusterRole, and a kubelet-style service-account directory.
// deno-lint-ignore-file no-explicit-any -- manifests and API answers are checked by the tests themselves.

import YAML from "yaml";
import { type ClusterApi, localEndpoint } from "../../dev/support/cluster_api.ts";
import { apiserverCa, apiserverUrl, kubectl, KubectlError, kubectlOk, type TestNamespace } from "../support/mod.ts";
import { watchEvents } from "../../dev/support/watch_events.ts";
import { TestServiceAccount } from "../support/service_account.ts";

export const ROOT = new URL("../..", import.meta.url).pathname;
/** Where the image mounts the kubeconfigs Secret (its WORKDIR is /app) and where Kubernetes mounts the token. */
export const MOUNT_DIR = "/app/clusters";
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
/** Where the Helm chart mounts the protected port's certificate Secret (`metrics.tls.secretName`). */
export const METRICS_CERTS_DIR = "/app/metrics-certs";

/** The words of one deno.json task. */
export function taskWords(task: string): string[] {
  const config = JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`));
  const line = config.tasks[task];
  if (typeof line !== "string") throw new Error(`deno.json has no "${task}" task`);
  return line.split(/\s+/).filter(Boolean);
}

/** The permission flags the `compile` task bakes into the binary (exactly those, in order). */
export function compilePermissions(): string[] {
  return taskWords("compile").filter((w) => w.startsWith("--allow-") || w.startsWith("--deny-"));
}

/** The comma-separated values of one `--flag=a,b` permission word; undefined when the flag is absent. */
export function flagValues(permissions: string[], flag: string): string[] | undefined {
  const word = permissions.find((w) => w === flag || w.startsWith(`${flag}=`));
  if (word === undefined) return undefined;
  return word.includes("=") ? word.slice(word.indexOf("=") + 1).split(",") : [];
}

/**
 * The same permissions with absolute paths swapped (the pod's mount points → temp dirs), nothing else changed. The
 * certificate mount may be left out: it stays as it is (no such folder on a workstation, so nothing is granted).
 */
export function mapPaths(permissions: string[], paths: Record<string, string>): string[] {
  return permissions.map((w) => {
    if (!w.startsWith("--allow-read=")) return w;
    const values = w.slice("--allow-read=".length).split(",").map((p) => {
      if (p === METRICS_CERTS_DIR && !(p in paths)) return p;
      if (!(p in paths)) throw new Error(`no temp path for ${p} in the compile task's --allow-read`);
      return paths[p];
    });
    return `--allow-read=${values.join(",")}`;
  });
}

/** Runs `kubectl kustomize DIR` (no cluster needed) and returns the documents. */
export async function kustomize(dir: string): Promise<any[]> {
  const out = await new Deno.Command("kubectl", { args: ["kustomize", `${ROOT}${dir}`], stdin: "null" }).output();
  const d = new TextDecoder();
  if (out.code !== 0) throw new Error(`kubectl kustomize ${dir} failed: ${d.decode(out.stderr)}`);
  return YAML.parseAllDocuments(d.decode(out.stdout)).map((doc) => doc.toJS()).filter(Boolean);
}

/** Reads a multi-document YAML file of the repository. */
export function readYamlDocs(path: string): any[] {
  return YAML.parseAllDocuments(Deno.readTextFileSync(`${ROOT}${path}`)).map((d) => d.toJS()).filter(Boolean);
}

const RBAC_KINDS = new Set(["Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]);

/**
 * Applies deploy/'s RBAC objects (and its Namespace) to a cluster for real; idempotent. The CRD is left alone.
 *
 * Test files running at the same time apply the same objects: when another one created an object between kubectl's
 * read and its create (AlreadyExists), the apply is run once more, now as an update of what exists.
 */
export async function applyDeployRbac(context: string): Promise<string> {
  const docs = (await kustomize("deploy")).filter((d) => RBAC_KINDS.has(d.kind));
  const args = ["apply", "-f", "-"];
  const stdin = docs.map((d) => YAML.stringify(d)).join("---\n");
  const first = await kubectl(context, args, { stdin });
  if (first.code === 0) return first.stdout;
  if (!/AlreadyExists|already exists/.test(first.stderr)) throw new KubectlError(context, args, first);
  return await kubectlOk(context, args, { stdin });
}

/**
 * The `--operators=…` words of deploy/'s Deployment (the Uuid operator only by default): a hub bound to deploy/'s
 * RBAC runs with these, as the shipped pod does.
 */
export async function deployOperatorArgs(): Promise<string[]> {
  const deployment = (await kustomize("deploy")).find((d) => d.kind === "Deployment");
  const args: string[] = deployment.spec.template.spec.containers[0].args;
  const words = args.filter((a) => a.startsWith("--operators"));
  if (words.length !== 1 || !words[0].startsWith("--operators=")) {
    throw new Error(`deploy/'s Deployment must set --operators=… once: ${JSON.stringify(words)}`);
  }
  return words;
}

/**
 * `kubectl auth can-i VERB RESOURCE` as `user` (e.g. system:serviceaccount:NS:NAME), in namespace `ns` or across all
 * (`-A`) without one. kubectl answers yes (exit 0) or no (exit 1); anything else (a bad flag, an unreachable server)
 * throws instead of reading as a "no".
 */
export async function canI(context: string, user: string, verb: string, resource: string, ns?: string) {
  const [res, sub] = resource.split("/");
  const args = [verb, res, ...(sub ? [`--subresource=${sub}`] : []), `--as=${user}`, ...(ns ? ["-n", ns] : ["-A"])];
  const r = await kubectl(context, ["auth", "can-i", ...args]);
  if (r.code === 0 && r.stdout.trim() === "yes") return true;
  if (r.code === 1 && r.stdout.trim() === "no") return false;
  throw new Error(`kubectl auth can-i ${args.join(" ")}: exit ${r.code}, stdout ${r.stdout}, stderr ${r.stderr}`);
}

/** The ClusterRole's rules from deploy/. */
export async function deployClusterRoleRules(): Promise<any[]> {
  const role = (await kustomize("deploy")).find((d) => d.kind === "ClusterRole" && d.metadata.name === "operator-hub");
  return role.rules;
}

/**
 * A ServiceAccount in a test namespace bound, like deploy/ binds the hub's, to the operator-hub ClusterRole (or to a
 * copy with some rules removed) and, for leader election, to deploy/'s Lease Role recreated in that namespace.
 */
export async function hubIdentity(
  context: string,
  namespace: string,
  name: string,
  options: { dropRule?: (rule: any) => boolean; leases?: boolean } = {},
): Promise<TestServiceAccount> {
  await applyDeployRbac(context);
  const bindingName = `operator-hub-test-${namespace}-${name}`;
  const clusterScoped = [`clusterrolebinding/${bindingName}`];
  let roleName = "operator-hub";
  const rbac: any[] = [];
  if (options.dropRule) {
    roleName = bindingName;
    const rules = (await deployClusterRoleRules()).filter((r) => !options.dropRule!(r));
    rbac.push({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: roleName },
      rules,
    });
    clusterScoped.push(`clusterrole/${roleName}`);
  }
  rbac.push({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: bindingName },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: roleName },
    subjects: [{ kind: "ServiceAccount", name, namespace }],
  });
  if (options.leases ?? true) {
    for (const d of readYamlDocs("deploy/leader-election-role.yaml")) {
      d.metadata.namespace = namespace;
      d.metadata.name = `${d.metadata.name}-${name}`;
      if (d.kind === "RoleBinding") {
        d.roleRef.name = `${d.roleRef.name}-${name}`;
        d.subjects = [{ kind: "ServiceAccount", name, namespace }];
      }
      rbac.push(d);
    }
  }
  return await TestServiceAccount.create(context, namespace, name, { rbac, clusterScoped, tokenDuration: "10m" });
}

/** Status code of one request to a cluster with a bearer token (401 for a rejected token). */
export async function tokenStatus(context: string, token: string, path = "/apis/demo.operator/v1"): Promise<number> {
  const client = Deno.createHttpClient({ caCerts: [apiserverCa(context)] });
  try {
    const res = await fetch(apiserverUrl(context) + path, { client, headers: { authorization: `Bearer ${token}` } });
    await res.body?.cancel();
    return res.status;
  } finally {
    client.close();
  }
}

/**
 * A service-account directory laid out like the kubelet does: `token`, `ca.crt` and `namespace` are symlinks
 * into `..data`, itself a symlink to a timestamped directory that is swapped atomically on rotation.
 */
export class ServiceAccountDir {
  readonly path: string;
  #ca: string;
  #namespace: string;
  #seq = 0;

  constructor(path: string, init: { token: string; ca: string; namespace: string }) {
    this.path = path;
    this.#ca = init.ca;
    this.#namespace = init.namespace;
    Deno.mkdirSync(path, { recursive: true });
    this.#write(init.token);
    for (const f of ["token", "ca.crt", "namespace"]) Deno.symlinkSync(`..data/${f}`, `${path}/${f}`);
  }

  /** Writes a new token the way the kubelet does: a new data directory, then an atomic rename of `..data`. */
  rotate(token: string): void {
    const old = Deno.readLinkSync(`${this.path}/..data`);
    this.#write(token);
    Deno.removeSync(`${this.path}/${old}`, { recursive: true });
  }

  #write(token: string): void {
    const dir = `..${Date.now()}_${++this.#seq}`;
    Deno.mkdirSync(`${this.path}/${dir}`);
    Deno.writeTextFileSync(`${this.path}/${dir}/token`, token);
    Deno.writeTextFileSync(`${this.path}/${dir}/ca.crt`, this.#ca);
    Deno.writeTextFileSync(`${this.path}/${dir}/namespace`, this.#namespace);
    Deno.symlinkSync(dir, `${this.path}/..data_tmp`);
    Deno.renameSync(`${this.path}/..data_tmp`, `${this.path}/..data`);
  }
}

/**
 * A kubeconfig for `context` made from deploy/examples/remote-kubeconfigs-secret.yaml: its `staging.yaml` entry
 * with the placeholders filled in (server, CA, token) and the names set to `name`; `server` points it elsewhere, e.g.
 * at a proxy presenting the apiserver's certificate.
 */
export function remoteKubeconfig(
  context: string,
  token: string,
  name = context,
  server = apiserverUrl(context),
): string {
  const secret = readYamlDocs("deploy/examples/remote-kubeconfigs-secret.yaml")[0];
  const doc = YAML.parse(secret.stringData["staging.yaml"]);
  doc.clusters[0].name = name;
  doc.clusters[0].cluster.server = server;
  doc.clusters[0].cluster["certificate-authority-data"] = btoa(apiserverCa(context));
  doc.users[0].name = `${name}-operator-hub`;
  doc.users[0].user.token = token;
  doc.contexts[0] = { name, context: { cluster: name, user: `${name}-operator-hub` } };
  doc["current-context"] = name;
  return YAML.stringify(doc);
}

/** One sample of a metric family. */

/**
 * Counts, per object, the watch events that changed its status: an independent observer of how many status
 * writes each object got in one namespace (other tests' writes elsewhere in the cluster do not count).
 */
export class StatusWrites {
  readonly #counts = new Map<string, number>();
  readonly #abort = new AbortController();
  readonly #done: Promise<void>;
  #opened!: () => void;
  /** Resolves once the watch is open: every later status change is seen. */
  readonly ready = new Promise<void>((resolve) => this.#opened = resolve);

  constructor(context: string, namespace: string) {
    this.#done = this.#run(context, namespace).catch((err) => {
      this.#opened(); // do not leave `ready` waiting; stop() rethrows
      if (!this.#abort.signal.aborted) throw err;
    });
  }

  async #run(context: string, namespace: string): Promise<void> {
    const ep = localEndpoint(context);
    const client = Deno.createHttpClient({ caCerts: [ep.caPem] });
    try {
      let res: Response;
      for (let attempt = 1;; attempt++) {
        res = await fetch(`${ep.server}/apis/demo.operator/v1/namespaces/${namespace}/uuid?watch=1`, {
          client,
          headers: { authorization: `Bearer ${ep.token}` },
          signal: this.#abort.signal,
        });
        // A 429 (the apiserver's watch cache rebuilding) answers before the watch opens, so asking again after its
        // retry-after misses nothing: `ready` resolves only once a watch is open.
        if (res.status !== 429 || attempt >= 10) break;
        await res.body?.cancel();
        await new Promise((r) => setTimeout(r, 1000));
      }
      if (!res.ok || !res.body) throw new Error(`watch for StatusWrites: ${res.status}`);
      this.#opened();
      const last = new Map<string, string>();
      for await (const ev of watchEvents(res.body, this.#abort.signal)) {
        const name = ev.object?.metadata?.name;
        if (!name || ev.type === "ERROR") continue;
        const status = JSON.stringify(ev.object.status ?? null);
        if (last.has(name) && last.get(name) !== status) this.#counts.set(name, (this.#counts.get(name) ?? 0) + 1);
        if (ev.type === "ADDED" && ev.object.status) this.#counts.set(name, (this.#counts.get(name) ?? 0) + 1);
        last.set(name, status);
      }
    } finally {
      client.close();
    }
  }

  /** Objects whose status changed more than once, with the count. */
  repeated(): string[] {
    return [...this.#counts].filter(([, n]) => n > 1).map(([name, n]) => `${name}: ${n} status writes`);
  }

  /** Total status changes seen. */
  total(): number {
    return [...this.#counts.values()].reduce((a, b) => a + b, 0);
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#done;
  }
}

/**
 * The clean-up of a test that ran several hub replicas: the hubs killed, then the observers stopped, then the
 * namespace's Uuids deleted in each cluster, the clients closed and the namespace removed. Failures while deleting
 * are ignored (the namespace removal takes what is left).
 */
export async function cleanupReplicas(run: {
  hubs: { kill(): Promise<unknown> }[];
  observers: { stop(): Promise<unknown> }[];
  apis: ClusterApi[];
  namespace: TestNamespace;
}): Promise<void> {
  await Promise.all(run.hubs.map((h) => h.kill()));
  await Promise.all(run.observers.map((o) => o.stop()));
  await Promise.all(run.apis.map((a) => a.deleteAllUuids(run.namespace.name).catch(() => {})));
  run.apis.forEach((a) => a.close());
  await run.namespace.cleanup();
}
