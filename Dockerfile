# syntax=docker/dockerfile:1
# operator-hub as a compiled single binary on distroless, non-root. Build: docker build -t operator-hub .
#
# The binary's Deno permissions are baked in by deno.json's `compile` task (see README, "Production").
# It reads only /app/clusters (remote kubeconfigs, mounted from a Secret; found because the working
# directory is /app and the hub reads clusters/*.yaml by default) and the service-account directory.
#
# Base images are pinned by digest (the tag stays beside it for humans): a rebuild gets the bytes that were reviewed,
# not whatever the tag points to today. Each digest is the multi-architecture index, found pinned the same way in
# public Dockerfiles: denoland/deno:2.9.6 in Casys-AI/mcp-spice, debian:bookworm-slim (Debian 12.15) in
# BrickO-Brick/hive's scripts/build-images.sh, gcr.io/distroless/cc-debian12:nonroot in StephanMeijer/meneerhenk.
# To move one: `docker buildx imagetools inspect IMAGE:TAG` prints the new index digest.

FROM denoland/deno:2.9.6@sha256:2014dc167ece617ef7e7ba40631ac2234c59e75ce693e7cc2dc2602b3c87859d AS build
WORKDIR /src
# Dependencies first, so they stay cached while only src/ changes. --frozen: deno.lock must match.
COPY deno.json deno.lock ./
RUN deno install --frozen
COPY src/ src/
RUN deno task compile && ./dist/operator-hub --version

# jemalloc, pinned: glibc's malloc keeps what clusters coming and going freed in the middle of its main arena (RSS
# +32 % after 1,000 register/unregister cycles); jemalloc hands it back (README, "Memory after churn"). Debian puts the
# library under /usr/lib/<multiarch>/; it is copied to one path for every architecture. It needs only libc, libm,
# libgcc_s and libstdc++, which distroless's cc image ships.
FROM debian:bookworm-slim@sha256:88200866dfff7ea7f5cbcb6ec7c8a701889efe6fe859fe64d6990e4b07ea4171 AS jemalloc
RUN apt-get update \
  && apt-get install -y --no-install-recommends libjemalloc2=5.3.0-1 \
  && cp /usr/lib/*-linux-gnu/libjemalloc.so.2 /libjemalloc.so.2

FROM gcr.io/distroless/cc-debian12:nonroot@sha256:9dac0a79194e45a7da0158a9c6da57b217585af0786db3845d1f0ec1a0dd182f
# Size the V8 heap from the container's cgroup memory limit instead of the node's memory.
ENV DENO_USE_CGROUPS=1
COPY --from=jemalloc --chown=0:0 --chmod=0444 /libjemalloc.so.2 /usr/local/lib/libjemalloc.so.2
# Every malloc of the binary's native code (Rust, V8's off-heap, TLS) goes to jemalloc. One arena and no per-thread
# caches: after churn, what jemalloc keeps resident is back at its baseline (measured in README, "Memory after churn").
ENV LD_PRELOAD=/usr/local/lib/libjemalloc.so.2
ENV MALLOC_CONF=narenas:1,tcache:false
WORKDIR /app
COPY --from=build --chown=0:0 --chmod=0555 /src/dist/operator-hub /app/operator-hub
# Numeric, so the kubelet can verify runAsNonRoot (65532 is distroless's "nonroot").
USER 65532:65532
EXPOSE 8080 8443
ENTRYPOINT ["/app/operator-hub"]
# Safe by default: the Uuid operator only (the Mirror operator writes Secrets: turn it on with Roles, deploy/mirror/);
# /metrics and /status only on the protected port (HTTPS, TokenReview + SubjectAccessReview in the pod's cluster), so
# the open liveness port answers just /healthz and /readyz. Plain HTTP (--metrics-secure=false) is for local use only.
CMD ["--clusters", "in-cluster", "--liveness", "http://0.0.0.0:8080/healthz", "--operators=uuid", "--metrics-bind-address=:8443"]
