// Tests of the per-cluster API budget against the real local apiserver (context prod); the budget runs on virtual time.
import assert from "node:assert/strict";
import { localKubeClient } from "../../../dev/support/local_client.ts";
import { TokenBucket } from "../../queue/mod.ts";
import type { ApiClient } from "../../runtime/mod.ts";
import { flushMicrotasks, VirtualClock } from "../../util/mod.ts";
import { budgeted } from "./_budgeted_api.ts";

Deno.test("budgeted() sends a request only once the cluster's budget grants its token", async () => {
  const client = await localKubeClient("prod");
  try {
    const sent: string[] = [];
    const counting: ApiClient = {
      request: (method, path, options) => {
        sent.push(`${method} ${path}`);
        return client.request(method, path, options);
      },
    };
    const clock = new VirtualClock(0);
    const api = budgeted(counting, new TokenBucket(1, 1, { clock }));
    const first = await api.request<{ gitVersion?: string }>("GET", "/version");
    assert.match(first.gitVersion ?? "", /^v1\./);
    const second = api.request<{ gitVersion?: string }>("GET", "/version");
    await flushMicrotasks();
    assert.deepEqual(sent, ["GET /version"], "the second request waits for the next token");
    await clock.advance(1000);
    assert.deepEqual(sent, ["GET /version", "GET /version"]);
    assert.match((await second).gitVersion ?? "", /^v1\./);
  } finally {
    client.close();
  }
});

Deno.test("budgeted() hands a request whose signal aborted while it waited to the client, which fails it", async () => {
  const client = await localKubeClient("prod");
  try {
    const clock = new VirtualClock(0);
    const bucket = new TokenBucket(1, 1, { clock });
    const api = budgeted(client, bucket);
    await api.request("GET", "/version");
    const stop = new AbortController();
    const waiting = api.request("GET", "/version", { signal: stop.signal });
    stop.abort();
    await assert.rejects(waiting);
    assert.equal(bucket.available(), 0, "the aborted wait gave its token back");
  } finally {
    client.close();
  }
});
