// The Secret provider: labelled kubeconfig Secrets in one namespace of the home cluster (multicluster-runtime's convention).

import {
  type KubeClient,
  KubeconfigParser,
  kubeconfigTooLarge,
  MAX_UNTRUSTED_KUBECONFIG_BYTES,
} from "../../../kube/mod.ts";
import {
  Informer,
  labelled,
  objectKey,
  objectMeta,
  type StoredObject,
  Watcher,
  type WatchSnapshot,
} from "../../../runtime/mod.ts";
import { errorText } from "../../../util/mod.ts";
import { decodeSecretValue, kubeconfigOffer } from "./_kubeconfig_offer.ts";
import { type NamePrefixes, prefixedName } from "../name_prefixes.ts";
import type { ClusterOffer } from "../cluster_offer.ts";
import { homeClient, type HomeWatchOptions, type KubeconfigSecretOptions } from "./_home_watch.ts";

/** The label multicluster-runtime's kubeconfig provider selects, with the value `"true"`. */
export const KUBECONFIG_SECRET_LABEL = "sigs.k8s.io/multicluster-runtime-kubeconfig";
/** The data key holding the kubeconfig. */
export const KUBECONFIG_SECRET_KEY = "kubeconfig";

/** The home cluster holds the Secrets. */
export interface SecretProviderOptions extends HomeWatchOptions, KubeconfigSecretOptions {
  namespace: string;
  /**
   * `--clusters`: `all`, or the names selected. A Secret whose cluster name (with the `secret` provider's prefix from
   * `prefixes`) is not selected is never parsed, never held in memory beyond its name, and offers nothing (the
   * registry would not serve it anyway). Default `all`.
   */
  selection?: "all" | readonly string[];
  /** `--cluster-name-prefix`: the prefix the registry puts before this provider's names. Default: none. */
  prefixes?: NamePrefixes;
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
 *
 * Hostile Secrets: a kubeconfig over MAX_UNTRUSTED_KUBECONFIG_BYTES is refused without being decoded or kept; the others
 * are parsed by `parser`, in a worker with a time limit, one at a time, under the untrusted rules (no aliases, a cap on
 * contexts, users and clusters: kubeconfig_yaml.ts), so no Secret can hold the event loop. With a `selection`, a
 * Secret whose cluster is not selected is not parsed at all.
 */
export class SecretProvider {
  readonly #o: SecretProviderOptions;
  readonly #informer: Informer;
  readonly #client: KubeClient;
  readonly #parser: KubeconfigParser;
  /** Whether this provider made `#parser` (and so starts it). */
  readonly #ownParser: boolean;
  readonly #selected: (name: string) => boolean;
  readonly #watcher: Watcher;
  readonly #digests = new Map<string, string>();

  constructor(options: SecretProviderOptions) {
    this.#o = options;
    const { client, clock, log } = homeClient(options, "secret", "operator-hub/cluster-secrets");
    this.#client = client;
    this.#selected = selects(options.selection ?? "all", options.prefixes ?? {});
    this.#ownParser = options.parser === undefined;
    this.#parser = options.parser ?? new KubeconfigParser({ clock });
    this.#informer = new Informer({
      cluster: options.home.name,
      projection: (raw) => project(raw, this.#selected),
      watches: (store, onChange) => [
        new Watcher({
          path: `/api/v1/namespaces/${encodeURIComponent(options.namespace)}/secrets`,
          namespace: options.namespace,
          client: labelled(this.#client, `${KUBECONFIG_SECRET_LABEL}=true`),
          store,
          onChange,
          clock,
          logger: log,
          idleTimeoutMs: options.idleTimeoutMs,
        }),
      ],
    });
    this.#watcher = this.#informer.watchers[0];
    this.#informer.addListener((requests) => {
      for (const request of requests) {
        const key = objectKey(request);
        this.#changed(key).catch((err) => {
          log.error("cannot read a cluster Secret", { secret: key, error: errorText(err) });
          this.#o.registry.unusable("secret", key, `cannot read Secret ${key}: ${errorText(err)}`);
        });
      }
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

  /** Lists and watches until `signal` aborts; closes its client (and stops its own parser) before settling. */
  async start(signal: AbortSignal): Promise<void> {
    const parsing = this.#ownParser ? this.#parser.start(signal) : undefined;
    try {
      this.#informer.start(signal);
      await this.#informer.stopped;
    } finally {
      this.#client.close();
      await parsing;
    }
  }

  async #changed(key: string): Promise<void> {
    const obj = this.#informer.store.get(key);
    const name = key.slice(key.indexOf("/") + 1);
    const source = `${this.#o.namespace}/${name}`;
    this.#o.registry.unusable("secret", key, undefined);
    if (!obj) {
      this.#digests.delete(key);
      this.#o.registry.withdraw("secret", source);
      return;
    }
    if (obj.unselected === true) return; // never parsed, never offered: --clusters does not select it
    const rv = obj.metadata.resourceVersion ?? "";
    if (this.#digests.get(key) === rv) return;
    this.#digests.set(key, rv);
    const text = obj.kubeconfig as string | undefined;
    const bytes = obj.kubeconfigBytes as number | undefined;
    const where = `Secret ${source} in cluster "${this.#o.home.name}"`;
    const refused = (error: string): ClusterOffer => ({ name, error, endpointDigest: "", credentialsDigest: "" });
    let offer: ClusterOffer;
    if (bytes !== undefined) {
      offer = refused(`invalid kubeconfig secret ${source}: ${kubeconfigTooLarge(bytes)}`);
    } else if (text === undefined) {
      offer = refused(`${where} has no data key "${KUBECONFIG_SECRET_KEY}"; put the kubeconfig there`);
    } else {
      offer = await kubeconfigOffer(text, {
        name,
        source: `secret ${source}`,
        where,
        policy: this.#o.policy,
        env: this.#o.env,
        parser: this.#parser,
      });
    }
    // A newer version may have arrived while this one was parsed: only the newest is offered.
    if (this.#digests.get(key) !== rv) return;
    this.#o.registry.offer("secret", source, [offer]);
  }
}

/**
 * Keeps the Secret's identity and its decoded kubeconfig, nothing else: only the size of one over the cap (never
 * decoded), and nothing of a Secret whose cluster `selected` does not select (marked `unselected`).
 */
export function project(raw: Record<string, unknown>, selected: (name: string) => boolean = () => true): StoredObject {
  const data = (raw.data ?? {}) as Record<string, unknown>;
  const out: StoredObject = { metadata: objectMeta(raw) };
  if (!selected(out.metadata.name)) {
    out.unselected = true;
    return out;
  }
  const b64 = data[KUBECONFIG_SECRET_KEY];
  if (typeof b64 !== "string") return out;
  const bytes = base64Bytes(b64);
  if (bytes > MAX_UNTRUSTED_KUBECONFIG_BYTES) out.kubeconfigBytes = bytes;
  // Not base64: parsed as an empty kubeconfig, reported as having no context.
  else out.kubeconfig = decodeSecretValue(b64);
  return out;
}

/** How many bytes base64 text `b64` decodes to (the API server writes it padded, without line breaks). */
function base64Bytes(b64: string): number {
  const padding = b64.endsWith("==") ? 2 : b64.endsWith("=") ? 1 : 0;
  return Math.floor(b64.length / 4) * 3 + (b64.length % 4 === 0 ? 0 : (b64.length % 4) - 1) - padding;
}

/** Whether `--clusters` (`selection`) selects the Secret named `name`, registered with the `secret` prefix. */
export function selects(selection: "all" | readonly string[], prefixes: NamePrefixes): (name: string) => boolean {
  if (selection === "all" || selection.includes("all")) return () => true;
  const names = new Set(selection);
  return (name) => names.has(prefixedName(prefixes, "secret", false, name));
}
