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

FROM gcr.io/distroless/cc-debian12:nonroot
# Size the V8 heap from the container's cgroup memory limit instead of the node's memory.
ENV DENO_USE_CGROUPS=1
WORKDIR /app
COPY --from=build --chown=0:0 --chmod=0555 /src/dist/operator-hub /app/operator-hub
# Numeric, so the kubelet can verify runAsNonRoot (65532 is distroless's "nonroot").
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/app/operator-hub"]
CMD ["--clusters", "in-cluster", "--liveness", "http://0.0.0.0:8080/healthz"]
