// Unit tests for the admission port on a real local HTTPS socket: verdicts, refusals of bad input, metrics, and a
// certificate rotation under a stream of requests with no failed one.
import assert from "node:assert/strict";
import client from "prom-client";
import { AdmissionError, defineOperator } from "../../sdk/mod.ts";
import { silentLogger } from "../../util/mod.ts";
import { SelfMadeCertificates } from "./webhook_certs.ts";
import { WebhookServer } from "./webhook_server.ts";

const op = defineOperator({
  name: "website",
  resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
  validate: function image({ spec, warn }) {
    if (!String(spec.image).includes(":")) warn("no tag");
    if (String(spec.image).endsWith(":latest")) throw new AdmissionError("spec.image: no :latest", 422);
  },
  mutate: function defaults({ spec, name }) {
    spec.content ??= `Welcome to ${name}`;
  },
  reconcile: async () => {},
});

const review = (spec: Record<string, unknown>) =>
  JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: { uid: "u1", operation: "CREATE", object: { metadata: { name: "w", namespace: "ns" }, spec } },
  });

async function withServer(
  fn: (
    call: (path: string, init?: RequestInit) => Promise<Response>,
    s: WebhookServer,
    c: SelfMadeCertificates,
    r: client.Registry,
  ) => Promise<void>,
  lifetimeMs?: number,
): Promise<void> {
  const certs = await SelfMadeCertificates.create({ servingLifetimeMs: lifetimeMs });
  const registry = new client.Registry();
  const server = new WebhookServer({
    hostname: "127.0.0.1",
    port: 0,
    certificates: certs,
    operators: [op],
    registry,
    logger: silentLogger(),
  });
  const stop = new AbortController();
  const running = server.start(stop.signal);
  const http = Deno.createHttpClient({ caCerts: [certs.caBundle()] });
  try {
    await fn(
      (path, init) => fetch(`https://127.0.0.1:${server.addr.port}${path}`, { client: http, ...init }),
      server,
      certs,
      registry,
    );
  } finally {
    http.close();
    stop.abort();
    await running;
  }
}

const post = (body: string, type = "application/json"): RequestInit => ({
  method: "POST",
  body,
  headers: { "content-type": type },
});

Deno.test("WebhookServer answers verdicts over HTTPS: allowed with a warning, refused with the code, patched", async () => {
  await withServer(async (call, _s, _c, registry) => {
    const ok = await (await call("/admission/website/validating/image/prod", post(review({ image: "nginx" })))).json();
    assert.deepEqual(ok.response, { uid: "u1", allowed: true, warnings: ["no tag"] });
    const no = await (await call("/admission/website/validating/image/dev", post(review({ image: "a:latest" }))))
      .json();
    assert.deepEqual(no.response.status, { code: 422, message: "spec.image: no :latest" });
    const m = await (await call("/admission/website/mutating/defaults/prod", post(review({ image: "a:1" })))).json();
    assert.deepEqual(JSON.parse(atob(m.response.patch)), [{ op: "add", path: "/spec/content", value: "Welcome to w" }]);
    const text = await registry.metrics();
    assert.match(
      text,
      /controller_runtime_webhook_requests_total\{webhook="website\/validating\/image",code="200",cluster="dev"\} 1/,
    );
    assert.match(
      text,
      /controller_runtime_webhook_latency_seconds_count\{webhook="website\/mutating\/defaults",cluster="prod"\} 1/,
    );
  });
});

Deno.test("WebhookServer refuses bad input with one line: 404, 405, 415, 400, 413", async () => {
  await withServer(async (call, _s, _c, registry) => {
    const status = async (path: string, init?: RequestInit) => {
      const r = await call(path, init);
      const body = await r.text();
      assert.ok(!body.includes("s3cr3t"), "the body is never echoed");
      return r.status;
    };
    assert.equal(await status("/admission/website/validating/nope/prod", post(review({}))), 404);
    assert.equal(await status("/admission/website/validating/image/prod"), 405);
    assert.equal(await status("/admission/website/validating/image/prod", post(review({}), "text/plain")), 415);
    assert.equal(await status("/admission/website/validating/image/prod", post("s3cr3t")), 400);
    const huge = JSON.stringify({ pad: "x".repeat(5 * 1024 * 1024) });
    assert.equal(await status("/admission/website/validating/image/prod", post(huge)), 413);
    assert.match(
      await registry.metrics(),
      /controller_runtime_webhook_requests_total\{webhook="unknown",code="404",cluster="unknown"\} 1/,
    );
  });
});

Deno.test("WebhookServer takes a rotated certificate with no failed request while requests run", async () => {
  await withServer(async (call, server, certs) => {
    const port = server.addr.port;
    const stop = new AbortController();
    const renewing = certs.start(stop.signal);
    const first = certs.current().cert;
    let ok = 0;
    const failures: string[] = [];
    const until = Date.now() + 4_000;
    while (Date.now() < until && certs.renewals < 2) {
      try {
        const r = await call("/admission/website/validating/image/prod", post(review({ image: "a:1" })));
        if (r.status === 200 && (await r.json()).response.allowed) ok++;
        else failures.push(String(r.status));
      } catch (err) {
        failures.push(String(err) + " " + String((err as Error).cause));
      }
    }
    stop.abort();
    await renewing;
    assert.ok(certs.renewals >= 2, `renewed ${certs.renewals} times`);
    assert.notEqual(certs.current().cert, first);
    assert.deepEqual(failures, []);
    assert.ok(ok > 10, `${ok} requests answered`);
    assert.equal(server.addr.port, port, "the port never changed");
  }, 1_500);
});
