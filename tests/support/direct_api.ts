// A minimal direct client for tests: reads clusters/local.yaml and talks to the real apiservers as admin.
// deno-lint-ignore-file no-explicit-any -- JSON from the apiserver and the hub is checked by the tests themselves.

import YAML from "yaml";
import { listAllUuids, uuidsByName } from "./cluster_api.ts";
import { watchEvents } from "./watch_events.ts";

const root = new URL("../..", import.meta.url).pathname;
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export interface ClusterEndpoint {
  name: string;
  server: string;
  token: string;
  ca: string;
}

/** Reads one context of clusters/local.yaml; throws loudly when the clusters are not up. */
export function endpoint(context: string, file = `${root}clusters/local.yaml`): ClusterEndpoint {
  let doc: any;
  try {
    doc = YAML.parse(Deno.readTextFileSync(file));
  } catch (err) {
    throw new Error(
      `cannot read ${file}: the local clusters are not running; start them with \`deno task clusters:up\``,
      {
        cause: err,
      },
    );
  }
  const ctx = doc.contexts?.find((c: any) => c.name === context)?.context;
  if (!ctx) throw new Error(`no context ${context} in ${file}`);
  const cluster = doc.clusters.find((c: any) => c.name === ctx.cluster).cluster;
  const user = doc.users.find((u: any) => u.name === ctx.user).user;
  return {
    name: context,
    server: cluster.server,
    token: user.token,
    ca: new TextDecoder().decode(Uint8Array.from(atob(cluster["certificate-authority-data"]), (c) => c.charCodeAt(0))),
  };
}

/** An admin HTTP client for one cluster. Call close() when done. */
export class DirectApi {
  readonly ep: ClusterEndpoint;
  readonly #http: Deno.HttpClient;

  constructor(context: string) {
    this.ep = endpoint(context);
    this.#http = Deno.createHttpClient({ caCerts: [this.ep.ca] });
  }

  async request<T = any>(method: string, path: string, body?: unknown, contentType = "application/json"): Promise<T> {
    const res = await fetch(this.ep.server + path, {
      method,
      client: this.#http,
      headers: { authorization: `Bearer ${this.ep.token}`, "content-type": contentType, accept: "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) {
      throw Object.assign(new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`), { status: res.status });
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Creates Uuid objects with bounded concurrency; returns their names. */
  async createUuids(namespace: string, names: string[], concurrency = 16): Promise<string[]> {
    let next = 0;
    const worker = async () => {
      while (next < names.length) {
        const name = names[next++];
        await this.request("POST", `/apis/demo.operator/v1/namespaces/${namespace}/uuid`, {
          apiVersion: "demo.operator/v1",
          kind: "Uuid",
          metadata: { name, namespace },
          spec: {},
        });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return names;
  }

  /** Lists the Uuids of a namespace (all pages). */
  listUuids(namespace: string): Promise<any[]> {
    return listAllUuids((path) => this.request("GET", path), namespace);
  }

  /** Map of name → status.uuid (undefined when none yet). */
  async uuidsOf(namespace: string): Promise<Map<string, unknown>> {
    return uuidsByName(await this.listUuids(namespace));
  }

  /** Deletes every Uuid of a namespace in one request (deletecollection). */
  async deleteAllUuids(namespace: string): Promise<void> {
    await this.request("DELETE", `/apis/demo.operator/v1/namespaces/${namespace}/uuid`);
  }

  /**
   * Watches a namespace's Uuids from now on, recording every distinct status.uuid each object ever
   * showed. An independent observer: it shares no code with the hub.
   */
  watchUuids(namespace: string): UuidHistory {
    return new UuidHistory(this.ep, this.#http, namespace);
  }

  /** Sum of apiserver_request_total for writes (PATCH/PUT) to the uuid resource; `okOnly` counts 2xx only. */
  async uuidWrites(okOnly = false): Promise<number> {
    const res = await fetch(this.ep.server + "/metrics", {
      client: this.#http,
      headers: { authorization: `Bearer ${this.ep.token}` },
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`GET /metrics: ${res.status}`);
    let sum = 0;
    for (const line of String(text).split("\n")) {
      if (!line.startsWith("apiserver_request_total{")) continue;
      if (!line.includes('resource="uuid"') || !/verb="(PATCH|PUT|APPLY)"/.test(line)) continue;
      if (okOnly && !/code="2\d\d"/.test(line)) continue;
      sum += Number(line.slice(line.lastIndexOf(" ") + 1));
    }
    return sum;
  }

  close(): void {
    this.#http.close();
  }
}

/** Polls `fn` until it returns a truthy value. */
export async function waitFor<T>(
  fn: () => Promise<T | undefined | null | false>,
  what: string,
  timeoutMs = 60_000,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${String(last)}`);
}

/** Every status.uuid value each object showed, as seen by an independent watch. */
export class UuidHistory {
  readonly seen = new Map<string, Set<string>>();
  /** Objects that showed a status with some but not all of uuid, state and message. */
  readonly partial: string[] = [];
  readonly #abort = new AbortController();
  readonly #done: Promise<void>;

  constructor(ep: ClusterEndpoint, http: Deno.HttpClient, namespace: string) {
    this.#done = this.#run(ep, http, namespace).catch((err) => {
      if (!this.#abort.signal.aborted) throw err;
    });
  }

  async #run(ep: ClusterEndpoint, http: Deno.HttpClient, namespace: string): Promise<void> {
    const res = await fetch(`${ep.server}/apis/demo.operator/v1/namespaces/${namespace}/uuid?watch=1`, {
      client: http,
      headers: { authorization: `Bearer ${ep.token}` },
      signal: this.#abort.signal,
    });
    if (!res.ok || !res.body) throw new Error(`watch for UuidHistory: ${res.status}`);
    for await (const ev of watchEvents(res.body, this.#abort.signal)) {
      const o = ev.object;
      if (ev.type === "ERROR" || !o?.metadata) continue;
      const st = o.status;
      const name = o.metadata.name;
      if (st && (st.uuid !== undefined || st.state !== undefined)) {
        const complete = typeof st.uuid === "string" && typeof st.state === "string" &&
          typeof st.message === "string";
        if (!complete) this.partial.push(`${name}: ${JSON.stringify(st)}`);
      }
      if (typeof st?.uuid === "string" && st.uuid) {
        let set = this.seen.get(name);
        if (!set) this.seen.set(name, set = new Set());
        set.add(st.uuid);
      }
    }
  }

  /** Names of objects that showed more than one UUID. */
  changed(): string[] {
    return [...this.seen].filter(([, s]) => s.size > 1).map(([n, s]) => `${n}: ${[...s].join(" -> ")}`);
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#done;
  }
}
