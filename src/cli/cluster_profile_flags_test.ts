import assert from "node:assert/strict";
import {
  ALL_PROFILE_NAMESPACES,
  clusterProfileHelp,
  clusterProfileProvider,
  parseClusterProfileFlags,
} from "./cluster_profile_flags.ts";
import { FlagError } from "./flag_values.ts";
import { ALL_PROFILE_NAMESPACES as PROVIDER_ALL, ClusterRegistry } from "../hub/providers/mod.ts";
import { ConfigError, STRICT_CREDENTIAL_POLICY } from "../kube/mod.ts";
import { silentLogger } from "../util/mod.ts";

Deno.test("parseClusterProfileFlags reads namespaces (repeatable, comma list, '*' for all) and requires the provider file", () => {
  assert.equal(parseClusterProfileFlags({}), undefined);
  assert.deepEqual(
    parseClusterProfileFlags({ "cluster-profiles": ["a,b", "a"], "clusterprofile-provider-file": "p.json" }),
    { namespaces: ["a", "b"], providerFile: "p.json" },
  );
  assert.deepEqual(
    parseClusterProfileFlags({ "cluster-profiles": ["a", "*"], "clusterprofile-provider-file": "p.json" })?.namespaces,
    ["*"],
  );
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ "cluster-profiles": ["Bad_NS"], "clusterprofile-provider-file": "p" }, /invalid --cluster-profiles "Bad_NS"/],
    [{ "cluster-profiles": [""], "clusterprofile-provider-file": "p" }, /give a namespace name or '\*'/],
    [{ "cluster-profiles": ["a"] }, /--cluster-profiles needs --clusterprofile-provider-file/],
    [{ "clusterprofile-provider-file": "p" }, /--clusterprofile-provider-file needs --cluster-profiles/],
  ];
  for (const [values, want] of bad) {
    assert.throws(() => parseClusterProfileFlags(values), (e: Error) => e instanceof FlagError && want.test(e.message));
  }
});

Deno.test("clusterProfileHelp documents both flags within the help's width", () => {
  const text = clusterProfileHelp().join("\n");
  assert.match(text, /--cluster-profiles NS/);
  assert.match(text, /--clusterprofile-provider-file FILE/);
  for (const line of clusterProfileHelp()) assert.ok(line.length <= 110, line);
});

Deno.test("clusterProfileProvider refuses an unreadable or invalid provider file with one line (exit 2)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/bad.json`, `{"providers": []}`);
    const wiring = (providerFile: string) => ({
      flags: { namespaces: ["x"], providerFile },
      registry: new ClusterRegistry({ selection: "all", logger: silentLogger() }),
      home: { name: "home", server: "https://h", source: "t", auth: () => Promise.reject(new Error("unused")) },
      policy: STRICT_CREDENTIAL_POLICY,
      env: () => undefined,
      logger: silentLogger(),
    });
    await assert.rejects(() => clusterProfileProvider(wiring(`${dir}/missing.json`)), ConfigError, "cannot read");
    await assert.rejects(() => clusterProfileProvider(wiring(`${dir}/bad.json`)), /lists no providers/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the flag's every-namespace word is the provider's", () => {
  assert.equal(ALL_PROFILE_NAMESPACES, PROVIDER_ALL);
});
