// Reading the image's allocator off a Dockerfile: what it finds, and the one-line errors when the text does not hold.

import assert from "node:assert/strict";
import { globMatches, imageAllocator, ImageAllocatorError } from "./image_allocator.ts";

const GOOD = `
FROM deno AS build
RUN deno task compile
FROM debian:bookworm-slim AS alloc
RUN apt-get update \\
  && apt-get install -y --no-install-recommends libjemalloc2=5.3.0-1 \\
  && cp /usr/lib/*-linux-gnu/libjemalloc.so.2 /libjemalloc.so.2
FROM distroless
ENV A=1
COPY --from=alloc --chmod=0444 /libjemalloc.so.2 /usr/local/lib/libjemalloc.so.2
ENV LD_PRELOAD=/usr/local/lib/libjemalloc.so.2 MALLOC_CONF="background_thread:true"
`;

Deno.test("The allocator is read off the stage that installs the pinned package and the final stage's COPY and ENV", () => {
  const a = imageAllocator(GOOD);
  assert.deepEqual(a, {
    package: "libjemalloc2",
    version: "5.3.0-1",
    stage: "alloc",
    stageFrom: "debian:bookworm-slim",
    sourceGlob: "/usr/lib/*-linux-gnu/libjemalloc.so.2",
    stagePath: "/libjemalloc.so.2",
    copySource: "/libjemalloc.so.2",
    path: "/usr/local/lib/libjemalloc.so.2",
    chmod: "0444",
    env: { A: "1", LD_PRELOAD: "/usr/local/lib/libjemalloc.so.2", MALLOC_CONF: "background_thread:true" },
  });
});

Deno.test("A Dockerfile whose LD_PRELOAD, COPY, stage, pin or cp do not line up is an error naming what is missing", () => {
  const cases: [string, RegExp][] = [
    [GOOD.replace(/ENV LD_PRELOAD=\S+/, "ENV"), /sets no LD_PRELOAD/],
    [
      GOOD.replace("/usr/local/lib/libjemalloc.so.2 MALLOC", "/usr/lib/libjemalloc.so.2 MALLOC"),
      /no COPY .* puts a file/,
    ],
    [GOOD.replace("--from=alloc", "--from=other"), /copied from "other", which is no stage/],
    [GOOD.replace("libjemalloc2=5.3.0-1", "libjemalloc2"), /installs no pinned package/],
    [GOOD.replace("cp /usr/lib/*-linux-gnu/libjemalloc.so.2 /libjemalloc.so.2", "true"), /has no cp to \/libjemalloc/],
  ];
  for (const [text, message] of cases) {
    assert.throws(() => imageAllocator(text), (err: Error) => {
      assert.ok(err instanceof ImageAllocatorError);
      assert.match(err.message, message);
      return true;
    });
  }
});

Deno.test("A glob's star matches within one path segment only", () => {
  const glob = "/usr/lib/*-linux-gnu/libjemalloc.so.2";
  assert.ok(globMatches(glob, "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"));
  assert.ok(globMatches(glob, "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2"));
  assert.ok(!globMatches(glob, "/usr/lib/x/y-linux-gnu/libjemalloc.so.2"));
  assert.ok(!globMatches(glob, "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2.bak"));
});
