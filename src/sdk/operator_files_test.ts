// Unit tests for loading operator files given on the command line, from files the test writes.
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadOperatorFiles, OperatorFileError } from "./operator_files.ts";

const SDK = new URL("./mod.ts", import.meta.url).href;
const RESOURCE = '{ group: "demo.operator", version: "v1", kind: "Uuid", plural: "uuid" }';

async function withFiles(files: Record<string, string>, fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(join(dir, name), text);
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const operator = (name: string) =>
  `defineOperator({ name: "${name}", resource: ${RESOURCE}, reconcile: () => Promise.resolve() })`;

Deno.test("loadOperatorFiles returns every exported operator, file by file, relative paths against cwd", () =>
  withFiles({
    "a.ts": `import { defineOperator } from "${SDK}";\nexport const first = ${operator("a-one")};\n` +
      `export const second = ${operator("a-two")};\nexport const notAnOperator = 42;\n`,
    "b.ts": `import { defineOperator } from "${SDK}";\nexport const only = ${operator("b-one")};\n`,
  }, async (dir) => {
    const ops = await loadOperatorFiles(["b.ts", join(dir, "a.ts")], dir);
    assert.deepEqual(ops.map((o) => o.name), ["b-one", "a-one", "a-two"]);
    assert.equal(typeof ops[0].reconciler.reconcile, "function");
  }));

Deno.test("loadOperatorFiles names a file that does not load", () =>
  withFiles({ "broken.ts": "export const x = ;\n" }, async (dir) => {
    await assert.rejects(loadOperatorFiles(["missing.ts"], dir), (err: Error) => {
      assert.ok(err instanceof OperatorFileError);
      assert.match(err.message, /^operator file missing\.ts does not load: /);
      assert.ok(err.cause);
      return true;
    });
    await assert.rejects(
      loadOperatorFiles(["broken.ts"], dir),
      /^OperatorFileError: operator file broken\.ts does not load: /,
    );
  }));

Deno.test("loadOperatorFiles names a file that exports no operator, with what it does export", () =>
  withFiles({ "none.ts": "export const a = 1;\nexport function b() {}\n", "empty.ts": "" }, async (dir) => {
    await assert.rejects(
      loadOperatorFiles(["none.ts"], dir),
      /operator file none\.ts exports no operator \(exports: a, b\): export the result of defineOperator\(\) or defineHandlers\(\)/,
    );
    await assert.rejects(loadOperatorFiles(["empty.ts"], dir), /exports no operator \(exports: none\)/);
  }));

Deno.test("loadOperatorFiles reports a definition defineOperator refused while the module loaded", () =>
  withFiles({
    "invalid.ts": `import { defineOperator } from "${SDK}";\nexport const bad = ${operator("Not Valid")};\n`,
  }, async (dir) => {
    await assert.rejects(loadOperatorFiles(["invalid.ts"], dir), (err: Error) => {
      assert.ok(err instanceof OperatorFileError);
      assert.match(
        err.message,
        /^operator file invalid\.ts: invalid operator definition: invalid operator name "Not Valid"/,
      );
      return true;
    });
  }));

Deno.test("loadOperatorFiles validates an operator built by hand, naming the export", () =>
  withFiles({
    "hand.ts": `export const handMade = { name: "hand", resource: ${RESOURCE}, verbs: ["fly"], ` +
      `reconciler: { reconcile: () => Promise.resolve() } };\n`,
  }, async (dir) => {
    await assert.rejects(loadOperatorFiles(["hand.ts"], dir), (err: Error) => {
      assert.ok(err instanceof OperatorFileError);
      assert.match(
        err.message,
        /^operator file hand\.ts: export handMade is an invalid operator definition: .*unknown verb "fly"/,
      );
      assert.doesNotMatch(err.message, /\n/);
      return true;
    });
  }));
