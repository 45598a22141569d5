// The ValidatingWebhookConfiguration and MutatingWebhookConfiguration of each operator for one cluster, as the
// installer writes them, and the comparison that tells drift from the apiserver's defaults. Pure.

import type { ResourceType } from "../../kube/mod.ts";
import type { AdmissionWebhook, Operator } from "../../runtime/mod.ts";
import { webhookPath } from "./admission_review.ts";

export const ADMISSION_GROUP = "admissionregistration.k8s.io";
/** The two configuration kinds, as resource types. */
export const CONFIGURATION_TYPES: Record<"validating" | "mutating", ResourceType> = {
  validating: {
    group: ADMISSION_GROUP,
    version: "v1",
    kind: "ValidatingWebhookConfiguration",
    plural: "validatingwebhookconfigurations",
    namespaced: false,
  },
  mutating: {
    group: ADMISSION_GROUP,
    version: "v1",
    kind: "MutatingWebhookConfiguration",
    plural: "mutatingwebhookconfigurations",
    namespaced: false,
  },
};
/** Every configuration the hub writes carries this label with the hub's `--webhook-name`. */
export const HUB_LABEL = "operator-hub.dev/webhook-hub";
/** ...and this one with the operator's name. */
export const OPERATOR_LABEL = "operator-hub.dev/webhook-operator";

/** How one cluster's apiserver reaches the hub. */
export type WebhookEndpoint =
  | { url: string }
  | { service: { namespace: string; name: string; port: number } };

/** What the configurations of one cluster are made of. */
export interface ConfigurationInputs {
  /** `--webhook-name`: keeps two hubs' configurations apart. */
  hubName: string;
  cluster: string;
  endpoint: WebhookEndpoint;
  /** The PEM CA bundle. */
  caBundle: string;
  /** The hub's `--namespace` list: the webhooks are called only for objects in these (empty: every namespace). */
  namespaces: readonly string[];
}

/** A configuration object as sent to the apiserver. */
export interface WebhookConfiguration {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels: Record<string, string>; resourceVersion?: string };
  webhooks: Record<string, unknown>[];
}

/** `operator-hub-OPERATOR-HUBNAME`, the name of an operator's configurations (both kinds) in every cluster. */
export function configurationName(operator: string, hubName: string): string {
  return `operator-hub-${operator}-${hubName}`;
}

/** The configurations `operator` needs in one cluster: one per kind it has webhooks of (none, one or two). */
export function desiredConfigurations(operator: Operator, inputs: ConfigurationInputs): WebhookConfiguration[] {
  const out: WebhookConfiguration[] = [];
  for (const type of ["validating", "mutating"] as const) {
    const hooks = (operator.webhooks ?? []).filter((w) => w.type === type);
    if (!hooks.length) continue;
    out.push({
      apiVersion: `${ADMISSION_GROUP}/v1`,
      kind: CONFIGURATION_TYPES[type].kind,
      metadata: {
        name: configurationName(operator.name, inputs.hubName),
        labels: {
          "app.kubernetes.io/managed-by": "operator-hub",
          [HUB_LABEL]: inputs.hubName,
          [OPERATOR_LABEL]: operator.name,
        },
      },
      webhooks: hooks.map((w) => webhookEntry(operator, w, inputs)),
    });
  }
  return out;
}

function webhookEntry(operator: Operator, w: AdmissionWebhook, inputs: ConfigurationInputs): Record<string, unknown> {
  const path = webhookPath({ operator: operator.name, type: w.type, id: w.id, cluster: inputs.cluster });
  const caBundle = btoa(inputs.caBundle);
  const e = inputs.endpoint;
  const clientConfig = "url" in e
    ? { url: `${e.url.replace(/\/+$/, "")}${path}`, caBundle }
    : { service: { ...e.service, path }, caBundle };
  const r = operator.resource;
  return {
    name: `${w.id}.${operator.name}.operator-hub.dev`,
    admissionReviewVersions: ["v1"],
    clientConfig,
    rules: [{
      apiGroups: [r.group],
      apiVersions: [r.version],
      resources: [w.subresource ? `${r.plural}/${w.subresource}` : r.plural],
      operations: [...w.operations],
      scope: r.namespaced === false ? "Cluster" : "*",
    }],
    failurePolicy: w.failurePolicy,
    matchPolicy: w.matchPolicy,
    sideEffects: w.sideEffects,
    timeoutSeconds: w.timeoutSeconds,
    namespaceSelector: inputs.namespaces.length && r.namespaced !== false
      ? { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: [...inputs.namespaces] }] }
      : {},
    objectSelector: w.objectSelector ?? {},
    ...(w.type === "mutating" ? { reinvocationPolicy: "Never" } : {}),
  };
}

/**
 * Whether `current` (as read from the apiserver) still is `desired`: the same labels and, webhook for webhook, every
 * field the hub sets equal (fields the apiserver adds, and their defaults, are not drift).
 */
export function inSync(desired: WebhookConfiguration, current: Record<string, unknown> | undefined): boolean {
  if (!current) return false;
  const meta = (current.metadata ?? {}) as { labels?: Record<string, string> };
  for (const [k, v] of Object.entries(desired.metadata.labels)) if (meta.labels?.[k] !== v) return false;
  const hooks = current.webhooks;
  if (!Array.isArray(hooks) || hooks.length !== desired.webhooks.length) return false;
  return desired.webhooks.every((w, i) => covers(w, hooks[i]));
}

/** Every field of `want` is in `got` with an equal value (objects recursively; arrays element by element). */
function covers(want: unknown, got: unknown): boolean {
  if (Array.isArray(want)) {
    return Array.isArray(got) && got.length === want.length && want.every((x, i) => covers(x, got[i]));
  }
  if (want !== null && typeof want === "object") {
    if (got === null || typeof got !== "object" || Array.isArray(got)) return false;
    const g = got as Record<string, unknown>;
    // An empty selector wants an empty one: a selector added by hand is drift.
    if (Object.keys(want).length === 0) return Object.values(g).every((v) => v === undefined);
    return Object.entries(want).every(([k, v]) => covers(v, g[k]));
  }
  return want === got;
}
