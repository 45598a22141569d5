// What the hub asks a local apiserver, seen from outside the hub: an InterceptProxy in front of a local cluster and
// a recorder of the SelfSubjectAccessReviews (the RBAC pre-flight) passing through it.

import type { HookResult, InterceptedRequest } from "../support/intercept_proxy.ts";
import { proxyInFrontOf } from "../support/local_proxy.ts";
import { HubProcess } from "../../dev/support/hub_process.ts";
import { adminToken } from "../support/mod.ts";
import { remoteKubeconfig } from "./_support.ts";

/** One permission as the hub asked it: a SelfSubjectAccessReview's resourceAttributes. */
export interface AskedPermission {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
}

/**
 * Records every SelfSubjectAccessReview a client sends through a proxy, deduplicated (a forbidden cluster's
 * pre-flight is retried), in first-seen order, and the namespaces of its SelfSubjectRulesReviews (a hub watching one
 * namespace asks that namespace's rules first, and access reviews only for what they do not allow). Install with
 * `proxy.hook = reviews.hook`.
 */
export class AccessReviews {
  readonly #asked = new Map<string, AskedPermission>();
  readonly #rules = new Set<string>();

  readonly hook = (req: InterceptedRequest): HookResult => {
    if (req.method === "POST" && req.path.endsWith("/selfsubjectrulesreviews")) {
      this.#rules.add(JSON.parse(req.body).spec.namespace);
      return undefined;
    }
    if (req.method !== "POST" || !req.path.endsWith("/selfsubjectaccessreviews")) return undefined;
    const a = JSON.parse(req.body).spec.resourceAttributes;
    const p: AskedPermission = { verb: a.verb, group: a.group ?? "", resource: a.resource };
    if (a.subresource) p.subresource = a.subresource;
    if (a.namespace) p.namespace = a.namespace;
    this.#asked.set(JSON.stringify(p), p);
    return undefined;
  };

  /** Every distinct permission asked so far. */
  asked(): AskedPermission[] {
    return [...this.#asked.values()];
  }

  /** The namespaces whose rules were asked so far. */
  rulesAsked(): string[] {
    return [...this.#rules];
  }
}

/**
 * `kubectl auth can-i`'s arguments for a permission, e.g. `patch uuid.demo.operator --subresource=status -A`
 * (`resource/x` would ask about the object named x, not a subresource).
 */
export function canIArgs(p: AskedPermission): string[] {
  return [
    p.verb,
    `${p.resource}${p.group ? `.${p.group}` : ""}`,
    ...(p.subresource ? [`--subresource=${p.subresource}`] : []),
    ...(p.namespace ? ["-n", p.namespace] : ["-A"]),
  ];
}

/** What a hub asked and did at one cluster until its pre-flight passed and it was watching. */
export interface ObservedHub {
  /** The pre-flight's questions, deduplicated. */
  asked: AskedPermission[];
  /** `METHOD path` of every request it sent (query strings dropped; `?watch` GETs as `WATCH path`). */
  requests: string[];
}

/**
 * Runs a hub (admin credentials, `args` added) against local cluster `context` through a proxy until the cluster
 * is `watching`, and reports what it asked and sent there.
 */
export async function observeHub(context: string, args: string[]): Promise<ObservedHub> {
  const proxy = await proxyInFrontOf(context);
  const reviews = new AccessReviews();
  proxy.hook = reviews.hook;
  const dir = await Deno.makeTempDir({ prefix: "operator-hub-observe-" });
  let hub: HubProcess | undefined;
  try {
    const file = `${dir}/${context}.yaml`;
    await Deno.writeTextFile(file, remoteKubeconfig(context, adminToken(context), context, proxy.url));
    hub = HubProcess.start({ clusters: [context], kubeconfigs: [file], args });
    await hub.waitStatus((s) => s.clusters?.[context]?.state === "watching", 60_000, `${context} watching`);
    const requests = proxy.records.map((r) => {
      const watch = new URLSearchParams(r.query).get("watch");
      return `${r.method === "GET" && (watch === "true" || watch === "1") ? "WATCH" : r.method} ${r.path}`;
    });
    return { asked: reviews.asked(), requests: [...new Set(requests)] };
  } finally {
    await hub?.kill();
    await proxy.close();
    await Deno.remove(dir, { recursive: true });
  }
}
