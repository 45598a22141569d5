// Tests of main()'s serving step over real HTTP on loopback, on a hub built but never started (no cluster contacted).

import assert from "node:assert/strict";
import { freePort } from "../../../dev/support/hub_process.ts";
import { Logger, silentLogger } from "../../util/mod.ts";
import { selectClusters } from "./cluster_selection.ts";
import { parseFlags } from "../flags/parse_flags.ts";
import { assembleHub } from "./hub_assembly.ts";
import { startServers } from "./servers.ts";
import { UsageError } from "../usage_error.ts";

/** A hub on one made-up cluster, from the flags `extra` adds; a fresh kubeconfig file removed by the caller. */
async function hubWith(extra: string[]) {
  const file = Deno.makeTempFileSync({ prefix: "servers-", suffix: ".yaml" });
  Deno.writeTextFileSync(
    file,
    "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n" +
      "users:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: one\n  context:\n    cluster: c\n    user: u\n",
  );
  const flags = parseFlags(["--kubeconfig", file, "--clusters", "one", "--operators", "uuid", ...extra]);
  const clusters = await selectClusters(flags, silentLogger());
  const { hub, hosted } = await assembleHub(flags, clusters, { embedded: [], files: [] }, silentLogger());
  return { file, flags, clusters, hub, hosted };
}

Deno.test("startServers() serves the probes and /status on --liveness until the signal aborts", async () => {
  const port = freePort();
  const { file, flags, clusters, hub, hosted } = await hubWith(["--liveness", `http://127.0.0.1:${port}/healthz`]);
  const stop = new AbortController();
  try {
    const lines: string[] = [];
    const logger = new Logger({ level: "info", format: "json", write: (l) => lines.push(l) });
    const servers = await startServers(flags, hub, { home: clusters.home, hosted, logger, signal: stop.signal });
    assert.equal(servers.admission, undefined);
    const healthz = await fetch(`http://127.0.0.1:${port}/healthz`);
    const body = await healthz.json();
    // Not started: nothing engaged yet, so alive but not ready.
    assert.equal(healthz.status, 200);
    assert.deepEqual(body, {
      status: "ok",
      ready: false,
      notReady: [],
      clusters: {},
      summary: { clusters: 0, listed: 0, omitted: 0, states: {}, notReady: 0 },
    });
    const status = await fetch(`http://127.0.0.1:${port}/status`);
    assert.equal(status.status, 200);
    await status.body?.cancel();
    assert.ok(lines.some((l) => JSON.parse(l).msg === "health endpoint listening"), lines.join("\n"));
    stop.abort();
    await servers.done;
  } finally {
    stop.abort();
    Deno.removeSync(file);
  }
});

Deno.test("startServers() answers a --liveness port it cannot listen on with one UsageError line", async () => {
  using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (taken.addr as Deno.NetAddr).port;
  const { file, flags, clusters, hub, hosted } = await hubWith(["--liveness", `http://127.0.0.1:${port}/healthz`]);
  const stop = new AbortController();
  try {
    await assert.rejects(
      startServers(flags, hub, { home: clusters.home, hosted, logger: silentLogger(), signal: stop.signal }),
      (err: Error) => {
        assert.ok(err instanceof UsageError, String(err));
        assert.match(err.message, new RegExp(`^invalid --liveness: cannot listen on 127\\.0\\.0\\.1:${port}: `));
        assert.ok(!err.message.includes("\n"));
        return true;
      },
    );
  } finally {
    stop.abort();
    Deno.removeSync(file);
  }
});
