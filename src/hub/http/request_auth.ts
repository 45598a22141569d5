// Authentication and authorisation of the protected port: a TokenReview and a SubjectAccessReview in the home cluster.

import * as prom from "../../util/prometheus.ts";
import type { KubeClient } from "../../kube/mod.ts";
import { TokenBucket } from "../../queue/mod.ts";
import { type Clock, errorText, type Logger, SystemClock } from "../../util/mod.ts";
import { TtlCache } from "./_ttl_cache.ts";

/**
 * What the protected port does with a request: serve it, 401, 403, 429 when it would need a review beyond the
 * limits, or 503 when the home cluster cannot answer.
 */
export type AccessDecision = "allowed" | "unauthenticated" | "forbidden" | "throttled" | "unavailable";

/** The authenticated user, as the TokenReview names it; what the SubjectAccessReview asks about. */
interface ReviewedUser {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface RequestAuthorizerOptions {
  /** A client of the home cluster, whose credentials may create TokenReviews and SubjectAccessReviews. */
  api: Pick<KubeClient, "request">;
  /** Where `hub_access_reviews_total` and `hub_access_review_cache_hits_total` are registered. */
  registry: prom.MetricRegistry;
  logger: Logger;
  clock?: Clock;
  /** How long an accepted token or an allowed path is trusted without asking again. Default 60 s. */
  allowedTtlMs?: number;
  /** How long a rejected token or a denied path is remembered. Default 10 s. */
  deniedTtlMs?: number;
  /** Bound of each cache (accepted tokens; rejected tokens; token × path). Default 1024. */
  maxEntries?: number;
  /** Reviews (TokenReview or SubjectAccessReview) in flight at once; a request needing one more is throttled. Default 4. */
  maxInFlight?: number;
  /** Reviews sent per second, in a bucket of `reviewBurst`; a request needing one more is throttled. Default 10. */
  reviewsPerSecond?: number;
  /** Default 20. */
  reviewBurst?: number;
  /** Deadline of one review request. Default 10 s. */
  timeoutMs?: number;
}

const TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews";
const SUBJECT_ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

/**
 * Decides, like controller-runtime's `filters.WithAuthenticationAndAuthorization`, whether a request may read a
 * path: the bearer token must pass a TokenReview, and its user a SubjectAccessReview for `get` on the path as a
 * non-resource URL, both in the home cluster.
 *
 * Guarantees:
 * - answers are cached per token (TokenReview) and per token and path (SubjectAccessReview): allowed ones for
 *   `allowedTtlMs`, denied ones for `deniedTtlMs`, at most `maxEntries` each; a scrape every 15 s therefore costs
 *   one TokenReview and one SubjectAccessReview per token per minute. Rejected tokens have a cache of their own, so
 *   a flood of junk tokens never evicts an accepted one: a reader already reviewed keeps being served from the cache;
 * - concurrent requests with the same token share one review in flight (they count once against the limits);
 * - at most `maxInFlight` reviews are in flight and at most `reviewBurst + t × reviewsPerSecond` are sent over any
 *   `t` seconds; a request that needs a review beyond either is "throttled" at once (the port answers 429 with
 *   Retry-After), so no client can turn the port into a flood of reviews against the home apiserver;
 * - a review that fails (home cluster unreachable, timeout) is not cached and yields "unavailable";
 * - tokens are kept only as SHA-256 digests and never logged.
 */
export class RequestAuthorizer {
  readonly #o: RequestAuthorizerOptions;
  readonly #clock: Clock;
  readonly #tokens: TtlCache<ReviewedUser>;
  readonly #rejected: TtlCache<true>;
  readonly #access: TtlCache<boolean>;
  readonly #inFlight = new Map<string, Promise<unknown>>();
  readonly #maxInFlight: number;
  readonly #bucket: TokenBucket;
  readonly #reviews: prom.Counter<"review" | "result">;
  readonly #hits: prom.Counter<"review">;
  readonly #throttled: prom.Counter<"review">;

  constructor(options: RequestAuthorizerOptions) {
    this.#o = options;
    this.#clock = options.clock ?? new SystemClock();
    const max = options.maxEntries ?? 1024;
    this.#tokens = new TtlCache(this.#clock, max);
    this.#rejected = new TtlCache(this.#clock, max);
    this.#access = new TtlCache(this.#clock, max);
    this.#maxInFlight = options.maxInFlight ?? 4;
    if (!Number.isInteger(this.#maxInFlight) || this.#maxInFlight < 1) {
      throw new RangeError(
        `cannot create RequestAuthorizer: maxInFlight must be a whole number ≥ 1, got ${this.#maxInFlight}`,
      );
    }
    this.#bucket = new TokenBucket(options.reviewsPerSecond ?? 10, options.reviewBurst ?? 20, { clock: this.#clock });
    this.#reviews = new prom.Counter({
      name: "hub_access_reviews_total",
      help: "TokenReviews and SubjectAccessReviews the protected port sent to the home cluster, by result",
      labelNames: ["review", "result"],
      registers: [options.registry],
    });
    this.#hits = new prom.Counter({
      name: "hub_access_review_cache_hits_total",
      help: "Requests to the protected port answered from the review cache, by review",
      labelNames: ["review"],
      registers: [options.registry],
    });
    this.#throttled = new prom.Counter({
      name: "hub_access_reviews_throttled_total",
      help:
        "Requests to the protected port answered 429: the review they needed was beyond the in-flight or rate limit",
      labelNames: ["review"],
      registers: [options.registry],
    });
  }

  /** Decides one request from its Authorization header and URL path. Never throws. */
  async decide(authorization: string | null, path: string): Promise<AccessDecision> {
    const token = bearerToken(authorization);
    if (token === undefined) return "unauthenticated";
    const digest = await sha256(token);
    try {
      const user = await this.#authenticate(token, digest);
      if (!user) return "unauthenticated";
      return (await this.#authorize(user, digest, path)) ? "allowed" : "forbidden";
    } catch (err) {
      if (err instanceof ReviewThrottledError) return "throttled";
      this.#o.logger.warn("cannot review a request to the protected port", { path, error: errorText(err) });
      return "unavailable";
    }
  }

  #authenticate(token: string, digest: string): Promise<ReviewedUser | null> {
    const cached = this.#tokens.get(digest) ?? (this.#rejected.get(digest) ? null : undefined);
    if (cached !== undefined) {
      this.#hits.inc({ review: "TokenReview" });
      return Promise.resolve(cached);
    }
    return this.#once("TokenReview", `t\0${digest}`, async () => {
      const review = await this.#post<{ status?: { authenticated?: boolean; user?: ReviewedUser } }>(
        "TokenReview",
        TOKEN_REVIEWS,
        { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } },
      );
      const user = review?.status?.authenticated === true && review.status.user?.username ? review.status.user : null;
      this.#reviews.inc({ review: "TokenReview", result: user ? "allowed" : "denied" });
      if (user) this.#tokens.set(digest, user, this.#allowedTtl);
      else this.#rejected.set(digest, true, this.#deniedTtl);
      return user;
    });
  }

  #authorize(user: ReviewedUser, digest: string, path: string): Promise<boolean> {
    const key = `${digest}\0${path}`;
    const cached = this.#access.get(key);
    if (cached !== undefined) {
      this.#hits.inc({ review: "SubjectAccessReview" });
      return Promise.resolve(cached);
    }
    return this.#once("SubjectAccessReview", `s\0${key}`, async () => {
      const review = await this.#post<{ status?: { allowed?: boolean; denied?: boolean } }>(
        "SubjectAccessReview",
        SUBJECT_ACCESS_REVIEWS,
        {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SubjectAccessReview",
          spec: {
            user: user.username,
            uid: user.uid || undefined,
            groups: user.groups,
            extra: user.extra,
            nonResourceAttributes: { path, verb: "get" },
          },
        },
      );
      const allowed = review?.status?.allowed === true && review.status.denied !== true;
      this.#reviews.inc({ review: "SubjectAccessReview", result: allowed ? "allowed" : "denied" });
      this.#access.set(key, allowed, allowed ? this.#allowedTtl : this.#deniedTtl);
      return allowed;
    });
  }

  async #post<T>(review: string, path: string, body: unknown): Promise<T> {
    try {
      return await this.#o.api.request<T>("POST", path, { body, timeoutMs: this.#o.timeoutMs ?? 10_000 });
    } catch (err) {
      this.#reviews.inc({ review, result: "error" });
      throw new Error(`${review} in the home cluster failed: ${errorText(err)}`, { cause: err });
    }
  }

  /**
   * Runs `fn` once for concurrent callers with the same key, if the limits allow one more review; rejects with
   * ReviewThrottledError otherwise.
   */
  #once<T>(review: string, key: string, fn: () => Promise<T>): Promise<T> {
    const running = this.#inFlight.get(key);
    if (running) return running as Promise<T>;
    if (this.#inFlight.size >= this.#maxInFlight || !this.#bucket.tryTake()) {
      this.#throttled.inc({ review });
      return Promise.reject(new ReviewThrottledError(review, this.#inFlight.size));
    }
    const p = fn().finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, p);
    return p;
  }

  get #allowedTtl(): number {
    return this.#o.allowedTtlMs ?? 60_000;
  }

  get #deniedTtl(): number {
    return this.#o.deniedTtlMs ?? 10_000;
  }
}

/** A review the limits did not allow: the request is answered 429. */
class ReviewThrottledError extends Error {
  override name = "ReviewThrottledError";
  constructor(review: string, inFlight: number) {
    super(`cannot send a ${review} now: ${inFlight} reviews in flight or the review rate is spent`);
  }
}

/** The token of an `Authorization: Bearer TOKEN` header; undefined for anything else. */
export function bearerToken(authorization: string | null): string | undefined {
  const m = authorization?.match(/^\s*bearer\s+(\S+)\s*$/i);
  return m?.[1];
}

async function sha256(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}
