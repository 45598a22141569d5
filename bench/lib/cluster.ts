// The benchmark's own minimal client for one local cluster: namespaces, fast creates, direct status
// writes (the ceiling), an independent watch that timestamps status Ok, and apiserver request counters.
// It shares no code with the hub's src/kube, so it measures the hub from the outside.

import { type ClusterEndpoint, localEndpoint } from "../../dev/support/cluster_api.ts";
import { watchLoop } from "./watch_loop.ts";

const GROUP_PATH = "/apis/demo.operator/v1";

/** An answer other than 2xx. */
export class BenchApiError extends Error {
  override name = "BenchApiError";
  readonly status: number;
  /** An earlier attempt of the same request failed on the connection and may have landed. */
  readonly retried: boolean;
  constructor(message: string, status: number, retried = false) {
    super(message);
    this.status = status;
    this.retried = retried;
  }
}

/**
 * How the bench creates objects: `plain` is a minimal POST; `kubectl` sends exactly what `kubectl apply` sends for an
 * object that does not exist yet (the last-applied-configuration annotation, `fieldManager=kubectl-client-side-apply`,
 * `fieldValidation=Strict`), so the apiserver stores the same annotation and managed-field entry.
 */
export type Creation = "plain" | "kubectl";

/** The body and query of one create in the given style. */
export function createRequest(ns: string, name: string, creation: Creation): { query: string; body: unknown } {
  if (creation === "plain") {
    return {
      query: "",
      body: { apiVersion: "demo.operator/v1", kind: "Uuid", metadata: { name, namespace: ns }, spec: {} },
    };
  }
  // No spec: the seed article's CRD has none in its schema, and kubectl's strict field validation would refuse it.
  const applied = { apiVersion: "demo.operator/v1", kind: "Uuid", metadata: { annotations: {}, name, namespace: ns } };
  return {
    query: "?fieldManager=kubectl-client-side-apply&fieldValidation=Strict",
    body: {
      apiVersion: "demo.operator/v1",
      kind: "Uuid",
      metadata: {
        annotations: { "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify(applied) + "\n" },
        name,
        namespace: ns,
      },
    },
  };
}

/** One created object, as the ceiling needs it for its status write. */
export interface Created {
  name: string;
  resourceVersion: string;
  /** performance.now() just before the create call. */
  createdAt: number;
}

/** An admin client for one cluster, over one Deno.HttpClient (HTTP/2 when the apiserver offers it). */
export class BenchCluster {
  readonly name: string;
  readonly ep: ClusterEndpoint;
  readonly http: Deno.HttpClient;
  readonly #auth: string;
  statusSubresource = true;
  /** Requests repeated after a connection failure; non-zero means the run was disturbed. */
  connectionRetries = 0;
  /** Requests in flight, for debugging stalls. */
  readonly pending = new Map<string, number>();
  /** Status writes of the ceiling that met a conflict: some other process wrote the object. */
  conflicts = 0;

  constructor(context: string) {
    this.name = context;
    this.ep = localEndpoint(context);
    this.http = Deno.createHttpClient({ caCerts: [this.ep.caPem] });
    this.#auth = `Bearer ${this.ep.token}`;
  }

  /**
   * One request. Connection failures (an apiserver restarted by a fault test running at the same
   * time) are retried for up to ~15 s; `retried` tells the caller's 409 handling that an earlier
   * attempt may have landed.
   */
  // deno-lint-ignore no-explicit-any
  async request<T = any>(method: string, path: string, body?: unknown, contentType = "application/json"): Promise<T> {
    for (let attempt = 0;; attempt++) {
      let res: Response;
      let text: string;
      const tag = `${method} ${path} #${attempt}`;
      this.pending.set(tag, performance.now());
      try {
        res = await fetch(this.ep.server + path, {
          method,
          client: this.http,
          headers: { authorization: this.#auth, "content-type": contentType, accept: "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(method === "DELETE" ? 120_000 : 30_000),
        });
        text = await res.text();
      } catch (err) {
        if (Deno.env.get("BENCH_DEBUG")) console.error(`${this.name}: ${tag}: ${err}`);
        if (attempt >= 60) throw err;
        this.connectionRetries++;
        await new Promise((r) => setTimeout(r, 250));
        continue;
      } finally {
        this.pending.delete(tag);
      }
      if (!res.ok) {
        throw new BenchApiError(
          `${this.name}: ${method} ${path}: ${res.status} ${text.slice(0, 200)}`,
          res.status,
          attempt > 0,
        );
      }
      return (text ? JSON.parse(text) : undefined) as T;
    }
  }

  /** Reads discovery to learn whether the Uuid CRD has a status subresource (like the hub does). */
  async detect(): Promise<void> {
    const list = await this.request<{ resources?: { name: string }[] }>("GET", GROUP_PATH);
    const names = new Set((list.resources ?? []).map((r) => r.name));
    if (!names.has("uuid")) throw new Error(`${this.name}: the Uuid CRD is not installed`);
    this.statusSubresource = names.has("uuid/status");
  }

  async createNamespace(ns: string): Promise<void> {
    await this.request("POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: ns, labels: { "operator-hub.bench/ephemeral": "true" } },
    });
  }

  /**
   * Deletes every Uuid of `ns` (one deletecollection, faster than the namespace controller's own pass),
   * then the namespace itself, without waiting for the namespace controller to remove it.
   */
  async cleanupNamespace(ns: string): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await this.request("DELETE", `${GROUP_PATH}/namespaces/${ns}/uuid`);
        const left = await this.request<{ items: unknown[] }>("GET", `${GROUP_PATH}/namespaces/${ns}/uuid?limit=1`);
        if (left.items.length === 0) break;
      } catch (err) {
        if (attempt === 4) throw err;
      }
    }
    await this.request("DELETE", `/api/v1/namespaces/${ns}`).catch(() => {});
  }

  /** Creates one Uuid (minimally, or the way kubectl apply does) and returns its resourceVersion. */
  async create(ns: string, name: string, creation: Creation = "plain"): Promise<string> {
    try {
      const { query, body } = createRequest(ns, name, creation);
      const obj = await this.request<{ metadata: { resourceVersion: string } }>(
        "POST",
        `${GROUP_PATH}/namespaces/${ns}/uuid${query}`,
        body,
      );
      return obj.metadata.resourceVersion;
    } catch (err) {
      if (!(err instanceof BenchApiError && err.status === 409 && err.retried)) throw err;
      const obj = await this.request("GET", `${GROUP_PATH}/namespaces/${ns}/uuid/${name}`);
      return obj.metadata.resourceVersion;
    }
  }

  /** Creates `names` with `concurrency` requests in flight; calls `onCreated` as each one lands. */
  async createMany(
    ns: string,
    names: string[],
    concurrency: number,
    onCreated?: (c: Created) => void,
    creation: Creation = "plain",
  ): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < names.length) {
        const name = names[next++];
        const createdAt = performance.now();
        const resourceVersion = await this.create(ns, name, creation);
        onCreated?.({ name, resourceVersion, createdAt });
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  }

  /** The ceiling's one write: the same merge patch the hub sends, optimistic on resourceVersion. */
  async writeStatus(ns: string, name: string, resourceVersion: string, status: Record<string, unknown>): Promise<void> {
    const sub = this.statusSubresource ? "/status" : "";
    try {
      await this.request(
        "PATCH",
        `${GROUP_PATH}/namespaces/${ns}/uuid/${name}${sub}`,
        { metadata: { resourceVersion }, status },
        "application/merge-patch+json",
      );
    } catch (err) {
      if (!(err instanceof BenchApiError && err.status === 409)) throw err;
      // After a lost connection the first attempt landed; otherwise somebody else wrote the object.
      if (!err.retried) this.conflicts++;
    }
  }

  /** Every Uuid of `ns` (paged by 500) with its resourceVersion, for the ceiling's drain of a backlog. */
  async listNames(ns: string): Promise<Created[]> {
    const out: Created[] = [];
    let cont = "";
    do {
      const page = await this.request(
        "GET",
        `${GROUP_PATH}/namespaces/${ns}/uuid?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ""}`,
      );
      const now = performance.now();
      for (const o of page.items) {
        out.push({ name: o.metadata.name, resourceVersion: o.metadata.resourceVersion, createdAt: now });
      }
      cont = page.metadata?.continue ?? "";
    } while (cont);
    return out;
  }

  /** The apiserver's own counters (apiserver_request_total) for the uuid resource: writes and all requests. */
  async requestCounters(): Promise<{ writes: number; writesOk: number; all: number }> {
    const res = await fetch(this.ep.server + "/metrics", {
      client: this.http,
      headers: { authorization: this.#auth },
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${this.name}: GET /metrics: ${res.status}`);
    let writes = 0, writesOk = 0, all = 0;
    for (const line of text.split("\n")) {
      if (!line.startsWith("apiserver_request_total{") || !line.includes('resource="uuid"')) continue;
      const v = Number(line.slice(line.lastIndexOf(" ") + 1));
      all += v;
      if (/verb="(PATCH|PUT|APPLY)"/.test(line)) {
        writes += v;
        if (/code="2\d\d"/.test(line)) writesOk += v;
      }
    }
    return { writes, writesOk, all };
  }

  /** Starts an independent watch of `ns` that records when each object first shows status.state Ok. */
  async watchOk(ns: string): Promise<OkWatch> {
    const list = await this.request<{ metadata: { resourceVersion: string } }>(
      "GET",
      `${GROUP_PATH}/namespaces/${ns}/uuid?limit=1`,
    );
    const w = new OkWatch(this, ns, list.metadata.resourceVersion);
    await w.opened;
    return w;
  }

  close(): void {
    this.http.close();
  }
}

/**
 * Times status Ok per object from a watch that starts at a known resourceVersion, so no event is
 * missed. Only lines that carry `"state":"Ok"` are parsed, to keep the observer cheap.
 */
export class OkWatch {
  /** name → performance.now() when Ok was first seen. */
  readonly seen = new Map<string, number>();
  /** Times the stream broke and was resumed; non-zero means the run was disturbed. */
  reconnects = 0;
  readonly opened: Promise<void>;
  readonly done: Promise<void>;
  readonly #abort = new AbortController();
  #waiters: { count: number; resolve: () => void }[] = [];
  #nameWaiters = new Map<string, () => void>();
  #error: unknown;

  constructor(c: BenchCluster, ns: string, resourceVersion: string) {
    let opened!: () => void;
    let failed!: (err: unknown) => void;
    this.opened = new Promise((res, rej) => {
      opened = res;
      failed = rej;
    });
    this.done = this.#run(c, ns, resourceVersion, opened).catch((err) => {
      failed(err);
      if (!this.#abort.signal.aborted) this.#error = err;
    });
  }

  async #run(c: BenchCluster, ns: string, rv: string, opened: () => void): Promise<void> {
    for (let attempt = 0;; attempt++) {
      try {
        await this.#stream(c, ns, rv, opened);
        if (this.#abort.signal.aborted) return;
      } catch (err) {
        if (this.#abort.signal.aborted) return;
        if (attempt >= 30) throw err;
      }
      // The stream broke (an apiserver restarted under us): catch up with a list, then watch again.
      this.reconnects++;
      await new Promise((r) => setTimeout(r, 300));
      try {
        rv = await this.#catchUp(c, ns);
      } catch {
        // Try again after the next pause.
      }
    }
  }

  async #catchUp(c: BenchCluster, ns: string): Promise<string> {
    let cont = "";
    let rv = "";
    do {
      const page = await c.request(
        "GET",
        `${GROUP_PATH}/namespaces/${ns}/uuid?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ""}`,
      );
      const now = performance.now();
      for (const o of page.items) if (o.status?.state === "Ok") this.#mark(o.metadata.name, now);
      cont = page.metadata?.continue ?? "";
      rv = page.metadata.resourceVersion;
    } while (cont);
    this.#wake();
    return rv;
  }

  #mark(name: string, now: number): void {
    if (this.seen.has(name)) return;
    this.seen.set(name, now);
    this.#nameWaiters.get(name)?.();
    this.#nameWaiters.delete(name);
  }

  #wake(): void {
    if (this.#waiters.length === 0) return;
    const ready = this.#waiters.filter((w) => this.seen.size >= w.count);
    this.#waiters = this.#waiters.filter((w) => this.seen.size < w.count);
    for (const w of ready) w.resolve();
  }

  #stream(c: BenchCluster, ns: string, rv: string, opened: () => void): Promise<void> {
    const path = `${GROUP_PATH}/namespaces/${ns}/uuid?watch=true&resourceVersion=${rv}&timeoutSeconds=1800`;
    return watchLoop(c, path, `${c.name}: watch ${ns}`, this.#abort.signal, {
      opened,
      line: (line, now) => {
        if (!line.includes('"state":"Ok"')) return;
        const ev = JSON.parse(line);
        if (ev.type === "DELETED" || ev.object?.status?.state !== "Ok") return;
        this.#mark(ev.object.metadata.name as string, now);
      },
      chunk: () => this.#wake(),
    });
  }

  /** Resolves once `count` objects were seen Ok, or rejects after `timeoutMs`. */
  waitCount(count: number, timeoutMs: number): Promise<void> {
    if (this.seen.size >= count) return Promise.resolve();
    return withTimeout(
      new Promise<void>((resolve) => this.#waiters.push({ count, resolve })),
      timeoutMs,
      () => `only ${this.seen.size} of ${count} objects reached status Ok${this.#error ? ` (${this.#error})` : ""}`,
    );
  }

  /** Resolves with the time `name` was seen Ok. */
  async waitName(name: string, timeoutMs: number): Promise<number> {
    if (!this.seen.has(name)) {
      await withTimeout(
        new Promise<void>((resolve) => this.#nameWaiters.set(name, resolve)),
        timeoutMs,
        () => `${name} did not reach status Ok`,
      );
    }
    return this.seen.get(name)!;
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.done;
  }
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what()}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
