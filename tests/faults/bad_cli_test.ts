// Bad input on the command line: every case exits with code 2 and one line on stderr that names the problem.

import assert from "node:assert/strict";
import { tempDir } from "../../dev/support/fault_cluster.ts";
import { Cleanup } from "../support/fault_harness.ts";
import { runHubCli } from "../../dev/support/hub_process.ts";
import { KUBECONFIG_PATH } from "../support/mod.ts";

interface Case {
  what: string;
  args: string[];
  /** What the one line must say. */
  says: RegExp[];
}

/** Runs the cases `width` at a time (each is a Deno process). */
async function runAll(cases: Case[], width = 4) {
  const results: { c: Case; code: number; stdout: string; stderr: string }[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < cases.length) {
      const c = cases[next++];
      results.push({ c, ...await runHubCli(c.args, { timeoutMs: 60_000 }) });
    }
  }));
  return results;
}

Deno.test("Bad command-line input exits with code 2 and one line naming the problem: unknown context, missing or invalid kubeconfig, missing user or cluster, unreadable certificate files, bad --liveness, busy port, non-positive limits", async () => {
  await using cleanup = new Cleanup();
  const dir = cleanup.add(await tempDir("cli"), (d) => d.remove());
  const server = "https://127.0.0.1:1";
  const config = (clusters: unknown[], users: unknown[], contexts: unknown[]) =>
    JSON.stringify({ apiVersion: "v1", kind: "Config", clusters, users, contexts });
  const notYaml = await dir.write("not-yaml.yaml", "clusters: [\n  - {name: broken\nusers: ][\n");
  const dangling = await dir.write(
    "dangling.yaml",
    config(
      [{ name: "c", cluster: { server } }],
      [{ name: "u", user: { token: "not-a-real-token" } }],
      [
        { name: "no-user", context: { cluster: "c", user: "ghost-user" } },
        { name: "no-cluster", context: { cluster: "ghost-cluster", user: "u" } },
      ],
    ),
  );
  const files = await dir.write(
    "files.yaml",
    config(
      [
        { name: "missing-ca", cluster: { server, "certificate-authority": `${dir.path}/no-such-ca.crt` } },
        { name: "dir-ca", cluster: { server, "certificate-authority": dir.path } },
        { name: "ok", cluster: { server, "insecure-skip-tls-verify": true } },
      ],
      [
        { name: "u", user: { token: "not-a-real-token" } },
        {
          name: "cert-user",
          user: { "client-certificate": `${dir.path}/no-such.crt`, "client-key": `${dir.path}/no-such.key` },
        },
      ],
      [
        { name: "missing-ca", context: { cluster: "missing-ca", user: "u" } },
        { name: "dir-ca", context: { cluster: "dir-ca", user: "u" } },
        { name: "missing-cert", context: { cluster: "ok", user: "cert-user" } },
      ],
    ),
  );
  const busy = cleanup.add(Deno.listen({ hostname: "127.0.0.1", port: 0 }), (l) => l.close());
  const busyPort = (busy.addr as Deno.NetAddr).port;
  const prod = ["--kubeconfig", KUBECONFIG_PATH, "--clusters", "prod"];

  const cases: Case[] = [
    {
      what: "unknown context",
      args: ["--kubeconfig", KUBECONFIG_PATH, "--clusters", "prod,ghost"],
      says: [/unknown context "ghost"/, /prod/, /staging/],
    },
    {
      what: "missing kubeconfig",
      args: ["--kubeconfig", `${dir.path}/nope.yaml`, "--clusters", "x"],
      says: [/nope\.yaml/, /not found/],
    },
    { what: "non-YAML kubeconfig", args: ["--kubeconfig", notYaml, "--clusters", "x"], says: [/not-yaml\.yaml/] },
    {
      what: "context with a missing user",
      args: ["--kubeconfig", dangling, "--clusters", "no-user"],
      says: [/ghost-user/],
    },
    {
      what: "context with a missing cluster",
      args: ["--kubeconfig", dangling, "--clusters", "no-cluster"],
      says: [/ghost-cluster/],
    },
    { what: "missing CA file", args: ["--kubeconfig", files, "--clusters", "missing-ca"], says: [/no-such-ca\.crt/] },
    {
      what: "CA path is a directory",
      args: ["--kubeconfig", files, "--clusters", "dir-ca"],
      says: [/certificate-authority|directory/],
    },
    {
      what: "missing client certificate",
      args: ["--kubeconfig", files, "--clusters", "missing-cert"],
      says: [/no-such\.(crt|key)/],
    },
    { what: "--liveness not a URL", args: [...prod, "--liveness", "not a url"], says: [/--liveness/, /not a url/] },
    {
      what: "--liveness not http",
      args: [...prod, "--liveness", "ftp://127.0.0.1:8080/healthz"],
      says: [/--liveness/],
    },
    {
      what: "--liveness bad port",
      args: [...prod, "--liveness", "http://127.0.0.1:99999/healthz"],
      says: [/--liveness/],
    },
    {
      what: "--liveness port in use",
      args: [...prod, "--liveness", `http://127.0.0.1:${busyPort}/healthz`],
      says: [new RegExp(String(busyPort)), /in use|cannot listen|address/i],
    },
    { what: "zero concurrency", args: [...prod, "--concurrency", "0"], says: [/--concurrency "0"/, /positive/] },
    { what: "negative qps", args: [...prod, "--qps=-5"], says: [/--qps "-5"/, /positive/] },
    // `--flag -3` reads like a flag to node:util's parseArgs; the line still names the flag (see the report).
    { what: "negative concurrency, space form", args: [...prod, "--concurrency", "-3"], says: [/--concurrency/] },
    { what: "zero reconcile timeout", args: [...prod, "--reconcile-timeout", "0"], says: [/--reconcile-timeout/] },
    { what: "negative idle timeout", args: [...prod, "--watch-idle-timeout", "-1"], says: [/--watch-idle-timeout/] },
    { what: "fractional burst", args: [...prod, "--burst", "1.5"], says: [/--burst/, /whole/] },
    { what: "unknown flag", args: [...prod, "--bogus"], says: [/bogus/] },
  ];
  const results = await runAll(cases);
  const problems: string[] = [];
  for (const { c, code, stderr } of results) {
    const lines = stderr.trim().split("\n").filter((l) => l.trim() !== "");
    if (code !== 2) problems.push(`${c.what}: exit code ${code}, stderr: ${stderr.trim().slice(0, 300)}`);
    else if (lines.length !== 1) {
      problems.push(`${c.what}: ${lines.length} stderr lines: ${stderr.trim().slice(0, 300)}`);
    } else {
      for (const re of c.says) if (!re.test(lines[0])) problems.push(`${c.what}: "${lines[0]}" does not match ${re}`);
      if (lines[0].includes("not-a-real-token")) problems.push(`${c.what}: the token appears in the error`);
    }
  }
  assert.deepEqual(problems, []);
});
