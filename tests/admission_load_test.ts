// End-to-end: the admission port under a stranger's load, with the Website example's webhooks installed in prod,
// staging and dev (failurePolicy Ignore, so a webhook call that fails lets anything through). While 2,000 idle
// connections (1,000 that finish their TLS handshake, 1,000 that never say hello) and 500 slowloris heads try to hold
// the port, each reopened as soon as the hub closes it (dev/support/webhook_flood.ts), and the port is at its cap,
// `kubectl apply --dry-run=server` of a Website with `image: nginx:latest` is still refused with the operator's
// message in every cluster, and a valid one still gets its default: the apiservers' calls were answered within their
// timeout. (bench/tools/webhook_flood.ts waits for every one of the 2,500 to be opened first, and repeats the applies.) Then: requests naming clusters the
// hub does not serve, and requests with a wrong method, add no series to /metrics.
// deno-lint-ignore-file no-explicit-any -- JSON from the apiserver and the hub is checked by the test itself.

import assert from "node:assert/strict";
import { freePort, HubProcess, runHubCli } from "../dev/support/hub_process.ts";
import { WebhookFlood } from "../dev/support/webhook_flood.ts";
import { applySharedCrd, kubectl, kubectlOk, testNamespace } from "./support/mod.ts";

const CLUSTERS = ["prod", "staging", "dev"];
const CRD_FILE = new URL("../examples/website_crd.yaml", import.meta.url).pathname;
const KUBECONFIG = new URL("../clusters/local.yaml", import.meta.url).pathname;

function website(ns: string, name: string, spec: Record<string, string>): string {
  return JSON.stringify({
    apiVersion: "examples.operator-hub.dev/v1",
    kind: "Website",
    metadata: { name, namespace: ns },
    spec,
  });
}

/** A hub serving the Website example's webhooks for `clusters`, scoped to `ns`. */
function startHub(ns: string, port: number, hubName: string, clusters: string[]): HubProcess {
  return HubProcess.start({
    clusters,
    args: [
      "--namespace",
      ns,
      "--operators",
      "none",
      "--webhook-bind-address",
      `127.0.0.1:${port}`,
      "--webhook-name",
      hubName,
      "examples/website_operator.ts",
    ],
  });
}

async function ensureCrd(clusters: string[]): Promise<void> {
  await Promise.all(clusters.map(async (c) => {
    await applySharedCrd(c, CRD_FILE);
    await kubectlOk(c, ["wait", "--for=condition=Established", "crd/websites.examples.operator-hub.dev"]);
  }));
}

/** Waits for both configurations in every one of `clusters`, and returns the CA bundle they carry. */
async function installed(hub: HubProcess, clusters: string[], hubName: string): Promise<string> {
  await hub.waitStatus(
    (s: any) => clusters.every((c) => s.admission?.clusters?.[c]?.configurations === 2),
    60_000,
    "the webhook configurations in every cluster",
  );
  const cfg = JSON.parse(
    await kubectlOk(clusters[0], [
      "get",
      "validatingwebhookconfiguration",
      `operator-hub-website-${hubName}`,
      "-o",
      "json",
    ]),
  );
  return atob(cfg.webhooks[0].clientConfig.caBundle);
}

async function cleanup(ns: string, hubName: string, clusters: string[]): Promise<void> {
  await runHubCli([
    "cleanup",
    "--kubeconfig",
    KUBECONFIG,
    "--clusters",
    clusters.join(","),
    "--namespace",
    ns,
    "--webhook-name",
    hubName,
  ]);
}

/** The admission series in a /metrics text: one line per series. */
function webhookSeries(metrics: string): string[] {
  return metrics.split("\n").filter((l) => l.startsWith("controller_runtime_webhook_"));
}

Deno.test("Admission under 2,000 idle connections and 500 slowloris heads: :latest still refused and defaults still applied in prod, staging and dev", async () => {
  await ensureCrd(CLUSTERS);
  await using ns = await testNamespace("admission-load");
  const port = freePort();
  const hubName = ns.name.slice(-8);
  const hub = startHub(ns.name, port, hubName, CLUSTERS);
  let flood: WebhookFlood | undefined;
  try {
    const ca = await installed(hub, CLUSTERS, hubName);
    flood = new WebhookFlood({
      port,
      caCert: ca,
      tlsIdle: 1_000,
      tcpIdle: 1_000,
      slowloris: 500,
      maxOpens: 25_000,
      maxDurationMs: 20_000,
    });
    flood.start();
    // The port is at its cap: the hub closes the strangers' connections to make room, and they come back.
    await flood.until(
      (s) => s.opened >= 1_000 && s.closedByServer >= 500 && s.open >= 200,
      15_000,
      "the port held at its cap",
    );
    const results = await Promise.all(CLUSTERS.map(async (c) => {
      const bad = await kubectl(c, ["apply", "--dry-run=server", "-f", "-"], {
        stdin: website(ns.name, "bad", { image: "nginx:latest" }),
      });
      const good = await kubectl(c, ["apply", "--dry-run=server", "-o", "json", "-f", "-"], {
        stdin: website(ns.name, "good", { image: "nginx:1.27" }),
      });
      return { c, bad, good };
    }));
    const during = flood.stats;
    for (const { c, bad, good } of results) {
      assert.notEqual(bad.code, 0, `${c}: a :latest image must be refused under load (the webhook was answered)`);
      assert.match(bad.stderr, /denied the request: spec.image nginx:latest: pin a version instead of :latest/, c);
      assert.equal(good.code, 0, `${c}: ${good.stderr}`);
      assert.equal(JSON.parse(good.stdout).spec.content, "<h1>good</h1>", `${c}: the mutating webhook's default`);
    }
    await flood.stop();
    flood = undefined;
    assert.ok(during.open >= 100, `${during.open} strangers' connections were open during the applies`);
    const metrics = (await hub.get("/metrics")).text;
    assert.match(metrics, /hub_http_connections_shed_total\{port="webhook",reason="evicted"\} [1-9]/);
  } finally {
    await flood?.stop();
    await hub.stop();
    await cleanup(ns.name, hubName, CLUSTERS);
  }
});

Deno.test("Admission: requests naming clusters the hub does not serve get 404, a wrong method 405, and neither adds a series to /metrics", async () => {
  await ensureCrd(["prod"]);
  await using ns = await testNamespace("admission-series", { contexts: ["prod"] });
  const port = freePort();
  const hubName = ns.name.slice(-8);
  const hub = startHub(ns.name, port, hubName, ["prod"]);
  try {
    const ca = await installed(hub, ["prod"], hubName);
    // One real admission first, so prod's own series exist.
    await kubectlOk("prod", ["apply", "--dry-run=server", "-f", "-"], {
      stdin: website(ns.name, "seed", { image: "nginx:1.27" }),
    });
    const before = webhookSeries((await hub.get("/metrics")).text);
    const http = Deno.createHttpClient({ caCerts: [ca] });
    const codes: number[] = [];
    try {
      const review = JSON.stringify({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        request: { uid: "u", operation: "CREATE", object: { metadata: { name: "w", namespace: ns.name }, spec: {} } },
      });
      const base = `https://127.0.0.1:${port}/admission/website`;
      for (let i = 0; i < 200; i++) {
        const path = i % 4 === 3 ? `${base}/validating/image/prod` : `${base}/mutating/defaults/stranger-${i}`;
        const res = await fetch(path, {
          client: http,
          method: i % 4 === 3 ? "GET" : "POST",
          headers: { "content-type": "application/json" },
          ...(i % 4 === 3 ? {} : { body: review }),
        });
        codes.push(res.status);
        await res.body?.cancel();
      }
    } finally {
      http.close();
    }
    assert.deepEqual([...new Set(codes)].sort(), [404, 405]);
    const after = webhookSeries((await hub.get("/metrics")).text);
    assert.equal(after.length, before.length, `series: ${before.length} before, ${after.length} after`);
    assert.ok(!after.some((l) => l.includes("stranger-")), "no cluster name from a request");
    assert.ok(after.some((l) => /\{webhook="unknown",code="404",cluster="unknown"\} 150$/.test(l)), after.join("\n"));
    assert.ok(after.some((l) => /\{webhook="unknown",code="405",cluster="unknown"\} 50$/.test(l)), after.join("\n"));
  } finally {
    await hub.stop();
    await cleanup(ns.name, hubName, ["prod"]);
  }
});
