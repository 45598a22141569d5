// What each corpus mutation does to a draft kubeconfig, and what the rules for untrusted kubeconfigs then require.
// Private to tests/support: kubeconfig_mutations.ts is the surface.

import { basename, dirname } from "node:path";
import { hostilePadding } from "../../dev/support/hostile_kubeconfig.ts";
import type { Draft, Mutation } from "./_mutation_catalog.ts";
import type { CorpusProvider, CorpusWorld, Reason } from "./kubeconfig_mutations.ts";

/** What one mutation allows of the hub. */
export interface Effect {
  /** Reasons a refusal line may give. */
  reasons: Reason[];
  /** A rule or the format forbids it: it must be refused. */
  must?: boolean;
  /** It may be engaged and fail at its server. */
  fails?: boolean;
  /** False when it can no longer be served at all. */
  servable?: boolean;
  /** It may register nothing and say nothing (a document with no context). */
  ignorable?: boolean;
  /** The reserved name it takes. */
  reserved?: string;
}

const NOT_YAML = [
  "clusters: [\n",
  "{{{{ not yaml\n",
  "key: 'unterminated\n",
  "\t- tab: indented\n",
  'users:\n- name: a\n  user: {token: "x\n',
];

/** The allowed outcomes of mutation `m` on a Secret or a folder file. */
export function effectOf(m: Mutation, provider: CorpusProvider, world: CorpusWorld): Effect {
  const maybe: Effect = { reasons: ["invalid"] };
  switch (m.kind) {
    case "token-file":
      return { reasons: ["token-file"], must: true };
    case "file-path":
      return { reasons: ["file-path", "invalid"], must: true };
    case "auth-provider":
      return { reasons: ["auth-provider"], must: true };
    case "exec-forbidden":
      return { reasons: ["exec"], must: true };
    case "exec-allowed":
      // The allowlist holds exact names and paths: the same plugin reached through `..` is not on it.
      return m.path === "exact" ? { reasons: [] } : { reasons: ["exec"], must: true };
    case "exec-env":
      return { reasons: ["exec"] };
    case "http":
      return { reasons: ["http"], must: true };
    case "server":
    case "cert-data":
    case "proxy":
      if (m.kind === "proxy" && m.value === "socks-dead") return { ...maybe, fails: true, servable: false };
      return { reasons: ["invalid"], must: true };
    case "ca-data":
      return m.value === "number" ? { ...maybe, fails: true, servable: false } : { reasons: ["invalid"], must: true };
    case "missing":
      return m.what === "user-ref" ? { ...maybe, fails: true, servable: false } : { reasons: ["invalid"], must: true };
    case "wrong-type":
      return m.field === "server-map" || m.field === "context-string"
        ? { reasons: ["invalid"], must: true }
        : { ...maybe, fails: true, servable: false };
    case "duplicate":
      return m.what === "cluster-first-real" ? maybe : { reasons: ["invalid"], must: true };
    case "current-context":
      return provider === "secret" ? { reasons: ["invalid"], must: true } : { reasons: [] };
    case "huge":
      if (m.field === "token" || m.field === "server-path") return { ...maybe, fails: true, servable: false };
      return m.field === "ca-data" ? { reasons: ["invalid"], must: true } : maybe;
    case "reserved":
      return {
        reasons: ["reserved"],
        must: true,
        reserved: world.reserved[m.which % world.reserved.length],
      };
    case "weird-name":
      return maybe;
    case "maybe":
      return m.what === "wrong-token"
        ? { ...maybe, fails: true, servable: false }
        : { ...maybe, fails: m.what !== "insecure" };
    case "benign":
      // `anchors` is refused when the alias it makes is written (buildCase decides: a later mutation may undo it).
      return { reasons: [] };
    case "many-contexts":
      return { reasons: ["limits"], must: true };
    case "doc":
      switch (m.variant) {
        case "anchor-padded":
        case "alias-heavy":
          return { reasons: ["limits"], must: true };
        case "deep":
          return maybe;
        case "binary":
          return { reasons: ["invalid"], must: true, ignorable: provider === "folder" };
        case "top-type":
          return {
            reasons: ["invalid"],
            must: true,
            ignorable: provider === "folder" && (m.as === "empty" || m.as === "null"),
          };
        default:
          return { reasons: ["invalid"], must: true };
      }
  }
}

/** The section whose fields `m` changes, when it changes fields of one (rather than replacing a whole section). */
function fieldsOf(m: Mutation): "cluster" | "user" | "context" | undefined {
  switch (m.kind) {
    case "token-file":
    case "cert-data":
      return "user";
    case "file-path":
      return m.key === "certificate-authority" ? "cluster" : "user";
    case "http":
    case "server":
    case "ca-data":
    case "proxy":
      return "cluster";
    case "missing":
      return m.what === "cluster-ref" || m.what === "user-ref" ? "context" : undefined;
    case "wrong-type":
      return m.field === "token-number" || m.field === "token-list"
        ? "user"
        : m.field === "server-map"
        ? "cluster"
        : undefined;
    case "huge":
      return m.field === "token"
        ? "user"
        : m.field === "namespace"
        ? "context"
        : m.field === "server-path" || m.field === "ca-data"
        ? "cluster"
        : undefined;
    case "maybe":
      return m.what === "insecure" || m.what === "tls-server-name" || m.what === "userinfo-url" ? "cluster" : "user";
    case "benign":
      return m.what === "junk" ? "cluster" : m.what === "anchors" ? "user" : "context";
    default:
      return undefined;
  }
}

/**
 * Applies `m` to `d` in place; false when it could not, because an earlier mutation removed or retyped the section it
 * changes (it then has no effect on the outcome). Whole-document mutations are applied by {@linkcode docLevelBytes}.
 */
export function applyMutation(d: Draft, m: Mutation): boolean {
  const w = d.world;
  const key = `k${d.id}`;
  // A section an earlier mutation removed or retyped takes no further field changes (they land on a detached object).
  const section = (v: unknown) =>
    typeof v === "object" && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : {};
  const cl = section(d.cluster);
  const us = section(d.user);
  const ctx = section(d.context);
  const token = typeof us.token === "string" ? us.token : "";
  const touched = fieldsOf(m);
  if (touched !== undefined && section(d[touched]) !== d[touched]) return false;
  // The user section counts only while the context names its user: a change to it after the reference is gone, or
  // removing the reference after a change to it, would leave a mutation that decides nothing (an anonymous context).
  const changesUser = touched === "user" ||
    ["auth-provider", "exec-forbidden", "exec-allowed", "exec-env"].includes(m.kind);
  if (changesUser && ctx.user === undefined) return false;
  if (m.kind === "missing" && m.what === "user-ref" && d.userTouched) return false;
  if (changesUser) d.userTouched = true;
  // A context scoped to the test namespace (namespace-scope) keeps it: another namespace would be served empty.
  const renamesNamespace = (m.kind === "huge" && m.field === "namespace") ||
    (m.kind === "benign" && m.what === "plain-namespace");
  if (renamesNamespace && ctx.extensions !== undefined) return false;
  // A server an earlier mutation made something other than a string (a list, a number, removed) stays that way.
  const editsServer = (m.kind === "http" && m.host === "real") || (m.kind === "huge" && m.field === "server-path") ||
    (m.kind === "maybe" && m.what === "userinfo-url");
  if (editsServer && typeof cl.server !== "string") return false;
  // A context that took a reserved name keeps it (renaming it would make it an ordinary case).
  const renames = m.kind === "weird-name" || (m.kind === "huge" && m.field === "name");
  if (renames && w.reserved.includes(d.contextName)) return false;
  const path = (choice: "marker" | "relative" | "missing") =>
    choice === "marker"
      ? w.markerFile
      : choice === "relative"
      ? `../${basename(w.markerFile)}`
      : "/nonexistent/operator-hub-corpus/file";
  switch (m.kind) {
    case "token-file":
      us[m.key] = path(m.path);
      if (!m.keepToken) delete us.token;
      return true;
    case "file-path":
      if (m.key === "certificate-authority") {
        cl[m.key] = path(m.path);
        delete cl["certificate-authority-data"];
      } else us[m.key] = path(m.path);
      return true;
    case "auth-provider": {
      const config: Record<string, string> = m.provider === "oidc"
        ? { "idp-issuer-url": w.attacker.https, "client-id": "corpus", "id-token": `corpus-id-${d.id}` }
        : { "access-token": `corpus-access-${d.id}`, expiry: "2099-01-01T00:00:00Z" };
      if (m.cmdPath && m.provider !== "oidc") {
        Object.assign(config, { "cmd-path": w.forbiddenPlugin, "cmd-args": token, "token-key": "{.status.token}" });
      }
      d.user = { "auth-provider": { name: m.provider, config } };
      d.secrets.push(...Object.values(config).filter((v) => v.startsWith("corpus-")));
      return true;
    }
    case "exec-forbidden": {
      const shell = { args: ["-c", '"$0" "$1"', w.forbiddenPlugin, token] };
      const exec = m.command === "absolute"
        ? { command: w.forbiddenPlugin, args: [token] }
        : m.command === "relative"
        ? { command: `./${basename(w.forbiddenPlugin)}`, args: [token] }
        : { command: m.command === "bare" ? "sh" : "/bin/sh", ...shell };
      d.user = { exec: { apiVersion: "client.authentication.k8s.io/v1", interactiveMode: "Never", ...exec } };
      return true;
    }
    case "exec-allowed": {
      const dir = dirname(w.allowedPlugin);
      const command = m.path === "exact" ? w.allowedPlugin : `${dir}/../${basename(dir)}/${basename(w.allowedPlugin)}`;
      d.user = {
        exec: { apiVersion: "client.authentication.k8s.io/v1", interactiveMode: "Never", command, args: [token] },
      };
      return true;
    }
    case "exec-env": {
      // The command is allowed by name; the kubeconfig's own PATH points at a same-named program that must not run.
      const env = [{ name: "PATH", value: w.evilPathDir }];
      if (m.name === "PATH-and-HOME") env.push({ name: "HOME", value: w.evilPathDir });
      d.user = {
        exec: {
          apiVersion: "client.authentication.k8s.io/v1",
          interactiveMode: "Never",
          command: w.allowedName,
          args: [token],
          env,
        },
      };
      return true;
    }
    case "http":
      if (m.host === "attacker") {
        cl.server = w.attacker.http;
        d.attacker = true;
      } else cl.server = String(cl.server).replace(/^https:/, "http:");
      return true;
    case "server": {
      const values: Record<typeof m.value, unknown> = {
        file: "file:///etc/hostname",
        garbage: "not a url \u2603",
        empty: "",
        number: 6443,
        missing: undefined,
        "no-host": "https://",
        ftp: "ftp://127.0.0.1:21",
        list: [cl.server],
      };
      if (m.value === "missing") delete cl.server;
      else cl.server = values[m.value];
      return true;
    }
    case "ca-data":
      cl["certificate-authority-data"] = m.value === "not-base64"
        ? "%%% not base64 %%%"
        : m.value === "not-pem"
        ? btoa("hello, not a certificate")
        : 12345;
      return true;
    case "cert-data":
      if (m.value === "without-key") us["client-certificate-data"] = cl["certificate-authority-data"];
      else {
        const v = m.value === "not-base64" ? "%%% not base64 %%%" : btoa("not a certificate");
        Object.assign(us, { "client-certificate-data": v, "client-key-data": v });
      }
      return true;
    case "missing":
      if (m.what === "cluster-entry") d.omit.add("cluster");
      else if (m.what === "user-entry") d.omit.add("user");
      else if (m.what === "context-section") d.context = null as unknown as Record<string, unknown>;
      else if (m.what === "cluster-section") d.cluster = null as unknown as Record<string, unknown>;
      else if (m.what === "cluster-ref") delete ctx.cluster;
      else delete ctx.user;
      return true;
    case "wrong-type":
      if (m.field === "token-number") us.token = 12345;
      else if (m.field === "token-list") us.token = [token];
      else if (m.field === "server-map") cl.server = { url: cl.server };
      else if (m.field === "context-string") d.context = `${key}-cluster` as unknown as Record<string, unknown>;
      else if (m.field === "user-string") d.user = "token" as unknown as Record<string, unknown>;
      else d.user = { exec: "/bin/sh" };
      return true;
    case "duplicate":
      if (m.what === "context") d.duplicateContext = true;
      else if (m.what === "cluster-first-real") {
        d.clusters.push({ name: `${key}-cluster`, cluster: { server: "not a url" } });
      } else d.clustersBefore.push({ name: `${key}-cluster`, cluster: { server: "not a url" } });
      return true;
    case "current-context":
      if (d.provider !== "secret") return true;
      if (m.value === "undefined-name") d.currentContext = `${key}-nowhere`;
      else {
        d.currentContext = "";
        d.contexts.push({ name: `${key}-second`, context: { cluster: `${key}-cluster`, user: `${key}-user` } });
      }
      return true;
    case "huge":
      if (m.field === "token") us.token = "h".repeat(m.size);
      else if (m.field === "server-path") cl.server = `${cl.server}/${"p".repeat(m.size)}`;
      else if (m.field === "name") d.contextName = `${key}-${"n".repeat(m.size)}`;
      else if (m.field === "namespace") ctx.namespace = "n".repeat(m.size);
      else if (m.field === "ca-data") cl["certificate-authority-data"] = btoa("c".repeat(m.size));
      else d.extra[`x-junk-${d.id}`] = "j".repeat(m.size);
      return true;
    case "reserved": {
      const name = w.reserved[m.which % w.reserved.length];
      if (d.provider === "secret") d.name = name;
      else d.contextName = name;
      return true;
    }
    case "weird-name":
      d.contextName = `${key}${m.chars}`;
      return true;
    case "proxy":
      cl["proxy-url"] = m.value === "ftp" ? "ftp://127.0.0.1:21" : "socks5://127.0.0.1:9";
      return true;
    case "maybe":
      d.secrets.push(m.secret);
      if (m.what === "insecure") cl["insecure-skip-tls-verify"] = true;
      else if (m.what === "tls-server-name") cl["tls-server-name"] = "localhost";
      else if (m.what === "basic-auth") Object.assign(us, { username: "corpus", password: m.secret });
      else if (m.what === "userinfo-url") {
        cl.server = String(cl.server).replace("://", `://corpus:${m.secret}@`);
      } else if (m.what === "impersonate") us.as = "corpus-nobody";
      else us.token = m.secret;
      return true;
    case "benign":
      if (m.what === "namespace-scope") {
        Object.assign(ctx, {
          namespace: w.namespace,
          extensions: [{ name: "operator-hub", extension: { scope: "namespace" } }],
        });
      } else if (m.what === "plain-namespace") ctx.namespace = "kube-system";
      else if (m.what === "junk") {
        d.extra[`x-junk-${d.id}`] = m.junk;
        cl.extensions = [{ name: "corpus-junk", extension: { nested: m.junk } }];
      } else d.extra[`x-anchor-${d.id}`] = us; // the same object twice: written as an anchor and an alias
      return true;
    case "many-contexts":
      for (let i = 0; i < m.count; i++) {
        d.contexts.push({ name: `${key}-m${i}`, context: { cluster: `${key}-cluster`, user: `${key}-user` } });
      }
      return true;
    case "doc":
      return true;
  }
}

/** The bytes of a whole-document mutation (the first mutation of its case), or undefined for any other case. */
export function docLevelBytes(validText: string, m: Mutation): Uint8Array | undefined {
  if (m.kind !== "doc") return undefined;
  const enc = (s: string) => new TextEncoder().encode(s);
  switch (m.variant) {
    case "not-yaml":
      return enc(NOT_YAML[m.n % NOT_YAML.length] + validText);
    case "binary":
      return Uint8Array.from(m.bytes);
    case "top-type":
      return enc({ list: "- a\n- b\n", scalar: "just a string\n", number: "42\n", empty: "", null: "~\n" }[m.as]);
    case "section-type": {
      const value = m.as === "mapping" ? "{a: {b: c}}" : "nope";
      return enc(validText.replace(new RegExp(`^${m.section}:(\\n(?:[- ].*\\n)*)`, "m"), `${m.section}: ${value}\n`));
    }
    case "deep":
      return enc(`${validText}x-deep: ${"[".repeat(m.depth)}${"]".repeat(m.depth)}\n`);
    case "anchor-padded":
    case "alias-heavy":
      return enc(
        validText +
          hostilePadding(m.variant === "anchor-padded" ? "anchors" : "alias-bomb", m.bytes - validText.length),
      );
    case "alias-bomb": {
      const lines = [`x-lol0: &lol0 [${Array(m.width).fill('"lol"').join(", ")}]`];
      for (let i = 1; i < m.levels; i++) {
        lines.push(`x-lol${i}: &lol${i} [${Array(m.width).fill(`*lol${i - 1}`).join(", ")}]`);
      }
      return enc(`${validText}${lines.join("\n")}\n`);
    }
  }
}
