// Installs and keeps each operator's webhook configurations in every engaged cluster this replica owns: level-based,
// drift repaired from a watch of the configurations, removed when an operator or a cluster goes.

import {
  type ClusterAccess,
  isNotFound,
  KubeClient,
  type PermissionCheck,
  resourcePath,
  type ResourceType,
} from "../../kube/mod.ts";
import type { Operator } from "../../runtime/mod.ts";
import { type Clock, errorText, type Logger, oneLine, redact, SystemClock } from "../../util/mod.ts";
import { type EngageTarget, onRemoved } from "../providers/mod.ts";
import {
  CONFIGURATION_TYPES,
  desiredConfigurations,
  HUB_LABEL,
  inSync,
  type WebhookConfiguration,
  type WebhookEndpoint,
} from "./webhook_configurations.ts";

/** Options of {@linkcode WebhookInstaller}. */
export interface WebhookInstallerOptions {
  /** `--webhook-name`: in every configuration's name and label. */
  hubName: string;
  operators: readonly Operator[];
  /** The hub's `--namespace` list (a namespaceSelector); empty = every namespace. */
  namespaces: readonly string[];
  /** The PEM CA bundle now (read at each sync). */
  caBundle(): string;
  /** How `cluster`'s apiserver reaches the hub. */
  endpointFor(cluster: string): WebhookEndpoint;
  /** A full sync this often even without events. Default 5 minutes. */
  resyncMs?: number;
  requestTimeoutMs?: number;
  http2?: boolean;
  clock?: Clock;
  logger: Logger;
}

/** One cluster's admission state in /status. */
export interface AdmissionClusterStatus {
  /** Configurations in place after the last sync (validating and mutating together). */
  configurations: number;
  /** The last sync's failure, one line; null after a good one. */
  lastError: string | null;
  /** When the last good sync ended (ISO 8601), null before the first. */
  lastSyncAt: string | null;
}

/** The RBAC the installer needs in every cluster: get/list/watch/create/patch/delete of both configuration kinds. */
export function installerPermissions(): PermissionCheck[] {
  return Object.values(CONFIGURATION_TYPES).flatMap((t) =>
    ["get", "list", "watch", "create", "patch", "delete"].map((verb) => ({ verb, group: t.group, resource: t.plural }))
  );
}

interface Installed {
  client: KubeClient;
  abort: AbortController;
  done: Promise<void>;
  wake: () => void;
  status: AdmissionClusterStatus;
}

/**
 * Keeps, in every cluster handed to `engaged`, exactly the configurations the operators' webhooks need.
 *
 * Guarantees:
 * - level-based: each sync lists this hub's configurations (by the `operator-hub.dev/webhook-hub` label) and creates,
 *   repairs (a merge patch of labels and webhooks) or deletes until they are what the operators, the CA bundle and the
 *   endpoint say; a configuration of an operator no longer hosted, or without webhooks of that kind now, is deleted;
 * - a sync runs at engage, after every watch event on either kind under the label (an edit or delete by hand comes
 *   back within a round trip), after `refresh()` (a new CA bundle), and every `resyncMs`; a failure is retried with
 *   backoff (1 s doubling to 30 s) and shown as `lastError` in `status()`;
 * - `disengaged` stops the cluster's loop and leaves its configurations (another replica may own it now); `remove`
 *   deletes them (the cluster left the registry; `operator-hub cleanup`);
 * - only the configurations named and labelled for this `hubName` are ever written or deleted.
 */
export class WebhookInstaller {
  readonly #o: WebhookInstallerOptions;
  readonly #clock: Clock;
  readonly #clusters = new Map<string, Installed>();

  constructor(options: WebhookInstallerOptions) {
    this.#o = options;
    this.#clock = options.clock ?? new SystemClock();
  }

  /** Starts keeping `cluster`'s configurations (again, if it was engaged before). */
  engaged(cluster: string, access: ClusterAccess): void {
    void this.disengaged(cluster);
    const abort = new AbortController();
    const client = this.#client(cluster, access);
    let wake = () => {};
    const status: AdmissionClusterStatus = { configurations: 0, lastError: null, lastSyncAt: null };
    const installed: Installed = { client, abort, done: Promise.resolve(), wake: () => wake(), status };
    installed.done = this.#run(cluster, installed, (w) => wake = w).finally(() => client.close());
    this.#clusters.set(cluster, installed);
  }

  /** Stops keeping `cluster`'s configurations; they stay in place. */
  async disengaged(cluster: string): Promise<void> {
    const c = this.#clusters.get(cluster);
    if (!c) return;
    this.#clusters.delete(cluster);
    c.abort.abort();
    await c.done;
  }

  /** Syncs every cluster now (e.g. the CA bundle changed). */
  refresh(): void {
    for (const c of this.#clusters.values()) c.wake();
  }

  /** Stops every cluster's loop. */
  async stop(): Promise<void> {
    await Promise.all([...this.#clusters.keys()].map((name) => this.disengaged(name)));
  }

  /** Per engaged cluster: configurations in place, the last error, the last good sync. */
  status(): Record<string, AdmissionClusterStatus> {
    return Object.fromEntries([...this.#clusters].map(([name, c]) => [name, { ...c.status }]));
  }

  /** Deletes this hub's configurations from the cluster `access` reaches; resolves with how many went. */
  async remove(cluster: string, access: ClusterAccess, signal?: AbortSignal): Promise<number> {
    await this.disengaged(cluster);
    const client = this.#client(cluster, access);
    try {
      return await removeConfigurations(client, this.#o.hubName, signal);
    } finally {
      client.close();
    }
  }

  #client(cluster: string, access: ClusterAccess): KubeClient {
    return new KubeClient(access, {
      logger: this.#o.logger.child({ cluster }),
      userAgent: "operator-hub/webhooks",
      requestTimeoutMs: this.#o.requestTimeoutMs ?? 10_000,
      http2: this.#o.http2,
      clock: this.#clock,
    });
  }

  async #run(cluster: string, c: Installed, setWake: (wake: () => void) => void): Promise<void> {
    const signal = c.abort.signal;
    const log = this.#o.logger.child({ cluster });
    let dirty = true;
    let wakeUp: (() => void) | undefined;
    setWake(() => {
      dirty = true;
      wakeUp?.();
    });
    const watches = Object.values(CONFIGURATION_TYPES).map((t) => this.#watch(c.client, t, () => c.wake(), signal));
    let delay = 1_000;
    while (!signal.aborted) {
      if (dirty) {
        dirty = false;
        try {
          c.status.configurations = await this.#sync(c.client, cluster, log, signal);
          c.status.lastError = null;
          c.status.lastSyncAt = new Date(this.#clock.now()).toISOString();
          delay = 1_000;
        } catch (err) {
          if (signal.aborted) break;
          c.status.lastError = redact(oneLine(errorText(err)));
          log.warn("cannot install the webhook configurations; retrying", {
            error: c.status.lastError,
            delayMs: delay,
          });
          dirty = true;
          await this.#clock.sleep(delay, signal);
          delay = Math.min(delay * 2, 30_000);
          continue;
        }
      }
      // Until an event, a refresh, the resync or the stop.
      await new Promise<void>((resolve) => {
        const timer = this.#clock.setTimer(this.#o.resyncMs ?? 300_000, () => {
          dirty = true;
          finish();
        });
        const onAbort = () => finish();
        const finish = () => {
          timer.cancel();
          signal.removeEventListener("abort", onAbort);
          wakeUp = undefined;
          resolve();
        };
        signal.addEventListener("abort", onAbort, { once: true });
        wakeUp = finish;
        if (dirty || signal.aborted) finish();
      });
    }
    await Promise.all(watches);
  }

  /** One sync: the number of configurations in place afterwards. */
  async #sync(client: KubeClient, cluster: string, log: Logger, signal: AbortSignal): Promise<number> {
    const inputs = {
      hubName: this.#o.hubName,
      cluster,
      endpoint: this.#o.endpointFor(cluster),
      caBundle: this.#o.caBundle(),
      namespaces: this.#o.namespaces,
    };
    const desired = this.#o.operators.flatMap((op) => desiredConfigurations(op, inputs));
    let count = 0;
    for (const [type, rt] of Object.entries(CONFIGURATION_TYPES)) {
      const kind = rt.kind;
      const path = resourcePath(rt);
      const list = await client.request<{ items?: Record<string, unknown>[] }>("GET", path, {
        query: { labelSelector: `${HUB_LABEL}=${this.#o.hubName}` },
        signal,
      });
      const current = new Map(
        (list?.items ?? []).map((o) => [(o.metadata as { name: string }).name, o] as const),
      );
      for (const want of desired.filter((d) => d.kind === kind)) {
        const got = current.get(want.metadata.name);
        current.delete(want.metadata.name);
        count++;
        if (inSync(want, got)) continue;
        await write(client, rt, want, got !== undefined, signal);
        log.info(got ? "webhook configuration repaired" : "webhook configuration created", {
          kind,
          name: want.metadata.name,
          type,
        });
      }
      for (const name of current.keys()) {
        await client.request("DELETE", resourcePath({ ...rt, name }), { signal }).catch((e) =>
          isNotFound(e) ? undefined : Promise.reject(e)
        );
        log.info("webhook configuration of an operator gone deleted", { kind, name });
      }
    }
    return count;
  }

  /** Watches `type` under this hub's label, calling `changed` on every event, until `signal` aborts. */
  async #watch(client: KubeClient, type: ResourceType, changed: () => void, signal: AbortSignal): Promise<void> {
    let delay = 1_000;
    while (!signal.aborted) {
      try {
        for await (
          const e of client.watch(resourcePath(type), {
            timeoutSeconds: 290,
            labelSelector: `${HUB_LABEL}=${this.#o.hubName}`,
            allowWatchBookmarks: false,
            signal,
          })
        ) {
          delay = 1_000;
          if (e.type !== "BOOKMARK") changed();
        }
      } catch {
        if (signal.aborted) break;
        await this.#clock.sleep(delay, signal);
        delay = Math.min(delay * 2, 30_000);
      }
    }
  }
}

async function write(
  client: KubeClient,
  type: ResourceType,
  want: WebhookConfiguration,
  exists: boolean,
  signal: AbortSignal,
): Promise<void> {
  const name = want.metadata.name;
  if (exists) {
    // A merge patch replaces the webhooks list whole and sets the labels.
    await client.request("PATCH", resourcePath({ ...type, name }), {
      body: { metadata: { labels: want.metadata.labels }, webhooks: want.webhooks },
      signal,
    });
    return;
  }
  await client.request("POST", resourcePath(type), { body: want, signal }).catch(async (e) => {
    // Created meanwhile (a hand-made one, or our previous attempt): patch it instead.
    if ((e as { status?: number }).status !== 409) throw e;
    await client.request("PATCH", resourcePath({ ...type, name }), {
      body: { metadata: { labels: want.metadata.labels }, webhooks: want.webhooks },
      signal,
    });
  });
}

/** Deletes every configuration labelled for `hubName` in the cluster `client` reaches; resolves with the count. */
export async function removeConfigurations(client: KubeClient, hubName: string, signal?: AbortSignal): Promise<number> {
  let removed = 0;
  for (const rt of Object.values(CONFIGURATION_TYPES)) {
    const list = await client.request<{ items?: { metadata: { name: string } }[] }>("GET", resourcePath(rt), {
      query: { labelSelector: `${HUB_LABEL}=${hubName}` },
      signal,
    });
    for (const item of list?.items ?? []) {
      await client.request("DELETE", resourcePath({ ...rt, name: item.metadata.name }), { signal }).then(
        () => removed++,
        (e) => isNotFound(e) ? undefined : Promise.reject(e),
      );
    }
  }
  return removed;
}

/**
 * `target` with a `removed` hook that deletes this hub's webhook configurations from a cluster that left the registry
 * (its file or Secret gone), after it was disengaged. Never throws: a failure is one warning line.
 */
export function removingWebhooks(target: EngageTarget, installer: WebhookInstaller, logger: Logger): EngageTarget {
  return onRemoved(target, async (name, access) => {
    try {
      const n = await installer.remove(name, access, AbortSignal.timeout(15_000));
      logger.info("webhook configurations removed from a removed cluster", { cluster: name, removed: n });
    } catch (err) {
      logger.warn("cannot remove the webhook configurations of a removed cluster", {
        cluster: name,
        error: redact(oneLine(errorText(err))),
      });
    }
  });
}
