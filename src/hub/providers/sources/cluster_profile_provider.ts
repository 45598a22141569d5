// The ClusterProfile provider: SIG-Multicluster's cluster inventory (multicluster.x-k8s.io/v1alpha1) in the home cluster,
// one cluster per profile, credentials from KEP-5339's provider file.

import type { CredentialPolicy, KubeClient } from "../../../kube/mod.ts";
import { Informer, objectKey, type Store, type StoredObject, Watcher } from "../../../runtime/mod.ts";
import { type Clock, errorText } from "../../../util/mod.ts";
import {
  CLUSTER_PROFILE_API,
  CONTROL_PLANE_HEALTHY,
  profileAccess,
  type ProfileView,
  profileView,
  type ProviderFile,
} from "./cluster_profile_access.ts";
import type { ClusterOffer } from "../cluster_offer.ts";
import { homeClient, type HomeWatchOptions } from "./_home_watch.ts";

/** `--cluster-profiles '*'`: every namespace. */
export const ALL_PROFILE_NAMESPACES = "*";

/** The home cluster holds the ClusterProfiles. */
export interface ClusterProfileProviderOptions extends HomeWatchOptions {
  /** Namespaces to watch, or [`*`] for all. */
  namespaces: readonly string[];
  file: ProviderFile;
  /** `--allow-http-servers` (the exec allowlist plays no part: the provider file names the plugins). */
  policy: CredentialPolicy;
  /** The hub's PATH and HOME, for the plugins. */
  baseEnv: Record<string, string>;
  execTimeoutMs?: number;
}

/** The cluster name of a profile: `<namespace>/<name>` (unique in the home cluster; queue keys split from the right). */
export function profileClusterName(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/**
 * Keeps the registry in step with the ClusterProfiles of some namespaces of the home cluster.
 *
 * Guarantees:
 * - each profile offers the cluster `<namespace>/<name>`, reached at the server of the first access provider (in the
 *   provider file's order) that the profile lists, authenticated by that provider's exec plugin from the file;
 * - the offer is usable only while the profile's `ControlPlaneHealthy` condition is `True`: False, Unknown or missing
 *   disengages it (the name stays on /status as `registering`, the condition as `condition` and the reason as its
 *   error), True engages it again; deleting the profile withdraws it (the Hub disengages it leak-free);
 * - a profile naming no provider of the file, or whose server/CA breaks the untrusted rules, is refused with one line
 *   on its /status entry and in `providers.cluster-profile.errors`, and logged once;
 * - a profile changed only in what reaches the plugin (arguments, environment, exec config) swaps credentials in place;
 *   a changed server, CA or proxy re-engages;
 * - list and watch are the hub's own (relist on 410, backoff, idle watchdog) and need only get/list/watch on
 *   clusterprofiles.multicluster.x-k8s.io in those namespaces (or cluster-wide for `*`).
 */
export class ClusterProfileProvider {
  readonly #o: ClusterProfileProviderOptions;
  readonly #client: KubeClient;
  /** One per namespace watched (or one for all). */
  readonly #informers: Informer[] = [];
  /** Their watches, for the `providers` section. */
  readonly #watchers: Watcher[] = [];
  /** store key → resourceVersion last offered. */
  readonly #versions = new Map<string, string>();
  readonly #clock: Clock;

  constructor(options: ClusterProfileProviderOptions) {
    this.#o = options;
    const { client, clock, log } = homeClient(options, "cluster-profile", "operator-hub/cluster-profiles");
    this.#client = client;
    this.#clock = clock;
    const all = options.namespaces.includes(ALL_PROFILE_NAMESPACES);
    const namespaces = all ? [ALL_PROFILE_NAMESPACES] : [...new Set(options.namespaces)];
    for (const ns of namespaces) {
      const informer = new Informer({
        cluster: options.home.name,
        projection: project,
        watches: (store, onChange) => [
          new Watcher({
            path: ns === ALL_PROFILE_NAMESPACES
              ? `/apis/${CLUSTER_PROFILE_API}/clusterprofiles`
              : `/apis/${CLUSTER_PROFILE_API}/namespaces/${encodeURIComponent(ns)}/clusterprofiles`,
            namespace: ns === ALL_PROFILE_NAMESPACES ? undefined : ns,
            client: this.#client,
            store,
            onChange,
            clock,
            logger: log,
            idleTimeoutMs: options.idleTimeoutMs,
          }),
        ],
      });
      informer.addListener((requests) => {
        for (const request of requests) {
          const key = objectKey(request);
          this.#changed(informer.store, key).catch((err) => {
            log.error("cannot read a ClusterProfile", { clusterProfile: key, error: errorText(err) });
            options.registry.unusable(
              "cluster-profile",
              key,
              `cannot read ClusterProfile ${key}: ${errorText(err)}`,
            );
          });
        }
      });
      this.#informers.push(informer);
      this.#watchers.push(...informer.watchers);
    }
    const watches = namespaces.map((ns) => `${options.home.name}:${ns}`);
    options.registry.attach("cluster-profile", () => {
      const snaps = this.#watchers.map((w) => w.snapshot());
      const worst = snaps.find((s) => s.phase !== "watching") ?? snaps[0];
      return {
        state: worst.phase,
        synced: snaps.every((s) => s.synced),
        watches,
        lastError: snaps.map((s) => s.lastError).find((e) => e) ?? null,
      };
    });
  }

  /** Lists and watches until `signal` aborts; closes its client before settling. */
  async start(signal: AbortSignal): Promise<void> {
    try {
      for (const informer of this.#informers) informer.start(signal);
      await Promise.all(this.#informers.map((i) => i.stopped));
    } finally {
      this.#client.close();
    }
  }

  async #changed(store: Store, key: string): Promise<void> {
    const obj = store.get(key);
    const registry = this.#o.registry;
    registry.unusable("cluster-profile", key, undefined);
    if (!obj) {
      this.#versions.delete(key);
      registry.withdraw("cluster-profile", key);
      return;
    }
    const rv = obj.metadata.resourceVersion ?? "";
    if (this.#versions.get(key) === rv) return;
    this.#versions.set(key, rv);
    const view = obj.view as ProfileView;
    const name = profileClusterName(view.namespace, view.name);
    const got = await profileAccess(view, {
      file: this.#o.file,
      policy: this.#o.policy,
      baseEnv: this.#o.baseEnv,
      execTimeoutMs: this.#o.execTimeoutMs,
      clock: this.#clock,
    });
    const c = view.condition;
    const offer: ClusterOffer = {
      name,
      endpointDigest: got.endpointDigest,
      credentialsDigest: got.credentialsDigest,
      condition: c ?? { type: CONTROL_PLANE_HEALTHY, status: "Unknown", reason: "NotReported" },
    };
    if (got.error) offer.error = got.error;
    else if (c?.status !== "True") {
      offer.error = `ClusterProfile ${key} is not used: its ${CONTROL_PLANE_HEALTHY} condition is ${
        c ? `${c.status}${c.reason ? ` (${c.reason}${c.message ? `: ${c.message}` : ""})` : ""}` : "missing"
      }; the hub engages it once the condition is True`;
    } else offer.access = got.access;
    // A newer version may have arrived while this one was read: only the newest is offered.
    if (this.#versions.get(key) !== rv) return;
    registry.offer("cluster-profile", key, [offer]);
  }
}

/** Keeps the profile's identity and what the provider reads of it, nothing else. */
function project(raw: Record<string, unknown>): StoredObject {
  const meta = (raw.metadata ?? {}) as Record<string, unknown>;
  return {
    metadata: {
      name: String(meta.name ?? ""),
      namespace: meta.namespace as string | undefined,
      uid: meta.uid as string | undefined,
      resourceVersion: meta.resourceVersion as string | undefined,
    },
    view: profileView(raw),
  };
}
