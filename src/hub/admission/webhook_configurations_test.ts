// Unit tests for the configurations the installer writes and the drift check against what an apiserver returns.
// deno-lint-ignore-file no-explicit-any -- configuration JSON is checked field by field.
import assert from "node:assert/strict";
import { defineOperator } from "../../sdk/mod.ts";
import { configurationName, desiredConfigurations, HUB_LABEL, inSync } from "./webhook_configurations.ts";

const op = defineOperator({
  name: "website",
  resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
  validate: [function image() {}, { id: "status", subresource: "status", labels: { a: "b" }, fn: () => {} }],
  mutate: function defaults() {},
  reconcile: async () => {},
});
const inputs = {
  hubName: "blue",
  cluster: "prod",
  endpoint: { url: "https://127.0.0.1:9443/" },
  caBundle: "PEM",
  namespaces: ["team-a"],
};

Deno.test("desiredConfigurations() gives one configuration per kind, named and labelled for the hub", () => {
  const [v, m] = desiredConfigurations(op, inputs);
  assert.equal(v.kind, "ValidatingWebhookConfiguration");
  assert.equal(m.kind, "MutatingWebhookConfiguration");
  assert.equal(v.metadata.name, "operator-hub-website-blue");
  assert.equal(configurationName("website", "blue"), v.metadata.name);
  assert.equal(v.metadata.labels[HUB_LABEL], "blue");
  assert.equal(v.webhooks.length, 2);
  const [image, status] = v.webhooks as any[];
  assert.equal(image.name, "image.website.operator-hub.dev");
  assert.equal(image.clientConfig.url, "https://127.0.0.1:9443/admission/website/validating/image/prod");
  assert.equal(image.clientConfig.caBundle, btoa("PEM"));
  assert.deepEqual(image.rules, [{
    apiGroups: ["examples.operator-hub.dev"],
    apiVersions: ["v1"],
    resources: ["websites"],
    operations: ["CREATE", "UPDATE"],
    scope: "*",
  }]);
  assert.deepEqual(image.namespaceSelector, {
    matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: ["team-a"] }],
  });
  assert.equal(image.failurePolicy, "Ignore");
  assert.equal(image.sideEffects, "None");
  assert.equal(image.timeoutSeconds, 5);
  assert.deepEqual(status.rules[0].resources, ["websites/status"]);
  assert.deepEqual(status.objectSelector, { matchLabels: { a: "b" } });
  assert.equal((m.webhooks[0] as any).reinvocationPolicy, "Never");
});

Deno.test("desiredConfigurations() points the home cluster at a Service, and an operator without webhooks at nothing", () => {
  const [v] = desiredConfigurations(op, {
    ...inputs,
    namespaces: [],
    endpoint: { service: { namespace: "hub", name: "webhooks", port: 443 } },
  });
  const hook = v.webhooks[0] as any;
  assert.deepEqual(hook.clientConfig.service, {
    namespace: "hub",
    name: "webhooks",
    port: 443,
    path: "/admission/website/validating/image/prod",
  });
  assert.deepEqual(hook.namespaceSelector, {});
  const plain = defineOperator({ name: "plain", resource: op.resource, reconcile: async () => {} });
  assert.deepEqual(desiredConfigurations(plain, inputs), []);
});

Deno.test("inSync() ignores the apiserver's added fields and sees an edit, a missing webhook or a label gone", () => {
  const [v] = desiredConfigurations(op, inputs);
  const served = structuredClone(v) as any;
  served.metadata.uid = "u";
  served.metadata.labels.other = "x";
  for (const w of served.webhooks) w.rules[0].extra = 1;
  assert.ok(inSync(v, served));
  assert.ok(!inSync(v, undefined));
  const edited = structuredClone(served);
  edited.webhooks[0].timeoutSeconds = 29;
  assert.ok(!inSync(v, edited));
  const short = structuredClone(served);
  short.webhooks.pop();
  assert.ok(!inSync(v, short));
  const unlabelled = structuredClone(served);
  delete unlabelled.metadata.labels[HUB_LABEL];
  assert.ok(!inSync(v, unlabelled));
  const selected = structuredClone(served);
  selected.webhooks[0].objectSelector = { matchLabels: { x: "y" } };
  assert.ok(!inSync(v, selected), "a selector added by hand where none is wanted is drift");
});
