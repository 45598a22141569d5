// Tests of loadFeature(): a feature's module on first use, and one clear line when it cannot be loaded.

import assert from "node:assert/strict";
import { FeatureLoadError, loadFeature } from "./feature_import.ts";

Deno.test("loadFeature() returns the module its import loads", async () => {
  const mod = await loadFeature("--shard", () => import("./usage_error.ts"));
  assert.equal(typeof mod.UsageError, "function");
});

Deno.test("loadFeature() turns a module that cannot load into one FeatureLoadError line naming the flag", async () => {
  const missing = "./no_such_module.ts";
  const err = await loadFeature("--cluster-secrets", () => import(missing)).catch((e) => e);
  assert.ok(err instanceof FeatureLoadError);
  assert.equal(err.name, "FeatureLoadError");
  assert.match(err.message, /^cannot load the module of --cluster-secrets: /);
  assert.ok(!err.message.includes("\n"), err.message);
  assert.ok(err.cause);
});
