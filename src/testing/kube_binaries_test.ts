import assert from "node:assert/strict";
import {
  kitCacheRoot,
  KUBE_BINARY_NAMES,
  KUBE_SOURCE,
  KUBE_SOURCE_FILES,
  kubeBinaries,
  KubeBuildError,
  readSources,
  sourceStamp,
  versionLdflags,
} from "./kube_binaries.ts";

const env = (vars: Record<string, string>) => (name: string) => vars[name];

Deno.test("the kit's cache folder is $OPERATOR_HUB_CACHE, else $XDG_CACHE_HOME/operator-hub, else ~/.cache/operator-hub", () => {
  const all = { OPERATOR_HUB_CACHE: "/c/own/", XDG_CACHE_HOME: "/c/xdg", HOME: "/home/u" };
  assert.equal(kitCacheRoot(env(all)), "/c/own");
  assert.equal(kitCacheRoot(env({ XDG_CACHE_HOME: "/c/xdg/", HOME: "/home/u" })), "/c/xdg/operator-hub");
  assert.equal(kitCacheRoot(env({ HOME: "/home/u" })), "/home/u/.cache/operator-hub");
  assert.throws(() => kitCacheRoot(env({})), KubeBuildError);
});

Deno.test("KUBE_SOURCE_FILES lists every file of the shipped Go module (go.mod, go.sum, cmd/**/*.go), sorted", async () => {
  const dir = decodeURIComponent(KUBE_SOURCE.pathname);
  const found = ["go.mod", "go.sum"];
  const walk = (rel: string) => {
    for (const e of Deno.readDirSync(`${dir}${rel}`)) {
      if (e.isDirectory) walk(`${rel}/${e.name}`);
      else if (e.name.endsWith(".go")) found.push(`${rel}/${e.name}`.replace(/^\//, ""));
    }
  };
  walk("cmd");
  assert.deepEqual([...KUBE_SOURCE_FILES], found.sort());
  for (const name of KUBE_BINARY_NAMES) assert.ok(KUBE_SOURCE_FILES.includes(`cmd/${name}/main.go`), name);
  const files = await readSources();
  assert.deepEqual(files.map((f) => f.path), KUBE_SOURCE_FILES);
  assert.ok(files.every((f) => f.bytes.length > 0));
});

Deno.test("the stamp changes with any source byte, the ldflags or the Go version, and not with the files' order", async () => {
  const a = { path: "go.mod", bytes: new TextEncoder().encode("module x\n") };
  const b = { path: "cmd/x/main.go", bytes: new TextEncoder().encode("package main\n") };
  const base = await sourceStamp([a, b], "-s", "go1.26.8");
  assert.match(base, /^[0-9a-f]{64}$/);
  assert.equal(await sourceStamp([b, a], "-s", "go1.26.8"), base);
  assert.notEqual(
    await sourceStamp([a, { ...b, bytes: new TextEncoder().encode("package main \n") }], "-s", "go1.26.8"),
    base,
  );
  assert.notEqual(await sourceStamp([a, b], "-w", "go1.26.8"), base);
  assert.notEqual(await sourceStamp([a, b], "-s", "go1.26.9"), base);
  // A file's content cannot pass for a file boundary: the path is part of what is hashed.
  assert.notEqual(await sourceStamp([{ ...a, path: "go.sum" }, b], "-s", "go1.26.8"), base);
});

Deno.test("prebuilt binaries are used as they are, and a folder that lacks one is refused naming what is missing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (const name of KUBE_BINARY_NAMES.slice(0, 2)) await Deno.writeTextFile(`${dir}/${name}`, "", { mode: 0o755 });
    const err = await kubeBinaries({ prebuilt: dir }).catch((e) => e);
    assert.ok(err instanceof KubeBuildError);
    assert.match(err.message, new RegExp(`${dir} .* lacks executable etcd, local-pki`));
    for (const name of KUBE_BINARY_NAMES) await Deno.writeTextFile(`${dir}/${name}`, "", { mode: 0o755 });
    const viaEnv = await kubeBinaries({ env: env({ OPERATOR_HUB_KUBE_BIN: dir }) });
    assert.deepEqual(viaEnv, {
      dir,
      apiserver: `${dir}/kube-apiserver`,
      controllerManager: `${dir}/kube-controller-manager`,
      etcd: `${dir}/etcd`,
      pki: `${dir}/local-pki`,
      cached: true,
      buildSeconds: 0,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cached binaries whose stamp matches are found in the stamp-keyed cache folder without building", async () => {
  const root = await Deno.makeTempDir();
  try {
    const go = new TextDecoder().decode(
      (await new Deno.Command("go", { args: ["env", "GOVERSION"], stdout: "piped" }).output()).stdout,
    ).trim();
    const stamp = await sourceStamp(await readSources(), versionLdflags(), go);
    const dir = `${root}/kube/v1.36.3-${stamp.slice(0, 16)}`;
    await Deno.mkdir(dir, { recursive: true });
    for (const name of KUBE_BINARY_NAMES) await Deno.writeTextFile(`${dir}/${name}`, "", { mode: 0o755 });
    await Deno.writeTextFile(`${dir}/stamp`, `${stamp}\n`);
    const lines: string[] = [];
    const bins = await kubeBinaries({ env: env({ OPERATOR_HUB_CACHE: root }), log: (l) => lines.push(l) });
    assert.equal(bins.dir, dir);
    assert.equal(bins.cached, true);
    assert.deepEqual(lines, [], "nothing built, nothing printed");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the Go sources read over HTTP (as from a published package) are byte for byte the shipped ones, and a missing one is named", async () => {
  const dir = decodeURIComponent(KUBE_SOURCE.pathname);
  let missing = "";
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const path = new URL(request.url).pathname.slice(1);
    if (path === missing) return new Response("gone", { status: 404 });
    return new Response(await Deno.readFile(dir + path));
  });
  const source = new URL(`http://127.0.0.1:${server.addr.port}/`);
  const [overHttp, local] = [await readSources(source), await readSources()];
  assert.deepEqual(overHttp, local);
  missing = "go.sum";
  await assert.rejects(
    readSources(source),
    new RegExp(`could not read the test kit's Go source ${source}go.sum: HTTP 404`),
  );
});
