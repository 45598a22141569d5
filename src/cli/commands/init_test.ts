// Unit tests for `operator-hub init`: what it writes, and the folders, groups and kinds it refuses.
import assert from "node:assert/strict";
import { join } from "node:path";
import { initMain, parseInitArgs, pluralOf } from "./init.ts";
import { HUB_JSR, TYPEBOX } from "./_init_templates.ts";

/** Runs initMain with stderr captured; answers the exit code, the printed lines and the error lines. */
async function init(argv: string[], cwd: string, checkout = "/src/operator-hub") {
  const printed: string[] = [];
  const errors: string[] = [];
  const error = console.error;
  console.error = (line: string) => void errors.push(line);
  try {
    const code = await initMain(argv, { cwd, checkout, print: (l) => void printed.push(l) });
    return { code, printed, errors };
  } finally {
    console.error = error;
  }
}

async function listed(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.isDirectory ? `${e.name}/` : e.name);
  return out.sort();
}

Deno.test("init writes deno.json with the hub's import, typebox and the tasks run, test and crd, linked to the checkout", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "init-unit-" });
  try {
    const { code, printed } = await init(["backups", "--group", "backups.example.com", "--kind", "BackupPolicy"], cwd);
    assert.equal(code, 0);
    const dir = join(cwd, "backups");
    assert.deepEqual(await listed(dir), [
      "Dockerfile",
      "README.md",
      "backup_policy_operator.ts",
      "backup_policy_operator_test.ts",
      "backup_policy_resource.ts",
      "deno.json",
      "deploy/",
      "main.ts",
    ]);
    assert.deepEqual(await listed(join(dir, "deploy")), ["deployment.yaml", "kustomization.yaml", "rbac.yaml"]);
    assert.ok(printed.includes("wrote backups/deno.json"));
    const json = JSON.parse(await Deno.readTextFile(join(dir, "deno.json")));
    assert.deepEqual(json.imports, { "@operator-hub/hub": HUB_JSR, "typebox": TYPEBOX });
    assert.equal(json.links.length, 1);
    assert.match(json.links[0], /^(\.\.\/)+src\/operator-hub$/, "a path relative to the project");
    assert.deepEqual(Object.keys(json.tasks).sort(), ["crd", "run", "test"]);
    assert.match(json.tasks.run, /main\.ts --operators none backup_policy_operator\.ts$/);
    assert.match(json.tasks.crd, /main\.ts crd backup_policy_resource\.ts$/);
    const resource = await Deno.readTextFile(join(dir, "backup_policy_resource.ts"));
    assert.match(resource, /import Type from "typebox";/);
    assert.match(resource, /import \{ defineResource \} from "@operator-hub\/hub\/resources";/);
    assert.match(resource, /group: "backups\.example\.com",[\s\S]*kind: "BackupPolicy",\n {2}plural: "backuppolicies"/);
    const test = await Deno.readTextFile(join(dir, "backup_policy_operator_test.ts"));
    assert.match(test, /from "@operator-hub\/hub\/testing";/);
    const rbac = await Deno.readTextFile(join(dir, "deploy/rbac.yaml"));
    assert.match(rbac, /resources: \["backuppolicies\/finalizers"\]\n {4}verbs: \["update"\]/, "adopt needs it");
    assert.match(await Deno.readTextFile(join(dir, "deploy/kustomization.yaml")), /namespace: backups\n/);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("init --hub jsr writes the JSR import alone, and --hub PATH links that checkout", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "init-unit-" });
  try {
    assert.equal((await init(["a", "--group=a.example.com", "--kind=Site", "--hub=jsr"], cwd)).code, 0);
    const a = JSON.parse(await Deno.readTextFile(join(cwd, "a/deno.json")));
    assert.equal(a.links, undefined);
    assert.equal(a.imports["@operator-hub/hub"], "jsr:@operator-hub/hub@^0.1.0");
    assert.equal((await init(["b", "--group", "a.example.com", "--kind", "Site", "--hub", "vendor/hub"], cwd)).code, 0);
    const b = JSON.parse(await Deno.readTextFile(join(cwd, "b/deno.json")));
    assert.deepEqual(b.links, ["../vendor/hub"]);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("init refuses a folder that is not empty, a group without a dot and a kind not UpperCamelCase: one line, exit 2, nothing written", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "init-unit-" });
  try {
    await Deno.mkdir(join(cwd, "full"));
    await Deno.writeTextFile(join(cwd, "full/notes.txt"), "mine");
    const full = await init(["full", "--group", "a.example.com", "--kind", "Site"], cwd);
    assert.equal(full.code, 2);
    assert.deepEqual(full.errors, [
      "operator-hub: error: init: full is not empty (it holds notes.txt): choose a new or empty folder",
    ]);
    assert.deepEqual(await listed(join(cwd, "full")), ["notes.txt"]);
    const cases: [string[], RegExp][] = [
      [["new", "--group", "example", "--kind", "Site"], /--group "example" has no dot/],
      [["new", "--group", "Bad_Group.com", "--kind", "Site"], /--group "Bad_Group.com" is not a lower-case DNS/],
      [["new", "--group", "a.example.com", "--kind", "site"], /--kind "site" is not UpperCamelCase/],
      [["new", "--group", "a.example.com", "--kind", "Web-Site"], /--kind "Web-Site" is not UpperCamelCase/],
      [["new", "--group", "a.example.com"], /--kind is required/],
      [["--group", "a.example.com", "--kind", "Site"], /no DIR given/],
      [["new", "--group", "a.example.com", "--kind", "Site", "--scope", "x"], /unknown flag "--scope"/],
      [["new", "--group", "a.example.com", "--kind", "Site", "--plural", "Sites"], /--plural "Sites"/],
    ];
    for (const [argv, message] of cases) {
      const r = await init(argv, cwd);
      assert.equal(r.code, 2, argv.join(" "));
      assert.equal(r.errors.length, 1, argv.join(" "));
      assert.match(r.errors[0], message);
      assert.ok(!r.errors[0].includes("\n"));
    }
    assert.deepEqual(await listed(cwd), ["full/"], "nothing written");
    await Deno.mkdir(join(cwd, "empty"));
    assert.equal((await init(["empty", "--group", "a.example.com", "--kind", "Site"], cwd)).code, 0, "empty is fine");
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("init --help prints the usage and exits 0", async () => {
  const r = await init(["--help"], "/nonexistent");
  assert.equal(r.code, 0);
  assert.match(r.printed.join("\n"), /Usage: operator-hub init DIR --group GROUP --kind KIND/);
});

Deno.test("parseInitArgs() takes --flag value and --flag=value; pluralOf() makes plurals as kubebuilder does", () => {
  assert.deepEqual(parseInitArgs(["d", "--group=g.io", "--kind", "K", "--plural", "ks"]), {
    dir: "d",
    group: "g.io",
    kind: "K",
    plural: "ks",
  });
  assert.equal(parseInitArgs(["d", "--group"]), "--group needs a value");
  assert.deepEqual(["policy", "class", "box", "site", "day"].map(pluralOf), [
    "policies",
    "classes",
    "boxes",
    "sites",
    "days",
  ]);
});

Deno.test("the typebox import init writes is the one the hub pins in its deno.json", async () => {
  const hub = JSON.parse(await Deno.readTextFile(new URL("../../../deno.json", import.meta.url)));
  assert.equal(TYPEBOX, hub.imports.typebox);
});

Deno.test("the project init writes is deno fmt and deno lint clean, a long kind too", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "init-unit-" });
  try {
    const kind = "VeryLongKindNameOfAnOperatorAuthor";
    assert.equal(
      (await init(["p", "--group", "a-long-group.subdomain.example.com", "--kind", kind, "--hub", "jsr"], cwd)).code,
      0,
    );
    for (const args of [["fmt", "--check"], ["lint"]]) {
      const out = await new Deno.Command(Deno.execPath(), {
        args,
        cwd: join(cwd, "p"),
        stdout: "null",
        stderr: "piped",
      })
        .output();
      assert.equal(out.code, 0, `deno ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
    }
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("init without --allow-write refuses in one line, exit 2, naming the flag", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "init-unit-" });
  try {
    const main = new URL("../main.ts", import.meta.url).pathname;
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        "--allow-read",
        "--allow-env",
        main,
        "init",
        "p",
        "--group",
        "a.example.com",
        "--kind",
        "Site",
      ],
      cwd,
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 2);
    const lines = new TextDecoder().decode(out.stderr).trim().split("\n");
    assert.equal(lines.length, 1, lines.join("\n"));
    assert.match(lines[0], /^operator-hub: error: init: cannot write p: .*--allow-write/);
    assert.deepEqual(await listed(cwd), []);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});
