// The status page in headless Chromium against a hub serving three real clusters, one of them down, through the
// protected port: the token prompt, the rendered rows, operator columns, sparklines, refresh without reload.
//
// STATUS_PAGE_PNG=docs/status-page.png deno test -A tests/production/status_page_test.ts  refreshes the README's image.
// deno-lint-ignore-file no-explicit-any -- DOM readings and /status JSON are checked by the test itself.

import assert from "node:assert/strict";
import { names } from "../../dev/support/cluster_api.ts";
import { FaultApiserver, tempDir } from "../../dev/support/fault_cluster.ts";
import { kubeconfigText } from "../../dev/support/kubeconfig_text.ts";
import { headlessChromium } from "../support/headless_chromium.ts";
import { KUBECONFIG_PATH, testNamespace } from "../support/mod.ts";
import { localApi, localEndpoint } from "../../dev/support/cluster_api.ts";
import { HubProcess } from "../../dev/support/hub_process.ts";
import { curl, readerAccount, startProtectedHub, waitProbe } from "./_protected_support.ts";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Reads the table as the user sees it. */
function readTable(): any {
  // Runs in the page (page.evaluate); Deno's type checker has no DOM types, hence `any`.
  const document = (globalThis as any).document;
  const cols: string[] = [...document.querySelectorAll("#head th")].map((th: any) => th.getAttribute("data-col"));
  const rows = [...document.querySelectorAll("#rows tr")].map((tr: any) => {
    const cell = (col: string) => tr.querySelector(`td[data-col="${col}"]`);
    const spark = cell("rate")?.querySelector("svg.spark");
    const points = spark?.querySelector("polyline")?.getAttribute("points")?.trim() ?? "";
    return {
      cluster: tr.getAttribute("data-cluster"),
      clusterText: cell("cluster")?.textContent,
      state: cell("state")?.querySelector(".state")?.getAttribute("data-state"),
      objects: cell("objects")?.textContent,
      queue: cell("queue")?.textContent,
      lastEvent: cell("lastEvent")?.textContent,
      connects: cell("connects")?.textContent,
      lastError: cell("lastError")?.querySelector(".error")?.textContent ?? "",
      elementsInError: cell("lastError")?.querySelectorAll("*:not(div)").length,
      operators: Object.fromEntries(
        cols.filter((c) => c?.startsWith("op:")).map((c) => [
          c!.slice(3),
          cell(c!)?.querySelector(".state")?.getAttribute("data-state") ?? null,
        ]),
      ),
      sparkPoints: Number(spark?.getAttribute("data-points") ?? -1),
      polylinePoints: points ? points.split(/\s+/).length : 0,
    };
  });
  return { cols, rows, status: document.getElementById("hub-status")?.textContent };
}

Deno.test("The status page, opened in headless Chromium on the protected port, asks for a token, then shows one row per cluster with its state, operator columns and a sparkline, and refreshes without reloading while one cluster is down", async () => {
  const ns = await testNamespace("page", { contexts: ["prod", "staging"] });
  const dir = await tempDir("page");
  const edge = await FaultApiserver.start({ name: "edge" });
  const reader = await readerAccount("prod", ns.name, "page-reader", { metricsReader: true });
  const prod = localApi("prod");
  const staging = localApi("staging");
  const edgeApi = edge.api("edge");
  let browser: Awaited<ReturnType<typeof headlessChromium>> | undefined;
  const kubeconfig = await dir.write("kubeconfig.yaml", kubeconfigText([edge.context("edge")]));
  await edgeApi.createNamespace(ns.name);
  await edgeApi.createUuids(ns.name, names("e", 4));
  const { hub, url } = startProtectedHub({
    clusters: ["prod", "staging", "edge"],
    kubeconfigs: [KUBECONFIG_PATH, kubeconfig],
    args: ["--namespace", ns.name, "--request-timeout", "3"],
  });
  const admin = localEndpoint("prod").token;
  const status = async () => JSON.parse((await curl(`${url}/status`, admin)).body);
  try {
    await waitProbe(hub, (s) => s === 200, "all three clusters ready");
    // Work spread over time, so the sparklines have something to draw; then the edge cluster goes down.
    for (let wave = 0; wave < 3; wave++) {
      if (wave > 0) await new Promise((r) => setTimeout(r, 6_000));
      await prod.createUuids(ns.name, names(`p${wave}-`, 10));
      await staging.createUuids(ns.name, names(`s${wave}-`, 4));
    }
    await edge.kill();
    const deadline = Date.now() + 120_000;
    let doc: any;
    for (;;) {
      doc = await status();
      const prodRates: number[] = doc.reconcileHistory?.clusters?.prod ?? [];
      if (
        doc.clusters.edge.state === "unreachable" && doc.clusters.prod.objects === 30 &&
        doc.clusters.staging.objects === 12 && prodRates.length >= 4 && prodRates.some((r) => r > 0)
      ) break;
      if (Date.now() > deadline) throw new Error(`hang guard: page preconditions not met: ${JSON.stringify(doc)}`);
      await new Promise((r) => setTimeout(r, 1000));
    }

    browser = await headlessChromium({ width: 1280, height: 280 });
    const page = await browser.context.newPage();
    const origins = new Set<string>();
    page.on("request", (r) => origins.add(new URL(r.url()).origin));
    const first = await page.goto(`${url}/status`);
    assert.equal(first?.status(), 401, "a browser without a token gets the 401 page");
    await page.waitForSelector("#auth:not([hidden])");
    assert.equal(await page.locator("#rows tr").count(), 0, "the 401 page shows no data");
    await page.fill("#token", await reader.token());
    await page.click("#auth button[type=submit]");
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll("#rows tr").length === 3);
    assert.ok(await page.evaluate(() => sessionStorage.getItem("operator-hub-token")?.length), "token kept");
    await page.evaluate(() => (globalThis as any).__sameDocument = 42);

    const seen = await page.evaluate(readTable);
    doc = await status();
    assert.deepEqual(seen.rows.map((r: any) => r.cluster), ["edge", "prod", "staging"]);
    assert.equal(seen.status, doc.status);
    const operators = [...new Set(Object.values(doc.clusters).flatMap((c: any) => Object.keys(c.operators ?? {})))]
      .sort();
    assert.deepEqual(seen.cols.filter((c: string) => c.startsWith("op:")), operators.map((o) => `op:${o}`));
    for (const col of ["cluster", "state", "objects", "queue", "lastEvent", "connects", "rate", "lastError"]) {
      assert.ok(seen.cols.includes(col), `column ${col}`);
    }
    for (const row of seen.rows) {
      const c = doc.clusters[row.cluster];
      assert.equal(row.state, c.state, `${row.cluster} state`);
      assert.equal(row.clusterText, row.cluster);
      for (const op of operators) {
        assert.equal(row.operators[op], c.operators?.[op]?.state ?? null, `${row.cluster}/${op}`);
      }
      assert.ok(row.sparkPoints >= 0, `${row.cluster} has a sparkline`);
      assert.equal(row.polylinePoints, row.sparkPoints, `${row.cluster}: one polyline point per rate`);
      assert.equal(row.elementsInError, 0, "error text is text");
    }
    const byName = Object.fromEntries(seen.rows.map((r: any) => [r.cluster, r]));
    assert.equal(byName.edge.state, "unreachable");
    assert.equal(byName.edge.lastError, doc.clusters.edge.lastError);
    assert.match(byName.edge.lastError, /refused|cannot reach/i);
    assert.equal(byName.prod.state, "watching");
    assert.equal(byName.prod.objects, "30");
    assert.equal(byName.staging.objects, "12");
    assert.ok(byName.prod.sparkPoints >= 4, `prod sparkline has ${byName.prod.sparkPoints} points`);

    // More work in staging: the table follows without a reload.
    await staging.createUuids(ns.name, names("t", 3));
    await page.waitForFunction(
      () =>
        (globalThis as any).document.querySelector('#rows tr[data-cluster="staging"] td[data-col="objects"]')
          ?.textContent === "15",
      undefined,
      { timeout: 60_000 },
    );
    assert.equal(await page.evaluate(() => (globalThis as any).__sameDocument), 42, "refreshed without a reload");
    assert.deepEqual([...origins], [new URL(url).origin], "no request left the hub's origin");

    const png = await page.screenshot({ fullPage: true });
    assert.deepEqual([...png.subarray(0, 8)], PNG_SIGNATURE);
    assert.ok(png.length > 10_000, `a screenshot of ${png.length} bytes`);
    const out = Deno.env.get("STATUS_PAGE_PNG");
    if (out) await Deno.writeFile(out, png);
    assert.equal((await hub.stop()).code, 0, hub.tail());
  } finally {
    await browser?.close();
    await hub.kill();
    prod.close();
    staging.close();
    edgeApi.close();
    await edge.destroy();
    await reader.cleanup();
    await dir.remove();
    await ns.cleanup();
  }
});

Deno.test("Without --metrics-bind-address the page is served on the liveness port without a token, and shows a cluster name full of HTML as text", async () => {
  const dir = await tempDir("page-local");
  const hostile = `<img src=x onerror="globalThis.__pwned=1">&amp;"'`;
  const prod = localEndpoint("prod");
  const kubeconfig = await dir.write(
    "kubeconfig.yaml",
    kubeconfigText([{ name: hostile, server: prod.server, caPem: prod.caPem, user: { token: prod.token } }]),
  );
  const hub = HubProcess.start({ clusters: [hostile], kubeconfigs: [kubeconfig], args: ["--namespace", "default"] });
  let browser: Awaited<ReturnType<typeof headlessChromium>> | undefined;
  try {
    await hub.waitReady(90_000);
    browser = await headlessChromium();
    const page = await browser.context.newPage();
    const res = await page.goto(`http://127.0.0.1:${hub.port}/status`);
    assert.equal(res?.status(), 200);
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll("#rows tr").length === 1);
    const seen = await page.evaluate(readTable);
    assert.equal(seen.rows[0].clusterText, hostile, "the name is shown as it is");
    assert.equal(seen.rows[0].state, "watching");
    assert.equal(await page.evaluate(() => (globalThis as any).__pwned), undefined, "no markup from the data ran");
    assert.equal(await page.locator("img").count(), 0);
    assert.equal((await hub.stop()).code, 0, hub.tail());
  } finally {
    await browser?.close();
    await hub.kill();
    await dir.remove();
  }
});

Deno.test("With more clusters than /status lists, the page says how many of how many it shows and walks the pages with next and first", async () => {
  const hub = HubProcess.start({ clusters: ["prod", "staging", "dev"], args: ["--namespace", "default"] });
  let browser: Awaited<ReturnType<typeof headlessChromium>> | undefined;
  try {
    await hub.waitReady(90_000);
    browser = await headlessChromium();
    const page = await browser.context.newPage();
    const rows = () =>
      page.evaluate(() =>
        [...(globalThis as any).document.querySelectorAll("#rows tr")].map((tr: any) => tr.getAttribute("data-cluster"))
      );
    const text = (id: string) => page.evaluate((i) => (globalThis as any).document.getElementById(i)?.textContent, id);
    const hidden = (id: string) => page.evaluate((i) => (globalThis as any).document.getElementById(i)?.hidden, id);
    assert.equal((await page.goto(`http://127.0.0.1:${hub.port}/status?limit=2`))?.status(), 200);
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll("#rows tr").length === 2);
    assert.deepEqual(await rows(), ["dev", "prod"]);
    assert.equal(await text("cluster-count"), "2 of 3 clusters");
    assert.match(await text("state-counts") ?? "", /^3 watching$/);
    assert.match(await text("range") ?? "", /^showing 2 of 3 clusters, by name \(dev … prod\)$/);
    assert.equal(await hidden("next"), false);
    assert.equal(await hidden("first"), true);
    await page.click("#next");
    await page.waitForFunction(() =>
      (globalThis as any).document.querySelector("#rows tr")?.getAttribute("data-cluster") === "staging"
    );
    assert.deepEqual(await rows(), ["staging"]);
    assert.equal(await text("cluster-count"), "1 of 3 clusters");
    assert.equal(await hidden("next"), true);
    assert.equal(await hidden("first"), false);
    await page.click("#first");
    await page.waitForFunction(() =>
      (globalThis as any).document.querySelector("#rows tr")?.getAttribute("data-cluster") === "dev"
    );
    assert.deepEqual(await rows(), ["dev", "prod"]);
    assert.equal((await hub.stop()).code, 0, hub.tail());
  } finally {
    await browser?.close();
    await hub.kill();
  }
});
