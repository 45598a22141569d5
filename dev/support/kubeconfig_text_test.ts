// Tests for the kubeconfig text tests and the bench write: each user kind, the CA, and the current context.
import assert from "node:assert/strict";
import { parse } from "yaml";
import { kubeconfigText } from "./kubeconfig_text.ts";

Deno.test("kubeconfigText() writes one cluster and user per context, each kind of user, the CA inline or as a file, and the current context", () => {
  const server = "https://127.0.0.1:6443";
  const text = kubeconfigText([
    { name: "a", server, caPem: "PEM", user: { token: "t0" } },
    { name: "b", server, caFile: "/ca.crt", user: { tokenFile: "/tok" } },
    { name: "c", server, user: { clientCertificate: "/c.crt", clientKey: "/c.key" } },
    { name: "d", server, user: { exec: { command: "plugin", args: ["x"] } } },
  ]);
  const doc = parse(text);
  assert.equal(doc["current-context"], "a");
  assert.deepEqual(doc.contexts.map((c: { name: string }) => c.name), ["a", "b", "c", "d"]);
  assert.deepEqual(doc.clusters[0].cluster, { server, "certificate-authority-data": btoa("PEM") });
  assert.deepEqual(doc.clusters[1].cluster, { server, "certificate-authority": "/ca.crt" });
  assert.deepEqual(doc.users.map((u: { user: unknown }) => u.user), [
    { token: "t0" },
    { tokenFile: "/tok" },
    { "client-certificate": "/c.crt", "client-key": "/c.key" },
    {
      exec: { apiVersion: "client.authentication.k8s.io/v1", interactiveMode: "Never", command: "plugin", args: ["x"] },
    },
  ]);
  assert.equal(parse(kubeconfigText([{ name: "a", server, user: { token: "t" } }], ""))["current-context"], "");
  assert.equal(parse(kubeconfigText([{ name: "a", server, user: { token: "t" } }], "zz"))["current-context"], "zz");
});
