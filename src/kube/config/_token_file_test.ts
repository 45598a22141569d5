// Unit tests for the rotated bearer-token file reader.
import assert from "node:assert/strict";
import { join } from "node:path";
import { fsReason, TokenFile } from "./_token_file.ts";
import { AuthError } from "../errors.ts";
import { withTempDir } from "../../../dev/support/local_client.ts";

Deno.test("TokenFile reads the trimmed token and sees a rewrite of the file at once", () =>
  withTempDir(async (dir) => {
    const path = join(dir, "token");
    await Deno.writeTextFile(path, "first-token\n");
    const f = new TokenFile("prod", path);
    assert.equal(await f.read(), "first-token");
    await Deno.writeTextFile(path, "second-token-longer\n");
    assert.equal(await f.read(), "second-token-longer");
  }));

Deno.test("TokenFile sees kubelet's atomic symlink swap to a new token at once", () =>
  withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "a"), "token-a");
    await Deno.writeTextFile(join(dir, "b"), "token-b");
    const link = join(dir, "token");
    await Deno.symlink(join(dir, "a"), link);
    const f = new TokenFile("prod", link);
    assert.equal(await f.read(), "token-a");
    await Deno.symlink(join(dir, "b"), join(dir, "next"));
    await Deno.rename(join(dir, "next"), link);
    assert.equal(await f.read(), "token-b");
  }));

Deno.test("TokenFile keeps its cached token while the file is unchanged, and re-reads it after maxAgeMs or invalidate()", () =>
  withTempDir(async (dir) => {
    const path = join(dir, "token");
    await Deno.writeTextFile(path, "tok-1");
    const { mtime } = await Deno.stat(path);
    let now = 0;
    const f = new TokenFile("prod", path, { maxAgeMs: 1000, now: () => now });
    assert.equal(await f.read(), "tok-1");
    // Same size and the old mtime restored: the stat stamp cannot tell the files apart.
    await Deno.writeTextFile(path, "tok-2");
    await Deno.utime(path, mtime!, mtime!);
    now = 999;
    assert.equal(await f.read(), "tok-1", "cached while younger than maxAgeMs");
    now = 1000;
    assert.equal(await f.read(), "tok-2", "re-read once maxAgeMs passed");
    await Deno.writeTextFile(path, "tok-3");
    await Deno.utime(path, mtime!, mtime!);
    assert.equal(await f.read(), "tok-2");
    f.invalidate();
    assert.equal(await f.read(), "tok-3", "re-read after invalidate()");
  }));

Deno.test("TokenFile fails with an AuthError naming the file when it is missing or empty, never its content", () =>
  withTempDir(async (dir) => {
    const path = join(dir, "token");
    const f = new TokenFile("prod", path);
    await assert.rejects(f.read(), (err: Error) => {
      assert.ok(err instanceof AuthError);
      assert.equal(err.cluster, "prod");
      assert.equal(err.message, `cannot read token file ${path}: not found`);
      return true;
    });
    await Deno.writeTextFile(path, "  \n");
    await assert.rejects(
      f.read(),
      (err: Error) => err instanceof AuthError && err.message === `token file ${path} is empty`,
    );
  }));

Deno.test("fsReason gives a short content-free reason for file errors", () => {
  assert.equal(fsReason(new Deno.errors.NotFound("x")), "not found");
  assert.equal(fsReason(new Deno.errors.PermissionDenied("x")), "permission denied");
  assert.equal(fsReason(new Deno.errors.IsADirectory("x")), "is a directory");
  assert.match(fsReason(new Deno.errors.NotCapable("x")), /--allow-read/);
  assert.equal(fsReason(Object.assign(new Error("x"), { code: "ENOENT" })), "not found");
  assert.equal(fsReason(Object.assign(new Error("x"), { code: "EACCES" })), "permission denied");
  assert.equal(fsReason(Object.assign(new Error("x"), { code: "EMFILE" })), "EMFILE");
  assert.equal(fsReason(new TypeError("x")), "TypeError");
  assert.equal(fsReason("x"), "unreadable");
});
