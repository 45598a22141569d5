// Typed resources: a handler, client, index or admission handler of a defined resource or a typed kind sees typed
// objects (checked at compile time here), and a handler that misuses a field's type fails `deno check`.

import assert from "node:assert/strict";
import Type from "typebox";
import { defineResource, type ObjectOf } from "../resources/mod.ts";
import type { ResourceType } from "../kube/mod.ts";
import type { Operator, ResourceClient, StoredObject } from "../runtime/mod.ts";
import { defineHandlers } from "./handlers.ts";
import { defineOperator } from "./define_operator.ts";
import { kinds } from "./kinds.ts";

/** Compiles only when `A` and `B` are the same type. */
type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends (<X>() => X extends B ? 1 : 2) ? true : false;
const same = <A, B>(_proof: Equal<A, B>) => {};

const Site = defineResource({
  group: "examples.operator-hub.dev",
  version: "v1",
  kind: "Site",
  plural: "sites",
  spec: Type.Object({ image: Type.String(), replicas: Type.Optional(Type.Integer()) }),
  status: Type.Object({ url: Type.String(), ready: Type.Boolean() }),
});
const plain = { group: "examples.operator-hub.dev", version: "v1", kind: "Site", plural: "sites" };

Deno.test("a handler of a defined resource sees its spec, status and body typed", () => {
  const op = defineHandlers({
    name: "site",
    resource: Site,
    create: ({ spec, status, body }) => {
      same<typeof spec.image, string>(true);
      same<typeof spec.replicas, number | undefined>(true);
      same<typeof status.url, string | undefined>(true);
      same<typeof body.spec.image, string>(true);
      same<typeof body.metadata.name, string>(true);
      return { url: `http://${spec.image}` };
    },
    indexes: { byImage: (site) => ({ [site.spec.image]: site.metadata.name }) },
    validate: ({ spec }) => same<typeof spec.image, string>(true),
    mutate: ({ spec }) => {
      spec.replicas ??= 1;
    },
  });
  // A typed operator is still an Operator the hub takes.
  const operators: Operator[] = [op];
  assert.equal(operators[0].resource.plural, "sites");
});

Deno.test("what a handler of a defined resource returns is checked against its status schema", () => {
  defineHandlers({
    name: "site",
    resource: Site,
    // @ts-expect-error: status.url is a string
    create: () => ({ url: 1 }),
  });
  defineHandlers({
    name: "site",
    resource: Site,
    // @ts-expect-error: the status schema has no field `uri`
    create: () => ({ uri: "http://site" }),
  });
  defineHandlers({ name: "site", resource: Site, timers: { intervalMs: 1000, fn: () => ({ ready: true }) } });
});

Deno.test("a plain resource keeps untyped handlers, and an explicit object type still applies", () => {
  defineHandlers({
    name: "site",
    resource: plain,
    create: ({ spec, status, body }) => {
      same<typeof spec, Record<string, unknown>>(true);
      same<typeof status, Record<string, unknown>>(true);
      same<typeof body, StoredObject>(true);
    },
  });
  interface Explicit extends StoredObject {
    spec?: { name?: string };
  }
  defineHandlers<Explicit>({
    name: "x",
    resource: plain,
    create: ({ spec }) => same<typeof spec.name, string | undefined>(true),
  });
  const bare: ResourceType = plain;
  defineHandlers({ name: "y", resource: bare, create: ({ spec }) => same<typeof spec, Record<string, unknown>>(true) });
});

Deno.test("clientFor of a typed kind or a defined resource returns a client of its objects", () => {
  defineHandlers({
    name: "site",
    resource: Site,
    uses: [{ type: kinds.ConfigMap, verbs: ["get"] }, { type: Site, verbs: ["get"] }],
    reconcile: async ({ clientFor }) => {
      const cm = await clientFor(kinds.ConfigMap).get({ namespace: "a", name: "b" });
      same<typeof cm.data, { [key: string]: string } | undefined>(true);
      same<typeof cm.metadata.name, string>(true);
      const deployment = await clientFor(kinds.Deployment).get({ namespace: "a", name: "b" });
      same<typeof deployment.spec, import("kubernetes-models/apps/v1/Deployment").IDeployment["spec"]>(true);
      const site = await clientFor(Site, "staging").get({ namespace: "a", name: "b" });
      same<typeof site.spec.image, string>(true);
      const untyped = clientFor(plain);
      same<typeof untyped, ResourceClient<StoredObject>>(true);
    },
  });
});

Deno.test("defineOperator's client, other clusters' clients and pre-check see typed objects", () => {
  defineOperator({
    name: "site",
    resource: Site,
    uses: [{ type: kinds.Secret, verbs: ["get"] }],
    needsReconcile: (site) => site.status?.ready !== true,
    async reconcile(request, { client, cluster }) {
      const site = client.cached(request);
      same<typeof site, ObjectOf<typeof Site> | undefined>(true);
      if (site) same<typeof site.spec.image, string>(true);
      const secret = await cluster("staging")?.client(kinds.Secret).get(request);
      if (secret) same<typeof secret.data, { [key: string]: string } | undefined>(true);
    },
  });
});

Deno.test("daemons and admission handlers of a defined resource see it typed", () => {
  defineHandlers({
    name: "site",
    resource: Site,
    daemons: {
      fn: ({ spec, status }) => {
        same<typeof spec.image, string>(true);
        same<typeof status.ready, boolean | undefined>(true);
      },
    },
    validate: ({ object, oldObject }) => {
      same<typeof object.spec.replicas, number | undefined>(true);
      same<typeof oldObject, ObjectOf<typeof Site> | undefined>(true);
    },
  });
});

Deno.test("the typed kinds keep their names and scope", () => {
  assert.deepEqual({ ...kinds.ConfigMap }, {
    group: "",
    version: "v1",
    kind: "ConfigMap",
    plural: "configmaps",
    namespaced: true,
  });
  assert.equal(kinds.Namespace.namespaced, false);
});

/**
 * Handler modules written inside the repository (so their imports resolve), checked by one `deno check`: whether it
 * passed, and what it said.
 */
async function denoCheck(handlers: Record<string, string>): Promise<{ ok: boolean; output: string }> {
  const root = new URL("../../", import.meta.url).pathname;
  // Outside the folders `deno task check` walks, so a check run beside this test never sees the wrong handler.
  const dir = await Deno.makeTempDir({ dir: root, prefix: ".typed_resources_" });
  try {
    const files = [];
    for (const [name, handler] of Object.entries(handlers)) {
      files.push(`${dir}/${name}.ts`);
      await Deno.writeTextFile(
        files.at(-1)!,
        `import Type from "typebox";\n` +
          `import { defineResource } from "../src/resources/mod.ts";\n` +
          `import { defineHandlers } from "../src/sdk/handlers.ts";\n` +
          `const Website = defineResource({ group: "examples.operator-hub.dev", version: "v1", kind: "Website", ` +
          `plural: "websites", spec: Type.Object({ image: Type.String() }) });\n` +
          `export const op = defineHandlers({ name: "website", resource: Website, create: ({ spec }) => {\n` +
          `  ${handler}\n} });\n`,
      );
    }
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--quiet", "--config", `${root}deno.json`, ...files],
      cwd: root,
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    return { ok: out.success, output: new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a handler that reads spec.image as a number fails deno check, naming image; read as a string it passes", async () => {
  const { ok, output } = await denoCheck({
    wrong: "const port: number = spec.image; return { port };",
    right: "const image: string = spec.image; return { image };",
  });
  assert.equal(ok, false, output);
  assert.match(output, /TS2322 \[ERROR\]: Type 'string' is not assignable to type 'number'/);
  assert.match(output, /const port: number = spec\.image;/);
  assert.match(output, /wrong\.ts:6:\d+/);
  assert.equal(output.match(/TS\d+ \[ERROR\]/g)?.length, 1, output);
  assert.doesNotMatch(output, /right\.ts/);
});
