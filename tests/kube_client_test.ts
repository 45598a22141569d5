// End-to-end tests of src/kube against the real local kube-apiservers (clusters/local.yaml, context prod).
//
// Assumptions: the clusters were started with `deno task clusters:up`; a test fails (never skips) with that
// instruction when they are not. Every test works in its own namespace and tolerates a hub running elsewhere
// that may also touch Uuid objects (extra MODIFIED events, newer resourceVersions).

import assert from "node:assert/strict";
import { join } from "node:path";
import { FaultApiserver, tempDir } from "../dev/support/fault_cluster.ts";
import { kubeconfigText } from "../dev/support/kubeconfig_text.ts";
import { FaultProxy } from "../dev/support/fault_proxy.ts";
import { errorText } from "../src/util/mod.ts";
import {
  ApiError,
  type ClusterAccess,
  describePermission,
  KubeClient,
  loadContexts,
  missingPermissions,
  namespacePath,
  type PermissionCheck,
  resourcePath,
  TransportError,
  type WatchEvent,
} from "../src/kube/mod.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const KUBECONFIG = join(ROOT, "clusters", "local.yaml");
const NOT_RUNNING = "local clusters are not running: start them with `deno task clusters:up` " +
  "(deno run --allow-all dev/clusters/clusters.ts up)";
const CONTEXT = "prod";
const UUID = { group: "demo.operator", version: "v1", plural: "uuid" } as const;

interface Uuid {
  metadata: { name: string; resourceVersion: string; labels?: Record<string, string> };
  status?: { uuid?: string; state?: string; message?: string };
}

/** A client for the prod context, after proving the apiserver answers. Fails with how to start the clusters. */
async function connect(): Promise<{ access: ClusterAccess; client: KubeClient }> {
  let access: ClusterAccess;
  try {
    [access] = (await loadContexts({ files: [KUBECONFIG] })).select([CONTEXT]);
  } catch (err) {
    throw new Error(`${NOT_RUNNING} (${errorText(err)})`);
  }
  const client = new KubeClient(access, { requestTimeoutMs: 15_000 });
  try {
    await client.request("GET", "/version");
  } catch (err) {
    client.close();
    throw new Error(`${NOT_RUNNING} (${errorText(err)})`);
  }
  return { access, client };
}

/** Runs `fn` in a fresh namespace, then deletes its Uuid objects and the namespace. */
async function inNamespace(client: KubeClient, fn: (ns: string) => Promise<void>): Promise<void> {
  const ns = `kube-client-${crypto.randomUUID().slice(0, 8)}`;
  await client.request("POST", namespacePath(), {
    body: {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: ns, labels: { "operator-hub.test/ephemeral": "true" } },
    },
  });
  try {
    await fn(ns);
  } finally {
    // No kube-controller-manager runs, so nothing would garbage-collect the objects: delete them ourselves.
    const list = await client.listPage<Uuid>(resourcePath({ ...UUID, namespace: ns })).catch(() => undefined);
    for (const o of list?.items ?? []) {
      const path = resourcePath({ ...UUID, namespace: ns, name: o.metadata.name });
      await client.request("PATCH", path, { body: { metadata: { finalizers: null } } }).catch(() => {});
      await client.request("DELETE", path).catch(() => {});
    }
    await client.request("DELETE", namespacePath(ns)).catch(() => {});
  }
}

function createUuid(client: KubeClient, ns: string, name: string, labels: Record<string, string> = {}): Promise<Uuid> {
  return client.request<Uuid>("POST", resourcePath({ ...UUID, namespace: ns }), {
    body: { apiVersion: "demo.operator/v1", kind: "Uuid", metadata: { name, labels }, spec: {} },
  });
}

async function deleteUuid(client: KubeClient, ns: string, name: string): Promise<void> {
  const path = resourcePath({ ...UUID, namespace: ns, name });
  await client.request("PATCH", path, { body: { metadata: { finalizers: null } } });
  await client.request("DELETE", path);
}

/** A kubeconfig for the prod server with the given user section, in a private temp dir. */
async function tempKubeconfig(
  access: ClusterAccess,
  user: Record<string, unknown>,
  cluster: Record<string, unknown>,
): Promise<{ dir: string; file: string }> {
  const dir = await Deno.makeTempDir({ prefix: "kube_client_test_" });
  await Deno.chmod(dir, 0o700);
  const file = join(dir, "config.yaml");
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server: access.server, ...cluster } }],
      users: [{ name: "u", user }],
      contexts: [{ name: "ctx", context: { cluster: "c", user: "u" } }],
    }),
    { mode: 0o600 },
  );
  return { dir, file };
}

async function caData(access: ClusterAccess): Promise<string> {
  const ca = (await access.auth()).caCerts?.[0];
  assert.ok(ca, "clusters/local.yaml has certificate-authority-data");
  return btoa(ca);
}

Deno.test("KubeClient.listPage() pages through Uuid objects two at a time with continue tokens", async () => {
  const { client } = await connect();
  try {
    await inNamespace(client, async (ns) => {
      const names = ["a", "b", "c", "d", "e"];
      for (const n of names) await createUuid(client, ns, n);
      const path = resourcePath({ ...UUID, namespace: ns });
      const pages: { names: string[]; rv: string; cont?: string }[] = [];
      let cont: string | undefined;
      do {
        const page = await client.listPage<Uuid>(path, { limit: 2, continueToken: cont });
        cont = page.continueToken;
        pages.push({ names: page.items.map((i) => i.metadata.name), rv: page.resourceVersion, cont });
      } while (cont);
      assert.deepEqual(pages.map((p) => p.names), [["a", "b"], ["c", "d"], ["e"]]);
      assert.ok(pages[0].cont && pages[1].cont && !pages[2].cont);
      assert.ok(/^\d+$/.test(pages[0].rv));
      assert.ok(pages.every((p) => p.rv === pages[0].rv), "every page is from the same snapshot");
    });
  } finally {
    client.close();
  }
});

Deno.test("KubeClient.watch() from a list's resourceVersion sees ADDED, MODIFIED, DELETED and BOOKMARK, and ends when the server does", async () => {
  const { client } = await connect();
  try {
    await inNamespace(client, async (ns) => {
      const path = resourcePath({ ...UUID, namespace: ns });
      const { resourceVersion } = await client.listPage(path);
      const events: WatchEvent<Uuid>[] = [];
      const started = Date.now();
      const watching = (async () => {
        for await (const e of client.watch<Uuid>(path, { resourceVersion, timeoutSeconds: 6 })) events.push(e);
      })();
      await createUuid(client, ns, "w1");
      await client.request("PATCH", resourcePath({ ...UUID, namespace: ns, name: "w1" }), {
        body: { metadata: { labels: { touched: "yes" } } },
      });
      await deleteUuid(client, ns, "w1");
      await watching; // the server closes the stream after timeoutSeconds
      const elapsed = Date.now() - started;
      // The stream ended on its own (we never broke out of it); when is a figure: the server's clock, not ours.
      console.log(`figure: a watch with timeoutSeconds 6 ended after ${elapsed} ms`);
      const mine = events.filter((e) => e.type !== "BOOKMARK" && e.object.metadata.name === "w1").map((e) => e.type);
      assert.equal(mine[0], "ADDED");
      assert.ok(mine.includes("MODIFIED"), mine.join(","));
      assert.equal(mine.at(-1), "DELETED");
      const bookmarks = events.filter((e) => e.type === "BOOKMARK");
      assert.ok(bookmarks.length > 0, `no BOOKMARK among ${events.map((e) => e.type).join(",")}`);
      assert.ok(/^\d+$/.test(bookmarks[0].object.metadata.resourceVersion));
    });
  } finally {
    client.close();
  }
});

Deno.test("KubeClient.watch() from a too-old resourceVersion reports 410 Gone, as a status or an ERROR event", async () => {
  const { client } = await connect();
  try {
    const path = resourcePath(UUID);
    let gone = false;
    try {
      for await (const e of client.watch(path, { resourceVersion: "1", timeoutSeconds: 5 })) {
        assert.equal(e.type, "ERROR", `first event is ${e.type}`);
        assert.equal(e.object.code, 410);
        assert.equal(e.object.reason, "Expired");
        gone = true;
        break;
      }
    } catch (err) {
      assert.ok(err instanceof ApiError && err.status === 410, errorText(err));
      gone = true;
    }
    assert.ok(gone);
  } finally {
    client.close();
  }
});

Deno.test("KubeClient.watch() ends promptly when its signal aborts", async () => {
  const { client } = await connect();
  try {
    const ac = new AbortController();
    const { resourceVersion } = await client.listPage(resourcePath(UUID), { limit: 1 });
    const started = Date.now();
    setTimeout(() => ac.abort(), 300);
    for await (
      const _ of client.watch(resourcePath(UUID), { resourceVersion, timeoutSeconds: 300, signal: ac.signal })
    ) {
      // Objects changed by other tests may arrive; keep going until the abort.
    }
    const elapsed = Date.now() - started;
    // Hang guard, not a speed check: without the abort the watch would run for timeoutSeconds (300 s); 60 s is far
    // above 5× the measured median (about 300 ms: the abort comes at 300 ms; see the figure).
    console.log(`figure: a watch aborted 300 ms in ended ${elapsed} ms after it started`);
    assert.ok(elapsed < 60_000, `hang guard: the watch ended ${elapsed} ms after it started`);
  } finally {
    client.close();
  }
});

Deno.test("PATCH of the status subresource with a stale resourceVersion fails with ApiError 409 Conflict", async () => {
  const { client } = await connect();
  try {
    await inNamespace(client, async (ns) => {
      const created = await createUuid(client, ns, "p1");
      const statusPath = resourcePath({ ...UUID, namespace: ns, name: "p1", subresource: "status" });
      let rv = created.metadata.resourceVersion;
      let patched: Uuid | undefined;
      for (let attempt = 0; attempt < 5 && !patched; attempt++) {
        try {
          patched = await client.request<Uuid>("PATCH", statusPath, {
            body: { metadata: { resourceVersion: rv }, status: { message: "first" } },
          });
        } catch (err) {
          if (!(err instanceof ApiError && err.status === 409)) throw err;
          // Something else (a running hub) changed it; try with the current version.
          rv = (await client.request<Uuid>("GET", resourcePath({ ...UUID, namespace: ns, name: "p1" }))).metadata
            .resourceVersion;
        }
      }
      assert.ok(patched, "a patch with the current resourceVersion succeeded");
      assert.equal(patched.status?.message, "first");
      assert.notEqual(patched.metadata.resourceVersion, rv);

      const err = await client.request("PATCH", statusPath, {
        body: { metadata: { resourceVersion: rv }, status: { message: "stale" } },
      }).then(() => undefined, (e) => e);
      assert.ok(err instanceof ApiError, errorText(err));
      assert.equal(err.status, 409);
      assert.equal(err.reason, "Conflict");
      assert.match(
        err.message,
        new RegExp(
          `^PATCH /apis/demo\\.operator/v1/namespaces/${ns}/uuid/p1/status: 409 Conflict: Operation cannot be fulfilled`,
        ),
      );
    });
  } finally {
    client.close();
  }
});

Deno.test("missingPermissions() asks SelfSubjectAccessReviews: admin lacks nothing, a bare service account lacks all", async () => {
  const { access, client } = await connect();
  const checks: PermissionCheck[] = [
    { verb: "list", group: "demo.operator", resource: "uuid" },
    { verb: "watch", group: "demo.operator", resource: "uuid" },
    { verb: "patch", group: "demo.operator", resource: "uuid", subresource: "status" },
    { verb: "create", group: "", resource: "events", namespace: "default" },
  ];
  let limited: KubeClient | undefined;
  let dir: string | undefined;
  try {
    assert.deepEqual(await missingPermissions(client, checks), []);
    await inNamespace(client, async (ns) => {
      await client.request(
        "POST",
        resourcePath({ group: "", version: "v1", plural: "serviceaccounts", namespace: ns }),
        {
          body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "bare" } },
        },
      );
      const review = await client.request<{ status: { token: string } }>(
        "POST",
        resourcePath({
          group: "",
          version: "v1",
          plural: "serviceaccounts",
          namespace: ns,
          name: "bare",
          subresource: "token",
        }),
        { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 600 } } },
      );
      const tmp = await tempKubeconfig(access, { tokenFile: "token" }, {
        "certificate-authority-data": await caData(access),
      });
      dir = tmp.dir;
      await Deno.writeTextFile(join(tmp.dir, "token"), review.status.token, { mode: 0o600 });
      const [sa] = (await loadContexts({ files: [tmp.file] })).select(["ctx"]);
      limited = new KubeClient(sa);
      const missing = await missingPermissions(limited, checks);
      assert.deepEqual(missing.map(describePermission), [
        "list uuid.demo.operator",
        "watch uuid.demo.operator",
        "patch uuid/status.demo.operator",
        "create events in namespace default",
      ]);
      const forbidden = await limited.listPage(resourcePath(UUID)).then(() => undefined, (e) => e);
      assert.ok(forbidden instanceof ApiError && forbidden.status === 403 && forbidden.reason === "Forbidden");
      assert.match(
        forbidden.message,
        /^GET \/apis\/demo\.operator\/v1\/uuid: 403 Forbidden: .*cannot list resource "uuid"/,
      );

      // A rotated token file is picked up by the next request (after the client's 1 s credential cache).
      await Deno.writeTextFile(join(tmp.dir, "token"), "not-a-valid-token-at-all");
      await new Promise((r) => setTimeout(r, 1_100));
      const unauthorized = await limited.request("GET", "/version").then(() => undefined, (e) => e);
      assert.ok(unauthorized instanceof ApiError && unauthorized.status === 401, errorText(unauthorized));
      assert.equal(unauthorized.reason, "Unauthorized");
      assert.ok(!unauthorized.message.includes("not-a-valid-token-at-all"));
    });
  } finally {
    limited?.close();
    client.close();
    if (dir) await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("KubeClient honours insecure-skip-tls-verify, and without it refuses a server it cannot verify", async () => {
  const { access, client } = await connect();
  client.close();
  const token = (await access.auth()).headers.Authorization?.replace(/^Bearer /, "");
  assert.ok(token, "clusters/local.yaml uses a bearer token");
  const insecure = await tempKubeconfig(access, { token }, { "insecure-skip-tls-verify": true });
  const unverified = await tempKubeconfig(access, { token }, {});
  const [a] = (await loadContexts({ files: [insecure.file] })).select(["ctx"]);
  const [b] = (await loadContexts({ files: [unverified.file] })).select(["ctx"]);
  const c1 = new KubeClient(a);
  const c2 = new KubeClient(b);
  try {
    const version = await c1.request<{ major: string }>("GET", "/version");
    assert.equal(version.major, "1");
    // The watch over the unverified connection delivers: an object created after the list shows up as ADDED.
    await inNamespace(c1, async (ns) => {
      const path = resourcePath({ ...UUID, namespace: ns });
      const page = await c1.listPage(path);
      const seen: string[] = [];
      const watching = (async () => {
        for await (const e of c1.watch<Uuid>(path, { resourceVersion: page.resourceVersion, timeoutSeconds: 30 })) {
          seen.push(`${e.type} ${e.object.metadata.name}`);
          if (e.type === "ADDED") break;
        }
      })();
      await createUuid(c1, ns, "insecure-1");
      await watching;
      assert.deepEqual(seen.filter((e) => !e.startsWith("BOOKMARK")), ["ADDED insecure-1"]);
    });
    const err = await c2.request("GET", "/version").then(() => undefined, (e) => e);
    assert.ok(err instanceof TransportError, errorText(err));
    assert.match(errorText(err), /certificate|UnknownIssuer/i);
    assert.ok(!errorText(err).includes(token));
  } finally {
    c1.close();
    c2.close();
    await Deno.remove(insecure.dir, { recursive: true });
    await Deno.remove(unverified.dir, { recursive: true });
  }
});

Deno.test("KubeClient.close() ends a running watch and leaves no socket or timer behind", async () => {
  const { client } = await connect();
  const path = resourcePath(UUID);
  const { resourceVersion } = await client.listPage(path, { limit: 1 });
  let ended: unknown = "still running";
  const watching = (async () => {
    try {
      for await (const _ of client.watch(path, { resourceVersion, timeoutSeconds: 300 })) { /* keep going */ }
      ended = undefined;
    } catch (err) {
      ended = err;
    }
  })();
  await Promise.all([client.request("GET", "/version"), client.listPage(path, { limit: 1 })]);
  await new Promise((r) => setTimeout(r, 200));
  client.close();
  await watching;
  assert.ok(ended instanceof TransportError && /was closed/.test(ended.message), errorText(ended));
  const late = await client.request("GET", "/version").then(() => undefined, (e) => e);
  assert.ok(late instanceof TransportError);
  // Deno.test's resource and op sanitizers (on by default) fail this test if anything is left open.
});

Deno.test("KubeClient writes on an HTTP/1.1 pool by default and multiplexes one connection with http2: true", async () => {
  const { access, client: probe } = await connect();
  probe.close();
  const port = Number(new URL(access.server).port);
  const connectionsFor = async (http2: boolean | undefined): Promise<number> => {
    const proxy = FaultProxy.start({ targetPort: port });
    const viaProxy: ClusterAccess = {
      name: access.name,
      server: proxy.url,
      source: access.source,
      auth: () => access.auth(),
    };
    const client = new KubeClient(viaProxy, { requestTimeoutMs: 15_000, http2 });
    try {
      await client.request("PATCH", "/api/v1/namespaces/default", { body: {} }); // one warm connection first
      // Eight writes at once (an empty merge patch): HTTP/1.1 needs a connection each (no pipelining), HTTP/2 none more.
      await Promise.all(
        Array.from({ length: 8 }, () => client.request("PATCH", "/api/v1/namespaces/default", { body: {} })),
      );
      return proxy.accepted;
    } finally {
      client.close();
      await proxy.close();
    }
  };
  const h1 = await connectionsFor(undefined);
  const h2 = await connectionsFor(true);
  assert.ok(h1 >= 4, `the default (HTTP/1.1) should open several connections for 8 concurrent requests, saw ${h1}`);
  assert.equal(h2, 1, "with http2: true every request should share one connection");
});

Deno.test("Every watch, list and read of a client is a stream of one HTTP/2 connection; writes (PATCH) use HTTP/1.1; a dropped connection errors the watches and the next one reconnects", async () => {
  const { access, client: probe } = await connect();
  probe.close();
  const proxy = FaultProxy.start({ targetPort: Number(new URL(access.server).port) });
  const client = new KubeClient({ ...access, server: proxy.url, auth: () => access.auth() }, {
    requestTimeoutMs: 15_000,
    multiplex: true,
  });
  const ac = new AbortController();
  try {
    await client.request("GET", "/version"); // the HTTP/2 connection
    assert.equal(proxy.accepted, 1);
    const paths = [resourcePath(UUID), "/api/v1/namespaces", "/api/v1/namespaces/default/configmaps"];
    const opened: Promise<void>[] = [];
    const ends = paths.map((path) => {
      let open!: () => void;
      opened.push(new Promise<void>((r) => open = r));
      return (async () => {
        for await (const _ of client.watch(path, { timeoutSeconds: 300, signal: ac.signal, onOpen: open })) {
          // ADDED events of what exists; keep reading until the connection drops.
        }
        return "ended";
      })().catch((err) => err);
    });
    await Promise.all(opened);
    await client.listPage(resourcePath(UUID), { limit: 1 });
    assert.equal(proxy.accepted, 1, "three watches and the reads should share the one connection");
    // A write goes out on an HTTP/1.1 connection of its own.
    await client.request("PATCH", "/api/v1/namespaces/default", { body: {} });
    assert.equal(proxy.accepted, 2, "a PATCH should open the HTTP/1.1 connection");
    proxy.dropAll(); // the server side goes away (an apiserver restart)
    for (const end of await Promise.all(ends)) {
      assert.ok(end instanceof TransportError, `a lost connection should error the watch, got ${end}`);
    }
    let reopened!: () => void;
    const again = new Promise<void>((r) => reopened = r);
    const last = (async () => {
      for await (const _ of client.watch(paths[1], { timeoutSeconds: 300, signal: ac.signal, onOpen: reopened })) {
        // until aborted
      }
    })();
    await again;
    assert.equal(proxy.accepted, 3, "the next watch should open one new connection");
    ac.abort();
    await last;
  } finally {
    ac.abort();
    client.close();
    await proxy.close();
  }
});

Deno.test("A credential with a line break is refused before anything is sent, naming the header, never its value", async () => {
  const { access, client: probe } = await connect();
  probe.close();
  const proxy = FaultProxy.start({ targetPort: Number(new URL(access.server).port) });
  const evil: ClusterAccess = {
    name: access.name,
    server: proxy.url,
    source: access.source,
    auth: async () => {
      const auth = await access.auth();
      return { ...auth, headers: { Authorization: "Bearer secret-part\r\nX-Injected: yes" } };
    },
  };
  const client = new KubeClient(evil, { requestTimeoutMs: 5_000 });
  try {
    const err = await client.request("GET", "/version").then(() => undefined, (e) => e);
    assert.ok(err instanceof TransportError, errorText(err));
    assert.match(err.message, /"Authorization" contains a line break/);
    assert.doesNotMatch(errorText(err), /secret-part|X-Injected/);
    assert.equal(proxy.accepted, 0, "nothing reached the network");
  } finally {
    client.close();
    await proxy.close();
  }
});

Deno.test("Client-certificate login works on our HTTP/1.1 sockets, on watch streams and on --http2, and the apiserver sees the certificate's user", async () => {
  await using dir = await tempDir("client-cert");
  const openssl = async (...args: string[]) => {
    const out = await new Deno.Command("openssl", { args, cwd: dir.path, stdout: "null", stderr: "piped" }).output();
    if (!out.success) throw new Error(`openssl ${args[0]} failed: ${new TextDecoder().decode(out.stderr)}`);
  };
  await openssl(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-days",
    "2",
    "-subj",
    "/CN=hub-test-client-ca",
  );
  await openssl(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "client.key",
    "-out",
    "client.csr",
    "-subj",
    "/O=system:masters/CN=cert-admin",
  );
  // A v3 client certificate (rustls refuses v1 ones, as kubeadm-style tooling never makes them).
  await dir.write(
    "client.ext",
    "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n",
  );
  await openssl(
    "x509",
    "-req",
    "-in",
    "client.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "client.crt",
    "-days",
    "2",
    "-extfile",
    "client.ext",
  );
  await using cleanup = new AsyncDisposableStack();
  const f = await FaultApiserver.start({ name: "client-cert", extraArgs: [`--client-ca-file=${dir.path}/ca.crt`] });
  cleanup.defer(() => f.destroy());
  const kubeconfig = await dir.write(
    "kubeconfig.yaml",
    kubeconfigText([
      f.context("cert", { user: { clientCertificate: `${dir.path}/client.crt`, clientKey: `${dir.path}/client.key` } }),
    ]),
  );
  const [access] = (await loadContexts({ files: [kubeconfig] })).select(["cert"]);
  for (const http2 of [false, true]) {
    const client = new KubeClient(access, { requestTimeoutMs: 15_000, http2 });
    try {
      const review = await client.request<{ status: { userInfo: { username: string; groups: string[] } } }>(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        { body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" } },
      );
      assert.equal(review.status.userInfo.username, "cert-admin", `http2=${http2}`);
      assert.ok(review.status.userInfo.groups.includes("system:masters"));
      const page = await client.listPage(resourcePath(UUID), { limit: 1 });
      assert.ok(page.resourceVersion, "an authorised list");
      // A watch (an HTTP/2 stream by default) presents the certificate too: a 401 or 403 would throw ApiError.
      for await (const ev of client.watch("/api/v1/namespaces", { timeoutSeconds: 30 })) {
        assert.equal(ev.type, "ADDED", `http2=${http2}`);
        break;
      }
    } finally {
      client.close();
    }
  }
});
