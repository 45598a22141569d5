// The Secret provider: labelled kubeconfig Secrets in one namespace of the home cluster (multicluster-runtime's convention).

import { type ClusterAccess, type CredentialPolicy, type EnvSource, KubeClient } from "../../kube/mod.ts";
import { labelled, objectMeta, Store, type StoredObject, Watcher, type WatchSnapshot } from "../../runtime/mod.ts";
import { type Clock, errorText, type Logger, SystemClock } from "../../util/mod.ts";
import { decodeSecretValue, kubeconfigOffer } from "./_kubeconfig_offer.ts";
import type { ClusterOffer, ClusterRegistry } from "./registry.ts";

/** The label multicluster-runtime's kubeconfig provider selects, with the value `"true"`. */
export const KUBECONFIG_SECRET_LABEL = "sigs.k8s.io/multicluster-runtime-kubeconfig";
/** The data key holding the kubeconfig. */
export const KUBECONFIG_SECRET_KEY = "kubeconfig";

export interface SecretProviderOptions {
  registry: ClusterRegistry;
  /** The home cluster, which holds the Secrets. */
  home: ClusterAccess;
  namespace: string;
  /** What a Secret's kubeconfig may hold (it is untrusted). Default: inline credentials, https, no exec plugin. */
  policy?: CredentialPolicy;
  /** Where an allowed exec plugin's PATH and HOME come from (nothing else of it is passed). Default: none. */
  env?: EnvSource;
  requestTimeoutMs?: number;
  idleTimeoutMs?: number;
  http2?: boolean;
  clock?: Clock;
  logger: Logger;
}

/**
 * Keeps the registry in step with the kubeconfig Secrets of one namespace.
 *
 * Guarantees: a Secret labelled `sigs.k8s.io/multicluster-runtime-kubeconfig: "true"` registers the cluster named
 * after the Secret, reached through the kubeconfig under data key `kubeconfig` (its `current-context`, or its only
 * context); deleting the Secret or removing the label withdraws it; a changed Secret is re-read, so a new token for
 * the same server is swapped in place. A Secret without the key, or whose kubeconfig is broken, shows the error on
 * that name's /status entry and in the `providers.secret` section; the list/watch's own failure (e.g. no permission
 * on Secrets) is that section's `state` and `lastError`. Every kubeconfig is untrusted (whoever may write Secrets
 * there): held to `policy` (inline credentials, https, allowed exec plugins only) before anything of it is used, and it
 * may not take a name the command line defines. List and watch are the hub's own (relist on 410, backoff, idle watchdog) and need only
 * get/list/watch on Secrets in that namespace.
 */
export class SecretProvider {
  readonly #o: SecretProviderOptions;
  readonly #store = new Store(project);
  readonly #client: KubeClient;
  readonly #watcher: Watcher;
  readonly #digests = new Map<string, string>();

  constructor(options: SecretProviderOptions) {
    this.#o = options;
    const clock = options.clock ?? new SystemClock();
    const log = options.logger.child({ cluster: options.home.name, provider: "secret" });
    this.#client = new KubeClient(options.home, {
      clock,
      requestTimeoutMs: options.requestTimeoutMs,
      logger: log,
      userAgent: "operator-hub/cluster-secrets",
      http2: options.http2,
    });
    this.#watcher = new Watcher({
      path: `/api/v1/namespaces/${encodeURIComponent(options.namespace)}/secrets`,
      namespace: options.namespace,
      client: labelled(this.#client, `${KUBECONFIG_SECRET_LABEL}=true`),
      store: this.#store,
      onChange: (keys) => {
        for (const key of keys) {
          this.#changed(key).catch((err) => {
            log.error("cannot read a cluster Secret", { secret: key, error: errorText(err) });
            this.#o.registry.unusable("secret", key, `cannot read Secret ${key}: ${errorText(err)}`);
          });
        }
      },
      clock,
      logger: log,
      idleTimeoutMs: options.idleTimeoutMs,
    });
    const watches = [`${options.home.name}:${options.namespace}`];
    options.registry.attach("secret", () => {
      const s = this.#watcher.snapshot();
      return { state: s.phase, synced: s.synced, watches, lastError: s.lastError };
    });
  }

  /** The Secret watch's state, for logs and tests. */
  snapshot(): WatchSnapshot {
    return this.#watcher.snapshot();
  }

  /** Lists and watches until `signal` aborts; closes its client before settling. */
  async start(signal: AbortSignal): Promise<void> {
    try {
      await this.#watcher.start(signal);
    } finally {
      this.#client.close();
    }
  }

  async #changed(key: string): Promise<void> {
    const obj = this.#store.get(key);
    const name = key.slice(key.indexOf("/") + 1);
    const source = `${this.#o.namespace}/${name}`;
    this.#o.registry.unusable("secret", key, undefined);
    if (!obj) {
      this.#digests.delete(key);
      this.#o.registry.withdraw("secret", source);
      return;
    }
    const text = obj.kubeconfig as string | undefined;
    const rv = obj.metadata.resourceVersion ?? "";
    if (this.#digests.get(key) === rv) return;
    this.#digests.set(key, rv);
    const where = `Secret ${source} in cluster "${this.#o.home.name}"`;
    let offer: ClusterOffer;
    if (text === undefined) {
      offer = {
        name,
        error: `${where} has no data key "${KUBECONFIG_SECRET_KEY}"; put the kubeconfig there`,
        endpointDigest: "",
        credentialsDigest: "",
      };
    } else {
      offer = await kubeconfigOffer(text, {
        name,
        source: `secret ${source}`,
        where,
        policy: this.#o.policy,
        env: this.#o.env,
      });
    }
    // A newer version may have arrived while this one was parsed: only the newest is offered.
    if (this.#digests.get(key) !== rv) return;
    this.#o.registry.offer("secret", source, [offer]);
  }
}

/** Keeps the Secret's identity and its decoded kubeconfig, nothing else. */
function project(raw: Record<string, unknown>): StoredObject {
  const data = (raw.data ?? {}) as Record<string, unknown>;
  const out: StoredObject = { metadata: objectMeta(raw) };
  const b64 = data[KUBECONFIG_SECRET_KEY];
  // Not base64: parsed as an empty kubeconfig, reported as having no context.
  if (typeof b64 === "string") out.kubeconfig = decodeSecretValue(b64);
  return out;
}
