// Unit tests for the typed readers shared by the kubeconfig and in-cluster loaders.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  base64,
  dataField,
  envGetter,
  fileField,
  isHttpUrl,
  pem,
  str,
  unreadable,
  withoutUserInfo,
} from "./_fields.ts";
import { ConfigError } from "../errors.ts";
import { record } from "../../util/mod.ts";

const PEM = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";

Deno.test("unreadable names why a path cannot be read, and is undefined for a readable file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "ca.crt");
    await Deno.writeTextFile(file, PEM);
    assert.equal(unreadable(file), undefined);
    assert.equal(unreadable(dir), "is a directory");
    assert.equal(unreadable(join(dir, "missing")), "not found");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fileField resolves a relative path against the kubeconfig's folder and fails naming field, path and reason", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(dir, "ca.crt"), PEM);
    const kubeconfig = join(dir, "config");
    assert.equal(fileField("cluster prod", kubeconfig, { ca: "ca.crt" }, "ca"), join(dir, "ca.crt"));
    assert.equal(fileField("cluster prod", kubeconfig, { ca: "" }, "ca"), undefined);
    assert.equal(fileField("cluster prod", kubeconfig, {}, "ca"), undefined);
    assert.throws(
      () => fileField("cluster prod", kubeconfig, { ca: "nope.crt" }, "ca"),
      (err: Error) =>
        err instanceof ConfigError &&
        err.message === `cluster prod: cannot read ca file ${join(dir, "nope.crt")}: not found`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("dataField accepts base64 PEM (whitespace ignored) and rejects bad base64 or non-PEM without quoting it", () => {
  const encoded = btoa(PEM);
  const wrapped = encoded.slice(0, 10) + "\n  " + encoded.slice(10);
  assert.equal(dataField("user u", { d: wrapped }, "d"), wrapped);
  assert.equal(dataField("user u", {}, "d"), undefined);
  assert.throws(() => dataField("user u", { d: "!!!" }, "d"), /^ConfigError: user u: d is not valid base64$/);
  assert.throws(
    () => dataField("user u", { d: btoa("secret-key-material") }, "d"),
    (err: Error) =>
      err instanceof ConfigError && /d does not decode to PEM$/.test(err.message) &&
      !err.message.includes("secret"),
  );
});

Deno.test("isHttpUrl accepts only http and https URLs with a host", () => {
  assert.equal(isHttpUrl("https://10.0.0.1:6443"), true);
  assert.equal(isHttpUrl("http://localhost"), true);
  assert.equal(isHttpUrl("ftp://host"), false);
  assert.equal(isHttpUrl("file:///etc/passwd"), false);
  assert.equal(isHttpUrl("10.0.0.1:6443"), false);
  assert.equal(isHttpUrl(""), false);
});

Deno.test("withoutUserInfo drops a user:password part of a server URL and leaves other URLs as they are", () => {
  assert.equal(withoutUserInfo("https://admin:hunter2@10.0.0.1:6443"), "https://10.0.0.1:6443");
  assert.equal(withoutUserInfo("https://admin:hunter2@host:6443/prefix/"), "https://host:6443/prefix/");
  assert.equal(withoutUserInfo("https://host:6443"), "https://host:6443");
  assert.equal(withoutUserInfo("https://proxy:3128/a@b"), "https://proxy:3128/a@b");
  assert.equal(withoutUserInfo("not a url @ all"), "not a url @ all");
});

Deno.test("envGetter reads from an object, a function, or nothing", () => {
  assert.equal(envGetter({ A: "1" })("A"), "1");
  assert.equal(envGetter((k) => k.toLowerCase())("A"), "a");
  assert.equal(envGetter(undefined)("A"), undefined);
});

Deno.test("record, str and pem read typed values and answer undefined for anything else", () => {
  assert.deepEqual(record({ a: 1 }), { a: 1 });
  assert.equal(record([]), undefined);
  assert.equal(record(null), undefined);
  assert.equal(str("x"), "x");
  assert.equal(str(""), undefined);
  assert.equal(str(1), undefined);
  assert.equal(pem("A"), "A");
  assert.equal(pem(new TextEncoder().encode("B")), "B");
  assert.equal(pem(["A", undefined, new TextEncoder().encode("B")]), "A\nB");
  assert.equal(pem(5), undefined);
  assert.equal(pem(null), undefined);
});

Deno.test("base64 encodes UTF-8 text so that decoding it gives the text back", () => {
  for (const s of ["user:pass", "ünïcødé:✓", ""]) {
    const bytes = Uint8Array.from(atob(base64(s)), (c) => c.charCodeAt(0));
    assert.equal(new TextDecoder().decode(bytes), s);
  }
});

Deno.test("dataField refuses a value that is not a string (kubectl does too) instead of ignoring it", () => {
  for (
    const [value, kind] of [[12345, "number"], [true, "boolean"], [["a"], "a list"], [{ a: 1 }, "object"]] as const
  ) {
    assert.throws(
      () => dataField("cluster c", { d: value }, "d"),
      new RegExp(`^ConfigError: cluster c: d must be a base64 string, not ${kind}$`),
    );
  }
  assert.equal(dataField("cluster c", { d: null }, "d"), undefined);
  assert.equal(dataField("cluster c", { d: "" }, "d"), undefined);
});
