// dev/build/build.ts builds through the test kit (src/testing/kube_binaries.ts): the kit's stamp over the shipped Go
// module must be the one dev/build's own module hash gives, so .cache/kube-bin and the kit agree on what is current.

import assert from "node:assert/strict";
import { moduleHash } from "./_go_build.ts";
import { KUBE_BIN_DIR, KUBE_MODULE_DIR, sourceHash, versionLdflags } from "./build.ts";

Deno.test("the kit's stamp of the shipped Go module equals dev/build's hash of the same folder", async () => {
  for (const go of ["go1.26.8", "go1.27.0"]) {
    assert.equal(await sourceHash(go), await moduleHash(KUBE_MODULE_DIR, versionLdflags(), go));
  }
  assert.match(KUBE_MODULE_DIR, /\/src\/testing\/go$/);
  assert.match(KUBE_BIN_DIR, /\/\.cache\/kube-bin$/);
});
