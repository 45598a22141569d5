// The command line's module graph: optional features' modules are reached only through dynamic imports (loaded when
// their flags ask for them), yet stay in the graph `deno compile` bundles.

import assert from "node:assert/strict";

const MAIN = new URL("./main.ts", import.meta.url).href;
const SRC = new URL("../", import.meta.url).href;

/** Each flag's modules: none may load at start; each must stay reachable for `deno compile`. */
const FEATURES: Record<string, string[]> = {
  "--webhook-bind-address": [
    "cli/startup/admission_setup.ts",
    "hub/admission/mod.ts",
    "hub/admission/webhook_server.ts",
  ],
  "--cluster-secrets": ["hub/providers/sources/secret_provider.ts"],
  "--cluster-api": ["hub/providers/sources/cluster_api_provider.ts"],
  "--cluster-profiles": [
    "hub/providers/sources/cluster_profile_provider.ts",
    "hub/providers/sources/cluster_profile_access.ts",
  ],
  "--metrics-bind-address": [
    "hub/http/protected_server.ts",
    "hub/http/request_auth.ts",
    "hub/http/tls_material.ts",
  ],
  "--shard": ["hub/shards/shard_coordinator.ts"],
  "--cleanup-on-remove": ["hub/cluster/cleanup_on_remove.ts", "hub/cluster/finalizer_cleanup.ts"],
  "cleanup": ["cli/commands/cleanup.ts"],
  "init": ["cli/commands/init.ts", "cli/commands/_init_templates.ts"],
  "(barrels)": ["hub/mod.ts", "hub/http/mod.ts", "hub/providers/mod.ts", "hub/shards/mod.ts"],
};

interface ModuleGraph {
  roots: string[];
  modules: { specifier: string; dependencies?: { code?: { specifier: string }; isDynamic?: boolean }[] }[];
}

/** `deno info --json` of main.ts: every module, with static and dynamic imports told apart. */
async function graph(): Promise<ModuleGraph> {
  const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json", MAIN], stdout: "piped" }).output();
  assert.equal(out.code, 0, "deno info failed");
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** The modules a start evaluates whatever its flags: the closure of main.ts over static imports. */
function staticClosure(g: ModuleGraph): Set<string> {
  const byName = new Map(g.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const todo = [MAIN];
  while (todo.length) {
    const s = todo.pop()!;
    if (seen.has(s)) continue;
    seen.add(s);
    for (const d of byName.get(s)?.dependencies ?? []) if (d.code && !d.isDynamic) todo.push(d.code.specifier);
  }
  return seen;
}

Deno.test("a start without feature flags evaluates none of the optional features' modules", async () => {
  const loaded = staticClosure(await graph());
  assert.ok(loaded.has(`${SRC}hub/hub.ts`), "the closure should hold the Hub itself");
  for (const [flag, modules] of Object.entries(FEATURES)) {
    const found = modules.filter((m) => loaded.has(SRC + m));
    assert.deepEqual(found, [], `${flag}: imported at start whether or not the flag is given`);
  }
});

Deno.test("every optional feature's module stays in the graph deno compile bundles", async () => {
  const all = new Set((await graph()).modules.map((m) => m.specifier));
  for (const [flag, modules] of Object.entries(FEATURES)) {
    if (flag === "(barrels)") continue;
    const missing = modules.filter((m) => !all.has(SRC + m));
    assert.deepEqual(missing, [], `${flag}: not reachable from main.ts, so a compiled binary would lack it`);
  }
});
