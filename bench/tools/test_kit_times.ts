// The test kit's first-run and warm-run times: the control-plane binaries from the Go sources fetched over HTTP (as a
// published package reads them), built into `$OPERATOR_HUB_CACHE` when they are not there yet, then two clusters up
// (apiservers ready, controller managers healthy) and disposed. Prints one `figure:` line per phase.
//
//   OPERATOR_HUB_CACHE=$(mktemp -d) deno run -A bench/tools/test_kit_times.ts   # first run: builds (Go cache warm?)
//   OPERATOR_HUB_CACHE=<the same folder> deno run -A bench/tools/test_kit_times.ts   # warm run
//
// It builds with the machine's Go build cache: a first run on a fresh machine also downloads the modules and compiles
// everything, several minutes more. Never run it without OPERATOR_HUB_CACHE: it would fill the user cache.

import { kubeBinaries, testEnv } from "../../testing.ts";

if (!Deno.env.get("OPERATOR_HUB_CACHE")) {
  console.error("set OPERATOR_HUB_CACHE to a folder (an empty one for a first run)");
  Deno.exit(2);
}
const goDir = new URL("../../src/testing/go/", import.meta.url).pathname;
const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
  const path = new URL(request.url).pathname.replace(/^\/+/, "");
  if (path.includes("..")) return new Response("refused", { status: 400 });
  try {
    return new Response(await Deno.readFile(goDir + path));
  } catch {
    return new Response("not found", { status: 404 });
  }
});
const started = performance.now();
const seconds = () => ((performance.now() - started) / 1000).toFixed(1);
const bins = await kubeBinaries({ source: new URL(`http://127.0.0.1:${server.addr.port}/`), prebuilt: "" });
await server.shutdown();
console.log(`figure: binaries ${bins.cached ? "cached" : "built"} ${seconds()} s (${bins.dir})`);
{
  await using env = await testEnv({ clusters: ["east", "west"], binaries: bins.dir });
  console.log(`figure: two clusters ready ${seconds()} s`);
  await env.namespace();
}
console.log(`figure: disposed, total ${seconds()} s`);
