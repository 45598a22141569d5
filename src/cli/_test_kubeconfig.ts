// For the CLI's tests: a kubeconfig file with the given contexts, all on one made-up server nothing listens on.

/** Writes a kubeconfig with `contexts` (token user, server https://127.0.0.1:1) to a fresh temporary file. */
export function kubeconfigFile(contexts: string[], prefix: string): string {
  const file = Deno.makeTempFileSync({ prefix, suffix: ".yaml" });
  const lines = [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: c",
    "  cluster:",
    "    server: https://127.0.0.1:1",
  ];
  lines.push("users:", "- name: u", "  user:", "    token: t", "contexts:");
  for (const name of contexts) lines.push(`- name: ${name}`, "  context:", "    cluster: c", "    user: u");
  Deno.writeTextFileSync(file, lines.join("\n") + "\n");
  return file;
}
