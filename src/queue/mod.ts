// Public surface of src/queue: the fair work queue, its typed keys, and rate limiters. Keys are never strings outside.
export { InvalidKeyError, type QueueKey, type Request } from "./key.ts";
export {
  BucketLimiter,
  type ControllerRateLimiterOptions,
  defaultControllerRateLimiter,
  ItemExponentialLimiter,
  type ItemExponentialOptions,
  MaxOfLimiter,
  PerClusterLimiter,
  type RateLimiter,
  TokenBucket,
  type TokenBucketOptions,
} from "./rate_limiter.ts";
export {
  type ClusterQueueStats,
  FairWorkQueue,
  type QueuePriority,
  type WorkQueueHooks,
  type WorkQueueOptions,
} from "./work_queue.ts";
