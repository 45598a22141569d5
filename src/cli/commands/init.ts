// `operator-hub init DIR --group G --kind K`: writes a project of one operator (resource, handlers, test, deploy).

import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type InitNames, projectFiles } from "./_init_templates.ts";
import { printUsageError } from "../usage_error.ts";

const HELP = `Writes a new operator project into DIR (created; it must not exist or be empty).

Usage: operator-hub init DIR --group GROUP --kind KIND [--plural PLURAL] [--hub jsr|PATH]

  --group   the API group, a DNS subdomain with a dot, e.g. backups.example.com
  --kind    the kind, UpperCamelCase, e.g. BackupPolicy
  --plural  the plural resource name (default: the kind in lower case, made plural, e.g. backuppolicies)
  --hub     how the project reaches @operator-hub/hub: "jsr" for the published package, or PATH to a checkout of
            operator-hub, linked with deno.json's "links" (default: the checkout this command runs from)

It writes deno.json (the import of @operator-hub/hub and of typebox; the tasks run, test and crd), main.ts,
KIND_resource.ts (defineResource), KIND_operator.ts (its handlers), KIND_operator_test.ts (the test kit, two
clusters), deploy/ (kustomize: namespace, RBAC, Deployment) and a Dockerfile. Then, in DIR:

  deno task test                       # passes against real local clusters
  deno task crd | kubectl apply -f -   # the CRD, generated from KIND_resource.ts
  deno task run --kubeconfig FILE --clusters a,b

Exit codes: 0 written; 2 a usage error (one line on stderr: DIR not empty, a group without a dot, a kind not
UpperCamelCase, an unknown flag).`;

const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;
const PLURAL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const VALUE_FLAGS = ["--group", "--kind", "--plural", "--hub"] as const;

/** Where `initMain` writes and prints (tests pass their own). */
export interface InitMainOptions {
  /** What a relative DIR and --hub PATH are resolved against. Default `Deno.cwd()`. */
  cwd?: string;
  /** The checkout linked by default (no --hub). Default: the one this module is in, when it is a local file. */
  checkout?: string;
  /** Receives the lines printed on success. Default console.log. */
  print?: (line: string) => void;
}

/**
 * Runs `operator-hub init ARGS`; resolves with the exit code.
 *
 * Guarantees: on 2 nothing was written (every check is made first) and stderr holds one line naming the value seen; on
 * 0 every file of the project exists under DIR and one line per file was printed, then the next steps.
 */
export async function initMain(argv: string[], options: InitMainOptions = {}): Promise<number> {
  const print = options.print ?? console.log;
  if (argv.includes("--help") || argv.includes("-h")) {
    print(HELP);
    return 0;
  }
  const parsed = parseInitArgs(argv);
  if (typeof parsed === "string") return printUsageError(`init: ${parsed} (see operator-hub init --help)`);
  const cwd = options.cwd ?? Deno.cwd();
  const dir = resolve(cwd, parsed.dir);
  const names = namesOf(parsed, dir, cwd, options.checkout ?? localCheckout());
  if (typeof names === "string") return printUsageError(`init: ${names} (see operator-hub init --help)`);
  for (const name of ["read", "write"] as const) {
    if (Deno.permissions.querySync({ name, path: dir }).state !== "granted") {
      return printUsageError(
        `init: cannot ${name} ${parsed.dir}: Deno was started without --allow-${name} for it ` +
          "(run deno run --allow-read --allow-write --allow-run cli.ts init ...)",
      );
    }
  }
  const entries = await listDir(dir);
  if (entries === "not-a-dir") return printUsageError(`init: ${parsed.dir} exists and is not a directory`);
  if (entries.length) {
    return printUsageError(
      `init: ${parsed.dir} is not empty (it holds ${entries.slice(0, 3).join(", ")}${
        entries.length > 3 ? ", ..." : ""
      }): ` +
        "choose a new or empty folder",
    );
  }
  const files = projectFiles(names);
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(dirname(join(dir, path)), { recursive: true });
    await Deno.writeTextFile(join(dir, path), text, { createNew: true });
    print(`wrote ${join(parsed.dir, path)}`);
  }
  await formatProject(dir);
  print("");
  print(`next: cd ${parsed.dir} && deno task test`);
  return 0;
}

/**
 * Runs `deno fmt` over the new project (its deno.json's settings), so a long kind or group still gives formatted files;
 * skipped when this is not `deno` (a compiled binary) or running it is not allowed. The templates are formatted already
 * for names of usual length.
 */
async function formatProject(dir: string): Promise<void> {
  const deno = Deno.execPath();
  if (!basename(deno).startsWith("deno")) return;
  if (Deno.permissions.querySync({ name: "run", command: deno }).state !== "granted") return;
  await new Deno.Command(deno, { args: ["fmt", "--quiet", "."], cwd: dir, stdout: "null", stderr: "null" }).output()
    .catch(() => {});
}

/** The command line of `init`, or a one-line reason it is refused. */
interface InitArgs {
  dir: string;
  group: string;
  kind: string;
  plural?: string;
  hub?: string;
}

/** Parses `DIR --group G --kind K [--plural P] [--hub jsr|PATH]` (`--flag=value` too); a string is the refusal. */
export function parseInitArgs(argv: readonly string[]): InitArgs | string {
  const values: Partial<Record<(typeof VALUE_FLAGS)[number], string>> = {};
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith("-")) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const flag = (eq < 0 ? arg : arg.slice(0, eq)) as (typeof VALUE_FLAGS)[number];
    if (!VALUE_FLAGS.includes(flag)) {
      return `unknown flag ${JSON.stringify(arg.slice(0, 40))}; valid flags: ${VALUE_FLAGS.join(", ")}, --help`;
    }
    const value = eq < 0 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined || value === "") return `${flag} needs a value`;
    values[flag] = value;
  }
  if (positional.length !== 1) {
    return positional.length ? `one DIR expected, got ${positional.length}: ${positional.join(" ")}` : "no DIR given";
  }
  if (values["--group"] === undefined) return "--group is required, e.g. --group backups.example.com";
  if (values["--kind"] === undefined) return "--kind is required, e.g. --kind BackupPolicy";
  return {
    dir: positional[0],
    group: values["--group"],
    kind: values["--kind"],
    ...(values["--plural"] !== undefined ? { plural: values["--plural"] } : {}),
    ...(values["--hub"] !== undefined ? { hub: values["--hub"] } : {}),
  };
}

/** Checks the names and derives the rest; a string is the one-line refusal. */
function namesOf(args: InitArgs, dir: string, cwd: string, checkout: string | undefined): InitNames | string {
  const show = (v: string) => JSON.stringify(v.slice(0, 80));
  if (!args.group.includes(".")) {
    return `--group ${show(args.group)} has no dot: a CRD's group is a DNS subdomain such as backups.example.com`;
  }
  if (args.group.length > 253 || !GROUP.test(args.group)) {
    return `--group ${show(args.group)} is not a lower-case DNS subdomain, e.g. backups.example.com`;
  }
  if (args.kind.length > 63 || !KIND.test(args.kind)) {
    return `--kind ${
      show(args.kind)
    } is not UpperCamelCase (a capital letter, then letters and digits), e.g. BackupPolicy`;
  }
  const plural = args.plural ?? pluralOf(args.kind.toLowerCase());
  if (plural.length > 63 || !PLURAL.test(plural)) {
    return `--plural ${show(plural)} is not a lower-case DNS label, e.g. backuppolicies`;
  }
  let hub: InitNames["hub"];
  if (args.hub === "jsr") hub = { jsr: true };
  else {
    const target = args.hub !== undefined ? resolve(cwd, args.hub) : checkout;
    if (target === undefined) hub = { jsr: true };
    else {
      const link = relative(dir, target) || ".";
      hub = { link: isAbsolute(link) ? link : link.startsWith(".") ? link : `./${link}` };
    }
  }
  const snake = args.kind.replace(/([a-z0-9])([A-Z])/g, "$1_$2").replace(/([A-Z])([A-Z][a-z])/g, "$1_$2")
    .toLowerCase();
  const camel = args.kind[0].toLowerCase() + args.kind.slice(1);
  return { project: projectName(dir), group: args.group, kind: args.kind, plural, snake, camel, hub };
}

/** English plural of a lower-case kind, as kubebuilder makes it: policy → policies, class → classes, site → sites. */
export function pluralOf(kind: string): string {
  if (/[^aeiou]y$/.test(kind)) return kind.slice(0, -1) + "ies";
  if (/(s|x|z|ch|sh)$/.test(kind)) return kind + "es";
  return kind + "s";
}

/** A DNS label from the folder's name (the Deployment, ServiceAccount and namespace): `My_Operator` → `my-operator`. */
function projectName(dir: string): string {
  const name = basename(dir).toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^[^a-z]+|-+$/g, "").slice(0, 50);
  return name.replace(/-+$/, "") || "operator";
}

/** DIR's entries (none when it does not exist), or "not-a-dir". */
async function listDir(dir: string): Promise<string[] | "not-a-dir"> {
  try {
    const entries: string[] = [];
    for await (const e of Deno.readDir(dir)) entries.push(e.name);
    return entries.sort();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    if (err instanceof Deno.errors.NotADirectory) return "not-a-dir";
    throw err;
  }
}

/** The checkout this module runs from (its deno.json's folder), when it is a local file. */
function localCheckout(): string | undefined {
  const url = new URL("../../../", import.meta.url);
  return url.protocol === "file:" ? fileURLToPath(url).replace(/\/$/, "") : undefined;
}
