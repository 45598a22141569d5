// Kopf's --liveness URL.
import assert from "node:assert/strict";
import { FlagError } from "./flag_values.ts";
import { livenessHelp, parseLiveness } from "./liveness_flag.ts";

Deno.test("parseLiveness() accepts Kopf's form and rejects other schemes and junk", () => {
  assert.deepEqual(parseLiveness("http://0.0.0.0:8080/healthz"), { hostname: "0.0.0.0", port: 8080, path: "/healthz" });
  assert.deepEqual(parseLiveness("http://[::1]:9000/healthz"), { hostname: "::1", port: 9000, path: "/healthz" });
  assert.throws(() => parseLiveness("https://0.0.0.0:8080/healthz"), FlagError);
  assert.throws(() => parseLiveness("not a url"), FlagError);
});

Deno.test("livenessHelp() says when /healthz fails and when /readyz turns 200", () => {
  const help = livenessHelp().join("\n").replace(/\s+/g, " ");
  assert.match(help, /\/healthz fails only when the hub is wedged/);
  assert.match(
    help,
    /\/readyz is 200 once the home cluster and the clusters the command line names listed, and every cluster provider read its sources/,
  );
});
