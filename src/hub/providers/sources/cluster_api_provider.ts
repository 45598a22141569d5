// The Cluster API provider: one cluster per Cluster API `Cluster` (cluster.x-k8s.io) whose phase is Provisioned, reached
// through its `<cluster>-kubeconfig` Secret, in some namespaces (or all) of the home cluster.

import { type KubeClient, KubeconfigParser } from "../../../kube/mod.ts";
import {
  Informer,
  labelled,
  objectKey,
  objectMeta,
  type StoredObject,
  Watcher,
  type WatchSnapshot,
} from "../../../runtime/mod.ts";
import { errorText, type Logger } from "../../../util/mod.ts";
import { decodeSecretValue, kubeconfigOffer } from "./_kubeconfig_offer.ts";
import type { ClusterOffer, ProviderWatch } from "../cluster_offer.ts";
import { homeClient, type HomeWatchOptions, type KubeconfigSecretOptions } from "./_home_watch.ts";

/** The API group and version read: v1beta2, the storage version of Cluster API v1.11 and later (v1.14.2 here). */
export const CLUSTER_API_GROUP_VERSION = "cluster.x-k8s.io/v1beta2";
/** The label Cluster API puts on every Secret of a cluster, with the `Cluster`'s name as its value. */
export const CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name";
/** The kubeconfig Secret's name is the `Cluster`'s name plus this. */
export const KUBECONFIG_SECRET_SUFFIX = "-kubeconfig";
/** The data key of the kubeconfig in that Secret. */
export const CLUSTER_API_KUBECONFIG_KEY = "value";
/** The phase in which a `Cluster` is engaged. */
export const PROVISIONED = "Provisioned";
/** `--cluster-api '*'`: every namespace. */
export const CLUSTER_API_ALL_NAMESPACES = "*";

/** The home cluster is the Cluster API management cluster, which holds the `Cluster` objects and their Secrets. */
export interface ClusterApiProviderOptions extends HomeWatchOptions, KubeconfigSecretOptions {
  /** Namespaces of the home cluster to read, or `["*"]` for all of them. */
  namespaces: readonly string[];
}

/**
 * Keeps the registry in step with the Cluster API `Cluster` objects of some namespaces of the home cluster.
 *
 * Guarantees:
 * - each `Cluster` NS/NAME whose `status.phase` is `Provisioned` and that is not being deleted registers the cluster
 *   named `NS/NAME` (multicluster-runtime's cluster-api provider names it so too; `--cluster-name-prefix` may put a
 *   prefix before it), reached through the `current-context` (or only context) of data key `value` of its Secret
 *   `NAME-kubeconfig` in NS labelled `cluster.x-k8s.io/cluster-name: NAME`, the one Cluster API's controllers write;
 * - the phase alone decides: v1beta2's conditions (`Available`, `ControlPlaneAvailable`) are not read, because a
 *   control plane that is briefly unavailable is shown by the hub's own per-cluster health (and its circuit breaker)
 *   without the relist a disengage costs, and `Available` also covers the workers, which the hub does not need;
 * - deleting the `Cluster` or its Secret, a deletionTimestamp on the `Cluster`, or a phase other than `Provisioned`
 *   withdraws the cluster (the Hub disengages it leak-free); while it is withdrawn, `providers.cluster-api.errors`
 *   names why (its phase, or the Secret it waits for), and nothing is held on a name, so a Cluster being provisioned
 *   never makes `/readyz` fail;
 * - the kubeconfig is untrusted, exactly as a labelled Secret's: held to `policy` (inline credentials, https unless
 *   allowed, exec plugins on the allowlist only) before anything of it is used; a refused or broken one is shown on
 *   the name's /status entry and in `providers.cluster-api.errors`, never engaged; a credentials-only change (a rotated
 *   token) is swapped in place by the registry;
 * - only what is needed is watched and cached: the `Cluster` objects of those namespaces (identity and phase only) and
 *   the Secrets labelled `cluster.x-k8s.io/cluster-name` (by label selector; only `*-kubeconfig` ones keep their
 *   kubeconfig, the others their identity); no managedFields or last-applied configuration (the Store's transform).
 *
 * Needs get/list/watch on `clusters.cluster.x-k8s.io` and Secrets in those namespaces. Without the CRD, the provider's
 * state is `missing-crd` in `/status` `providers` and nothing is registered; it retries with backoff.
 */
export class ClusterApiProvider {
  readonly #o: ClusterApiProviderOptions;
  /** The `Cluster` objects, one watch per namespace (or one for all). */
  readonly #clusters: Informer;
  /** The Secrets labelled with a cluster's name, one watch per namespace (or one for all). */
  readonly #secrets: Informer;
  readonly #client: KubeClient;
  /** Every watch: Clusters, then Secrets, per namespace. */
  readonly #watchers: Watcher[] = [];
  /** `NS/NAME` → the state last offered or withdrawn (skips repeats: Cluster API rewrites status often). */
  readonly #digests = new Map<string, string>();
  readonly #log: Logger;
  readonly #parser: KubeconfigParser;

  constructor(options: ClusterApiProviderOptions) {
    this.#o = options;
    const { client, clock, log } = homeClient(options, "cluster-api", "operator-hub/cluster-api");
    this.#client = client;
    this.#log = log;
    this.#parser = options.parser ?? new KubeconfigParser({ clock });
    const all = options.namespaces.includes(CLUSTER_API_ALL_NAMESPACES);
    const namespaces: (string | undefined)[] = all ? [undefined] : [...new Set(options.namespaces)];
    const secrets = labelled(this.#client, CLUSTER_NAME_LABEL);
    const within = (ns: string | undefined) => ns === undefined ? "" : `/namespaces/${encodeURIComponent(ns)}`;
    this.#clusters = new Informer({
      cluster: options.home.name,
      projection: projectCluster,
      watches: (store, onChange) =>
        namespaces.map((ns) =>
          new Watcher({
            path: `/apis/${CLUSTER_API_GROUP_VERSION}${within(ns)}/clusters`,
            namespace: ns,
            client: this.#client,
            store,
            onChange,
            clock,
            logger: this.#log.child({ watch: "clusters" }),
            idleTimeoutMs: options.idleTimeoutMs,
          })
        ),
    });
    this.#secrets = new Informer({
      cluster: options.home.name,
      projection: projectSecret,
      watches: (store, onChange) =>
        namespaces.map((ns) =>
          new Watcher({
            path: `/api/v1${within(ns)}/secrets`,
            namespace: ns,
            client: secrets,
            store,
            onChange,
            clock,
            logger: this.#log.child({ watch: "secrets" }),
            idleTimeoutMs: options.idleTimeoutMs,
          })
        ),
    });
    this.#clusters.addListener((requests) => this.#changedAll(requests.map(objectKey)));
    // A kubeconfig Secret `NAME-kubeconfig` changes what `NS/NAME` offers; other labelled Secrets change nothing.
    this.#secrets.addListener((requests) =>
      this.#changedAll(requests.flatMap((r) => clusterOfSecretKey(objectKey(r)) ?? []))
    );
    namespaces.forEach((_, i) => this.#watchers.push(this.#clusters.watchers[i], this.#secrets.watchers[i]));
    const watches = namespaces.map((ns) => `${options.home.name}:${ns ?? CLUSTER_API_ALL_NAMESPACES}`);
    options.registry.attach("cluster-api", () => this.#watch(watches));
  }

  /** Each watch's state (Clusters, then Secrets, per namespace), for logs and tests. */
  snapshots(): WatchSnapshot[] {
    return this.#watchers.map((w) => w.snapshot());
  }

  /** Lists and watches until `signal` aborts; closes its client (and stops its own parser) before settling. */
  async start(signal: AbortSignal): Promise<void> {
    const parsing = this.#o.parser ? undefined : this.#parser.start(signal);
    try {
      this.#clusters.start(signal);
      this.#secrets.start(signal);
      await Promise.all([this.#clusters.stopped, this.#secrets.stopped]);
    } finally {
      this.#client.close();
      await parsing;
    }
  }

  /** The provider's health: the first watch not `watching` decides the state; synced once all listed. */
  #watch(watches: string[]): ProviderWatch {
    const snaps = this.snapshots();
    const trouble = snaps.find((s) => s.phase !== "watching");
    return {
      state: trouble?.phase ?? "watching",
      synced: snaps.every((s) => s.synced),
      watches,
      lastError: trouble?.lastError ?? snaps.find((s) => s.lastError)?.lastError ?? null,
    };
  }

  #changedAll(keys: string[]): void {
    for (const key of new Set(keys)) {
      this.#changed(key).catch((err) => {
        this.#log.error("cannot read a Cluster API cluster", { source: key, error: errorText(err) });
        this.#o.registry.unusable("cluster-api", key, `cannot read Cluster ${key}: ${errorText(err)}`);
      });
    }
  }

  /** Re-decides what `NS/NAME` offers from its `Cluster` and its kubeconfig Secret as cached now. */
  async #changed(key: string): Promise<void> {
    const registry = this.#o.registry;
    const slash = key.indexOf("/");
    const [ns, name] = [key.slice(0, slash), key.slice(slash + 1)];
    const cluster = this.#clusters.store.get(key);
    const secretName = `${name}${KUBECONFIG_SECRET_SUFFIX}`;
    const secret = this.#secrets.store.get(`${ns}/${secretName}`);
    const home = this.#o.home.name;
    const waiting = (digest: string, why: string | undefined) => {
      if (this.#digests.get(key) === digest) return;
      this.#digests.set(key, digest);
      registry.unusable("cluster-api", key, why);
      registry.withdraw("cluster-api", key);
      if (why) this.#log.info("Cluster API cluster not engaged", { source: key, reason: why });
    };
    if (!cluster) {
      this.#digests.delete(key);
      registry.unusable("cluster-api", key, undefined);
      registry.withdraw("cluster-api", key);
      return;
    }
    const phase = cluster.phase as string | undefined;
    if (cluster.metadata.deletionTimestamp) {
      return waiting("deleting", `Cluster ${key} in cluster "${home}" is being deleted`);
    }
    if (phase !== PROVISIONED) {
      return waiting(
        `phase:${phase ?? ""}`,
        `Cluster ${key} in cluster "${home}" is in phase ${JSON.stringify(phase ?? "")}; it is engaged once ` +
          `${PROVISIONED}`,
      );
    }
    if (!secret || secret.clusterName !== name) {
      return waiting(
        "no-secret",
        `Cluster ${key} in cluster "${home}" is ${PROVISIONED} but has no Secret ${ns}/${secretName} labelled ` +
          `${CLUSTER_NAME_LABEL}=${name} yet`,
      );
    }
    const rv = `secret:${secret.metadata.resourceVersion ?? ""}`;
    if (this.#digests.get(key) === rv) return;
    this.#digests.set(key, rv);
    registry.unusable("cluster-api", key, undefined);
    const where = `Secret ${ns}/${secretName} in cluster "${home}"`;
    const text = secret.kubeconfig as string | undefined;
    const offer: ClusterOffer = text === undefined
      ? {
        name: key,
        error: `${where} has no data key "${CLUSTER_API_KUBECONFIG_KEY}"; Cluster API writes the kubeconfig there`,
        endpointDigest: "",
        credentialsDigest: "",
      }
      : await kubeconfigOffer(text, {
        name: key,
        source: `secret ${ns}/${secretName}`,
        where,
        policy: this.#o.policy,
        env: this.#o.env,
        parser: this.#parser,
      });
    // A newer state may have arrived while this one was parsed: only the newest is offered.
    if (this.#digests.get(key) !== rv) return;
    registry.offer("cluster-api", key, [offer]);
  }
}

/** `NS/NAME` of the `Cluster` a kubeconfig Secret's store key `NS/NAME-kubeconfig` belongs to; else undefined. */
export function clusterOfSecretKey(key: string): string | undefined {
  if (!key.endsWith(KUBECONFIG_SECRET_SUFFIX)) return undefined;
  const base = key.slice(0, -KUBECONFIG_SECRET_SUFFIX.length);
  return base.endsWith("/") ? undefined : base;
}

/** Keeps a `Cluster`'s identity and phase, nothing else. */
export function projectCluster(raw: Record<string, unknown>): StoredObject {
  const status = (raw.status ?? {}) as Record<string, unknown>;
  const out: StoredObject = { metadata: objectMeta(raw) };
  if (typeof status.phase === "string") out.phase = status.phase;
  return out;
}

/** Keeps a labelled Secret's identity, the Cluster it names, and, for a `*-kubeconfig` one, its decoded kubeconfig. */
export function projectSecret(raw: Record<string, unknown>): StoredObject {
  const meta = (raw.metadata ?? {}) as { labels?: Record<string, string> };
  const out: StoredObject = { metadata: objectMeta(raw) };
  const owner = meta.labels?.[CLUSTER_NAME_LABEL];
  if (typeof owner === "string") out.clusterName = owner;
  if (!out.metadata.name.endsWith(KUBECONFIG_SECRET_SUFFIX)) return out;
  const b64 = ((raw.data ?? {}) as Record<string, unknown>)[CLUSTER_API_KUBECONFIG_KEY];
  // Not base64: read as an empty kubeconfig, refused as having no context.
  if (typeof b64 === "string") out.kubeconfig = decodeSecretValue(b64);
  return out;
}
