// The default install's effective permissions: deploy/ (kustomize) and the chart's default values of a checkout, their
// RBAC applied for real into a namespace of this run's own, then `kubectl auth can-i --list` as the hub's ServiceAccount.
//
//   deno run -A bench/tools/can_i_list.ts [--root CHECKOUT] [--context prod] [--out bench/results/can_i_list_after.txt]
//
// Compare two checkouts (e.g. `git worktree add /tmp/base HEAD~N`, then --root /tmp/base and --out …_before.txt).
// Assumptions: the local clusters run (clusters/local.yaml); kubectl and the helm of dev/build/build_helm.ts are there.
// Guarantees: every object it creates (a namespace, ClusterRoles and bindings suffixed with it) is deleted at the end.
// deno-lint-ignore-file no-explicit-any -- manifests are rewritten field by field.

import { parseArgs } from "node:util";
import YAML from "yaml";
import { ensureHelm } from "../../dev/build/build_helm.ts";
import { kubectl, kubectlOk } from "../../dev/support/kubectl.ts";

const RBAC = new Set(["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]);
const isHook = (d: any) => d.metadata?.annotations?.["helm.sh/hook"] !== undefined;

const { values } = parseArgs({
  args: Deno.args,
  options: {
    root: { type: "string", default: new URL("../..", import.meta.url).pathname },
    context: { type: "string", default: "prod" },
    out: { type: "string" },
  },
});
const root = values.root!.replace(/\/?$/, "/");
const context = values.context!;
const run = crypto.randomUUID().slice(0, 6);

async function output(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdin: "null" }).output();
  const d = new TextDecoder();
  if (out.code !== 0) throw new Error(`${cmd} ${args.join(" ")} failed: ${d.decode(out.stderr)}`);
  return d.decode(out.stdout);
}

const parse = (text: string) => YAML.parseAllDocuments(text, { version: "1.1" }).map((d) => d.toJS()).filter(Boolean);

/**
 * The RBAC documents moved into namespace `ns`: namespaced objects of `from` (and subjects) go there, cluster-scoped
 * names get `-ns` appended (roleRefs follow), so nothing shared with other installs is touched.
 */
function relocate(docs: any[], from: string, ns: string): any[] {
  const clusterNames = new Set(docs.filter((d) => d.kind.startsWith("Cluster")).map((d) => d.metadata.name));
  return docs.filter((d) => RBAC.has(d.kind) && !isHook(d)).map((d) => {
    const o = structuredClone(d);
    if (o.kind.startsWith("Cluster")) o.metadata.name = `${o.metadata.name}-${ns}`;
    else if (o.metadata.namespace === from || o.metadata.namespace === undefined) o.metadata.namespace = ns;
    if (o.roleRef?.kind === "ClusterRole" && clusterNames.has(o.roleRef.name)) o.roleRef.name += `-${ns}`;
    for (const s of o.subjects ?? []) if (s.namespace === from) s.namespace = ns;
    return o;
  });
}

async function listAs(label: string, docs: any[], ns: string, sa: string): Promise<string> {
  await kubectlOk(context, ["create", "namespace", ns]);
  const cluster = docs.filter((d) => d.kind.startsWith("Cluster")).map((d) =>
    `${d.kind.toLowerCase()}/${d.metadata.name}`
  );
  try {
    await kubectlOk(context, ["apply", "-f", "-"], { stdin: docs.map((d) => YAML.stringify(d)).join("---\n") });
    const as = `--as=system:serviceaccount:${ns}:${sa}`;
    const inOwn = await kubectlOk(context, ["auth", "can-i", "--list", as, "-n", ns]);
    const inOther = await kubectlOk(context, ["auth", "can-i", "--list", as, "-n", "default"]);
    const secretsAll = await kubectl(context, ["auth", "can-i", "list", "secrets", "-A", as]);
    return [
      `## ${label}`,
      `$ kubectl auth can-i list secrets -A --as=system:serviceaccount:<ns>:${sa}`,
      secretsAll.stdout.trim(),
      `$ kubectl auth can-i --list --as=system:serviceaccount:<ns>:${sa} -n <the hub's namespace>`,
      inOwn.replaceAll(ns, "<ns>").trimEnd(),
      `$ kubectl auth can-i --list --as=system:serviceaccount:<ns>:${sa} -n default`,
      inOther.replaceAll(ns, "<ns>").trimEnd(),
      "",
    ].join("\n");
  } finally {
    for (const o of cluster) await kubectl(context, ["delete", o, "--ignore-not-found"]);
    await kubectl(context, ["delete", "namespace", ns, "--wait=false"]);
  }
}

const kustomized = parse(await output("kubectl", ["kustomize", `${root}deploy`]));
const kNs = `canilist-k-${run}`;
const report = [
  `# kubectl auth can-i as the hub's ServiceAccount, default install of ${root}`,
  "",
  await listAs("kustomize deploy/", relocate(kustomized, "operator-hub", kNs), kNs, "operator-hub"),
];
const { helm } = await ensureHelm();
const hNs = `canilist-h-${run}`;
const rendered = parse(await output(helm, ["template", "operator-hub", `${root}deploy/helm/operator-hub`, "-n", hNs]));
report.push(await listAs("helm template (default values)", relocate(rendered, hNs, hNs), hNs, "operator-hub"));
const text = report.join("\n");
if (values.out) await Deno.writeTextFile(values.out, text);
console.log(text);
