// Unit tests for reading the specifiers a module imports from its text.
import assert from "node:assert/strict";
import { importSpecifiers } from "./import_specifiers.ts";

const specs = (text: string) => importSpecifiers(text).map((s) => (s.dynamic ? `dynamic ${s.specifier}` : s.specifier));

Deno.test("static, type-only, side-effect and namespace imports are all read", () => {
  const text = [
    `import assert from "node:assert/strict";`,
    `import { a, type B } from "./a.ts";`,
    `import type { C } from '../c.ts';`,
    `import * as d from "./d.ts";`,
    `import e, { f as g } from "./e.ts";`,
    `import "./side.ts";`,
    `import {`,
    `  h,`,
    `  i,`,
    `} from "./multi.ts";`,
  ].join("\n");
  assert.deepEqual(specs(text), [
    "node:assert/strict",
    "./a.ts",
    "../c.ts",
    "./d.ts",
    "./e.ts",
    "./side.ts",
    "./multi.ts",
  ]);
});

Deno.test("re-exports are read, other exports are not", () => {
  const text = [
    `export { a } from "./a.ts";`,
    `export type { B } from "./b.ts";`,
    `export * from "./c.ts";`,
    `export * as d from "./d.ts";`,
    `export const from = "./not.ts";`,
    `export default function f() {}`,
    `export { local };`,
    `export type { T };`,
  ].join("\n");
  assert.deepEqual(specs(text), ["./a.ts", "./b.ts", "./c.ts", "./d.ts"]);
});

Deno.test("a dynamic import counts only with a string literal", () => {
  const text = [
    `const m = await import("./lazy.ts");`,
    `const n = await import('./other.ts', { with: {} });`,
    `const o = await import(name);`,
    `const p = await import(\`./\${name}.ts\`);`,
    `const url = import.meta.url;`,
  ].join("\n");
  assert.deepEqual(specs(text), ["dynamic ./lazy.ts", "dynamic ./other.ts"]);
});

Deno.test("imports inside comments, strings, templates and regular expressions are not imports", () => {
  const text = [
    `// import { x } from "./line_comment.ts";`,
    `/* import "./block_comment.ts"; */`,
    `/**`,
    ` * @example import { y } from "./jsdoc.ts";`,
    ` */`,
    `const s = 'import "./in_string.ts"';`,
    'const t = `import { z } from "./in_template.ts" ${1 + 2} and import("./also.ts")`;',
    `const r = /import "\\.\\/in_regex.ts"/;`,
    `const q = a / b / c; import { real } from "./real.ts";`,
  ].join("\n");
  assert.deepEqual(specs(text), ["./real.ts"]);
});

Deno.test("a template substitution that holds braces and a nested template keeps the reader in step", () => {
  const text = [
    "const t = `a ${ { k: `inner ${x}` }.k } b`;",
    `import { after } from "./after.ts";`,
  ].join("\n");
  assert.deepEqual(specs(text), ["./after.ts"]);
});

Deno.test("a property named import is not an import", () => {
  assert.deepEqual(specs(`obj.import("./no.ts"); x.export;`), []);
});
