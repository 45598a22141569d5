// The names of a shard group's Leases: `GROUP-peer-IDENTITY-HASH` and `GROUP-fence-CLUSTER-HASH`, valid DNS-1123 names.

import { fnv1a64 } from "./rendezvous.ts";

/** A DNS-1123 name part from any text: lowercase, [a-z0-9-], at most `max` characters, no dash at either end. */
function slug(text: string, max: number): string {
  return text.toLowerCase().replace(/[^a-z0-9-]+/g, "-").slice(0, max).replace(/^-+|-+$/g, "") || "x";
}

const hash8 = (text: string) => fnv1a64(text).toString(16).padStart(16, "0").slice(0, 8);

/** `GROUP-peer-IDENTITY`, made a valid Lease name. */
export function peerLeaseName(group: string, identity: string): string {
  return `${group}-peer-${slug(identity, 60)}-${hash8(identity)}`;
}

/** `GROUP-fence-CLUSTER-HASH`: the hash keeps names distinct when slugging or truncation makes them alike. */
export function fenceLeaseName(group: string, cluster: string): string {
  return `${group}-fence-${slug(cluster, 60)}-${hash8(cluster)}`;
}
