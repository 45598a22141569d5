// The hub's --help text, composed from each flag group's section, and the did-you-mean for a misspelled flag, which
// suggests only what the help documents. Pure.

import { clusterProfileHelp } from "./cluster_profile_flags.ts";
import { BUILT_IN_OPERATORS } from "../operators/mod.ts";
import { credentialHelp } from "./credential_flags.ts";
import { clusterProviderHelp } from "./cluster_provider_flags.ts";
import { leaderElectionHelp } from "./leader_election_flags.ts";
import { limitsHelp } from "./limit_flags.ts";
import { livenessHelp } from "./liveness_flag.ts";
import { metricsServingHelp } from "./metrics_serving_flags.ts";
import { readinessHelp } from "./readiness_flag.ts";
import { shardHelp } from "./shard_flags.ts";
import { webhookHelp } from "./webhook_flags.ts";
import { LOG_LEVELS } from "../util/mod.ts";

export function helpText(): string {
  return [
    "operator-hub: runs Kubernetes operators (built in: Uuid and Mirror) across many clusters from one process.",
    "",
    "Usage: deno task run --clusters prod,staging [flags] [OPERATOR_FILE.ts ...]",
    "",
    "Each OPERATOR_FILE is a module whose exported operators (defineOperator, defineHandlers) run beside the",
    "built-in ones, as `kopf run app.py` does; `--operators none` leaves only the files' operators.",
    "",
    "       deno task run cleanup --clusters prod,staging [cluster flags]   (operator-hub cleanup ...)",
    "removes the hub's finalizers from every object of those clusters, after the hub stopped (an uninstall);",
    "see `cleanup --help`.",
    "",
    "       deno run -A cli.ts init DIR [init flags]   (operator-hub init ...)",
    "writes a new operator project into DIR: its resource, handlers, a test on two clusters, deploy/;",
    "see `init --help`.",
    "",
    "       deno task crd FILE...   (operator-hub crd ...)",
    "prints the CRD of every resource the files define (defineResource); see `crd --help`.",
    "",
    "Clusters:",
    "  --clusters a,b             kubeconfig contexts to serve; `all` = every known context,",
    "                             `in-cluster` = this pod's own cluster (service account)",
    "  --kubeconfig FILE          kubeconfig to read (repeatable). Default: every clusters/*.yaml",
    "                             plus $KUBECONFIG (colon-separated) or ~/.kube/config",
    "  --cluster-dir DIR          folder of kubeconfig files (*.yaml), watched: a file added registers its",
    "                             contexts, removed unregisters them. Default ./clusters (/app/clusters in",
    "                             the image) when no --kubeconfig is given; --kubeconfig files are watched too",
    "  --cluster-secrets NS       register clusters from Secrets in namespace NS of the home cluster labelled",
    "                             sigs.k8s.io/multicluster-runtime-kubeconfig=true (data key kubeconfig;",
    "                             cluster name = Secret name)",
    ...clusterProviderHelp(),
    ...clusterProfileHelp(),
    "  --namespace NS, -n NS      namespace to watch (repeatable). Default: all namespaces",
    "  --all-namespaces, -A       watch all namespaces (the default; Kopf's flag, not with --namespace)",
    "  --home-cluster NAME        the cluster holding the hub's own objects (Leases, cluster Secrets, Mirror",
    "                             sources, TokenReviews); default: in-cluster if selected, else the first",
    "  --service-account-dir DIR  where in-cluster credentials live",
    "                             (default /var/run/secrets/kubernetes.io/serviceaccount)",
    `  --operators a,b            built-in operators to run: ${
      Object.keys(BUILT_IN_OPERATORS).join(", ")
    }; \`none\` = none`,
    "                             (default: all of them; Mirrors live in the home cluster only)",
    "  --http2                    offer HTTP/2 to the API servers (default: HTTP/1.1 keep-alive,",
    "                             about a third less CPU per request here; see docs/architecture.md)",
    "  --mirror-orphan-on-unreachable-after SECONDS",
    "                             a deleted Mirror's finalizer gives up on the copy in a target",
    "                             unreachable this long, with a Warning Event (default 600)",
    "  --mirror-namespaces a,b    the only namespaces Mirrors may copy into; none is created (default:",
    "                             any namespace but kube-system, kube-public, kube-node-lease, created",
    "                             when missing; the Helm chart always sets it)",
    "  --cleanup-on-remove        remove the hub's finalizers from a cluster that left the registry (its",
    "                             Secret or file gone), once its workers stopped; at most 15 s, a",
    "                             failure is logged (default off; see also `cleanup`)",
    "",
    ...credentialHelp(),
    "",
    ...leaderElectionHelp(),
    "",
    ...shardHelp(),
    "",
    ...livenessHelp(),
    ...readinessHelp(),
    "",
    ...metricsServingHelp(),
    "",
    ...webhookHelp(),
    "",
    "Logs and events:",
    `  --log-level LEVEL          ${LOG_LEVELS.join("|")} (default info)`,
    "  --verbose, --debug         Kopf's flags: --log-level debug",
    "  --quiet                    Kopf's flag: --log-level warn",
    "  --log-format FORMAT        json|text (default json)",
    "  --event-level LEVEL        post Kubernetes Events at or above Normal|Warning (default Warning)",
    "",
    "Limits (all optional):",
    ...limitsHelp(),
    "",
    "  --standalone               Kopf's flag, accepted: the hub never peers with other hubs unless asked",
    "  --help                     show this help",
    "  --version                  show the version",
    "",
    "Exit codes: 0 after a clean shutdown (SIGTERM/SIGINT), 1 on a crash, 2 on bad flags or kubeconfigs.",
  ].join("\n");
}

/** The known long flag closest to a misspelled one (edit distance ≤ 2, or a prefix either way), if any. */
export function didYouMean(flag: string): string | undefined {
  const name = flag.replace(/^-+/, "").split("=")[0];
  // --help documents exactly the accepted flags (flags_test.ts checks it), in a sensible order.
  const known = [...new Set([...helpText().matchAll(/--([a-z][a-z0-9-]*)/g)].map((m) => m[1]))];
  let best: { flag: string; score: number } | undefined;
  for (const k of known) {
    const score = k.startsWith(name) || name.startsWith(k) ? 1 : editDistance(name, k);
    if (score <= 2 && (!best || score < best.score)) best = { flag: k, score };
  }
  return best ? `--${best.flag}` : undefined;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const next = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = row[j];
      row[j] = next;
    }
  }
  return row[b.length];
}
