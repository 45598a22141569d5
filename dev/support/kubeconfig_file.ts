// For the CLI's tests: a kubeconfig file with the given contexts, all on one made-up server nothing listens on.
import { kubeconfigText } from "./kubeconfig_text.ts";

/** Writes a kubeconfig with `contexts` (token user, server https://127.0.0.1:1, no current context) to a fresh file. */
export function kubeconfigFile(contexts: string[], prefix: string): string {
  const file = Deno.makeTempFileSync({ prefix, suffix: ".yaml" });
  const server = "https://127.0.0.1:1";
  Deno.writeTextFileSync(file, kubeconfigText(contexts.map((name) => ({ name, server, user: { token: "t" } })), ""));
  return file;
}
