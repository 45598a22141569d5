// Unit tests for --exec-plugin-allowlist and --allow-http-servers.
import assert from "node:assert/strict";
import { credentialHelp, parseCredentialFlags } from "./credential_flags.ts";
import { FlagError } from "./flag_values.ts";

Deno.test("parseCredentialFlags defaults to no exec plugin and https only", () => {
  assert.deepEqual(parseCredentialFlags({}), { execAllowlist: [], allowHttpServers: false });
});

Deno.test("parseCredentialFlags reads a repeatable, comma-separated allowlist and --allow-http-servers", () => {
  assert.deepEqual(
    parseCredentialFlags({
      "exec-plugin-allowlist": ["aws, /opt/bin/kubelogin", "gke-gcloud-auth-plugin"],
      "allow-http-servers": true,
    }),
    { execAllowlist: ["aws", "/opt/bin/kubelogin", "gke-gcloud-auth-plugin"], allowHttpServers: true },
  );
});

Deno.test("parseCredentialFlags refuses a relative path in --exec-plugin-allowlist, naming the flag and the entry", () => {
  assert.throws(
    () => parseCredentialFlags({ "exec-plugin-allowlist": ["aws,bin/kubelogin"] }),
    (err: unknown) =>
      err instanceof FlagError &&
      /^invalid --exec-plugin-allowlist: "bin\/kubelogin" is a relative path/.test(err.message),
  );
});

Deno.test("credentialHelp documents both flags and their defaults", () => {
  const text = credentialHelp().join("\n");
  assert.match(text, /--exec-plugin-allowlist CMD.*\n(.*\n)*.*Default: none/);
  assert.match(text, /--allow-http-servers .*default: https only/);
});
