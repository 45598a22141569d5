// The hub's flags, each declared once: name, value, default, --help text and section, and the check of its value.
// The parser (parse_flags.ts) and --help (help_text.ts) both read this table; the checks across flags are parseFlags()'s.

// name_prefixes.ts, not the providers' barrel: the Cluster API provider is loaded only with --cluster-api.
import { NamePrefixError, parseNamePrefixes, PREFIXABLE_PROVIDERS } from "../../hub/providers/name_prefixes.ts";
import { execAllowlistProblem } from "../../kube/mod.ts";
import { BUILT_IN_OPERATORS } from "../../operators/mod.ts";
import { LOG_LEVELS, type LogLevel } from "../../util/mod.ts";
import { bool, limit, list, seconds, section, text } from "./flag_spec.ts";
import { bounded, DNS_LABEL, DNS_SUBDOMAIN, FlagError, isNamespace, kubeName, namespacesOrAll } from "./flag_values.ts";
import { nonEmpty, oneOf, parseBindAddress, parseLiveness } from "./flag_values.ts";

const METRICS = { flag: "metrics-bind-address", hint: "HOST:PORT (e.g. :8443)" } as const;
const WEBHOOK = { flag: "webhook-bind-address", hint: "HOST:PORT (e.g. :9443)" } as const;
const SHARD = { flag: "shard" } as const;

/** Every flag of the hub, by --help section, in --help's order. parseFlags() accepts exactly these. */
export const FLAGS = {
  ...section("Clusters:", {
    clusters: list({
      arg: "a,b",
      help: "kubeconfig contexts to serve (required); `all` = every known context, now and later; `in-cluster` = " +
        "this pod's own cluster (service account)",
    }),
    kubeconfig: list({
      arg: "FILE",
      help: "kubeconfig to read; repeatable",
      defaultText: "every clusters/*.yaml plus $KUBECONFIG (colon-separated) or ~/.kube/config",
    }),
    "cluster-dir": text({
      arg: "DIR",
      help: "folder of kubeconfig files (*.yaml), watched: a file added registers its contexts, removed unregisters " +
        "them; --kubeconfig files are watched too",
      defaultText: "./clusters (/app/clusters in the image) when no --kubeconfig is given",
      read: nonEmpty("name a folder of kubeconfig files, e.g. ./clusters"),
    }),
    "cluster-secrets": text({
      arg: "NS",
      help: "register clusters from Secrets in namespace NS of the home cluster labelled " +
        "sigs.k8s.io/multicluster-runtime-kubeconfig=true (data key kubeconfig; cluster name = Secret name)",
      read: kubeName<string | undefined>(DNS_LABEL, 63, "must be a namespace name (a lowercase DNS label)"),
    }),
    "cluster-api": list({
      arg: "NS[,NS]",
      help: "register one cluster per Cluster API Cluster (cluster.x-k8s.io) in these namespaces of the home cluster " +
        "('*' = all; repeatable) while its phase is Provisioned, from its Secret NAME-kubeconfig (data key value), " +
        "held to the untrusted rules; cluster name = NAMESPACE/NAME",
      read: namespacesOrAll("for all namespaces"),
    }),
    "cluster-name-prefix": list({
      arg: "PROVIDER=PREFIX",
      help: `put PREFIX before every name PROVIDER registers, so providers run side by side (PROVIDER: ${
        PREFIXABLE_PROVIDERS.join(", ")
      }; repeatable, comma list; e.g. secret=sec#); the command line's names are never prefixed and stay reserved`,
      read: (raw) => {
        try {
          return parseNamePrefixes(raw ?? []);
        } catch (err) {
          if (err instanceof NamePrefixError) throw new FlagError(err.message);
          throw err;
        }
      },
    }),
    "cluster-profiles": list({
      arg: "NS[,NS]",
      help: "register one cluster per ClusterProfile (multicluster.x-k8s.io, SIG-Multicluster) in these namespaces " +
        "of the home cluster ('*' = all; repeatable) while its ControlPlaneHealthy condition is True; cluster name " +
        "= NAMESPACE/NAME; needs --clusterprofile-provider-file",
      read: namespacesOrAll("for all"),
    }),
    "clusterprofile-provider-file": text({
      arg: "FILE",
      help: "KEP-5339's JSON: the exec plugin for each access provider name. Only the plugins it names run (no " +
        "--exec-plugin-allowlist needed); a profile gives server and inline CA (https only) and extra args/env as " +
        "its policies allow",
      needs: { flag: "cluster-profiles", hint: "NAMESPACE" },
    }),
    namespace: list({ arg: "NS", short: "n", help: "namespace to watch; repeatable", defaultText: "all namespaces" }),
    "all-namespaces": bool({
      short: "A",
      help: "watch all namespaces (the default; Kopf's flag, not with --namespace)",
    }),
    "home-cluster": text({
      arg: "NAME",
      help: "the cluster holding the hub's own objects (Leases, cluster Secrets, Mirror sources, TokenReviews)",
      defaultText: "in-cluster if selected, else the first",
    }),
    "service-account-dir": text({
      arg: "DIR",
      help: "where in-cluster credentials live",
      defaultText: "/var/run/secrets/kubernetes.io/serviceaccount",
    }),
    operators: list({
      arg: "a,b",
      help: `built-in operators to run: ${Object.keys(BUILT_IN_OPERATORS).join(", ")}; \`none\` = none (Mirrors ` +
        "live in the home cluster only)",
      defaultText: "all of them",
      read: (raw) => {
        if (raw === undefined) return undefined;
        const valid = Object.keys(BUILT_IN_OPERATORS);
        if (raw.length === 1 && raw[0] === "none") return [];
        const unknown = raw.find((o) => !valid.includes(o));
        if (raw.length === 0 || unknown !== undefined) {
          throw new FlagError(
            `invalid --operators "${unknown ?? ""}": choose from ${valid.join(", ")}, comma-separated, or \`none\``,
          );
        }
        return raw;
      },
    }),
    "check-reads": bool({
      help: "development: an operator that declared `reads` fails a reconcile that reads any other field of an object",
      defaultText: "off: each read of a checked object goes through a Proxy; the test kit's hubs turn it on",
    }),
    http2: bool({
      help: "offer HTTP/2 to the API servers",
      defaultText: "HTTP/1.1 keep-alive, about a third less CPU per request here; see docs/architecture.md",
    }),
    "mirror-orphan-on-unreachable-after": seconds(
      "600",
      "a deleted Mirror's finalizer gives up on the copy in a target unreachable this long, with a Warning Event",
    ),
    "mirror-namespaces": list({
      arg: "a,b",
      help: "the only namespaces Mirrors may copy into; none is created",
      defaultText: "any namespace but kube-system, kube-public, kube-node-lease, created when missing; the Helm " +
        "chart always sets it",
      read: (raw, name) => {
        if (raw === undefined) return undefined;
        if (!raw.length) {
          throw new FlagError(`invalid --${name}: give at least one namespace name, e.g. --${name} apps`);
        }
        const bad = raw.find((n) => !isNamespace(n));
        if (bad !== undefined) {
          throw new FlagError(
            `invalid --${name} "${bad}": each must be a namespace name (a lowercase DNS label, e.g. apps)`,
          );
        }
        return [...new Set(raw)];
      },
    }),
    "cleanup-on-remove": bool({
      help: "remove the hub's finalizers from a cluster that left the registry (its Secret or file gone), once its " +
        "workers stopped; at most 15 s, a failure is logged; see also `cleanup`",
      defaultText: "off",
    }),
  }),

  ...section(
    "Untrusted credentials (labelled Secrets and files dropped into --cluster-dir; --kubeconfig files and " +
      "$KUBECONFIG are trusted as kubectl trusts them, and their context names are reserved):",
    {
      "exec-plugin-allowlist": list({
        arg: "CMD[,CMD]",
        help: "exec credential plugins an untrusted kubeconfig may run (repeatable): exact command names (aws) or " +
          "absolute paths; each runs with PATH, HOME and its own exec.env only. tokenFile, *-file paths and " +
          "auth-provider are always refused there",
        defaultText: "none",
        read: (raw, name) => {
          const problem = execAllowlistProblem(raw ?? []);
          if (problem) throw new FlagError(`invalid --${name}: ${problem}`);
          return raw ?? [];
        },
      }),
      "allow-http-servers": bool({
        help: "accept http:// servers in untrusted kubeconfigs",
        defaultText: "https only, so a token never crosses the network in the clear",
      }),
    },
  ),

  ...section("Leader election (off by default; replicas that do not lead keep watching but do not reconcile):", {
    "leader-elect": bool({ help: "elect one reconciling replica through a coordination.k8s.io/v1 Lease" }),
    "leader-elect-id": text({
      arg: "NAME",
      help: "the Lease's name",
      default: "operator-hub.demo.operator",
      read: kubeName(DNS_SUBDOMAIN, 253, "a Lease name must be a lowercase DNS subdomain"),
    }),
    "leader-elect-namespace": text({
      arg: "NS",
      help: "the Lease's namespace",
      defaultText: "the pod's own in-cluster, else the Lease cluster's context namespace, else default",
      read: kubeName<string | undefined>(DNS_LABEL, 63, "must be a lowercase DNS label"),
    }),
    "leader-elect-cluster": text({
      arg: "NAME",
      help: "the cluster holding the Lease",
      defaultText: "the home cluster",
    }),
    "leader-elect-lease-duration": seconds("15", "how long a standby waits after the last renewal it saw"),
    "leader-elect-renew-deadline": seconds("10", "how long the leader retries renewing before it stops leading"),
    "leader-elect-retry-period": seconds("2", "pause between attempts to acquire or renew"),
  }),

  ...section("Sharding (off by default; replicas share the registered clusters, each reconciled by exactly one):", {
    shard: bool({
      help: "hold a peer Lease in the home cluster (leader election's namespace); each cluster goes to the weighted " +
        "rendezvous-hash winner among the live replicas, which reconciles there only while it holds the cluster's " +
        "fence Lease (written on hand-over only: it lives as long as its holder's peer Lease)",
    }),
    "shard-id": text({
      arg: "NAME",
      help: "the Leases' name prefix and group label",
      default: "operator-hub",
      needs: SHARD,
      read: kubeName(DNS_SUBDOMAIN, 40, "a lowercase DNS name of at most 40 characters (it prefixes Lease names)"),
    }),
    "shard-warm": bool({
      help: "keep watching clusters other replicas own (no reconciles): faster takeover, more memory",
      defaultText: "only owned clusters are watched",
      needs: SHARD,
    }),
    "shard-weight": text({
      arg: "N",
      help: "this replica's relative share of the clusters",
      default: "1",
      needs: SHARD,
      read: bounded((n) => n > 0 && n <= 1000, "must be a number above 0 and at most 1000"),
    }),
    "shard-lease-duration": seconds("15", "a replica whose peer Lease is not renewed this long is dead", SHARD),
    "shard-renew-deadline": seconds(
      "10",
      "stop reconciling everywhere when the own peer Lease was not renewed this long",
      SHARD,
    ),
    "shard-renew-period": seconds("2", "pause between peer Lease renewals and ownership passes", SHARD),
  }),

  ...section("Health:", {
    liveness: text({
      arg: "URL",
      help: "serve /healthz, /readyz, /status and /metrics on URL's host and port, Kopf's form, e.g. " +
        "http://0.0.0.0:8080/healthz (with --metrics-bind-address, only /healthz and /readyz stay here). /healthz " +
        "fails only when the hub is wedged; /readyz is 200 once the home cluster and the clusters the command line " +
        "names listed, and every cluster provider read its sources. Both name at most 50 clusters (a summary " +
        "counts them all; /status has the details, one page at a time). Both ports close a connection whose " +
        "request head takes over 10 s and hold at most 256 connections; bound to 127.0.0.1, ::1 or localhost they " +
        "answer 421 to a Host that is not loopback (DNS rebinding)",
      defaultText: "not served",
      read: (raw) => raw === undefined ? undefined : parseLiveness(raw),
    }),
    "readiness-clusters": text({
      arg: "MODE",
      help: "which clusters hold /readyz back: command-line (the names --clusters lists, the contexts of " +
        "--kubeconfig files and $KUBECONFIG, in-cluster, and the home cluster; other clusters from Secrets, the " +
        "folder, ClusterProfiles and Cluster API show in /status and never make the pod unready) or all (every " +
        "registered cluster too, so one unreachable Secret's cluster takes the pod out of its Service)",
      default: "command-line",
      read: oneOf(["command-line", "all"] as const, "choose command-line (the default) or all", { json: true }),
    }),
  }),

  ...section("Protected metrics and status (kubebuilder's defaults; see docs/security.md):", {
    "metrics-bind-address": text({
      arg: "HOST:PORT",
      help: "serve /metrics and /status there only, e.g. :8443, each request checked by a TokenReview and a " +
        "SubjectAccessReview (get on the path) in the home cluster; --liveness then keeps just /healthz and " +
        "/readyz. Answers are cached (accepted tokens 60 s, rejected 10 s); a request that needs a review beyond 4 " +
        "in flight or 10/s (burst 20) gets 429 and Retry-After",
      defaultText: "not served",
      read: (raw, name) => raw === undefined ? undefined : parseBindAddress(raw, name, 8443),
    }),
    "metrics-secure": text({
      arg: "=true|false",
      help: "HTTPS, or plain HTTP for local use; given bare it means true",
      default: "true",
      needs: METRICS,
      bareTrue: true,
      read: (raw, name) =>
        oneOf(["true", "false"] as const, "choose true or false", { fold: true })(raw, name) === "true",
    }),
    "tls-cert-file": text({
      arg: "FILE",
      help: "PEM certificate for the protected port, re-read when it changes",
      defaultText: "without it and --tls-private-key-file, a self-signed certificate made at start",
      needs: METRICS,
      read: nonEmpty("name a PEM file"),
    }),
    "tls-private-key-file": text({
      arg: "FILE",
      help: "its PEM private key, re-read when it changes",
      needs: METRICS,
      read: nonEmpty("name a PEM file"),
    }),
  }),

  ...section(
    "Admission webhooks (operators' validate and mutate handlers; off by default; see docs/operators/admission.md):",
    {
      "webhook-bind-address": text({
        arg: "HOST:PORT",
        help: "serve AdmissionReview v1 over HTTPS there (behind the connection gate), and install each operator's " +
          "Validating/MutatingWebhookConfiguration in every engaged cluster this replica owns (RBAC: " +
          "get/list/watch/create/patch/delete)",
        defaultText: "off",
        read: (raw, name) => raw === undefined ? undefined : parseBindAddress(raw, name, 9443),
      }),
      "webhook-cert-dir": text({
        arg: "DIR",
        help: "tls.crt, tls.key and ca.crt (cert-manager's Secret), re-read when they change",
        defaultText: "a CA and a serving certificate made by the hub, renewed in place",
        needs: WEBHOOK,
        read: nonEmpty("name the folder holding tls.crt and tls.key"),
      }),
      "webhook-url": text({
        arg: "BASE",
        help: "https URL the apiservers reach the hub at, e.g. https://hub.example.com:9443",
        defaultText: "https://127.0.0.1:PORT, for clusters on this machine",
        needs: WEBHOOK,
        read: (raw, name) => {
          const u = raw === undefined ? undefined : URL.parse(raw);
          if (raw !== undefined && (!u || u.protocol !== "https:" || u.search || u.hash || u.username || u.password)) {
            throw new FlagError(
              `invalid --${name} "${raw}": an https URL without query or credentials, e.g. https://hub.example.com:9443`,
            );
          }
          return raw;
        },
      }),
      "webhook-service": text({
        arg: "NS/NAME[:PORT]",
        help: "the home cluster's apiserver calls the hub through this Service (port 443 unless given)",
        needs: WEBHOOK,
        read: (raw, name) => {
          if (raw === undefined) return undefined;
          const m = raw.match(/^([a-z0-9-]+)\/([a-z0-9-]+)(?::(\d{1,5}))?$/);
          const port = m?.[3] ? Number(m[3]) : 443;
          if (!m || !DNS_LABEL.test(m[1]) || !DNS_LABEL.test(m[2]) || port < 1 || port > 65535) {
            throw new FlagError(`invalid --${name} "${raw}": expected NAMESPACE/NAME[:PORT], e.g. hub/webhooks`);
          }
          return { namespace: m[1], name: m[2], port };
        },
      }),
      "webhook-name": text({
        arg: "NAME",
        help: "in every configuration's name, operator-hub-OPERATOR-NAME, so two hubs sharing clusters keep theirs " +
          "apart",
        default: "default",
        needs: WEBHOOK,
        read: kubeName(DNS_LABEL, 40, "a DNS label of at most 40 characters"),
      }),
      "webhook-cert-lifetime": text({
        arg: "SECONDS",
        help: "the self-made serving certificate's lifetime, renewed at two thirds",
        default: "2592000",
        defaultText: "30 days",
        needs: WEBHOOK,
        read: bounded((n) => n >= 3, "seconds, at least 3", 1000),
      }),
    },
  ),

  ...section("Logs and events:", {
    "log-level": text({
      arg: "LEVEL",
      help: LOG_LEVELS.join("|"),
      defaultText: "info",
      read: (raw, name) =>
        raw === undefined
          ? undefined
          : oneOf<LogLevel>(LOG_LEVELS, `choose one of ${LOG_LEVELS.join(", ")}`)(raw, name),
    }),
    verbose: bool({ help: "Kopf's flag: --log-level debug" }),
    debug: bool({ help: "Kopf's flag: --log-level debug" }),
    quiet: bool({ help: "Kopf's flag: --log-level warn" }),
    "log-format": text({
      arg: "FORMAT",
      help: "json|text",
      default: "json",
      read: oneOf(["json", "text"] as const, "choose json or text"),
    }),
    "event-level": text({
      arg: "LEVEL",
      help: "post Kubernetes Events at or above Normal|Warning",
      default: "Warning",
      read: oneOf(["Normal", "Warning"] as const, "choose Normal or Warning", { fold: true }),
    }),
  }),

  ...section("Limits (all optional):", {
    concurrency: limit("concurrency", "WHOLE", "reconciles running at once, all clusters"),
    qps: limit("qps", "N", "process-wide reconciles per second"),
    burst: limit("burst", "WHOLE", "process-wide reconcile burst"),
    "cluster-qps": limit("clusterQps", "N", "API requests per second per cluster"),
    "cluster-burst": limit("clusterBurst", "WHOLE", "API request burst per cluster"),
    "reconcile-timeout": limit("reconcileTimeoutMs", "SECONDS", "before a reconcile is abandoned and retried"),
    "watch-idle-timeout": limit("watchIdleTimeoutMs", "SECONDS", "of watch silence before the stream is reopened"),
    "request-timeout": limit("requestTimeoutMs", "SECONDS", "per API request"),
    "drain-timeout": limit("drainTimeoutMs", "SECONDS", "in-flight reconciles get on shutdown"),
    "max-retry-delay": limit("maxRetryDelayMs", "SECONDS", "cap of the per-object retry backoff"),
    "max-object-bytes": limit(
      "maxObjectBytes",
      "SIZE",
      "largest response body or watch event kept (bytes, Ki, Mi, Gi)",
    ),
  }),

  ...section(undefined, {
    standalone: bool({ help: "Kopf's flag, accepted: the hub never peers with other hubs unless asked" }),
    help: bool({ short: "h", help: "show this help" }),
    version: bool({ help: "show the version" }),
  }),
};

/** A flag's name, without `--`. */
export type FlagName = keyof typeof FLAGS;

/** What each flag's `read` made of the command line. */
export type FlagReadings = { [K in FlagName]: ReturnType<(typeof FLAGS)[K]["read"]> };
