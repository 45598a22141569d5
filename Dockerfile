# syntax=docker/dockerfile:1
# operator-hub as a compiled single binary on distroless, non-root. Build: docker build -t operator-hub .
#
# The binary's Deno permissions are baked in by deno.json's `compile` task (see README, "Production").
# It reads only /app/clusters (remote kubeconfigs, mounted from a Secret; found because the working
# directory is /app and the hub reads clusters/*.yaml by default) and the service-account directory.

FROM denoland/deno:2.9.6 AS build
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
FROM debian:bookworm-slim AS jemalloc
RUN apt-get update \
  && apt-get install -y --no-install-recommends libjemalloc2=5.3.0-1 \
  && cp /usr/lib/*-linux-gnu/libjemalloc.so.2 /libjemalloc.so.2

FROM gcr.io/distroless/cc-debian12:nonroot
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
EXPOSE 8080
ENTRYPOINT ["/app/operator-hub"]
CMD ["--clusters", "in-cluster", "--liveness", "http://0.0.0.0:8080/healthz"]
