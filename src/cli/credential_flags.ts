// The flags that loosen what untrusted kubeconfigs (labelled Secrets, --cluster-dir files) may hold:
// `--exec-plugin-allowlist` and `--allow-http-servers`, their checks and their --help section. Pure.

import { commaList, FlagError, type FlagValues } from "./flag_values.ts";
import { type CredentialPolicy, execAllowlistProblem } from "../kube/mod.ts";

/** The untrusted-credential flags' node:util parseArgs options. */
export const CREDENTIAL_OPTIONS = {
  "exec-plugin-allowlist": { type: "string", multiple: true },
  "allow-http-servers": { type: "boolean" },
} as const;

/** The --help section of the untrusted-credential flags. */
export function credentialHelp(): string[] {
  return [
    "Untrusted credentials (labelled Secrets and files dropped into --cluster-dir; --kubeconfig files and",
    "$KUBECONFIG are trusted as kubectl trusts them, and their context names are reserved):",
    "  --exec-plugin-allowlist CMD[,CMD]",
    "                             exec credential plugins an untrusted kubeconfig may run (repeatable): exact",
    "                             command names (aws) or absolute paths; each runs with PATH, HOME and its own",
    "                             exec.env only. Default: none. tokenFile, *-file paths and auth-provider are",
    "                             always refused there",
    "  --allow-http-servers       accept http:// servers in untrusted kubeconfigs (default: https only, so a",
    "                             token never crosses the network in the clear)",
  ];
}

/** `--exec-plugin-allowlist` and `--allow-http-servers` as the policy untrusted kubeconfigs are held to. */
export function parseCredentialFlags(values: FlagValues): CredentialPolicy {
  const execAllowlist = commaList(values["exec-plugin-allowlist"]);
  const problem = execAllowlistProblem(execAllowlist);
  if (problem) throw new FlagError(`invalid --exec-plugin-allowlist: ${problem}`);
  return { execAllowlist, allowHttpServers: values["allow-http-servers"] === true };
}
