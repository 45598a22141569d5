// A ClusterAccess whose credentials can be replaced in place, so a rotated token never re-engages its cluster.

import type { ClusterAccess, ClusterAuth } from "../../kube/mod.ts";

/**
 * Stands in for one registered cluster's current kubeconfig context.
 *
 * Guarantees: `name`, `server`, `namespace`, `namespaceScope` and `proxyUrl` never change (a change there is a re-engage, decided by the
 * registry); `auth()` always asks the newest access handed to `swap()`. KubeClient re-asks `auth()` at most every
 * second and rebuilds its transport only when the TLS material changed, so a new token or certificate reaches the
 * next request without a relist or a watch restart. Open watches keep their old credentials until they reconnect.
 */
export class SwappableAccess implements ClusterAccess {
  readonly name: string;
  readonly server: string;
  readonly namespace?: string;
  readonly namespaceScope?: string;
  readonly proxyUrl?: string;
  readonly tlsServerName?: string;
  #current: ClusterAccess;
  #swaps = 0;

  constructor(name: string, access: ClusterAccess) {
    this.name = name;
    this.server = access.server;
    this.namespace = access.namespace;
    this.namespaceScope = access.namespaceScope;
    this.proxyUrl = access.proxyUrl;
    this.tlsServerName = access.tlsServerName;
    this.#current = access;
  }

  get source(): string {
    return this.#current.source;
  }

  /** How many times credentials were replaced. */
  get swaps(): number {
    return this.#swaps;
  }

  auth(): Promise<ClusterAuth> {
    return this.#current.auth();
  }

  invalidate(): void {
    this.#current.invalidate?.();
  }

  /** Uses `next`'s credentials from the next request on. `next` must reach the same server. */
  swap(next: ClusterAccess): void {
    if (next.server !== this.server || next.proxyUrl !== this.proxyUrl || next.tlsServerName !== this.tlsServerName) {
      throw new TypeError(
        `cannot swap credentials of cluster "${this.name}": the server changed (${this.server} → ${next.server}); re-engage it`,
      );
    }
    this.#current = next;
    this.#swaps++;
  }
}
