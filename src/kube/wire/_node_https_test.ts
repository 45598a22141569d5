// Tests of the node:https fetch adapter (used for insecure-skip-tls-verify) against the real local apiserver of context
// prod: certificate checks, request and response shape, and aborting a watch stream.
import assert from "node:assert/strict";
import { adminToken, apiserverCa, apiserverUrl, requireClusters } from "../../../dev/support/local_clusters.ts";
import { nodeHttpsTransport } from "./_node_https.ts";

function target() {
  requireClusters();
  return { url: apiserverUrl("prod"), headers: { Authorization: `Bearer ${adminToken("prod")}` } };
}

Deno.test("nodeHttpsTransport without verification reaches an apiserver whose certificate it does not trust", async () => {
  const { url, headers } = target();
  const t = nodeHttpsTransport({ rejectUnauthorized: false });
  try {
    const res = await t.fetch(`${url}/version`, { headers });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /application\/json/);
    assert.match((await res.json()).gitVersion, /^v1\./);
  } finally {
    t.close();
  }
});

Deno.test("nodeHttpsTransport with verification refuses an untrusted certificate and accepts it once its CA is given", async () => {
  const { url, headers } = target();
  const strict = nodeHttpsTransport({ rejectUnauthorized: true });
  try {
    await assert.rejects(strict.fetch(`${url}/version`, { headers }));
  } finally {
    strict.close();
  }
  const trusted = nodeHttpsTransport({ rejectUnauthorized: true, caCerts: [apiserverCa("prod")] });
  try {
    const res = await trusted.fetch(`${url}/version`, { headers });
    assert.equal(res.status, 200);
    await res.body?.cancel();
  } finally {
    trusted.close();
  }
});

Deno.test("nodeHttpsTransport sends method, headers and body, and returns the apiserver's error status and body", async () => {
  const { url, headers } = target();
  const t = nodeHttpsTransport({ rejectUnauthorized: false });
  try {
    // A create with a body that is not a valid object: the apiserver's 400 Status proves the body arrived.
    const res = await t.fetch(`${url}/api/v1/namespaces`, {
      method: "POST",
      headers: { ...headers, "Content-Type": "application/json" },
      body: '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"Not_A_Valid_Name"}}',
    });
    assert.equal(res.status, 422);
    const status = await res.json();
    assert.equal(status.kind, "Status");
    assert.match(status.message, /Not_A_Valid_Name/);
    const unauthorized = await t.fetch(`${url}/api/v1/namespaces`, { headers: { Authorization: "Bearer wrong" } });
    assert.equal(unauthorized.status, 401);
    await unauthorized.body?.cancel();
  } finally {
    t.close();
  }
});

Deno.test("nodeHttpsTransport streams a watch body as it arrives and ends it when the signal aborts", async () => {
  const { url, headers } = target();
  const t = nodeHttpsTransport({ rejectUnauthorized: false });
  try {
    const ac = new AbortController();
    const res = await t.fetch(`${url}/api/v1/namespaces?watch=1&timeoutSeconds=60`, { headers, signal: ac.signal });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.equal(first.done, false);
    assert.match(new TextDecoder().decode(first.value), /"type":"ADDED"/);
    ac.abort(new Error("stop watching"));
    // The stream errors (or ends) instead of waiting for the 60 s watch timeout.
    const ended = await (async () => {
      for (;;) {
        try {
          if ((await reader.read()).done) return "done";
        } catch {
          return "errored";
        }
      }
    })();
    assert.ok(ended === "done" || ended === "errored");
  } finally {
    t.close();
  }
});

Deno.test("nodeHttpsTransport rejects at once with the reason of a signal that is already aborted", async () => {
  const t = nodeHttpsTransport({ rejectUnauthorized: false });
  const reason = new Error("too late");
  try {
    await assert.rejects(
      t.fetch("https://127.0.0.1:9/version", { signal: AbortSignal.abort(reason) }),
      (e) => e === reason,
    );
  } finally {
    t.close();
  }
});

Deno.test("nodeHttpsTransport without verification needs no --allow-sys=ca (the run task's and the image's permissions)", async () => {
  const { url, headers } = target();
  const script = `
    import { nodeHttpsTransport } from ${JSON.stringify(new URL("./_node_https.ts", import.meta.url).href)};
    const t = nodeHttpsTransport({ rejectUnauthorized: false });
    const res = await t.fetch(${JSON.stringify(`${url}/version`)}, { headers: ${JSON.stringify(headers)} });
    console.log(res.status);
    await res.body?.cancel();
    t.close();
  `;
  const file = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(file, script);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", "--allow-net", "--allow-read", "--allow-env", "--allow-sys=hostname", file],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, text);
    assert.equal(text.trim(), "200");
  } finally {
    await Deno.remove(file);
  }
});
