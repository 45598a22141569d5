// --help, printed from the flag table: every flag the parser accepts and only those, each default, the sections in
// order, within the width; and the did-you-mean drawn from the same table.

import assert from "node:assert/strict";
import { FLAGS } from "./flag_table.ts";
import { didYouMean, helpText } from "./help_text.ts";
import { parseFlags } from "./parse_flags.ts";

/** Whether parseFlags() knows `--flag` (any error but "unknown flag" means it parsed the name). */
function accepted(flag: string): boolean {
  try {
    parseFlags(["--clusters=a", flag]);
    return true;
  } catch (err) {
    return !/unknown flag/.test((err as Error).message);
  }
}

Deno.test("helpText() documents every flag parseFlags() accepts, and only those", () => {
  const help = helpText();
  const flags = Object.keys(FLAGS).map((k) => `--${k}`);
  for (const f of ["--clusters", "--concurrency", "--leader-elect-id", "--shard-warm", "--tls-cert-file"]) {
    assert.ok(flags.includes(f), `${f} in the table: ${flags.join(" ")}`);
  }
  for (const flag of flags) {
    assert.ok(accepted(flag), `${flag} is in the table but parseFlags() rejects it`);
    assert.match(help, new RegExp(`^  ${flag}(?![a-z0-9-])`, "m"), `help lacks a line for ${flag}`);
  }
  assert.ok(!accepted("--no-such-flag"), "the probe tells unknown flags apart");
  for (const [flag] of help.matchAll(/--[a-z][a-z0-9-]*/g)) {
    assert.ok(accepted(flag), `help documents ${flag}, which parseFlags() rejects`);
  }
});

Deno.test("helpText() prints every default of the table, after its flag", () => {
  const help = helpText().replace(/\s+/g, " ");
  for (const [name, f] of Object.entries(FLAGS)) {
    for (const d of [f.default, f.defaultText]) {
      if (d === undefined) continue;
      const at = help.indexOf(` --${name}`);
      assert.ok(help.indexOf(d.replace(/\s+/g, " "), at) > at, `--${name}: default ${d} not printed after it`);
    }
  }
  for (const d of ["(default: 15)", "(default: 600)", "(default: 2592000, 30 days)", "(default: json)"]) {
    assert.ok(help.includes(d), d);
  }
  assert.match(help, /--concurrency N reconciles running at once, all clusters \(default: 16, or 4 per cluster/);
  assert.match(help, /--cluster-burst N API request burst per cluster \(default: 400\)/);
});

Deno.test("helpText() has each flag group's section, in order, and the exit codes last", () => {
  const help = helpText();
  const sections = [
    "Clusters:",
    "Untrusted credentials (",
    "Leader election (",
    "Sharding (",
    "Health:",
    "Protected metrics and status (",
    "Admission webhooks (",
    "Logs and events:",
    "Limits (all optional):",
    "Exit codes:",
  ].map((s) => help.indexOf(`\n${s}`));
  assert.ok(sections.every((i) => i > 0), `every section present: ${sections}`);
  assert.deepEqual([...sections].sort((a, b) => a - b), sections, "in order");
});

Deno.test("helpText() lines stay within 110 columns, descriptions aligned at column 29", () => {
  const help = helpText();
  for (const line of help.split("\n")) assert.ok(line.length <= 110, line);
  for (const line of help.slice(help.indexOf("\nClusters:")).split("\n")) {
    if (/^ {3,}\S/.test(line)) assert.match(line, /^ {29}\S/, line);
  }
  assert.match(helpText(), /\n {2}--namespace NS, -n NS {6}namespace to watch/);
  assert.match(helpText(), /\n {2}--metrics-secure=true\|false\n {29}HTTPS/);
});

Deno.test("helpText() says when /healthz fails, when /readyz turns 200, and which clusters never make the pod unready", () => {
  const help = helpText().replace(/\s+/g, " ");
  assert.match(help, /\/healthz fails only when the hub is wedged/);
  assert.match(
    help,
    /\/readyz is 200 once the home cluster and the clusters the command line names listed, and every cluster provider read its sources/,
  );
  assert.match(help, /the names --clusters lists, the contexts of --kubeconfig files and \$KUBECONFIG, in-cluster/);
  assert.match(
    help,
    /other clusters from Secrets, the folder, ClusterProfiles and Cluster API show in \/status and never make the pod unready/,
  );
  assert.match(help, /--exec-plugin-allowlist CMD\[,CMD\] .* \(default: none\)/);
  assert.match(help, /--allow-http-servers accept http:\/\/ servers in untrusted kubeconfigs \(default: https only/);
});

Deno.test("didYouMean() names the documented flag closest to a misspelling, and nothing for one far from all", () => {
  const typos: [string, string | undefined][] = [
    ["--cluster", "--clusters"],
    ["--livenes=x", "--liveness"],
    ["--kubeconfg", "--kubeconfig"],
    ["--standalon", "--standalone"],
    ["--event-levle", "--event-level"],
    ["--zzzzzzzzzz", undefined],
  ];
  for (const [typo, want] of typos) assert.equal(didYouMean(typo), want, typo);
});
