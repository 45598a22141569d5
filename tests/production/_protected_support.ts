// Helpers for the protected-port tests: a hub with --metrics-bind-address, ServiceAccount readers, scrapes, PEM files.
// deno-lint-ignore-file no-explicit-any -- /status JSON is checked by the tests themselves.

import { freePort, HubProcess, type HubProcessOptions } from "../../dev/support/hub_process.ts";
import { TestServiceAccount } from "../support/service_account.ts";

/** A hub whose /metrics and /status are on the protected port. */
export interface ProtectedHub {
  hub: HubProcess;
  /** `https://127.0.0.1:PORT` (or http:// with `--metrics-secure=false`). */
  url: string;
}

/** Starts a hub with `--metrics-bind-address 127.0.0.1:<free port>` plus `args`; --liveness stays as HubProcess sets it. */
export function startProtectedHub(
  options: HubProcessOptions & { secure?: boolean },
): ProtectedHub {
  const port = freePort();
  const secure = options.secure ?? true;
  const hub = HubProcess.start({
    ...options,
    args: [
      "--metrics-bind-address",
      `127.0.0.1:${port}`,
      ...(secure ? [] : ["--metrics-secure=false"]),
      ...(options.args ?? []),
    ],
  });
  return { hub, url: `${secure ? "https" : "http"}://127.0.0.1:${port}` };
}

/** Waits until /readyz (the probe, on the liveness port) answers, returning its status and body. */
export async function waitProbe(
  hub: HubProcess,
  check: (status: number, body: any) => boolean,
  what: string,
  timeoutMs = 90_000,
): Promise<{ status: number; body: any }> {
  const deadline = Date.now() + timeoutMs;
  let last: { status: number; body: any } | undefined;
  while (Date.now() < deadline) {
    if (hub.exited) throw new Error(`hub exited with ${hub.exited.code} while waiting for ${what}\n${hub.tail()}`);
    try {
      const r = await hub.get("/readyz");
      last = { status: r.status, body: r.body };
      if (check(r.status, r.body)) return last;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(
    `hang guard: ${what} not seen within ${timeoutMs} ms; last /readyz: ${JSON.stringify(last)}\n${hub.tail()}`,
  );
}

/** One GET through real curl (the way an operator checks by hand): status code and body. `-k`: self-signed. */
export async function curl(
  url: string,
  token?: string,
  extra: string[] = [],
): Promise<{ status: number; body: string }> {
  const out = await new Deno.Command("curl", {
    args: [
      "-sS",
      "-k",
      "-o",
      "-",
      "-w",
      "\n%{http_code}",
      ...(token ? ["-H", `Authorization: Bearer ${token}`] : []),
      ...extra,
      url,
    ],
    stdin: "null",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (out.code !== 0) throw new Error(`curl ${url} failed (${out.code}): ${new TextDecoder().decode(out.stderr)}`);
  const cut = text.lastIndexOf("\n");
  return { status: Number(text.slice(cut + 1)), body: text.slice(0, cut) };
}

/**
 * A ServiceAccount in `namespace` of `context`, optionally bound to a ClusterRole granting `get` on the non-resource
 * URLs /metrics and /status (what deploy/'s metrics-reader grants). Its tokens come from the TokenRequest API.
 */
export async function readerAccount(
  context: string,
  namespace: string,
  name: string,
  options: { metricsReader: boolean },
): Promise<TestServiceAccount> {
  if (!options.metricsReader) return await TestServiceAccount.create(context, namespace, name);
  const role = `operator-hub-test-metrics-reader-${namespace}-${name}`;
  const rbac = [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: role },
      rules: [{ nonResourceURLs: ["/metrics", "/status"], verbs: ["get"] }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: role },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
      subjects: [{ kind: "ServiceAccount", name, namespace }],
    },
  ];
  const clusterScoped = [`clusterrolebinding/${role}`, `clusterrole/${role}`];
  return await TestServiceAccount.create(context, namespace, name, { rbac, clusterScoped });
}

/**
 * A serving certificate and key made by the openssl CLI (independent of the hub's own generator), signed by a
 * throwaway CA as cert-manager would: `<name>.crt`, `<name>.key` in `dir`; `ca` is the PEM to trust.
 */
export async function opensslPair(
  dir: string,
  name: string,
  cn: string,
): Promise<{ ca: string; cert: string; key: string }> {
  const run = async (args: string[]) => {
    const out = await new Deno.Command("openssl", { args, stdin: "null" }).output();
    if (out.code !== 0) throw new Error(`openssl ${args[0]} failed: ${new TextDecoder().decode(out.stderr)}`);
  };
  const p = `${dir}/${name}`;
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  await run([
    "req",
    "-x509",
    ...ec,
    "-days",
    "2",
    "-subj",
    `/CN=${cn}-ca`,
    "-keyout",
    `${p}-ca.key`,
    "-out",
    `${p}-ca.crt`,
  ]);
  await run(["req", "-new", ...ec, "-subj", `/CN=${cn}`, "-keyout", `${p}.key`, "-out", `${p}.csr`]);
  await Deno.writeTextFile(
    `${p}.ext`,
    "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n" +
      "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
  );
  await run([
    "x509",
    "-req",
    "-in",
    `${p}.csr`,
    "-CA",
    `${p}-ca.crt`,
    "-CAkey",
    `${p}-ca.key`,
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    `${p}.ext`,
    "-out",
    `${p}.crt`,
  ]);
  return {
    ca: await Deno.readTextFile(`${p}-ca.crt`),
    cert: await Deno.readTextFile(`${p}.crt`),
    key: await Deno.readTextFile(`${p}.key`),
  };
}

/** The subject CN of the certificate a TLS server presents (openssl s_client), e.g. "operator-hub". */
export async function servedCommonName(host: string, port: number): Promise<string> {
  const out = await new Deno.Command("sh", {
    args: [
      "-c",
      `openssl s_client -connect ${host}:${port} -servername localhost </dev/null 2>/dev/null | openssl x509 -noout -subject`,
    ],
    stdin: "null",
  }).output();
  const subject = new TextDecoder().decode(out.stdout);
  const m = subject.match(/CN\s*=\s*([^,\n/]+)/);
  if (!m) throw new Error(`no certificate subject from ${host}:${port}: ${subject || "(nothing)"}`);
  return m[1].trim();
}

/** Median of a non-empty list. */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
