// Unit tests for the ClusterAccess whose credentials are replaced in place when a registered cluster's token rotates.
import assert from "node:assert/strict";
import type { ClusterAccess, ClusterAuth } from "../../kube/mod.ts";
import { SwappableAccess } from "./swappable_access.ts";

function access(token: string, over: Partial<ClusterAccess> = {}): ClusterAccess & { invalidations: number } {
  return {
    name: "ctx",
    server: "https://10.0.0.1:6443",
    source: `/clusters/${token}.yaml`,
    namespace: "apps",
    namespaceScope: "apps",
    invalidations: 0,
    auth: (): Promise<ClusterAuth> =>
      Promise.resolve({ headers: { Authorization: `Bearer ${token}` }, insecureSkipTlsVerify: false }),
    invalidate() {
      this.invalidations++;
    },
    ...over,
  };
}

Deno.test("SwappableAccess answers auth() with the newest credentials after swap(), and counts the swaps", async () => {
  const a = new SwappableAccess("prod", access("old"));
  assert.equal((await a.auth()).headers.Authorization, "Bearer old");
  assert.equal(a.swaps, 0);
  a.swap(access("new"));
  assert.equal((await a.auth()).headers.Authorization, "Bearer new");
  assert.equal(a.source, "/clusters/new.yaml");
  assert.equal(a.swaps, 1);
});

Deno.test("SwappableAccess keeps its name, server, namespace and scope from the first access", () => {
  const a = new SwappableAccess("prod", access("old"));
  a.swap(access("new", { namespace: "other", namespaceScope: "other" }));
  assert.deepEqual([a.name, a.server, a.namespace, a.namespaceScope], [
    "prod",
    "https://10.0.0.1:6443",
    "apps",
    "apps",
  ]);
});

Deno.test("SwappableAccess refuses a swap to another server or proxy, naming both servers, and keeps the old credentials", async () => {
  const a = new SwappableAccess("prod", access("old"));
  assert.throws(
    () => a.swap(access("new", { server: "https://10.0.0.2:6443" })),
    (err: Error) =>
      err instanceof TypeError &&
      err.message ===
        'cannot swap credentials of cluster "prod": the server changed (https://10.0.0.1:6443 → https://10.0.0.2:6443); re-engage it',
  );
  assert.throws(() => a.swap(access("new", { proxyUrl: "http://proxy:3128" })), TypeError);
  assert.equal((await a.auth()).headers.Authorization, "Bearer old");
  assert.equal(a.swaps, 0);
});

Deno.test("SwappableAccess.invalidate() reaches the current access only", () => {
  const first = access("old");
  const second = access("new");
  const a = new SwappableAccess("prod", first);
  a.swap(second);
  a.invalidate();
  assert.deepEqual([first.invalidations, second.invalidations], [0, 1]);
  new SwappableAccess("x", access("t", { invalidate: undefined })).invalidate(); // an access without it is fine
});
