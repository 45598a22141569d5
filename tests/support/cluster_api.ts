// An admin client for any cluster (a FaultApiserver or a local context) and an observer of UUIDs that survives outages.
// deno-lint-ignore-file no-explicit-any -- JSON from the apiserver is checked by the tests themselves.
//
// The observer shares no code with the hub: it lists, then watches with its own reconnect loop (resuming from the
// last resourceVersion, relisting after a 410), and records every status.uuid each object ever showed. Unlike
// tests/support/direct_api.ts's UuidHistory, it keeps observing across an apiserver kill and restart.

import { watchEvents } from "./watch_events.ts";

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const UUIDS = "/apis/demo.operator/v1";

/** Where and how to reach a cluster as admin. */
export interface ClusterEndpoint {
  name: string;
  server: string;
  token: string;
  caPem: string;
}

/** A non-2xx answer. */
export class ClusterApiError extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.name = "ClusterApiError";
    this.status = status;
  }
}

/** `prefix-0` … `prefix-(n-1)`: object names for a test. */
export const names = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/** Every Uuid of a namespace in pages of 500, following continue tokens; `get` answers one GET with its JSON. */
export async function listAllUuids(get: (path: string) => Promise<any>, namespace: string): Promise<any[]> {
  const items: any[] = [];
  let cont = "";
  do {
    const page = await get(
      `${UUIDS}/namespaces/${namespace}/uuid?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ""}`,
    );
    items.push(...page.items);
    cont = page.metadata?.continue ?? "";
  } while (cont);
  return items;
}

/** name → status.uuid (undefined while unassigned). */
export function uuidsByName(items: any[]): Map<string, unknown> {
  return new Map(items.map((o) => [o.metadata.name, o.status?.uuid]));
}

/** Admin access to one cluster. Call close() when done. */
export class ClusterApi {
  readonly ep: ClusterEndpoint;
  readonly #http: Deno.HttpClient;

  constructor(ep: ClusterEndpoint) {
    this.ep = ep;
    this.#http = Deno.createHttpClient({ caCerts: [ep.caPem] });
  }

  get name(): string {
    return this.ep.name;
  }

  async request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    options: { contentType?: string; timeoutMs?: number } = {},
  ): Promise<T> {
    const res = await fetch(this.ep.server + path, {
      method,
      client: this.#http,
      headers: {
        authorization: `Bearer ${this.ep.token}`,
        "content-type": options.contentType ??
          (method === "PATCH" ? "application/merge-patch+json" : "application/json"),
        accept: "application/json",
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    });
    const text = await res.text();
    if (!res.ok) {
      throw new ClusterApiError(`${this.name}: ${method} ${path}: ${res.status} ${text.slice(0, 300)}`, res.status);
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }

  async createNamespace(name: string): Promise<void> {
    await this.request("POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name, labels: { "operator-hub.test/ephemeral": "true" } },
    });
  }

  /** Deletes the namespace's Uuids (dropping finalizers) and the namespace; ignores what is already gone. */
  async deleteNamespace(name: string): Promise<void> {
    try {
      await this.request("DELETE", `${UUIDS}/namespaces/${name}/uuid`);
    } catch (err) {
      if (!(err instanceof ClusterApiError) || err.status !== 404) throw err;
    }
    try {
      await this.request("DELETE", `/api/v1/namespaces/${name}`);
    } catch (err) {
      if (!(err instanceof ClusterApiError) || err.status !== 404) throw err;
    }
  }

  /** Creates one Uuid (extra metadata such as annotations allowed). */
  async createUuid(namespace: string, name: string, metadata: Record<string, unknown> = {}): Promise<any> {
    return await this.request("POST", `${UUIDS}/namespaces/${namespace}/uuid`, {
      apiVersion: "demo.operator/v1",
      kind: "Uuid",
      metadata: { ...metadata, name, namespace },
      spec: {},
    });
  }

  /** Creates Uuids with bounded concurrency; resolves with the names created. */
  async createUuids(namespace: string, names: string[], concurrency = 16): Promise<string[]> {
    let next = 0;
    const worker = async () => {
      while (next < names.length) await this.createUuid(namespace, names[next++]);
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, names.length) }, worker));
    return names;
  }

  async getUuid(namespace: string, name: string): Promise<any> {
    return await this.request("GET", `${UUIDS}/namespaces/${namespace}/uuid/${name}`);
  }

  async deleteUuid(namespace: string, name: string): Promise<void> {
    await this.request("DELETE", `${UUIDS}/namespaces/${namespace}/uuid/${name}`);
  }

  /** Merge-patches the status subresource as admin (a user or another operator writing status). */
  async patchStatus(namespace: string, name: string, status: Record<string, unknown>, resourceVersion?: string) {
    return await this.request("PATCH", `${UUIDS}/namespaces/${namespace}/uuid/${name}/status`, {
      ...(resourceVersion ? { metadata: { resourceVersion } } : {}),
      status,
    });
  }

  /** Every Uuid of a namespace (all pages). */
  listUuids(namespace: string): Promise<any[]> {
    return listAllUuids((path) => this.request("GET", path), namespace);
  }

  /** name → status.uuid (undefined while unassigned). */
  async uuidsOf(namespace: string): Promise<Map<string, unknown>> {
    return uuidsByName(await this.listUuids(namespace));
  }

  /** Events of a namespace whose involved object is `name`. */
  async eventsFor(namespace: string, name: string): Promise<any[]> {
    const list = await this.request("GET", `/api/v1/namespaces/${namespace}/events`);
    return list.items.filter((e: any) => e.involvedObject?.name === name);
  }

  /** Starts observing a namespace's Uuids; see {@linkcode UuidObserver}. */
  observe(namespace: string): UuidObserver {
    return new UuidObserver(this, namespace);
  }

  close(): void {
    this.#http.close();
  }
}

/** Polls `fn` until it returns a truthy value, at most `timeoutMs`. */
export async function waitUntil<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 60_000,
  everyMs = 200,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  while (true) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (performance.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${String(last)}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Waits until the namespace holds exactly `count` Uuids, each with a valid UUID; resolves with name → uuid. */
export function waitAllAssigned(
  api: ClusterApi,
  namespace: string,
  count: number,
  timeoutMs = 60_000,
): Promise<Map<string, string>> {
  return waitUntil(
    `${count} Uuids assigned in ${api.name}/${namespace}`,
    async () => {
      const m = await api.uuidsOf(namespace);
      const done = [...m.values()].filter((u) => typeof u === "string" && UUID_V4.test(u)).length;
      return m.size === count && done === count ? m as Map<string, string> : undefined;
    },
    timeoutMs,
    250,
  );
}

/**
 * Records every status.uuid each object of a namespace ever showed, across apiserver restarts.
 *
 * Guarantees: after a broken stream it resumes from the last resourceVersion within about 250 ms of the apiserver
 * answering again; after a 410 it relists (and records what the list shows). `firstSeen` gives, per object, when a
 * UUID was first observed (performance.now()), for latency checks.
 */
export class UuidObserver {
  readonly seen = new Map<string, Set<string>>();
  readonly firstSeen = new Map<string, number>();
  /** Objects that showed a status with some but not all of uuid, state and message. */
  readonly partial: string[] = [];
  reconnects = 0;
  readonly #abort = new AbortController();
  readonly #done: Promise<void>;

  constructor(api: ClusterApi, namespace: string) {
    this.#done = this.#run(api, namespace);
  }

  #record(o: any): void {
    const st = o?.status;
    const name = o?.metadata?.name;
    if (!name) return;
    if (st && (st.uuid !== undefined || st.state !== undefined)) {
      const complete = typeof st.uuid === "string" && typeof st.state === "string" && typeof st.message === "string";
      if (!complete && st.state !== "Error") this.partial.push(`${name}: ${JSON.stringify(st)}`);
    }
    if (typeof st?.uuid === "string" && st.uuid) {
      let set = this.seen.get(name);
      if (!set) this.seen.set(name, set = new Set());
      set.add(st.uuid);
      if (!this.firstSeen.has(name)) this.firstSeen.set(name, performance.now());
    }
  }

  async #run(api: ClusterApi, namespace: string): Promise<void> {
    const signal = this.#abort.signal;
    const http = Deno.createHttpClient({ caCerts: [api.ep.caPem] });
    let rv = "";
    try {
      while (!signal.aborted) {
        try {
          if (!rv) {
            const list = await api.request("GET", `${UUIDS}/namespaces/${namespace}/uuid`, undefined, {
              timeoutMs: 10_000,
            });
            for (const o of list.items) this.#record(o);
            rv = list.metadata.resourceVersion;
          }
          const res = await fetch(
            `${api.ep.server}${UUIDS}/namespaces/${namespace}/uuid?watch=1&allowWatchBookmarks=true` +
              `&timeoutSeconds=60&resourceVersion=${rv}`,
            { client: http, headers: { authorization: `Bearer ${api.ep.token}` }, signal },
          );
          if (res.status === 410) {
            await res.body?.cancel();
            rv = "";
            continue;
          }
          if (!res.ok || !res.body) {
            await res.body?.cancel();
            throw new Error(`watch: ${res.status}`);
          }
          for await (const ev of watchEvents(res.body, signal)) {
            if (ev.type === "ERROR") {
              if (ev.object?.code === 410) rv = "";
              continue;
            }
            if (ev.object?.metadata?.resourceVersion) rv = ev.object.metadata.resourceVersion;
            if (ev.type !== "BOOKMARK") this.#record(ev.object);
          }
        } catch {
          if (signal.aborted) break;
        }
        if (signal.aborted) break;
        this.reconnects++;
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      http.close();
    }
  }

  /** Objects that showed more than one UUID. */
  changed(): string[] {
    return [...this.seen].filter(([, s]) => s.size > 1).map(([n, s]) => `${n}: ${[...s].join(" -> ")}`);
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#done;
  }
}
