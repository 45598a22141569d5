// The tests' one admin client, for any cluster (a context of clusters/local.yaml or a FaultApiserver), and an
// observer of UUIDs that shares no code with the hub.
// deno-lint-ignore-file no-explicit-any -- JSON from the apiserver is checked by the tests themselves.
//
// The observer lists, then watches with its own reconnect loop (resuming from the last resourceVersion, relisting
// after a 410), and records every status.uuid each object ever showed. An error that is not its own stop fails the
// test (see UuidObserver.assertStable and stop); `acrossRestarts` lets it ride out an apiserver that is down.

import assert from "node:assert/strict";
import { parse as parseYaml } from "yaml";
import { KUBECONFIG_PATH } from "../clusters/clusters.ts";
import { ClustersNotRunningError } from "./local_clusters.ts";
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

/** Reads one context of clusters/local.yaml (or `file`); throws loudly when the local clusters are not up. */
export function localEndpoint(context: string, file = KUBECONFIG_PATH): ClusterEndpoint {
  let doc: any;
  try {
    doc = parseYaml(Deno.readTextFileSync(file));
  } catch (cause) {
    throw new ClustersNotRunningError(
      `cannot read ${file}: the local clusters are not running; start them with \`deno task clusters:up\``,
      { cause },
    );
  }
  const find = (list: any[], n: string) => list?.find((x) => x.name === n);
  const ctx = find(doc?.contexts, context)?.context;
  if (!ctx) throw new Error(`no context ${context} in ${file}; known: ${doc?.contexts?.map((c: any) => c.name)}`);
  return {
    name: context,
    server: find(doc.clusters, ctx.cluster).cluster.server,
    token: find(doc.users, ctx.user).user.token,
    caPem: atob(find(doc.clusters, ctx.cluster).cluster["certificate-authority-data"]),
  };
}

/** Admin access to a context of clusters/local.yaml. Call close() when done. */
export function localApi(context: string): ClusterApi {
  return new ClusterApi(localEndpoint(context));
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

/** Attempts of one request that the apiserver answers 429 with Retry-After (client-go also makes 10). */
const TOO_MANY_REQUESTS_ATTEMPTS = 10;

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

  /** One request as admin; JSON in and out; a non-2xx answer throws a {@linkcode ClusterApiError}. */
  async request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    options: { contentType?: string; timeoutMs?: number } = {},
  ): Promise<T> {
    const signal = AbortSignal.timeout(options.timeoutMs ?? 30_000);
    let res: Response;
    let text: string;
    // A 429 with Retry-After (an apiserver whose storage is still initializing after a CRD change, or one under
    // priority-and-fairness pressure) was not processed: like kubectl and client-go, wait and send it again.
    for (let attempt = 1;; attempt++) {
      res = await this.#fetch(path, {
        method,
        headers: {
          "content-type": options.contentType ??
            (method === "PATCH" ? "application/merge-patch+json" : "application/json"),
          accept: "application/json",
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
      text = await res.text();
      const retryAfter = Number(res.headers.get("retry-after"));
      if (res.status !== 429 || attempt >= TOO_MANY_REQUESTS_ATTEMPTS || !(retryAfter >= 0)) break;
      await new Promise((resolve) => setTimeout(resolve, Math.min(retryAfter, 5) * 1000 || 100));
    }
    if (!res.ok) {
      throw new ClusterApiError(`${this.name}: ${method} ${path}: ${res.status} ${text.slice(0, 300)}`, res.status);
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** A raw fetch as admin (for streams and non-JSON bodies); the caller reads or cancels the body. */
  #fetch(path: string, init: RequestInit = {}): Promise<Response> {
    return fetch(this.ep.server + path, {
      ...init,
      client: this.#http,
      headers: { ...init.headers as Record<string, string>, authorization: `Bearer ${this.ep.token}` },
    });
  }

  /** The object at `path`, or undefined when the apiserver answers 404. */
  async find(path: string): Promise<any> {
    try {
      return await this.request("GET", path);
    } catch (err) {
      if (err instanceof ClusterApiError && err.status === 404) return undefined;
      throw err;
    }
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
      await this.deleteAllUuids(name);
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

  /**
   * Deletes every Uuid of a namespace in one request (deletecollection). Its time grows with the objects (thousands
   * take minutes on a busy machine), so its timeout is a generous hang guard rather than the usual 30 s.
   */
  async deleteAllUuids(namespace: string): Promise<void> {
    await this.request("DELETE", `${UUIDS}/namespaces/${namespace}/uuid`, undefined, { timeoutMs: 600_000 });
  }

  /** Merge-patches the status subresource as admin (a user or another operator writing status). */
  async patchStatus(namespace: string, name: string, status: Record<string, unknown>, resourceVersion?: string) {
    return await this.request("PATCH", `${UUIDS}/namespaces/${namespace}/uuid/${name}/status`, {
      ...(resourceVersion ? { metadata: { resourceVersion } } : {}),
      status,
    });
  }

  /** Every Uuid of a namespace, in pages of 500 following continue tokens. */
  async listUuids(namespace: string, options: { timeoutMs?: number } = {}): Promise<any[]> {
    return (await this.listUuidsAt(namespace, options)).items;
  }

  /** Every Uuid of a namespace (all pages) and the resourceVersion of the first page, to watch from. */
  async listUuidsAt(namespace: string, options: { timeoutMs?: number } = {}): Promise<{ items: any[]; rv: string }> {
    const items: any[] = [];
    let cont = "";
    let rv = "";
    do {
      const page = await this.request(
        "GET",
        `${UUIDS}/namespaces/${namespace}/uuid?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ""}`,
        undefined,
        options,
      );
      items.push(...page.items);
      rv ||= page.metadata.resourceVersion;
      cont = page.metadata?.continue ?? "";
    } while (cont);
    return { items, rv };
  }

  /** name → status.uuid (undefined while unassigned). */
  async uuidsOf(namespace: string): Promise<Map<string, unknown>> {
    return new Map((await this.listUuids(namespace)).map((o) => [o.metadata.name, o.status?.uuid]));
  }

  /** Events of a namespace whose involved object is `name`. */
  async eventsFor(namespace: string, name: string): Promise<any[]> {
    const list = await this.request("GET", `/api/v1/namespaces/${namespace}/events`);
    return list.items.filter((e: any) => e.involvedObject?.name === name);
  }

  /** Opens a watch of a namespace's Uuids from `rv`; the caller reads the body with watchEvents. */
  watchUuidsFrom(namespace: string, rv: string, signal: AbortSignal): Promise<Response> {
    return this.#fetch(
      `${UUIDS}/namespaces/${namespace}/uuid?watch=1&allowWatchBookmarks=true&timeoutSeconds=60&resourceVersion=${rv}`,
      { signal },
    );
  }

  /** Sum of apiserver_request_total for writes (PATCH/PUT/APPLY) to the uuid resource; `okOnly` counts 2xx only. */
  async uuidWrites(okOnly = false): Promise<number> {
    const byCode = await this.uuidWritesByCode();
    return Object.entries(byCode).reduce((n, [code, v]) => (!okOnly || code.startsWith("2") ? n + v : n), 0);
  }

  /** The apiserver's Uuid writes (PATCH, PUT, APPLY) so far, by HTTP status code ("200", "409", …). */
  async uuidWritesByCode(): Promise<Record<string, number>> {
    const res = await this.#fetch("/metrics");
    const text = await res.text();
    if (!res.ok) throw new ClusterApiError(`${this.name}: GET /metrics: ${res.status}`, res.status);
    const out: Record<string, number> = {};
    for (const line of text.split("\n")) {
      if (!line.startsWith("apiserver_request_total{")) continue;
      if (!line.includes('resource="uuid"') || !/verb="(PATCH|PUT|APPLY)"/.test(line)) continue;
      const code = /code="(\d+)"/.exec(line)?.[1] ?? "?";
      out[code] = (out[code] ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1));
    }
    return out;
  }

  /** Starts observing a namespace's Uuids; see {@linkcode UuidObserver}. */
  observe(namespace: string, options: ObserveOptions = {}): UuidObserver {
    return new UuidObserver(this, namespace, options);
  }

  close(): void {
    this.#http.close();
  }
}

/** Polls `fn` until it returns a truthy value (at least once, then until `timeoutMs`, a hang guard). */
export async function waitFor<T>(
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  what: string,
  timeoutMs = 60_000,
  everyMs = 250,
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
  return waitFor(
    async () => {
      const m = await api.uuidsOf(namespace);
      const done = [...m.values()].filter((u) => typeof u === "string" && UUID_V4.test(u)).length;
      return m.size === count && done === count ? m as Map<string, string> : undefined;
    },
    `${count} Uuids assigned in ${api.name}/${namespace}`,
    timeoutMs,
    250,
  );
}

/** Options of {@linkcode ClusterApi.observe}. */
export interface ObserveOptions {
  /**
   * The apiserver may be killed, restarted or refuse connections while observed: connection errors, 429 and 5xx
   * answers are retried (and counted in `interruptions`) instead of failing the observer. Other answers (an ERROR
   * event other than 410, any other 4xx) still fail it.
   */
  acrossRestarts?: boolean;
}

/**
 * Records every status.uuid each object of a namespace ever showed.
 *
 * Guarantees:
 * - after a stream that ends, it resumes from the last resourceVersion within about 250 ms; after a 410 (HTTP or an
 *   ERROR event) it relists and records what the list shows;
 * - every other error (and, without `acrossRestarts`, a connection error too) is kept in `errors`: `assertStable`
 *   and `stop` then fail, so an observer that stopped seeing cannot pass a "nothing changed" check;
 * - `firstSeen` gives, per object, when a UUID was first observed (performance.now()), for latency figures.
 */
export class UuidObserver {
  readonly namespace: string;
  readonly seen = new Map<string, Set<string>>();
  readonly firstSeen = new Map<string, number>();
  /** Objects that showed a status with some but not all of uuid, state and message. */
  readonly partial: string[] = [];
  /** Errors that were not the observer's own stop: any one fails assertStable and stop. */
  readonly errors: string[] = [];
  /** Connection errors ridden out with `acrossRestarts`. */
  interruptions = 0;
  /** 429 answers (the apiserver's "retry after"), retried from the same resourceVersion. */
  throttled = 0;
  reconnects = 0;
  /** How many errors a failed assertStable reported already (stop() does not throw them a second time). */
  #reported = 0;
  readonly #abort = new AbortController();
  readonly #done: Promise<void>;

  constructor(api: ClusterApi, namespace: string, options: ObserveOptions = {}) {
    this.namespace = namespace;
    this.#done = this.#run(api, namespace, options);
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

  async #run(api: ClusterApi, namespace: string, options: ObserveOptions): Promise<void> {
    const signal = this.#abort.signal;
    let rv = "";
    while (!signal.aborted) {
      try {
        if (!rv) {
          const list = await api.listUuidsAt(namespace, { timeoutMs: 10_000 });
          for (const o of list.items) this.#record(o);
          rv = list.rv;
        }
        const res = await api.watchUuidsFrom(namespace, rv, signal);
        if (res.status === 410) {
          await res.body?.cancel();
          rv = "";
          continue;
        }
        if (!res.ok || !res.body) {
          const text = await res.text();
          throw new ClusterApiError(
            `watch of ${api.name}/${namespace}: ${res.status} ${text.slice(0, 200)}`,
            res.status,
          );
        }
        for await (const ev of watchEvents(res.body, signal)) {
          if (ev.type === "ERROR") {
            if (ev.object?.code !== 410) throw new Error(`watch of ${api.name}/${namespace}: ${JSON.stringify(ev)}`);
            rv = "";
            break;
          }
          if (ev.object?.metadata?.resourceVersion) rv = ev.object.metadata.resourceVersion;
          if (ev.type !== "BOOKMARK") this.#record(ev.object);
        }
      } catch (err) {
        if (signal.aborted) break;
        // A 429 (e.g. "storage is (re)initializing" while the apiserver's watch cache rebuilds) is an answer to the
        // request itself, before any event: retrying from the same resourceVersion misses nothing, as client-go's
        // reflector does. 5xx and connection errors are an apiserver coming up (ridden out with acrossRestarts only);
        // other answers are real errors.
        const status = err instanceof ClusterApiError ? err.status : undefined;
        if (status === 429) this.throttled++;
        else if (options.acrossRestarts && !(status !== undefined && status < 500)) this.interruptions++;
        else this.errors.push(String((err as Error)?.message ?? err));
        if (status === 429) await new Promise((r) => setTimeout(r, 1000));
      }
      if (signal.aborted) break;
      this.reconnects++;
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Objects that showed more than one UUID. */
  changed(): string[] {
    return [...this.seen].filter(([, s]) => s.size > 1).map(([n, s]) => `${n}: ${[...s].join(" -> ")}`);
  }

  /**
   * Waits until the observer saw a UUID on every one of `expected`, or `timeoutMs` passed (assertStable then names
   * what it missed): its watch may lag what a GET already shows, e.g. while it relists after a CRD was replaced.
   */
  async caughtUp(expected: Iterable<string>, timeoutMs = 10_000): Promise<void> {
    const names = [...expected];
    const until = performance.now() + timeoutMs;
    while (names.some((n) => !this.seen.has(n)) && performance.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * The "nothing changed" check, with its proof of observation: the observer met no error, saw a UUID on every one
   * of `expected` (so an observer that saw nothing cannot pass), and no object showed two UUIDs.
   */
  assertStable(expected: Iterable<string>, label = this.namespace): void {
    this.#reported = this.errors.length;
    assert.deepEqual(this.errors, [], `${label}: the observer failed, so it may have missed changes`);
    const missing = [...expected].filter((n) => !this.seen.has(n));
    assert.deepEqual(missing, [], `${label}: the observer never saw a UUID on these objects`);
    assert.deepEqual(this.changed(), [], `${label}: a UUID changed`);
  }

  /** Stops observing; rejects when the observer met an error (see `errors`) that assertStable did not report. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#done;
    if (this.errors.length > this.#reported) {
      throw new Error(`the UUID observer of ${this.namespace} failed: ${this.errors.join(" | ")}`);
    }
  }
}
