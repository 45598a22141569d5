// A shard group's Leases seen from outside: an independent watch that counts their writes, and deleting them.

import { ClusterApi, localEndpoint } from "../../dev/support/cluster_api.ts";
import { watchEvents } from "../../dev/support/watch_events.ts";
import { sleep } from "../lib/hub.ts";
import { log } from "../lib/run.ts";

/** The label that names a Lease's shard group. */
export const GROUP_LABEL = "shard.operator-hub.demo.operator/group";

/** Counts every write (ADDED, MODIFIED, DELETED) to one shard group's Leases, with when it was seen. */
export class LeaseWrites {
  readonly at: number[] = [];
  readonly #abort = new AbortController();
  readonly #done: Promise<void>;

  constructor(apiserver: string, namespace: string, group: string) {
    this.#done = this.#run(apiserver, namespace, group);
  }

  async #run(apiserver: string, namespace: string, group: string): Promise<void> {
    const ep = localEndpoint(apiserver);
    const client = Deno.createHttpClient({ caCerts: [ep.caPem] });
    const signal = this.#abort.signal;
    const base = `${ep.server}/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases?labelSelector=${
      encodeURIComponent(`${GROUP_LABEL}=${group}`)
    }`;
    const headers = { authorization: `Bearer ${ep.token}` };
    let rv = "";
    try {
      while (!signal.aborted) {
        try {
          if (!rv) {
            const list = await (await fetch(base, { client, headers, signal })).json();
            rv = list.metadata.resourceVersion;
          }
          const res = await fetch(`${base}&watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`, {
            client,
            headers,
            signal,
          });
          if (!res.ok || !res.body) throw new Error(`Lease watch: ${res.status}`);
          for await (const ev of watchEvents(res.body, signal)) {
            if (ev.type === "ERROR") throw new Error(`Lease watch: ${JSON.stringify(ev.object)}`);
            rv = ev.object?.metadata?.resourceVersion ?? rv;
            if (ev.type !== "BOOKMARK") this.at.push(performance.now());
          }
        } catch (err) {
          if (signal.aborted) break;
          // A 410 loses events in between; the count would be low, so say so.
          log(`shards: the Lease write counter restarts its watch: ${(err as Error).message}`);
          rv = "";
          await sleep(200);
        }
      }
    } finally {
      client.close();
    }
  }

  /** Writes seen in [from, to) (performance.now() times). */
  between(from: number, to: number): number {
    return this.at.filter((t) => t >= from && t < to).length;
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#done.catch(() => {});
  }
}

/** Deletes every Lease of shard group `group` in `namespace` of local cluster `apiserver`. */
export async function deleteGroupLeases(apiserver: string, namespace: string, group: string): Promise<void> {
  const api = new ClusterApi(localEndpoint(apiserver));
  try {
    await api.request(
      "DELETE",
      `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases?labelSelector=${
        encodeURIComponent(`${GROUP_LABEL}=${group}`)
      }`,
    );
  } finally {
    api.close();
  }
}
