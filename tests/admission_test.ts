// End-to-end: admission webhooks on prod, staging and dev, whose apiservers call the hub over real HTTPS. The Website
// example's validate and mutate handlers and a Fail-policy fixture (tests/fixtures/admission_strict_operator.ts), all
// scoped to this file's namespace (the configurations' namespaceSelector follows --namespace): refusals with the
// handler's message, a default filled in, a warning on kubectl's stderr, the configurations with a CA bundle that
// verifies the hub, repaired after a delete and an edit, failurePolicy across a restart, removed by `cleanup`; then a
// 12 s serving certificate renewed every 8 s under `kubectl apply --dry-run=server` with no failed admission.
// deno-lint-ignore-file no-explicit-any -- JSON from the apiserver and the hub is checked by the test itself.

import assert from "node:assert/strict";
import { freePort, HubProcess, runHubCli } from "../dev/support/hub_process.ts";
import { applySharedCrd, kubectl, kubectlOk, testNamespace } from "./support/mod.ts";
import { waitFor } from "../dev/support/cluster_api.ts";

const CLUSTERS = ["prod", "staging", "dev"];
const CRD_FILE = new URL("../examples/website_crd.yaml", import.meta.url).pathname;
const FILES = ["examples/website_operator.ts", "tests/fixtures/admission_strict_operator.ts"];
const KUBECONFIG = new URL("../clusters/local.yaml", import.meta.url).pathname;

function website(ns: string, name: string, spec: Record<string, string>, labels: Record<string, string> = {}): string {
  return JSON.stringify({
    apiVersion: "examples.operator-hub.dev/v1",
    kind: "Website",
    metadata: { name, namespace: ns, labels },
    spec,
  });
}

const apply = (c: string, body: string, ...extra: string[]) =>
  kubectl(c, ["apply", ...extra, "-f", "-"], { stdin: body });

async function configuration(c: string, kind: string, name: string): Promise<any | undefined> {
  const r = await kubectl(c, ["get", kind, name, "-o", "json"]);
  return r.code === 0 ? JSON.parse(r.stdout) : undefined;
}

function startHub(ns: string, port: number, hubName: string, extra: string[] = []): HubProcess {
  return HubProcess.start({
    clusters: CLUSTERS,
    args: [
      "--namespace",
      ns,
      "--operators",
      "none",
      "--webhook-bind-address",
      `127.0.0.1:${port}`,
      "--webhook-name",
      hubName,
      ...extra,
      ...FILES,
    ],
  });
}

/** Every cluster's configurations in place (3: the Website's two and the fixture's one), synced after `since`. */
function installed(since = "") {
  return (s: any) =>
    CLUSTERS.every((c) => {
      const a = s.admission?.clusters?.[c];
      return a?.configurations === 3 && a.lastError === null && (a.lastSyncAt ?? "") > since;
    });
}

async function ensureCrd(): Promise<void> {
  await Promise.all(CLUSTERS.map(async (c) => {
    await applySharedCrd(c, CRD_FILE);
    await kubectlOk(c, ["wait", "--for=condition=Established", "crd/websites.examples.operator-hub.dev"]);
  }));
}

Deno.test("Admission on prod, staging and dev: refused with the handler's message, defaulted, warned; configurations with the right CA bundle, repaired, kept by failurePolicy across a restart, removed by cleanup", async () => {
  await ensureCrd();
  await using ns = await testNamespace("admission");
  const port = freePort();
  const hubName = ns.name.slice(-8);
  const vName = `operator-hub-website-${hubName}`;
  let hub = startHub(ns.name, port, hubName);
  try {
    const status = await hub.waitStatus(installed(), 60_000, "the configurations in every cluster");
    assert.deepEqual(status.admission.webhooks.sort(), [
      "website-strict/validating/content",
      "website/mutating/defaults",
      "website/validating/image",
    ]);
    await Promise.all(CLUSTERS.map(async (c) => {
      // A bad field is refused with the handler's message.
      const bad = await apply(c, website(ns.name, "bad", { image: "web:latest" }));
      assert.notEqual(bad.code, 0, `${c}: a :latest image must be refused`);
      assert.match(bad.stderr, /denied the request: spec.image web:latest: pin a version instead of :latest/, c);
      // A warning is shown, a default filled in.
      const warned = await apply(c, website(ns.name, "plain", { image: "web" }));
      assert.equal(warned.code, 0, warned.stderr);
      assert.match(warned.stderr, /Warning: spec.image web has no tag: pin a version/, c);
      const stored = JSON.parse(await kubectlOk(c, ["get", "website", "plain", "-n", ns.name, "-o", "json"]));
      assert.equal(stored.spec.content, "<h1>plain</h1>", `${c}: the mutating handler's default`);
      // The configuration's CA bundle verifies the hub's serving certificate (an HTTPS call trusting only it).
      const cfg = await configuration(c, "validatingwebhookconfiguration", vName);
      const hook = cfg.webhooks[0];
      assert.equal(hook.failurePolicy, "Ignore");
      assert.equal(hook.clientConfig.url, `https://127.0.0.1:${port}/admission/website/validating/image/${c}`);
      assert.deepEqual(hook.namespaceSelector.matchExpressions[0].values, [ns.name]);
      const http = Deno.createHttpClient({ caCerts: [atob(hook.clientConfig.caBundle)] });
      try {
        const res = await fetch(hook.clientConfig.url, { client: http, method: "GET" });
        assert.equal(res.status, 405, "TLS verified with the bundle; only POST is served");
        await res.body?.cancel();
      } finally {
        http.close();
      }
    }));
    // Each cluster's calls are counted under its name.
    const metrics = (await hub.get("/metrics")).text;
    for (const c of CLUSTERS) {
      assert.match(
        metrics,
        new RegExp(
          `controller_runtime_webhook_requests_total\\{webhook="website/validating/image",code="200",cluster="${c}"\\} [1-9]`,
        ),
      );
      assert.match(
        metrics,
        new RegExp(
          `controller_runtime_webhook_latency_seconds_count\\{webhook="website/mutating/defaults",cluster="${c}"\\} [1-9]`,
        ),
      );
    }

    // Drift: a configuration deleted by hand, and one edited by hand, come back.
    await kubectlOk("dev", ["delete", "validatingwebhookconfiguration", vName]);
    await kubectlOk("staging", [
      "patch",
      "mutatingwebhookconfiguration",
      vName,
      "--type=json",
      "-p",
      '[{"op":"replace","path":"/webhooks/0/timeoutSeconds","value":29}]',
    ]);
    await waitFor(() => configuration("dev", "validatingwebhookconfiguration", vName), "dev: recreated", 15_000);
    await waitFor(
      async () =>
        (await configuration("staging", "mutatingwebhookconfiguration", vName))?.webhooks[0].timeoutSeconds === 5 ||
        undefined,
      "staging: repaired",
      15_000,
    );

    // The hub down: Ignore lets writes through, Fail (the fixture, labelled objects only) refuses them.
    const before = (await hub.get("/status")).body.admission.clusters.prod.lastSyncAt as string;
    assert.equal((await hub.stop()).code, 0);
    const open = await apply("prod", website(ns.name, "while-down", { image: "web:2" }));
    assert.equal(open.code, 0, `failurePolicy Ignore: ${open.stderr}`);
    const closed = await apply("prod", website(ns.name, "strict-down", { image: "web:2" }, { strict: "true" }));
    assert.notEqual(closed.code, 0, "failurePolicy Fail refuses while the hub is down");
    assert.match(closed.stderr, /failed calling webhook "content.website-strict.operator-hub.dev"/);

    // Restarted (a new CA, put into every configuration): admission answers again.
    hub = startHub(ns.name, port, hubName);
    await hub.waitStatus(installed(before), 60_000, "the configurations re-synced after the restart");
    await waitFor(
      async () =>
        (await apply("prod", website(ns.name, "strict-up", { image: "web:2" }, { strict: "true" }))).code === 0 ||
        undefined,
      "prod: a Fail-policy write admitted after the restart",
      15_000,
    );
    const refused = await apply(
      "staging",
      website(ns.name, "strict-no", { image: "web:2", content: "forbidden" }, { strict: "true" }),
    );
    assert.match(refused.stderr, /denied the request: spec.content is forbidden/);
    assert.equal((await hub.stop()).code, 0);

    // Uninstall: cleanup deletes this hub's configurations in every cluster.
    const cleaned = await runHubCli([
      "cleanup",
      "--kubeconfig",
      KUBECONFIG,
      "--clusters",
      CLUSTERS.join(","),
      "--namespace",
      ns.name,
      "--webhook-name",
      hubName,
    ]);
    assert.equal(cleaned.code, 0, cleaned.stderr);
    for (const c of CLUSTERS) {
      assert.match(cleaned.stdout, new RegExp(`${c}: removed 3 webhook configurations`));
      const left = await kubectlOk(c, [
        "get",
        "validatingwebhookconfigurations,mutatingwebhookconfigurations",
        "-l",
        `operator-hub.dev/webhook-hub=${hubName}`,
        "-o",
        "name",
      ]);
      assert.equal(left.trim(), "", `${c}: nothing left`);
    }
  } finally {
    await hub.stop();
    await runHubCli([
      "cleanup",
      "--kubeconfig",
      KUBECONFIG,
      "--clusters",
      CLUSTERS.join(","),
      "--namespace",
      ns.name,
      "--webhook-name",
      hubName,
    ]);
  }
});

Deno.test("Certificate rotation: a 12 s serving certificate renewed every 8 s while kubectl apply --dry-run=server loops, no failed admission", async () => {
  await ensureCrd();
  await using ns = await testNamespace("admission-rotate", { contexts: ["prod"] });
  const port = freePort();
  const hubName = ns.name.slice(-8);
  const hub = HubProcess.start({
    clusters: ["prod"],
    args: [
      "--namespace",
      ns.name,
      "--operators",
      "none",
      "--webhook-bind-address",
      `127.0.0.1:${port}`,
      "--webhook-name",
      hubName,
      "--webhook-cert-lifetime",
      // Renewed at two thirds: 4 s of slack, which a loaded 2-core machine needs (a 3 s certificate expired under load).
      "12",
      ...FILES,
    ],
  });
  try {
    await hub.waitStatus((s) => s.admission?.clusters?.prod?.configurations === 3, 60_000, "prod's configurations");
    // Labelled strict=true: the fixture's Fail-policy webhook is called too, so a failed call fails the apply.
    const body = website(ns.name, "loop", { image: "web:1", content: "x" }, { strict: "true" });
    const failures: string[] = [];
    let applies = 0;
    const rotations = () => hub.logs.filter((l) => l.includes("webhook certificate rotated")).length;
    // Applies run until two renewals happened, and once more after the second: the loop spans both, whatever the
    // machine's load does to when they come (about every 8 s; a loaded machine makes a key more slowly).
    const started = Date.now();
    for (let last = false; !last && Date.now() - started < 90_000;) {
      last = rotations() >= 2;
      const r = await apply("prod", body, "--dry-run=server");
      applies++;
      if (r.code !== 0) failures.push(r.stderr.trim());
    }
    const seconds = Math.round((Date.now() - started) / 1000);
    assert.ok(rotations() >= 2, `renewed ${rotations()} times in ${seconds} s of applies (expected 2 within 90 s)`);
    assert.deepEqual(failures, [], `${failures.length} of ${applies} dry-run applies failed`);
    const metrics = (await hub.get("/metrics")).text;
    const answered = metrics.match(
      /controller_runtime_webhook_requests_total\{webhook="website-strict\/validating\/content",code="200",cluster="prod"\} (\d+)/,
    );
    assert.ok(
      Number(answered?.[1]) >= applies,
      `every apply reached the Fail-policy webhook (${answered?.[1]} of ${applies})`,
    );
  } finally {
    await hub.stop();
    await runHubCli([
      "cleanup",
      "--kubeconfig",
      KUBECONFIG,
      "--clusters",
      "prod",
      "--namespace",
      ns.name,
      "--webhook-name",
      hubName,
    ]);
  }
});
