// `deno task test`: starts the local clusters, runs the whole suite against them, and always stops them.
//
// Usage: deno task test [deno test args, e.g. --filter "fairness"] [-- files...]
// Set KEEP_CLUSTERS=1 to leave the clusters running afterwards (faster reruns), and TEST_REPORT_DIR=dir to have each
// group's JUnit report (every test's time, by file) written to dir/parallel.xml, dir/serial.xml, dir/no-cluster.xml and
// dir/last.xml.
//
// Without arguments the suite runs in four groups, each ending with deno's own summary line:
// 1. the parallel group: every test file but SERIAL_FILES and the no-cluster group, `deno test --parallel` with
//    DENO_JOBS files at a time (default DEFAULT_JOBS; set DENO_JOBS to override, DENO_JOBS=1 runs them one by one),
//    the longest first. Most tests wait on apiservers, backoffs and hubs, not on the CPU.
// 2. the serial group: SERIAL_FILES, one file at a time, with nothing else running against the local clusters;
// 3. at the same time as the serial group (which leaves the CPU mostly idle), the no-cluster group: the modules of src/
//    that never reach a cluster (needsNoCluster) and APART_FILES (no shared cluster), two at a time, their output
//    written once they are done.
// 4. last, alone: LAST_FILES (what they do would break a test running beside them).
// The last line adds them up: "X passed, Y failed". With arguments, the one `deno test` run they describe runs as
// before (one file at a time). The groups run without type-checking: `deno task check` is the type check (CI runs it
// before this); a run with arguments type-checks its files.
//
// Guarantees: a file in the parallel group shares prod, staging, dev and their etcd with other files, so it touches
// only what it owns there: its own test namespaces (hubs run with --namespace), uniquely named cluster-scoped objects,
// private apiservers (dev/support/fault_cluster.ts) and free ports. A file that must have the shared clusters to
// itself is listed in SERIAL_FILES with the reason.

const root = new URL("..", import.meta.url).pathname;

/** Files per `deno test --parallel` batch when DENO_JOBS is not set. */
const DEFAULT_JOBS = 4;

/** Test files that need the shared local clusters (or their etcd) to themselves, with the reason. */
const SERIAL_FILES: Readonly<Record<string, string>> = {
  "tests/hub_e2e_test.ts":
    "counts the apiservers' Uuid writes cluster-wide (apiserver_request_total) and swaps dev's Uuid CRD for the seed one",
  "tests/foundation_test.ts": "swaps dev's Uuid CRD for the seed one (no status subresource) and back",
  "tests/kopf_handlers_test.ts": "counts the apiservers' Uuid writes cluster-wide in prod, staging and dev",
  "tests/production/leader_election_test.ts": "counts the apiservers' Uuid writes cluster-wide in prod and staging",
  "tests/production/metrics_test.ts": "counts the apiservers' Uuid writes cluster-wide in prod, staging and dev",
  "tests/faults/gone_test.ts": "compacts the shared etcd up to now: continue tokens of every cluster expire",
  "tests/faults/kopf_gone_test.ts": "compacts the shared etcd up to now: continue tokens of every cluster expire",
  "tests/faults/rbac_test.ts":
    "its hub serves every namespace of prod: with --namespace the pre-flight reviews it checks would be namespaced",
  "dev/clusters/controller_manager_test.ts":
    "kills a local controller manager and runs clusters:up, which rewrites the state file and clusters/local.yaml",
  "tests/production/shard_test.ts": "counts the apiservers' Uuid writes cluster-wide in prod, staging and dev",
  "tests/production/deploy_test.ts":
    "runs the shipped hub (the Uuid operator) on all of dev's namespaces: it would reconcile other files' Uuids there",
};

/**
 * Files that run after every other group, alone, with the reason: what they do would break a test running beside them.
 */
const LAST_FILES: Readonly<Record<string, string>> = {
  "src/testing/free_port_test.ts":
    "holds every port of freePort's range for a moment: a hub or apiserver started beside it on a port freePort gave " +
    "out could not bind it (a --shard-warm replica failed so: Address already in use)",
};

/**
 * Files that change and count nothing in the shared clusters (they use none, private apiservers of their own, or a
 * namespace of their own where no Uuid is written), with the reason: they run in the no-cluster group, beside the
 * serial group, which leaves the CPU mostly idle.
 */
const APART_FILES: Readonly<Record<string, string>> = {
  "tests/doc_surface_test.ts": "runs deno doc and deno check on the package, no cluster",
  "tests/testing_kit_test.ts": "the test kit starts private apiservers of its own",
  "tests/checked_reads_test.ts": "runs its hubs on the test kit's private apiserver",
  "src/sdk/typed_resources_test.ts": "runs its hub on the test kit's private apiservers",
  "tests/providers/cluster_cli_test.ts":
    "a private target cluster and a namespace of its own in prod, with no Uuid; its CRD cleanup after " +
    "cluster:remove --purge stalled past its 90 s guard once under the parallel group's load",
};

/**
 * The parallel group's longest files, longest first (their summed test times from a TEST_REPORT_DIR run's
 * parallel.xml): they start first and the short ones fill in behind them, so no long file starts near the end and
 * runs on alone (in alphabetical order the production and provider files came last). Other files of tests/ follow,
 * then dev/ and src/ (mostly unit tests). A file missing here only starts later; a name of a file that is gone is
 * ignored.
 */
const LONGEST_FIRST: readonly string[] = [
  "tests/faults/hub_faults_test.ts",
  "tests/production/port_hardening_test.ts",
  "tests/faults/credentials_test.ts",
  "tests/init_test.ts",
  "tests/admission_test.ts",
  "tests/faults/outage_test.ts",
  "tests/mirror_test.ts",
  "tests/production/status_page_test.ts",
  "tests/production/helm_test.ts",
  "tests/faults/oversized_test.ts",
  "tests/adopt_finalizers_test.ts",
  "tests/testing_kit_test.ts",
  "tests/uuid_stability_test.ts",
  "tests/faults/credential_corpus_test.ts",
  "tests/admission_load_test.ts",
  "tests/providers/registered_clusters_test.ts",
  "tests/faults/crd_missing_test.ts",
  "tests/doc_surface_test.ts",
  "tests/cleanup_test.ts",
  "tests/admission_shard_test.ts",
  "tests/production/least_privilege_test.ts",
  "tests/production/compiled_permissions_test.ts",
  "dev/clusters/controllers_test.ts",
  "tests/faults/security_test.ts",
  "tests/mirror_reach_test.ts",
  "tests/mirror_clusters_test.ts",
  "tests/faults/untrusted_credentials_test.ts",
  "src/hub/shards/bounded_rendezvous_test.ts",
  "tests/production/protected_port_test.ts",
  "tests/faults/unreachable_start_test.ts",
  "tests/providers/readiness_test.ts",
  "tests/faults/bad_cli_test.ts",
];

/** `files` in the order they should start: LONGEST_FIRST, then the rest of tests/, then everything else. */
function startOrder(files: readonly string[]): string[] {
  const rank = (f: string) => {
    const i = LONGEST_FIRST.indexOf(f);
    return i >= 0 ? i : f.startsWith("tests/") ? LONGEST_FIRST.length : LONGEST_FIRST.length + 1;
  };
  return [...files].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** Runs `cmd`, its stdout streamed to ours (with `later`: kept, with its stderr, and written once it ended). */
async function run(
  cmd: string[],
  env: Record<string, string> = {},
  later = false,
): Promise<{ code: number; out: string }> {
  const child = new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    cwd: root,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: later ? "piped" : "inherit",
  }).spawn();
  const decoder = new TextDecoder();
  const errors = later ? new Response(child.stderr).text() : Promise.resolve("");
  let out = "";
  for await (const chunk of child.stdout) {
    out += decoder.decode(chunk, { stream: true });
    if (!later) await Deno.stdout.write(chunk);
  }
  const { code } = await child.status;
  if (later) {
    await Deno.stdout.write(new TextEncoder().encode(out));
    await Deno.stderr.write(new TextEncoder().encode(await errors));
  }
  return { code, out };
}

/** One `deno test` run's counts from its summary line; a run without one (a crash) counts as one failure. */
interface Tally {
  passed: number;
  failed: number;
  ok: boolean;
}

/**
 * One `deno test` run. `typeCheck: false` (the whole suite) leaves type-checking to `deno task check`, which CI runs
 * first over the same files and more: checking 279 test modules again before any test starts took about 20 s.
 */
async function denoTest(
  args: string[],
  env: Record<string, string> = {},
  typeCheck = true,
  later = false,
): Promise<Tally> {
  const check = typeCheck ? "--no-check=remote" : "--no-check";
  const result = await run([deno, "test", "--allow-all", check, ...args], env, later);
  const m = result.out.match(/(\d+) passed[^|\n]*\| (\d+) failed/);
  const passed = m ? Number(m[1]) : 0;
  const failed = m ? Number(m[2]) : 1;
  return { passed, failed, ok: result.code === 0 && failed === 0 && m !== null };
}

/** deno test's own rule for a test module's name: `test.ts`, `*_test.ts`, `*.test.ts` (and .tsx/.mts/.js/.mjs/.jsx). */
const TEST_MODULE = /(^|[_.])test\.(ts|tsx|mts|js|mjs|jsx)$/;

/** Every test module under `dirs` (repository-relative, sorted), as `deno test src/ dev/ tests/` finds them. */
function testModules(dirs: string[]): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(`${root}${dir}`)) {
      const path = `${dir}${entry.name}`;
      if (entry.isDirectory) walk(`${path}/`);
      else if (entry.isFile && TEST_MODULE.test(entry.name)) found.push(path);
    }
  };
  for (const dir of dirs) walk(dir);
  return found.sort();
}

/** `--junit-path` for a group when TEST_REPORT_DIR is set: per-test times by file, to find what makes the suite slow. */
function junit(group: string): string[] {
  const dir = Deno.env.get("TEST_REPORT_DIR");
  return dir ? [`--junit-path=${dir}/${group}.xml`] : [];
}

/** The parallel group, then the serial group (see the file comment). */
async function runGroups(): Promise<Tally> {
  const serial = Object.keys(SERIAL_FILES);
  const all = testModules(["src/", "dev/", "tests/"]);
  const last = Object.keys(LAST_FILES);
  const missing = [...serial, ...Object.keys(APART_FILES), ...last].filter((f) => !all.includes(f));
  if (missing.length > 0) {
    console.error(
      `deno task test: SERIAL_FILES, APART_FILES or LAST_FILES name files that are not test modules: ${
        missing.join(", ")
      }`,
    );
    return { passed: 0, failed: 1, ok: false };
  }
  // The files are named one by one: deno test's --ignore does not take them out of `src/ dev/ tests/` reliably.
  const rest = all.filter((f) => !serial.includes(f) && !last.includes(f));
  const apart = rest.filter((f) => f in APART_FILES || needsNoCluster(f));
  const parallelFiles = startOrder(rest.filter((f) => !apart.includes(f)));
  const jobs = Deno.env.get("DENO_JOBS") ?? String(DEFAULT_JOBS);
  if (!/^[1-9]\d*$/.test(jobs)) {
    console.error(`deno task test: invalid DENO_JOBS "${jobs}": expected a whole number of files at a time, e.g. 3`);
    return { passed: 0, failed: 1, ok: false };
  }
  console.log(`\n== parallel group: ${parallelFiles.length} test files, ${jobs} at a time (DENO_JOBS)`);
  const parallel = await denoTest(["--parallel", ...junit("parallel"), ...parallelFiles], { DENO_JOBS: jobs }, false);
  console.log(`\n== serial group: ${serial.length} files that need the local clusters to themselves, one at a time`);
  console.log(`   beside it, the no-cluster group: ${apart.length} files that reach no shared cluster (output after)`);
  const [alone, beside] = await Promise.all([
    denoTest([...junit("serial"), ...serial], {}, false),
    denoTest(["--parallel", ...junit("no-cluster"), ...apart], { DENO_JOBS: "2" }, false, true),
  ]);
  console.log(`\n== last: ${last.length} file(s) that run alone (LAST_FILES)`);
  const after = await denoTest([...junit("last"), ...last], {}, false);
  return {
    passed: parallel.passed + alone.passed + beside.passed + after.passed,
    failed: parallel.failed + alone.failed + beside.failed + after.failed,
    ok: parallel.ok && alone.ok && beside.ok && after.ok,
  };
}

/**
 * Whether a test module of src/ never reaches a local cluster, read from its text: it names none of the helpers and
 * files that do (dev/ and tests/ helpers other than dev/support's in-process fakes, clusters/local.yaml, the test
 * kit's environment, kubectl, the CLI's test kubeconfigs). Those run beside the serial group, whose files need the clusters to themselves, not the CPU; a module
 * taken for one that reaches a cluster would only lose that isolation, so the test errs towards "reaches".
 */
function needsNoCluster(file: string): boolean {
  if (!file.startsWith("src/")) return false;
  const text = Deno.readTextFileSync(`${root}${file}`);
  return !/dev\/support\/(?!scripted_socket|manual_abort|socket_reads|shard_target|held_sockets|released_watch)|tests\/support|clusters\/local\.yaml|local_clusters|test_env|kubectl|kubeconfig_file|KUBECONFIG/
    .test(text);
}

const deno = Deno.execPath();
let stopping = false;
const down = async () => {
  if (Deno.env.get("KEEP_CLUSTERS") === "1") return;
  await run([deno, "run", "--allow-all", "dev/clusters/clusters.ts", "down"]);
};
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(sig, async () => {
    if (stopping) return;
    stopping = true;
    await down();
    Deno.exit(130);
  });
}

let exit = 1;
try {
  const up = await run([deno, "run", "--allow-all", "dev/clusters/clusters.ts", "up"]);
  if (up.code !== 0) {
    console.error("deno task test: the local clusters did not start; see the output above");
    console.log("0 passed, 1 failed");
  } else {
    const tally = Deno.args.length ? await denoTest(Deno.args) : await runGroups();
    console.log(`\n${tally.passed} passed, ${tally.failed} failed`);
    exit = tally.ok && tally.passed > 0 ? 0 : 1;
  }
} finally {
  stopping = true;
  await down();
}
Deno.exit(exit);
