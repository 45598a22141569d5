// One untrusted kubeconfig text (a Secret's, a Cluster API kubeconfig Secret's) turned into the offer of one cluster.

import {
  type CredentialPolicy,
  type EnvSource,
  parseKubeconfigText,
  STRICT_CREDENTIAL_POLICY,
  type UntrustedKubeconfigParser,
} from "../../../kube/mod.ts";
import { errorText } from "../../../util/mod.ts";
import type { ClusterOffer } from "../cluster_offer.ts";

/** What one kubeconfig text is read with. */
export interface KubeconfigOfferOptions {
  /** The name the cluster is offered under (before any prefix). */
  name: string;
  /** `secret NS/NAME`: how parse errors name where the text came from. */
  source: string;
  /** `Secret NS/NAME in cluster "home"`: how the context problems name it. */
  where: string;
  /** What the text may hold; default: inline credentials, https, no exec plugin. */
  policy?: CredentialPolicy;
  env?: EnvSource;
  /** Parses the text (a KubeconfigParser: off the event loop). Default: parsed on the caller's thread. */
  parser?: UntrustedKubeconfigParser;
}

/**
 * The offer of the cluster `text` reaches through its `current-context`, or its only context.
 *
 * Guarantees: never throws; the text is held to `policy` as untrusted before anything of it is used, and every problem
 * (does not parse, no usable context, a field the policy refuses) is the offer's one-line `error`, naming the source,
 * never a credential.
 */
export async function kubeconfigOffer(text: string, o: KubeconfigOfferOptions): Promise<ClusterOffer> {
  const { name, where } = o;
  try {
    const doc = await parseKubeconfigText(text, {
      source: o.source,
      env: o.env,
      untrusted: o.policy ?? STRICT_CREDENTIAL_POLICY,
      parser: o.parser,
    });
    const wanted = doc.currentContext ?? (doc.contexts.length === 1 ? doc.contexts[0].name : undefined);
    const ctx = doc.contexts.find((c) => c.name === wanted);
    if (!ctx) {
      const why = doc.currentContext
        ? `its current-context "${doc.currentContext}" is not defined`
        : `it has ${doc.contexts.length} contexts and no current-context`;
      return { name, error: `kubeconfig in ${where} is not usable: ${why}`, endpointDigest: "", credentialsDigest: "" };
    }
    return {
      name,
      access: ctx.access,
      error: ctx.error,
      endpointDigest: ctx.endpointDigest,
      credentialsDigest: ctx.credentialsDigest,
    };
  } catch (err) {
    return { name, error: errorText(err), endpointDigest: "", credentialsDigest: "" };
  }
}

/** A Secret's base64 data value as text; "" when it is not base64 (read as an empty kubeconfig, refused as such). */
export function decodeSecretValue(b64: string): string {
  try {
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new TextDecoder().decode(bytes);
  } catch {
    return "";
  }
}
