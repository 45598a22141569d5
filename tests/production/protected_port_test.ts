// End-to-end: the protected port (401 / 403 / 200 through TokenReview + SubjectAccessReview in the home cluster) and
// probes that reveal nothing, against the real local apiservers, with one cluster down and one forbidden.

import assert from "node:assert/strict";
import { tempDir } from "../../dev/support/fault_cluster.ts";
import { kubeconfigText } from "../../dev/support/kubeconfig_text.ts";
import { localEndpoint } from "../../dev/support/cluster_api.ts";
import { FaultProxy } from "../../dev/support/fault_proxy.ts";
import { adminToken, apiserverUrl, KUBECONFIG_PATH, testNamespace } from "../support/mod.ts";
import { compilePermissions, mapPaths, MOUNT_DIR, SERVICE_ACCOUNT_DIR } from "./_support.ts";
import { metricSeries, metricSum, parseMetrics } from "../support/prometheus_text.ts";
import {
  curl,
  opensslPair,
  readerAccount,
  servedCommonName,
  startProtectedHub,
  waitProbe,
} from "./_protected_support.ts";

/**
 * The namespace the hubs without a test namespace watch in prod: one no test creates, so that they never write to
 * objects of test files running at the same time.
 */
const IDLE_NAMESPACE = "protected-port-idle";

Deno.test("The protected port answers 401 without a valid token, 403 to a ServiceAccount without the right, 200 to one bound to get /metrics and /status and to the local admin token, over HTTPS from files; the probes name only states, even with a cluster down and one forbidden", async () => {
  const ns = await testNamespace("protected", { contexts: ["prod"] });
  const dir = await tempDir("protected");
  const reader = await readerAccount("prod", ns.name, "reader", { metricsReader: true });
  const nobody = await readerAccount("prod", ns.name, "nobody", { metricsReader: false });
  const refused = FaultProxy.start({ targetPort: Number(new URL(apiserverUrl("prod")).port), mode: "refuse" });
  const prod = localEndpoint("prod");
  const readerToken = await reader.token();
  const nobodyToken = await nobody.token();
  const kubeconfig = await dir.write(
    "kubeconfig.yaml",
    kubeconfigText([
      { name: "down-c", server: refused.url, caPem: prod.caPem, user: { token: prod.token } },
      { name: "forbidden-c", server: prod.server, caPem: prod.caPem, user: { token: nobodyToken } },
    ]),
  );
  const pem = await opensslPair(dir.path, "serving", "operator-hub-test-files");
  const { hub, url } = startProtectedHub({
    clusters: ["prod", "down-c", "forbidden-c"],
    kubeconfigs: [KUBECONFIG_PATH, kubeconfig],
    args: [
      "--namespace",
      ns.name,
      "--request-timeout",
      "3",
      "--tls-cert-file",
      `${dir.path}/serving.crt`,
      "--tls-private-key-file",
      `${dir.path}/serving.key`,
    ],
  });
  try {
    // Probes: the right codes and states, from any client, and nothing else.
    const ready = await waitProbe(
      hub,
      (_, b) =>
        b?.clusters?.prod?.state === "watching" && b.clusters["down-c"]?.state === "unreachable" &&
        b.clusters["forbidden-c"]?.state === "forbidden",
      "prod watching, down-c unreachable, forbidden-c forbidden",
    );
    assert.equal(ready.status, 503);
    const healthz = await hub.get("/healthz");
    assert.equal(healthz.status, 200, "an unreachable or forbidden remote cluster does not fail liveness");
    const admin = adminToken("prod");
    const firstReview = Date.now();
    const full = await curl(`${url}/status`, admin);
    assert.equal(full.status, 200);
    const status = JSON.parse(full.body);
    assert.match(status.clusters["down-c"].lastError, /refused|cannot reach/i);
    assert.ok(status.clusters["forbidden-c"].missingPermissions.length > 0, "the full document names what is missing");
    const secrets = [
      refused.url,
      `:${new URL(refused.url).port}`,
      prod.server,
      "127.0.0.1",
      status.clusters["down-c"].lastError,
      status.clusters["forbidden-c"].lastError,
      ...status.clusters["forbidden-c"].missingPermissions,
      admin,
      nobodyToken,
      readerToken,
    ].filter(Boolean);
    for (const probe of [healthz, await hub.get("/readyz")]) {
      assert.deepEqual(Object.keys(probe.body).sort(), ["clusters", "notReady", "ready", "status", "summary"]);
      assert.deepEqual(probe.body.notReady.sort(), ["down-c", "forbidden-c"]);
      // The summary counts clusters by state, nothing per cluster.
      assert.deepEqual(Object.keys(probe.body.summary).sort(), ["clusters", "listed", "notReady", "omitted", "states"]);
      assert.deepEqual(probe.body.summary.states, { watching: 1, unreachable: 1, forbidden: 1 });
      for (const [name, entry] of Object.entries(probe.body.clusters as Record<string, Record<string, unknown>>)) {
        assert.deepEqual(
          Object.keys(entry).filter((k) => k !== "operators"),
          ["state"],
          `${name}: only a state (and operator states)`,
        );
        for (const v of Object.values((entry.operators ?? {}) as Record<string, unknown>)) {
          assert.equal(typeof v, "string", `${name}: operator entries are bare states`);
        }
      }
      for (const s of secrets) assert.ok(!probe.text.includes(s), `a probe body revealed ${s.slice(0, 40)}…`);
    }
    // The liveness port keeps just the probes.
    for (const path of ["/status", "/metrics"]) {
      assert.equal((await hub.get(path)).status, 404, `${path} on --liveness`);
    }

    // 401: no token, a made-up token; no detail in the body, and the page a browser gets holds no data.
    for (const path of ["/metrics", "/status"]) {
      assert.deepEqual(await curl(`${url}${path}`), { status: 401, body: "Unauthorized\n" }, path);
      assert.deepEqual(await curl(`${url}${path}`, "not-a-real-token"), { status: 401, body: "Unauthorized\n" }, path);
    }
    const page = await curl(`${url}/status`, undefined, ["-H", "Accept: text/html"]);
    assert.equal(page.status, 401);
    assert.match(page.body, /<!doctype html>/i);
    for (const name of ["down-c", "forbidden-c", status.clusters["down-c"].lastError, ns.name]) {
      assert.ok(!page.body.includes(name), name);
    }

    // 403: a real ServiceAccount token (TokenRequest) without get on the non-resource URL.
    for (const path of ["/metrics", "/status"]) {
      assert.deepEqual(await curl(`${url}${path}`, nobodyToken), { status: 403, body: "Forbidden\n" }, path);
    }
    // 200: bound to the metrics-reader rules; and the local clusters' admin token.
    const metrics = await curl(`${url}/metrics`, readerToken);
    assert.equal(metrics.status, 200);
    const m = parseMetrics(metrics.body);
    assert.equal(metricSum(m, "hub_cluster_state", { cluster: "prod", state: "watching" }), 1);
    assert.equal(metricSum(m, "hub_cluster_state", { cluster: "forbidden-c", state: "forbidden" }), 1);
    const readerStatus = await curl(`${url}/status`, readerToken);
    assert.equal(readerStatus.status, 200);
    assert.equal(JSON.parse(readerStatus.body).clusters["down-c"].state, "unreachable");
    assert.equal((await curl(`${url}/metrics`, admin)).status, 200);

    // HTTPS with the certificate from the files: verified against it, not only with -k; plain HTTP is not served.
    assert.equal(await servedCommonName("127.0.0.1", Number(new URL(url).port)), "operator-hub-test-files");
    const client = Deno.createHttpClient({ caCerts: [pem.ca] });
    try {
      const verified = await fetch(`${url}/metrics`, { client, headers: { authorization: `Bearer ${readerToken}` } });
      await verified.body?.cancel();
      assert.equal(verified.status, 200);
    } finally {
      client.close();
    }
    await assert.rejects(fetch(url.replace("https:", "http:") + "/metrics"), "plain HTTP on the HTTPS port");

    // Cached: a burst of scrapes with a token reviewed a moment ago sends no new TokenReview (one more at most
    // per minute elapsed, the cache's lifetime). The series must exist: a missing one would sum to 0 and pass.
    const reviews = async () => {
      const m = parseMetrics((await curl(`${url}/metrics`, admin)).body);
      const tokenReview = (result: string) =>
        metricSeries(m, "hub_access_reviews_total", { review: "TokenReview", result });
      return {
        allowed: tokenReview("allowed"),
        denied: tokenReview("denied"),
        hits: metricSeries(m, "hub_access_review_cache_hits_total", { review: "TokenReview" }),
      };
    };
    const before = await reviews();
    // Three tokens were accepted so far (admin, nobody, reader), each reviewed at least once and, cached, at most
    // once per minute since the first review; the made-up token was rejected at least once.
    const perToken = 1 + Math.floor((Date.now() - firstReview) / 60_000);
    assert.ok(
      before.allowed >= 3 && before.allowed <= 3 * perToken,
      `${before.allowed} accepted TokenReviews for 3 tokens (at most ${perToken} each)`,
    );
    assert.ok(before.denied >= 1, `${before.denied} rejected TokenReviews after a made-up token`);
    const started = Date.now();
    for (let i = 0; i < 10; i++) assert.equal((await curl(`${url}/metrics`, readerToken)).status, 200);
    const after = await reviews();
    const allowance = 1 + Math.floor((Date.now() - started) / 60_000);
    assert.ok(
      after.allowed - before.allowed <= allowance,
      `${after.allowed - before.allowed} TokenReviews for 10 cached scrapes (allowed ${allowance})`,
    );
    // The scrapes were answered from the cache: 10, plus the admin scrape that read the counters.
    assert.ok(
      after.hits - before.hits >= 11 - allowance,
      `${after.hits - before.hits} TokenReview cache hits for 11 scrapes with reviewed tokens`,
    );

    // Credentials never appear in logs.
    const logs = hub.logs.join("\n");
    for (const t of [admin, readerToken, nobodyToken]) assert.ok(!logs.includes(t), "a token reached the log");
    assert.equal((await hub.stop()).code, 0, hub.tail());
  } finally {
    await hub.kill();
    refused.close();
    await reader.cleanup();
    await nobody.cleanup();
    await dir.remove();
    await ns.cleanup();
  }
});

Deno.test("Without certificate files the protected port serves a self-signed certificate, and --metrics-secure=false serves the same checks over plain HTTP", async () => {
  const selfSigned = startProtectedHub({ clusters: ["prod"], args: ["--namespace", IDLE_NAMESPACE] });
  const plain = startProtectedHub({ clusters: ["prod"], secure: false, args: ["--namespace", IDLE_NAMESPACE] });
  const admin = adminToken("prod");
  try {
    for (const h of [selfSigned, plain]) await waitProbe(h.hub, (s) => s === 200, "ready");
    assert.equal(await servedCommonName("127.0.0.1", Number(new URL(selfSigned.url).port)), "operator-hub");
    await assert.rejects(fetch(`${selfSigned.url}/metrics`), "a self-signed certificate is not trusted by default");
    assert.equal((await curl(`${selfSigned.url}/metrics`, admin)).status, 200);
    assert.match(plain.url, /^http:/);
    assert.equal((await curl(`${plain.url}/metrics`)).status, 401);
    assert.equal((await curl(`${plain.url}/status`, "not-a-real-token")).status, 401);
    const ok = await curl(`${plain.url}/status`, admin);
    assert.equal(ok.status, 200);
    assert.equal(JSON.parse(ok.body).clusters.prod.state, "watching");
    assert.equal((await plain.hub.get("/metrics")).status, 404, "/metrics left the liveness port");
    for (const h of [selfSigned, plain]) assert.equal((await h.hub.stop()).code, 0, h.hub.tail());
  } finally {
    await selfSigned.hub.kill();
    await plain.hub.kill();
  }
});

Deno.test("Under exactly the compile task's permissions the protected port starts with a self-signed certificate and serves the admin token", async () => {
  const dir = await tempDir("protected-compiled");
  const prod = localEndpoint("prod");
  await Deno.mkdir(`${dir.path}/clusters`);
  const kubeconfig = await dir.write(
    "clusters/prod.yaml",
    kubeconfigText([{ name: "prod", server: prod.server, caPem: prod.caPem, user: { token: prod.token } }]),
  );
  const permissions = mapPaths(compilePermissions(), {
    [MOUNT_DIR]: `${dir.path}/clusters`,
    [SERVICE_ACCOUNT_DIR]: `${dir.path}/sa`,
  });
  const { hub, url } = startProtectedHub({
    clusters: ["prod"],
    kubeconfigs: [kubeconfig],
    permissions,
    args: ["--namespace", IDLE_NAMESPACE],
  });
  try {
    await waitProbe(hub, (s) => s === 200, "ready");
    assert.equal(await servedCommonName("127.0.0.1", Number(new URL(url).port)), "operator-hub");
    assert.equal((await curl(`${url}/metrics`)).status, 401);
    assert.equal((await curl(`${url}/metrics`, prod.token)).status, 200);
    assert.equal((await hub.stop()).code, 0, hub.tail());
  } finally {
    await hub.kill();
    await dir.remove();
  }
});
