// Unit tests for the structure drawing of src/: a made-up tree in memory, and the options.
import assert from "node:assert/strict";
import { formatText, measure, measureTree, parseArgs, resolveRelative, roomOf } from "./structure.ts";

const tree = (files: Record<string, string>) => new Map(Object.entries(files));

Deno.test("relative specifiers resolve against the importing file, others are not edges", () => {
  assert.equal(resolveRelative("src/hub/x.ts", "../kube/y.ts"), "src/kube/y.ts");
  assert.equal(resolveRelative("src/hub/x.ts", "./cluster/z.ts"), "src/hub/cluster/z.ts");
  assert.equal(resolveRelative("src/cli/a.ts", "../../dev/support/k.ts"), "dev/support/k.ts");
  assert.equal(resolveRelative("src/hub/x.ts", "npm:yaml"), undefined);
  assert.equal(roomOf("src/hub/cluster/z.ts"), "hub");
  assert.equal(roomOf("src/mod.ts"), ".");
});

Deno.test("rooms stand on floors by their imports, and an import between two rooms both ways runs back up", () => {
  const s = measure(
    "r",
    tree({
      "src/util/log.ts": "export const log = 1;\n",
      "src/kube/client.ts": `import { log } from "../util/log.ts";\nimport type { H } from "../hub/hub.ts";\n`,
      "src/hub/hub.ts": `import { c } from "../kube/client.ts";\nexport type H = 1;\n`,
      "src/cli/main.ts": `import "../hub/hub.ts";\n`,
    }),
  );
  assert.deepEqual(s.rooms, ["cli", "hub", "kube", "util"]);
  assert.deepEqual(s.floors, { cli: 2, hub: 1, kube: 1, util: 0 });
  assert.equal(s.floorCount, 3);
  assert.deepEqual(s.arrowsBackUp, [{ from: "hub", to: "kube", imports: 1 }, { from: "kube", to: "hub", imports: 1 }]);
  // the two files import each other: one circle
  assert.deepEqual(s.circles, [["src/hub/hub.ts", "src/kube/client.ts"]]);
});

Deno.test("test files are left out: neither counted nor edges, and a cycle through a test is no circle", () => {
  const s = measure(
    "r",
    tree({
      "src/queue/a.ts": `export const a = 1;\n`,
      "src/queue/a_test.ts": `import { a } from "./a.ts";\nimport "../hub/h.ts";\n`,
      "src/hub/h.ts": `import "../queue/a_test.ts";\n`,
    }),
  );
  assert.equal(s.files, 2);
  assert.deepEqual(s.circles, []);
  assert.deepEqual(s.arrowsBackUp, []);
  assert.deepEqual(s.floors, { hub: 0, queue: 0 });
});

Deno.test("files per folder lists every folder, sorted, and marks those over fifteen", () => {
  const files: Record<string, string> = { "src/kube/wire/_h2.ts": "x\ny\nz\n" };
  for (let i = 0; i < 16; i++) files[`src/hub/f${String(i).padStart(2, "0")}.ts`] = "x\n";
  const s = measure("r", tree(files));
  assert.deepEqual(s.folders, [
    { folder: "src", files: 0, crowded: false },
    { folder: "src/hub", files: 16, crowded: true },
    { folder: "src/kube", files: 0, crowded: false },
    { folder: "src/kube/wire", files: 1, crowded: false },
  ]);
  assert.deepEqual(s.largest, { file: "src/kube/wire/_h2.ts", lines: 3 });
  assert.equal(s.lines, 19);
});

Deno.test("a non-test file of src/ importing dev/ is listed as leaving src/; a test file doing so is not", () => {
  const s = measure(
    "r",
    tree({
      "src/cli/_helper.ts": `import { k } from "../../dev/support/k.ts";\n`,
      "src/cli/x_test.ts": `import { k } from "../../dev/support/k.ts";\n`,
    }),
  );
  assert.deepEqual(s.leavingSrc, [{ file: "src/cli/_helper.ts", target: "dev/support/k.ts" }]);
  assert.match(formatText(s), /imports leaving src\/ \(non-test files\): 1\n {2}src\/cli\/_helper\.ts -> dev/);
});

Deno.test("the text names every figure of the drawing", () => {
  const text = formatText(measure("r", tree({ "src/util/a.ts": "1\n" })));
  for (
    const figure of ["rooms: 1 on 1 floors", "arrows running back up: 0", "import circles (files): 0", "largest file"]
  ) {
    assert.ok(text.includes(figure), `${figure} in\n${text}`);
  }
});

Deno.test("options are --root DIR and --json; anything else is refused with the argument seen", () => {
  assert.deepEqual(parseArgs([]), { root: ".", json: false });
  assert.deepEqual(parseArgs(["--root", "/tmp/x/", "--json"]), { root: "/tmp/x", json: true });
  assert.deepEqual(parseArgs(["--root=/tmp/y"]), { root: "/tmp/y", json: false });
  assert.throws(() => parseArgs(["--rot", "x"]), /cannot read the argument "--rot"/);
});

Deno.test("this checkout's src/ holds only what ships: no non-test file of it imports dev/, tests/ or bench/", () => {
  const root = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
  assert.deepEqual(measureTree(root).leavingSrc, []);
});
