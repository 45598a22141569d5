// End-to-end: the Mirror operator copies a ConfigMap of prod (the home cluster) into staging and dev, keeps the
// copies in line with the source and against hand edits and deletes, and removes them when the Mirror goes; an
// independent watch in every cluster checks no copy ever lands where spec.clusters does not select it.
// deno-lint-ignore-file no-explicit-any -- JSON from the API servers is checked by the test itself.

import assert from "node:assert/strict";
import { localEndpoint, waitFor } from "../dev/support/cluster_api.ts";
import { HubProcess } from "../dev/support/hub_process.ts";
import { FaultApiserver, tempDir } from "../dev/support/fault_cluster.ts";
import { kubeconfigText } from "../dev/support/kubeconfig_text.ts";
import { kubectl, kubectlOk, mergePatch, testNamespace } from "./support/mod.ts";
import { watchEvents } from "../dev/support/watch_events.ts";

const CLUSTERS = ["prod", "staging", "dev"];
const LABEL = "operator-hub.dev/mirror=copy";
/** The observers' positive control: a labelled ConfigMap the test itself writes into every cluster. */
const CONTROL = "observer-control";

function controlManifest(namespace: string): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: CONTROL, namespace, labels: { "operator-hub.dev/mirror": "copy" } },
    data: { written: "by the test" },
  });
}

/**
 * Records every labelled ConfigMap a cluster ever showed in one namespace, with the Mirror that made it.
 *
 * Guarantees: a list or watch the apiserver refuses (a non-2xx answer, an ERROR event other than 410) is kept in
 * `errors`, never read as "nothing there"; `lists` counts the lists that succeeded, so a test can require that the
 * observer saw the namespace at all.
 */
class CopyObserver {
  readonly seen: { cluster: string; type: string; name: string; mirror: string }[] = [];
  readonly errors: string[] = [];
  /** Lists that succeeded (the first one, then one after each 410). */
  lists = 0;
  readonly #abort = new AbortController();
  readonly #done: Promise<void>;

  constructor(readonly cluster: string, namespace: string) {
    this.#done = this.#run(namespace);
  }

  async #run(namespace: string): Promise<void> {
    const ep = localEndpoint(this.cluster);
    const http = Deno.createHttpClient({ caCerts: [ep.caPem] });
    const headers = { authorization: `Bearer ${ep.token}`, accept: "application/json" };
    const base = `${ep.server}/api/v1/namespaces/${namespace}/configmaps?labelSelector=${encodeURIComponent(LABEL)}`;
    try {
      let rv = "";
      while (!this.#abort.signal.aborted) {
        try {
          if (!rv) {
            const answer = await fetch(base, { client: http, headers, signal: this.#abort.signal });
            const text = await answer.text();
            if (!answer.ok) {
              throw new Error(`list of ${this.cluster}/${namespace}: ${answer.status} ${text.slice(0, 200)}`);
            }
            const list = JSON.parse(text);
            if (!list.metadata?.resourceVersion) throw new Error(`list of ${this.cluster}: no resourceVersion`);
            for (const o of list.items ?? []) this.#record("LISTED", o);
            rv = list.metadata.resourceVersion;
            this.lists++;
          }
          const res = await fetch(`${base}&watch=1&resourceVersion=${rv}&allowWatchBookmarks=true`, {
            client: http,
            headers,
            signal: this.#abort.signal,
          });
          if (!res.ok || !res.body) {
            const text = await res.text();
            throw new Error(`watch of ${this.cluster}/${namespace}: ${res.status} ${text.slice(0, 200)}`);
          }
          for await (const ev of watchEvents(res.body, this.#abort.signal)) {
            if (ev.type === "ERROR") {
              // A 410 (resourceVersion too old) means relist; any other ERROR event is a failure of the observer.
              if (ev.object?.code !== 410) throw new Error(`watch of ${this.cluster}: ${JSON.stringify(ev.object)}`);
              rv = "";
              break;
            }
            rv = ev.object?.metadata?.resourceVersion ?? rv;
            if (ev.type !== "BOOKMARK") this.#record(ev.type, ev.object);
          }
        } catch (err) {
          if (!this.#abort.signal.aborted) this.errors.push(String(err));
          if (!this.#abort.signal.aborted) await new Promise((r) => setTimeout(r, 250));
        }
      }
    } finally {
      http.close();
    }
  }

  #record(type: string, o: any): void {
    this.seen.push({
      cluster: this.cluster,
      type,
      name: o.metadata.name,
      mirror: o.metadata.annotations?.["operator-hub.dev/mirror"] ?? "",
    });
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#done;
  }
}

async function configMap(context: string, ns: string, name: string): Promise<any | undefined> {
  const r = await kubectl(context, ["get", "configmap", name, "-n", ns, "-o", "json", "--ignore-not-found"]);
  if (r.code !== 0) throw new Error(`kubectl get configmap in ${context}: ${r.stderr}`);
  return r.stdout.trim() ? JSON.parse(r.stdout) : undefined;
}

/** Reads a ConfigMap of one cluster (by the hub's name for it), or undefined when there is none. */
type ConfigMapReader = (cluster: string, ns: string, name: string) => Promise<any | undefined>;

async function mirrorStatus(ns: string, name: string): Promise<any> {
  return JSON.parse(await kubectlOk("prod", ["get", "mirror", name, "-n", ns, "-o", "json"])).status ?? {};
}

function mirrorManifest(ns: string, name: string, source: string, clusters: string[]): string {
  return JSON.stringify({
    apiVersion: "demo.operator/v1",
    kind: "Mirror",
    metadata: { name, namespace: ns },
    spec: { source: { kind: "ConfigMap", name: source }, clusters },
  });
}

/** Waits until every cluster in `targets` holds the copy of `name` with `data`, and the Mirror reads all in sync. */
async function waitInSync(
  ns: string,
  mirror: string,
  name: string,
  data: Record<string, string>,
  targets: string[],
  read: ConfigMapReader = configMap,
) {
  for (const c of targets) {
    await waitFor(async () => {
      const cm = await read(c, ns, name);
      return cm && JSON.stringify(cm.data) === JSON.stringify(data) ? cm : undefined;
    }, `${c}: copy of ${name} holds ${JSON.stringify(data)}`);
  }
  const sourceRv = (await configMap("prod", ns, name)).metadata.resourceVersion;
  return await waitFor(async () => {
    const s = await mirrorStatus(ns, mirror);
    return s.syncedClusters === targets.length && s.totalClusters === targets.length &&
        s.targets?.every((t: any) => t.state === "InSync" && t.observedSourceResourceVersion === sourceRv) &&
        s.conditions?.[0]?.status === "True"
      ? s
      : undefined;
  }, `Mirror ${mirror} reads ${targets.length}/${targets.length} InSync at source resourceVersion ${sourceRv}`);
}

/** Sum of a counter's samples whose lines contain every one of `labels` (e.g. `cluster="dev"`). */
async function counter(hub: HubProcess, name: string, labels: string[]): Promise<number> {
  const text = (await hub.get("/metrics")).text;
  return text.split("\n").filter((l) => l.startsWith(`${name}{`) && labels.every((x) => l.includes(x)))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
}

const targetWrites = (hub: HubProcess, cluster: string) =>
  counter(hub, "rest_client_requests_total", [`cluster="${cluster}"`, `method="PATCH"`]);

Deno.test("A ConfigMap in prod mirrored to staging and dev follows edits, is restored after a hand edit and a delete, is never copied where spec.clusters does not select, and goes with its Mirror", async () => {
  const ns = await testNamespace("mirror");
  const observers = CLUSTERS.map((c) => new CopyObserver(c, ns.name));
  const hub = HubProcess.start({
    clusters: CLUSTERS,
    args: ["--operators", "mirror", "--home-cluster", "prod", "--namespace", ns.name],
  });
  try {
    await hub.waitReady();
    await kubectlOk("prod", ["create", "configmap", "settings", "-n", ns.name, "--from-literal=color=blue"]);
    await kubectlOk("prod", ["create", "configmap", "devonly", "-n", ns.name, "--from-literal=level=debug"]);
    await kubectlOk("prod", ["apply", "-f", "-"], {
      stdin: mirrorManifest(ns.name, "settings", "settings", ["staging", "dev"]),
    });
    await kubectlOk("prod", ["apply", "-f", "-"], { stdin: mirrorManifest(ns.name, "devonly", "devonly", ["dev"]) });

    const first = await waitInSync(ns.name, "settings", "settings", { color: "blue" }, ["staging", "dev"]);
    assert.deepEqual(first.targets.map((t: any) => t.cluster), ["dev", "staging"]);
    assert.equal(first.synced, "2/2");
    await waitInSync(ns.name, "devonly", "devonly", { level: "debug" }, ["dev"]);
    const copy = await configMap("dev", ns.name, "settings");
    assert.equal(copy.metadata.labels["operator-hub.dev/mirror"], "copy");
    assert.equal(copy.metadata.annotations["operator-hub.dev/source-cluster"], "prod");
    assert.equal(copy.metadata.annotations["operator-hub.dev/source-namespace"], ns.name);
    assert.equal(copy.metadata.annotations["operator-hub.dev/source-name"], "settings");
    const printed = await kubectlOk("prod", ["get", "mirror", "settings", "-n", ns.name]);
    assert.match(printed, /ConfigMap\/settings\s+2\/2/, printed);

    // Nothing changed: a reconcile woken by a touch of the Mirror writes no copy.
    const writes0 = await Promise.all(["staging", "dev"].map((c) => targetWrites(hub, c)));
    const reconciles = () =>
      counter(hub, "controller_runtime_reconcile_total", ['controller="mirror"', 'cluster="prod"']);
    const r0 = await reconciles();
    await kubectlOk("prod", ["annotate", "mirror", "settings", "-n", ns.name, "touched=1"]);
    await waitFor(async () => (await reconciles()) > r0, "a reconcile after the touch");
    assert.deepEqual(await Promise.all(["staging", "dev"].map((c) => targetWrites(hub, c))), writes0, "0 writes");

    // The source edited: both copies follow, with one write per target.
    await kubectlOk("prod", ["patch", "configmap", "settings", "-n", ns.name, "-p", '{"data":{"color":"green"}}']);
    await waitInSync(ns.name, "settings", "settings", { color: "green" }, ["staging", "dev"]);
    const writes1 = await Promise.all(["staging", "dev"].map((c) => targetWrites(hub, c)));
    assert.deepEqual(writes1.map((w, i) => w - writes0[i]), [1, 1], "one write per target per source change");

    // A copy edited by hand in dev (a changed value and an extra key) and another deleted in staging: both restored.
    await mergePatch("dev", "configmap", ns.name, "settings", '{"data":{"color":"red","extra":"x"}}');
    await kubectlOk("staging", ["delete", "configmap", "settings", "-n", ns.name]);
    await waitInSync(ns.name, "settings", "settings", { color: "green" }, ["staging", "dev"]);

    // An unlabelled object of the same name in a target is a conflict, never overwritten.
    await kubectlOk("staging", ["create", "configmap", "devonly", "-n", ns.name, "--from-literal=mine=yes"]);
    await mergePatch("prod", "mirror", ns.name, "devonly", '{"spec":{"clusters":["dev","staging"]}}');
    const conflict = await waitFor(async () => {
      const s = await mirrorStatus(ns.name, "devonly");
      return s.targets?.find((t: any) => t.cluster === "staging" && t.state === "Conflict") ? s : undefined;
    }, "devonly: staging row Conflict");
    assert.equal(conflict.synced, "1/2");
    assert.equal(conflict.conditions[0].status, "False");
    assert.deepEqual((await configMap("staging", ns.name, "devonly")).data, { mine: "yes" });
    assert.equal((await configMap("staging", ns.name, "devonly")).metadata.labels, undefined);

    // A cluster removed from spec.clusters loses its copy.
    await mergePatch("prod", "mirror", ns.name, "devonly", '{"spec":{"clusters":["staging"]}}');
    await waitFor(async () => !(await configMap("dev", ns.name, "devonly")), "dev: devonly copy removed");

    // The Mirror deleted: its copies are gone (the finalizer), the source stays.
    await kubectlOk("prod", ["delete", "mirror", "settings", "-n", ns.name, "--timeout=60s"]);
    for (const c of ["staging", "dev"]) {
      await waitFor(async () => !(await configMap(c, ns.name, "settings")), `${c}: settings copy removed`);
    }
    assert.deepEqual((await configMap("prod", ns.name, "settings")).data, { color: "green" });
    assert.deepEqual(
      (await configMap("staging", ns.name, "devonly")).data,
      { mine: "yes" },
      "the conflict is untouched",
    );

    // Positive control for the observers: a labelled ConfigMap written by hand into every cluster now, at the end,
    // must reach each observer, so each one's watch was open and delivering for the whole test.
    for (const c of CLUSTERS) {
      await kubectlOk(c, ["apply", "-f", "-"], { stdin: controlManifest(ns.name) });
    }
    for (const o of observers) {
      await waitFor(() => o.seen.some((e) => e.name === CONTROL), `${o.cluster}: the observer seeing ${CONTROL}`);
    }
  } catch (err) {
    console.error(hub.logs.filter((l) => /"level":"(warn|error)"/.test(l)).slice(-30).join("\n"));
    throw err;
  } finally {
    await Promise.all(observers.map((o) => o.stop()));
    await hub.stop("SIGTERM");
    await kubectl("prod", ["delete", "mirror", "--all", "-n", ns.name, "--wait=false"]);
    await mergePatch("prod", "mirror", ns.name, "devonly", '{"metadata":{"finalizers":null}}', { check: false });
    await ns.cleanup();
  }
  // The independent watches: no copy in prod (the home cluster is never a target), no devonly copy in staging.
  const all = observers.flatMap((o) => o.seen);
  for (const o of observers) {
    assert.deepEqual(o.errors, [], `${o.cluster} observer errors`);
    assert.ok(o.lists >= 1, `${o.cluster}: the observer's list succeeded`);
    assert.ok(o.seen.some((e) => e.name === CONTROL), `${o.cluster}: the observer saw the control object`);
  }
  assert.ok(all.some((e) => e.cluster === "staging" && e.name === "settings"), "the observers saw copies");
  assert.ok(all.some((e) => e.cluster === "dev" && e.name === "devonly"), "the observers saw dev's devonly copy");
  const wrong = all.filter((e) =>
    e.name !== CONTROL && (e.cluster === "prod" || (e.name === "devonly" && e.cluster === "staging"))
  );
  assert.deepEqual(wrong, [], "copies written into clusters spec.clusters did not select");
});

Deno.test("With staging's apiserver killed -9, the Mirror shows staging Unreachable while dev keeps following the source, and staging is caught up once it returns", async () => {
  // The hub's "staging" here is a private apiserver (dev/support/fault_cluster.ts: the same binary and flags): the
  // shared staging's would fail every test file running at the same time while it is down.
  const ns = await testNamespace("mirror-down", { contexts: ["prod", "dev"] });
  const dir = await tempDir("mirror-down");
  const staging = await FaultApiserver.start({ name: "mirror-staging" });
  await staging.kubectl(["create", "namespace", ns.name]);
  const local = (c: string) => {
    const e = localEndpoint(c);
    return { name: c, server: e.server, caPem: e.caPem, user: { token: e.token } };
  };
  const kubeconfig = await dir.write(
    "kubeconfig.yaml",
    kubeconfigText([local("prod"), staging.context("staging"), local("dev")]),
  );
  const read: ConfigMapReader = async (cluster, namespace, name) => {
    if (cluster !== "staging") return await configMap(cluster, namespace, name);
    const out = await staging.kubectl(["get", "configmap", name, "-n", namespace, "-o", "json", "--ignore-not-found"]);
    return out.trim() ? JSON.parse(out) : undefined;
  };
  const hub = HubProcess.start({
    clusters: CLUSTERS,
    kubeconfigs: [kubeconfig],
    args: ["--operators", "mirror", "--home-cluster", "prod", "--namespace", ns.name],
  });
  try {
    await hub.waitReady();
    await kubectlOk("prod", ["create", "configmap", "feed", "-n", ns.name, "--from-literal=v=1"]);
    await kubectlOk("prod", ["apply", "-f", "-"], {
      stdin: mirrorManifest(ns.name, "feed", "feed", ["staging", "dev"]),
    });
    await waitInSync(ns.name, "feed", "feed", { v: "1" }, ["staging", "dev"], read);

    await staging.kill();
    await kubectlOk("prod", ["patch", "configmap", "feed", "-n", ns.name, "-p", '{"data":{"v":"2"}}']);
    await waitFor(async () => {
      const cm = await configMap("dev", ns.name, "feed");
      return cm?.data?.v === "2";
    }, "dev follows the source while staging is down");
    const down = await waitFor(async () => {
      const s = await mirrorStatus(ns.name, "feed");
      const row = (c: string) => s.targets?.find((t: any) => t.cluster === c);
      return row("staging")?.state === "Unreachable" && row("dev")?.state === "InSync" ? s : undefined;
    }, "staging Unreachable, dev InSync");
    assert.equal(down.synced, "1/2");
    assert.equal(down.conditions[0].status, "False");
    assert.ok(down.targets.find((t: any) => t.cluster === "staging").lastError, "the row names the error");

    await staging.restart();
    await waitInSync(ns.name, "feed", "feed", { v: "2" }, ["staging", "dev"], read);
  } catch (err) {
    console.error(hub.logs.filter((l) => /"level":"(warn|error)"/.test(l)).slice(-30).join("\n"));
    throw err;
  } finally {
    await kubectl("prod", ["delete", "mirror", "--all", "-n", ns.name, "--timeout=60s"]);
    await hub.stop("SIGTERM");
    await staging.destroy();
    await dir.remove();
    await ns.cleanup();
  }
});

Deno.test('A Secret mirrored with clusters ["*"] and a targetNamespace lands in every engaged cluster but the home one, in a namespace created for it', async () => {
  const ns = await testNamespace("mirror-secret");
  const target = `${ns.name}-copies`;
  const hub = HubProcess.start({
    clusters: CLUSTERS,
    args: ["--operators", "mirror", "--home-cluster", "prod", "--namespace", ns.name],
  });
  try {
    await hub.waitReady();
    await kubectlOk("prod", ["create", "secret", "generic", "token", "-n", ns.name, "--from-literal=key=s3cret"]);
    await kubectlOk("prod", ["apply", "-f", "-"], {
      stdin: JSON.stringify({
        apiVersion: "demo.operator/v1",
        kind: "Mirror",
        metadata: { name: "token", namespace: ns.name },
        spec: { source: { kind: "Secret", name: "token" }, clusters: ["*"], targetNamespace: target },
      }),
    });
    for (const c of ["staging", "dev"]) {
      const secret = await waitFor(async () => {
        const r = await kubectl(c, ["get", "secret", "token", "-n", target, "-o", "json", "--ignore-not-found"]);
        return r.code === 0 && r.stdout.trim() ? JSON.parse(r.stdout) : undefined;
      }, `${c}: the Secret copy in ${target}`);
      assert.equal(atob(secret.data.key), "s3cret");
      assert.equal(secret.type, "Opaque");
    }
    const status = await waitFor(async () => {
      const s = await mirrorStatus(ns.name, "token");
      return s.synced === "2/2" ? s : undefined;
    }, "token 2/2");
    assert.deepEqual(status.targets.map((t: any) => t.cluster), ["dev", "staging"], "every cluster but the home one");
    const inProd = await kubectl("prod", ["get", "namespace", target, "--ignore-not-found", "-o", "name"]);
    assert.equal(inProd.stdout.trim(), "", "nothing is written into the home cluster");
    await kubectlOk("prod", ["delete", "mirror", "token", "-n", ns.name, "--timeout=60s"]);
    for (const c of ["staging", "dev"]) {
      const r = await kubectl(c, ["get", "secret", "token", "-n", target, "--ignore-not-found", "-o", "name"]);
      assert.equal(r.stdout.trim(), "", `${c}: the copy went with the Mirror`);
    }
  } catch (err) {
    console.error(hub.logs.filter((l) => /"level":"(warn|error)"/.test(l)).slice(-30).join("\n"));
    throw err;
  } finally {
    await kubectl("prod", ["delete", "mirror", "--all", "-n", ns.name, "--timeout=60s"]);
    await hub.stop("SIGTERM");
    for (const c of ["staging", "dev"]) {
      await kubectl(c, ["delete", "namespace", target, "--wait=false", "--ignore-not-found"]);
    }
    await ns.cleanup();
  }
});
