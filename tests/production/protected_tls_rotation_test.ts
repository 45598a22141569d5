// The protected port re-reads its certificate files when they are rotated, and keeps serving through a bad rotation.
// In-process serveProtected() with real HTTPS, reviews sent to the real local prod apiserver.

import assert from "node:assert/strict";
import { Hub, RequestAuthorizer, serveProtected } from "../../src/hub/mod.ts";
import { KubeClient, loadContexts } from "../../src/kube/mod.ts";
import { uuidOperator } from "../../src/operators/uuid/mod.ts";
import { Logger } from "../../src/util/mod.ts";
import { tempDir } from "../../dev/support/fault_cluster.ts";
import { freePort } from "../../dev/support/hub_process.ts";
import { adminToken, KUBECONFIG_PATH, requireClusters } from "../support/mod.ts";
import { opensslPair, servedCommonName } from "./_protected_support.ts";

/** Status of one authorised scrape that trusts only `ca`, or the connection error's text. */
async function scrapeTrusting(url: string, ca: string, token: string): Promise<number | string> {
  const client = Deno.createHttpClient({ caCerts: [ca] });
  try {
    const res = await fetch(`${url}/metrics`, { client, headers: { authorization: `Bearer ${token}` } });
    await res.body?.cancel();
    return res.status;
  } catch (err) {
    return String((err as Error).cause ?? err);
  } finally {
    client.close();
  }
}

async function until<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await fn();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`hang guard: ${what} not seen within ${timeoutMs} ms; last: ${String(last)}`);
}

Deno.test("A rotated certificate pair is served without a restart, a mismatched pair is refused while the previous one keeps serving", async () => {
  requireClusters();
  const dir = await tempDir("tls-rotation");
  const lines: string[] = [];
  const logger = new Logger({ level: "info", format: "json", write: (line) => lines.push(line) });
  const catalog = await loadContexts({ files: [KUBECONFIG_PATH], env: () => undefined, cwd: Deno.cwd() });
  const [home] = catalog.select(["prod"], {});
  const api = new KubeClient(home, { logger });
  const hub = new Hub({ operators: [uuidOperator()], logger });
  const first = await opensslPair(dir.path, "first", "rotation-first");
  const second = await opensslPair(dir.path, "second", "rotation-second");
  const certFile = `${dir.path}/tls.crt`;
  const keyFile = `${dir.path}/tls.key`;
  await Deno.writeTextFile(certFile, first.cert);
  await Deno.writeTextFile(keyFile, first.key);
  const port = freePort();
  const url = `https://127.0.0.1:${port}`;
  const stop = new AbortController();
  const served = serveProtected(hub, {
    hostname: "127.0.0.1",
    port,
    tls: { cert: first.cert, key: first.key },
    tlsFiles: { certFile, keyFile },
    tlsPollMs: 200,
    authorizer: new RequestAuthorizer({ api, registry: hub.metrics.registry, logger }),
    logger,
  }, stop.signal);
  const admin = adminToken("prod");
  try {
    assert.equal(await scrapeTrusting(url, first.ca, admin), 200);
    assert.match(String(await scrapeTrusting(url, second.ca, admin)), /certificate|UnknownIssuer/i);

    // A half-done rotation (new certificate, old key) is refused; the first pair keeps serving.
    await Deno.writeTextFile(certFile, second.cert);
    await until("the mismatched pair refused", () => Promise.resolve(lines.join("\n")), (t) => t.includes("refused"));
    assert.equal(await scrapeTrusting(url, first.ca, admin), 200, "still serving the first certificate");

    // The key follows: the second pair is served on the same port.
    await Deno.writeTextFile(keyFile, second.key);
    await until("the second certificate served", () => scrapeTrusting(url, second.ca, admin), (s) => s === 200);
    assert.equal(await servedCommonName("127.0.0.1", port), "rotation-second");
    assert.match(String(await scrapeTrusting(url, first.ca, admin)), /certificate|UnknownIssuer/i);
    assert.equal(await scrapeTrusting(url, second.ca, "not-a-real-token"), 401, "still checking every request");
    assert.ok(lines.some((l) => l.includes("TLS certificate rotated")));
  } finally {
    stop.abort();
    await served;
    api.close();
    await dir.remove();
  }
});
