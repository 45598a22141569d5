// Tests of the Secret provider against the real local apiserver (context prod, the home cluster), watching a namespace
// of the test's own, with a registry of our own that records what it is told.

import assert from "node:assert/strict";
import { waitFor } from "../../../../dev/support/cluster_api.ts";
import { KUBECONFIG_PATH } from "../../../../dev/clusters/clusters.ts";
import { inLocalNamespace } from "../../../../dev/support/local_client.ts";
import { type KubeClient, loadContexts } from "../../../kube/mod.ts";
import { silentLogger } from "../../../util/mod.ts";
import type { ClusterOffer, ProviderWatch } from "../cluster_offer.ts";
import type { ClusterRegistry } from "../registry.ts";
import {
  KUBECONFIG_SECRET_KEY,
  KUBECONFIG_SECRET_LABEL,
  project,
  SecretProvider,
  type SecretProviderOptions,
  selects,
} from "./secret_provider.ts";
import { kubeconfigText } from "../../../../dev/support/kubeconfig_text.ts";

/** Hang guard: a list and a watch on a local apiserver; 30 s is far above any run seen. */
const HANG_GUARD_MS = 30_000;

class RecordingRegistry {
  readonly calls: string[] = [];
  readonly offers = new Map<string, ClusterOffer>();
  watch: (() => ProviderWatch) | undefined;
  attach(_provider: string, watch: () => ProviderWatch): void {
    this.watch = watch;
  }
  offer(_provider: string, source: string, offers: ClusterOffer[]): void {
    this.calls.push(`offer ${source}`);
    this.offers.set(source, offers[0]);
  }
  withdraw(_provider: string, source: string): void {
    this.calls.push(`withdraw ${source}`);
    this.offers.delete(source);
  }
  unusable(): void {}
}

function kubeconfig(contexts: string[], current: string | undefined, token = "t0ken"): string {
  return kubeconfigText(
    contexts.map((name) => ({ name, server: `https://${name}.example:6443`, user: { token } })),
    current ?? "",
  );
}

function secret(ns: string, name: string, data: Record<string, string>, labelled = true) {
  return {
    metadata: { name, namespace: ns, labels: labelled ? { [KUBECONFIG_SECRET_LABEL]: "true" } : {} },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, btoa(v)])),
  };
}

/** Runs a SecretProvider on namespace `ns` of prod until `fn` settles. */
function providing(
  fn: (client: KubeClient, ns: string, registry: RecordingRegistry) => Promise<void>,
  extra: Partial<SecretProviderOptions> = {},
) {
  return inLocalNamespace("prod", "secret-provider", async (client, ns) => {
    const [home] = (await loadContexts({ files: [KUBECONFIG_PATH] })).select(["prod"]);
    const registry = new RecordingRegistry();
    const p = new SecretProvider({
      registry: registry as unknown as ClusterRegistry,
      home,
      namespace: ns,
      logger: silentLogger(),
      ...extra,
    });
    const ac = new AbortController();
    const running = p.start(ac.signal);
    try {
      await fn(client, ns, registry);
      assert.equal(registry.watch?.().state, "watching");
      assert.deepEqual(registry.watch?.().watches, [`prod:${ns}`]);
    } finally {
      ac.abort();
      await running;
    }
  });
}

const post = (client: KubeClient, ns: string, body: unknown) =>
  client.request("POST", `/api/v1/namespaces/${ns}/secrets`, { body });

Deno.test("SecretProvider registers a labelled Secret's current context under the Secret's name, and ignores unlabelled ones", () =>
  providing(async (client, ns, registry) => {
    await post(client, ns, secret(ns, "unlabelled", { [KUBECONFIG_SECRET_KEY]: kubeconfig(["x"], "x") }, false));
    await post(client, ns, secret(ns, "edge", { [KUBECONFIG_SECRET_KEY]: kubeconfig(["a", "b"], "b") }));
    const offer = await waitFor(() => registry.offers.get(`${ns}/edge`), "the edge offer", HANG_GUARD_MS);
    assert.equal(offer.name, "edge");
    assert.equal(offer.access?.server, "https://b.example:6443", "its current-context");
    assert.equal(offer.error, undefined);
    assert.equal(registry.offers.has(`${ns}/unlabelled`), false);
  }));

Deno.test("SecretProvider offers a Secret without the key, or with no usable context, as an error naming the problem", () =>
  providing(async (client, ns, registry) => {
    await post(client, ns, secret(ns, "nokey", { other: "x" }));
    await post(client, ns, secret(ns, "two", { [KUBECONFIG_SECRET_KEY]: kubeconfig(["a", "b"], undefined) }));
    await post(client, ns, secret(ns, "dangling", { [KUBECONFIG_SECRET_KEY]: kubeconfig(["a"], "zz") }));
    await waitFor(() => registry.offers.size === 3, "three offers", HANG_GUARD_MS);
    assert.match(registry.offers.get(`${ns}/nokey`)!.error!, /has no data key "kubeconfig"/);
    assert.match(registry.offers.get(`${ns}/two`)!.error!, /2 contexts and no current-context/);
    assert.match(registry.offers.get(`${ns}/dangling`)!.error!, /current-context "zz" is not defined/);
    for (const o of registry.offers.values()) assert.equal(o.access, undefined);
  }));

Deno.test("SecretProvider re-offers a changed Secret with new credentials on the same endpoint, and withdraws it when unlabelled or deleted", () =>
  providing(async (client, ns, registry) => {
    await post(client, ns, secret(ns, "a", { [KUBECONFIG_SECRET_KEY]: kubeconfig(["a"], "a", "one") }));
    await post(client, ns, secret(ns, "b", { [KUBECONFIG_SECRET_KEY]: kubeconfig(["b"], "b") }));
    const first = await waitFor(() => registry.offers.get(`${ns}/a`), "a offered", HANG_GUARD_MS);
    await client.request("PUT", `/api/v1/namespaces/${ns}/secrets/a`, {
      body: secret(ns, "a", { [KUBECONFIG_SECRET_KEY]: kubeconfig(["a"], "a", "two") }),
    });
    const second = await waitFor(
      () => {
        const o = registry.offers.get(`${ns}/a`);
        return o !== first && o;
      },
      "a offered again",
      HANG_GUARD_MS,
    );
    assert.equal(second.endpointDigest, first.endpointDigest);
    assert.notEqual(second.credentialsDigest, first.credentialsDigest);
    await client.request("PUT", `/api/v1/namespaces/${ns}/secrets/a`, {
      body: secret(ns, "a", { [KUBECONFIG_SECRET_KEY]: kubeconfig(["a"], "a", "two") }, false),
    });
    await client.request("DELETE", `/api/v1/namespaces/${ns}/secrets/b`);
    await waitFor(
      () => registry.calls.includes(`withdraw ${ns}/a`) && registry.calls.includes(`withdraw ${ns}/b`),
      "both withdrawn",
      HANG_GUARD_MS,
    );
    assert.equal(registry.offers.size, 0);
  }));

Deno.test("SecretProvider's projection keeps a kubeconfig's text, only the size of one over the cap, and nothing of an unselected Secret", () => {
  const raw = (name: string, text: string) => ({
    metadata: { name, namespace: "ns", resourceVersion: "1", managedFields: [{}] },
    data: { [KUBECONFIG_SECRET_KEY]: btoa(text) },
  });
  assert.deepEqual(project(raw("a", "token: x\n")), {
    metadata: { name: "a", namespace: "ns", uid: undefined, resourceVersion: "1", generation: undefined },
    kubeconfig: "token: x\n",
  });
  for (const size of [256 * 1024 + 1, 256 * 1024 + 2, 256 * 1024 + 3, 1_000_000]) {
    const big = project(raw("big", "s".repeat(size)));
    assert.equal(big.kubeconfigBytes, size);
    assert.equal(big.kubeconfig, undefined, "never decoded, never held");
  }
  assert.equal(project(raw("edge", "s".repeat(256 * 1024))).kubeconfig?.toString().length, 256 * 1024);
  const unselected = project(raw("other", "token: x\n"), (name) => name === "a");
  assert.deepEqual(Object.keys(unselected).sort(), ["metadata", "unselected"]);
  assert.equal(project({ metadata: { name: "none" }, data: {} }).kubeconfig, undefined);
});

Deno.test("selects() follows --clusters: all, or the names given, with the secret provider's prefix put before each Secret's name", () => {
  assert.equal(selects("all", {})("anything"), true);
  assert.equal(selects(["all"], {})("anything"), true);
  const plain = selects(["prod", "edge"], {});
  assert.deepEqual(["edge", "other"].map(plain), [true, false]);
  const prefixed = selects(["s-edge", "edge2"], { secret: "s-", folder: "f-" });
  assert.deepEqual(["edge", "edge2", "s-edge"].map(prefixed), [true, false, false]);
});

Deno.test("SecretProvider with --clusters naming one Secret parses only that one: an unselected Secret, however hostile, offers nothing", () =>
  providing(async (client, ns, registry) => {
    const bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 9; i++) {
      bomb.push(`l${i}: &l${i} [${Array(10).fill(i === 1 ? "*a" : `*l${i - 1}`).join(", ")}]`);
    }
    await post(client, ns, secret(ns, "unselected", { [KUBECONFIG_SECRET_KEY]: bomb.join("\n") }));
    await post(client, ns, secret(ns, "edge", { [KUBECONFIG_SECRET_KEY]: kubeconfig(["e"], "e") }));
    const offer = await waitFor(() => registry.offers.get(`${ns}/edge`), "the edge offer", HANG_GUARD_MS);
    assert.equal(offer.error, undefined);
    assert.deepEqual(registry.calls, [`offer ${ns}/edge`], "nothing of the unselected Secret");
  }, { selection: ["prod", "hub-edge"], prefixes: { secret: "hub-" } }));

Deno.test("SecretProvider refuses a kubeconfig over the size cap, one with aliases and one with too many contexts, each with one line naming the Secret", () =>
  providing(async (client, ns, registry) => {
    const many = kubeconfig(Array.from({ length: 201 }, (_, i) => `c${i}`), "c0");
    await post(client, ns, secret(ns, "big", { [KUBECONFIG_SECRET_KEY]: kubeconfig(["b"], "b", "s".repeat(300_000)) }));
    await post(client, ns, secret(ns, "alias", { [KUBECONFIG_SECRET_KEY]: "a: &x [s3cret]\nb: *x\n" }));
    await post(client, ns, secret(ns, "many", { [KUBECONFIG_SECRET_KEY]: many }));
    await waitFor(() => registry.offers.size === 3, "three offers", HANG_GUARD_MS);
    const error = (name: string) => registry.offers.get(`${ns}/${name}`)?.error ?? "";
    assert.match(
      error("big"),
      new RegExp(`^invalid kubeconfig secret ${ns}/big: \\d+ bytes, larger than 262144 bytes`),
    );
    assert.match(error("alias"), new RegExp(`^invalid kubeconfig secret ${ns}/alias: uses a YAML alias \\(line 2\\)`));
    assert.match(error("many"), new RegExp(`^invalid kubeconfig secret ${ns}/many: 201 contexts, more than the 200`));
    for (const name of ["big", "alias", "many"]) {
      assert.doesNotMatch(error(name), /\n|s3cret|sssss/);
      assert.equal(registry.offers.get(`${ns}/${name}`)?.access, undefined);
    }
  }));
